/*
 * sync.c - making unixfs durable without ever letting a durable pointer
 * name something that is not durable.
 *
 * The pointers unixfs has: an exonode's size and extents say which data
 * is the file's; a descendant entry names a map node; a directory record
 * names an inode.  The rules that keep each honest:
 *
 *  1. An inode's size grows (and an immediate file's bytes change) in its
 *     exonode only after the data is durable; shrinking may happen at any
 *     time.  Extents may be added early: past the durable size they mean
 *     nothing.  So whatever an exonode says may become durable at any
 *     moment - the exodisk writes back a whole block of four inodes when
 *     any of them is written, and a full exodisk cache forces write-backs
 *     at moments we do not choose.
 *  2. Blocks are written back deepest first (xops.c), so a map node is
 *     durable before the entry naming it.
 *  3. Directory data is written only after every inode it may name has
 *     been written back once.
 *  4. An inode whose name was removed is deallocated only after the
 *     directory data without the name is durable.
 *
 * A sync therefore runs in phases:
 *   A. regular files: write dirty data (choosing sectors now); barrier;
 *      bring each exonode's metadata up to date;
 *   B. write back every changed exonode block (new inodes included);
 *   C. directories: as A;
 *   D. free the inodes whose names are gone;
 *   E. write back again.
 * A barrier is a device flush (ufs_barrier).  fsync of an existing
 * regular file needs only A and B for that file; a new file (or one whose
 * name is not yet durable) gets a full sync.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

void ufs_doom(struct ufs *fs, struct uinode *ip)
{
	ufs_doom_ino(fs, ip->ino);
}

void ufs_doom_ino(struct ufs *fs, uint64_t ino)
{
	for (uint32_t i = 0; i < fs->ndoomed; i++)
		if (fs->doomed[i] == ino)
			return;
	if (fs->ndoomed == fs->doomedcap) {
		uint32_t cap = fs->doomedcap ? fs->doomedcap * 2 : 32;
		uint64_t *n = realloc(fs->doomed, cap * sizeof *n);
		if (n == NULL)
			return;          /* it stays allocated: fsck reports an orphan */
		fs->doomed = n;
		fs->doomedcap = cap;
	}
	fs->doomed[fs->ndoomed++] = ino;
}

static int intent_free(struct ufs *fs)
{
	for (int i = 0; i < UFS_NINTENT; i++)
		if (fs->sb.intent[i].ino == 0 && !fs->intent_done[i])
			return i;
	return -1;
}

int ufs_intent_reserve(struct ufs *fs)
{
	int i = intent_free(fs);
	if (i < 0) {
		int err = ufs_sync(fs);
		if (err < 0)
			return err;
		i = intent_free(fs);
	}
	return i < 0 ? -EBUSY : i;
}

static int push_sb(struct ufs *fs)
{
	int64_t r = ufs_xn_add_data(fs, fs->sb_sector, 0, 0, &fs->sb, sizeof fs->sb);
	if (r < 0)
		return ufs_err(r);
	return ufs_touch(fs, fs->sb_sector, 0, -1);
}

int ufs_intent_set(struct ufs *fs, int slot, const struct ufs_intent *in)
{
	fs->sb.intent[slot] = *in;
	return push_sb(fs);
}

/* Renames whose old name's removal is now durable: forget them. */
static int intents_clear(struct ufs *fs)
{
	int any = 0;
	for (int i = 0; i < UFS_NINTENT; i++)
		if (fs->intent_done[i]) {
			memset(&fs->sb.intent[i], 0, sizeof fs->sb.intent[i]);
			fs->intent_done[i] = 0;
			any = 1;
		}
	return any ? push_sb(fs) : 0;
}

/* Is there a directory record for inode ino at (dir, off)? */
static int names_at(struct ufs *fs, uint64_t dir, uint64_t off, uint64_t ino, uint32_t gen,
                    char *name)
{
	struct uinode *dp;
	if (ufs_iget(fs, dir, 0, &dp) < 0)
		return 0;
	struct udirent de;
	int yes = dp->d.type == UFS_T_DIR && ufs_dir_at(fs, dp, off, &de) == 0 && de.ino == ino &&
	          de.gen == gen;
	if (yes && name)
		strcpy(name, de.name);
	ufs_iput(fs, dp);
	return yes;
}

int ufs_intent_recover(struct ufs *fs)
{
	int any = 0;
	for (int i = 0; i < UFS_NINTENT; i++) {
		const struct ufs_intent *in = &fs->sb.intent[i];
		if (in->ino == 0)
			continue;
		char name[UFS_NAME_MAX + 1];
		/* Both names durable: finish by removing the old one.  Otherwise
		 * the crash came before the new name was: nothing to do. */
		if (names_at(fs, in->ddir, in->doff, in->ino, in->gen, NULL) &&
		    names_at(fs, in->sdir, in->soff, in->ino, in->gen, name)) {
			struct uinode *dp;
			int err = ufs_iget(fs, in->sdir, 0, &dp);
			if (err == 0) {
				err = ufs_dir_remove(fs, dp, name);
				ufs_idirty(fs, dp);
				ufs_iput(fs, dp);
			}
			if (err < 0)
				return err;
		}
		fs->intent_done[i] = 1;
		any = 1;
	}
	return any ? ufs_sync(fs) : 0;
}

int ufs_intent_explains(struct ufs *fs, uint64_t ino)
{
	for (int i = 0; i < UFS_NINTENT; i++)
		if (fs->sb.intent[i].ino == ino)
			return 1;
	return 0;
}

static int doomed(struct uinode *ip)
{
	return ip->unlinked && ip->refs == 0;
}

/* Phase A or C for every inode in list of the given type. */
static int flush_type(struct ufs *fs, struct uinode **list, uint32_t n, int type)
{
	uint64_t writes = fs->cnt.data_writes;
	int err = 0;
	for (uint32_t i = 0; i < n && err == 0; i++)
		if (list[i]->d.type == type && !doomed(list[i]))
			err = ufs_flush_data(fs, list[i]);
	if (err == 0 && fs->cnt.data_writes != writes)
		err = ufs_barrier(fs);
	for (uint32_t i = 0; i < n && err == 0; i++)
		if (list[i]->d.type == type && !doomed(list[i]))
			err = ufs_push_meta(fs, list[i]);
	return err;
}

int ufs_sync(struct ufs *fs)
{
	if (fs->readonly || fs->in_sync)
		return 0;
	fs->in_sync = 1;
	fs->cnt.syncs++;
	/* Take the dirty list; everything on it is held while we work. */
	uint32_t n = 0;
	for (struct uinode *ip = fs->dirty; ip; ip = ip->dnext)
		n++;
	struct uinode **list = malloc((n ? n : 1) * sizeof *list);
	if (list == NULL) {
		fs->in_sync = 0;
		return -ENOMEM;
	}
	n = 0;
	for (struct uinode *ip = fs->dirty; ip; ip = ip->dnext)
		list[n++] = ip;
	int cleared = 0;
	int err = flush_type(fs, list, n, UFS_T_REG);
	if (err == 0)
		err = ufs_writeback_all(fs);
	if (err == 0) {
		for (uint32_t i = 0; i < n; i++)
			list[i]->isnew = 0;
		err = flush_type(fs, list, n, UFS_T_DIR);
	}
	/* The directories' own exonodes (their size, extents, immediate
	 * bytes) durable before any inode their old names named is freed. */
	if (err == 0 && fs->ndoomed > 0)
		err = ufs_writeback_all(fs);
	if (err == 0) {
		/* Every inode on the list is now as durable as it can be. */
		fs->dirty = NULL;
		for (uint32_t i = 0; i < n; i++)
			list[i]->dirty = 0;
		cleared = 1;
		/* D: names removed before this sync are gone from durable
		 * directories now. */
		uint32_t k = 0;
		for (uint32_t i = 0; i < fs->ndoomed; i++) {
			struct uinode *ip = ufs_ifind(fs, fs->doomed[i]);
			int e = 0;
			if (ip != NULL && doomed(ip)) {
				e = ufs_ifree(fs, ip);
			} else if (ip == NULL && ufs_iget(fs, fs->doomed[i], 0, &ip) == 0) {
				/* An exonode no in-memory inode stands for any more (one
				 * a file left when it became memory-only). */
				ip->refs = 0;
				ip->unlinked = 1;
				e = ufs_ifree(fs, ip);
			}
			if (e < 0) {
				fs->doomed[k++] = fs->doomed[i];
				if (err == 0)
					err = e;
			}
		}
		fs->ndoomed = k;
		if (err == 0)
			err = intents_clear(fs);
	}
	if (err == 0)
		err = ufs_writeback_all(fs);
	fs->free_est = edc_fm_count_free(&fs->fm);
	if (err < 0 && !cleared) {
		/* Everything stays on the list for the next attempt (the list is
		 * unchanged: nothing on it was freed before this point). */
		fs->dirty = NULL;
		for (uint32_t i = 0; i < n; i++) {
			list[i]->dirty = 0;
			ufs_idirty(fs, list[i]);
		}
	}
	free(list);
	fs->in_sync = 0;
	return err;
}

int ufs_writebehind(struct ufs *fs)
{
	if (fs->readonly || fs->in_sync)
		return 0;
	/* Regular files only: directory data must wait for its inodes. */
	int err = 0;
	for (struct uinode *ip = fs->dirty; ip && err == 0; ip = ip->dnext)
		if (ip->d.type == UFS_T_REG && !doomed(ip) && !(ip->d.flags & UFS_DF_IMMEDIATE))
			err = ufs_flush_data(fs, ip);
	return err;
}

int ufs_fsync(struct ufs *fs, struct uinode *ip)
{
	if (ip->persist == LIBFS_P_MEMORY || fs->readonly)
		return 0;
	if (ip->isnew || ip->d.type == UFS_T_DIR)
		return ufs_sync(fs);
	uint64_t writes = fs->cnt.data_writes;
	int err = ufs_flush_data(fs, ip);
	if (err == 0 && fs->cnt.data_writes != writes)
		err = ufs_barrier(fs);
	if (err == 0)
		err = ufs_push_meta(fs, ip);
	if (err == 0)
		err = ufs_writeback_all(fs);
	return err;
}
