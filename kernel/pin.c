/*
 * pin.c - pinning application memory for device I/O (see pin.h).
 */
#include "kernel/pin.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/uapi/errno.h"

int pin_user(pagetable_t pt, uint64_t va, uint64_t len, bool dev_writes,
	     struct blk_seg *segs, int maxsegs)
{
	if (!uva_range_ok(va, len)) return K_E_FAULT;
	int n = 0;
	uint64_t done = 0;
	while (done < len) {
		uint64_t a = va + done;
		/* Only the process's own pages: lent kernel pages are not refcounted. */
		uint64_t pa = uvm_translate_owned(pt, a, dev_writes);
		if (pa == 0) { unpin_segs(segs, n); return K_E_FAULT; }
		uint64_t chunk = MIN(len - done, PGSIZE - (a & (PGSIZE - 1)));
		if (n == maxsegs) { unpin_segs(segs, n); return K_E_2BIG; }
		kref((void *)PGROUNDDOWN(pa));
		segs[n].addr = pa;
		segs[n].len = (uint32_t)chunk;
		n++;
		done += chunk;
	}
	return n;
}

void unpin_segs(const struct blk_seg *segs, int nseg)
{
	for (int i = 0; i < nseg; i++) kfree((void *)PGROUNDDOWN(segs[i].addr));
}

int32_t *pin_word(pagetable_t pt, uint64_t va)
{
	if (va & 3) return NULL;
	uint64_t pa = uvm_translate_owned(pt, va, true);
	if (pa == 0) return NULL;
	kref((void *)PGROUNDDOWN(pa));
	return (int32_t *)pa;
}

void unpin_word(int32_t *word)
{
	kfree((void *)PGROUNDDOWN((uint64_t)word));
}
