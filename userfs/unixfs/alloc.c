/*
 * alloc.c - where unixfs puts things, decided from the free map the kernel
 * exports (no system call to look).  The map may change under us as other
 * programs allocate, so every choice is only a proposal: the exodisk
 * refuses a sector someone else took and we look again (kit_taken).
 *
 * Policy:
 *  - dnodes and fnodes are packed two to a block; a burst of mkdirs or
 *    large files fills one block before starting the next, near the
 *    directory they are made in, so a cold read of sibling directories
 *    reads one block for two of them;
 *  - a directory's space grows next to its last extent when it can
 *    (dspace.c), else near its dnode;
 *  - large files' data goes in runs as long as the free map allows (map.c).
 *
 * Delayed allocation: bytes are given sectors only when they are written
 * out, so sectors are promised when a write is accepted (ufs_promise): a
 * full disk is -ENOSPC from write(), never a failed write-back later.
 */
#include <errno.h>
#include "userfs/unixfs/ufs.h"

/* Room kept for exonode blocks, map nodes and directory blocks, which are
 * not promised. */
static uint64_t slack(struct ufs *fs)
{
	return 256 + fs->resv / 32;
}

int ufs_promise(struct ufs *fs, struct uinode *ip, uint64_t sectors)
{
	if (sectors == 0)
		return 0;
	for (int round = 0; fs->resv + sectors + slack(fs) > fs->free_est; round++) {
		/* Count again (others allocate and free too); then try freeing
		 * what is waiting for a sync (removed files). */
		if (round == 2)
			return -ENOSPC;
		if (round == 1 && !fs->in_sync) {
			int err = ufs_sync(fs);
			if (err < 0)
				return err;
		}
		fs->free_est = edc_fm_count_free(&fs->k.fm);
	}
	ip->resv += sectors;
	fs->resv += sectors;
	return 0;
}

void ufs_unpromise(struct ufs *fs, struct uinode *ip, uint64_t sectors)
{
	if (sectors > ip->resv)
		sectors = ip->resv;
	ip->resv -= sectors;
	fs->resv -= sectors < fs->resv ? sectors : fs->resv;
}

/* How far past its goal a run is looked for before the next-fit cursor:
 * 2 MiB, 64 words of the free map. */
#define NEAR_REACH 4096u

/* A free run of n sectors (aligned to `align`), never starting where an
 * anchor keeps its lock (kit_find); UINT64_MAX if none.  Near the goal
 * first (a file's or directory's extents next to each other), else from
 * the cursor on, which then moves past what it found (next-fit).
 *
 * Not first-fit from the goal: a goal behind a long stretch of used and
 * short free runs (a directory made early, its dnode or last extent among
 * everything written since) made every search walk that stretch, again and
 * again, and a disk whose data reached its end walked all of it: on 16 GiB
 * from 780,000 files on (docs/unixfs.md, "Allocation").  The cursor passes
 * each stretch once per round of the disk. */
static uint64_t find_run(struct ufs *fs, uint64_t goal, uint64_t n, uint64_t align)
{
	uint64_t s = kit_find_near(&fs->k, goal, NEAR_REACH, n, align);
	if (s != UINT64_MAX)
		return s;
	s = kit_find(&fs->k, fs->next_fit, n, align);
	if (s != UINT64_MAX)
		fs->next_fit = s + n;
	return s;
}

uint64_t ufs_room_after(struct ufs *fs, uint64_t start, uint64_t want)
{
	/* (start is a multiple of 8: a run from it covers another anchor's lock
	 * sector only if that anchor's own sector is free, when it is none.) */
	uint64_t n = edc_fm_run(&fs->k.fm, start, want);
	return n / UFS_BSECT * UFS_BSECT;
}

int ufs_alloc_xn(struct ufs *fs, uint64_t near, struct uxn *x)
{
	/* The kit's pool: the next slot of the block being filled, else a new
	 * block near `near`. */
	uint64_t sector;
	uint16_t slot;
	fs->xpool.len = UFS_XN_BYTES;
	/* Many new nodes near one place (a burst of mkdirs in one directory):
	 * look on from the block filled last, not from `near` again past all
	 * the blocks the burst took before, a walk that grows with them. */
	uint64_t goal = near;
	if (near == fs->xnear && fs->xpool.hint != 0 && fs->xpool.hint > near)
		goal = fs->xpool.hint;
	fs->xnear = near;
	int err = kit_alloc_xn(&fs->k, &fs->xpool, goal, &sector, &slot);
	if (err < 0)
		return err;
	ufs_xn_set(x, sector, slot);
	if (slot == 0)
		fs->free_est -= UFS_XBLK_SECT < fs->free_est ? UFS_XBLK_SECT : fs->free_est;
	/* A new exonode is a change to write back like any other. */
	return ufs_touch(fs, sector, slot, 0);
}

void ufs_xn_freed(struct ufs *fs, uint64_t sector, uint16_t slot)
{
	/* A freed slot can be had again once its block is written back; the
	 * block we fill next is usually a better place anyway. */
	(void)fs;
	(void)sector;
	(void)slot;
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

#define ID_BATCH 4096

int ufs_new_id(struct ufs *fs, uint64_t *id)
{
	if (fs->id_next >= fs->id_limit) {
		/* Raise the superblock's counter first: it is written back before
		 * any record carrying one of these ids can be (sync.c), so after
		 * a crash no id handed out may be handed out again. */
		uint64_t base = fs->sb.next_id > fs->id_next ? fs->sb.next_id : fs->id_next;
		fs->sb.next_id = base + ID_BATCH;
		int err = ufs_push_sb(fs);
		if (err < 0) {
			fs->sb.next_id = base;
			return err;
		}
		fs->id_next = base;
		fs->id_limit = base + ID_BATCH;
	}
	*id = fs->id_next++;
	return 0;
}
