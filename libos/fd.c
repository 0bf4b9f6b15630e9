/*
 * fd.c - the descriptor table and the POSIX calls that work on descriptors:
 * read/write/lseek/close/fstat (what picolibc's stdio calls), and pread,
 * pwrite, ftruncate, fsync, dup, dup2.  Descriptors 0, 1 and 2 start out as
 * the console; posix.c opens files and may redirect them.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "libos/fd.h"

static struct fdesc {
	const struct fd_ops *ops;
	void *obj;
} fds[LIBOS_NFD];

void fd_init(void)
{
	for (int i = 0; i < 3; i++) {
		fds[i].ops = &console_ops;
		fds[i].obj = NULL;
	}
}

int fd_install(const struct fd_ops *ops, void *obj, int min)
{
	for (int i = min < 0 ? 0 : min; i < LIBOS_NFD; i++)
		if (fds[i].ops == NULL) {
			fds[i].ops = ops;
			fds[i].obj = obj;
			return i;
		}
	errno = EMFILE;
	return -1;
}

int fd_install_at(int fd, const struct fd_ops *ops, void *obj)
{
	if (fd < 0 || fd >= LIBOS_NFD) { errno = EBADF; return -1; }
	if (fds[fd].ops) close(fd);
	fds[fd].ops = ops;
	fds[fd].obj = obj;
	return fd;
}

static struct fdesc *lookup(int fd)
{
	if (fd < 0 || fd >= LIBOS_NFD || fds[fd].ops == NULL) { errno = EBADF; return NULL; }
	return &fds[fd];
}

void *fd_object(int fd, const struct fd_ops *ops)
{
	if (fd < 0 || fd >= LIBOS_NFD || fds[fd].ops == NULL) return NULL;
	if (ops && fds[fd].ops != ops) return NULL;
	return fds[fd].obj;
}

/* picolibc declares read and write returning ssize_t; newlib, on x86-64,
 * returns its _READ_WRITE_RETURN_TYPE (int).  Either way a count fits. */
#ifndef _READ_WRITE_RETURN_TYPE
#define _READ_WRITE_RETURN_TYPE ssize_t
#endif

_READ_WRITE_RETURN_TYPE read(int fd, void *buf, size_t n)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	if (!d->ops->read) { errno = EBADF; return -1; }
	return d->ops->read(d->obj, buf, n);
}

_READ_WRITE_RETURN_TYPE write(int fd, const void *buf, size_t n)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	if (!d->ops->write) { errno = EBADF; return -1; }
	return d->ops->write(d->obj, buf, n);
}

off_t lseek(int fd, off_t off, int whence)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	if (!d->ops->lseek) { errno = ESPIPE; return -1; }
	return d->ops->lseek(d->obj, off, whence);
}

int close(int fd)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	int r = d->ops->close ? d->ops->close(d->obj) : 0;
	d->ops = NULL;
	d->obj = NULL;
	return r;
}

int fstat(int fd, struct stat *st)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	if (!d->ops->fstat) { errno = EINVAL; return -1; }
	return d->ops->fstat(d->obj, st);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	if (!d->ops->pread) { errno = ESPIPE; return -1; }
	return d->ops->pread(d->obj, buf, n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	if (!d->ops->pwrite) { errno = ESPIPE; return -1; }
	return d->ops->pwrite(d->obj, buf, n, off);
}

int ftruncate(int fd, off_t len)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	if (!d->ops->ftruncate) { errno = EINVAL; return -1; }
	return d->ops->ftruncate(d->obj, len);
}

int fsync(int fd)
{
	struct fdesc *d = lookup(fd);
	if (!d) return -1;
	return d->ops->fsync ? d->ops->fsync(d->obj) : 0;
}

int isatty(int fd)
{
	struct fdesc *d = lookup(fd);
	if (!d) return 0;
	if (d->ops != &console_ops) { errno = ENOTTY; return 0; }
	return 1;
}

static int share(struct fdesc *d, int newfd)
{
	if (d->ops->dup)
		d->ops->dup(d->obj);
	return newfd;
}

int dup(int oldfd)
{
	struct fdesc *d = lookup(oldfd);
	if (!d) return -1;
	int fd = fd_install(d->ops, d->obj, 0);
	if (fd < 0) return -1;
	return share(d, fd);
}

int dup2(int oldfd, int newfd)
{
	struct fdesc *d = lookup(oldfd);
	if (!d) return -1;
	if (newfd < 0 || newfd >= LIBOS_NFD) { errno = EBADF; return -1; }
	if (oldfd == newfd) return newfd;
	/* Count the new reference before closing newfd: it may be the last
	 * other reference to the same object. */
	if (d->ops->dup)
		d->ops->dup(d->obj);
	if (fds[newfd].ops) close(newfd);
	fds[newfd].ops = d->ops;
	fds[newfd].obj = d->obj;
	return newfd;
}
