/*
 * kshare.c - the kernel's exported read-only pages, and the kernel
 * information page among them.
 *
 * Subsystems register page ranges at boot; every new address space gets
 * them mapped with PTE_R | PTE_U and the "borrowed" software bit, so tearing
 * the address space down leaves the kernel's pages alone.
 */
#include "kernel/kshare.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/proc.h"
#include "kernel/bootinfo.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/errno.h"

/* One entry per exported page: free maps of large disks run to hundreds. */
#define MAX_SHARED_PAGES 8192

static struct { uint64_t va; uint64_t pa; } shares[MAX_SHARED_PAGES];
static int nshares;

struct kinfo *kinfo;

static int map_range(pagetable_t pt, int from, int to)
{
	for (int i = from; i < to; i++) {
		int err = uvm_lend(pt, shares[i].va, shares[i].pa);
		if (err < 0) return err;
	}
	return 0;
}

int kshare_register(uint64_t va, void *pa, uint64_t npages)
{
	if (npages > (uint64_t)(MAX_SHARED_PAGES - nshares)) return K_E_NOMEM;
	int first = nshares;
	for (uint64_t k = 0; k < npages; k++) {
		shares[nshares].va = va + k * PGSIZE;
		shares[nshares].pa = (uint64_t)pa + k * PGSIZE;
		nshares++;
	}
	for (int i = 0; i < NPROC; i++)
		if (procs[i].state != P_UNUSED && procs[i].state != P_ZOMBIE && procs[i].pagetable)
			map_range(procs[i].pagetable, first, nshares);
	return 0;
}

int kshare_map_all(pagetable_t pt)
{
	return map_range(pt, 0, nshares);
}

void kinfo_init(void)
{
	kinfo = kalloc();
	if (kinfo == NULL) panic("kinfo_init: out of memory");
	kinfo->magic = KINFO_MAGIC;
	kinfo->timebase_hz = bootinfo.timebase_hz;
	kinfo->ram_bytes = bootinfo.ram_size;
	kinfo->boot_time = rdtime();
	strncpy_safe(kinfo->bootargs, bootinfo.bootargs, sizeof kinfo->bootargs);
	kinfo->total_pages = kalloc_total_pages();
	kalloc_export(&kinfo->free_pages);
	kshare_register(UKINFO, kinfo, 1);
}
