/*
 * handle.c - each process's table of handles (see handle.h), the system
 * calls that use it (pipe, hread, hwrite, hclose), and passing handles to
 * a child at spawn.
 *
 * The kernel keeps no descriptors, offsets or files: the library OS builds
 * its descriptor table over these handles and over its own file systems, and
 * tells a child which of its handles are its standard input and output
 * (libos/posix.c).  That split is what lets a later design share other
 * objects between processes by passing handles the same way.
 */
#include "kernel/handle.h"
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/klib.h"
#include "kernel/syscall.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"

int pipe_create(const struct handle_ops **rops, void **robj, const struct handle_ops **wops, void **wobj);

int handle_install(struct proc *p, const struct handle_ops *ops, void *obj)
{
	for (int h = 0; h < NHANDLE; h++)
		if (p->handles[h].ops == NULL) {
			p->handles[h].ops = ops;
			p->handles[h].obj = obj;
			return h;
		}
	return K_E_NOMEM;
}

struct handle *handle_get(struct proc *p, int h)
{
	if (h < 0 || h >= NHANDLE || p->handles[h].ops == NULL) return NULL;
	return &p->handles[h];
}

static void handle_close(struct handle *hd)
{
	const struct handle_ops *ops = hd->ops;
	void *obj = hd->obj;
	hd->ops = NULL;
	hd->obj = NULL;
	ops->close(obj);
}

int handle_pass(struct proc *parent, struct proc *child, const struct spawn_opts *o)
{
	if (o->nhandles < 0 || o->nhandles > NHANDLE) return K_E_INVAL;
	/* Check everything before taking any reference. */
	for (int i = 0; i < o->nhandles; i++)
		if (o->handles[i] != -1 && handle_get(parent, o->handles[i]) == NULL) return K_E_BADH;
	for (int i = 0; i < o->nhandles; i++) {
		if (o->handles[i] == -1) continue;
		struct handle *hd = handle_get(parent, o->handles[i]);
		hd->ops->ref(hd->obj);
		child->handles[i] = *hd;
	}
	return 0;
}

void handle_close_all(struct proc *p)
{
	for (int h = 0; h < NHANDLE; h++)
		if (p->handles[h].ops) handle_close(&p->handles[h]);
}

/* ---- system calls ------------------------------------------------------- */

/* A handle number as a system call passed it: a register, so it is checked
 * whole (2^32 must not become handle 0). */
static struct handle *handle_arg(struct proc *p, uint64_t h)
{
	return h < NHANDLE ? handle_get(p, (int)h) : NULL;
}

static int64_t sys_pipe(struct proc *p, uint64_t uh, uint64_t a1, uint64_t a2,
			uint64_t a3, uint64_t a4, uint64_t a5)
{
	int32_t h[2] = { 0, 0 };
	/* Check the result array before making anything that would leak. */
	if (copyout(p->pagetable, uh, h, sizeof h) < 0) return K_E_FAULT;
	int free_slots = 0;
	for (int i = 0; i < NHANDLE; i++) free_slots += p->handles[i].ops == NULL;
	if (free_slots < 2) return K_E_NOMEM;
	const struct handle_ops *rops, *wops;
	void *robj, *wobj;
	int err = pipe_create(&rops, &robj, &wops, &wobj);
	if (err < 0) return err;
	h[0] = handle_install(p, rops, robj);
	h[1] = handle_install(p, wops, wobj);
	if (copyout(p->pagetable, uh, h, sizeof h) < 0) {
		handle_close(&p->handles[h[0]]);
		handle_close(&p->handles[h[1]]);
		return K_E_FAULT;
	}
	return 0;
}

static int64_t sys_hread(struct proc *p, uint64_t h, uint64_t ubuf, uint64_t len,
			 uint64_t flags, uint64_t a4, uint64_t a5)
{
	struct handle *hd = handle_arg(p, h);
	if (hd == NULL || hd->ops->read == NULL) return K_E_BADH;
	if (flags & ~(uint64_t)H_FLAGS) return K_E_INVAL;
	if (!uva_range_ok(ubuf, len)) return K_E_FAULT;
	return hd->ops->read(hd->obj, p, ubuf, len, flags);
}

static int64_t sys_hwrite(struct proc *p, uint64_t h, uint64_t ubuf, uint64_t len,
			  uint64_t flags, uint64_t a4, uint64_t a5)
{
	struct handle *hd = handle_arg(p, h);
	if (hd == NULL || hd->ops->write == NULL) return K_E_BADH;
	if (flags & ~(uint64_t)H_FLAGS) return K_E_INVAL;
	if (!uva_range_ok(ubuf, len)) return K_E_FAULT;
	return hd->ops->write(hd->obj, p, ubuf, len, flags);
}

static int64_t sys_hclose(struct proc *p, uint64_t h, uint64_t a1, uint64_t a2,
			  uint64_t a3, uint64_t a4, uint64_t a5)
{
	struct handle *hd = handle_arg(p, h);
	if (hd == NULL) return K_E_BADH;
	handle_close(hd);
	return 0;
}

void handle_init(void)
{
	proc_on_exit(handle_close_all);
	syscall_register(SYS_pipe, sys_pipe, "pipe");
	syscall_register(SYS_hread, sys_hread, "hread");
	syscall_register(SYS_hwrite, sys_hwrite, "hwrite");
	syscall_register(SYS_hclose, sys_hclose, "hclose");
}
