/*
 * pipe.c - pipes: a bounded byte channel between processes, the one thing
 * the kernel must provide for `a | b` because processes share no memory.
 *
 * A pipe is a PIPE_SIZE ring with a count of read handles and write
 * handles.  A reader waits while the ring is empty and there is a writer;
 * with no writer left it reads end of file.  A writer waits while the ring
 * is full; with no reader left its write fails with K_E_PIPE (the library
 * OS then ends the program, as Unix's SIGPIPE would: libos/pipe.c), so a
 * reader that stops early (`yes | head -1`) never leaves the writer hanging.
 * Both waits end early with K_E_INTR when the process is killed or alerted.
 * With H_NOWAIT neither waits: a read that would returns K_E_AGAIN, a
 * write what it wrote so far (K_E_AGAIN if nothing).  With H_LEASE they
 * wait until another process wants a shared lock this one holds
 * (p->lock_wanted, set by shseg.c), then return the same way.
 *
 * The read and write positions count bytes forever (64 bits), so "empty"
 * is nread == nwrite and "full" is nwrite - nread == PIPE_SIZE.
 */
#include "kernel/handle.h"
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/syscall.h"

#define NPIPE 64

_Static_assert(PIPE_SIZE == 4096, "a pipe's ring is one page");

struct pipe {
	char *buf;                /* one page; NULL: this slot is free */
	uint64_t nread, nwrite;
	int readers, writers;     /* handles on each end */
};

static struct pipe pipes[NPIPE];

/* Wait on chan - unless the flags say return now: K_E_AGAIN, or
 * K_E_INTR (killed or alerted).  0: woken, look again. */
static int64_t pipe_wait(struct proc *p, void *chan, uint64_t flags)
{
	if (flags & H_NOWAIT) return K_E_AGAIN;
	if ((flags & H_LEASE) && p->lock_wanted) {
		p->lock_wanted = false;
		return K_E_AGAIN;
	}
	if (proc_interrupted(p)) return K_E_INTR;
	p->lease_wait = (flags & H_LEASE) != 0;
	sleep_on(chan);
	p->lease_wait = false;
	return 0;
}

static int64_t pipe_read(void *obj, struct proc *p, uint64_t ubuf, uint64_t len, uint64_t flags)
{
	struct pipe *pi = obj;
	if (len == 0) return 0;
	while (pi->nread == pi->nwrite) {
		if (pi->writers == 0) return 0;
		int64_t e = pipe_wait(p, &pi->nread, flags);
		if (e < 0) return e;
	}
	uint64_t avail = pi->nwrite - pi->nread, n = MIN(len, avail), done = 0;
	while (done < n) {
		uint64_t at = (pi->nread + done) % PIPE_SIZE;
		uint64_t k = MIN(n - done, PIPE_SIZE - at);
		if (copyout(p->pagetable, ubuf + done, pi->buf + at, k) < 0) {
			if (done == 0) return K_E_FAULT;
			break;
		}
		done += k;
	}
	pi->nread += done;
	wakeup(&pi->nwrite);
	return (int64_t)done;
}

static int64_t pipe_write(void *obj, struct proc *p, uint64_t ubuf, uint64_t len, uint64_t flags)
{
	struct pipe *pi = obj;
	uint64_t done = 0;
	while (done < len) {
		if (pi->readers == 0) return done ? (int64_t)done : K_E_PIPE;
		uint64_t space = PIPE_SIZE - (pi->nwrite - pi->nread);
		if (space == 0) {
			wakeup(&pi->nread);
			int64_t e = pipe_wait(p, &pi->nwrite, flags);
			if (e < 0) return done ? (int64_t)done : e;
			continue;
		}
		uint64_t at = pi->nwrite % PIPE_SIZE;
		uint64_t k = MIN(MIN(space, len - done), PIPE_SIZE - at);
		if (copyin(p->pagetable, pi->buf + at, ubuf + done, k) < 0)
			return done ? (int64_t)done : K_E_FAULT;
		pi->nwrite += k;
		done += k;
	}
	wakeup(&pi->nread);
	return (int64_t)done;
}

static void pipe_release(struct pipe *pi)
{
	/* Each side may be asleep waiting for the other. */
	wakeup(&pi->nread);
	wakeup(&pi->nwrite);
	if (pi->readers == 0 && pi->writers == 0) {
		kfree(pi->buf);
		pi->buf = NULL;
	}
}

static void rd_ref(void *obj)   { ((struct pipe *)obj)->readers++; }
static void wr_ref(void *obj)   { ((struct pipe *)obj)->writers++; }
static void rd_close(void *obj) { struct pipe *pi = obj; pi->readers--; pipe_release(pi); }
static void wr_close(void *obj) { struct pipe *pi = obj; pi->writers--; pipe_release(pi); }

static const struct handle_ops pipe_rops = {
	.kind = "pipe (read end)", .read = pipe_read, .ref = rd_ref, .close = rd_close,
};
static const struct handle_ops pipe_wops = {
	.kind = "pipe (write end)", .write = pipe_write, .ref = wr_ref, .close = wr_close,
};

/* A new pipe with one handle's worth of reference on each end. */
int pipe_create(const struct handle_ops **rops, void **robj, const struct handle_ops **wops, void **wobj)
{
	for (int i = 0; i < NPIPE; i++) {
		struct pipe *pi = &pipes[i];
		if (pi->buf) continue;
		pi->buf = kalloc();
		if (pi->buf == NULL) return K_E_NOMEM;
		pi->nread = pi->nwrite = 0;
		pi->readers = pi->writers = 1;
		*rops = &pipe_rops;
		*wops = &pipe_wops;
		*robj = *wobj = pi;
		return 0;
	}
	return K_E_NOMEM;
}
