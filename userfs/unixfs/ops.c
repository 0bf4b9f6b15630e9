/*
 * ops.c - unixfs as a library file system: the operations table (libfs.h)
 * over paths, built from the pieces in the other files.  An open file is a
 * struct ufile naming an in-memory object.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

int ufs_mount_common(const char *opts, int readonly, struct ufs **out);
int ufs_unmount_common(struct ufs *fs);
void ufs_abandon(struct ufs *fs);

/* ---- paths ----------------------------------------------------------------------------- */

/* The next component of *p into name; 0 at the end, 1 for a component. */
static int component(const char **p, char *name)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	if (*s == 0)
		return 0;
	const char *e = s;
	while (*e && *e != '/')
		e++;
	size_t n = (size_t)(e - s);
	if (n > UFS_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, s, n);
	name[n] = 0;
	*p = e;
	return 1;
}

/* Step from directory dir to its entry `name`. */
static int step(struct ufs *fs, struct uinode *dir, const char *name, struct uinode **out)
{
	if (dir->type != UFS_T_DIR)
		return -ENOTDIR;
	struct uent *e = ufs_dir_find(dir->d, name, strlen(name));
	if (e == NULL)
		return -ENOENT;
	return ufs_iget(fs, e, out);
}

int ufs_namei(struct ufs *fs, const char *path, struct uinode **ipp)
{
	struct uinode *ip = fs->root;
	ip->refs++;
	char name[UFS_NAME_MAX + 1];
	int r;
	while ((r = component(&path, name)) > 0) {
		struct uinode *next;
		int err = step(fs, ip, name, &next);
		ufs_iput(fs, ip);
		if (err < 0)
			return err;
		ip = next;
	}
	if (r < 0) {
		ufs_iput(fs, ip);
		return r;
	}
	*ipp = ip;
	return 0;
}

static int nameiparent(struct ufs *fs, const char *path, struct uinode **dirp, char *name)
{
	struct uinode *ip = fs->root;
	ip->refs++;
	int r = component(&path, name);
	if (r <= 0) {
		ufs_iput(fs, ip);
		return r == 0 ? -EBUSY : r;     /* the root has no parent here */
	}
	char next_name[UFS_NAME_MAX + 1];
	for (;;) {
		r = component(&path, next_name);
		if (r < 0) {
			ufs_iput(fs, ip);
			return r;
		}
		if (r == 0)
			break;
		struct uinode *next;
		int err = step(fs, ip, name, &next);
		ufs_iput(fs, ip);
		if (err < 0)
			return err;
		ip = next;
		strcpy(name, next_name);
	}
	if (ip->type != UFS_T_DIR) {
		ufs_iput(fs, ip);
		return -ENOTDIR;
	}
	*dirp = ip;
	return 0;
}

/* ---- the operations ------------------------------------------------------------------- */

static int u_mount(const char *opts, void **fsp)
{
	struct ufs *fs;
	int err = ufs_mount_common(opts, 0, &fs);
	if (err == 0) {
		ufs_share_mounted(fs);      /* the VFS takes the lock for each call */
		*fsp = fs;
	}
	return err;
}

static int u_unmount(void *fsp)
{
	return ufs_unmount_common(fsp);
}

static void u_abandon(void *fsp)
{
	struct ufs *fs = fsp;
	while (fs->files) {
		struct ufile *f = fs->files;
		fs->files = f->next;
		free(f);
	}
	ufs_abandon(fs);
}

static int u_sync(void *fsp)
{
	return ufs_sync(fsp);
}

static int u_statfs(void *fsp, struct libfs_statfs *st)
{
	struct ufs *fs = fsp;
	strcpy(st->type, "unixfs");
	st->bsize = UFS_BSIZE;
	st->blocks = fs->k.fm.nsectors / UFS_BSECT;
	st->bfree = edc_fm_count_free(&fs->k.fm) / UFS_BSECT;
	st->ffree = st->bfree * UFS_BSECT;
	return ufs_files(fs, &st->files);
}

static void fill_stat(struct uinode *ip, struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	st->ino = ip->id;
	if (ip->type == UFS_T_DIR) {
		const struct udir *d = ip->d;
		st->type = LIBFS_T_DIR;
		st->perm = d->m.perm;
		st->nlink = 2 + d->nsubdirs;
		st->persist = LIBFS_P_WRITEBACK;
		st->size = (uint64_t)d->nblk * UFS_BSIZE;
		st->blocks = 1 + d->sp.total;
		st->mtime = d->m.mtime;
		st->ctime = d->m.ctime;
		return;
	}
	const struct uent *e = ip->ent;
	st->type = LIBFS_T_REG;
	st->perm = e->r.perm;
	st->nlink = ip->unlinked ? 0 : 1;
	st->persist = e->memonly ? LIBFS_P_MEMORY : e->r.persist;
	st->size = e->r.size;
	st->mtime = e->r.mtime;
	st->ctime = e->r.ctime;
	if (e->memonly) {
		st->blocks = 0;
	} else if (ip->b != NULL) {
		uint64_t nodes = 1;
		for (int i = UN_SINGLE; i < UN_MAX; i++)
			nodes += ip->b->node[i].used ? UFS_MAP_SECT : 0;
		st->blocks = nodes + ip->b->held;     /* holes take nothing */
	} else {
		st->blocks = (e->r.size + UFS_SECT - 1) / UFS_SECT;
	}
}

static int u_stat(void *fsp, const char *path, struct libfs_stat *st)
{
	struct ufs *fs = fsp;
	struct uinode *ip;
	int err = ufs_namei(fs, path, &ip);
	if (err < 0)
		return err;
	fill_stat(ip, st);
	ufs_iput(fs, ip);
	return 0;
}

static int u_open(void *fsp, const char *path, int flags, uint32_t perm, void **file)
{
	struct ufs *fs = fsp;
	struct ufile *f = calloc(1, sizeof *f);
	if (f == NULL)
		return -ENOMEM;
	struct uinode *ip = NULL;
	int err;
	if ((flags & LIBFS_O_CREAT) && path[0] != 0) {
		struct uinode *dir;
		char name[UFS_NAME_MAX + 1];
		err = nameiparent(fs, path, &dir, name);
		if (err < 0)
			goto fail;
		struct uent *e = ufs_dir_find(dir->d, name, strlen(name));
		if (e != NULL && (flags & LIBFS_O_EXCL)) {
			err = -EEXIST;
		} else if (e != NULL) {
			err = ufs_iget(fs, e, &ip);
		} else if (fs->readonly) {
			err = -EROFS;
		} else {
			err = ufs_create(fs, dir, name, UFS_T_REG, perm, &ip);
			f->created = err == 0;
		}
		ufs_iput(fs, dir);
	} else {
		/* Reading a file of a directory not yet loaded: load its names
		 * and its small files together. */
		fs->want_data = (flags & LIBFS_O_READ) && !(flags & LIBFS_O_DIR);
		err = ufs_namei(fs, path, &ip);
		fs->want_data = 0;
	}
	if (err < 0)
		goto fail;
	if ((flags & LIBFS_O_DIR) && ip->type != UFS_T_DIR)
		err = -ENOTDIR;
	else if ((flags & LIBFS_O_WRITE) && ip->type == UFS_T_DIR)
		err = -EISDIR;
	else if ((flags & LIBFS_O_WRITE) && fs->readonly)
		err = -EROFS;
	else if ((flags & LIBFS_O_TRUNC) && ip->ent->r.size > 0)
		err = ufs_truncate(fs, ip, 0);
	if (err < 0) {
		ufs_iput(fs, ip);
		goto fail;
	}
	f->ip = ip;
	f->flags = flags;
	f->next = fs->files;
	if (fs->files)
		fs->files->prev = f;
	fs->files = f;
	*file = f;
	return 0;
fail:
	free(f);
	return err;
}

static int u_close(void *fsp, void *file)
{
	struct ufile *f = file;
	struct ufs *fs = fsp;
	if (f->prev)
		f->prev->next = f->next;
	else
		fs->files = f->next;
	if (f->next)
		f->next->prev = f->prev;
	/* Bytes written through it that the last sync could not write back
	 * (issue 17, F3): they stay dirty for the next sync, and close says
	 * so, as fsync did. */
	int err = (f->flags & LIBFS_O_WRITE) && f->ip->ent && f->ip->ent->failed
	          ? -f->ip->ent->failed : 0;
	ufs_iput(fsp, f->ip);
	free(f);
	return err;
}

static long u_read(void *fsp, void *file, void *buf, size_t n, uint64_t off)
{
	struct ufile *f = file;
	if (f->ip->type == UFS_T_DIR)
		return -EISDIR;
	return ufs_read(fsp, f->ip, buf, n, off);
}

static long u_write(void *fsp, void *file, const void *buf, size_t n, uint64_t off)
{
	struct ufile *f = file;
	long r = ufs_write(fsp, f->ip, buf, n, off);
	if (r > 0 && (f->flags & LIBFS_O_SYNC) && f->ip->ent->r.persist == LIBFS_P_WRITEBACK) {
		int err = ufs_fsync(fsp, f->ip);
		if (err < 0)
			return err;
	}
	return r;
}

static int u_fstat(void *fsp, void *file, struct libfs_stat *st)
{
	struct ufile *f = file;
	fill_stat(f->ip, st);
	return 0;
}

static int u_truncate(void *fsp, void *file, uint64_t len)
{
	struct ufile *f = file;
	if (f->ip->type == UFS_T_DIR)
		return -EISDIR;
	return ufs_truncate(fsp, f->ip, len);
}

static int u_fsync(void *fsp, void *file)
{
	struct ufile *f = file;
	return ufs_fsync(fsp, f->ip);
}

static int u_readdir(void *fsp, void *dir, uint64_t *cookie, struct libfs_dirent *de)
{
	struct ufile *f = dir;
	struct uent *e;
	if (ufs_dir_next(f->ip->d, cookie, &e) == 0)
		return 0;
	de->ino = e->r.id;
	de->type = e->r.type == UFS_T_DIR ? LIBFS_T_DIR : LIBFS_T_REG;
	strcpy(de->name, e->name);
	return 1;
}

/* Remove name e from directory dir.  An open object keeps working (a
 * small file's bytes move into memory first, since its sectors go with
 * the name); what it holds on disk goes at its last close. */
static int remove_name(struct ufs *fs, struct uinode *dir, struct uent *e)
{
	struct uinode *ip = e->ip;
	if (ip != NULL) {
		if (ip->type == UFS_T_REG && ip->b == NULL && !e->memonly) {
			int err = ufs_load_small(fs, ip);
			if (err < 0)
				return err;
		}
		ip->unlinked = 1;
	}
	ufs_dir_remove(fs, dir->d, e);
	dir->d->m.mtime = ufs_now(fs);
	/* An object kept only as a cache (nobody has it open) goes now. */
	if (ip != NULL && ip->refs == 0) {
		ip->refs = 1;
		ufs_iput(fs, ip);
	}
	return 0;
}

static int u_unlink(void *fsp, const char *path)
{
	struct ufs *fs = fsp;
	struct uinode *dir;
	char name[UFS_NAME_MAX + 1];
	int err = nameiparent(fs, path, &dir, name);
	if (err < 0)
		return err;
	struct uent *e = ufs_dir_find(dir->d, name, strlen(name));
	if (e == NULL)
		err = -ENOENT;
	else if (e->r.type == UFS_T_DIR)
		err = -EISDIR;
	else if (fs->readonly)
		err = -EROFS;
	else
		err = remove_name(fs, dir, e);
	ufs_iput(fs, dir);
	return err;
}

static int u_mkdir(void *fsp, const char *path, uint32_t perm)
{
	struct ufs *fs = fsp;
	struct uinode *dir, *ip;
	char name[UFS_NAME_MAX + 1];
	int err = nameiparent(fs, path, &dir, name);
	if (err < 0)
		return err;
	if (ufs_dir_find(dir->d, name, strlen(name)) != NULL)
		err = -EEXIST;
	else if (fs->readonly)
		err = -EROFS;
	else if ((err = ufs_create(fs, dir, name, UFS_T_DIR, perm, &ip)) == 0)
		ufs_iput(fs, ip);
	ufs_iput(fs, dir);
	return err;
}

/* Is directory entry e's directory empty?  1, 0, or an error. */
static int empty_dir(struct ufs *fs, struct uent *e)
{
	struct uinode *ip;
	int err = ufs_iget(fs, e, &ip);
	if (err < 0)
		return err;
	int r = ip->d->nents == 0;
	ufs_iput(fs, ip);
	return r;
}

static int u_rmdir(void *fsp, const char *path)
{
	struct ufs *fs = fsp;
	struct uinode *dir;
	char name[UFS_NAME_MAX + 1];
	int err = nameiparent(fs, path, &dir, name);
	if (err < 0)
		return err;
	struct uent *e = ufs_dir_find(dir->d, name, strlen(name));
	if (e == NULL)
		err = -ENOENT;
	else if (e->r.type != UFS_T_DIR)
		err = -ENOTDIR;
	else if (fs->readonly)
		err = -EROFS;
	else if ((err = empty_dir(fs, e)) == 0)
		err = -ENOTEMPTY;
	else if (err > 0)
		err = remove_name(fs, dir, e);
	ufs_iput(fs, dir);
	return err;
}

/* Is path b the same as path a, or inside it?  (Paths are normalised and
 * there are no links: the names say it all.) */
static int path_inside(const char *b, const char *a)
{
	size_t n = strlen(a);
	return strncmp(a, b, n) == 0 && (b[n] == 0 || b[n] == '/' || n == 0);
}

/* Move e from directory s to directory d under name (d != s). */
static int move_across(struct ufs *fs, struct uinode *s, struct uinode *d, struct uent *e,
                       const char *name)
{
	/* A small file's bytes live in its directory's space: they move with
	 * it, in memory first. */
	struct uinode *ip = NULL;
	int err = 0;
	/* A crash is sorted out (below) by trusting a durable new name - so
	 * the directory it is in must be one a walk from the root finds: a
	 * new one, not yet named on disk, is committed first.  (Otherwise a
	 * cut could leave the new name in an unnamed directory and the next
	 * mount remove the old one: the file lost.) */
	if (e->committed && !e->memonly && !ufs_dir_named(fs, d->d) && (err = ufs_sync(fs)) < 0)
		return err;
	if (e->r.type == UFS_T_REG && e->r.where == UFS_W_SMALL) {
		err = ufs_iget(fs, e, &ip);
		if (err == 0)
			err = ufs_load_small(fs, ip);
		if (err < 0) {
			if (ip)
				ufs_iput(fs, ip);
			return err;
		}
	}
	struct ufs_drec r = e->r;
	if (r.where == UFS_W_SMALL)
		r.loc = 0;
	struct uent *ne;
	err = ufs_dir_add(fs, d->d, name, &r, &ne);
	if (err < 0) {
		if (ip)
			ufs_iput(fs, ip);
		return err;
	}
	if (e->memonly)
		ufs_dir_memonly(fs, d->d, ne);
	/* The object goes with the name. */
	struct uinode *obj = e->ip;
	if (obj != NULL) {
		if (obj->parent)
			obj->parent->nlive--;
		obj->parent = d->d;
		d->d->nlive++;
		obj->ent = ne;
		ne->ip = obj;
		e->ip = NULL;
		if (obj->type == UFS_T_REG && obj->b == NULL && !ne->memonly && ne->r.size > 0) {
			obj->idirty = 1;
			ufs_file_dirty(fs, obj);
		}
	}
	e->moved = 2;
	int slot = -1;
	if (e->committed && !e->memonly) {
		/* The new name is made durable first, with a record of the rename
		 * in the superblock (written back before it: sync.c); then the old
		 * name goes.  A crash leaves the file under one name or both, and
		 * the next mount removes the old one if both are there. */
		slot = ufs_intent_reserve(fs);
		if (slot >= 0) {
			struct ufs_intent in = { e->r.id, ufs_xref(s->d->x.sector, s->d->x.slot),
			                         ufs_xref(d->d->x.sector, d->d->x.slot) };
			err = ufs_intent_set(fs, slot, &in);
			if (err == 0)
				err = ufs_sync(fs);
		} else {
			err = slot;
		}
	}
	/* The old name goes in any case: memory holds one name per file (if
	 * the sync failed, the record lets a later mount sort out whichever
	 * of the two names became durable). */
	ufs_dir_remove(fs, s->d, e);
	if (slot >= 0)
		fs->intent_done[slot] = 1;
	if (ip)
		ufs_iput(fs, ip);
	return err;
}

static int u_rename(void *fsp, const char *from, const char *to)
{
	struct ufs *fs = fsp;
	if (fs->readonly)
		return -EROFS;
	struct uinode *sdir, *ddir = NULL;
	char sname[UFS_NAME_MAX + 1], dname[UFS_NAME_MAX + 1];
	int err = nameiparent(fs, from, &sdir, sname);
	if (err < 0)
		return err;
	err = nameiparent(fs, to, &ddir, dname);
	struct uent *se = err == 0 ? ufs_dir_find(sdir->d, sname, strlen(sname)) : NULL;
	if (err == 0 && se == NULL)
		err = -ENOENT;
	if (err < 0)
		goto out;
	if (se->r.type == UFS_T_DIR && path_inside(to, from) && strcmp(from, to) != 0) {
		err = -EINVAL;          /* into itself */
		goto out;
	}
	struct uent *de = ufs_dir_find(ddir->d, dname, strlen(dname));
	if (de == se)
		goto out;
	if (de != NULL) {
		if (se->r.type == UFS_T_DIR && de->r.type != UFS_T_DIR)
			err = -ENOTDIR;
		else if (se->r.type != UFS_T_DIR && de->r.type == UFS_T_DIR)
			err = -EISDIR;
		else if (de->r.type == UFS_T_DIR && (err = empty_dir(fs, de)) >= 0)
			err = err ? 0 : -ENOTEMPTY;
		if (err == 0)
			err = remove_name(fs, ddir, de);
		if (err < 0)
			goto out;
	}
	struct uent *ne;
	if (sdir == ddir)
		err = ufs_dir_rename(fs, sdir->d, se, dname, &ne);   /* one commit: atomic */
	else
		err = move_across(fs, sdir, ddir, se, dname);
	uint64_t now = ufs_now(fs);
	sdir->d->m.mtime = ddir->d->m.mtime = now;
	ufs_dir_dirty(fs, sdir->d);
	ufs_dir_dirty(fs, ddir->d);
out:
	if (ddir)
		ufs_iput(fs, ddir);
	ufs_iput(fs, sdir);
	return err;
}

/* Make a file created through this handle, and never yet made durable,
 * memory-only: its bytes move to memory and its name out of the
 * directory's blocks. */
static int to_memory(struct ufs *fs, struct ufile *f)
{
	struct uinode *ip = f->ip;
	struct uent *e = ip->ent;
	if (ip->type != UFS_T_REG || !f->created || ip->b != NULL || e == NULL || e->dir == NULL ||
	    e->committed || ip->refs != 1)
		return -EINVAL;
	return ufs_to_memory(fs, ip);
}

static int u_persist(void *fsp, void *file, int model)
{
	struct ufile *f = file;
	if (f->ip->type == UFS_T_DIR)
		return -EISDIR;
	if (((struct ufs *)fsp)->readonly)
		return -EROFS;
	if (model == LIBFS_P_MEMORY) {
		if (f->ip->ent->memonly)
			return 0;
		return to_memory(fsp, f);
	}
	if (f->ip->ent->memonly)
		return -EINVAL;
	return ufs_set_persist(fsp, f->ip, model);
}

/* fsck -t unixfs (struct libfs_ops.fsck) over unixfs_fsck. */
static int u_fsck(const char *opts, struct libfs_fsck *ck)
{
	char o[512];
	struct ufs_fsck_stats st;
	snprintf(o, sizeof o, "%s%s%s", opts, opts[0] && ck->repair ? "," : "",
	         ck->repair ? "repair" : "");
	int r = unixfs_fsck(o, ck->report, ck->arg, &st);
	if (r < 0)
		return r;
	ck->problems = st.problems;
	int n = snprintf(ck->summary, sizeof ck->summary,
	         "%llu files, %llu directories, %llu bytes, %llu extents, %llu map nodes",
	         (unsigned long long)st.files, (unsigned long long)st.dirs,
	         (unsigned long long)st.bytes, (unsigned long long)st.extents,
	         (unsigned long long)st.mapnodes);
	if (st.sparse > 0 && n > 0 && (size_t)n < sizeof ck->summary)
		snprintf(ck->summary + n, sizeof ck->summary - (size_t)n, ", %llu sparse (%llu bytes of holes)",
		         (unsigned long long)st.sparse, (unsigned long long)st.hole_bytes);
	return 0;
}

const struct libfs_ops unixfs_ops = {
	.name = "unixfs",
	.features = LIBFS_F_DIRS | LIBFS_F_RENAME | LIBFS_F_PERSIST,
	.name_max = UFS_NAME_MAX,
	.mkfs = unixfs_mkfs,
	.fsck = u_fsck,
	.mount = u_mount,
	.unmount = u_unmount,
	.sync = u_sync,
	.statfs = u_statfs,
	.stat = u_stat,
	.unlink = u_unlink,
	.rename = u_rename,
	.mkdir = u_mkdir,
	.rmdir = u_rmdir,
	.open = u_open,
	.close = u_close,
	.read = u_read,
	.write = u_write,
	.fstat = u_fstat,
	.truncate = u_truncate,
	.fsync = u_fsync,
	.readdir = u_readdir,
	.persist = u_persist,
	.abandon = u_abandon,
	.enter = ufs_share_enter,
	.leave = ufs_share_leave,
};
