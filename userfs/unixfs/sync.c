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
#include "userfs/unixfs/ufs.h"

void ufs_doom(struct ufs *fs, struct uinode *ip)
{
	for (uint32_t i = 0; i < fs->ndoomed; i++)
		if (fs->doomed[i] == ip->ino)
			return;
	if (fs->ndoomed == fs->doomedcap) {
		uint32_t cap = fs->doomedcap ? fs->doomedcap * 2 : 32;
		uint64_t *n = realloc(fs->doomed, cap * sizeof *n);
		if (n == NULL)
			return;          /* it stays allocated: fsck reports an orphan */
		fs->doomed = n;
		fs->doomedcap = cap;
	}
	fs->doomed[fs->ndoomed++] = ip->ino;
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
			err = ufs_flush_data(fs, list[i], NULL);
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
			if (ip != NULL && doomed(ip))
				e = ufs_ifree(fs, ip);
			if (e < 0) {
				fs->doomed[k++] = fs->doomed[i];
				if (err == 0)
					err = e;
			}
		}
		fs->ndoomed = k;
	}
	if (err == 0)
		err = ufs_writeback_all(fs);
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

int ufs_fsync(struct ufs *fs, struct uinode *ip)
{
	if (ip->persist == LIBFS_P_MEMORY || fs->readonly)
		return 0;
	if (ip->isnew || ip->d.type == UFS_T_DIR)
		return ufs_sync(fs);
	uint64_t writes = fs->cnt.data_writes;
	int err = ufs_flush_data(fs, ip, NULL);
	if (err == 0 && fs->cnt.data_writes != writes)
		err = ufs_barrier(fs);
	if (err == 0)
		err = ufs_push_meta(fs, ip);
	if (err == 0)
		err = ufs_writeback_all(fs);
	return err;
}
