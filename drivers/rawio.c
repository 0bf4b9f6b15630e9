/*
 * rawio.c - SYS_raw_io, the benchmark-only raw disk path (see
 * kernel/uapi/rawio.h; off unless booted with rawio=1).
 *
 * Each request gets a slot from a fixed pool: a struct blkreq and room for
 * the segments of a 1 MiB buffer.  The request is copied into the kernel
 * once and checked there, in the block layer's order (so the errors are the
 * block layer's own); then the completion word and the buffer are pinned
 * (pin.c takes a reference on every page), and the request is queued.  When
 * it completes, the status is stored in the word, the pages are released
 * and the owner, if it waits, is woken.
 *
 * A process that exits with requests in flight loses nothing and leaks
 * nothing: its pages live on through the references until the device is
 * done with them, then the completion is stored into a page nobody sees
 * any more and the last reference frees it.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/rawio.h"
#include "kernel/uapi/rawio.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"
#include "kernel/syscall.h"
#include "kernel/proc.h"
#include "kernel/pin.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/arch.h"
#include "kernel/bootinfo.h"

_Static_assert(RAW_READ == BLK_READ && RAW_WRITE == BLK_WRITE && RAW_FLUSH == BLK_FLUSH,
               "raw operations are the block layer's");
_Static_assert(RAW_MAX_BYTES / BLK_SECTOR_SIZE == BLK_MAX_SECTORS, "a raw request fits one block request");

/* Requests in flight over all processes and units. */
#define RAW_NSLOTS   512
/* Pages a 1 MiB buffer can touch at any alignment. */
#define RAW_MAX_SEGS (RAW_MAX_BYTES / 4096 + 1)

struct raw_slot {
	struct blkreq r;
	struct blk_seg *seg;          /* RAW_MAX_SEGS entries */
	int nseg;
	int32_t *word;                /* pinned completion word, or NULL */
	int owner;                    /* process slot, or -1 once the owner has exited */
	int pid;
	bool busy;
	struct raw_slot *next_free;
};

static bool enabled, polled;
static struct raw_slot *slots, *free_slots;
/* Per process-table slot: whose requests, and how many are pending. */
static struct { int pid; uint32_t pending; } owners[NPROC];

static void raw_done(struct blkreq *r)
{
	struct raw_slot *s = r->priv;
	unpin_segs(s->seg, s->nseg);
	if (s->word != NULL) {
		/* The data is in place before the word says so. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		*(volatile int32_t *)s->word = r->status;
		unpin_word(s->word);
	}
	if (s->owner >= 0) {
		owners[s->owner].pending--;
		wakeup(&owners[s->owner]);
	}
	s->word = NULL;
	s->nseg = 0;
	s->busy = false;
	s->next_free = free_slots;
	free_slots = s;
}

/* Queue one request, already copied into the kernel.  0 or an error; on an
 * error nothing is queued, pinned or written. */
static int submit_one(struct proc *p, const struct raw_req *q)
{
	/* Check the request as the block layer will, with a stand-in segment
	 * for the buffer, before touching the caller's memory. */
	if (q->flags & ~RAW_F_FUA)
		return BLK_E_OP;
	struct blk_seg stand_in = { 1, q->nbytes };
	struct blkreq probe = {
		.op = q->op, .flags = (q->flags & RAW_F_FUA) ? BLK_F_FUA : 0, .unit = q->unit,
		.sector = q->sector, .nsectors = q->nbytes / BLK_SECTOR_SIZE,
		.seg = &stand_in, .nseg = q->nbytes > 0 ? 1 : 0, .done = raw_done,
	};
	int e = blk_validate(&probe);
	if (e != 0)
		return e;
	struct raw_slot *s = free_slots;
	if (s == NULL)
		return BLK_E_QFULL;

	int32_t *word = NULL;
	if (q->resptr != 0 && (word = pin_word(p->pagetable, q->resptr)) == NULL)
		return K_E_FAULT;
	int nseg = 0;
	if (q->op != RAW_FLUSH) {
		/* A disk read writes the caller's memory, so it must be writable. */
		nseg = pin_user(p->pagetable, q->buf, q->nbytes, q->op == RAW_READ, s->seg, RAW_MAX_SEGS);
		if (nseg < 0) {
			if (word != NULL)
				unpin_word(word);
			return BLK_E_FAULT;
		}
	}
	free_slots = s->next_free;
	s->r = probe;
	s->r.seg = nseg > 0 ? s->seg : NULL;
	s->r.nseg = (uint16_t)nseg;
	s->r.priv = s;
	s->nseg = nseg;
	s->word = word;
	s->owner = p->slot;
	s->pid = p->pid;
	s->busy = true;
	if (owners[p->slot].pid != p->pid) {
		owners[p->slot].pid = p->pid;
		owners[p->slot].pending = 0;
	}
	/* Counted and marked before submitting: a synchronous device completes
	 * inside blk_submit. */
	owners[p->slot].pending++;
	int32_t old = 0;
	if (word != NULL) {
		old = *word;
		*(volatile int32_t *)word = RAW_PENDING;
	}
	e = blk_submit(&s->r);
	if (e != 0) {
		/* Only a full queue gets here: put everything back as it was. */
		owners[p->slot].pending--;
		if (word != NULL) {
			*(volatile int32_t *)word = old;
			unpin_word(word);
		}
		unpin_segs(s->seg, nseg);
		s->word = NULL;
		s->nseg = 0;
		s->busy = false;
		s->next_free = free_slots;
		free_slots = s;
	}
	return e;
}

static int64_t raw_submit(struct proc *p, uint64_t uv, uint64_t n)
{
	if (n == 0 || n > RAW_MAX_BATCH)
		return K_E_INVAL;
	for (uint64_t i = 0; i < n; i++) {
		struct raw_req q;
		int e = copyin(p->pagetable, &q, uv + i * sizeof q, sizeof q);
		if (e == 0)
			e = submit_one(p, &q);
		if (e != 0)
			return i > 0 ? (int64_t)i : e;
	}
	return (int64_t)n;
}

static uint32_t pending_of(struct proc *p)
{
	return owners[p->slot].pid == p->pid ? owners[p->slot].pending : 0;
}

/*
 * Polled mode waits in two steps, as polling drivers usually do.  First it
 * polls for up to RAW_SPIN_US, yielding in between so other processes run:
 * a fast device (virtio under QEMU) is usually done by then.  After that it
 * sleeps like interrupt mode, and the polls the kernel makes anyway - each
 * time it goes idle and on every 10 ms tick - deliver the completion and wake
 * it.  Spinning all the way would cost a slow device's whole service time in
 * CPU; under -icount, where CPU time is the clock, that is host time too.
 */
#define RAW_SPIN_US 500

static int64_t raw_wait(struct proc *p, uint64_t max_pending)
{
	uint64_t spin_until = rdtime() + bootinfo.timebase_hz * RAW_SPIN_US / 1000000;
	for (;;) {
		if (polled)
			blk_poll();
		uint32_t n = pending_of(p);
		if (n <= max_pending)
			return n;
		if (p->killed)
			return K_E_INTR;
		if (polled && rdtime() < spin_until)
			yield();
		else
			sleep_on(&owners[p->slot]);
	}
}

static int64_t raw_info(struct proc *p, uint64_t unit, uint64_t uout)
{
	struct blk_unit_stat st;
	int e = unit >= BLK_MAX_UNITS ? BLK_E_UNIT : blk_stat((int)unit, &st);
	if (e != 0)
		return e;
	struct raw_info out;
	memset(&out, 0, sizeof out);
	out.capacity = st.info.nsectors;
	out.nsubmitted = st.nsubmitted;
	out.ncompleted = st.ncompleted;
	out.blksize = st.info.blksize ? st.info.blksize : BLK_SECTOR_SIZE;
	out.max_inflight = st.info.max_inflight;
	out.depth = st.depth;
	out.sched = (uint32_t)st.sched;
	out.hiwater = st.hiwater;
	out.polled = polled;
	strncpy_safe(out.name, st.info.name ? st.info.name : "", sizeof out.name);
	return copyout(p->pagetable, uout, &out, sizeof out);
}

static int64_t raw_set(uint64_t unit, uint64_t what, uint64_t value)
{
	if (unit >= BLK_MAX_UNITS)
		return BLK_E_UNIT;
	switch (what) {
	case RAW_SET_SCHED:
		return blk_set_sched((int)unit, value > 1 ? -1 : (int)value);
	case RAW_SET_DEPTH:
		return blk_set_depth((int)unit, value > BLK_MAX_DEPTH ? BLK_MAX_DEPTH : (uint32_t)value);
	default:
		return K_E_INVAL;
	}
}

static int64_t sys_raw_io(struct proc *p, uint64_t cmd, uint64_t a1, uint64_t a2,
                          uint64_t a3, uint64_t a4, uint64_t a5)
{
	(void)a4;
	(void)a5;
	if (!enabled)
		return BLK_E_PERM;
	switch (cmd) {
	case RAW_SUBMIT: return raw_submit(p, a1, a2);
	case RAW_WAIT:   return raw_wait(p, a1);
	case RAW_INFO:   return raw_info(p, a1, a2);
	case RAW_SET:    return raw_set(a1, a2, a3);
	default:         return K_E_INVAL;
	}
}

/* The owner is going away: its requests complete into pinned pages that
 * only the requests still reference. */
static void raw_exit(struct proc *p)
{
	if (!enabled)
		return;
	for (int i = 0; i < RAW_NSLOTS; i++)
		if (slots[i].busy && slots[i].owner == p->slot && slots[i].pid == p->pid)
			slots[i].owner = -1;
	owners[p->slot].pid = 0;
	owners[p->slot].pending = 0;
}

bool rawio_init(bool want, bool is_polled)
{
	syscall_register(SYS_raw_io, sys_raw_io, "raw_io");
	polled = is_polled;
	if (!want)
		return false;
	uint64_t slot_pages = (RAW_NSLOTS * sizeof(struct raw_slot) + PGSIZE - 1) / PGSIZE;
	uint64_t seg_pages = ((uint64_t)RAW_NSLOTS * RAW_MAX_SEGS * sizeof(struct blk_seg) + PGSIZE - 1) / PGSIZE;
	slots = kalloc_contig(slot_pages);
	struct blk_seg *segs = kalloc_contig(seg_pages);
	if (slots == NULL || segs == NULL) {
		kprintf("rawio: not enough memory for the raw path; it stays off\n");
		if (slots != NULL)
			kfree_contig(slots, slot_pages);
		if (segs != NULL)
			kfree_contig(segs, seg_pages);
		slots = NULL;
		return false;
	}
	for (int i = RAW_NSLOTS - 1; i >= 0; i--) {
		slots[i].seg = segs + (size_t)i * RAW_MAX_SEGS;
		slots[i].next_free = free_slots;
		free_slots = &slots[i];
	}
	proc_on_exit(raw_exit);
	enabled = true;
	return true;
}
