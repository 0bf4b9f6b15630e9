/*
 * share.h - state shared by the processes using one library file system
 * (docs/sharing.md): a shared segment (kernel/uapi/shseg.h) holding a lock
 * and a change counter, and after them whatever the file system keeps
 * there.  Portable: the guest reaches the kernel's segments (share_sys.c),
 * host tests get segments in their own memory (share_host.c).
 *
 * The protocol, for every operation on the file system:
 *
 *   share_enter  take the lock; say whether anyone changed anything since
 *                this process last held it (SHARE_CHANGED: drop what you
 *                cached), or died holding it (SHARE_DEAD: also repair
 *                what it may have left half done)
 *   ...          the operation; share_touch when it changes anything
 *   share_leave  let go, waking a waiter
 *
 * The lock is a futex-style word: taking it free is one atomic instruction,
 * the kernel is entered only to sleep when it is held and to wake a
 * sleeper.  A holder that dies leaves SHSEG_LOCK_DEAD (the kernel's one
 * promise), so nobody waits for a dead process and nothing is held up.
 */
#ifndef LIBOS_SHARE_H
#define LIBOS_SHARE_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/uapi/shseg.h"

#define SHARE_SAME    0           /* nothing changed since we last held it     */
#define SHARE_CHANGED 1           /* another process changed something         */
#define SHARE_DEAD    2           /* its last holder died holding it           */

/* The start of every shared area. */
struct share_area {
	struct shseg_hdr k;           /* the kernel's: the lock word first         */
	uint64_t gen;                 /* bumped by every change (share_touch)      */
	uint32_t ready;               /* the user's: set once the area is filled   */
	uint32_t spare;
};

struct share {
	struct share_area *a;         /* NULL: not shared (the file system is ours) */
	uint64_t seen;                /* a->gen when we last let go                */
	uint32_t me;                  /* our pid, as the lock word holds it        */
	int held;
	int touched;
	/* Leases (share_lease_*): the lock kept between operations. */
	int lease;                    /* we hold it between operations             */
	int inside;                   /* inside an operation                       */
	uint64_t since;               /* when we first saw a waiter (ns), or 0     */
	uint64_t taken;               /* when we took the lock (ns)                */
	int change;                   /* this hold's operations changed what others
	                                 see: share_op_end bumps the count        */
	int (*publish)(void *arg);    /* write out what others must see           */
	void *arg;
	struct share *lnext;          /* this process's leased shares              */
};

/* Attach to the area named by name (created zeroed, of `bytes` bytes, if
 * it does not exist).  0, -ENOMEM, -EBUSY (the system's segments are all
 * in use), -ENOSYS (no shared segments here). */
int  share_attach(struct share *s, const uint8_t name[SHSEG_NAME], size_t bytes);
/* Make the area at least `bytes` long (it never shrinks, never moves). */
int  share_grow(struct share *s, size_t bytes);
size_t share_size(const struct share *s);
void share_detach(struct share *s);
/* Take the lock: SHARE_SAME, SHARE_CHANGED, SHARE_DEAD, or -EINTR. */
int  share_enter(struct share *s);
/* This operation changes what others may have cached. */
void share_touch(struct share *s);
void share_leave(struct share *s);
/* Processes attached now (so a lone user can skip what only sharing needs). */
uint32_t share_sharers(const struct share *s);

/*
 * Leases: a file system that caches changes in its own memory (unixfs)
 * keeps the lock between operations while it holds changes nobody else
 * has seen, so that a process working alone pays nothing: no publishing,
 * not even an atomic instruction per operation.  It lets go - first
 * writing out what others must see (the publish callback) - when another
 * process has been waiting for the lock SHARE_LEASE_NS (from when the
 * holder first saw it), when it
 * is about to block (share_idle: sleep, wait, a read of the console or a
 * pipe), and at unmount.  If it dies the kernel marks the lock DEAD, as
 * for any holder.  Another mount of the same file system in the same
 * process takes a lease from an idle holder at once (it publishes it).
 *
 *   share_lease_enter   share_enter, or nothing if we hold the lease
 *   share_lease_leave   keep the lease (dirty: changes only we have; or
 *                       we are the only process attached) or let go;
 *                       publishes first if someone waits
 *   share_lease_drop    publish if dirty, let go (unmount, blocking)
 */
#define SHARE_LEASE_NS (5 * 1000 * 1000ull)
/* A process waiting for a pipe keeps its lease through the wait (until
 * someone wants the lock: share_keep_leases) - unless it has kept it this
 * long: then it publishes first, so that a pipeline killed (Ctrl-C) loses
 * no more than about this much of its latest work. */
#define SHARE_KEEP_NS  (100 * 1000 * 1000ull)
/* Only this process is attached, and nobody waits for the lock: a holder
 * may keep it even with nothing to publish (share_lease_leave). */
static inline int share_lone(const struct share *s)
{
	return s->a->k.sharers == 1 &&
	       !(__atomic_load_n(&s->a->k.lock, __ATOMIC_RELAXED) & SHSEG_LOCK_WAITERS);
}
/* The fast paths a file system inlines around each operation: entering
 * while it holds the lease (nobody can have changed anything), and
 * leaving while it is alone (it keeps the lease, whatever it holds). */
static inline int share_lease_again(struct share *s)
{
	if (!s->held)
		return 0;
	s->inside = 1;
	return 1;
}
static inline int share_lease_keep(struct share *s)
{
	if (!s->held || !share_lone(s))
		return 0;
	s->inside = 0;
	return 1;
}
/*
 * A file system's enter and leave (struct libfs_ops) around its own parts,
 * when it takes the lock as a lease (unixfs, lfs; attached by
 * kit_lease_attach):
 *
 *   enter:  if (share_op_again(s, change, FAST)) return 0;
 *           r = share_op_take(s, change);
 *           then, on SHARE_CHANGED or SHARE_DEAD, catch up (failing: leave)
 *   leave:  if (share_op_end(s)) return;
 *           share_lease_leave(s, whether it holds unpublished changes)
 *
 * `change`: the operation may change what others see; the change count
 * is bumped (share_touch) once, at the end.  FAST: the file system has
 * nothing to catch up on if it still holds the lease.  Not shared (s->a
 * NULL: it fell back to the one-process mount lock), both say 1: done.
 */
static inline int share_op_again(struct share *s, int change, int fast)
{
	if (s->a == NULL)
		return 1;
	if (!fast || !share_lease_again(s))
		return 0;
	s->change |= change;          /* our lease: nobody changed anything */
	return 1;
}
int share_op_take(struct share *s, int change);
static inline int share_op_end(struct share *s)
{
	if (s->a == NULL)
		return 1;
	if (s->change && s->held && !s->touched)
		share_touch(s);           /* (once per hold of the lock) */
	s->change = 0;
	return share_lease_keep(s);   /* alone: keep it, nothing to work out */
}
void share_lease_init(struct share *s, int (*publish)(void *arg), void *arg);
int  share_lease_enter(struct share *s);
void share_lease_leave(struct share *s, int dirty);
void share_lease_drop(struct share *s);
/* Remove s from this process's leases (before share_detach). */
void share_lease_fini(struct share *s);
/* Let go of every lease this process holds outside an operation (about
 * to block).  The guest's blocking system-call stubs call it. */
void share_idle(void);
/* Before a pipe's hread or hwrite: let go of the leases others have
 * waited for long enough, as the end of an operation would
 * (share_lease_leave), and of those kept SHARE_KEEP_NS, and say whether
 * this process still keeps one outside an operation (what share_idle
 * would let go).  If it does, the library OS's system-call wrappers
 * sys_hread and sys_hwrite (libos/sys.h) keep it through the pipe's wait
 * until another process wants the lock (H_LEASE: the kernel ends the
 * wait), and only then call share_idle: a pipeline's process writing a
 * shared file system publishes when someone needs what it wrote, not at
 * every pipe call. */
int share_keep_leases(void);

/* ---- the transport: share_sys.c in the guest, share_host.c on the host ---- */
/* 0 or a negative errno; *seg the segment's address. */
int   shseg_attach(const uint8_t name[SHSEG_NAME], uint32_t npages, void **seg);
int   shseg_grow(void *seg, uint32_t npages);
void  shseg_detach(void *seg);
int   shseg_wait(uint32_t *word, uint32_t value);
void  shseg_wake(uint32_t *word);
uint32_t shseg_pid(void);
void  shseg_yield(void);

#endif
