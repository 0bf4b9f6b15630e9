/*
 * ops.c - lfs as a library file system: mounting, mkfs, paths, and the
 * operations of struct libfs_ops.
 *
 * Everything an operation changes stays in memory (inodes, directory
 * blocks, indirect blocks) or goes into the log's open partial segment
 * (file data) until a commit: fsync, sync, unmount, a full segment's worth
 * of changes, or O_SYNC.  A commit writes all of it as one group ending in
 * a commit record (log.c), so every operation - a rename across
 * directories included - reaches the disk whole or not at all, and after a
 * crash the file system is as of some commit: a prefix of the operations,
 * every fsync'd one included.
 *
 * The mount is the kit's (anchor found from the key); other processes
 * using the same lfs take turns through multi.c's shared lock; the
 * segments are the chunks of a virtual volume under the anchor
 * (libos/vvol), so they come from and go back to the exodisk's free space.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

void lfs_damaged(struct lfs *fs, const char *what, uint64_t where)
{
	if (!fs->rdonly)
		fprintf(stderr, "lfs: damaged: %s (%llu); now read-only (run fsck -t lfs)\n", what,
		        (unsigned long long)where);
	fs->rdonly = 1;
}

void lfs_damaged_at(struct lfs *fs, const char *what, uint32_t ino, uint64_t block)
{
	if (!fs->rdonly)
		fprintf(stderr, "lfs: damaged: %s (inode %u, block %llu); now read-only (run fsck -t lfs)\n",
		        what, ino, (unsigned long long)block);
	fs->rdonly = 1;
}

static int hook(struct kit *k)
{
	struct lfs *fs = k->fs;
	return lfs_harden(fs);
}

static void release(struct lfs *fs, int unlock)
{
	lfs_cp_abandon(fs);               /* (the kernel writes its words) */
	if (fs->buf[0].mem != NULL)
		lfs_log_wait(fs);         /* (and reads the buffers of writes in flight) */
	lfs_multi_detach(fs, unlock);     /* (while the state is still there) */
	lfs_share_free(fs, unlock);
	lfs_nodes_free(fs);
	lfs_imap_free(fs);
	lfs_sut_free(fs);
	lfs_log_free(fs);
	lfs_rc_free(fs);
	vvol_close(&fs->v);
	if (unlock && fs->k.locked)
		kit_unmount(&fs->k);
	free(fs);
}

void lfs_close_fs(struct lfs *fs)
{
	release(fs, 1);
}

/* The mount options (lfs.h). */
static int options(struct lfs *fs, const char *opts)
{
	uint64_t pool, cpkib, lo, hi, ac;
	char v[8];
	TRY(kit_opt_num(opts, "pool", 4, &pool));
	TRY(kit_opt_num(opts, "cpkib", 32768, &cpkib));
	TRY(kit_opt_num(opts, "cleanlo", 8, &lo));
	TRY(kit_opt_num(opts, "cleanhi", 16, &hi));    /* (checked, no longer used) */
	TRY(kit_opt_num(opts, "autoclean", 1, &ac));
	if (lo < 2 || hi < lo || cpkib < 64 || pool > 1024)
		return -EINVAL;
	fs->pool_target = (uint32_t)pool;
	fs->cp_interval = cpkib << 10;
	fs->clean_low = (uint32_t)lo;
	fs->autoclean = ac != 0;
	if (libfs_opt(opts, "ro", v, sizeof v) == 1)
		fs->rdonly = 1;
	return 0;
}

static int setup(struct lfs *fs)
{
	lfs_derive_keys(fs);
	fs->nonce = lfs_now() ^ ((uint64_t)(uintptr_t)fs << 20);
	TRY(lfs_sut_init(fs));
	return lfs_log_init(fs);
}

int lfs_open_fs(const char *opts, int create, struct lfs **out)
{
	(void)create;
	struct lfs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	int e = options(fs, opts);
	if (e == 0)
		e = lfs_multi_attach(fs, opts);      /* the kit, and the others (multi.c) */
	if (e < 0) {
		kit_say_unmountable(&fs->k, e);
		free(fs);
		return e;
	}
	fs->k.fs = fs;
	int64_t r = kit_xn_get(&fs->k, fs->k.anchor, 0, LFS_ENT_SUPER, &fs->sb, sizeof fs->sb);
	e = r < 0 ? kit_err(r) : r != sizeof fs->sb ? -EIO : 0;
	if (e == 0 && (fs->sb.magic != LFS_SB_MAGIC || fs->sb.version != LFS_VERSION ||
	               fs->sb.fsid != fs->k.a.fsid || fs->sb.seg_sect < VV_CHUNK_MIN ||
	               fs->sb.seg_sect > VV_CHUNK_MAX || (fs->sb.seg_sect & (fs->sb.seg_sect - 1)) ||
	               fs->sb.nsegs < 4 || fs->sb.nsegs > (1ull << 32) || fs->sb.cp_sect == 0 ||
	               fs->sb.cp_sect > 4096)) {
		fprintf(stderr, "lfs: the superblock is damaged: cannot mount\n");
		e = -EIO;
	}
	if (e == 0)
		e = vvol_open(&fs->v, &fs->k, LFS_ENT_VOL, 0);
	if (e == 0 && (fs->v.d.chunk != fs->sb.seg_sect || fs->v.nchunks < fs->sb.nsegs))
		e = -EIO;
	if (e == 0) {
		fs->v.readonly = fs->rdonly;
		fs->k.writeback = hook;
		e = setup(fs);
	}
	if (e == 0)
		e = lfs_load(fs);
	if (e < 0) {
		kit_say_unmountable(&fs->k, e);
		release(fs, 1);
		return e;
	}
	*out = fs;
	return 0;
}

int lfs_mount(const char *opts, struct lfs **fs)
{
	return lfs_open_fs(opts, 0, fs);
}

int lfs_unmount(struct lfs *fs)
{
	int e = lfs_multi_enter(fs, !fs->rdonly);
	if (e < 0) {
		release(fs, 1);
		return e;
	}
	e = fs->rdonly ? 0 : lfs_checkpoint(fs, 1);
	if (e == 0 && !fs->rdonly)
		e = lfs_harden(fs);
	if (e == 0)
		e = fs->err;              /* what changed since then is not written */
	release(fs, 1);
	return e;
}

/* ---- mkfs ---------------------------------------------------------------------------- */

int lfs_mkfs(const char *opts, uint64_t *sbp)
{
	struct lfs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	uint64_t segkib, nsegs, cp;
	int e = kit_opt_num(opts, "seg", 512, &segkib);
	if (e == 0)
		e = kit_opt_num(opts, "cp", 64, &cp);
	if (e == 0)
		e = options(fs, opts);
	if (e == 0 && (segkib < 64 || segkib > 1024 || (segkib & (segkib - 1)) || cp < 8 || cp > 4096))
		e = -EINVAL;
	if (e == 0)
		e = kit_mkfs(&fs->k, "lfs", opts, LFS_ANCHOR_LEN);
	uint32_t seg_sect = (uint32_t)(segkib * 2);
	if (e == 0)
		e = kit_opt_num(opts, "segs", fs->k.fm.nsectors / seg_sect + 64, &nsegs);
	if (e == 0 && (nsegs < 8 || nsegs > (1ull << 31)))
		e = -EINVAL;
	if (e < 0) {
		if (e == -EINVAL)
			fprintf(stderr, "lfs: mkfs: options are seg=KIB (64..1024, a power of two), "
			                "segs=N, cp=SECTORS (8..4096)\n");
		free(fs);
		return e;
	}
	fs->k.fs = fs;
	fs->k.writeback = hook;
	fs->sb.magic = LFS_SB_MAGIC;
	fs->sb.version = LFS_VERSION;
	fs->sb.fsid = fs->k.a.fsid;
	fs->sb.seg_sect = seg_sect;
	fs->sb.cp_sect = (uint32_t)cp;
	fs->sb.nsegs = nsegs;
	fs->sb.created = lfs_now();
	/* The checkpoint copies: two extents of the anchor. */
	for (int i = 0; i < 2 && e == 0; i++) {
		uint64_t start;
		int64_t n = kit_alloc_extent(&fs->k, fs->k.anchor, 0, LFS_ENT_CP + i, fs->k.anchor, cp, cp,
		                             &start);
		e = n < 0 ? (int)n : 0;
		fs->sb.cp_disk[i] = start;
	}
	if (e == 0) {
		int64_t r = kit_xn_put(&fs->k, fs->k.anchor, 0, LFS_ENT_SUPER, &fs->sb, sizeof fs->sb);
		e = r < 0 ? kit_err(r) : 0;
	}
	if (e == 0)
		e = vvol_make(&fs->v, &fs->k, LFS_ENT_VOL, nsegs * seg_sect, seg_sect, 0);
	if (e == 0)
		e = setup(fs);
	if (e == 0)
		e = lfs_format(fs);
	if (e == 0)
		e = kit_commit(&fs->k, fs->k.anchor, 0);
	if (e == 0)
		*sbp = fs->k.anchor;
	release(fs, 0);
	return e;
}

/* ---- paths ------------------------------------------------------------------------------- */

/* Walk from the root through the first `stop` bytes of path (components
 * separated by '/'): the directory or file they name, held. */
static int walk_to(struct lfs *fs, const char *path, size_t stop, struct lnode **out)
{
	/* The root stays in memory, held, from the first walk to the unmount:
	 * every walk starts there. */
	if (fs->root == NULL)
		TRY(lfs_get(fs, LFS_ROOT_INO, &fs->root));
	struct lnode *n = fs->root;
	lfs_hold(n);
	const char *p = path, *endp = path + stop;
	while (p < endp) {
		const char *name = p;
		const char *e = memchr(p, '/', (size_t)(endp - p));
		size_t len = e ? (size_t)(e - p) : (size_t)(endp - p);
		p = e ? e + 1 : endp;
		uint32_t ino, type;
		int r = n->d.type != LIBFS_T_DIR ? -ENOTDIR
		      : len > 255 ? -ENAMETOOLONG : lfs_dir_lookup(fs, n, name, len, &ino, &type);
		lfs_put(fs, n);
		if (r == 0)
			r = lfs_get(fs, ino, &n);
		if (r < 0)
			return r;
	}
	*out = n;
	return 0;
}

int lfs_walk(struct lfs *fs, const char *path, struct lnode **out)
{
	return walk_to(fs, path, strlen(path), out);
}

int lfs_walk_parent(struct lfs *fs, const char *path, struct lnode **dir, const char **name,
                    size_t *len)
{
	if (*path == 0)
		return -EINVAL;                 /* the root has no parent */
	/* The last '/', looked for from the end (strrchr scans the whole path,
	 * one strchr after another). */
	size_t plen = strlen(path), cut = plen;
	while (cut > 0 && path[cut - 1] != '/')
		cut--;
	struct lnode *d;
	TRY(walk_to(fs, path, cut > 0 ? cut - 1 : 0, &d));
	*name = path + cut;
	*len = plen - cut;
	if (d->d.type != LIBFS_T_DIR) {
		lfs_put(fs, d);
		return -ENOTDIR;
	}
	if (*len > 255) {
		lfs_put(fs, d);
		return -ENAMETOOLONG;
	}
	*dir = d;
	return 0;
}

/* Before a change: room for it in the log (and the file system writable). */
static int begin(struct lfs *fs, uint64_t bytes, int freeing)
{
	if (fs->rdonly)
		return -EROFS;
	/* One clock read for what the operation changes (end forgets it). */
	fs->optime = lfs_now();
	int e = lfs_autoclean(fs);
	if (e == 0)
		e = lfs_reserve(fs, bytes, freeing);
	if (e < 0)
		fs->optime = 0;
	return e;
}

/* After one: commit when LFS_COMMIT_SEGS segments' worth is waiting (or
 * an eighth of the room the log has left, on a small volume), so memory,
 * the room the commit needs and the work a crash can lose stay bounded.
 * Such a commit is not flushed on its own (lfs_commit_mode): durability
 * is what fsync and sync ask for; larger and fewer groups mean fewer
 * directory blocks written again and fewer flushes.  While the cleaner
 * runs (it cleaned within the last LFS_COMMIT_SEGS segments of writing),
 * the room left is small by design and each of its rounds commits
 * everything anyway (the round's checkpoint): commits of an eighth of it
 * came at every segment, each with its flush, a fifth of the cleaner
 * experiment's flushes at 80%, so they wait for the rounds - unless it
 * is the disk that is nearly full, not the volume: then the volume's map
 * changes are committed a few at a time, as the disk's own metadata has
 * little room (test_lfs full: a larger commit of the map ran out). */
#define LFS_COMMIT_SEGS 4
static int end(struct lfs *fs, int e)
{
	uint64_t sb = lfs_segbytes(fs), limit = LFS_COMMIT_SEGS * sb;
	uint64_t waiting = fs->pend + (uint64_t)fs->group * LFS_SECT * 64;
	int cleaning = fs->clean_keep != 0 && fs->st.new_bytes - fs->clean_at < limit &&
	               !fs->av_disk_short;
	if (e >= 0 && waiting > sb && waiting > limit / 4 && !cleaning) {
		uint64_t room = lfs_avail(fs) / 8;
		if (room < limit)
			limit = room > sb ? room : sb;
	}
	if (e >= 0 && waiting > limit) {
		int c = lfs_commit_mode(fs, 0);
		if (c < 0)
			e = c;
	}
	fs->optime = 0;
	return e;
}

/* ---- operations ------------------------------------------------------------------------------ */

static void fill_stat(struct lnode *n, struct libfs_stat *st)
{
	*st = (struct libfs_stat){
		.ino = n->ino,
		.type = n->d.type,
		.perm = n->d.perm,
		.nlink = n->d.nlink,
		.persist = LIBFS_P_WRITEBACK,
		.size = n->d.size,
		.blocks = (n->d.size + LFS_SECT - 1) / LFS_SECT + 1,
		.mtime = n->d.mtime,
		.ctime = n->d.ctime,
	};
}

static int o_mount(const char *opts, void **fsp)
{
	struct lfs *fs;
	TRY(lfs_open_fs(opts, 0, &fs));
	lfs_multi_mounted(fs);        /* the VFS takes the lock for each call */
	*fsp = fs;
	return 0;
}

static int o_unmount(void *p)
{
	return lfs_unmount(p);
}

static int o_sync(void *p)
{
	struct lfs *fs = p;
	if (fs->err)
		return fs->err;           /* changes since the last commit are lost */
	return fs->rdonly ? 0 : lfs_commit(fs);
}

static void o_abandon(void *p)
{
	release(p, 0);          /* the process dies: the lock goes with it */
}

static int o_statfs(void *p, struct libfs_statfs *st)
{
	struct lfs *fs = p;
	kit_statfs(&fs->k, st);
	uint64_t per = lfs_segbytes(fs) / st->bsize;
	st->bfree = lfs_free_segs(fs) * per;
	st->files = fs->nfiles;
	st->ffree = st->bfree;
	return 0;
}

static int o_stat(void *p, const char *path, struct libfs_stat *st)
{
	struct lfs *fs = p;
	struct lnode *n;
	TRY(lfs_walk(fs, path, &n));
	fill_stat(n, st);
	lfs_put(fs, n);
	return 0;
}

/* Take away one name of n (in d); frees it at the last. */
static void drop_name(struct lfs *fs, struct lnode *d, struct lnode *n)
{
	if (n->d.type == LIBFS_T_DIR) {
		n->d.nlink = 0;
		if (d->d.nlink > 2)
			d->d.nlink--;
		lfs_dirty(fs, d);
	} else if (n->d.nlink > 0) {
		n->d.nlink--;
	}
	if (n->d.nlink == 0)
		lfs_iunlink(fs, n);
	else
		lfs_dirty(fs, n);
}

static int remove_name(struct lfs *fs, const char *path, int dir)
{
	struct lnode *d, *n;
	const char *name;
	size_t len;
	if (*path == 0)
		return dir ? -EBUSY : -EISDIR;
	TRY(begin(fs, LFS_BSIZE, 1));
	int e = lfs_walk_parent(fs, path, &d, &name, &len);
	if (e < 0)
		return end(fs, e);
	uint32_t ino, type;
	e = lfs_dir_lookup(fs, d, name, len, &ino, &type);
	if (e == 0)
		e = lfs_get(fs, ino, &n);
	if (e < 0) {
		lfs_put(fs, d);
		return end(fs, e);
	}
	if (dir && n->d.type != LIBFS_T_DIR)
		e = -ENOTDIR;
	else if (!dir && n->d.type == LIBFS_T_DIR)
		e = -EISDIR;
	else if (dir && (e = lfs_dir_empty(fs, n)) == 0)
		e = -ENOTEMPTY;
	if (e >= 0)
		e = lfs_dir_remove(fs, d, name, len);
	if (e >= 0)
		drop_name(fs, d, n);
	lfs_put(fs, n);
	lfs_put(fs, d);
	return end(fs, e);
}

static int o_unlink(void *p, const char *path)
{
	return remove_name(p, path, 0);
}

static int o_rmdir(void *p, const char *path)
{
	return remove_name(p, path, 1);
}

static int o_mkdir(void *p, const char *path, uint32_t perm)
{
	struct lfs *fs = p;
	struct lnode *d, *n;
	const char *name;
	size_t len;
	if (*path == 0)
		return -EEXIST;
	TRY(begin(fs, 2 * LFS_BSIZE, 0));
	TRY(lfs_walk_parent(fs, path, &d, &name, &len));
	uint32_t ino, type;
	int e = lfs_dir_lookup(fs, d, name, len, &ino, &type);
	if (e == 0)
		e = -EEXIST;
	else if (e == -ENOENT)
		e = lfs_ialloc(fs, LIBFS_T_DIR, perm, &n);
	if (e == 0) {
		e = lfs_dir_init(fs, n);
		if (e == 0)
			e = lfs_dir_add(fs, d, name, len, n->ino, LIBFS_T_DIR);
		if (e == 0) {
			d->d.nlink++;
			lfs_dirty(fs, d);
		} else {
			lfs_iunlink(fs, n);
		}
		lfs_put(fs, n);
	}
	lfs_put(fs, d);
	return end(fs, e);
}

static int o_rename(void *p, const char *from, const char *to)
{
	struct lfs *fs = p;
	size_t fl = strlen(from);
	if (*from == 0 || *to == 0)
		return -EBUSY;
	if (strcmp(from, to) == 0) {
		struct libfs_stat st;
		return o_stat(fs, from, &st);
	}
	TRY(begin(fs, 3 * LFS_BSIZE, 0));
	struct lnode *sd, *dd, *n = NULL, *t = NULL;
	const char *sname, *dname;
	size_t slen, dlen;
	int e = lfs_walk_parent(fs, from, &sd, &sname, &slen);
	if (e < 0)
		return end(fs, e);
	e = lfs_walk_parent(fs, to, &dd, &dname, &dlen);
	if (e < 0) {
		lfs_put(fs, sd);
		return end(fs, e);
	}
	uint32_t ino, type, tino, ttype;
	e = lfs_dir_lookup(fs, sd, sname, slen, &ino, &type);
	if (e == 0)
		e = lfs_get(fs, ino, &n);
	/* A directory into itself. */
	if (e == 0 && type == LIBFS_T_DIR && strncmp(to, from, fl) == 0 && to[fl] == '/')
		e = -EINVAL;
	int exists = 0;
	if (e == 0) {
		int r = lfs_dir_lookup(fs, dd, dname, dlen, &tino, &ttype);
		if (r == 0)
			exists = 1;
		else if (r != -ENOENT)
			e = r;
	}
	if (e == 0 && exists && tino == ino)
		goto out;                       /* two names of one file: nothing to do */
	if (e == 0 && exists) {
		e = lfs_get(fs, tino, &t);
		if (e == 0 && type == LIBFS_T_DIR && t->d.type != LIBFS_T_DIR)
			e = -ENOTDIR;
		else if (e == 0 && type != LIBFS_T_DIR && t->d.type == LIBFS_T_DIR)
			e = -EISDIR;
		else if (e == 0 && t->d.type == LIBFS_T_DIR && (e = lfs_dir_empty(fs, t)) == 0)
			e = -ENOTEMPTY;
		if (e > 0)
			e = 0;
		if (e == 0)
			e = lfs_dir_replace(fs, dd, dname, dlen, ino, type);
		if (e == 0)
			drop_name(fs, dd, t);
	} else if (e == 0) {
		e = lfs_dir_add(fs, dd, dname, dlen, ino, type);
	}
	if (e == 0)
		e = lfs_dir_remove(fs, sd, sname, slen);
	if (e == 0 && type == LIBFS_T_DIR && sd != dd) {
		if (sd->d.nlink > 2)
			sd->d.nlink--;
		dd->d.nlink++;
		lfs_dirty(fs, sd);
		lfs_dirty(fs, dd);
	}
	if (e == 0) {
		n->d.ctime = lfs_optime(fs);
		lfs_dirty(fs, n);
	}
out:
	if (t)
		lfs_put(fs, t);
	if (n)
		lfs_put(fs, n);
	lfs_put(fs, sd);
	lfs_put(fs, dd);
	return end(fs, e);
}

static int o_open(void *p, const char *path, int flags, uint32_t perm, void **file)
{
	struct lfs *fs = p;
	struct lfile *f = *file;
	struct lnode *n, *d = NULL;
	const char *name;
	size_t len;
	uint32_t hash = 0;
	int e;
	/* One walk: to the parent, then its last name (not a walk of the whole
	 * path and, to create, another of the parent's: a fifth of creating a
	 * small file was walking). */
	if (*path == 0) {
		e = lfs_walk(fs, path, &n);
	} else {
		TRY(lfs_walk_parent(fs, path, &d, &name, &len));
		uint32_t ino, type;
		e = lfs_dir_lookup_hashed(fs, d, name, len, &ino, &type, &hash);
		if (e == 0)
			e = lfs_get(fs, ino, &n);
	}
	if (e == -ENOENT && d != NULL && (flags & LIBFS_O_CREAT) && !(flags & LIBFS_O_DIR)) {
		/* Held across begin: cleaning moves blocks, never names. */
		e = begin(fs, LFS_BSIZE, 0);
		if (e == 0) {
			e = lfs_ialloc(fs, LIBFS_T_REG, perm, &n);
			if (e == 0 && (e = lfs_dir_add_hashed(fs, d, name, len, n->ino, LIBFS_T_REG, hash)) < 0) {
				lfs_iunlink(fs, n);
				lfs_put(fs, n);
			}
			lfs_put(fs, d);
			TRY(end(fs, e));
		} else {
			lfs_put(fs, d);
			return e;
		}
	} else {
		if (d != NULL)
			lfs_put(fs, d);
		if (e < 0)
			return e;
		if ((flags & LIBFS_O_CREAT) && (flags & LIBFS_O_EXCL))
			e = -EEXIST;
		else if ((flags & LIBFS_O_DIR) && n->d.type != LIBFS_T_DIR)
			e = -ENOTDIR;
		else if ((flags & LIBFS_O_WRITE) && n->d.type == LIBFS_T_DIR)
			e = -EISDIR;
		else if ((flags & LIBFS_O_WRITE) && fs->rdonly)
			e = -EROFS;
		else if ((flags & LIBFS_O_TRUNC) && (flags & LIBFS_O_WRITE) && n->d.size > 0 &&
		         (e = begin(fs, LFS_BSIZE, 1)) == 0)
			e = end(fs, lfs_ftrunc(fs, n, 0));
		if (e < 0) {
			lfs_put(fs, n);
			return e;
		}
	}
	f->n = n;
	f->flags = flags;
	return 0;
}

static int o_close(void *p, void *file)
{
	struct lfs *fs = p;
	struct lfile *f = file;
	lfs_put(fs, f->n);
	return 0;
}

static long o_read(void *p, void *file, void *buf, size_t n, uint64_t off)
{
	struct lfile *f = file;
	return lfs_fread(p, f->n, buf, n, off);
}

static long o_write(void *p, void *file, const void *buf, size_t n, uint64_t off)
{
	struct lfs *fs = p;
	struct lfile *f = file;
	long done = 0;
	if (f->n->gone)
		return (long)n;              /* removed by another process (multi.c) */
	/* A segment at a time, so that a large write can be cleaned for. */
	while ((size_t)done < n) {
		size_t m = n - (size_t)done;
		if (m > lfs_segbytes(fs))
			m = (size_t)lfs_segbytes(fs);
		int e = begin(fs, m + (m / LFS_BSIZE + 2) * 16, 0);
		long r = e < 0 ? e : lfs_fwrite(fs, f->n, (const uint8_t *)buf + done, m, off + (uint64_t)done);
		if ((e = end(fs, r < 0 ? -1 : 0)) < 0 && r >= 0)
			r = e;
		if (r < 0)
			return done ? done : r;
		done += r;
	}
	if (f->flags & LIBFS_O_SYNC) {
		int e = lfs_commit(fs);
		if (e < 0)
			return e;
	}
	return done;
}

static int o_fstat(void *p, void *file, struct libfs_stat *st)
{
	(void)p;
	struct lfile *f = file;
	fill_stat(f->n, st);
	return 0;
}

static int o_truncate(void *p, void *file, uint64_t len)
{
	struct lfs *fs = p;
	struct lfile *f = file;
	if (f->n->gone)
		return 0;
	TRY(begin(fs, 2 * LFS_BSIZE, len < f->n->d.size));
	int e = end(fs, lfs_ftrunc(fs, f->n, len));
	if (e == 0 && (f->flags & LIBFS_O_SYNC))
		e = lfs_commit(fs);
	return e;
}

static int o_fsync(void *p, void *file)
{
	(void)file;
	return o_sync(p);
}

static int o_readdir(void *p, void *dir, uint64_t *cookie, struct libfs_dirent *de)
{
	struct lfile *f = dir;
	return f->n->gone ? 0 : lfs_dir_next(p, f->n, cookie, de);
}

static int o_fsck(const char *opts, struct libfs_fsck *ck)
{
	return lfs_fsck(opts, ck);
}

const struct libfs_ops lfs_ops = {
	.name = "lfs",
	.features = LIBFS_F_DIRS | LIBFS_F_RENAME,
	.name_max = 255,
	.file_max = LFS_MAXFILE,
	.mkfs = lfs_mkfs,
	.fsck = o_fsck,
	.mount = o_mount,
	.unmount = o_unmount,
	.sync = o_sync,
	.statfs = o_statfs,
	.stat = o_stat,
	.unlink = o_unlink,
	.rename = o_rename,
	.mkdir = o_mkdir,
	.rmdir = o_rmdir,
	.open = o_open,
	.close = o_close,
	.read = o_read,
	.write = o_write,
	.fstat = o_fstat,
	.truncate = o_truncate,
	.fsync = o_fsync,
	.readdir = o_readdir,
	.abandon = o_abandon,
	.enter = lfs_multi_enter,
	.leave = lfs_multi_leave,
	.file_size = sizeof(struct lfile),
};
