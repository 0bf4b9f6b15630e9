/*
 * proc.h - processes beyond exit/spawn/wait, shared by the kernel and libos:
 * handles (kernel objects a process names by small numbers: today the two
 * ends of pipes), what spawn may hand a child, process groups, waiting
 * without blocking, the console's interrupt key, and the process table the
 * kernel exports read-only (for ps).  docs/kernel.md explains each.
 */
#ifndef UAPI_PROC_H
#define UAPI_PROC_H

#include <stdint.h>

/* Handles per process.  A handle names one end of a pipe; handles are
 * passed to children only when spawn says so (struct spawn_opts). */
#define NHANDLE 16

/* The pipe's buffer: a writer that fills it waits for the reader. */
#define PIPE_SIZE 4096

/* spawn(path, argv, envp, opts): opts may be 0 (no handles, the parent's
 * group).  Child handle i (0 <= i < nhandles) becomes a new reference to the
 * parent's handle handles[i] (-1: left closed). */
struct spawn_opts {
	int32_t nhandles;
	int32_t handles[NHANDLE];
	int32_t pgid;             /* SPAWN_PGID_INHERIT, SPAWN_PGID_NEW, or a group to join */
};
#define SPAWN_PGID_INHERIT  0
#define SPAWN_PGID_NEW     -1  /* a group of its own, numbered by its pid */
/* A group may be joined only through a member that is the caller or the
 * caller's child (the shell puts a pipeline's processes in one group). */

/* wait(pid, &status, options) */
#define WAIT_NOHANG 1          /* return 0 at once if no child has exited yet */

/* kill(target, why): target > 0 a process, < 0 the process group -target.
 * The victims exit with status 128 + why (why 0 means KILL_KILL). */
#define KILL_INT   2           /* the interrupt key (Ctrl-C): status 130 */
#define KILL_KILL  9           /* status 137 */
#define KILL_PIPE 13           /* (libos: a write to a pipe nobody reads: 141) */

/* cons_ctl(op, arg): the console's interrupt key.  Ctrl-C typed at the
 * console is not queued as input: the kernel throws away the input not yet
 * read and alerts the process that claimed the key, whose blocking system
 * call (wait, cons_read, sleep, pipe reads and writes) returns K_E_INTR.
 * What to do about it (the shell kills its foreground job) is its business.
 * Unclaimed, Ctrl-C is an ordinary input byte. */
#define CONS_CLAIM_INTR    1   /* arg 0: only if nobody alive holds it; 1: take it anyway */
#define CONS_RELEASE_INTR  2   /* give it up, if the caller holds it */

/* The process table, exported read-only at UPROCS (layout.h): one entry
 * per slot of the kernel's table, pid 0 when the slot is free. */
#define KPROC_NAME 16
enum { KPROC_FREE, KPROC_NEW, KPROC_READY, KPROC_RUNNING, KPROC_SLEEPING, KPROC_ZOMBIE };
struct kproc {
	int32_t  pid;
	int32_t  ppid;            /* 0: no parent (the first process, or detached) */
	int32_t  pgid;
	uint32_t state;           /* KPROC_* */
	uint64_t ticks;           /* scheduler ticks it has run (HZ per second) */
	uint64_t start;           /* rdtime when it was spawned */
	char     name[KPROC_NAME];
};
#define KPROC_SLOTS 64

#endif
