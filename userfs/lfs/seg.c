/*
 * seg.c - segments: the usage table, which segments may be written again,
 * the pool, space, and giving segments back to the exodisk.
 *
 * A segment is a chunk of the file system's virtual volume (libos/vvol):
 * it has disk sectors only while mapped.  The log takes mapped segments;
 * fresh ones are mapped from the exodisk's free space (the volume's
 * allocator, which absorbs other programs' races); empty ones beyond a
 * small pool are released at checkpoints.
 *
 * The usage table (SUT) has, per segment, its live bytes - the bytes of
 * blocks, inodes and table blocks that something current points at - and
 * the time of its newest block (the cleaner's age).  Live counts change
 * as blocks are written (+) and superseded or freed (-).
 *
 * When may an empty segment be written again?  Only once a durable
 * checkpoint says it is empty and it has not been written since (cpzero,
 * set by ckpt.c after the checkpoint record's flush): the checkpoint a
 * mount would use then points nowhere into it, and roll-forward from that
 * checkpoint never walks through it (tag < cpseq says the same for the
 * segments roll-forward did walk).  Never the current or next segment of
 * the log.  Emptied segments beyond a small pool are given back to the
 * exodisk at that moment.
 *
 * Space (lfs_reserve): before a change, room for it and for the commit and
 * checkpoint that must follow it, so a commit never fails for space.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

int lfs_sut_init(struct lfs *fs)
{
	fs->sut = calloc(fs->sb.nsegs, sizeof *fs->sut);
	fs->nsutblk = (uint32_t)((fs->sb.nsegs + LFS_PER_BLK - 1) / LFS_PER_BLK);
	fs->sutaddr = calloc(fs->nsutblk, sizeof *fs->sutaddr);
	fs->schgcap = 64;
	fs->schg = malloc(fs->schgcap * sizeof *fs->schg);
	fs->sutdirty = calloc(fs->nsutblk, 1);
	fs->sutchg = malloc(fs->nsutblk * sizeof *fs->sutchg);
	fs->cplcap = 64;
	fs->cpl = malloc(fs->cplcap * sizeof *fs->cpl);
	return fs->sut && fs->sutaddr && fs->schg && fs->sutdirty && fs->sutchg && fs->cpl ? 0
	                                                                                  : -ENOMEM;
}

void lfs_sut_free(struct lfs *fs)
{
	free(fs->sut);
	free(fs->sutaddr);
	free(fs->schg);
	free(fs->sutdirty);
	free(fs->sutchg);
	free(fs->cpl);
	fs->sutdirty = NULL;
	fs->sutchg = NULL;
	fs->cpl = NULL;
	fs->sut = NULL;
	fs->sutaddr = NULL;
	fs->schg = NULL;
}

void lfs_seg_mark(struct lfs *fs, uint64_t s)
{
	struct lfs_seg *g = &fs->sut[s];
	if (g->dirty || fs->cpl_all)
		return;
	if (fs->ncpl == fs->cplcap) {
		uint32_t *v = realloc(fs->cpl, 2 * fs->cplcap * sizeof *v);
		if (v == NULL) {
			fs->cpl_all = 1;         /* the checkpoint looks at every one */
			return;
		}
		fs->cpl = v;
		fs->cplcap *= 2;
	}
	g->dirty = 1;
	fs->cpl[fs->ncpl++] = (uint32_t)s;
}

void lfs_sut_dirty(struct lfs *fs, uint64_t s)
{
	uint32_t b = (uint32_t)(s / LFS_PER_BLK);
	lfs_seg_mark(fs, s);
	if (!fs->sutdirty[b]) {
		fs->sutdirty[b] = 1;
		fs->sutchg[fs->nsutchg++] = b;
	}
}

void lfs_seg_touch(struct lfs *fs, uint64_t s)
{
	struct lfs_seg *g = &fs->sut[s];
	lfs_sut_dirty(fs, s);
	if (g->changed)
		return;
	if (fs->nschg == fs->schgcap) {
		uint32_t *v = realloc(fs->schg, 2 * fs->schgcap * sizeof *v);
		if (v == NULL)
			return;                  /* then it goes in the next commit too */
		fs->schg = v;
		fs->schgcap *= 2;
	}
	g->changed = 1;
	fs->schg[fs->nschg++] = (uint32_t)s;
	fs->pend += sizeof(struct lfs_dsut);
}

void lfs_seg_use(struct lfs *fs, uint64_t lba, int64_t bytes)
{
	uint64_t s = lfs_seg_of(fs, lba);
	if (s == 0 || s >= fs->sb.nsegs)
		return;
	struct lfs_seg *g = &fs->sut[s];
	if (bytes < 0 && (uint64_t)-bytes > g->e.live) {
		lfs_damaged(fs, "segment usage below zero", s);
		g->e.live = 0;
	} else {
		g->e.live = (uint32_t)((int64_t)g->e.live + bytes);
	}
	if (bytes > 0) {
		g->e.mtime = lfs_now();
		g->cpzero = 0;
	}
	lfs_seg_touch(fs, s);
}

int lfs_seg_reusable(const struct lfs *fs, uint64_t s)
{
	const struct lfs_seg *g = &fs->sut[s];
	return s != 0 && g->cpzero && g->e.live == 0 && !g->reserved && g->tag < fs->cpseq;
}

/* Map a reusable segment that has no sectors.  1 done, 0 none left or
 * the disk is full. */
static int map_one(struct lfs *fs)
{
	for (uint64_t i = 0; i + 1 < fs->sb.nsegs; i++) {
		uint64_t s = 1 + (fs->scan + i) % (fs->sb.nsegs - 1);
		if (!lfs_seg_reusable(fs, s) || (fs->sut[s].e.flags & LFS_SEG_MAPPED))
			continue;
		struct vvol_place pl;
		int r = vvol_chunk(&fs->v, s, 1, &pl);
		if (r <= 0)
			return 0;
		fs->sut[s].e.flags |= LFS_SEG_MAPPED;
		lfs_seg_touch(fs, s);
		fs->st.segs_mapped++;
		fs->scan = s;
		return 1;
	}
	return 0;
}

uint64_t lfs_seg_take(struct lfs *fs)
{
	for (uint64_t i = 0; i + 1 < fs->sb.nsegs; i++) {
		uint64_t s = 1 + (fs->scan + i) % (fs->sb.nsegs - 1);
		if (lfs_seg_reusable(fs, s) && (fs->sut[s].e.flags & LFS_SEG_MAPPED)) {
			fs->scan = s;
			return s;
		}
	}
	return map_one(fs) ? fs->scan : 0;
}

/* Bytes the log can still take without a checkpoint: the rest of the
 * current segment, the next one, empty mapped ones, and as many more as
 * the disk has room for. */
uint64_t lfs_avail(struct lfs *fs)
{
	uint64_t sb = lfs_segbytes(fs);
	/* The count of whole segments costs a look at every segment and at
	 * the free map: it is kept until the log enters a segment or a
	 * checkpoint frees some (fs->av_valid cleared). */
	if (!fs->av_valid) {
		uint64_t own = 0, unmapped = 0;
		for (uint64_t s = 1; s < fs->sb.nsegs; s++) {
			if (!lfs_seg_reusable(fs, s))
				continue;
			if (fs->sut[s].e.flags & LFS_SEG_MAPPED)
				own++;
			else
				unmapped++;
		}
		uint64_t disk = edc_fm_count_free(&fs->k.fm) / fs->sb.seg_sect;
		uint64_t more = disk < unmapped ? disk : unmapped;
		/* Keep a few of the disk's free segments for its own metadata (the
		 * volume's map nodes, the exodisk's). */
		more = more > 2 ? more - 2 : 0;
		fs->av_segs = own + more;
		fs->av_valid = 1;
	}
	return (uint64_t)(fs->sb.seg_sect - fs->fill) * LFS_SECT + (fs->next ? sb : 0) +
	       fs->av_segs * sb;
}

/* What the next commit and checkpoint may take, with `bytes` more, in the
 * worst case: headers and trailers (1/16), a block's worth lost at each
 * segment's end, the inode map blocks changed and two more, every SUT
 * block, and a segment to spare. */
uint64_t lfs_worst(struct lfs *fs, uint64_t bytes)
{
	uint64_t sb = lfs_segbytes(fs);
	uint64_t b = fs->pend + bytes;
	b += b / 16 + (b / sb + 2) * LFS_BSIZE;
	b += (fs->nimdirty + 2 + fs->nsutblk) * LFS_BSIZE + 8 * LFS_SECT;
	return b + sb;
}

int lfs_reserve(struct lfs *fs, uint64_t bytes, int freeing)
{
	if (fs->rdonly)
		return -EROFS;
	if (fs->err)
		return fs->err;
	/* A change that frees space may use the last segment of slack that
	 * every other keeps, so that a full file system can be emptied. */
	uint64_t need = lfs_worst(fs, bytes) + (freeing ? 0 : lfs_segbytes(fs));
	for (int tries = 0; tries < 16; tries++) {
		if (lfs_avail(fs) >= need)
			return 0;
		fs->av_valid = 0;            /* look again before cleaning */
		if (lfs_avail(fs) >= need)
			return 0;
		if (fs->cleaning || fs->in_commit || fs->in_ckpt || lfs_clean(fs, 4) <= 0)
			break;
		need = lfs_worst(fs, bytes) + (freeing ? 0 : lfs_segbytes(fs));
	}
	return -ENOSPC;
}

uint64_t lfs_free_segs(struct lfs *fs)
{
	uint64_t disk = edc_fm_count_free(&fs->k.fm) / fs->sb.seg_sect;
	uint64_t unmapped = 0, own = 0;
	for (uint64_t s = 1; s < fs->sb.nsegs; s++) {
		if (fs->sut[s].e.live != 0 || fs->sut[s].reserved)
			continue;
		if (fs->sut[s].e.flags & LFS_SEG_MAPPED)
			own++;
		else
			unmapped++;
	}
	return own + (disk < unmapped ? disk : unmapped);
}

int lfs_release(struct lfs *fs)
{
	uint64_t keep = fs->pool_target, released = 0;
	for (uint64_t s = 1; s < fs->sb.nsegs; s++) {
		if (!lfs_seg_reusable(fs, s) || !(fs->sut[s].e.flags & LFS_SEG_MAPPED))
			continue;
		if (keep > 0) {
			keep--;
			continue;
		}
		lfs_rc_drop(fs, s);
		int e = vvol_discard(&fs->v, s * fs->sb.seg_sect, fs->sb.seg_sect);
		if (e < 0)
			return e;
		fs->sut[s].e.flags &= ~LFS_SEG_MAPPED;
		fs->sut[s].e.mtime = 0;
		lfs_sut_dirty(fs, s);
		fs->st.segs_released++;
		fs->av_valid = 0;
		released++;
	}
	/* Commit the map now: the sectors are the exodisk's free space again
	 * once that is durable, for us and for everyone else. */
	return released ? lfs_harden(fs) : 0;
}

void lfs_sut_block(struct lfs *fs, uint32_t i, void *blk)
{
	memset(blk, 0, LFS_BSIZE);
	struct lfs_sutent *e = (struct lfs_sutent *)((uint8_t *)blk + sizeof(struct lfs_blkhdr));
	for (uint32_t j = 0; j < LFS_PER_BLK; j++) {
		uint64_t s = (uint64_t)i * LFS_PER_BLK + j;
		if (s >= fs->sb.nsegs)
			break;
		/* Without the table blocks' own bytes (a mount adds them). */
		const struct lfs_seg *g = &fs->sut[s];
		uint32_t own = (uint32_t)g->nsut * LFS_BSIZE;
		e[j] = g->e;
		e[j].live = g->e.live > own ? g->e.live - own : 0;
	}
	lfs_seal_block(blk, LFS_SUT_MAGIC, i);
}
