/*
 * share.c - the lock and change counter at the start of a shared area
 * (share.h, docs/sharing.md).
 *
 * The lock word holds the holder's pid, with SHSEG_LOCK_WAITERS once
 * someone has gone to sleep on it.  Taking it: compare-and-swap from free
 * (0, or SHSEG_LOCK_DEAD) to our pid.  When it is held we set the waiters
 * bit and sleep in the kernel until the word changes; a process that had
 * to sleep takes the lock with the waiters bit set (others may still be
 * asleep), so whoever lets go of it wakes them.  Letting go: swap in 0 and,
 * if the waiters bit was set, wake.  A holder that dies leaves
 * SHSEG_LOCK_DEAD (the kernel does that) and wakes the sleepers.
 */
#include <errno.h>
#include "libos/share.h"
#include "libos/clock.h"

#define PAGE 4096u

static uint32_t pages_for(size_t bytes)
{
	return (uint32_t)((bytes + PAGE - 1) / PAGE);
}

int share_attach(struct share *s, const uint8_t name[SHSEG_NAME], size_t bytes)
{
	void *seg;
	s->a = NULL;
	s->held = s->touched = s->change = 0;
	if (bytes < sizeof *s->a)
		bytes = sizeof *s->a;
	if (pages_for(bytes) > SHSEG_MAX_PAGES)
		return -ENOMEM;
	int e = shseg_attach(name, pages_for(bytes), &seg);
	if (e < 0)
		return e;
	s->a = seg;
	s->me = shseg_pid() & SHSEG_LOCK_PID;
	s->seen = 0;                 /* a fresh area's gen is 0: the user fills it */
	return 0;
}

int share_grow(struct share *s, size_t bytes)
{
	if (pages_for(bytes) > SHSEG_MAX_PAGES)
		return -ENOMEM;
	return pages_for(bytes) <= s->a->k.npages ? 0 : shseg_grow(s->a, pages_for(bytes));
}

size_t share_size(const struct share *s)
{
	return (size_t)s->a->k.npages * PAGE;
}

void share_detach(struct share *s)
{
	if (s->a != NULL)
		shseg_detach(s->a);
	s->a = NULL;
}

uint32_t share_sharers(const struct share *s)
{
	return s->a == NULL ? 1 : s->a->k.sharers;
}

int share_enter(struct share *s)
{
	uint32_t *w = &s->a->k.lock, want = s->me;
	for (;;) {
		uint32_t v = __atomic_load_n(w, __ATOMIC_ACQUIRE);
		if (v == 0 || v == SHSEG_LOCK_DEAD) {
			if (__atomic_compare_exchange_n(w, &v, want, 0, __ATOMIC_ACQUIRE,
			                                __ATOMIC_RELAXED)) {
				s->held = 1;
				s->touched = 0;
				if (v == SHSEG_LOCK_DEAD)
					return SHARE_DEAD;
				return s->a->gen == s->seen ? SHARE_SAME : SHARE_CHANGED;
			}
			continue;
		}
		if ((v & SHSEG_LOCK_PID) == s->me)
			return -EDEADLK;         /* ours already: a bug in the caller */
		if (!(v & SHSEG_LOCK_WAITERS) &&
		    !__atomic_compare_exchange_n(w, &v, v | SHSEG_LOCK_WAITERS, 0, __ATOMIC_RELAXED,
		                                 __ATOMIC_RELAXED))
			continue;
		/* Before sleeping, let go of the leases we keep on other file
		 * systems: their holder might be waiting for one of them. */
		share_idle();
		int e = shseg_wait(w, v | SHSEG_LOCK_WAITERS);
		if (e < 0)
			return e;
		want = s->me | SHSEG_LOCK_WAITERS;
	}
}

void share_touch(struct share *s)
{
	if (!s->touched)
		s->a->gen++;
	s->touched = 1;
}

void share_leave(struct share *s)
{
	s->seen = s->a->gen;
	s->held = 0;
	uint32_t v = __atomic_exchange_n(&s->a->k.lock, 0, __ATOMIC_RELEASE);
	if (v & SHSEG_LOCK_WAITERS)
		shseg_wake(&s->a->k.lock);
}

/* ---- leases (share.h) ------------------------------------------------------ */

static struct share *shares;      /* this process's shares that take leases */

void share_lease_init(struct share *s, int (*publish)(void *arg), void *arg)
{
	s->publish = publish;
	s->arg = arg;
	s->lease = 1;
	s->inside = 0;
	s->lnext = shares;
	shares = s;
}

void share_lease_fini(struct share *s)
{
	struct share **pp = &shares;
	while (*pp != NULL && *pp != s)
		pp = &(*pp)->lnext;
	if (*pp != NULL)
		*pp = s->lnext;
	s->lnext = NULL;
}

/* Is it time to let go of the lease we keep?  We keep it while nobody
 * waits, and a moment after someone starts to, so that taking turns costs
 * one publish per turn, not one per call. */
static int due(struct share *s)
{
	if (!(__atomic_load_n(&s->a->k.lock, __ATOMIC_RELAXED) & SHSEG_LOCK_WAITERS))
		return 0;
	uint64_t now = libos_time_ns();
	if (s->since == 0)
		s->since = now;
	return now - s->since >= SHARE_LEASE_NS;
}

int share_lease_enter(struct share *s)
{
	if (s->held) {
		s->inside = 1;            /* our lease: nobody took anything */
		return SHARE_SAME;
	}
	/* Another mount of this file system in this process keeping it
	 * between its operations: it publishes and lets go (one thread: it
	 * is not inside an operation unless we are nested in it, which
	 * share_enter refuses). */
	for (struct share *o = shares; o != NULL; o = o->lnext)
		if (o != s && o->a == s->a && o->held && !o->inside)
			share_lease_drop(o);
	int r = share_enter(s);
	if (r >= 0) {
		s->inside = 1;
		s->since = 0;             /* set when we first see a waiter */
		s->taken = libos_time_ns();
	}
	return r;
}

int share_op_take(struct share *s, int change)
{
	int r = share_lease_enter(s);
	if (r >= 0)
		s->change |= change;
	return r;
}

void share_lease_leave(struct share *s, int dirty)
{
	s->inside = 0;
	if (!s->held)
		return;
	if (!dirty) {
		/* Nothing only we have: nothing to keep - unless we are the only
		 * process attached, and then the lock costs nothing to keep.
		 * Race-free: another process must attach (the kernel counts it
		 * in sharers before it can even look at the lock) and then wait
		 * for the lock we hold (the waiters bit); either one makes the
		 * next leave let go, and blocking or exiting lets go too. */
		if (share_lone(s))
			return;
		share_leave(s);
		return;
	}
	if (!due(s))
		return;
	share_lease_drop(s);
	shseg_yield();                /* let the waiters have their turn */
}

void share_lease_drop(struct share *s)
{
	if (!s->held || s->inside)
		return;
	s->inside = 1;                /* publishing is an operation too */
	if (s->publish != NULL)
		s->publish(s->arg);
	s->inside = 0;
	share_leave(s);
}

int share_keep_leases(void)
{
	int keep = 0;
	for (struct share *s = shares; s != NULL; s = s->lnext) {
		if (!s->held || s->inside)
			continue;
		if (due(s)) {
			/* A process that never blocks between its operations
			 * (its pipe never empty or full) must not hold a waiter
			 * up any longer than one that makes operations. */
			share_lease_drop(s);
			shseg_yield();
			continue;
		}
		if (libos_time_ns() - s->taken >= SHARE_KEEP_NS) {
			share_lease_drop(s);  /* (see SHARE_KEEP_NS) */
			continue;
		}
		keep = 1;
	}
	return keep;
}

void share_idle(void)
{
	static int busy;
	if (busy)
		return;
	busy = 1;
	for (struct share *s = shares; s != NULL; s = s->lnext)
		if (s->held && !s->inside)
			share_lease_drop(s);
	busy = 0;
}
