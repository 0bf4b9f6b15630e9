/*
 * vfs.c - the mount table and open files (see vfs.h).
 *
 * Paths are normalised lexically.  That is exact here because no libFS has
 * symbolic links, so "a/b/.." always names a, whatever b is; it also lets a
 * ".." cross from one mount into the one above it without asking either.
 * The mount with the longest prefix of the normalised path wins.
 *
 * A mount is "lazy" until first used: the table may list file systems a
 * program never touches (echo, say), and mounting one may cost disk reads
 * and, for unixfs, its single-user lock.
 *
 * A libFS that processes share (docs/sharing.md) gives enter and leave:
 * every call into it below is bracketed by them, so that one operation -
 * an append's size and write, an open's lookup and fstat - happens whole
 * with respect to the other processes.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "libos/vfs.h"

struct mount {
	int used;
	char prefix[LIBFS_PATH_MAX];
	size_t plen;
	char type[32];
	char opts[VFS_SPEC_MAX];
	const struct libfs_ops *ops;
	void *fs;                 /* NULL until mounted */
	int nopen;                /* open files (struct vfile) */
	int pins;                 /* layers mounted over it (vfs_pin) */
	int mounting;             /* inside its mount operation: a layer over
	                             itself would recurse (-ELOOP) */
	struct mount *below;      /* the nearest mount with a shared lock under
	                             the one this layer pinned: its lock is
	                             taken too (enter) */
};

struct vfile {
	struct mount *m;
	void *fh;
	uint64_t off;
	int flags;                /* LIBFS_O_* | VFS_O_APPEND */
	int refs;
	int isdir;
	/* Directory reading: ".", "..", the libFS's entries, then mount points. */
	int phase;
	uint64_t cookie;
	int next_mount;
	uint32_t seen;            /* mount points the libFS already listed */
	int slot;                 /* its place in files[] (track) */
	char path[LIBFS_PATH_MAX];   /* absolute, normalised */
};

static struct mount mounts[VFS_MAX_MOUNTS];
static char cwd[LIBFS_PATH_MAX] = "/";

/* ---- paths --------------------------------------------------------------- */

int vfs_normalize(const char *path, char *out)
{
	if (path == NULL || path[0] == 0)
		return -ENOENT;
	size_t len = 0;
	if (path[0] != '/') {
		len = strlen(cwd);
		memcpy(out, cwd, len + 1);
		if (len == 1)
			len = 0;          /* "/" contributes no characters before the next '/' */
	}
	out[len] = 0;
	const char *p = path;
	while (*p) {
		while (*p == '/')
			p++;
		if (*p == 0)
			break;
		const char *c = p;
		while (*p && *p != '/')
			p++;
		size_t n = (size_t)(p - c);
		if (n > LIBFS_NAME_MAX)
			return -ENAMETOOLONG;
		if (n == 1 && c[0] == '.')
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;        /* drop the '/' too */
			out[len] = 0;
			continue;
		}
		if (len + 1 + n + 1 > LIBFS_PATH_MAX)
			return -ENAMETOOLONG;
		out[len++] = '/';
		memcpy(out + len, c, n);
		len += n;
		out[len] = 0;
	}
	if (len == 0) {
		out[0] = '/';
		out[1] = 0;
	}
	return 0;
}

/* The mount whose prefix is the longest prefix of abs, or NULL. */
static struct mount *find_mount(const char *abs, const char **rel)
{
	struct mount *best = NULL;
	size_t alen = strlen(abs);
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		struct mount *m = &mounts[i];
		if (!m->used)
			continue;
		if (m->plen == 1) {               /* "/" covers everything */
			if (best == NULL)
				best = m;
			continue;
		}
		/* The cheap tests first: every layer is a mount, and this runs
		 * for every name looked up. */
		if (m->plen <= alen && (abs[m->plen] == 0 || abs[m->plen] == '/') &&
		    (best == NULL || m->plen > best->plen) && memcmp(abs, m->prefix, m->plen) == 0)
			best = m;
	}
	if (best != NULL) {
		const char *r = abs + (best->plen == 1 ? 0 : best->plen);
		while (*r == '/')
			r++;
		*rel = r;
	}
	return best;
}

static struct mount *now_mounting;   /* whose mount operation runs (vfs_pin) */

static int ensure_mounted(struct mount *m)
{
	if (m->fs != NULL)
		return 0;
	if (m->mounting)
		return -ELOOP;
	void *fs = NULL;
	m->mounting = 1;
	struct mount *outer = now_mounting;
	now_mounting = m;
	int r = m->ops->mount(m->opts, &fs);
	now_mounting = outer;
	m->mounting = 0;
	if (r < 0)
		return r;
	m->fs = fs;
	return 0;
}

/* Normalise path into abs and find its mount (mounting it if needed). */
static int resolve(const char *path, char *abs, struct mount **mp, const char **rel)
{
	int r = vfs_normalize(path, abs);
	if (r < 0)
		return r;
	struct mount *m = find_mount(abs, rel);
	if (m == NULL)
		return -ENOENT;
	r = ensure_mounted(m);
	if (r < 0)
		return r;
	*mp = m;
	return 0;
}

int vfs_chdir(const char *path)
{
	char abs[LIBFS_PATH_MAX];
	struct libfs_stat st;
	int r = vfs_normalize(path, abs);
	if (r == 0)
		r = vfs_stat(abs, &st);
	if (r < 0)
		return r;
	if (st.type != LIBFS_T_DIR)
		return -ENOTDIR;
	memcpy(cwd, abs, strlen(abs) + 1);
	return 0;
}

void vfs_chdir_unchecked(const char *abs)
{
	if (abs[0] == '/' && strlen(abs) < LIBFS_PATH_MAX)
		memcpy(cwd, abs, strlen(abs) + 1);
}

const char *vfs_getcwd(void)
{
	return cwd;
}

/* ---- the mount table ---------------------------------------------------- */

static int valid_prefix(const char *abs)
{
	/* The spec format separates mounts with ';' and a prefix from its type
	 * with '='. */
	return strchr(abs, ';') == NULL && strchr(abs, '=') == NULL;
}

int vfs_mount(const char *prefix, const char *type, const char *opts, int now)
{
	char abs[LIBFS_PATH_MAX];
	if (prefix == NULL || prefix[0] != '/')
		return -EINVAL;
	int r = vfs_normalize(prefix, abs);
	if (r < 0)
		return r;
	if (!valid_prefix(abs) || (opts != NULL && strchr(opts, ';') != NULL))
		return -EINVAL;
	if (opts == NULL)
		opts = "";
	if (strlen(opts) >= VFS_SPEC_MAX || strlen(type) >= sizeof mounts[0].type)
		return -ENAMETOOLONG;
	const struct libfs_ops *ops = libfs_type(type);
	if (ops == NULL)
		return -ENODEV;
	struct mount *free_slot = NULL;
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		if (mounts[i].used && strcmp(mounts[i].prefix, abs) == 0)
			return -EBUSY;
		if (!mounts[i].used && free_slot == NULL)
			free_slot = &mounts[i];
	}
	if (free_slot == NULL)
		return -ENOMEM;
	struct mount *m = free_slot;
	memset(m, 0, sizeof *m);
	strcpy(m->prefix, abs);
	m->plen = strlen(abs);
	strcpy(m->type, type);
	strcpy(m->opts, opts);
	m->ops = ops;
	m->used = 1;
	if (now) {
		r = ensure_mounted(m);
		if (r < 0) {
			m->used = 0;
			return r;
		}
	}
	return 0;
}

static int do_unmount(struct mount *m)
{
	if (m->fs == NULL)
		return 0;
	int r = m->ops->unmount(m->fs);
	m->fs = NULL;            /* even on error: the libFS has freed its state */
	m->below = NULL;
	return r;
}

/* Is another entry of the table a layer over m (over=PATH inside m),
 * mounted or not yet?  Then m must stay. */
static int layered_over(struct mount *m)
{
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		struct mount *o = &mounts[i];
		char over[LIBFS_PATH_MAX], abs[LIBFS_PATH_MAX];
		const char *rel;
		if (o == m || !o->used || libfs_opt(o->opts, "over", over, sizeof over) != 1)
			continue;
		int layer = 0;
		for (int k = 0; libfs_layer_at(k) != NULL; k++)
			layer |= libfs_layer_at(k) == o->ops;
		if (layer && vfs_normalize(over, abs) == 0 && find_mount(abs, &rel) == m)
			return 1;
	}
	return 0;
}

int vfs_umount(const char *prefix)
{
	char abs[LIBFS_PATH_MAX];
	int r = vfs_normalize(prefix, abs);
	if (r < 0)
		return r;
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		struct mount *m = &mounts[i];
		if (!m->used || strcmp(m->prefix, abs) != 0)
			continue;
		if (m->nopen > 0 || m->pins > 0 || layered_over(m))
			return -EBUSY;
		r = do_unmount(m);
		m->used = 0;
		return r;
	}
	return -EINVAL;
}

/* Unmounting a layer releases its hold on the mount below, so layers go
 * first and the passes repeat until nothing more comes free. */
int vfs_release_idle(void)
{
	int first = 0, progress = 1;
	while (progress) {
		progress = 0;
		for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
			struct mount *m = &mounts[i];
			if (m->used && m->fs != NULL && m->nopen == 0 && m->pins == 0) {
				int r = do_unmount(m);
				if (r < 0 && first == 0)
					first = r;
				progress = 1;
			}
		}
	}
	return first;
}

/* Open files are found through the descriptor table above us; the VFS keeps
 * its own list only so that shutdown can close what the program left open.
 * Each file remembers its slot, and the search for a free one starts at the
 * lowest slot freed, so an open and a close cost O(1) when files are opened
 * and closed one at a time (a close used to scan the whole table: 11% of
 * creating a 1 KB lfs file). */
#define VFS_MAX_FILES 256
static struct vfile *files[VFS_MAX_FILES];
static int files_low;             /* no free slot below this one */

static int track(struct vfile *f)
{
	for (int i = files_low; i < VFS_MAX_FILES; i++)
		if (files[i] == NULL) {
			files[i] = f;
			f->slot = i;
			files_low = i + 1;
			return 0;
		}
	return -ENFILE;
}

static void untrack(struct vfile *f)
{
	if (files[f->slot] == f) {
		files[f->slot] = NULL;
		if (f->slot < files_low)
			files_low = f->slot;
	}
}

int vfs_shutdown(void)
{
	int first = 0;
	for (int i = 0; i < VFS_MAX_FILES; i++) {
		struct vfile *f = files[i];
		if (f == NULL)
			continue;
		f->refs = 1;
		int r = vfs_close(f);
		if (r < 0 && first == 0)
			first = r;
	}
	/* Layers before what they are mounted over (see vfs_release_idle);
	 * whatever is still held after that (a layer that failed to let go)
	 * is unmounted anyway in the last pass. */
	for (int pass = 0; pass <= VFS_MAX_MOUNTS; pass++) {
		for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
			struct mount *m = &mounts[i];
			if (!m->used || m->fs == NULL || (m->pins > 0 && pass < VFS_MAX_MOUNTS))
				continue;
			int r = do_unmount(m);
			if (r < 0 && first == 0)
				first = r;
		}
	}
	return first;
}

void vfs_abandon(void)
{
	for (int i = 0; i < VFS_MAX_FILES; i++) {
		struct vfile *f = files[i];
		if (f != NULL && f->m != NULL) {
			if (f->m->ops->forget != NULL)
				f->m->ops->forget(f->m->fs, f->fh);
			if (f->m->ops->file_size != 0)
				free(f->fh);
		}
		free(f);
		files[i] = NULL;
	}
	files_low = 0;
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		struct mount *m = &mounts[i];
		if (m->used && m->fs != NULL && m->ops->abandon != NULL)
			m->ops->abandon(m->fs);
		memset(m, 0, sizeof *m);
	}
}

int vfs_load_spec(const char *spec)
{
	char prefix[LIBFS_PATH_MAX], type[32], opts[VFS_SPEC_MAX];
	const char *p = spec;
	int first = 0;
	while (*p) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		const char *colon = eq ? memchr(eq, ':', n - (size_t)(eq - p)) : NULL;
		int r = -EINVAL;
		if (eq != NULL) {
			size_t pl = (size_t)(eq - p);
			size_t tl = colon ? (size_t)(colon - eq - 1) : n - pl - 1;
			size_t ol = colon ? n - (size_t)(colon - p) - 1 : 0;
			if (pl < sizeof prefix && tl < sizeof type && ol < sizeof opts) {
				memcpy(prefix, p, pl);
				prefix[pl] = 0;
				memcpy(type, eq + 1, tl);
				type[tl] = 0;
				memcpy(opts, colon ? colon + 1 : "", ol);
				opts[ol] = 0;
				r = vfs_mount(prefix, type, opts, 0);
			} else {
				r = -ENAMETOOLONG;
			}
		}
		if (r < 0 && first == 0)
			first = r;
		p += n;
		if (*p == ';')
			p++;
	}
	return first;
}

int vfs_spec(char *buf, size_t size)
{
	size_t len = 0;
	if (size == 0)
		return -ENAMETOOLONG;
	buf[0] = 0;
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		struct mount *m = &mounts[i];
		if (!m->used)
			continue;
		size_t need = (len ? 1 : 0) + m->plen + 1 + strlen(m->type) + 1 + strlen(m->opts);
		if (len + need + 1 > size)
			return -ENAMETOOLONG;
		if (len)
			buf[len++] = ';';
		memcpy(buf + len, m->prefix, m->plen);
		len += m->plen;
		buf[len++] = '=';
		memcpy(buf + len, m->type, strlen(m->type));
		len += strlen(m->type);
		buf[len++] = ':';
		memcpy(buf + len, m->opts, strlen(m->opts));
		len += strlen(m->opts);
		buf[len] = 0;
	}
	return (int)len;
}

int vfs_mount_info(int i, const char **prefix, const char **type, const char **opts, int *mounted)
{
	for (int k = 0; k < VFS_MAX_MOUNTS; k++) {
		if (!mounts[k].used)
			continue;
		if (i-- > 0)
			continue;
		*prefix = mounts[k].prefix;
		*type = mounts[k].type;
		*opts = mounts[k].opts;
		*mounted = mounts[k].fs != NULL;
		return 0;
	}
	return -ENOENT;
}

/* ---- layers ---------------------------------------------------------------- */

int vfs_pin(const char *path, struct vfs_lower *lo)
{
	char abs[LIBFS_PATH_MAX];
	struct mount *m;
	const char *rel;
	int r = resolve(path, abs, &m, &rel);
	if (r < 0)
		return r;
	lo->ops = m->ops;
	lo->fs = m->fs;
	strcpy(lo->path, rel);
	lo->hold = m;
	m->pins++;
	/* A layer's calls reach m: lock it too - or, when m has no lock of
	 * its own (another layer), what m locks; so a stack of layers takes
	 * only its file system's lock, not a call per layer (enter). */
	if (now_mounting != NULL && now_mounting != m)
		now_mounting->below = m->ops->enter != NULL ? m : m->below;
	return 0;
}

void vfs_unpin(struct vfs_lower *lo)
{
	struct mount *m = lo->hold;
	if (m != NULL && m->pins > 0)
		m->pins--;
	lo->hold = NULL;
}

/* ---- sharing --------------------------------------------------------------- */

/* Take the libFS's lock for one operation; `change`: it may change what
 * other processes see.  A layer calls the libFS below it directly, so a
 * layer's mount takes the lock of the one it is over, bottom first.
 *
 * A mount's `below` always has a lock of its own (vfs_pin skips the
 * layers in between), and the file systems that have one are over
 * nothing, so the usual case is one lock: the mount's own, or, for a
 * layer, its below's.  That case is a call, not a walk: a null layer
 * over unixfs paid a level of recursion here on each of its four calls
 * per small file read.  A mount with a lock of its own over another
 * (no such libFS today) takes both, bottom first. */
static void leave_all(struct mount *m);

static int enter_all(struct mount *m, int change)
{
	int r = m->below != NULL ? enter_all(m->below, change) : 0;
	if (r >= 0 && m->ops->enter != NULL && (r = m->ops->enter(m->fs, change)) < 0 &&
	    m->below != NULL)
		leave_all(m->below);
	return r < 0 ? r : 0;
}

static void leave_all(struct mount *m)
{
	if (m->ops->enter != NULL)
		m->ops->leave(m->fs);
	if (m->below != NULL)
		leave_all(m->below);
}

static inline int enter(struct mount *m, int change)
{
	struct mount *l = m->ops->enter != NULL ? m : m->below;
	if (l == NULL)
		return 0;
	if (l->below != NULL)
		return enter_all(l, change);
	int r = l->ops->enter(l->fs, change);
	return r < 0 ? r : 0;
}

static inline void leave(struct mount *m)
{
	struct mount *l = m->ops->enter != NULL ? m : m->below;
	if (l == NULL)
		return;
	if (l->below != NULL)
		leave_all(l);
	else
		l->ops->leave(l->fs);
}

/* r = call, inside enter/leave. */
#define SHARED(m, change, r, call) \
	do { if (((r) = enter((m), (change))) >= 0) { (r) = (call); leave(m); } } while (0)

/* ---- names ---------------------------------------------------------------- */

int vfs_stat(const char *path, struct libfs_stat *st)
{
	char abs[LIBFS_PATH_MAX];
	struct mount *m;
	const char *rel;
	int r = resolve(path, abs, &m, &rel);
	if (r < 0)
		return r;
	SHARED(m, 0, r, m->ops->stat(m->fs, rel, st));
	return r;
}

int vfs_unlink(const char *path)
{
	char abs[LIBFS_PATH_MAX];
	struct mount *m;
	const char *rel;
	int r = resolve(path, abs, &m, &rel);
	if (r < 0)
		return r;
	if (rel[0] == 0)
		return -EBUSY;            /* a mount point */
	SHARED(m, 1, r, m->ops->unlink(m->fs, rel));
	return r;
}

int vfs_rename(const char *from, const char *to)
{
	char a1[LIBFS_PATH_MAX], a2[LIBFS_PATH_MAX];
	struct mount *m1, *m2;
	const char *r1, *r2;
	int r = resolve(from, a1, &m1, &r1);
	if (r == 0)
		r = resolve(to, a2, &m2, &r2);
	if (r < 0)
		return r;
	if (m1 != m2)
		return -EXDEV;
	if (r1[0] == 0 || r2[0] == 0)
		return -EBUSY;
	if (m1->ops->rename == NULL)
		return -ENOTSUP;
	SHARED(m1, 1, r, m1->ops->rename(m1->fs, r1, r2));
	return r;
}

int vfs_mkdir(const char *path, uint32_t perm)
{
	char abs[LIBFS_PATH_MAX];
	struct mount *m;
	const char *rel;
	int r = resolve(path, abs, &m, &rel);
	if (r < 0)
		return r;
	if (rel[0] == 0)
		return -EEXIST;
	if (m->ops->mkdir == NULL)
		return -ENOTSUP;
	SHARED(m, 1, r, m->ops->mkdir(m->fs, rel, perm));
	return r;
}

int vfs_rmdir(const char *path)
{
	char abs[LIBFS_PATH_MAX];
	struct mount *m;
	const char *rel;
	int r = resolve(path, abs, &m, &rel);
	if (r < 0)
		return r;
	if (rel[0] == 0)
		return -EBUSY;
	if (m->ops->rmdir == NULL)
		return -ENOTSUP;
	SHARED(m, 1, r, m->ops->rmdir(m->fs, rel));
	return r;
}

int vfs_statfs(const char *path, struct libfs_statfs *st)
{
	char abs[LIBFS_PATH_MAX];
	struct mount *m;
	const char *rel;
	int r = resolve(path, abs, &m, &rel);
	if (r < 0)
		return r;
	memset(st, 0, sizeof *st);
	SHARED(m, 0, r, m->ops->statfs(m->fs, st));
	return r;
}

int vfs_sync(void)
{
	int first = 0;
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		struct mount *m = &mounts[i];
		/* A mount held by a layer is synced through it: every layer's
		 * sync reaches the one below (docs/stacking.md), and doing it
		 * again here would cost a flush per layer.  (One without a sync
		 * still has its own open files fsynced here: the layers fsync
		 * only theirs.) */
		if (!m->used || m->fs == NULL || (m->pins > 0 && m->ops->sync != NULL))
			continue;
		int r = enter(m, 1);
		if (r < 0) {
			first = first == 0 ? r : first;
			continue;
		}
		if (m->ops->sync != NULL) {
			r = m->ops->sync(m->fs);
		} else {
			/* A libFS whose state is its open files: fsync each. */
			for (int j = 0; j < VFS_MAX_FILES && r == 0; j++)
				if (files[j] != NULL && files[j]->m == m)
					r = m->ops->fsync(m->fs, files[j]->fh);
		}
		leave(m);
		if (r < 0 && first == 0)
			first = r;
	}
	return first;
}

/* ---- open files --------------------------------------------------------- */

int vfs_open(const char *path, int flags, uint32_t perm, struct vfile **fp)
{
	/* Zeroed but for the path (resolve writes it): a kilobyte of zeros per
	 * open was a twentieth of creating a small file. */
	struct vfile *f = malloc(sizeof *f);
	if (f == NULL)
		return -ENOMEM;
	memset(f, 0, offsetof(struct vfile, path));
	struct mount *m;
	const char *rel;
	int r = resolve(path, f->path, &m, &rel);
	if (r == 0 && (flags & LIBFS_O_TRUNC) && !(flags & LIBFS_O_WRITE))
		r = -EINVAL;
	if (r == 0)
		r = track(f);
	if (r < 0) {
		free(f);
		return r;
	}
	/* The libFS's state for the open file: ours to allocate and free if
	 * it says how large it is. */
	size_t fsz = m->ops->file_size;
	if (fsz != 0 && (f->fh = calloc(1, fsz)) == NULL)
		r = -ENOMEM;
	int held = r == 0 ? enter(m, (flags & (LIBFS_O_CREAT | LIBFS_O_TRUNC)) != 0) : -1;
	if (r == 0)
		r = held;
	if (r == 0)
		r = m->ops->open(m->fs, rel, flags & ~VFS_O_APPEND, perm, &f->fh);
	struct libfs_stat st;
	if (r == 0) {
		r = m->ops->fstat(m->fs, f->fh, &st);
		if (r < 0)
			m->ops->close(m->fs, f->fh);
	}
	if (held == 0)
		leave(m);
	if (r < 0) {
		if (fsz != 0)
			free(f->fh);
		untrack(f);
		free(f);
		return r;
	}
	f->m = m;
	f->flags = flags;
	f->refs = 1;
	f->isdir = st.type == LIBFS_T_DIR;
	m->nopen++;
	*fp = f;
	return 0;
}

void vfs_hold(struct vfile *f)
{
	f->refs++;
}

int vfs_close(struct vfile *f)
{
	if (--f->refs > 0)
		return 0;
	struct mount *m = f->m;
	int r;
	SHARED(m, 1, r, m->ops->close(m->fs, f->fh));
	if (m->ops->file_size != 0)
		free(f->fh);
	m->nopen--;
	untrack(f);
	free(f);
	return r;
}

long vfs_pread(struct vfile *f, void *buf, size_t n, uint64_t off)
{
	if (!(f->flags & LIBFS_O_READ))
		return -EBADF;
	if (f->isdir)
		return -EISDIR;
	if (off > INT64_MAX)
		return -EINVAL;
	if (n > (size_t)LONG_MAX)
		n = (size_t)LONG_MAX;
	long r;
	SHARED(f->m, 0, r, f->m->ops->read(f->m->fs, f->fh, buf, n, off));
	return r;
}

/* pwrite, the caller holding the libFS's lock if it is shared. */
static long pwrite_held(struct vfile *f, const void *buf, size_t n, uint64_t off)
{
	if (!(f->flags & LIBFS_O_WRITE))
		return -EBADF;
	if (off > INT64_MAX || n > (uint64_t)INT64_MAX - off)
		return -EFBIG;
	if (n > (size_t)LONG_MAX)
		n = (size_t)LONG_MAX;
	return f->m->ops->write(f->m->fs, f->fh, buf, n, off);
}

long vfs_pwrite(struct vfile *f, const void *buf, size_t n, uint64_t off)
{
	long r;
	SHARED(f->m, 1, r, pwrite_held(f, buf, n, off));
	return r;
}

long vfs_read(struct vfile *f, void *buf, size_t n)
{
	long r = vfs_pread(f, buf, n, f->off);
	if (r > 0)
		f->off += (uint64_t)r;
	return r;
}

long vfs_write(struct vfile *f, const void *buf, size_t n)
{
	/* An append finds the end and writes there in one hold of the lock,
	 * so appends from several processes never overwrite each other. */
	long r = enter(f->m, 1);
	if (r < 0)
		return r;
	if (f->flags & VFS_O_APPEND) {
		struct libfs_stat st;
		r = f->m->ops->fstat(f->m->fs, f->fh, &st);
		if (r == 0)
			f->off = st.size;
	}
	if (r == 0)
		r = pwrite_held(f, buf, n, f->off);
	leave(f->m);
	if (r > 0)
		f->off += (uint64_t)r;
	return r;
}

int64_t vfs_lseek(struct vfile *f, int64_t off, int whence)
{
	int64_t base;
	switch (whence) {
	case 0:
		base = 0;
		break;
	case 1:
		base = (int64_t)f->off;
		break;
	case 2: {
		struct libfs_stat st;
		int r = vfs_fstat(f, &st);
		if (r < 0)
			return r;
		base = (int64_t)st.size;
		break;
	}
	default:
		return -EINVAL;
	}
	if ((off > 0 && base > INT64_MAX - off) || base + off < 0)
		return -EINVAL;
	f->off = (uint64_t)(base + off);
	if (f->isdir && f->off == 0)
		vfs_rewinddir(f);
	return (int64_t)f->off;
}

int vfs_fstat(struct vfile *f, struct libfs_stat *st)
{
	int r;
	SHARED(f->m, 0, r, f->m->ops->fstat(f->m->fs, f->fh, st));
	return r;
}

int vfs_ftruncate(struct vfile *f, uint64_t len)
{
	if (!(f->flags & LIBFS_O_WRITE))
		return -EBADF;
	if (f->isdir)
		return -EISDIR;
	if (len > INT64_MAX)
		return -EFBIG;
	int r;
	SHARED(f->m, 1, r, f->m->ops->truncate(f->m->fs, f->fh, len));
	return r;
}

static int fsync_held(struct vfile *f)
{
	if (f->m->ops->fsync == NULL)
		return f->m->ops->sync != NULL ? f->m->ops->sync(f->m->fs) : 0;
	return f->m->ops->fsync(f->m->fs, f->fh);
}

int vfs_fsync(struct vfile *f)
{
	int r;
	SHARED(f->m, 1, r, fsync_held(f));
	return r;
}

int vfs_persist(struct vfile *f, int model)
{
	if (model < LIBFS_P_WRITEBACK || model > LIBFS_P_MEMORY)
		return -EINVAL;
	if (f->m->ops->persist == NULL)
		return model == LIBFS_P_WRITEBACK ? 0 : -ENOTSUP;
	int r;
	SHARED(f->m, 1, r, f->m->ops->persist(f->m->fs, f->fh, model));
	return r;
}

/* Is `name` a mount point directly below directory dir?  Its index or -1. */
static int child_mount(const char *dir, const char *name)
{
	size_t dl = strlen(dir) == 1 ? 0 : strlen(dir);
	for (int i = 0; i < VFS_MAX_MOUNTS; i++) {
		struct mount *m = &mounts[i];
		if (m->used && m->plen > dl + 1 && strncmp(m->prefix, dir, dl) == 0 &&
		    m->prefix[dl] == '/' && strcmp(m->prefix + dl + 1, name) == 0)
			return i;
	}
	return -1;
}

int vfs_readdir(struct vfile *f, struct libfs_dirent *de)
{
	if (!f->isdir)
		return -ENOTDIR;
	memset(de, 0, sizeof *de);
	for (;;) {
		switch (f->phase) {
		case 0:
		case 1:
			strcpy(de->name, f->phase == 0 ? "." : "..");
			de->type = LIBFS_T_DIR;
			f->phase++;
			return 1;
		case 2: {
			int r;
			SHARED(f->m, 0, r, f->m->ops->readdir(f->m->fs, f->fh, &f->cookie, de));
			if (r < 0)
				return r;
			if (r == 0) {
				f->phase = 3;
				continue;
			}
			int k = child_mount(f->path, de->name);
			if (k >= 0)
				f->seen |= 1u << k;
			return 1;
		}
		case 3:
			while (f->next_mount < VFS_MAX_MOUNTS) {
				int k = f->next_mount++;
				struct mount *m = &mounts[k];
				if (!m->used || (f->seen & (1u << k)))
					continue;
				const char *slash = strrchr(m->prefix, '/');
				if (slash == NULL || slash[1] == 0 || child_mount(f->path, slash + 1) != k)
					continue;
				strcpy(de->name, slash + 1);
				de->type = LIBFS_T_DIR;
				return 1;
			}
			f->phase = 4;
			return 0;
		default:
			return 0;
		}
	}
}

int vfs_rewinddir(struct vfile *f)
{
	if (!f->isdir)
		return -ENOTDIR;
	f->phase = 0;
	f->cookie = 0;
	f->next_mount = 0;
	f->seen = 0;
	return 0;
}
