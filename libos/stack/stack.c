/*
 * stack.c - the machinery every layer shares (stack.h): mounting over a
 * mount, the generic bypass of each operation, and the generic open,
 * close, forget, unmount and abandon that keep a layer's handles paired
 * with the handles of the layer below.
 */
#include <stdlib.h>
#include <string.h>
#include "libos/stack/stack.h"

/* Every member of struct libfs_ops is described, either as an operation
 * to pass down or as one a layer has of its own.  Adding a member to the
 * table without describing it here would leave layers unable to pass it
 * down, so the build stops. */
#define STACK_SIZE_OP(ret, name, ...) + sizeof(((struct libfs_ops *)0)->name)
#define STACK_SIZE_OWN(name) + sizeof(((struct libfs_ops *)0)->name)
_Static_assert(0 STACK_BYPASS_OPS(STACK_SIZE_OP) STACK_OWN_FIELDS(STACK_SIZE_OWN) ==
               sizeof(struct libfs_ops),
               "struct libfs_ops has a member stack.h does not describe: add it to "
               "STACK_BYPASS_OPS (or STACK_OWN_FIELDS) in libos/stack/stack.h");

/* Layer mounts alive in this program, so stack_effective can tell a layer's
 * state from a file system's; live_find(NULL) finds a free slot. */
#define STACK_MAX_LIVE 32
static struct stack_mount *live[STACK_MAX_LIVE];

static int live_find(const void *fs)
{
	for (int i = 0; i < STACK_MAX_LIVE; i++)
		if ((const void *)live[i] == fs)
			return i;
	return -1;
}

int stack_paths(struct stack_mount *s, const char *a, const char *b)
{
	const char *in[2] = { a, b };
	for (int i = 0; i < 2; i++) {
		if (in[i] == NULL || s->sublen == 0) {
			s->p[i] = in[i];
			continue;
		}
		size_t n = strlen(in[i]);
		if (s->sublen + 1 + n + 1 > LIBFS_PATH_MAX)
			return -ENAMETOOLONG;
		memcpy(s->pbuf[i], s->below.path, s->sublen);
		if (n == 0) {
			s->pbuf[i][s->sublen] = 0;
		} else {
			s->pbuf[i][s->sublen] = '/';
			memcpy(s->pbuf[i] + s->sublen + 1, in[i], n + 1);
		}
		s->p[i] = s->pbuf[i];
	}
	return 0;
}

/* Only operations with paths pay for the translation (a constant NULL
 * folds away), and only layers over a directory inside a mount. */
static inline int paths(struct stack_mount *s, const char *a, const char *b)
{
	if (a == NULL)
		return 0;
	if (s->sublen == 0) {
		s->p[0] = a;
		s->p[1] = b;
		return 0;
	}
	return stack_paths(s, a, b);
}

/* ---- the generic bypass, one function per described operation ---------------- */
#define S s->below.fs
#define F(x) STACK_LOWER(x)
#define P0 s->p[0]
#define P1 s->p[1]
#define STACK_UNPAREN(...) __VA_ARGS__
/* One body for both: F (how a handle goes down) is expanded where each
 * table is instantiated below. */
#define STACK_DEFINE_DOWN(fn, ret, name, params, down, pathargs, fallback) \
	ret fn params \
	{ \
		struct stack_mount *s = fs; \
		if (paths(s, STACK_UNPAREN pathargs) < 0) \
			return -ENAMETOOLONG; \
		if (s->below.ops->name == NULL) \
			return fallback; \
		return s->below.ops->name down; \
	}
#define STACK_DEFINE_BYPASS(ret, name, params, names, down, pathargs, fallback, ...) \
	STACK_DEFINE_DOWN(stack_bypass_##name, ret, name, params, down, pathargs, fallback)
STACK_BYPASS_OPS(STACK_DEFINE_BYPASS)
#undef F

/* The same for pass-through layers: the handle is the lower one. */
#define F(x) (x)
#define STACK_DEFINE_PASS(ret, name, params, names, down, pathargs, fallback, ...) \
	STACK_DEFINE_DOWN(stack_pass_##name, ret, name, params, down, pathargs, fallback)
STACK_BYPASS_OPS(STACK_DEFINE_PASS)
#undef S
#undef F
#undef P0
#undef P1

int stack_sync_files(struct stack_mount *s)
{
	int first = 0;
	for (struct stack_file *f = s->open; f != NULL; f = f->next) {
		int r = s->below.ops->fsync ? s->below.ops->fsync(s->below.fs, f->lower) : 0;
		if (r < 0 && first == 0)
			first = r;
	}
	for (int i = 0; i < s->npassed; i++) {
		int r = s->below.ops->fsync ? s->below.ops->fsync(s->below.fs, s->passed[i]) : 0;
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

int stack_settle(struct stack_mount *s, void *lower, const void *same, size_t n, uint64_t off)
{
	long w = s->below.ops->write(s->below.fs, lower, same, n, off);
	if (w >= 0 && (size_t)w != n)
		w = -EIO;
	if (w < 0)
		return (int)w;
	if (s->below.ops->fsync)
		return s->below.ops->fsync(s->below.fs, lower);
	return s->below.ops->sync ? s->below.ops->sync(s->below.fs) : 0;
}

/* ---- mounting ------------------------------------------------------------------ */

int stack_mount(const char *opts, size_t size, void **fs)
{
	char over[LIBFS_PATH_MAX];
	int r = libfs_opt(opts, "over", over, sizeof over);
	if (r <= 0 || over[0] != '/')
		return r < 0 ? -ENAMETOOLONG : -EINVAL;      /* over=/PATH is required */
	int slot = live_find(NULL);
	if (slot < 0)
		return -ENOMEM;
	if (size < sizeof(struct stack_mount))
		return -EINVAL;
	struct stack_mount *s = calloc(1, size);
	if (s == NULL)
		return -ENOMEM;
	r = vfs_pin(over, &s->below);
	if (r < 0) {
		free(s);
		return r;
	}
	s->sublen = strlen(s->below.path);
	if (s->sublen > 0) {
		struct libfs_stat st;
		r = s->below.ops->stat(s->below.fs, s->below.path, &st);
		if (r == 0 && st.type != LIBFS_T_DIR)
			r = -ENOTDIR;
		if (r < 0) {
			vfs_unpin(&s->below);
			free(s);
			return r;
		}
	}
	s->features = s->below.ops->features;
	s->name_max = s->below.ops->name_max;
	s->file_max = s->below.ops->file_max;
	/* The layer below's own answer, if it is a layer too. */
	int k = live_find(s->below.fs);
	if (k >= 0) {
		s->features = live[k]->features;
		s->name_max = live[k]->name_max;
		s->file_max = live[k]->file_max;
	}
	/* A pass-through layer over its file system's root (null) changes
	 * nothing on the way down: every call through it reaches the layer
	 * below with the same arguments and handles.  So this layer calls that
	 * one directly - resolved once here, and since each pass-through layer
	 * was resolved the same way when it was mounted, a call through any
	 * number of them stacked is one call.  The mount below stays pinned
	 * (it cannot go while this layer is over it), and every operation,
	 * known or added later, is still passed down by this layer's table:
	 * only where "down" leads is decided here. */
	if (k >= 0 && s->below.ops->open == stack_pass_open && live[k]->sublen == 0) {
		s->below.ops = live[k]->below.ops;
		s->below.fs = live[k]->below.fs;
	}
	s->direct = s->sublen == 0 && s->below.ops->file_size == 0 && s->below.ops->sync != NULL;
	live[slot] = s;
	*fs = s;
	return 0;
}

static void let_go(struct stack_mount *s)
{
	int k = live_find(s);
	if (k >= 0)
		live[k] = NULL;
	while (s->nspare > 0)
		free(s->spare[--s->nspare]);
	free(s->passed);
	vfs_unpin(&s->below);
	free(s);
}

int stack_unmount(void *fs)
{
	let_go(fs);
	return 0;
}

void stack_abandon(void *fs)
{
	let_go(fs);
}

int stack_effective(const char *path, struct libfs_ops *out)
{
	struct vfs_lower lo;
	int r = vfs_pin(path, &lo);
	if (r < 0)
		return r;
	vfs_unpin(&lo);
	int k = live_find(lo.fs);
	if (k < 0)
		return -EINVAL;
	*out = *lo.ops;
	out->features = live[k]->features;
	out->name_max = live[k]->name_max;
	out->file_max = live[k]->file_max;
	return 0;
}

/* ---- open files ---------------------------------------------------------------- */

/* A lower handle given back: kept for the next open, or freed. */
static void put_spare(struct stack_mount *s, void *h)
{
	if (s->nspare < STACK_SPARES)
		s->spare[s->nspare++] = h;
	else
		free(h);
}

int stack_open_lower(struct stack_mount *s, const char *lpath, int flags, uint32_t perm,
                     struct stack_file *f)
{
	size_t fsz = s->below.ops->file_size;
	f->lower = NULL;
	if (fsz != 0 && s->nspare > 0)
		f->lower = memset(s->spare[--s->nspare], 0, fsz);
	else if (fsz != 0 && (f->lower = calloc(1, fsz)) == NULL)
		return -ENOMEM;
	int r = s->below.ops->open(s->below.fs, lpath, flags, perm, &f->lower);
	if (r < 0) {
		if (fsz != 0)
			put_spare(s, f->lower);
		f->lower = NULL;
		return r;
	}
	f->prev = NULL;
	f->next = s->open;
	if (s->open != NULL)
		s->open->prev = f;
	s->open = f;
	return 0;
}

int stack_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	struct stack_mount *s = fs;
	int r = stack_paths(s, path, NULL);
	return r < 0 ? r : stack_open_lower(s, s->p[0], flags, perm, *file);
}

static void unlink_file(struct stack_mount *s, struct stack_file *f)
{
	if (f->prev != NULL)
		f->prev->next = f->next;
	else if (s->open == f)
		s->open = f->next;
	if (f->next != NULL)
		f->next->prev = f->prev;
	f->next = f->prev = NULL;
}

int stack_close(void *fs, void *file)
{
	struct stack_mount *s = fs;
	struct stack_file *f = file;
	unlink_file(s, f);
	int r = s->below.ops->close(s->below.fs, f->lower);
	if (s->below.ops->file_size != 0)
		put_spare(s, f->lower);
	f->lower = NULL;
	return r;
}

void stack_forget(void *fs, void *file)
{
	struct stack_mount *s = fs;
	struct stack_file *f = file;
	unlink_file(s, f);
	if (s->below.ops->forget != NULL)
		s->below.ops->forget(s->below.fs, f->lower);
	if (s->below.ops->file_size != 0)
		put_spare(s, f->lower);
	f->lower = NULL;
}

/* ---- pass-through layers ---------------------------------------------------------- */

/* Below a layer without sync, its handles are kept, for stack_sync_files. */
static int pass_track(struct stack_mount *s, void *h)
{
	if (s->npassed == s->passcap) {
		int cap = s->passcap ? 2 * s->passcap : 8;
		void **p = realloc(s->passed, (size_t)cap * sizeof *p);
		if (p == NULL)
			return -ENOMEM;
		s->passed = p;
		s->passcap = cap;
	}
	s->passed[s->npassed++] = h;
	return 0;
}

static void pass_untrack(struct stack_mount *s, void *h)
{
	for (int i = 0; i < s->npassed; i++)
		if (s->passed[i] == h) {
			s->passed[i] = s->passed[--s->npassed];
			return;
		}
}

/* The general open (a directory inside the mount, handles to allocate or
 * to track); kept out of line so the usual case saves no registers. */
static __attribute__((noinline)) int pass_open(struct stack_mount *s, const char *path, int flags,
                                               uint32_t perm, void **file)
{
	size_t fsz = s->below.ops->file_size;
	void *h = NULL;
	int r = paths(s, path, NULL);
	if (r < 0)
		return r;
	if (fsz != 0 && s->nspare > 0)
		h = memset(s->spare[--s->nspare], 0, fsz);
	else if (fsz != 0 && (h = calloc(1, fsz)) == NULL)
		return -ENOMEM;
	r = s->below.ops->open(s->below.fs, s->p[0], flags, perm, &h);
	if (r == 0 && s->below.ops->sync == NULL && (r = pass_track(s, h)) < 0)
		s->below.ops->close(s->below.fs, h);
	if (r < 0) {
		if (fsz != 0)
			put_spare(s, h);
		return r;
	}
	*file = h;
	return 0;
}

int stack_pass_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	struct stack_mount *s = fs;
	/* The usual case (null over unixfs): nothing to translate, allocate
	 * or track, so the open is the layer below's, called directly. */
	if (s->direct)
		return s->below.ops->open(s->below.fs, path, flags, perm, file);
	return pass_open(s, path, flags, perm, file);
}

static __attribute__((noinline)) int pass_close(struct stack_mount *s, void *file)
{
	if (s->below.ops->sync == NULL)
		pass_untrack(s, file);
	int r = s->below.ops->close(s->below.fs, file);
	if (s->below.ops->file_size != 0)
		put_spare(s, file);
	return r;
}

int stack_pass_close(void *fs, void *file)
{
	struct stack_mount *s = fs;
	if (s->direct)
		return s->below.ops->close(s->below.fs, file);
	return pass_close(s, file);
}

void stack_pass_forget(void *fs, void *file)
{
	struct stack_mount *s = fs;
	if (s->below.ops->sync == NULL)
		pass_untrack(s, file);
	if (s->below.ops->forget != NULL)
		s->below.ops->forget(s->below.fs, file);
	if (s->below.ops->file_size != 0)
		put_spare(s, file);
}
