/*
 * clean.c - the cleaner: it makes empty segments out of partly used ones
 * by copying their live blocks to the head of the log, as in Sprite LFS.
 *
 * Which segments: cost-benefit (Rosenblum and Ousterhout).  Cleaning a
 * segment of utilisation u (live bytes / segment bytes) costs reading it
 * and writing its live part again, 1 + u, and yields 1 - u of free space;
 * space in an old segment stays free longer, since its live blocks have
 * been stable, so the benefit is weighted by age (the time of its newest
 * block).  The segments with the highest (1 - u) * age / (1 + u) go first.
 *
 * What is live: the cleaner reads a segment whole and walks its partial
 * segments (each header checked, as roll-forward does); each trailer entry
 * names what a block is, and that is compared with what the file system
 * points at now - the inode map's entry for an inode, the file's pointer
 * for a data or indirect block (with the generation, so a file deleted
 * since costs nothing to look up), the checkpoint's pointer for a table
 * block.  Live blocks are rewritten: data through the file's pointer
 * (lfs_bput), directory and indirect blocks and inodes by marking them
 * dirty, table blocks by the checkpoint that ends the round.
 *
 * A round ends with a checkpoint: only once it is durable are the cleaned
 * segments empty in a checkpoint a mount could start from, so only then
 * may they be written again or given back (ckpt.c, seg.c).
 *
 * When: lfs_autoclean, at operation boundaries, when the segments the file
 * system could still write (its empty ones and the disk's free space) fall
 * below the low mark (at most cleanlo), a round at a time until one more;
 * lfs_reserve when a write would not fit; and lfsclean on demand
 * (lfs_clean_now).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

/* Move whatever of block e (at lba, bytes p) is live. */
static int move(struct lfs *fs, const struct lfs_psent *e, uint64_t lba, const uint8_t *p)
{
	int err;
	struct lnode *n;
	if (e->kind == LFS_K_DATA || e->kind == LFS_K_IND) {
		struct lfs_imapent *m = lfs_imap(fs, e->ino, &err);
		if (m == NULL || m->loc == 0 || m->gen != e->gen)
			return 0;
		TRY(lfs_get(fs, e->ino, &n));
		int r = 0;
		uint64_t ptr;
		if (n->gen != e->gen) {
			r = 0;
		} else if (e->kind == LFS_K_IND) {
			r = lfs_map_live(fs, n, e->lbn, LFS_PTR(lba, LFS_BSECT));
			if (r > 0)
				r = lfs_map_move(fs, n, e->lbn);
		} else if ((r = lfs_bmap(fs, n, e->lbn, &ptr)) == 0 && ptr == LFS_PTR(lba, e->nsect)) {
			r = n->d.type == LIBFS_T_DIR ? lfs_dir_move(fs, n, e->lbn)
			                             : lfs_bput(fs, n, e->lbn, p, e->nsect, 1);
		}
		lfs_put(fs, n);
		return r < 0 ? r : 0;
	}
	if (e->kind == LFS_K_INODE) {
		for (uint32_t slot = 0; slot < LFS_IPERSECT; slot++) {
			struct lfs_dinode d;
			memcpy(&d, p + slot * LFS_ISIZE, sizeof d);
			if (d.ino == 0 || d.ino >= fs->max_ino)
				continue;
			/* The map first: most copies are dead, and then their
			 * sums need not be checked. */
			struct lfs_imapent *m = lfs_imap(fs, d.ino, &err);
			if (m == NULL || m->loc != LFS_LOC(lba, slot) || !lfs_inode_ok(&d, d.ino))
				continue;
			TRY(lfs_get(fs, d.ino, &n));
			lfs_dirty(fs, n);
			lfs_put(fs, n);
		}
		return 0;
	}
	if (e->kind == LFS_K_IMAP && e->lbn < fs->nimblk &&
	    fs->imaddr[e->lbn] == LFS_PTR(lba, LFS_BSECT)) {
		struct lfs_imblk *m;
		TRY(lfs_imap_block(fs, e->lbn, &m));
		lfs_imap_dirty(fs, m);
		m->move = 1;                   /* to the log, not in the record */
	}
	if (e->kind == LFS_K_SUT && e->lbn < fs->nsutblk &&
	    fs->sutaddr[e->lbn] == LFS_PTR(lba, LFS_BSECT) && !fs->sutdirty[e->lbn]) {
		fs->sutdirty[e->lbn] = 1;      /* the round's checkpoint writes it again */
		fs->sutchg[fs->nsutchg++] = e->lbn;
	}
	return 0;
}

/* Walk segment s's partial segments (its bytes in mem), moving what is live. */
static int clean_seg(struct lfs *fs, uint64_t s, uint8_t *mem)
{
	uint64_t base = s * fs->sb.seg_sect;
	for (uint32_t pos = 0; pos + 1 <= fs->sb.seg_sect;) {
		struct lfs_pshdr h;
		memcpy(&h, mem + (size_t)pos * LFS_SECT, sizeof h);
		if (h.magic != LFS_PS_MAGIC || h.fsid != fs->sb.fsid || h.lba != base + pos ||
		    h.mac != lfs_mac(fs, &h, offsetof(struct lfs_pshdr, mac)) || h.nsect == 0 ||
		    pos + h.nsect > fs->sb.seg_sect || h.ntrail >= h.nsect ||
		    h.ntrail != lfs_trail_sect(h.nent))
			break;
		const uint8_t *t = mem + (size_t)(pos + h.nsect - h.ntrail) * LFS_SECT;
		if (lfs_sum64(t, (size_t)h.ntrail * LFS_SECT, h.seq) != h.trail_hash)
			break;
		const struct lfs_psent *ent = (const void *)t;
		uint32_t at = pos + 1;
		for (uint32_t i = 0; i < h.nent; i++) {
			if (at + ent[i].nsect > pos + h.nsect - h.ntrail)
				break;
			TRY(move(fs, &ent[i], base + at, mem + (size_t)at * LFS_SECT));
			at += ent[i].nsect;
		}
		pos += h.nsect;
	}
	return 0;
}

/* The most segments one round cleans (each round ends with a checkpoint,
 * whose inode map and table blocks are shared by the segments cleaned). */
#define ROUND_MAX 32

/* The chosen segments are read ahead, in halves of cleanbuf of about
 * CLEAN_AHEAD bytes: one half's reads are in flight together while the
 * other half's blocks move.  Read one at a time, each segment cost the
 * cleaner a wait for the disk: in wall clock, an eighth of the cleaner
 * experiment at 80% was spent asleep there (docs/lfs.md). */
#define CLEAN_AHEAD (512u << 10)

/* The buffer is kept for the mount (freed with the log's). */
static int clean_buf(struct lfs *fs)
{
	if (fs->cleanbuf != NULL)
		return 0;
	uint64_t sb = lfs_segbytes(fs);
	uint32_t per = sb >= CLEAN_AHEAD ? 1 : (uint32_t)(CLEAN_AHEAD / sb);
	if (per > ROUND_MAX)
		per = ROUND_MAX;
	if ((fs->cleanbuf = malloc(2 * (size_t)per * sb)) == NULL)
		return -ENOMEM;
	fs->clean_per = per;
	for (int h = 0; h < 2; h++)
		edc_batch_init(&fs->clean_b[h], fs->k.c, fs->clean_slots[h], 8);
	return 0;
}

static uint8_t *half(struct lfs *fs, int h)
{
	return fs->cleanbuf + (size_t)h * fs->clean_per * lfs_segbytes(fs);
}

/* Start reading chosen[from, from + cnt) into half h of cleanbuf; started
 * says which are on their way (the others are read when wanted). */
static void read_ahead(struct lfs *fs, int h, const uint64_t *chosen, int from, int cnt,
                       uint8_t *started)
{
	uint64_t sb = lfs_segbytes(fs);
	uint8_t *mem = half(fs, h);
	for (int j = 0; j < cnt; j++)
		started[from + j] = (uint8_t)lfs_read_seg_start(fs, &fs->clean_b[h], chosen[from + j],
		                                                mem + (size_t)j * sb);
}

/* Read the n chosen segments and move what is live in each. */
static int clean_segs(struct lfs *fs, const uint64_t *chosen, int n)
{
	uint64_t sb = lfs_segbytes(fs);
	int per = (int)fs->clean_per, e = 0;
	uint8_t started[ROUND_MAX];
	read_ahead(fs, 0, chosen, 0, n < per ? n : per, started);
	for (int g = 0, h = 0; g < n; g += per, h ^= 1) {
		int cnt = n - g < per ? n - g : per;
		int32_t r = edc_batch_wait(&fs->clean_b[h]);
		if (e == 0 && r < 0)
			e = kit_err(r);
		if (e == 0 && g + per < n)
			read_ahead(fs, h ^ 1, chosen, g + per, n - g - per < per ? n - g - per : per, started);
		uint8_t *mem = half(fs, h);
		for (int j = 0; j < cnt && e == 0; j++, mem += sb) {
			if (!started[g + j])
				e = lfs_read_seg(fs, chosen[g + j], fs->sb.seg_sect, mem);
			fs->st.clean_read += sb;
			if (e == 0)
				e = clean_seg(fs, chosen[g + j], mem);
		}
	}
	/* (After an error, the reads still in flight land before the
	 * buffer can be used again.) */
	edc_batch_wait(&fs->clean_b[0]);
	edc_batch_wait(&fs->clean_b[1]);
	return e;
}

int lfs_clean(struct lfs *fs, int max)
{
	if (fs->cleaning || fs->rdonly || fs->in_commit || fs->in_ckpt)
		return 0;
	if (fs->err)
		return fs->err;
	TRY(lfs_cp_settle(fs, 1));        /* (the last round's segments, reusable) */
	if (max <= 0 || max > ROUND_MAX)
		max = ROUND_MAX;
	/* Every inode in memory to the log first: a new inode's blocks are
	 * live only once the map points at it.  Not a commit: the round's
	 * checkpoint commits them with the moved blocks, one group, so the
	 * flush a commit makes before its COMMIT PS is made once a round,
	 * not twice. */
	TRY(lfs_log_stage(fs));
	uint64_t now = lfs_now(), chosen[ROUND_MAX];
	int n = 0;
	/* What the moved blocks may take: what the log can still write, less
	 * what the round's commit and checkpoint need - with every inode map
	 * block, since the files moved may touch any of them. */
	fs->av_valid = 0;
	uint64_t have = lfs_avail(fs);
	uint64_t keep = lfs_worst(fs, 0);
	if (fs->nimblk > fs->nimdirty)
		keep += (uint64_t)(fs->nimblk - fs->nimdirty) * LFS_BSIZE;
	uint64_t budget = have > keep ? have - keep : 0;
	/* The best that still fit (with their share of summaries), from the
	 * candidate sets (seg.c): no look at every segment. */
	n = lfs_seg_choose(fs, now, budget, chosen, max);
	if (n == 0 && lfs_seg_waiting(fs, NULL) == 0)
		return 0;
	if (n && clean_buf(fs) < 0) {
		for (int i = 0; i < n; i++)
			lfs_seg_changed(fs, chosen[i]);
		return -ENOMEM;
	}
	fs->cleaning = 1;
	fs->st.clean_rounds++;
	int e = 0;
	/* The chosen segments are in no set while their blocks move out
	 * (LFS_STUCK_CLEANING): each block moved changes their live bytes,
	 * and putting them back in a candidate heap every time was a tenth
	 * of what moving a block costs. */
	for (int i = 0; i < n; i++) {
		fs->st.clean_live += lfs_sg(fs, chosen[i])->e.live;
		lfs_sg(fs, chosen[i])->stuck = LFS_STUCK_CLEANING;
	}
	e = clean_segs(fs, chosen, n);
	if (e == 0)
		e = lfs_checkpoint(fs, 0);
	fs->cleaning = 0;
	for (int i = 0; i < n; i++) {
		struct lfs_seg *g = lfs_sg(fs, chosen[i]);
		g->stuck = 0;
		if (e == 0 && g->e.live == 0)
			fs->st.segs_cleaned++;
		else if (e == 0)
			g->stuck = LFS_STUCK_LIVE;
		lfs_seg_changed(fs, chosen[i]);   /* back in its set, if any */
	}
	if (e < 0)
		return e;
	/* What it gained: the room the log has now and had not before, in
	 * segments, a part of one counting as one (0 when cleaning only moved
	 * live bytes around).  A round that gains less than a whole segment
	 * still helps: the next one starts from there. */
	fs->av_valid = 0;
	uint64_t after = lfs_avail(fs), sb = lfs_segbytes(fs);
	return after > have ? (int)((after - have + sb - 1) / sb) : 0;
}

/* The most rounds one operation's autoclean runs: the rest waits for the
 * next operation, so that no single write stalls for long behind the
 * cleaner (lfs_reserve still cleans when a write would not fit). */
#define AC_ROUNDS 2
#define KEEP_IDLE 16

/* No cleaning needed: the empty segments kept mapped for the cleaner go
 * back (at the next checkpoint) once there is room again, or once it has
 * not been needed for as many segments of writing as it keeps, at most
 * KEEP_IDLE.  0. */
static int keep_less(struct lfs *fs, uint64_t sb)
{
	uint64_t idle = fs->clean_keep < KEEP_IDLE ? fs->clean_keep : KEEP_IDLE;
	if (fs->clean_keep && (lfs_avail(fs) / sb >= 2 * (uint64_t)fs->clean_keep ||
	                       fs->st.new_bytes - fs->clean_at >= idle * sb))
		fs->clean_keep = 0;
	return 0;
}

int lfs_autoclean(struct lfs *fs)
{
	uint64_t sb = lfs_segbytes(fs);
	TRY(lfs_cp_settle(fs, 0));        /* the last round's, if its flush is done */
	if (!fs->autoclean || fs->cleaning || fs->rdonly ||
	    (!fs->ac_more && fs->st.new_bytes - fs->ac_mark < sb / 4))
		return 0;
	fs->ac_mark = fs->st.new_bytes;
	fs->ac_more = 0;
	/* Writable segments, as lfs_reserve counts them (kept between
	 * segments: counting looks at every segment and the free map). */
	if (!fs->ac_going && lfs_avail(fs) / sb >= fs->clean_low)
		return keep_less(fs, sb);
	/* Cleaning: every segment known first (after a mount the table comes
	 * in as it is wanted; what is left of it is read once, here). */
	if (!lfs_sut_all_loaded(fs)) {
		lfs_sut_load_all(fs);
		fs->av_valid = 0;
		if (lfs_avail(fs) / sb >= fs->clean_low)
			return 0;
	}
	/* The marks.  Every clean segment held back is room the live data
	 * cannot spread into, so the segments cleaned are fuller: under
	 * uniform overwrites at 80% the cleaned segments' utilization rises
	 * with the share of the free space kept clean (docs/lfs.md, "The
	 * cleaner").  So the low mark is what the next change reserves, plus
	 * one (the floor), plus at most a thirty-second of the segments the
	 * live data leaves free, plus one: the room a round has for its moves
	 * is what the log can write less what its checkpoint needs, and
	 * starting a round a segment above the floor lets it clean several
	 * segments at once (six or seven at 80%) for one checkpoint.  The
	 * high mark is one above: one round at a time, each gaining two
	 * segments or so, so the free room swings by one round's gain and
	 * the cleaning is spread evenly over the writing (with the marks 3
	 * apart, two or three rounds in a row followed by none made some
	 * twentieths of the cleaner experiment clean a fifth more segments
	 * than others).  cleanlo may lower the low mark, never below
	 * the floor; cleanhi, at least cleanlo, never lowers the high one. */
	uint64_t live = fs->live_total;
	uint64_t could = fs->sb.nsegs - 1 - (live + sb - 1) / sb;
	uint64_t floor = (lfs_worst(fs, sb) + sb - 1) / sb + 1;   /* what lfs_reserve wants, and 1 */
	uint64_t lo = floor + could / 32 + 1, hi;
	if (lo > fs->clean_low)
		lo = fs->clean_low;
	if (lo < floor)
		lo = floor;
	hi = lo + 1;
	if (lfs_avail(fs) / sb >= lo && !fs->ac_going)
		return keep_less(fs, sb);
	/* What the rounds empty stays mapped (seg.c, lfs_release): the log
	 * writes it next. */
	fs->clean_keep = (uint32_t)hi;
	fs->clean_at = fs->st.new_bytes;
	/* Until the high mark, or until a round gains nothing (the disk is
	 * full of live data: then writes get -ENOSPC), AC_ROUNDS rounds at a
	 * time: the next operation goes on (ac_more, ac_going). */
	for (int round = 0; lfs_avail(fs) / sb < hi; round++) {
		if (round == AC_ROUNDS) {
			fs->ac_more = fs->ac_going = 1;
			return 0;
		}
		int r = lfs_clean(fs, ROUND_MAX);
		if (r <= 0) {
			fs->ac_going = 0;
			return r < 0 ? r : 0;
		}
	}
	fs->ac_going = 0;
	return 0;
}

int lfs_clean_now(struct lfs *fs, int max)
{
	int total = 0;
	if (max > 0)
		return lfs_clean(fs, max);
	/* On demand: as long as a round gains a whole segment. */
	for (int round = 0; round < 1024; round++) {
		uint64_t before = lfs_free_segs(fs);
		int r = lfs_clean(fs, 4);
		if (r < 0)
			return r;
		uint64_t after = lfs_free_segs(fs);
		if (after <= before)
			break;
		total += (int)(after - before);
	}
	return total;
}

int lfs_checkpoint_now(struct lfs *fs)
{
	return lfs_checkpoint(fs, 0);
}

void lfs_get_stats(struct lfs *fs, struct lfs_stats *st, struct lfs_usage *u)
{
	if (st != NULL) {
		*st = fs->st;
		st->sut_mem = 0;
		for (uint32_t i = 0; i < fs->nsutblk; i++)
			st->sut_mem += fs->sutb[i] ? LFS_PER_BLK * sizeof(struct lfs_seg) : 0;
	}
	if (u == NULL)
		return;
	memset(u, 0, sizeof *u);
	lfs_sut_load_all(fs);             /* (on demand: lfsclean's report) */
	u->segs = fs->sb.nsegs - 1;
	u->seg_bytes = lfs_segbytes(fs);
	for (uint64_t s = 1; s < fs->hwm; s++) {     /* (never used from there on) */
		const struct lfs_seg *g = lfs_seg_peek(fs, s);
		u->mapped += (g->e.flags & LFS_SEG_MAPPED) != 0;
		u->inuse += g->e.live != 0;
		u->live += g->e.live;
	}
	u->free_segs = lfs_free_segs(fs);
	u->files = fs->nfiles;
}
