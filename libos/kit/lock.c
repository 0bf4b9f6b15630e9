/*
 * lock.c - the mount lock: one process at a time has a file system
 * mounted, because a library file system keeps its caches and allocation
 * state in the process that mounted it.
 *
 * The lock is an exonode allocated at the anchor's lock sector (the one
 * after the anchor, kept free by mkfs) and never written back.  A second
 * process's allocation there fails (ED_E_SLOT: the block exists and its
 * slot is taken) until the first frees it - or dies: the exodisk undoes
 * the allocations a process never wrote back when it exits, so a crash
 * never leaves a file system locked, and after a power cut there is
 * nothing on the disk to clean up.  Freeing a never-written exonode frees
 * its block at once.
 *
 * The sector must stay free while nobody has the file system mounted, so
 * the kit's allocator never starts a run at sector 1 of an aligned group
 * of 8 (alloc.c), where every anchor's lock sector is.
 *
 * A file system that many processes use at once takes kit_share instead
 * (docs/sharing.md): an area in a shared segment, named from the file
 * system's key and anchor, whose lock each operation takes.  Only holders
 * of the key can compute the name.  One that caches in its own process
 * (unixfs, lfs) takes that lock as a lease: kit_lease_attach, with the
 * mount lock as its fallback when no shared segment is to be had.
 */
#include <errno.h>
#include "libos/kit/kit.h"
#include "libos/clock.h"

int kit_lock(struct kit *k, uint64_t wait_ms)
{
	if (k->anchor == 0)
		return -EINVAL;
	uint64_t deadline = libos_time_ns() + wait_ms * 1000000ull;
	for (;;) {
		int64_t r = kit_xn_alloc(k, k->a.lock, 0, KIT_LOCK_LEN);
		if (r == 0) {
			k->locked = 1;
			return 0;
		}
		/* Anything else on the sector (ED_E_ALLOCATED: a stranger's
		 * extent) is waited out the same way: it may be freed. */
		if (!kit_taken(r))
			return kit_err(r);
		if (libos_time_ns() >= deadline)
			return -EBUSY;
		libos_sleep_ns(10 * 1000 * 1000);
	}
}

void kit_unlock(struct kit *k)
{
	if (k->locked)
		kit_xn_free(k, k->a.lock, 0);
	k->locked = 0;
}

int kit_share(struct kit *k, struct share *s, size_t bytes)
{
	if (k->anchor == 0)
		return -EINVAL;
	struct ed_cap name = capkey_cap(&k->key, 's', k->anchor, (uint64_t)k->unit);
	return share_attach(s, (const uint8_t *)&name, bytes);
}

int kit_lease_attach(struct kit *k, struct share *s, size_t bytes, const char *opts,
                     int (*publish)(void *arg), void *arg)
{
	int e = kit_share(k, s, bytes);
	if (e == -EBUSY || e == -ENOSYS) {
		/* No shared segment to be had (the system's are all in use):
		 * one process at a time, as before sharing. */
		uint64_t wait;
		s->a = NULL;
		e = kit_opt_num(opts, "wait", KIT_LOCK_WAIT_MS, &wait);
		return e < 0 ? e : kit_lock(k, wait);
	}
	if (e < 0)
		return e;
	share_lease_init(s, publish, arg);
	e = share_lease_enter(s);
	if (e < 0) {
		share_lease_fini(s);
		share_detach(s);
	}
	return e;
}

void kit_lease_detach(struct share *s)
{
	if (s->a == NULL)
		return;
	if (s->held) {
		if (s->change)
			share_touch(s);
		s->change = 0;
		s->inside = 0;
		share_leave(s);
	}
	share_lease_fini(s);
	share_detach(s);
}

void kit_lease_abandon(struct share *s)
{
	if (s->a == NULL)
		return;
	if (s->held)
		s->a->k.lock = SHSEG_LOCK_DEAD;
	s->held = 0;
	share_lease_fini(s);
	share_detach(s);
}
