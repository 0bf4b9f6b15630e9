/*
 * handle.h - handles: the kernel objects a process names by small numbers.
 *
 * A handle is a counted reference to an object with an operations vector.
 * Today the only objects are the two ends of pipes (pipe.c); the table is
 * generic so that other protected objects (shared pages, say) can be named
 * and passed to children the same way.  A process's handles are closed when
 * it exits; a child gets handles only when its spawn asks for them.
 */
#ifndef HANDLE_H
#define HANDLE_H

#include <stdint.h>
#include "kernel/uapi/proc.h"

struct proc;

struct handle_ops {
	const char *kind;
	/* Move bytes between the object and user memory at ubuf; both may
	 * sleep, unless flags has H_NOWAIT (kernel/uapi/syscall.h).  NULL:
	 * the handle cannot do that (K_E_BADH). */
	int64_t (*read)(void *obj, struct proc *p, uint64_t ubuf, uint64_t len, uint64_t flags);
	int64_t (*write)(void *obj, struct proc *p, uint64_t ubuf, uint64_t len, uint64_t flags);
	void (*ref)(void *obj);      /* one more handle refers to obj */
	void (*close)(void *obj);    /* one handle fewer */
};

struct handle {
	const struct handle_ops *ops;   /* NULL: the slot is free */
	void *obj;
};

/* Install obj (whose reference the caller hands over) in p's lowest free
 * slot: the handle number, or K_E_NOMEM when the table is full. */
int  handle_install(struct proc *p, const struct handle_ops *ops, void *obj);
/* The open handle h of p, or NULL. */
struct handle *handle_get(struct proc *p, int h);
/* Give the child new references to the parent's handles, as spawn_opts says. */
int  handle_pass(struct proc *parent, struct proc *child, const struct spawn_opts *o);
/* Close every handle of p (exit, or a spawn that failed half way). */
void handle_close_all(struct proc *p);
void handle_init(void);

#endif
