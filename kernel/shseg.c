/*
 * shseg.c - shared segments (kernel/uapi/shseg.h, docs/sharing.md): pages
 * several processes map at one address, named by 16 bytes they agree on,
 * with a sleep/wake on any word in them and one promise about the word at
 * offset 0: a process that exits while that word names it as the holder
 * leaves SHSEG_LOCK_DEAD there, once its disk operations in flight have
 * finished, and its waiters are woken.
 *
 * That is all the kernel does for sharing a library file system: the lock
 * protocol, what the segment holds and how a holder repairs what a dead
 * one left are the library's (libos/share.c).  The kernel never trusts the
 * segment's contents: it reads the lock word only to compare it with the
 * exiting process's pid, and writes only the lock word (at exit) and the
 * header's two informational counts.
 *
 * One hart, interrupts off in the kernel: WAIT's test and its sleep cannot
 * be separated by a WAKE, so no wake-up is lost.
 */
#include "kernel/syscall.h"
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/shseg.h"

struct seg {
	bool used;
	uint8_t name[SHSEG_NAME];
	uint32_t npages;
	uint32_t sharers;
	uint64_t *pages;          /* one kalloc'ed page: the segment's pages    */
};

static struct seg segs[SHSEG_MAX];
static uint32_t attached[NPROC];   /* per process slot: bit i = segs[i] */
static uint8_t times[NPROC][SHSEG_MAX];   /* attaches not yet detached */

static struct shseg_hdr *hdr(struct seg *s) { return (struct shseg_hdr *)s->pages[0]; }

static void publish(struct seg *s)
{
	hdr(s)->sharers = s->sharers;
	hdr(s)->npages = s->npages;
}

/* Map pages [from, to) of segment i into pt; undo and fail on error. */
static int map(pagetable_t pt, int i, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++) {
		int e = uvm_map(pt, USHSEG(i) + (uint64_t)k * PGSIZE, segs[i].pages[k],
				PTE_R | PTE_W | PTE_BORROWED);
		if (e < 0) {
			while (k-- > from) uvm_unlend(pt, USHSEG(i) + (uint64_t)k * PGSIZE);
			return e;
		}
	}
	return 0;
}

static void unmap(pagetable_t pt, int i, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++) uvm_unlend(pt, USHSEG(i) + (uint64_t)k * PGSIZE);
}

static void free_pages(struct seg *s, uint32_t from)
{
	for (uint32_t k = from; k < s->npages; k++) kfree((void *)s->pages[k]);
	s->npages = from;
}

/* Pages [s->npages, n) allocated; on failure none are. */
static int alloc_pages(struct seg *s, uint32_t n)
{
	uint32_t from = s->npages;
	for (; s->npages < n; s->npages++) {
		void *pg = kalloc();
		if (pg == NULL) { free_pages(s, from); return K_E_NOMEM; }
		s->pages[s->npages] = (uint64_t)pg;
	}
	return 0;
}

static void detach(struct proc *p, int i)
{
	struct seg *s = &segs[i];
	times[p->slot][i] = 0;
	if (p->pagetable) unmap(p->pagetable, i, 0, s->npages);
	attached[p->slot] &= ~(1u << i);
	if (--s->sharers > 0) { publish(s); return; }
	free_pages(s, 0);
	kfree(s->pages);
	memset(s, 0, sizeof *s);
}

static int64_t attach(struct proc *p, uint64_t uname, uint64_t npages)
{
	uint8_t name[SHSEG_NAME];
	if (copyin(p->pagetable, name, uname, sizeof name) < 0) return K_E_FAULT;
	int i, fresh = -1;
	for (i = 0; i < SHSEG_MAX; i++) {
		if (segs[i].used && memcmp(segs[i].name, name, sizeof name) == 0) break;
		if (!segs[i].used && fresh < 0) fresh = i;
	}
	/* Again (two mounts of one file system in a process): counted. */
	if (i < SHSEG_MAX && (attached[p->slot] >> i & 1)) {
		if (times[p->slot][i] == UINT8_MAX) return K_E_BUSY;
		times[p->slot][i]++;
		return (int64_t)USHSEG(i);
	}
	struct seg *s = &segs[i];
	if (i == SHSEG_MAX) {
		if (npages == 0 || npages > SHSEG_MAX_PAGES) return K_E_INVAL;
		if (fresh < 0) return K_E_BUSY;
		i = fresh;
		s = &segs[i];
		if ((s->pages = kalloc()) == NULL) return K_E_NOMEM;
		if (alloc_pages(s, (uint32_t)npages) < 0) { kfree(s->pages); s->pages = NULL; return K_E_NOMEM; }
		memcpy(s->name, name, sizeof name);
		s->used = true;
	}
	int e = map(p->pagetable, i, 0, s->npages);
	if (e < 0) {
		if (s->sharers == 0) { free_pages(s, 0); kfree(s->pages); memset(s, 0, sizeof *s); }
		return e;
	}
	attached[p->slot] |= 1u << i;
	times[p->slot][i] = 1;
	s->sharers++;
	publish(s);
	return (int64_t)USHSEG(i);
}

/* The segment whose window holds va, if p is attached to it; -1 else. */
static int seg_of(struct proc *p, uint64_t va)
{
	if (va < USHSEG(0) || va >= USHSEG(SHSEG_MAX)) return -1;
	int i = (int)((va - USHSEG(0)) / USHSEG_SLOT);
	return (attached[p->slot] >> i & 1) ? i : -1;
}

static int64_t grow(struct proc *p, uint64_t va, uint64_t n)
{
	int i = seg_of(p, va);
	if (i < 0 || va != USHSEG(i) || n > SHSEG_MAX_PAGES) return K_E_INVAL;
	struct seg *s = &segs[i];
	uint32_t from = s->npages;
	if (n <= from) return from;
	if (alloc_pages(s, (uint32_t)n) < 0) return K_E_NOMEM;
	for (int k = 0; k < NPROC; k++) {
		if (!(attached[k] >> i & 1)) continue;
		if (map(procs[k].pagetable, i, from, s->npages) < 0) {
			while (k-- > 0)
				if (attached[k] >> i & 1) unmap(procs[k].pagetable, i, from, s->npages);
			free_pages(s, from);
			return K_E_NOMEM;
		}
	}
	publish(s);
	return s->npages;
}

/* The kernel address of the aligned 32-bit word at va in a segment p has. */
static uint32_t *word(struct proc *p, uint64_t va)
{
	int i = seg_of(p, va);
	uint64_t off = va - USHSEG(i);
	if (i < 0 || (va & 3) || off >= (uint64_t)segs[i].npages * PGSIZE) return NULL;
	return (uint32_t *)(segs[i].pages[off / PGSIZE] + off % PGSIZE);
}

/* Someone is about to sleep on segment i's lock word, which names pid as
 * its holder: tell the holder (a process keeping a library file system's
 * lease between its operations), and if it sleeps in a pipe wait that
 * ends for that (H_LEASE), wake it, so it publishes and lets go rather
 * than hold the lock while it waits for a pipe - perhaps for the very
 * process now waiting for the lock. */
static void want_lock(int i, uint32_t pid)
{
	for (int k = 0; k < NPROC; k++) {
		struct proc *h = &procs[k];
		if (!(attached[k] >> i & 1) || ((uint32_t)h->pid & SHSEG_LOCK_PID) != pid) continue;
		h->lock_wanted = true;
		if (h->lease_wait && h->state == P_SLEEPING) {
			h->state = P_RUNNABLE;
			proc_publish(h);
		}
		return;
	}
}

/* Does p hold the lock of a segment it is attached to? */
static bool holds_lock(struct proc *p)
{
	for (int i = 0; i < SHSEG_MAX; i++)
		if ((attached[p->slot] >> i & 1) &&
		    (hdr(&segs[i])->lock & SHSEG_LOCK_PID) == ((uint32_t)p->pid & SHSEG_LOCK_PID))
			return true;
	return false;
}

static int64_t sys_shseg(struct proc *p, uint64_t op, uint64_t a1, uint64_t a2,
			 uint64_t a3, uint64_t a4, uint64_t a5)
{
	uint32_t *w;
	int i;
	switch (op) {
	case SHSEG_ATTACH:
		return attach(p, a1, a2);
	case SHSEG_GROW:
		return grow(p, a1, a2);
	case SHSEG_DETACH:
		if ((i = seg_of(p, a1)) < 0 || a1 != USHSEG(i)) return K_E_INVAL;
		if (--times[p->slot][i] == 0) detach(p, i);
		return 0;
	case SHSEG_WAIT:
		if ((w = word(p, a1)) == NULL) return K_E_INVAL;
		if (*w == (uint32_t)a2) {
			if ((i = seg_of(p, a1)) >= 0 && a1 == USHSEG(i)) want_lock(i, *w & SHSEG_LOCK_PID);
			sleep_on(w);
		}
		return p->killed ? K_E_INTR : 0;
	case SHSEG_WAKE:
		if ((w = word(p, a1)) == NULL) return K_E_INVAL;
		if (!holds_lock(p)) p->lock_wanted = false;   /* (it let go: nobody wants one) */
		wakeup(w);
		return 0;
	}
	return K_E_INVAL;
}

void exodisk_exit(struct proc *p);       /* kernel/sys_exodisk.c */

/* Exit: a lock this process holds becomes DEAD; its waiters wake either
 * way (it may have let go of the lock and died before its WAKE); then it
 * lets go of every segment.  First its disk operations in flight finish
 * (exodisk_exit sleeps until they have): the next holder must find on
 * the disk everything the dead one wrote, and nothing of the dead one's
 * may land on the disk after the next holder's own writes. */
static void shseg_exit(struct proc *p)
{
	if (attached[p->slot] != 0)
		exodisk_exit(p);
	for (int i = 0; i < SHSEG_MAX; i++) {
		if (!(attached[p->slot] >> i & 1)) continue;
		struct shseg_hdr *h = hdr(&segs[i]);
		if ((h->lock & SHSEG_LOCK_PID) == (uint32_t)p->pid)
			h->lock = SHSEG_LOCK_DEAD;
		wakeup(&h->lock);
		detach(p, i);
	}
}

void shseg_init(void)
{
	syscall_register(SYS_shseg, sys_shseg, "shseg");
	proc_on_exit(shseg_exit);
}
