/*
 * libfs.h - the interface every library file system implements.
 *
 * A library file system (libFS) is a table of operations (struct libfs_ops)
 * over an opaque per-mount state.  The mount table (vfs.h) gives each mounted
 * libFS a path prefix, turns absolute paths into paths inside the mount, and
 * keeps file offsets and open-file sharing; the POSIX layer (posix.c) puts
 * open/read/write/... on top.  docs/libfs.md explains every operation and the
 * rules; docs/writing-a-libfs.md builds one from nothing.
 *
 * The conventions, in brief:
 *  - Paths handed to a libFS are relative to its mount point and already
 *    normalised by the VFS: no leading or trailing '/', no "//", no "." or
 *    ".." components; "" names the root directory.  Each component is at
 *    most LIBFS_NAME_MAX bytes.
 *  - Every operation returns 0 (or a count) on success and a negative POSIX
 *    errno value (-ENOENT, -ENOSPC, ...) on failure.  The values are the
 *    platform's <errno.h> ones: a libFS is built for the guest and the host
 *    from the same source.
 *  - An optional operation may be NULL; the VFS then answers for it (see
 *    the comments below).
 *
 * This header is portable C11: it is compiled into the guest libOS, the host
 * tests and the host tools.
 */
#ifndef LIBOS_LIBFS_H
#define LIBOS_LIBFS_H

#include <stddef.h>
#include <stdint.h>

#define LIBFS_NAME_MAX  255     /* bytes in one path component               */
#define LIBFS_PATH_MAX  1024    /* bytes in a whole path, NUL included        */

/* Open flags.  The VFS translates the platform's O_* values into these. */
#define LIBFS_O_READ    0x01
#define LIBFS_O_WRITE   0x02
#define LIBFS_O_CREAT   0x04    /* create a regular file if it does not exist  */
#define LIBFS_O_EXCL    0x08    /* with CREAT: fail with -EEXIST if it exists  */
#define LIBFS_O_TRUNC   0x10    /* truncate a regular file to 0 (needs WRITE)  */
#define LIBFS_O_DIR     0x20    /* must be a directory (opendir)               */
#define LIBFS_O_SYNC    0x40    /* writes are durable when they return         */

/* File types. */
#define LIBFS_T_REG  1
#define LIBFS_T_DIR  2

/* Persistence models (thesis section 5.4.3), chosen per file.  */
#define LIBFS_P_WRITEBACK    0  /* dirty data stays in the application until fsync,
                                   sync, unmount or process exit (the default)     */
#define LIBFS_P_WRITETHROUGH 1  /* every write is durable when it returns          */
#define LIBFS_P_MEMORY       2  /* never written to disk; the file disappears at
                                   unmount                                          */

struct libfs_stat {
	uint64_t ino;           /* unique within the mount                           */
	uint32_t type;          /* LIBFS_T_*                                         */
	uint32_t perm;          /* permission bits, kept but not enforced            */
	uint32_t nlink;
	uint32_t persist;       /* LIBFS_P_*                                         */
	uint64_t size;          /* bytes                                             */
	uint64_t blocks;        /* 512-byte sectors held on disk, metadata included  */
	uint64_t mtime;         /* nanoseconds; see docs/libfs.md on clocks          */
	uint64_t ctime;
};

struct libfs_dirent {
	uint64_t ino;
	uint32_t type;          /* LIBFS_T_*                                         */
	char     name[LIBFS_NAME_MAX + 1];
};

struct libfs_statfs {
	char     type[16];      /* the libFS's name                                  */
	uint32_t bsize;         /* allocation unit in bytes                          */
	uint64_t blocks;        /* the file system's size in bsize units, or the disk's
	                           when the file system grows into any free space     */
	uint64_t bfree;         /* units it could still allocate                     */
	uint64_t files;         /* files and directories in use                      */
	uint64_t ffree;         /* more it could create (an estimate), or 0          */
};

/* What a libFS supports (struct libfs_ops.features): programs and test
 * suites adapt to these, never to type names. */
#define LIBFS_F_DIRS     0x01   /* mkdir/rmdir and nested paths               */
#define LIBFS_F_RENAME   0x02   /* rename                                     */
#define LIBFS_F_PERSIST  0x04   /* persistence models (persist)               */
#define LIBFS_F_ATOMIC   0x08   /* a file's changes reach the disk all at once
                                   (at fsync/close): after a crash a file is
                                   wholly as it was or wholly as written      */

/* fsck's arguments and results (struct libfs_ops.fsck). */
struct libfs_fsck {
	int repair;             /* in: repair what can be repaired                   */
	void (*report)(void *arg, const char *path, const char *what);   /* each problem */
	void *arg;
	uint64_t problems;      /* out                                               */
	char summary[160];      /* out: what was checked ("12 files, 40960 bytes")   */
};

/* A member added here must also be described for layers, in
 * libos/stack/stack.h (the build says so). */
struct libfs_ops {
	const char *name;       /* the type name used in mount specs: "unixfs" ...   */

	/* What it supports and its hard limits, for programs and test suites
	 * (fssuite) to adapt to: LIBFS_F_*, the longest name component in
	 * bytes, the largest file in bytes (0: only the disk limits it). */
	uint32_t features;
	uint32_t name_max;
	uint64_t file_max;
	/* Make an empty file system (options as for mount); where its
	 * superblock or anchor is in *sector.  NULL: mkfs cannot make one. */
	int  (*mkfs)(const char *opts, uint64_t *sector);
	/* Check it (not mounted elsewhere).  0 with ck's results filled in, or
	 * -errno if it could not look.  NULL: fsck walks it through the
	 * operations below (libfs_check). */
	int  (*fsck)(const char *opts, struct libfs_fsck *ck);

	/* Mount: opts is the option string of the mount spec ("unit=0,key=...").
	 * On success store the per-mount state in *fs.  Unmount makes everything
	 * durable (except memory-only files, which it deletes) and frees the
	 * state; it is called once, after every file of the mount is closed. */
	int  (*mount)(const char *opts, void **fs);
	int  (*unmount)(void *fs);
	/* Make every change durable: data first, then what points to it.
	 * NULL: the VFS calls fsync on each open file of the mount (for a
	 * libFS whose only unwritten state is its open files'). */
	int  (*sync)(void *fs);
	int  (*statfs)(void *fs, struct libfs_statfs *st);

	/* Names. */
	int  (*stat)(void *fs, const char *path, struct libfs_stat *st);
	int  (*unlink)(void *fs, const char *path);                 /* regular files */
	/* Replace `to` if it exists (a file by a file, an empty directory by a
	 * directory).  NULL: -ENOTSUP. */
	int  (*rename)(void *fs, const char *from, const char *to);
	int  (*mkdir)(void *fs, const char *path, uint32_t perm);   /* NULL: -ENOTSUP */
	int  (*rmdir)(void *fs, const char *path);                  /* NULL: -ENOTSUP */

	/* Open files.  open returns a handle in *file; the VFS keeps the offset
	 * and passes it explicitly, so read and write are positional.  If
	 * file_size (below) is not 0, the VFS allocates the handle, zeroed, puts
	 * it in *file before open, and frees it after close (or a failed open):
	 * the libFS only fills it in. */
	int  (*open)(void *fs, const char *path, int flags, uint32_t perm, void **file);
	int  (*close)(void *fs, void *file);
	long (*read)(void *fs, void *file, void *buf, size_t n, uint64_t off);
	long (*write)(void *fs, void *file, const void *buf, size_t n, uint64_t off);
	int  (*fstat)(void *fs, void *file, struct libfs_stat *st);
	int  (*truncate)(void *fs, void *file, uint64_t len);
	int  (*fsync)(void *fs, void *file);                        /* NULL: sync */
	/* Directory handles (opened with LIBFS_O_DIR): return the entry after
	 * position *cookie (0 = start) and advance it; 1 = an entry, 0 = end.
	 * "." and ".." are not returned: the VFS adds them. */
	int  (*readdir)(void *fs, void *dir, uint64_t *cookie, struct libfs_dirent *de);
	/* Choose the file's persistence model (LIBFS_P_*).  NULL: only the
	 * default is available (-ENOTSUP for the others). */
	int  (*persist)(void *fs, void *file, int model);
	/* Free all memory of the mount and its open files without writing
	 * anything: what dying does to a process.  Host tests use it to
	 * simulate a crash; NULL if the libFS cannot.  The VFS first calls
	 * forget (if not NULL) on each open file, then frees the handles it
	 * allocated (file_size), then calls abandon. */
	void (*abandon)(void *fs);
	void (*forget)(void *fs, void *file);
	size_t file_size;       /* bytes of one open file's handle, if the VFS
	                           allocates them; 0: the libFS does */

	/* Sharing between processes (docs/sharing.md).  The VFS brackets
	 * every call above but mount, unmount, abandon and forget with enter
	 * and leave; `change` is 1 when the call may change what other
	 * processes see.  enter takes the file system's lock and catches up
	 * with what others changed; a negative return fails the call (leave
	 * is then not called).  NULL: not shared (one process at a time). */
	int  (*enter)(void *fs, int change);
	void (*leave)(void *fs);
};

/* The libFS types known to this program, for mounting by name
 * (libos/libfs_types.c): the built-in ones - every directory named in
 * LIBFS_TYPES in userfs/userfs.mk - plus any registered at run time (a
 * test's private libFS, say).  libfs_register returns -ENOMEM when the
 * table is full, -EEXIST for a name already known, -EINVAL when the
 * features do not match the operations (LIBFS_F_DIRS without mkdir...).
 * libfs_type_at(i) is the i-th known type, NULL past the end. */
const struct libfs_ops *libfs_type(const char *name);
const struct libfs_ops *libfs_type_at(int i);
/* The layers built in (LIBFS_LAYERS in userfs/userfs.mk; docs/stacking.md):
 * mountable by name over another mount, never listed by libfs_type_at. */
const struct libfs_ops *libfs_layer_at(int i);
int libfs_register(const struct libfs_ops *ops);
/* Do ops's features agree with its operations?  0, or -EINVAL. */
int libfs_check_ops(const struct libfs_ops *ops);
/* A check any libFS gets through its own operations (libos/libfs_check.c):
 * mount, walk every directory, stat and read every file to its end,
 * unmount; problems are names that do not stat, files whose bytes do not
 * read back as long as their size, a type that disagrees, a listing that
 * names one entry twice. */
int libfs_check(const struct libfs_ops *ops, const char *opts, struct libfs_fsck *ck);
/* Option lookup in "k1=v1,k2=v2,flag": copies the value of `key` into
 * val (at most size-1 bytes) and returns 1, or 0 when absent, or -1 when
 * the value does not fit.  A bare "flag" has the value "". */
int libfs_opt(const char *opts, const char *key, char *val, size_t size);

#endif
