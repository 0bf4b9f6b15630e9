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
 *
 * Sets.  Nothing that runs while the file system works looks at every
 * segment: each segment is kept in the set it belongs to - reusable and
 * not mapped (fs->free), reusable and mapped (fs->pool), or a candidate
 * for the cleaner (fs->cand: a heap by the time of the newest block, the
 * oldest on top, per band of utilization) - and moved whenever something
 * that decides it changes (lfs_seg_changed).  Taking a segment, counting
 * the writable ones, giving them back and choosing what to clean then
 * cost what they find, not the volume.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

int lfs_sut_init(struct lfs *fs)
{
	/* Per usage table block (LFS_PER_BLK segments), a few bytes; the
	 * segments' own entries and the sets come as they are wanted. */
	fs->nsutblk = (uint32_t)((fs->sb.nsegs + LFS_PER_BLK - 1) / LFS_PER_BLK);
	fs->sutb = calloc(fs->nsutblk, sizeof *fs->sutb);
	fs->hwm = fs->sb.nsegs;
	fs->nsutload = 0;
	fs->free.n = fs->free.cap = fs->pool.n = fs->pool.cap = 0;
	fs->sutaddr = calloc(fs->nsutblk, sizeof *fs->sutaddr);
	fs->schgcap = 64;
	fs->schg = malloc(fs->schgcap * sizeof *fs->schg);
	fs->sutdirty = calloc(fs->nsutblk, 1);
	fs->sutchg = malloc(fs->nsutblk * sizeof *fs->sutchg);
	fs->sutload = calloc(fs->nsutblk, 1);
	fs->cplcap = fs->cpwcap = 64;
	fs->cpl = malloc(fs->cplcap * sizeof *fs->cpl);
	fs->cpw = malloc(fs->cpwcap * sizeof *fs->cpw);
	fs->ncpw = 0;
	return fs->sutb && fs->sutload && fs->sutaddr && fs->schg && fs->sutdirty && fs->sutchg &&
	       fs->cpl && fs->cpw ? 0 : -ENOMEM;
}

void lfs_sut_free(struct lfs *fs)
{
	for (uint32_t i = 0; fs->sutb != NULL && i < fs->nsutblk; i++)
		free(fs->sutb[i]);
	free(fs->sutb);
	free(fs->sutaddr);
	free(fs->schg);
	free(fs->sutdirty);
	free(fs->sutchg);
	free(fs->cpl);
	free(fs->cpw);
	free(fs->free.v);
	free(fs->pool.v);
	free(fs->sutload);
	fs->sutload = NULL;
	for (int b = 0; b < LFS_NBAND; b++) {
		free(fs->cand[b].v);
		fs->cand[b].v = NULL;
		fs->cand[b].n = fs->cand[b].cap = 0;
	}
	fs->free.v = fs->pool.v = NULL;
	fs->free.n = fs->free.cap = fs->pool.n = fs->pool.cap = 0;
	fs->sutdirty = NULL;
	fs->sutchg = NULL;
	fs->cpl = fs->cpw = NULL;
	fs->ncpw = 0;
	fs->sutb = NULL;
	fs->sutaddr = NULL;
	fs->schg = NULL;
	fs->nsutload = 0;
}

/* ---- the usage table, read as it is wanted ------------------------------------------------ */

int lfs_debug_sut_nomem;

/* Memory for block i's entries (zeros): 0 or -ENOMEM. */
int lfs_sut_mem(struct lfs *fs, uint32_t i)
{
	if (fs->sutb[i] == NULL && lfs_debug_sut_nomem) {
		lfs_debug_sut_nomem++;        /* (the test counts the failures) */
		return -ENOMEM;
	}
	if (fs->sutb[i] == NULL)
		fs->sutb[i] = calloc(LFS_PER_BLK, sizeof(struct lfs_seg));
	return fs->sutb[i] != NULL ? 0 : -ENOMEM;
}

/* Block i's entries into memory: as the last checkpoint wrote them, plus
 * the table blocks' own bytes (nsut, counted by the mount from the
 * checkpoint's pointers), then into their sets.  Without memory for them
 * the file system cannot go on: read-only. */
static int sut_load(struct lfs *fs, uint32_t i)
{
	if (lfs_sut_mem(fs, i) < 0) {
		lfs_damaged(fs, "no memory for a block of the segment usage table", i);
		fs->err = fs->err ? fs->err : -ENOMEM;
		return -ENOMEM;
	}
	fs->sutload[i] = 1;
	fs->nsutload++;
	uint64_t s0 = (uint64_t)i * LFS_PER_BLK;
	uint8_t *blk = NULL;
	/* Never written, or only segments never used: all zeros. */
	if (fs->sutaddr[i] != 0 && s0 < fs->hwm) {
		blk = malloc(LFS_BSIZE);
		int e = blk ? lfs_read_block(fs, fs->sutaddr[i], blk) : -ENOMEM;
		fs->st.sut_reads++;
		if (e == 0 && !lfs_check_block(blk, LFS_SUT_MAGIC, i))
			e = -EIO;
		if (e < 0) {
			fs->sutbad++;
			lfs_damaged(fs, "a block of the segment usage table cannot be read", i);
			free(blk);
			blk = NULL;
		}
	}
	const struct lfs_sutent *se = blk ? (const void *)(blk + sizeof(struct lfs_blkhdr)) : NULL;
	for (uint32_t j = 0; j < LFS_PER_BLK; j++) {
		uint64_t s = s0 + j;
		if (s >= fs->sb.nsegs)
			break;
		struct lfs_seg *g = lfs_sg(fs, s);
		if (se != NULL)
			g->e = se[j];
		if (g->nsut > 0) {
			g->e.live += (uint32_t)g->nsut * LFS_BSIZE;
			g->e.flags |= LFS_SEG_MAPPED;
		}
		g->cpzero = g->e.live == 0;
		fs->live_total += g->e.live;
		if (s != 0)
			lfs_seg_changed(fs, s);
	}
	free(blk);
	return 0;
}

/* A segment to stand for those whose block cannot be had (no memory: the
 * file system is read-only by then, fs->err set).  Whatever is done to it
 * goes nowhere: it is put on no list and no table block is marked for the
 * checkpoint (which would find no entries to write: lfs_sut_block). */
static struct lfs_seg no_seg;

struct lfs_seg *lfs_seg_load(struct lfs *fs, uint64_t s)
{
	if (!fs->sutload[s / LFS_PER_BLK] && sut_load(fs, (uint32_t)(s / LFS_PER_BLK)) < 0) {
		memset(&no_seg, 0, sizeof no_seg);
		return &no_seg;
	}
	if (s >= fs->hwm && s < fs->sb.nsegs) {
		/* Used from now on: it, and any skipped below it, are in their
		 * sets like every other segment (free, the skipped ones). */
		uint64_t old = fs->hwm;
		fs->hwm = s + 1;
		for (uint64_t t = old; t <= s; t++) {
			if (!fs->sutload[t / LFS_PER_BLK] && sut_load(fs, (uint32_t)(t / LFS_PER_BLK)) < 0)
				break;
			lfs_seg_changed(fs, t);
		}
	}
	return lfs_sg(fs, s);
}

const struct lfs_seg *lfs_seg_peek(const struct lfs *fs, uint64_t s)
{
	static const struct lfs_seg zero;
	if (s >= fs->sb.nsegs || s >= fs->hwm || !fs->sutload[s / LFS_PER_BLK])
		return &zero;
	return lfs_sg(fs, s);
}

/* Blocks that can hold a used segment: those below the high-water mark. */
static uint32_t sut_used_blocks(const struct lfs *fs)
{
	return (uint32_t)((fs->hwm + LFS_PER_BLK - 1) / LFS_PER_BLK);
}

int lfs_sut_all_loaded(const struct lfs *fs)
{
	return fs->nsutload >= sut_used_blocks(fs);
}

void lfs_sut_load_all(struct lfs *fs)
{
	/* Blocks wholly above the mark hold only never-used segments: zeros,
	 * in no set; they stay out of memory. */
	for (uint32_t i = 0; i < sut_used_blocks(fs) && !lfs_sut_all_loaded(fs); i++)
		if (!fs->sutload[i] && sut_load(fs, i) < 0)
			return;
}

void lfs_seg_mark(struct lfs *fs, uint64_t s)
{
	struct lfs_seg *g = lfs_seg(fs, s);
	if (g->dirty || fs->cpl_all || g == &no_seg)
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
	if (lfs_seg(fs, s) == &no_seg)
		return;
	lfs_seg_mark(fs, s);
	if (!fs->sutdirty[b]) {
		fs->sutdirty[b] = 1;
		fs->sutchg[fs->nsutchg++] = b;
	}
}

void lfs_seg_touch(struct lfs *fs, uint64_t s)
{
	struct lfs_seg *g = lfs_seg(fs, s);
	if (g == &no_seg)
		return;
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

void lfs_seg_use_slow(struct lfs *fs, uint64_t lba, int64_t bytes)
{
	uint64_t s = lfs_seg_of(fs, lba);
	if (s == 0 || s >= fs->sb.nsegs)
		return;
	struct lfs_seg *g = lfs_seg(fs, s);
	if (g == &no_seg)
		return;
	uint32_t old = g->e.live;
	if (bytes < 0 && (uint64_t)-bytes > g->e.live) {
		lfs_damaged(fs, "segment usage below zero", s);
		g->e.live = 0;
	} else {
		g->e.live = (uint32_t)((int64_t)g->e.live + bytes);
	}
	fs->live_total = fs->live_total - old + g->e.live;
	if (bytes > 0) {
		if (g->where >= LFS_IN_CAND)
			lfs_seg_unlist(fs, s);     /* its key changes */
		/* The time of the operation (or of the last PS closed): a clock
		 * read per block was a tenth of writing a small file, and the
		 * cleaner's ages are seconds. */
		g->e.mtime = lfs_optime(fs);
		g->cpzero = 0;
	}
	/* Most blocks go to the log's own segment, already on every list
	 * (changed, checkpoint, dirty table block) and in no set: nothing
	 * more to do for it. */
	if (!g->changed || !g->dirty || !fs->sutdirty[s / LFS_PER_BLK])
		lfs_seg_touch(fs, s);
	if (!g->reserved || g->where != LFS_IN_NONE)
		lfs_seg_changed(fs, s);
}

int lfs_seg_reusable(const struct lfs *fs, uint64_t s)
{
	const struct lfs_seg *g = lfs_sg(fs, s);
	return s != 0 && g->cpzero && g->e.live == 0 && !g->reserved && g->tag < fs->cpseq;
}

/* ---- the sets ------------------------------------------------------------------------- */

static struct lfs_segset *set_of(struct lfs *fs, uint8_t where)
{
	if (where == LFS_IN_FREE)
		return &fs->free;
	if (where == LFS_IN_POOL)
		return &fs->pool;
	return &fs->cand[where - LFS_IN_CAND];
}

static uint64_t key(const struct lfs *fs, uint32_t s)
{
	return lfs_sg(fs, s)->e.mtime;
}

static void put_at(struct lfs *fs, struct lfs_segset *h, uint32_t i, uint32_t s)
{
	h->v[i] = s;
	lfs_sg(fs, s)->pos = i;
}

/* The heap h after entry i's key fell (up) or rose (down). */
static void sift(struct lfs *fs, struct lfs_segset *h, uint32_t i)
{
	uint32_t s = h->v[i];
	uint64_t k = key(fs, s);
	while (i > 0 && key(fs, h->v[(i - 1) / 2]) > k) {
		put_at(fs, h, i, h->v[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && key(fs, h->v[c + 1]) < key(fs, h->v[c]))
			c++;
		if (key(fs, h->v[c]) >= k)
			break;
		put_at(fs, h, i, h->v[c]);
		i = c;
	}
	put_at(fs, h, i, s);
}

void lfs_seg_unlist(struct lfs *fs, uint64_t s)
{
	struct lfs_seg *g = lfs_sg(fs, s);
	if (g->where == LFS_IN_NONE)
		return;
	struct lfs_segset *h = set_of(fs, g->where);
	uint32_t i = g->pos, last = h->v[--h->n];
	g->where = LFS_IN_NONE;
	if (i == h->n)
		return;
	put_at(fs, h, i, last);
	if (lfs_sg(fs, last)->where >= LFS_IN_CAND)
		sift(fs, h, i);
}

/* Where segment s belongs now. */
static uint8_t belongs(const struct lfs *fs, uint64_t s)
{
	uint64_t sb = lfs_segbytes(fs);
	if (s >= fs->hwm || !fs->sutload[s / LFS_PER_BLK])
		return LFS_IN_NONE;          /* never used, or not read yet */
	const struct lfs_seg *g = lfs_sg(fs, s);
	if (lfs_seg_reusable(fs, s))
		return (g->e.flags & LFS_SEG_MAPPED) ? LFS_IN_POOL : LFS_IN_FREE;
	if (s == 0 || !(g->e.flags & LFS_SEG_MAPPED) || g->reserved || g->stuck || g->e.live == 0 ||
	    g->e.live + 2 * LFS_BSIZE > sb)
		return LFS_IN_NONE;
	return (uint8_t)(LFS_IN_CAND + (uint64_t)g->e.live * LFS_NBAND / (sb + 1));
}

void lfs_seg_changed(struct lfs *fs, uint64_t s)
{
	if (!fs->sutload[s / LFS_PER_BLK])
		return;                      /* not read yet: in no set */
	struct lfs_seg *g = lfs_sg(fs, s);
	uint8_t w = belongs(fs, s);
	if (w == g->where)
		return;
	lfs_seg_unlist(fs, s);
	if (w == LFS_IN_NONE)
		return;
	struct lfs_segset *h = set_of(fs, w);
	if (h->n == h->cap) {
		/* The sets grow with the segments used.  Without memory a
		 * segment is in none: no candidate, or not reused until it
		 * changes again (the checkpoint after next settles it). */
		uint32_t cap = h->cap ? 2 * h->cap : 16;
		uint32_t *v = realloc(h->v, cap * sizeof *v);
		if (v == NULL)
			return;
		h->v = v;
		h->cap = cap;
	}
	g->where = w;
	put_at(fs, h, h->n++, (uint32_t)s);
	if (w >= LFS_IN_CAND)
		sift(fs, h, g->pos);
}

int lfs_seg_sets_build(struct lfs *fs)
{
	/* A new file system: no segment used; every block of the table is
	 * zeros, and comes into memory (unread) when one of its segments is
	 * first wanted. */
	fs->hwm = 1;
	fs->live_total = 0;
	fs->av_valid = 0;
	return 0;
}

uint64_t lfs_seg_sets_check(struct lfs *fs)
{
	uint64_t bad = 0, live = 0;
	for (uint64_t s = 1; s < fs->sb.nsegs; s++) {
		if (!fs->sutload[s / LFS_PER_BLK])
			continue;
		const struct lfs_seg *g = lfs_sg(fs, s);
		live += g->e.live;
		uint8_t w = belongs(fs, s);
		/* A candidate without memory for its band is left out. */
		if (g->where != w && !(w >= LFS_IN_CAND && g->where == LFS_IN_NONE)) {
			bad++;
			continue;
		}
		if (g->where != LFS_IN_NONE) {
			struct lfs_segset *h = set_of(fs, g->where);
			if (g->pos >= h->n || h->v[g->pos] != s)
				bad++;
			else if (g->where >= LFS_IN_CAND && g->pos > 0 &&
			         key(fs, h->v[(g->pos - 1) / 2]) > key(fs, (uint32_t)s))
				bad++;
		}
	}
	return bad + (live != fs->live_total);   /* what is loaded is what is counted */
}

int lfs_seg_choose(struct lfs *fs, uint64_t now, uint64_t budget, uint64_t *out, int max)
{
	uint64_t sb = lfs_segbytes(fs), moving = 0;
	int n = 0;
	while (n < max) {
		/* In each band the oldest is the best, but for the band's
		 * spread of utilization (1/LFS_NBAND): its top, or, when that is
		 * one the log's buffers hold, one of the top's children. */
		double best = -1;
		uint64_t bs = 0, blive = 0;
		for (int b = 0; b < LFS_NBAND; b++) {
			struct lfs_segset *h = &fs->cand[b];
			for (uint32_t i = 0; i < 3 && i < h->n; i++) {
				uint32_t s = h->v[i];
				const struct lfs_seg *g = lfs_sg(fs, s);
				if (fs->buf[0].seg == s || fs->buf[1].seg == s)
					continue;
				uint64_t live = g->e.live + g->e.live / 16 + LFS_BSIZE;
				double u = (double)g->e.live / (double)sb;
				double age = now > g->e.mtime ? (double)(now - g->e.mtime) / 1e9 : 0;
				double sc = (1 - u) * (age + 1) / (1 + u);
				if (sc > best && moving + live <= budget) {
					best = sc;
					bs = s;
					blive = live;
				}
				if (i == 0)
					break;        /* the top was usable: the rest are younger */
			}
		}
		if (bs == 0)
			break;
		lfs_seg_unlist(fs, bs);
		moving += blive;
		out[n++] = bs;
	}
	return n;
}

uint64_t lfs_seg_waiting(struct lfs *fs, uint64_t *mapped)
{
	uint64_t n = 0, m = 0;
	if (fs->cpl_all) {
		for (uint64_t s = 1; s < fs->hwm; s++) {
			if (!fs->sutload[s / LFS_PER_BLK])
				continue;
			const struct lfs_seg *g = lfs_sg(fs, s);
			if (g->e.live == 0 && !g->reserved && !lfs_seg_reusable(fs, s)) {
				n++;
				m += (g->e.flags & LFS_SEG_MAPPED) != 0;
			}
		}
	} else {
		/* Emptied since the last checkpoint: on its list. */
		for (uint32_t i = 0; i < fs->ncpl; i++) {
			uint32_t s = fs->cpl[i];
			const struct lfs_seg *g = lfs_sg(fs, s);
			if (s != 0 && g->e.live == 0 && !g->reserved && !lfs_seg_reusable(fs, s)) {
				n++;
				m += (g->e.flags & LFS_SEG_MAPPED) != 0;
			}
		}
		/* And those the last checkpoint empties once its flush is done
		 * (unless listed again just above). */
		for (uint32_t i = 0; fs->cp_pending && i < fs->ncpw; i++) {
			const struct lfs_seg *g = lfs_sg(fs, fs->cpw[i]);
			if (!g->dirty && !lfs_seg_reusable(fs, fs->cpw[i])) {
				n++;
				m += (g->e.flags & LFS_SEG_MAPPED) != 0;
			}
		}
	}
	if (mapped != NULL)
		*mapped = m;
	return n;
}

/* ---- taking and counting segments -------------------------------------------------- */

uint64_t lfs_seg_take(struct lfs *fs)
{
	/* A mapped one first - those a round's checkpoint is emptying, once
	 * its flush is done; else map a free one (0: the disk is full). */
	if (fs->pool.n == 0 && fs->cp_pending)
		lfs_cp_settle(fs, 1);
	if (fs->pool.n > 0)
		return fs->pool.v[fs->pool.n - 1];
	if (fs->free.n == 0 && fs->hwm >= fs->sb.nsegs && !lfs_sut_all_loaded(fs)) {
		lfs_sut_load_all(fs);       /* the rest of the table may have some */
		if (fs->pool.n > 0)
			return fs->pool.v[fs->pool.n - 1];
	}
	uint64_t s;
	if (fs->free.n > 0)
		s = fs->free.v[fs->free.n - 1];
	else if (fs->hwm < fs->sb.nsegs)
		s = fs->hwm;                  /* one never used (lfs_seg below moves hwm) */
	else
		return 0;
	if (lfs_seg(fs, s) == &no_seg)
		return 0;                     /* (no memory for its table block) */
	struct vvol_place pl;
	int r = vvol_chunk(&fs->v, s, 1, &pl);
	if (r <= 0)
		return 0;
	lfs_sg(fs, s)->e.flags |= LFS_SEG_MAPPED;
	lfs_seg_touch(fs, s);
	lfs_seg_changed(fs, s);
	fs->st.segs_mapped++;
	return s;
}

/* The count of whole segments the log can still take (lfs_avail) costs
 * a look at the disk's free count (a system call): it is kept until the
 * log enters a segment or a checkpoint frees some (fs->av_valid cleared). */
void lfs_avail_count(struct lfs *fs)
{
	/* (With those a round's checkpoint is emptying: lfs_seg_take waits
	 * for its flush before it takes one.) */
	uint64_t own = fs->pool.n + (fs->cp_pending ? fs->ncpw : 0);
	uint64_t unmapped = fs->free.n + (fs->sb.nsegs - fs->hwm);
	/* (The disk's free count - a system call - is looked at only when
	 * it could matter: below, two of the disk's segments are kept.) */
	uint64_t disk = unmapped > 2 ? edc_fm_count_free(&fs->k.fm) / fs->sb.seg_sect : 0;
	uint64_t more = disk < unmapped ? disk : unmapped;
	/* Keep a few of the disk's free segments for its own metadata (the
	 * volume's map nodes, the exodisk's). */
	more = more > 2 ? more - 2 : 0;
	fs->av_segs = own + more;
	fs->av_disk_short = unmapped > 2 && disk < unmapped;
	fs->av_valid = 1;
}

int lfs_reserve_slow(struct lfs *fs, uint64_t bytes, int freeing)
{
	if (fs->rdonly)
		return -EROFS;
	if (fs->err)
		return fs->err;
	uint64_t need = lfs_worst(fs, bytes) + (freeing ? 0 : lfs_segbytes(fs));
	for (int tries = 0; tries < 16; tries++) {
		if (lfs_avail(fs) >= need)
			return 0;
		fs->av_valid = 0;            /* look again before cleaning ... */
		if (lfs_avail(fs) >= need)
			return 0;
		if (!lfs_sut_all_loaded(fs)) {
			lfs_sut_load_all(fs);     /* ... with every segment known */
			fs->av_valid = 0;
			if (lfs_avail(fs) >= need)
				return 0;
		}
		if (fs->cleaning || fs->in_commit || fs->in_ckpt || lfs_clean(fs, 4) <= 0)
			break;
		need = lfs_worst(fs, bytes) + (freeing ? 0 : lfs_segbytes(fs));
	}
	return -ENOSPC;
}

uint64_t lfs_free_segs(struct lfs *fs)
{
	/* Reusable, or empty and waiting for the next checkpoint. */
	lfs_sut_load_all(fs);
	uint64_t disk = edc_fm_count_free(&fs->k.fm) / fs->sb.seg_sect;
	uint64_t wmapped, waiting = lfs_seg_waiting(fs, &wmapped);
	uint64_t own = fs->pool.n + wmapped;
	uint64_t unmapped = fs->free.n + (fs->sb.nsegs - fs->hwm) + waiting - wmapped;
	return own + (disk < unmapped ? disk : unmapped);
}

int lfs_release(struct lfs *fs)
{
	uint64_t released = 0;
	/* While the cleaner runs, the segments it empties are the next ones
	 * the log writes: giving them back only to map them again costs two
	 * volume map commits each (clean.c, clean_keep). */
	uint32_t keep = fs->pool_target > fs->clean_keep ? fs->pool_target : fs->clean_keep;
	while (fs->pool.n > keep) {
		uint64_t s = fs->pool.v[fs->pool.n - 1];
		lfs_rc_drop(fs, s);
		int e = vvol_discard(&fs->v, s * fs->sb.seg_sect, fs->sb.seg_sect);
		if (e < 0)
			return e;
		lfs_sg(fs, s)->e.flags &= ~LFS_SEG_MAPPED;
		lfs_sg(fs, s)->e.mtime = 0;
		lfs_sut_dirty(fs, s);
		lfs_seg_changed(fs, s);
		fs->st.segs_released++;
		fs->av_valid = 0;
		released++;
	}
	/* Commit the map now: the sectors are the exodisk's free space again
	 * once that is durable, for us and for everyone else. */
	return released ? lfs_harden(fs) : 0;
}

int lfs_sut_block(struct lfs *fs, uint32_t i, void *blk)
{
	memset(blk, 0, LFS_BSIZE);
	if (!fs->sutload[i] && sut_load(fs, i) < 0)   /* (the cleaner moves blocks unread) */
		return -ENOMEM;
	struct lfs_sutent *e = (struct lfs_sutent *)((uint8_t *)blk + sizeof(struct lfs_blkhdr));
	for (uint32_t j = 0; j < LFS_PER_BLK; j++) {
		uint64_t s = (uint64_t)i * LFS_PER_BLK + j;
		if (s >= fs->sb.nsegs)
			break;
		/* Without the table blocks' own bytes (a mount adds them). */
		const struct lfs_seg *g = lfs_sg(fs, s);
		uint32_t own = (uint32_t)g->nsut * LFS_BSIZE;
		e[j] = g->e;
		e[j].live = g->e.live > own ? g->e.live - own : 0;
	}
	lfs_seal_block(blk, LFS_SUT_MAGIC, i);
	return 0;
}
