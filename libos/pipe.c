/*
 * pipe.c - descriptors over the kernel's handles (today: pipe ends), and
 * the null descriptor.
 *
 * A kernel handle (kernel/uapi/proc.h) becomes a descriptor here: reads and
 * writes are the hread/hwrite system calls, dup counts references in the
 * library OS, and the last close closes the handle.  A child learns which
 * of the handles its parent passed are its standard input and output from
 * the environment (EXO_FDn=k:H, libos/posix.c).
 *
 * A write to a pipe that nobody reads any more fails in the kernel with
 * K_E_PIPE.  What Unix does then (SIGPIPE, whose default ends the program)
 * is what a pipeline needs: `yes | head -1` must end when head does.  So by
 * default the write ends the program with status 141 (128 + SIGPIPE's 13),
 * after the usual exit processing (files are still written back); a program
 * that wants the EPIPE error instead clears libos_pipe_exit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "libos/fd.h"
#include "libos/exo.h"
#include "libos/sys.h"
#include "kernel/uapi/errno.h"

int libos_pipe_exit = 1;

struct khandle {
	int h;        /* the kernel handle */
	int refs;     /* descriptors that share it */
};

static ssize_t kh_read(void *obj, void *buf, size_t n)
{
	struct khandle *k = obj;
	long r = sys_hread(k->h, buf, n);
	if (r < 0) {
		errno = exo_errno(r);
		return -1;
	}
	return r;
}

static ssize_t kh_write(void *obj, const void *buf, size_t n)
{
	static int exiting;
	struct khandle *k = obj;
	long r = sys_hwrite(k->h, buf, n);
	if (r == K_E_PIPE) {
		errno = EPIPE;
		/* Once: the exit below flushes stdout, which may write here again. */
		if (libos_pipe_exit && !exiting) {
			exiting = 1;
			exit(128 + KILL_PIPE);
		}
		return -1;
	}
	if (r < 0) {
		errno = exo_errno(r);
		return -1;
	}
	return r;
}

static int kh_close(void *obj)
{
	struct khandle *k = obj;
	if (--k->refs > 0)
		return 0;
	long r = sys_hclose(k->h);
	free(k);
	if (r < 0) {
		errno = exo_errno(r);
		return -1;
	}
	return 0;
}

static void kh_dup(void *obj) { ((struct khandle *)obj)->refs++; }

static int kh_fstat(void *obj, struct stat *st)
{
	(void)obj;
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFIFO | 0600;
	st->st_blksize = PIPE_SIZE;
	return 0;
}

static const struct fd_ops khandle_ops = {
	.read = kh_read,
	.write = kh_write,
	.close = kh_close,
	.fstat = kh_fstat,
	.dup = kh_dup,
};

int libos_fd_handle(int h, int fd)
{
	struct khandle *k = malloc(sizeof *k);
	if (k == NULL) {
		errno = ENOMEM;
		return -1;
	}
	k->h = h;
	k->refs = 1;
	int r = fd >= 0 ? fd_install_at(fd, &khandle_ops, k) : fd_install(&khandle_ops, k, 0);
	if (r < 0)
		free(k);
	return r;
}

int libos_handle_of(int fd)
{
	struct khandle *k = fd_object(fd, &khandle_ops);
	return k ? k->h : -1;
}

int pipe(int fds[2])
{
	int h[2];
	int r = exo_pipe(h);
	if (r < 0) {
		errno = exo_errno(r);
		return -1;
	}
	fds[0] = libos_fd_handle(h[0], -1);
	fds[1] = fds[0] < 0 ? -1 : libos_fd_handle(h[1], -1);
	if (fds[1] < 0) {
		int e = errno;
		if (fds[0] >= 0)
			close(fds[0]);
		else
			exo_hclose(h[0]);
		exo_hclose(h[1]);
		errno = e;
		return -1;
	}
	return 0;
}

/* ---- the null descriptor: reads end at once, writes vanish --------------- */

static ssize_t null_read(void *obj, void *buf, size_t n) { (void)obj; (void)buf; (void)n; return 0; }
static ssize_t null_write(void *obj, const void *buf, size_t n) { (void)obj; (void)buf; return (ssize_t)n; }
static int null_fstat(void *obj, struct stat *st)
{
	(void)obj;
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFCHR | 0666;
	return 0;
}

static const struct fd_ops null_ops = {
	.read = null_read,
	.write = null_write,
	.fstat = null_fstat,
};

static int null_obj;        /* (a descriptor's object must not be NULL to be found) */
int libos_fd_null(int fd) { return fd_install_at(fd, &null_ops, &null_obj); }
int libos_fd_is_null(int fd) { return fd_object(fd, &null_ops) != NULL; }
