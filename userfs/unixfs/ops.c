/*
 * ops.c - unixfs as a library file system: the operations table (libfs.h)
 * over paths, built from the pieces in the other files.  An open file is a
 * struct ufile naming an in-memory inode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

int ufs_mount_common(const char *opts, int readonly, struct ufs **out);
int ufs_unmount_common(struct ufs *fs);
void ufs_abandon(struct ufs *fs);

struct ufile {
	struct ufile *next, *prev;   /* the mount's open files */
	struct uinode *ip;
	int flags;                /* LIBFS_O_* */
	/* Where a file this handle created was named, while it may still
	 * become memory-only (see u_persist). */
	uint64_t parent;
	char *name;
};

static int u_mount(const char *opts, void **fsp)
{
	struct ufs *fs;
	int err = ufs_mount_common(opts, 0, &fs);
	if (err == 0)
		*fsp = fs;
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
		free(f->name);
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
	st->blocks = fs->fm.nsectors / UFS_BSECT;
	st->bfree = edc_fm_count_free(&fs->fm) / UFS_BSECT;
	st->files = fs->ninodes;
	st->ffree = st->bfree * UFS_IPB / 2;
	return 0;
}

static void fill_stat(struct uinode *ip, struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	st->ino = ip->ino;
	st->type = ip->d.type == UFS_T_DIR ? LIBFS_T_DIR : LIBFS_T_REG;
	st->perm = ip->d.perm;
	st->nlink = ip->d.nlink;
	st->persist = (uint32_t)ip->persist;
	st->size = ip->d.size;
	uint64_t nodes = 1;
	for (int i = UN_SINGLE; i < UN_LEAF0 + UFS_INNER_MAX; i++)
		nodes += ip->node[i].used ? UFS_MAP_SECT : 0;
	/* The inode's share of its block, the map nodes, the extents. */
	st->blocks = ip->persist == LIBFS_P_MEMORY ? 0 : nodes + ip->mapped;
	st->mtime = ip->d.mtime;
	st->ctime = ip->d.ctime;
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

/* Look name up in dir and get its inode. */
static int child(struct ufs *fs, struct uinode *dir, const char *name, struct uinode **ipp)
{
	struct udirent de;
	int err = ufs_dir_lookup(fs, dir, name, &de);
	if (err < 0)
		return err;
	err = ufs_iget(fs, de.ino, de.gen, ipp);
	if (err == 0 && (*ipp)->d.type != de.type) {
		ufs_iput(fs, *ipp);
		err = -EIO;
	}
	return err;
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
		err = ufs_nameiparent(fs, path, &dir, name);
		if (err < 0)
			goto fail;
		err = child(fs, dir, name, &ip);
		if (err == 0 && (flags & LIBFS_O_EXCL)) {
			ufs_iput(fs, ip);
			err = -EEXIST;
		} else if (err == -ENOENT) {
			if (fs->readonly)
				err = -EROFS;
			else
				err = ufs_icreate(fs, dir, UFS_T_REG, perm, &ip);
			if (err == 0) {
				err = ufs_dir_add(fs, dir, name, ip, NULL);
				if (err < 0) {
					ip->unlinked = 1;
					ufs_iput(fs, ip);
				} else {
					f->parent = dir->ino;
					f->name = strdup(name);
					ufs_idirty(fs, dir);
				}
			}
		}
		ufs_iput(fs, dir);
	} else {
		err = ufs_namei(fs, path, &ip);
	}
	if (err < 0)
		goto fail;
	if ((flags & LIBFS_O_DIR) && ip->d.type != UFS_T_DIR)
		err = -ENOTDIR;
	else if ((flags & LIBFS_O_WRITE) && ip->d.type == UFS_T_DIR)
		err = -EISDIR;
	else if ((flags & LIBFS_O_WRITE) && fs->readonly)
		err = -EROFS;
	else if ((flags & LIBFS_O_TRUNC) && ip->d.size > 0)
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
	free(f->name);
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
	ufs_iput(fsp, f->ip);
	free(f->name);
	free(f);
	return 0;
}

static long u_read(void *fsp, void *file, void *buf, size_t n, uint64_t off)
{
	struct ufile *f = file;
	if (f->ip->d.type == UFS_T_DIR)
		return -EISDIR;
	return ufs_read(fsp, f->ip, buf, n, off);
}

static long u_write(void *fsp, void *file, const void *buf, size_t n, uint64_t off)
{
	struct ufile *f = file;
	long r = ufs_write(fsp, f->ip, buf, n, off);
	if (r > 0 && (f->flags & LIBFS_O_SYNC) && f->ip->persist == LIBFS_P_WRITEBACK) {
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
	struct udirent ud;
	int r = ufs_dir_next(fsp, f->ip, cookie, &ud);
	if (r <= 0)
		return r;
	de->ino = ud.ino;
	de->type = ud.type == UFS_T_DIR ? LIBFS_T_DIR : LIBFS_T_REG;
	strcpy(de->name, ud.name);
	return 1;
}

/* Remove name from dir; the inode goes once nobody uses it and the
 * removal is durable. */
static int remove_name(struct ufs *fs, struct uinode *dir, const char *name, struct uinode *ip)
{
	int err = ufs_dir_remove(fs, dir, name);
	if (err < 0)
		return err;
	ufs_idirty(fs, dir);
	ip->unlinked = 1;
	ip->d.nlink = 0;
	return 0;
}

static int u_unlink(void *fsp, const char *path)
{
	struct ufs *fs = fsp;
	struct uinode *dir, *ip;
	char name[UFS_NAME_MAX + 1];
	int err = ufs_nameiparent(fs, path, &dir, name);
	if (err < 0)
		return err;
	err = child(fs, dir, name, &ip);
	if (err == 0) {
		if (ip->d.type == UFS_T_DIR)
			err = -EISDIR;
		else if (fs->readonly)
			err = -EROFS;
		else
			err = remove_name(fs, dir, name, ip);
		ufs_iput(fs, ip);
	}
	ufs_iput(fs, dir);
	return err;
}

static int u_mkdir(void *fsp, const char *path, uint32_t perm)
{
	struct ufs *fs = fsp;
	struct uinode *dir, *ip;
	char name[UFS_NAME_MAX + 1];
	int err = ufs_nameiparent(fs, path, &dir, name);
	if (err < 0)
		return err;
	err = child(fs, dir, name, &ip);
	if (err == 0) {
		ufs_iput(fs, ip);
		err = -EEXIST;
	} else if (err == -ENOENT) {
		err = fs->readonly ? -EROFS : ufs_icreate(fs, dir, UFS_T_DIR, perm, &ip);
		if (err == 0) {
			err = ufs_dir_add(fs, dir, name, ip, NULL);
			if (err < 0)
				ip->unlinked = 1;
			else
				ufs_idirty(fs, dir);
			ufs_iput(fs, ip);
		}
	}
	ufs_iput(fs, dir);
	return err;
}

static int u_rmdir(void *fsp, const char *path)
{
	struct ufs *fs = fsp;
	struct uinode *dir, *ip;
	char name[UFS_NAME_MAX + 1];
	int err = ufs_nameiparent(fs, path, &dir, name);
	if (err < 0)
		return err;
	err = child(fs, dir, name, &ip);
	if (err == 0) {
		if (ip->d.type != UFS_T_DIR)
			err = -ENOTDIR;
		else if (ip == fs->root)
			err = -EBUSY;
		else if (fs->readonly)
			err = -EROFS;
		else if ((err = ufs_dir_empty(fs, ip)) == 0)
			err = -ENOTEMPTY;
		else if (err > 0)
			err = remove_name(fs, dir, name, ip);
		ufs_iput(fs, ip);
	}
	ufs_iput(fs, dir);
	return err;
}

/* Is dir `a` the same as, or inside, directory `b`? */
static int inside(struct ufs *fs, struct uinode *a, struct uinode *b, int *errp)
{
	uint64_t ino = a->ino;
	for (int depth = 0; depth < 4096; depth++) {
		if (ino == b->ino)
			return 1;
		if (ino == fs->root->ino)
			return 0;
		struct uinode *ip;
		int err = ufs_iget(fs, ino, 0, &ip);
		if (err < 0) {
			*errp = err;
			return 0;
		}
		uint64_t parent = ip->d.parent;
		ufs_iput(fs, ip);
		if (parent == ino) {
			*errp = -EIO;    /* a directory its own parent, not the root */
			return 0;
		}
		ino = parent;
	}
	*errp = -EIO;
	return 0;
}

static int u_rename(void *fsp, const char *from, const char *to)
{
	struct ufs *fs = fsp;
	if (fs->readonly)
		return -EROFS;
	struct uinode *sdir, *ddir = NULL, *ip = NULL, *old = NULL;
	char sname[UFS_NAME_MAX + 1], dname[UFS_NAME_MAX + 1];
	int err = ufs_nameiparent(fs, from, &sdir, sname);
	if (err < 0)
		return err;
	err = ufs_nameiparent(fs, to, &ddir, dname);
	if (err == 0)
		err = child(fs, sdir, sname, &ip);
	if (err < 0)
		goto out;
	if (ip->d.type == UFS_T_DIR && inside(fs, ddir, ip, &err)) {
		err = -EINVAL;          /* into itself */
		goto out;
	}
	if (err < 0)
		goto out;
	err = child(fs, ddir, dname, &old);
	if (err == 0) {
		if (old == ip) {
			err = 0;
			goto out;
		}
		if (ip->d.type == UFS_T_DIR && old->d.type != UFS_T_DIR)
			err = -ENOTDIR;
		else if (ip->d.type != UFS_T_DIR && old->d.type == UFS_T_DIR)
			err = -EISDIR;
		else if (old->d.type == UFS_T_DIR && (err = ufs_dir_empty(fs, old)) >= 0)
			err = err ? 0 : -ENOTEMPTY;
		if (err == 0)
			err = remove_name(fs, ddir, dname, old);
	} else if (err == -ENOENT) {
		err = 0;
	}
	if (err < 0)
		goto out;
	int slot = -1;
	if (ip->persist != LIBFS_P_MEMORY && (slot = ufs_intent_reserve(fs)) < 0) {
		err = slot;
		goto out;
	}
	/* The new name first, made durable, then the old one goes: a crash
	 * leaves the file under one name or both, never under none, and the
	 * superblock's record of the rename lets the next mount remove the
	 * old name if both are there.  A memory-only file's names are never
	 * durable anyway. */
	struct udirent sde;
	err = ufs_dir_lookup(fs, sdir, sname, &sde);
	uint64_t doff;
	if (err == 0)
		err = ufs_dir_add(fs, ddir, dname, ip, &doff);
	if (err < 0)
		goto out;
	ufs_idirty(fs, ddir);
	if (ip->d.type == UFS_T_DIR && ip->d.parent != ddir->ino) {
		ip->d.parent = ddir->ino;
		ufs_idirty(fs, ip);
	}
	if (slot >= 0) {
		struct ufs_intent in = { ip->ino, ip->d.gen, 0, sdir->ino, sde.off, ddir->ino, doff };
		if ((err = ufs_intent_set(fs, slot, &in)) < 0 || (err = ufs_sync(fs)) < 0)
			goto out;
	}
	err = ufs_dir_remove(fs, sdir, sname);
	ufs_idirty(fs, sdir);
	if (slot >= 0)
		fs->intent_done[slot] = 1;
out:
	if (old)
		ufs_iput(fs, old);
	if (ip)
		ufs_iput(fs, ip);
	if (ddir)
		ufs_iput(fs, ddir);
	ufs_iput(fs, sdir);
	return err;
}

/* Make a file created through this handle memory-only: it moves to an
 * inode that is never written back, its bytes to memory, and its name
 * out of the directory's data into the directory's memory-only list. */
static int to_memory(struct ufs *fs, struct ufile *f)
{
	struct uinode *ip = f->ip;
	if (ip->d.type != UFS_T_REG || !ip->isnew || f->name == NULL || ip->refs != 1 ||
	    ip->next != 0)
		return -EINVAL;
	struct uinode *dir;
	int err = ufs_iget(fs, f->parent, 0, &dir);
	if (err < 0)
		return err;
	uint64_t sector;
	uint16_t slot;
	err = ufs_alloc_inode(fs, ip->sector, 1, &sector, &slot);
	if (err < 0)
		goto out;
	/* The bytes, wherever they are now. */
	uint64_t size = ip->d.size;
	uint8_t *mem = calloc(1, size ? size : 1);
	if (mem == NULL) {
		ufs_xn_dealloc(fs, sector, slot);
		ufs_memblk_put(fs, sector);
		err = -ENOMEM;
		goto out;
	}
	long got = ufs_read(fs, ip, mem, size, 0);
	err = ufs_dir_remove(fs, dir, f->name);
	if (got < 0 || err < 0) {
		free(mem);
		ufs_xn_dealloc(fs, sector, slot);
		ufs_memblk_put(fs, sector);
		err = got < 0 ? (int)got : err;
		goto out;
	}
	/* The old exonode was never written back: freeing it leaves nothing.
	 * If it cannot be freed now (a full exodisk cache), the next sync
	 * frees it. */
	if (ufs_xn_dealloc(fs, ip->sector, ip->slot) < 0)
		ufs_doom_ino(fs, ip->ino);
	bc_drop(&fs->bc, ip->ino, 0);
	/* Re-file the inode under its new number. */
	struct uinode **pp = &fs->itab[ip->ino % UFS_IHASH];
	while (*pp != ip)
		pp = &(*pp)->hnext;
	*pp = ip->hnext;
	ip->ino = ufs_ino(sector, slot);
	ip->sector = sector;
	ip->slot = slot;
	ip->node[UN_INODE] = (struct unode){ sector, slot, 0, 1 };
	ip->hnext = fs->itab[ip->ino % UFS_IHASH];
	fs->itab[ip->ino % UFS_IHASH] = ip;
	ip->persist = LIBFS_P_MEMORY;
	ip->d.flags = 0;
	free(ip->mem);
	ip->mem = mem;
	ip->memcap = size ? size : 1;
	ip->imm_dirty = 0;
	/* Off the dirty list: nothing of it is ever written. */
	struct uinode **dp = &fs->dirty;
	while (*dp && *dp != ip)
		dp = &(*dp)->dnext;
	if (*dp)
		*dp = ip->dnext;
	ip->dirty = 0;
	err = ufs_dir_add(fs, dir, f->name, ip, NULL);
	ufs_idirty(fs, dir);
out:
	ufs_iput(fs, dir);
	return err;
}

static int u_persist(void *fsp, void *file, int model)
{
	struct ufile *f = file;
	if (f->ip->d.type == UFS_T_DIR)
		return -EISDIR;
	if (((struct ufs *)fsp)->readonly)
		return -EROFS;
	if (model == LIBFS_P_MEMORY) {
		if (f->ip->persist == LIBFS_P_MEMORY)
			return 0;
		return to_memory(fsp, f);
	}
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
	snprintf(ck->summary, sizeof ck->summary,
	         "%llu files, %llu directories, %llu bytes, %llu extents, %llu map nodes",
	         (unsigned long long)st.files, (unsigned long long)st.dirs,
	         (unsigned long long)st.bytes, (unsigned long long)st.extents,
	         (unsigned long long)st.mapnodes);
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
};
