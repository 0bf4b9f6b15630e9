/*
 * fd.h - the library OS's file-descriptor table.  A descriptor is an object
 * with an operations vector; the console is one kind, files of a library
 * file system (posix.c) are others.  picolibc's read/write/lseek/close land
 * here.  Several descriptors may share one object (dup, dup2): the object
 * counts its own references through `dup` and `close`.
 */
#ifndef LIBOS_FD_H
#define LIBOS_FD_H

#include <sys/types.h>
#include <sys/stat.h>

#define LIBOS_NFD 64

struct fd_ops {
	ssize_t (*read)(void *obj, void *buf, size_t n);
	ssize_t (*write)(void *obj, const void *buf, size_t n);
	off_t   (*lseek)(void *obj, off_t off, int whence);    /* NULL: not seekable */
	int     (*close)(void *obj);
	int     (*fstat)(void *obj, struct stat *st);
	/* Optional; NULL means the operation does not apply (ESPIPE for
	 * pread/pwrite, EINVAL for ftruncate, success for fsync). */
	ssize_t (*pread)(void *obj, void *buf, size_t n, off_t off);
	ssize_t (*pwrite)(void *obj, const void *buf, size_t n, off_t off);
	int     (*ftruncate)(void *obj, off_t len);
	int     (*fsync)(void *obj);
	/* Another descriptor now refers to obj (NULL: obj needs no count). */
	void    (*dup)(void *obj);
};

void fd_init(void);
/* Install obj at the lowest free descriptor (>= min); the descriptor or -1/EMFILE. */
int  fd_install(const struct fd_ops *ops, void *obj, int min);
/* Install at exactly fd, closing what was there. */
int  fd_install_at(int fd, const struct fd_ops *ops, void *obj);
/* The object behind fd if it uses ops (or any ops when ops is NULL), else NULL. */
void *fd_object(int fd, const struct fd_ops *ops);

extern const struct fd_ops console_ops;

/* libos/pipe.c: kernel handles (pipe ends) as descriptors. */
/* Make kernel handle h descriptor fd (-1: the lowest free one); the descriptor. */
int  libos_fd_handle(int h, int fd);
/* The kernel handle behind fd, or -1 if fd is not one. */
int  libos_handle_of(int fd);
/* Make fd the null descriptor (reads see end of file, writes vanish). */
int  libos_fd_null(int fd);
int  libos_fd_is_null(int fd);
/* How a child can be given the same descriptor 0..2 as ours (libos/posix.c):
 * "k:" with *handle the kernel handle to pass, "n:" the null descriptor,
 * "a:PATH"/"r:PATH" the file we were given, or NULL (the console, or
 * nothing a child can reopen). */
const char *libos_fd_inherit(int fd, int *handle);
/* 1 (the default): a write to a pipe with no reader ends the program with
 * status 141, as SIGPIPE would; 0: it fails with EPIPE. */
extern int libos_pipe_exit;

#endif
