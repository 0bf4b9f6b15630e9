/*
 * stack.h - stackable layers: a library file system mounted over another
 * mount, after Heidemann's stackable design (docs/stacking.md).
 *
 *   mount /secret crypt over=/data,key=...
 *
 * A layer is an ordinary libFS (struct libfs_ops) whose mount finds the
 * mount below through the mount table (vfs_pin) and whose operations call
 * that libFS's operations directly: in a library OS a layer is a library
 * in the same address space, so going through one is a function call.
 *
 * The interface is symmetric: a layer receives every operation of the
 * table and offers every one, so anything can be stacked on anything, to
 * any depth.  What a layer does not handle it passes down unchanged: the
 * table below, STACK_BYPASS_OPS, describes each operation (its parameters,
 * which of them are paths or open files to translate for the layer below,
 * what the mount table would answer if the layer below leaves it NULL,
 * and how to print it), and from it come a generic bypass for each
 * (stack_bypass_NAME) and STACK_BYPASS, the initialiser that gives a layer
 * all of them.  A layer sets its own operations after STACK_BYPASS in its
 * table; an operation added to struct libfs_ops later is described here
 * once (the build fails until it is: see the check in stack.c) and every
 * layer then passes it down without being touched.
 *
 * The contract for a layer's state and handles: its per-mount state starts
 * with a struct stack_mount, and its open-file handle with a struct
 * stack_file (the mount table allocates handles of the layer's
 * file_size).  stack_mount() sets the first up; the generic open and close
 * (stack_open, stack_close) the second.
 *
 * Coherence (docs/stacking.md): layers keep no copy of anything the layer
 * below can change; every call reaches the lowest libFS, whose one cache is
 * the truth, so a file reached through layers and directly below them at
 * the same time shows the same bytes.
 *
 * Portable C11 (guest, host tests, tools).
 */
#ifndef LIBOS_STACK_STACK_H
#define LIBOS_STACK_STACK_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "libos/libfs.h"
#include "libos/vfs.h"

/* Lower handles a mount keeps from closed files for its next opens. */
#define STACK_SPARES 4

/* The first member of every layer's per-mount state. */
struct stack_mount {
	struct vfs_lower below;      /* the layer below: ops, state, held mount,
	                                and below.path, the directory covered */
	size_t sublen;               /* strlen(below.path): 0 = its root      */
	/* What the stack offers (per mount: it depends on what is below). */
	uint32_t features;
	uint32_t name_max;
	uint64_t file_max;
	/* Paths translated for the layer below (stack_paths). */
	const char *p[2];
	char pbuf[2][LIBFS_PATH_MAX];
	struct stack_file *open;     /* open files of this layer              */
	/* Handles of the layer below kept from closed files, so that opening
	 * and closing a file through a layer costs no malloc and free. */
	void *spare[STACK_SPARES];
	int nspare;
	/* A pass-through layer (STACK_PASS) over one without sync: the lower
	 * handles open through it, which its sync must fsync. */
	void **passed;
	int npassed, passcap;
	/* A pass-through layer whose open and close are the layer below's
	 * with the same arguments: over its root, below a libFS that
	 * allocates its own handles and has a sync (set by stack_mount). */
	int direct;
};

/* The first member of every layer's open-file handle. */
struct stack_file {
	void *lower;                 /* the handle of the layer below          */
	struct stack_file *next, *prev;
};

/* ---- what layers call ------------------------------------------------------ */

/* Mount a layer: allocate `size` bytes (>= sizeof(struct stack_mount)) of
 * state, zeroed, find and hold the mount below from opts' over=PATH, and
 * fill in the stack_mount.  0 and *fs, or -errno (-EINVAL without over=,
 * -ENOTDIR when over names a file, -ELOOP for a layer over itself). */
int  stack_mount(const char *opts, size_t size, void **fs);
/* The generic unmount, open, close, forget and abandon (in STACK_BYPASS).
 * stack_unmount passes nothing down: the layer below is a mount of its
 * own, synced and unmounted by the mount table after the layer lets go. */
int  stack_unmount(void *fs);
int  stack_open(void *fs, const char *path, int flags, uint32_t perm, void **file);
int  stack_close(void *fs, void *file);
void stack_forget(void *fs, void *file);
void stack_abandon(void *fs);
/* A layer's own open: open the layer below's file (path already in the
 * layer below's terms) into f. */
int  stack_open_lower(struct stack_mount *s, const char *lpath, int flags, uint32_t perm,
                      struct stack_file *f);
/* Translate up to two paths inside the layer into paths inside the layer
 * below (s->p[0], s->p[1]).  0, or -ENAMETOOLONG. */
int  stack_paths(struct stack_mount *s, const char *a, const char *b);
/* The mount table's answer when the layer below has no sync: fsync every
 * file open through this layer. */
int  stack_sync_files(struct stack_mount *s);
/* Make durable everything any program wrote below, as far as the disk's
 * cache goes: a program that died (a fault: no sync) may have left writes
 * there, unflushed, and a libFS's fsync flushes only when it wrote
 * something itself.  So `same` - bytes the file `lower` already holds at
 * `off` - is written again and the file fsynced (the whole mount synced
 * where there is no fsync).  A layer that keeps two versions of a block
 * calls it before it first takes a version it did not write for durable. */
int  stack_settle(struct stack_mount *s, void *lower, const void *same, size_t n, uint64_t off);
/* For programs and test suites: what the stack mounted at (or above)
 * `path` offers, as a copy of its type's table with the stack's features
 * and limits.  0, or -EINVAL when path is not on a layer. */
int  stack_effective(const char *path, struct libfs_ops *out);

#define STACK_LOWER(file) (((struct stack_file *)(file))->lower)

/* A pass-through layer (STACK_PASS: null) has no handles of its own: the
 * handle of the layer below is its handle, so a call through it is one
 * function call, with no handle to translate, allocate or free.  Its open
 * gives the layer below's handle (allocated from the spares when the layer
 * below wants it allocated), its close closes and keeps it. */
int  stack_pass_open(void *fs, const char *path, int flags, uint32_t perm, void **file);
int  stack_pass_close(void *fs, void *file);
void stack_pass_forget(void *fs, void *file);

/* ---- the operations, described ------------------------------------------------
 * OP(ret, name, params, names, down, fallback, fmt, fmtargs):
 *   params    the parameter list, as in struct libfs_ops
 *   names     the same parameters' names, to call a function like it
 *   down      the arguments for the layer below: S its state, F(x) the
 *             lower handle of x, P0/P1 the paths (translated by `paths`)
 *   paths     the paths to translate first: (a, b), (a, NULL), (NULL, NULL)
 *   fallback  what the mount table answers when the layer below has NULL
 *   fmt, fmtargs   how trace prints the arguments
 * Every member of struct libfs_ops is either here or in STACK_OWN_FIELDS;
 * stack.c fails to build when one is missing. */
#define STACK_BYPASS_OPS(OP) \
	OP(int, sync, (void *fs), (fs), (S), (NULL, NULL), stack_sync_files(s), "%s", "") \
	OP(int, statfs, (void *fs, struct libfs_statfs *st), (fs, st), (S, st), (NULL, NULL), \
	   -ENOTSUP, "%s", "") \
	OP(int, stat, (void *fs, const char *path, struct libfs_stat *st), (fs, path, st), \
	   (S, P0, st), (path, NULL), -ENOTSUP, "\"%s\"", path) \
	OP(int, unlink, (void *fs, const char *path), (fs, path), (S, P0), (path, NULL), \
	   -ENOTSUP, "\"%s\"", path) \
	OP(int, rename, (void *fs, const char *from, const char *to), (fs, from, to), \
	   (S, P0, P1), (from, to), -ENOTSUP, "\"%s\", \"%s\"", from, to) \
	OP(int, mkdir, (void *fs, const char *path, uint32_t perm), (fs, path, perm), \
	   (S, P0, perm), (path, NULL), -ENOTSUP, "\"%s\", 0%o", path, (unsigned)perm) \
	OP(int, rmdir, (void *fs, const char *path), (fs, path), (S, P0), (path, NULL), \
	   -ENOTSUP, "\"%s\"", path) \
	OP(long, read, (void *fs, void *file, void *buf, size_t n, uint64_t off), \
	   (fs, file, buf, n, off), (S, F(file), buf, n, off), (NULL, NULL), -ENOTSUP, \
	   "%p, n=%zu, off=%llu", file, n, (unsigned long long)off) \
	OP(long, write, (void *fs, void *file, const void *buf, size_t n, uint64_t off), \
	   (fs, file, buf, n, off), (S, F(file), buf, n, off), (NULL, NULL), -ENOTSUP, \
	   "%p, n=%zu, off=%llu", file, n, (unsigned long long)off) \
	OP(int, fstat, (void *fs, void *file, struct libfs_stat *st), (fs, file, st), \
	   (S, F(file), st), (NULL, NULL), -ENOTSUP, "%p", file) \
	OP(int, truncate, (void *fs, void *file, uint64_t len), (fs, file, len), \
	   (S, F(file), len), (NULL, NULL), -ENOTSUP, "%p, %llu", file, (unsigned long long)len) \
	OP(int, fsync, (void *fs, void *file), (fs, file), (S, F(file)), (NULL, NULL), \
	   stack_bypass_sync(fs), "%p", file) \
	OP(int, readdir, (void *fs, void *dir, uint64_t *cookie, struct libfs_dirent *de), \
	   (fs, dir, cookie, de), (S, F(dir), cookie, de), (NULL, NULL), -ENOTSUP, \
	   "%p, cookie=%llu", dir, (unsigned long long)*cookie) \
	OP(int, persist, (void *fs, void *file, int model), (fs, file, model), \
	   (S, F(file), model), (NULL, NULL), model == LIBFS_P_WRITEBACK ? 0 : -ENOTSUP, \
	   "%p, %d", file, model)

/* The members every layer has of its own: values, the operations that make
 * and destroy a layer's objects (mount, open...), and those that are not
 * about a mount (mkfs, fsck: a layer has neither). */
#define STACK_OWN_FIELDS(X) X(name) X(features) X(name_max) X(file_max) X(mkfs) X(fsck) \
	X(mount) X(unmount) X(open) X(close) X(abandon) X(forget) X(file_size) \
	X(enter) X(leave)        /* none: the mount table locks the layer below (vfs.c) */

#define STACK_DECLARE_BYPASS(ret, name, params, names, down, paths, fallback, ...) \
	ret stack_bypass_##name params;
STACK_BYPASS_OPS(STACK_DECLARE_BYPASS)

#define STACK_INIT_BYPASS(ret, name, ...) .name = stack_bypass_##name,
#define STACK_DECLARE_PASS(ret, name, params, names, down, paths, fallback, ...) \
	ret stack_pass_##name params;
STACK_BYPASS_OPS(STACK_DECLARE_PASS)
#define STACK_INIT_PASS(ret, name, ...) .name = stack_pass_##name,

/* Every operation passed down, and the generic open/close/...; a layer's
 * table starts with this and sets its own after it (the compiler's
 * override-init warning is off inside; see STACK_LAYER_END). */
#define STACK_FEATURES (LIBFS_F_DIRS | LIBFS_F_RENAME | LIBFS_F_PERSIST)
#define STACK_BYPASS \
	STACK_BYPASS_OPS(STACK_INIT_BYPASS) \
	.features = STACK_FEATURES, .name_max = LIBFS_NAME_MAX, \
	.unmount = stack_unmount, .open = stack_open, .close = stack_close, \
	.forget = stack_forget, .abandon = stack_abandon, .file_size = sizeof(struct stack_file)

/* The same for a layer that transforms nothing and keeps nothing per file:
 * every operation passed down with the open-file handles as they are. */
#define STACK_PASS \
	STACK_BYPASS_OPS(STACK_INIT_PASS) \
	.features = STACK_FEATURES, .name_max = LIBFS_NAME_MAX, \
	.unmount = stack_unmount, .open = stack_pass_open, .close = stack_pass_close, \
	.forget = stack_pass_forget, .abandon = stack_abandon, .file_size = 0

#define STACK_LAYER_BEGIN _Pragma("GCC diagnostic push") \
	_Pragma("GCC diagnostic ignored \"-Woverride-init\"")
#define STACK_LAYER_END _Pragma("GCC diagnostic pop")

/* Little-endian 64-bit fields in what a layer stores below it (a block's
 * header, a file's trailer): the same bytes on every machine. */
static inline void stack_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t stack_get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

#endif
