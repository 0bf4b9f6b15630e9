/*
 * alloc.c - where unixfs puts things, decided from the free map the kernel
 * exports (no system call to look).  The map may change under us as other
 * programs allocate, so every choice is only a proposal: the exodisk
 * refuses a sector someone else took and we look again (ufs_taken).
 *
 * Policy, after thesis section 4.1 and the small-file experiments of 5.4:
 *  - inodes are packed four to a block, and a new block goes near the
 *    directory the file is created in;
 *  - data goes in runs as long as the free map allows, placed right after
 *    the file's last extent when that space is free (so appending extends
 *    one extent), else after the inode.
 */
#include <errno.h>
#include "userfs/unixfs/ufs.h"

/* Room kept for map nodes and inode blocks, which are not reserved. */
static uint64_t slack(struct ufs *fs)
{
	return 64 + fs->resv / 64;
}

int ufs_reserve(struct ufs *fs, struct uinode *ip, uint64_t end)
{
	uint64_t blocks = (end + UFS_BSIZE - 1) / UFS_BSIZE;
	uint64_t need = blocks * UFS_BSECT > ip->mapped ? blocks * UFS_BSECT - ip->mapped : 0;
	if (need <= ip->resv)
		return 0;
	uint64_t extra = need - ip->resv;
	for (int round = 0; fs->resv + extra + slack(fs) > fs->free_est; round++) {
		/* Count again (others allocate and free too); then try freeing
		 * what is waiting for a sync (removed files). */
		if (round == 2)
			return -ENOSPC;
		if (round == 1) {
			int err = ufs_sync(fs);
			if (err < 0)
				return err;
		}
		fs->free_est = edc_fm_count_free(&fs->fm);
	}
	ip->resv += extra;
	fs->resv += extra;
	return 0;
}

void ufs_unreserve(struct ufs *fs, struct uinode *ip)
{
	uint64_t blocks = (ip->d.size + UFS_BSIZE - 1) / UFS_BSIZE;
	uint64_t need = blocks * UFS_BSECT > ip->mapped ? blocks * UFS_BSECT - ip->mapped : 0;
	if (ip->unlinked || ip->persist == LIBFS_P_MEMORY)
		need = 0;
	if (ip->resv > need) {
		fs->resv -= ip->resv - need;
		ip->resv = need;
	}
}

int ufs_reserved(struct ufs *fs, uint64_t sector, uint64_t count)
{
	uint64_t l = fs->sb.lock_sector;
	return l >= sector && l < sector + count;
}

int ufs_is_memblk(struct ufs *fs, uint64_t sector)
{
	for (uint32_t i = 0; i < fs->nmemblk; i++)
		if (fs->memblk[i] == sector)
			return 1;
	return 0;
}

void ufs_memblk_put(struct ufs *fs, uint64_t sector)
{
	for (uint32_t i = 0; i < fs->nmemblk; i++)
		if (fs->memblk[i] == sector && --fs->memused[i] == 0) {
			/* Its last exonode is gone, and so (never written) is the
			 * block: the sectors may become anything, even ordinary
			 * inodes, which must be written back. */
			fs->nmemblk--;
			fs->memblk[i] = fs->memblk[fs->nmemblk];
			fs->memused[i] = fs->memused[fs->nmemblk];
			return;
		}
}

int ufs_taken(int64_t r)
{
	/* The free map is live, but between our look and our request another
	 * process may allocate there: its extent (ED_E_ALLOCATED, or ED_E_KIND
	 * when we asked for an exonode), its exonode block (ED_E_SLOT for the
	 * slot it took, ED_E_XNSIZE if its exonodes have another size), or a
	 * block of its that is not in the cache (ED_E_NOTCACHED, and our
	 * capabilities cannot read it in). */
	return r == ED_E_ALLOCATED || r == ED_E_KIND || r == ED_E_SLOT || r == ED_E_XNSIZE ||
	       r == ED_E_NOTCACHED;
}

/* A free run of n sectors (aligned to `align`) at or after goal that
 * avoids the lock sector; UINT64_MAX if none. */
static uint64_t find_run(struct ufs *fs, uint64_t goal, uint64_t n, uint64_t align)
{
	for (int tries = 0; tries < 4; tries++) {
		uint64_t s = edc_fm_find(&fs->fm, goal, n, align);
		if (s == UINT64_MAX || !ufs_reserved(fs, s, n))
			return s;
		goal = fs->sb.lock_sector + 1;
	}
	return UINT64_MAX;
}

/* Try the free slots of block blk; 0 and the slot, or an exodisk code. */
static int64_t try_block(struct ufs *fs, uint64_t blk, uint16_t *slot)
{
	int64_t r = ED_E_SLOT;
	for (uint16_t s = 0; s < UFS_IPB; s++) {
		r = ufs_xn_alloc(fs, blk, s, UFS_INODE_BYTES);
		if (r == 0) {
			*slot = s;
			return 0;
		}
		if (r != ED_E_SLOT)
			return r;          /* not a block of inodes we can use */
	}
	return r;
}

int ufs_alloc_inode(struct ufs *fs, uint64_t near, int memory, uint64_t *sector, uint16_t *slot)
{
	if (memory) {
		for (uint32_t i = 0; i < fs->nmemblk; i++)
			if (try_block(fs, fs->memblk[i], slot) == 0) {
				*sector = fs->memblk[i];
				fs->memused[i]++;
				return 0;
			}
		if (fs->nmemblk == UFS_MEMBLKS)
			return -ENOSPC;
	} else if (fs->iblk_hint != 0 && try_block(fs, fs->iblk_hint, slot) == 0) {
		*sector = fs->iblk_hint;
		return 0;
	}
	/* A new block near `near`. */
	uint64_t goal = near;
	for (int tries = 0; tries < 8; tries++) {
		uint64_t b = find_run(fs, goal, UFS_IBLK_SECT, UFS_IBLK_SECT);
		if (b == UINT64_MAX)
			return -ENOSPC;
		/* A memory-only block must be known as one before its first
		 * change, which would otherwise be queued for write-back. */
		if (memory) {
			fs->memblk[fs->nmemblk] = b;
			fs->memused[fs->nmemblk++] = 1;
		}
		int64_t r = ufs_xn_alloc(fs, b, 0, UFS_INODE_BYTES);
		if (r == 0) {
			*sector = b;
			*slot = 0;
			if (!memory)
				fs->iblk_hint = b;
			return 0;
		}
		if (memory)
			fs->nmemblk--;
		if (!ufs_taken(r))
			return ufs_err(r);
		goal = b + UFS_IBLK_SECT;     /* someone was faster: look further on */
	}
	return -ENOSPC;
}

int64_t ufs_alloc_run(struct ufs *fs, uint64_t goal, uint64_t want, uint64_t min, uint64_t unit,
                      uint64_t *start)
{
	/* Try the whole run, then halves of it, down to min. */
	want = (want + unit - 1) / unit * unit;
	min = (min + unit - 1) / unit * unit;
	if (want < min)
		want = min;
	for (uint64_t n = want;; n = n / 2 / unit * unit) {
		if (n < min)
			n = min;
		uint64_t s = find_run(fs, goal, n, unit);
		if (s != UINT64_MAX) {
			*start = s;
			return (int64_t)n;
		}
		if (n == min)
			return -ENOSPC;
	}
}
