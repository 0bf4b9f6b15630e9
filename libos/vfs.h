/*
 * vfs.h - the mount table and open files: how one application uses several
 * library file systems at once, each under its own path prefix.
 *
 * The VFS turns an absolute (or cwd-relative) path into (mount, path inside
 * the mount), mounts libFSes lazily on first use, keeps the offset, access
 * mode and reference count of every open file, and unmounts (which makes
 * everything durable) at exit.  It knows nothing about disks; the libFSes
 * below it (struct libfs_ops, libfs.h) do the work.
 *
 * The mount table travels to child processes as one environment variable,
 * EXOMOUNTS (format in docs/libfs.md), so programs started from the shell
 * see the same file systems; the working directory travels as PWD.
 *
 * Every function returns 0 (or a count, or an offset) on success and a
 * negative errno value on failure.  posix.c wraps these as POSIX calls with
 * errno; host tests and tools call them directly.  Portable C11.
 */
#ifndef LIBOS_VFS_H
#define LIBOS_VFS_H

#include <stddef.h>
#include <stdint.h>
#include "libos/libfs.h"

#define VFS_MAX_MOUNTS   16     /* at most 32 (vfs_readdir's bit set) */
#define VFS_SPEC_MAX     1024     /* bytes of one mount spec string */
#define VFS_ENV_MOUNTS   "EXOMOUNTS"

/* Open flags beyond libfs.h's: the VFS handles append itself. */
#define VFS_O_APPEND  0x100

struct vfile;

/* ---- the mount table --------------------------------------------------- */
/* Add a mount: prefix is an absolute path ("/", "/kv"); type names a libFS
 * linked into the program (libfs_type); opts is its option string.  The
 * libFS is mounted when first used, unless `now` is set (then errors show
 * here).  -EBUSY if the prefix is taken, -ENODEV for an unknown type. */
int  vfs_mount(const char *prefix, const char *type, const char *opts, int now);
/* Remove a mount: unmounts it if mounted.  -EBUSY while files are open. */
int  vfs_umount(const char *prefix);
/* Unmount (make durable, release) every mounted libFS that has no open
 * files, keeping the table.  The shell does this before running a program,
 * so the program can mount the same file systems itself. */
int  vfs_release_idle(void);
/* Close every file and unmount everything (process exit). Returns the first
 * error met, after trying all. */
int  vfs_shutdown(void);
/* Forget every open file and mount without writing anything back, as if
 * the process had died (host crash tests; see libfs_ops.abandon). */
void vfs_abandon(void);
/* Parse a table ("PREFIX=TYPE:OPTS;PREFIX=TYPE:OPTS...") into lazy mounts. */
int  vfs_load_spec(const char *spec);
/* Write the table in that form into buf (size bytes); -ENAMETOOLONG if it
 * does not fit. */
int  vfs_spec(char *buf, size_t size);
/* The i-th mount (i from 0): its prefix, type and options; -ENOENT past the
 * end.  mounted is set to 1 if the libFS is mounted in this process. */
int  vfs_mount_info(int i, const char **prefix, const char **type, const char **opts,
                    int *mounted);

/* ---- layers (libos/stack/stack.h, docs/stacking.md) ---------------------- */
/* A layer mounted over `path` reaches the libFS below through this: the
 * mount that path is on (mounted now if it was lazy), its operations and
 * state, and path inside it.  The mount is held: it cannot be unmounted
 * (-EBUSY) until vfs_unpin, and release and shutdown unmount layers first.
 * -ELOOP for a layer over itself. */
struct vfs_lower {
	const struct libfs_ops *ops;
	void *fs;
	char path[LIBFS_PATH_MAX];
	void *hold;
};
int  vfs_pin(const char *path, struct vfs_lower *lo);
void vfs_unpin(struct vfs_lower *lo);

/* ---- paths ------------------------------------------------------------- */
/* Normalise path against the working directory into out (LIBFS_PATH_MAX
 * bytes): absolute, no "." or "..", no repeated or trailing '/'.  -ENOENT for
 * "", -ENAMETOOLONG when a component or the result is too long. */
int  vfs_normalize(const char *path, char *out);
int  vfs_chdir(const char *path);
/* Set the working directory without checking it exists (at program start,
 * before any file system is mounted); abs must be normalised. */
void vfs_chdir_unchecked(const char *abs);
const char *vfs_getcwd(void);

/* ---- operations on names ----------------------------------------------- */
int  vfs_stat(const char *path, struct libfs_stat *st);
int  vfs_unlink(const char *path);
int  vfs_rename(const char *from, const char *to);        /* -EXDEV across mounts */
int  vfs_mkdir(const char *path, uint32_t perm);
int  vfs_rmdir(const char *path);
int  vfs_statfs(const char *path, struct libfs_statfs *st);
int  vfs_sync(void);                                       /* every mounted libFS */

/* ---- open files -------------------------------------------------------- */
int  vfs_open(const char *path, int flags, uint32_t perm, struct vfile **fp);
void vfs_hold(struct vfile *f);                            /* one more reference */
int  vfs_close(struct vfile *f);                           /* drop one reference */
long vfs_read(struct vfile *f, void *buf, size_t n);       /* at the offset, advancing it */
long vfs_write(struct vfile *f, const void *buf, size_t n);
long vfs_pread(struct vfile *f, void *buf, size_t n, uint64_t off);
long vfs_pwrite(struct vfile *f, const void *buf, size_t n, uint64_t off);
/* whence: 0 = SET, 1 = CUR, 2 = END.  Returns the new offset. */
int64_t vfs_lseek(struct vfile *f, int64_t off, int whence);
int  vfs_fstat(struct vfile *f, struct libfs_stat *st);
int  vfs_ftruncate(struct vfile *f, uint64_t len);
int  vfs_fsync(struct vfile *f);
int  vfs_persist(struct vfile *f, int model);
/* Next directory entry ("." and ".." first, then the libFS's, then mount
 * points directly below this directory): 1 = entry, 0 = end. */
int  vfs_readdir(struct vfile *f, struct libfs_dirent *de);
int  vfs_rewinddir(struct vfile *f);

#endif
