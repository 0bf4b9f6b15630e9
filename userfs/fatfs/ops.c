/*
 * ops.c - fatfs as a library file system: struct libfs_ops over the
 * pieces in the other files, mounting (the kit finds the anchor and takes
 * the lock, the virtual volume opens under it, boot.c reads the FAT), and
 * making one (fatfs_mkfs: anchor, volume, fat_format).
 *
 * Also the same file system over a plain image in memory
 * (fatfs_mount_image), which the host tools and tests use to run exactly
 * this code on a FAT image made by mkfs.fat, and the raw volume access
 * tools/exotool's fat-import and fat-export need (fatfs_vol_*).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fat.h"

#define ANCHOR_LEN  480               /* the anchor: kit record, volume descriptor, root */
#define VOL_ENT     1                 /* the anchor entries the volume takes: 1 and 2    */

int fat_quiet;

void fat_say(const char *fmt, ...)
{
	if (fat_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int fat_damaged(struct fatfs *fs, const char *what, uint32_t where)
{
	if (!fs->broken)
		fat_say("fatfs: damaged volume: %s %u; now read-only (run fsck -t fatfs)", what, where);
	fs->broken = 1;
	if (!fs->ro) {
		/* What is written so far is consistent enough to keep; nothing
		 * more goes out. */
		fs->ro = 1;
		fs->vol.readonly = 1;
	}
	return -EIO;
}

static int hook(struct kit *k)
{
	struct fatfs *fs = k->fs;
	return vvol_harden(&fs->vol);
}

int fat_mount_vol(struct fatfs *fs, const char *opts)
{
	char v[8];
	if (libfs_opt(opts, "ro", v, sizeof v) == 1) {
		fs->ro = 1;
		fs->ro_asked = 1;
		fs->vol.readonly = 1;
	}
	int e = fat_boot(fs);
	if (e == 0)
		e = fat_ck_open(fs, libfs_opt(opts, "ckfsck", v, sizeof v) == 1);
	if (e == 0)
		e = fat_dir_root(fs);
	if (e == 0 && libfs_opt(opts, "check", v, sizeof v) == 1) {
		struct fatfs_stats st;
		if (fat_fsck_vol(fs, 0, NULL, NULL, &st) < 0 || st.problems > 0) {
			fat_say("fatfs: the check found %llu problem%s: mounted read-only",
			        (unsigned long long)st.problems, st.problems == 1 ? "" : "s");
			fs->ro = 1;
			fs->vol.readonly = 1;
		}
	}
	return e;
}

void fat_release(struct fatfs *fs)
{
	fat_files_free(fs);
	fat_dirs_free(fs);
	free(fs->pending.v);
	free(fs->cuts.v);
	free(fs->freed.v);
	free(fs->newdir.v);
	free(fs->ck_unsealed.v);
	vvol_close(&fs->vol);
	if (fs->kit_mounted)
		kit_unmount(&fs->kit);
	free(fs);
}

static int fo_mount(const char *opts, void **fsp)
{
	struct fatfs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	/* By default the cache may grow to a quarter of the free memory, so a
	 * large file read at random ends up held whole (file.c: read-around). */
	uint64_t mib;
	int e = kit_opt_num(opts, "cache", 0, &mib);
	fs->cache = mib ? (size_t)mib << 20 : vvol_cache_auto();
	/* The kit opens the unit and key and finds the anchor; share.c joins
	 * the other processes using the volume and takes the lock. */
	if (e == 0)
		e = kit_open(&fs->kit, "fatfs", opts);
	if (e == 0)
		e = kit_anchor_find(&fs->kit, opts);
	if (e < 0) {
		kit_say_unmountable(&fs->kit, e);
		free(fs);
		return e;
	}
	fs->kit_mounted = 1;
	fs->kit.fs = fs;
	fs->kit.writeback = hook;
	/* fsck's own mount keeps the lock until its unmount: the volume holds
	 * still while it is checked. */
	char v[8];
	fs->sh_hold = libfs_opt(opts, "ckfsck", v, sizeof v) == 1;
	e = vvol_open(&fs->vol, &fs->kit, VOL_ENT, fs->cache);
	if (e == -EIO)
		fat_say("fatfs: the virtual volume's map is damaged");
	if (e == 0)
		e = fat_share_attach(fs, opts);
	if (e < 0) {
		kit_say_unmountable(&fs->kit, e);
		fat_release(fs);
		return e;
	}
	e = fat_mount_vol(fs, opts);
	if (e < 0) {
		kit_say_unmountable(&fs->kit, e);
		fat_share_detach(fs);
		fat_release(fs);
		return e;
	}
	fat_share_mounted(fs);        /* the VFS takes the lock for each call */
	*fsp = fs;
	return 0;
}

int fatfs_mount_image(uint8_t *img, uint64_t nsectors, const char *opts, void **fsp)
{
	struct fatfs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	fs->cache = 4u << 20;
	int e = vvol_open_image(&fs->vol, img, nsectors, fs->cache);
	if (e == 0)
		e = fat_mount_vol(fs, opts);
	if (e < 0) {
		fat_release(fs);
		return e;
	}
	*fsp = fs;
	return 0;
}

static int fo_sync(void *p)
{
	return fat_sync(p);
}

static int fo_unmount(void *p)
{
	struct fatfs *fs = p;
	int e = fat_share_enter(fs, !fs->ro);
	if (e == 0)
		e = fat_share_leaving(fs);
	if (e == 0)
		e = fat_sync(fs);
	/* Closed cleanly only by the last one out (others still have it
	 * open, and their changes are not all durable). */
	if (e == 0 && fat_share_users(fs) <= 1)
		e = fat_ck_close(fs);
	fat_share_detach(fs);
	fat_release(fs);
	return e;
}

static void fo_abandon(void *p)
{
	struct fatfs *fs = p;
	fat_share_abandon(fs);
	fs->kit_mounted = 0;       /* the process dies: the lock goes with it */
	fat_release(fs);
}

/* A dying process's open file: only the handle is freed here; the files
 * and directories it holds go with the mount (fo_abandon). */
static void fo_forget(void *p, void *file)
{
	(void)p;
	free(file);
}

static int fo_statfs(void *p, struct libfs_statfs *st)
{
	struct fatfs *fs = p;
	uint32_t nfree;
	int e = fat_count_free(fs, &nfree);
	if (e < 0)
		return e;
	snprintf(st->type, sizeof st->type, "fatfs");
	st->bsize = fs->csize;
	st->blocks = fs->nclusters;
	st->bfree = nfree;
	st->files = 0;
	st->ffree = 0;
	return 0;
}

/* A libfs_stat from a short entry. */
static void fill_stat(struct fatfs *fs, const uint8_t *ent, uint64_t ino, uint32_t size,
                      uint32_t clusters, struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	int dir = ent[DIR_ATTR] & ATTR_DIR;
	st->ino = ino;
	st->type = dir ? LIBFS_T_DIR : LIBFS_T_REG;
	st->perm = dir ? 0755 : (ent[DIR_ATTR] & ATTR_RO) ? 0444 : 0644;
	st->nlink = dir ? 2 : 1;
	st->size = dir ? 0 : size;
	st->blocks = (uint64_t)clusters * fs->spc;
	st->mtime = fat_dos_ns(le16(ent + DIR_WRTDATE), le16(ent + DIR_WRTTIME), 0);
	st->ctime = fat_dos_ns(le16(ent + DIR_CRTDATE), le16(ent + DIR_CRTTIME),
	                       ent[DIR_CRTTIMETENTH]);
}

static void root_stat(struct fatfs *fs, struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	st->ino = 1;
	st->type = LIBFS_T_DIR;
	st->perm = 0755;
	st->nlink = 2;
	st->blocks = fs->type == 32 ? (uint64_t)fs->root->ch.len * fs->spc : fs->rootnsec;
}

static int fo_stat(void *p, const char *path, struct libfs_stat *st)
{
	struct fatfs *fs = p;
	if (path[0] == 0) {
		root_stat(fs, st);
		return 0;
	}
	struct fdir *d;
	int i;
	const char *last;
	int e = fat_walk(fs, path, &d, &i, &last);
	if (e < 0)
		return e;
	if (i < 0) {
		fat_dir_put(fs, d);
		return -ENOENT;
	}
	uint8_t ent[DIRENT];
	e = fat_dir_read(fs, d, i, ent);
	if (e == 0) {
		struct ffile *f = fat_file_find(fs, d, d->e[i].slot);
		uint32_t size = f ? f->size : le32(ent + DIR_FILESIZE);
		uint32_t clusters = f ? f->ch.len : (size + fs->csize - 1) / fs->csize;
		fill_stat(fs, ent, fat_ino(d, d->e[i].slot), size, clusters, st);
	}
	fat_dir_put(fs, d);
	return e;
}

static int make_entry(struct fatfs *fs, struct fdir *d, const char *name, uint8_t attr,
                      uint32_t first, int *idx)
{
	uint8_t ent[DIRENT];
	uint16_t date, time;
	uint8_t tenth;
	memset(ent, 0, sizeof ent);
	fat_now(&date, &time, &tenth);
	ent[DIR_ATTR] = attr;
	ent[DIR_CRTTIMETENTH] = tenth;
	put16(ent + DIR_CRTTIME, time);
	put16(ent + DIR_CRTDATE, date);
	put16(ent + DIR_LSTACCDATE, date);
	put16(ent + DIR_WRTTIME, time);
	put16(ent + DIR_WRTDATE, date);
	dir_set_first(ent, first);
	return fat_dir_add(fs, d, name, ent, idx);
}

static int fo_open(void *p, const char *path, int flags, uint32_t perm, void **file)
{
	struct fatfs *fs = p;
	(void)perm;
	struct fhandle *h = calloc(1, sizeof *h);
	if (h == NULL)
		return -ENOMEM;
	h->flags = flags;
	int e = 0;
	if (path[0] == 0) {
		h->isdir = 1;
		h->d = fs->root;
		fs->root->refs++;
		e = flags & LIBFS_O_WRITE ? -EISDIR : 0;
		if (e < 0)
			fat_dir_put(fs, fs->root);
	} else {
		struct fdir *d = NULL;
		int i;
		const char *last;
		e = fat_walk(fs, path, &d, &i, &last);
		if (e < 0)
			d = NULL;
		if (e == 0 && i < 0) {
			if (!(flags & LIBFS_O_CREAT) || (flags & LIBFS_O_DIR))
				e = -ENOENT;
			else if (fs->ro)
				e = -EROFS;
			else if ((e = fat_relieve(fs)) == 0)
				e = make_entry(fs, d, last, ATTR_ARCH, 0, &i);
		} else if (e == 0 && (flags & LIBFS_O_CREAT) && (flags & LIBFS_O_EXCL)) {
			e = -EEXIST;
		}
		if (e == 0 && (d->e[i].attr & ATTR_DIR)) {
			if (flags & LIBFS_O_WRITE) {
				e = -EISDIR;
			} else {
				uint8_t ent[DIRENT];
				e = fat_dir_read(fs, d, i, ent);
				if (e == 0)
					e = fat_dir_get(fs, dir_first(ent), fat_ino(d, d->e[i].slot), &h->d);
				h->isdir = 1;
			}
		} else if (e == 0) {
			if (flags & LIBFS_O_DIR)
				e = -ENOTDIR;
			else if ((flags & LIBFS_O_WRITE) && fs->ro)
				e = -EROFS;
			else if ((flags & LIBFS_O_WRITE) && (d->e[i].attr & ATTR_RO))
				e = -EACCES;
			if (e == 0)
				e = fat_file_open(fs, d, i, &h->f);
			if (e == 0 && (flags & LIBFS_O_TRUNC) && h->f->size > 0) {
				e = fat_file_truncate(fs, h->f, 0);
				if (e < 0)
					fat_file_close(fs, h->f);
			}
		}
		if (d != NULL)
			fat_dir_put(fs, d);
	}
	if (e < 0) {
		free(h);
		return e;
	}
	*file = h;
	return 0;
}

static int fo_close(void *p, void *file)
{
	struct fatfs *fs = p;
	struct fhandle *h = file;
	int e = 0;
	if (h->isdir)
		fat_dir_put(fs, h->d);
	else
		e = fat_file_close(fs, h->f);
	if (e == 0 && !h->isdir && (h->flags & LIBFS_O_SYNC))
		e = fat_sync(fs);
	free(h);
	return e;
}

static long fo_read(void *p, void *file, void *buf, size_t n, uint64_t off)
{
	struct fhandle *h = file;
	return h->isdir ? -EISDIR : fat_file_read(p, h->f, buf, n, off);
}

static long fo_write(void *p, void *file, const void *buf, size_t n, uint64_t off)
{
	struct fhandle *h = file;
	if (h->isdir)
		return -EISDIR;
	long r = fat_file_write(p, h->f, buf, n, off);
	if (r >= 0 && (h->flags & LIBFS_O_SYNC)) {
		int e = fat_sync(p);
		if (e < 0)
			return e;
	}
	return r;
}

static int fo_fstat(void *p, void *file, struct libfs_stat *st)
{
	struct fatfs *fs = p;
	struct fhandle *h = file;
	if (h->isdir) {
		if (h->d == fs->root) {
			root_stat(fs, st);
		} else {
			memset(st, 0, sizeof *st);
			st->ino = h->d->ino;
			st->type = LIBFS_T_DIR;
			st->perm = 0755;
			st->nlink = 2;
			st->blocks = (uint64_t)h->d->ch.len * fs->spc;
		}
		return 0;
	}
	struct ffile *f = h->f;
	uint8_t ent[DIRENT];
	memset(ent, 0, sizeof ent);
	if (!f->unlinked) {
		int e;
		const uint8_t *x = fat_dir_entry(fs, f->dir, f->slot, &e);
		if (x == NULL)
			return e;
		memcpy(ent, x, DIRENT);
		fat_dir_done(fs, f->dir, f->slot, 0);
	}
	ent[DIR_ATTR] = f->attr;
	fill_stat(fs, ent, fat_ino(f->dir, f->slot), f->size, f->ch.len, st);
	return 0;
}

static int fo_truncate(void *p, void *file, uint64_t len)
{
	struct fhandle *h = file;
	return h->isdir ? -EISDIR : fat_file_truncate(p, h->f, len);
}

static int fo_fsync(void *p, void *file)
{
	(void)file;
	return fat_sync(p);
}

static int fo_readdir(void *p, void *dir, uint64_t *cookie, struct libfs_dirent *de)
{
	struct fatfs *fs = p;
	struct fhandle *h = dir;
	if (!h->isdir)
		return -ENOTDIR;
	char name[LFN_MAX * 3 + 1];
	uint8_t ent[DIRENT];
	uint32_t slot;
	int r = fat_dir_next(fs, h->d, cookie, name, ent, &slot);
	if (r <= 0)
		return r;
	memset(de, 0, sizeof *de);
	de->ino = fat_ino(h->d, slot);
	de->type = ent[DIR_ATTR] & ATTR_DIR ? LIBFS_T_DIR : LIBFS_T_REG;
	/* A long name longer than a path component may be (255 characters of
	 * up to three bytes each) is listed by its short name, which opens it. */
	if (strlen(name) > LIBFS_NAME_MAX)
		fat_sfn_show(ent, ent[DIR_NTRES], name);
	memcpy(de->name, name, strlen(name) + 1);
	return 1;
}

/* Look path up for removing it: its directory (referenced) and index. */
static int find_existing(struct fatfs *fs, const char *path, struct fdir **d, int *i)
{
	if (path[0] == 0)
		return -EBUSY;
	const char *last;
	int e = fat_walk(fs, path, d, i, &last);
	if (e == 0 && *i < 0) {
		fat_dir_put(fs, *d);
		e = -ENOENT;
	}
	if (e == 0 && fs->ro) {
		fat_dir_put(fs, *d);
		e = -EROFS;
	}
	return e;
}

/* Remove a file's name; its chain goes at the next sync (or at its last
 * close, if it is open). */
static int drop_file(struct fatfs *fs, struct fdir *d, int i)
{
	uint8_t ent[DIRENT];
	int e = fat_dir_read(fs, d, i, ent);
	if (e < 0)
		return e;
	struct ffile *f = fat_file_find(fs, d, d->e[i].slot);
	if ((e = fat_dir_remove(fs, d, i)) < 0)
		return e;
	if (f != NULL) {
		f->unlinked = 1;
		fat_share_orphan(fs, 1);
	} else
		e = fat_free_later(fs, dir_first(ent));
	return e;
}

static int fo_unlink(void *p, const char *path)
{
	struct fatfs *fs = p;
	struct fdir *d;
	int i;
	int e = find_existing(fs, path, &d, &i);
	if (e < 0)
		return e;
	e = d->e[i].attr & ATTR_DIR ? -EISDIR : drop_file(fs, d, i);
	fat_dir_put(fs, d);
	return e;
}

static int fo_mkdir(void *p, const char *path, uint32_t perm)
{
	struct fatfs *fs = p;
	(void)perm;
	if (path[0] == 0)
		return -EEXIST;
	struct fdir *d;
	int i;
	const char *last;
	int e = fat_walk(fs, path, &d, &i, &last);
	if (e < 0)
		return e;
	uint32_t first = 0;
	if (i >= 0)
		e = -EEXIST;
	else if (fs->ro)
		e = -EROFS;
	else if ((e = fat_relieve(fs)) == 0) {
		/* Check the name before taking a cluster for it. */
		uint16_t u[LFN_MAX + 1];
		e = fat_name_ucs2(last, u);
		if (e > 0)
			e = fat_dir_make(fs, d, &first);
		if (e == 0)
			e = make_entry(fs, d, last, ATTR_DIR, first, &i);
		if (e < 0 && first)
			fat_free_later(fs, first);
	}
	fat_dir_put(fs, d);
	return e;
}

/* Remove an empty directory's entry; its cluster(s) go at the next sync. */
static int drop_dir(struct fatfs *fs, struct fdir *d, int i)
{
	uint8_t ent[DIRENT];
	int e = fat_dir_read(fs, d, i, ent);
	if (e < 0)
		return e;
	uint32_t first = dir_first(ent);
	struct fdir *sub;
	if ((e = fat_dir_get(fs, first, 0, &sub)) < 0)
		return e;
	int empty = fat_dir_empty(fs, sub);
	int busy = sub->refs > 1;
	fat_dir_put(fs, sub);
	if (empty < 0)
		return empty;
	if (!empty)
		return -ENOTEMPTY;
	if (busy)
		return -EBUSY;
	if ((e = fat_dir_remove(fs, d, i)) < 0)
		return e;
	fat_dir_forget(fs, first);
	return fat_free_later(fs, first);
}

static int fo_rmdir(void *p, const char *path)
{
	struct fatfs *fs = p;
	struct fdir *d;
	int i;
	int e = find_existing(fs, path, &d, &i);
	if (e < 0)
		return e;
	e = !(d->e[i].attr & ATTR_DIR) ? -ENOTDIR : drop_dir(fs, d, i);
	fat_dir_put(fs, d);
	return e;
}

static int fo_rename(void *p, const char *from, const char *to)
{
	struct fatfs *fs = p;
	if (from[0] == 0 || to[0] == 0)
		return -EBUSY;
	size_t fl = strlen(from);
	if (strncmp(to, from, fl) == 0 && to[fl] == '/')
		return -EINVAL;           /* a directory into itself */
	struct fdir *d1, *d2;
	int i1, i2;
	const char *last1, *last2;
	int e = fat_walk(fs, from, &d1, &i1, &last1);
	if (e < 0)
		return e;
	if (i1 < 0) {
		fat_dir_put(fs, d1);
		return -ENOENT;
	}
	if ((e = fat_walk(fs, to, &d2, &i2, &last2)) < 0) {
		fat_dir_put(fs, d1);
		return e;
	}
	uint8_t ent[DIRENT];
	int isdir = d1->e[i1].attr & ATTR_DIR;
	if (fs->ro)
		e = -EROFS;
	else if (d1 == d2 && i1 == i2 && strcmp(d1->e[i1].name, last2) == 0)
		e = 1;                    /* the same name: nothing to do */
	else if (i2 >= 0 && !(d1 == d2 && i1 == i2)) {
		/* Replacing: a file by a file, an empty directory by a directory. */
		int todir = d2->e[i2].attr & ATTR_DIR;
		if (isdir && !todir)
			e = -ENOTDIR;
		else if (!isdir && todir)
			e = -EISDIR;
		else
			e = todir ? drop_dir(fs, d2, i2) : drop_file(fs, d2, i2);
	}
	if (e == 0)
		e = fat_dir_read(fs, d1, i1, ent);
	uint32_t oldslot = e == 0 ? d1->e[i1].slot : 0;
	uint32_t oldfirst = e == 0 ? oldslot - d1->e[i1].nlfn : 0;   /* its long name's */
	int ni = -1;
	/* The new name, durably, and only then the old one goes: a crash in
	 * between leaves both names on one chain (fsck.fat cuts the second one
	 * in the directory to nothing, the first keeps the data), never
	 * neither.  FAT cannot change two entries at once; this keeps the
	 * data.  A process that dies in between is another matter: the rename
	 * must be whole for the processes sharing the volume, so the sync's
	 * journal shows the directories without the old name, and it stays
	 * there (with the ".." of a directory moved) until the next sync: a
	 * writer after a death finishes the rename (share.c). */
	if (e == 0)
		e = fat_dir_add(fs, d2, last2, ent, &ni);
	if (e == 0) {
		fat_share_unname(fs, d1, oldfirst, oldslot);
		e = fat_sync(fs);
		fat_share_unname(fs, NULL, 0, 0);
	}
	if (e == 0)
		e = fat_dir_remove(fs, d1, i1);
	if (e == 0 && isdir && d1 != d2) {
		/* Its ".." now names the new parent. */
		struct fdir *sub;
		if ((e = fat_dir_get(fs, dir_first(ent), 0, &sub)) == 0) {
			uint8_t *x = fat_dir_entry(fs, sub, 1, &e);
			if (x != NULL) {
				if (memcmp(x, "..         ", 11) == 0)
					dir_set_first(x, d2->root ? 0 : d2->first);
				fat_dir_done(fs, sub, 1, 1);
			}
			fat_dir_put(fs, sub);
		}
	}
	if (e == 0)
		fat_share_journal(fs, 1);
	if (e == 0 && !isdir) {
		struct ffile *f = fat_file_find(fs, d1, oldslot);
		if (f != NULL) {
			f->slot = d2->e[ni].slot;
			memcpy(f->sfn, d2->e[ni].sfn, 11);
			if (f->dir != d2) {
				d2->refs++;
				fat_dir_put(fs, f->dir);
				f->dir = d2;
			}
		}
	}
	fat_dir_put(fs, d1);
	fat_dir_put(fs, d2);
	return e > 0 ? 0 : e;
}

/* fsck -t fatfs (struct libfs_ops.fsck): fatfs_fsck's lines are "PATH:
 * what" or a whole sentence about the volume. */
static void fsck_line(void *arg, const char *line)
{
	struct libfs_fsck *ck = arg;
	const char *sep = strstr(line, ": ");
	char path[LIBFS_PATH_MAX];
	if (sep != NULL && line[0] == '/' && (size_t)(sep - line) < sizeof path) {
		memcpy(path, line, (size_t)(sep - line));
		path[sep - line] = 0;
		ck->report(ck->arg, path, sep + 2);
	} else {
		ck->report(ck->arg, "(volume)", line);
	}
}

static int fo_fsck(const char *opts, struct libfs_fsck *ck)
{
	char o[1024];
	snprintf(o, sizeof o, "%s%s%s", opts, opts[0] && ck->repair ? "," : "",
	         ck->repair ? "repair" : "");
	struct fatfs_stats st;
	int e = fatfs_fsck(o, ck->report ? fsck_line : NULL, ck, &st);
	if (e < 0)
		return e;
	ck->problems = st.problems;
	snprintf(ck->summary, sizeof ck->summary,
	         "%llu files, %llu directories, %llu bytes, %llu of %llu clusters free",
	         (unsigned long long)st.files, (unsigned long long)st.dirs,
	         (unsigned long long)st.bytes, (unsigned long long)st.free,
	         (unsigned long long)st.clusters);
	return 0;
}

const struct libfs_ops fatfs_ops = {
	.name = "fatfs",
	.features = LIBFS_F_DIRS | LIBFS_F_RENAME,
	.name_max = LFN_MAX,
	.file_max = 0xFFFFFFFFull,
	.mkfs = fatfs_mkfs,
	.fsck = fo_fsck,
	.mount = fo_mount,
	.unmount = fo_unmount,
	.sync = fo_sync,
	.statfs = fo_statfs,
	.stat = fo_stat,
	.unlink = fo_unlink,
	.rename = fo_rename,
	.mkdir = fo_mkdir,
	.rmdir = fo_rmdir,
	.open = fo_open,
	.close = fo_close,
	.read = fo_read,
	.write = fo_write,
	.fstat = fo_fstat,
	.truncate = fo_truncate,
	.fsync = fo_fsync,
	.readdir = fo_readdir,
	.abandon = fo_abandon,
	.forget = fo_forget,
	.enter = fat_share_enter,
	.leave = fat_share_leave,
};

/* ---- making one --------------------------------------------------------------------------- */

int fatfs_mkfs(const char *opts, uint64_t *sb)
{
	uint64_t size, chunk;
	if (fat_parse_size(opts, "size", 1ull << 30, &size) < 0 ||
	    fat_parse_size(opts, "chunk", (uint64_t)VV_CHUNK_DEF * ED_SECTOR, &chunk) < 0 ||
	    size < 64 * ED_SECTOR || chunk % ED_SECTOR != 0)
		return -EINVAL;
	struct fatfs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	int e = kit_mkfs(&fs->kit, "fatfs", opts, ANCHOR_LEN);
	if (e == 0) {
		fs->kit.fs = fs;
		fs->kit.writeback = hook;
		e = vvol_make(&fs->vol, &fs->kit, VOL_ENT, size / ED_SECTOR,
		              (uint32_t)(chunk / ED_SECTOR), 8u << 20);
	}
	if (e == 0)
		e = fat_format(fs, opts);
	/* Everything durable: the FAT's sectors, then the map, the anchor last;
	 * then the metadata's checksums, and the volume marked clean. */
	if (e == 0)
		e = vvol_sync(&fs->vol, VV_ALL);
	if (e == 0)
		e = fat_ck_make(fs);
	if (e == 0)
		*sb = fs->kit.anchor;
	fat_release(fs);
	return e;
}

int fatfs_mkfs_image(uint8_t *img, uint64_t nsectors, const char *opts)
{
	struct fatfs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	int e = vvol_open_image(&fs->vol, img, nsectors, 4u << 20);
	if (e == 0)
		e = fat_format(fs, opts);
	if (e == 0)
		e = vvol_sync(&fs->vol, VV_ALL);
	fat_release(fs);
	return e;
}

/* ---- the raw volume, for host tools ------------------------------------------------------------- */

struct fatfs_vol {
	struct fatfs fs;
	int made, wrote;
	uint64_t size;                /* the FAT image's sectors                  */
};

int fatfs_vol_open(const char *opts, int make, uint64_t nsectors, uint32_t chunk,
                   struct fatfs_vol **out)
{
	struct fatfs_vol *v = calloc(1, sizeof *v);
	if (v == NULL)
		return -ENOMEM;
	struct fatfs *fs = &v->fs;
	int e = make ? kit_mkfs(&fs->kit, "fatfs", opts, ANCHOR_LEN) : kit_mount(&fs->kit, "fatfs", opts);
	if (e == 0) {
		fs->kit_mounted = !make;
		fs->kit.fs = fs;
		fs->kit.writeback = hook;
		/* A volume made for an image has room for the checksums after it. */
		e = make ? vvol_make(&fs->vol, &fs->kit, VOL_ENT, nsectors + fat_ck_area_size(nsectors),
		                     chunk, 16u << 20) :
		           vvol_open(&fs->vol, &fs->kit, VOL_ENT, 16u << 20);
	}
	if (e < 0) {
		if (fs->kit_mounted)
			kit_unmount(&fs->kit);
		vvol_close(&fs->vol);
		free(v);
		return e;
	}
	v->made = make;
	v->size = make ? nsectors : fs->vol.d.nsectors;
	/* The FAT ends where the boot sector says if the checksums' area
	 * follows it: that is not the FAT's. */
	uint8_t b[ED_SECTOR];
	if (!make && vvol_read(&fs->vol, 0, b, 1, 0) == 0) {
		uint64_t tot = le16(b + BPB_TOTSEC16) ? le16(b + BPB_TOTSEC16) : le32(b + BPB_TOTSEC32);
		if (tot > 0 && tot < fs->vol.d.nsectors && vvol_read(&fs->vol, tot, b, 1, 0) == 0 &&
		    memcmp(b, "FATCSUM1", 8) == 0)
			v->size = tot;
	}
	*out = v;
	return 0;
}

uint64_t fatfs_vol_size(struct fatfs_vol *v)
{
	return v->size;
}

uint32_t fatfs_vol_chunk(struct fatfs_vol *v)
{
	return v->fs.vol.d.chunk;
}

int fatfs_vol_mapped(struct fatfs_vol *v, uint64_t lba)
{
	uint64_t phys;
	return vvol_mapped(&v->fs.vol, lba, &phys);
}

int fatfs_vol_read(struct fatfs_vol *v, uint64_t lba, void *buf, uint64_t n)
{
	return vvol_read(&v->fs.vol, lba, buf, n, 0);
}

int fatfs_vol_write(struct fatfs_vol *v, uint64_t lba, const void *buf, uint64_t n)
{
	v->wrote = 1;
	int e = vvol_write(&v->fs.vol, lba, buf, n, 0);
	if (e == -ENOBUFS && (e = vvol_sync(&v->fs.vol, VV_ALL)) == 0)
		e = vvol_write(&v->fs.vol, lba, buf, n, 0);
	return e;
}

uint64_t fatfs_vol_footprint(struct fatfs_vol *v)
{
	return vvol_footprint(&v->fs.vol);
}

int fatfs_vol_close(struct fatfs_vol *v)
{
	int e = v->made || v->wrote ? vvol_sync(&v->fs.vol, VV_ALL) : 0;
	/* An image put in: checksums of its metadata (if it is a FAT at all:
	 * the caller's checker says what else is wrong). */
	if (e == 0 && v->made) {
		fat_quiet = 1;
		if (fat_boot(&v->fs) == 0)
			e = fat_ck_make(&v->fs);
		fat_quiet = 0;
	}
	vvol_close(&v->fs.vol);
	if (v->fs.kit_mounted)
		kit_unmount(&v->fs.kit);
	free(v);
	return e;
}
