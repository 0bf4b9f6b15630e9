/*
 * log.c - the log writer: everything lfs writes goes through here.
 *
 * A partial segment (PS) is assembled in memory, in the segment buffer of
 * the current segment: its header sector first (filled in last), then
 * blocks appended one after another as the file system produces them
 * (file data as write() gives it, then, at a commit, directory and
 * indirect blocks, inodes and the commit record), then the trailer that
 * says what each block is.  A PS is closed - written in one request -
 * when the next block would not fit in the segment, or at a commit; the
 * next PS starts right after it, or, when fewer than LFS_PS_MIN sectors
 * are left, at the start of the segment every header of this one named as
 * next.  So a segment is written as a few large sequential writes: a
 * megabyte of small files' data and metadata goes out as one request.
 *
 * Groups and commits.  The PSs written since the last commit form a
 * group; a commit writes everything the file system changed, then a
 * commit record (the inode map and segment usage entries that changed),
 * in a PS flagged COMMIT whose header carries a hash of all its sectors.
 * Roll-forward applies a group only when it reaches a valid COMMIT PS, so
 * a crash leaves the file system as of some commit: a prefix of the
 * operations.  For that the group's earlier PSs must be durable before
 * the COMMIT PS is: if any are not yet flushed, the commit flushes first.
 * A commit is durable when the flush after its PS returns (and, if new
 * segments were mapped, the volume's map is committed: lfs_harden).
 *
 * Writes go out asynchronously, at most a few per buffer, and there are
 * two buffers: the previous segment's may still be writing while the
 * current one fills.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"
#include "libos/clock.h"

uint64_t lfs_now(void)
{
	return libos_time_ns();
}

int lfs_log_init(struct lfs *fs)
{
	for (int i = 0; i < 2; i++) {
		fs->buf[i].mem = malloc(lfs_segbytes(fs));
		if (fs->buf[i].mem == NULL)
			return -ENOMEM;
		edc_batch_init(&fs->buf[i].b, fs->k.c, fs->buf[i].slots, 4);
	}
	fs->entcap = 256;
	fs->ent = malloc(fs->entcap * sizeof *fs->ent);
	return fs->ent ? 0 : -ENOMEM;
}

void lfs_log_free(struct lfs *fs)
{
	for (int i = 0; i < 2; i++) {
		free(fs->buf[i].mem);
		fs->buf[i].mem = NULL;
	}
	free(fs->ent);
	fs->ent = NULL;
	free(fs->cleanbuf);
	fs->cleanbuf = NULL;
}

static int wait_buf(struct lfs *fs, struct lfs_lbuf *b)
{
	int32_t r = edc_batch_wait(&b->b);
	if (r < 0 && fs->err == 0)
		fs->err = kit_err(r);
	return r < 0 ? kit_err(r) : 0;
}

int lfs_log_wait(struct lfs *fs)
{
	int e0 = wait_buf(fs, &fs->buf[0]), e1 = wait_buf(fs, &fs->buf[1]);
	return e0 ? e0 : e1;
}

int lfs_harden(struct lfs *fs)
{
	TRY(lfs_cp_settle(fs, 1));
	TRY(lfs_log_wait(fs));
	int e;
	if (fs->v.dirty.n > 0) {
		e = vvol_harden(&fs->v);
	} else {
		e = kit_barrier(&fs->k);
	}
	fs->st.flushes++;
	if (e < 0 && fs->err == 0)
		fs->err = e;
	if (e == 0)
		fs->undurable = 0;   /* everything written before it is durable */
	return e;
}

int lfs_harden_pending(struct lfs *fs)
{
	return fs->unflushed || fs->undurable || fs->v.dirty.n > 0 ? lfs_harden(fs) : 0;
}

/* Start writing sectors [from, from + n) of buffer bi's segment. */
static int issue_buf(struct lfs *fs, int bi, uint32_t from, uint32_t n)
{
	struct lfs_lbuf *b = &fs->buf[bi];
	const struct ed_protector *p = lfs_prot(fs, b->pl.leaf, b->pl.slot);
	int64_t r;
	KIT_RETRY(&fs->k, b->pl.leaf, b->pl.slot, r,
	          edc_batch_io(&b->b, p, 1, b->pl.phys + from, b->mem + (size_t)from * LFS_SECT,
	                       (uint64_t)n * LFS_SECT));
	fs->k.unflushed++;
	fs->st.wr_reqs++;
	fs->st.wr_sect += n;
	if (r < 0 && fs->err == 0)
		fs->err = kit_err(r);
	return r < 0 ? kit_err(r) : 0;
}

/* ... of the current segment. */
static int issue(struct lfs *fs, uint32_t from, uint32_t n)
{
	return issue_buf(fs, fs->cur, from, n);
}

int lfs_dfr_issue(struct lfs *fs, int wait)
{
	if (!fs->dfr || (!wait && fs->dff.pending && fs->dff.word == ED_PENDING))
		return 0;
	fs->dfr = 0;
	int e = kit_barrier_end(&fs->k, &fs->dff);
	fs->st.flushes++;
	/* Its group is durable: the COMMIT PS may be. */
	if (e == 0)
		e = issue_buf(fs, fs->dfr_buf, fs->dfr_from, fs->dfr_n);
	if (e < 0 && fs->err == 0)
		fs->err = e;                 /* (never written: the commit is not made) */
	return e;
}

/* Move the log to the next segment. */
static int enter_next(struct lfs *fs)
{
	uint64_t s = fs->next;
	if (s == 0)
		return -ENOSPC;              /* lfs_reserve should have prevented it */
	int ob = fs->cur;
	int nb = ob ^ 1;
	struct lfs_lbuf *b = &fs->buf[nb];
	if (fs->dfr && fs->dfr_buf == nb)
		TRY(lfs_dfr_issue(fs, 1));   /* (it is in the buffer to be used again) */
	TRY(wait_buf(fs, b));
	struct vvol_place pl;
	int r = vvol_chunk(&fs->v, s, 1, &pl);
	if (r < 0)
		return r;
	lfs_rc_drop(fs, s);
	b->seg = s;
	b->base = b->valid = 0;
	b->pl = pl;
	lfs_seg(fs, fs->seg)->reserved = 0;
	lfs_seg_mark(fs, fs->seg);
	lfs_seg_changed(fs, fs->seg);
	fs->cur = nb;
	fs->seg = s;
	fs->ps = 0;
	fs->fill = 1;
	struct lfs_seg *sg = lfs_seg(fs, s);
	sg->reserved = 1;
	sg->cpzero = 0;
	lfs_seg_mark(fs, s);
	sg->tag = (uint32_t)fs->cpseq;
	if (!(sg->e.flags & LFS_SEG_MAPPED)) {
		sg->e.flags |= LFS_SEG_MAPPED;
		lfs_seg_touch(fs, s);
	}
	lfs_seg_changed(fs, s);
	fs->next = lfs_seg_take(fs);
	if (fs->next) {
		lfs_seg(fs, fs->next)->reserved = 1;
		lfs_seg_mark(fs, fs->next);
		lfs_seg_changed(fs, fs->next);
	}
	fs->av_valid = 0;
	return 0;
}

uint32_t lfs_trail_sect(uint32_t nent)
{
	return (nent * (uint32_t)sizeof(struct lfs_psent) + LFS_SECT - 1) / LFS_SECT;
}
#define trail_sect lfs_trail_sect

/* Close the open PS: nsect covers the blocks and the trailer; with
 * `filler` the PS takes the rest of the segment and holds nothing. */
static int close_ps(struct lfs *fs, int flags, int filler)
{
	struct lfs_lbuf *b = &fs->buf[fs->cur];
	uint32_t ntrail = filler ? 0 : trail_sect(fs->nent);
	uint32_t end = filler ? fs->sb.seg_sect : fs->fill + ntrail;
	uint8_t *t = b->mem + (size_t)fs->fill * LFS_SECT;
	if (ntrail) {
		memcpy(t, fs->ent, fs->nent * sizeof *fs->ent);
		memset(t + fs->nent * sizeof *fs->ent, 0,
		       (size_t)ntrail * LFS_SECT - fs->nent * sizeof *fs->ent);
	}
	uint8_t *hs = b->mem + (size_t)fs->ps * LFS_SECT;
	struct lfs_pshdr h;
	memset(&h, 0, sizeof h);
	h.magic = LFS_PS_MAGIC;
	h.version = LFS_VERSION;
	h.flags = (uint16_t)flags;
	h.fsid = fs->sb.fsid;
	h.seq = fs->seq;
	h.lba = fs->seg * fs->sb.seg_sect + fs->ps;
	h.prev = fs->prev;
	h.nsect = end - fs->ps;
	h.nent = filler ? 0 : fs->nent;
	h.ntrail = ntrail;
	h.next_seg = fs->next;
	h.trail_hash = lfs_sum64(t, (size_t)ntrail * LFS_SECT, h.seq);
	if (flags & LFS_PS_COMMIT)
		h.data_hash = lfs_sum64(hs + LFS_SECT, (size_t)(end - fs->ps - 1) * LFS_SECT, h.seq);
	h.time = lfs_now();
	h.nonce = fs->nonce;
	h.mac = lfs_mac(fs, &h, offsetof(struct lfs_pshdr, mac));
	memset(hs, 0, LFS_SECT);
	memcpy(hs, &h, sizeof h);
	uint32_t from = fs->ps, n = filler ? 1 : end - fs->ps;
	if (fs->proving)
		fs->proof_hash = lfs_sum64(hs, (size_t)n * LFS_SECT, fs->proof_hash);
	b->valid = end;
	fs->prev = h.mac;
	fs->seq++;
	fs->ps = end;
	fs->fill = end + 1;
	fs->nent = 0;
	fs->st.ps_written++;
	uint64_t ob = (uint64_t)(1 + ntrail) * LFS_SECT;     /* header and trailer */
	fs->since_cp += ob;
	if (fs->cleaning)
		fs->st.clean_moved += ob;
	else
		fs->st.new_bytes += ob;
	if (!(flags & LFS_PS_COMMIT)) {
		fs->group++;
		fs->unflushed = 1;
	}
	int e = 0;
	if ((flags & LFS_PS_COMMIT) && fs->dfr_next) {
		/* Held back until the flush of its group is done (lfs_commit_mode). */
		fs->dfr_next = 0;
		fs->dfr = 1;
		fs->dfr_buf = (uint8_t)fs->cur;
		fs->dfr_from = from;
		fs->dfr_n = n;
		fs->st.cp_held++;
	} else {
		e = issue(fs, from, n);
	}
	if (e == 0 && fs->ps + LFS_PS_MIN > fs->sb.seg_sect) {
		fs->proof_segs += fs->proving && fs->proof_segs < 255;
		e = enter_next(fs);
		/* The log is at its segment's end: nothing more can be
		 * appended until it has moved on (a shared lfs reads
		 * everything again, which clears this). */
		if (e < 0 && fs->err == 0)
			fs->err = e;
	}
	return e;
}

int lfs_log_start(struct lfs *fs, uint64_t seg, uint32_t pos, uint64_t next)
{
	struct lfs_lbuf *b = &fs->buf[0];
	int r = vvol_chunk(&fs->v, seg, !fs->rdonly, &b->pl);
	if (r < 0)
		return r;
	if (r == 0)
		return -EIO;
	fs->cur = 0;
	lfs_rc_drop(fs, seg);           /* cached before the log came here */
	b->seg = seg;
	b->base = b->valid = pos;
	fs->buf[1].seg = 0;
	fs->seg = seg;
	fs->ps = pos;
	fs->fill = pos + 1;
	fs->nent = 0;
	struct lfs_seg *g = lfs_seg(fs, seg);
	g->reserved = 1;
	g->cpzero = 0;
	lfs_seg_mark(fs, seg);
	g->tag = (uint32_t)fs->cpseq;
	if (!(g->e.flags & LFS_SEG_MAPPED)) {
		g->e.flags |= LFS_SEG_MAPPED;
		lfs_seg_touch(fs, seg);
	}
	lfs_seg_changed(fs, seg);
	if (fs->rdonly)
		return 0;
	if (next != 0 && next < fs->sb.nsegs && next != seg) {
		fs->next = next;
	} else {
		fs->next = 0;
		fs->next = lfs_seg_take(fs);
	}
	if (fs->next) {
		lfs_seg(fs, fs->next)->reserved = 1;
		lfs_sg(fs, fs->next)->cpzero = 0;
		lfs_seg_mark(fs, fs->next);
		lfs_seg_changed(fs, fs->next);
	}
	if (pos + LFS_PS_MIN > fs->sb.seg_sect)
		return enter_next(fs);
	return 0;
}

void lfs_proof_start(struct lfs *fs)
{
	fs->proving = 1;
	fs->proof_segs = 0;
	fs->proof_lba = fs->seg * fs->sb.seg_sect + fs->ps;
	fs->proof_hash = fs->proof_lba;
}

int lfs_log_close(struct lfs *fs, int flags)
{
	if (fs->nent == 0 && !(flags & LFS_PS_COMMIT))
		return 0;
	return close_ps(fs, flags, 0);
}

uint8_t *lfs_log_append(struct lfs *fs, const struct lfs_psent *e, uint64_t *lba, int *err)
{
	*err = fs->err;
	if (*err)
		return NULL;
	if (fs->nent == fs->entcap) {
		struct lfs_psent *v = realloc(fs->ent, 2 * fs->entcap * sizeof *v);
		if (v == NULL) {
			*err = -ENOMEM;
			return NULL;
		}
		fs->ent = v;
		fs->entcap *= 2;
	}
	for (;;) {
		if (fs->fill + e->nsect + trail_sect(fs->nent + 1) <= fs->sb.seg_sect)
			break;
		/* It does not fit: close what is open, or, if nothing is, pass
		 * the rest of the segment with a filler so the chain goes on. */
		int r = fs->nent ? close_ps(fs, 0, 0) : close_ps(fs, 0, 1);
		if (r < 0) {
			*err = r;
			return NULL;
		}
	}
	struct lfs_lbuf *b = &fs->buf[fs->cur];
	*lba = fs->seg * fs->sb.seg_sect + fs->fill;
	uint8_t *p = b->mem + (size_t)fs->fill * LFS_SECT;
	fs->ent[fs->nent++] = *e;
	fs->fill += e->nsect;
	b->valid = fs->fill;
	uint64_t nb = (uint64_t)e->nsect * LFS_SECT;
	fs->since_cp += nb;
	if (fs->cleaning)
		fs->st.clean_moved += nb;
	else
		fs->st.new_bytes += nb;
	return p;
}

uint8_t *lfs_log_extend(struct lfs *fs, const struct lfs_psent *e, uint64_t lba, uint32_t oldn,
                        uint32_t newn)
{
	if (fs->nent == 0 || fs->err)
		return NULL;
	struct lfs_psent *l = &fs->ent[fs->nent - 1];
	uint64_t base = fs->seg * fs->sb.seg_sect;
	if (l->kind != e->kind || l->ino != e->ino || l->gen != e->gen || l->lbn != e->lbn ||
	    l->nsect != oldn || lba + oldn != base + fs->fill || newn < oldn ||
	    fs->fill - oldn + newn + trail_sect(fs->nent) > fs->sb.seg_sect)
		return NULL;
	fs->fill += newn - oldn;
	l->nsect = (uint8_t)newn;
	fs->buf[fs->cur].valid = fs->fill;
	uint64_t nb = (uint64_t)(newn - oldn) * LFS_SECT;
	fs->since_cp += nb;
	fs->st.new_bytes += nb;
	return fs->buf[fs->cur].mem + (size_t)(lba - base) * LFS_SECT;
}

/* ---- commit ----------------------------------------------------------------------- */

/* Append the commit records: every changed imap and SUT entry, as many
 * records as they need. */
static int write_deltas(struct lfs *fs)
{
	uint32_t nim = 0, k = 0;
	for (uint32_t i = 0; i < fs->nimchg; i++)
		nim += lfs_imbits_count(fs->im[fs->imchg[i]]->changed);
	uint32_t *inos = malloc((nim ? nim : 1) * sizeof *inos);
	if (inos == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < fs->nimchg; i++) {
		uint32_t first = fs->imchg[i] * LFS_PER_BLK;
		uint32_t c = lfs_imbits_list(fs->im[fs->imchg[i]]->changed, inos + k);
		for (uint32_t x = 0; x < c; x++)
			inos[k + x] += first;
		k += c;
	}
	const uint32_t per = (LFS_DELTA_MAX * LFS_SECT - sizeof(struct lfs_delta)) / sizeof(struct lfs_dimap);
	uint32_t ii = 0, si = 0;
	uint64_t part = 0;
	int e = 0;
	/* At least one record; segments entered while appending them change
	 * the table too, hence fs->nschg read afresh each time. */
	do {
		uint32_t nimap = nim - ii < per ? nim - ii : per;
		uint32_t nsut = fs->nschg - si < per - nimap ? fs->nschg - si : per - nimap;
		size_t bytes = sizeof(struct lfs_delta) + (size_t)(nimap + nsut) * sizeof(struct lfs_dimap);
		uint32_t nsect = (uint32_t)((bytes + LFS_SECT - 1) / LFS_SECT);
		struct lfs_psent pe = { 0, 0, 0, LFS_K_DELTA, (uint8_t)nsect, 0 };
		uint64_t lba;
		uint8_t *p = lfs_log_append(fs, &pe, &lba, &e);
		if (p == NULL)
			break;
		memset(p, 0, (size_t)nsect * LFS_SECT);
		struct lfs_delta *d = (struct lfs_delta *)p;
		d->magic = LFS_DELTA_MAGIC;
		d->nimap = nimap;
		d->nsut = nsut;
		d->max_ino = fs->max_ino;
		d->free_head = fs->free_head;
		d->nfiles = fs->nfiles;
		d->part = part++;
		struct lfs_dimap *di = (struct lfs_dimap *)(d + 1);
		for (uint32_t j = 0; j < nimap; j++, ii++) {
			di[j].ino = inos[ii];
			di[j].e = fs->im[inos[ii] / LFS_PER_BLK]->e[inos[ii] % LFS_PER_BLK];
		}
		struct lfs_dsut *ds = (struct lfs_dsut *)(di + nimap);
		for (uint32_t j = 0; j < nsut; j++, si++) {
			ds[j].seg = fs->schg[si];
			ds[j].e = lfs_sg(fs, fs->schg[si])->e;
		}
		d->csum = lfs_sum32(p, (size_t)nsect * LFS_SECT);
		if (fs->sh.a != NULL)
			lfs_multi_delta(fs, p, nsect);   /* for the other processes */
	} while (ii < nim || si < fs->nschg);
	free(inos);
	return e;
}

/* Sectors of blocks in the open PS from which a commit that flushes
 * anyway closes it first (lfs_commit_mode). */
#define COMMIT_SPLIT 32u

static void clear_changes(struct lfs *fs)
{
	for (uint32_t i = 0; i < fs->nimchg; i++) {
		struct lfs_imblk *m = fs->im[fs->imchg[i]];
		memset(m->changed, 0, sizeof m->changed);
		m->inlist = 0;
	}
	fs->nimchg = 0;
	for (uint32_t i = 0; i < fs->nschg; i++)
		lfs_sg(fs, fs->schg[i])->changed = 0;
	fs->nschg = 0;
}

/* Directory and indirect blocks first (they change inodes), then the
 * inodes (they change the map). */
static int append_changes(struct lfs *fs)
{
	int e = 0;
	for (struct lnode *n = fs->dirty; n != NULL && e == 0; n = n->dnext)
		if (n->dir != NULL)
			e = lfs_dir_flush(fs, n);
	for (struct lnode *n = fs->dirty; n != NULL && e == 0; n = n->dnext)
		if (n->mapdirty)
			e = lfs_flush_maps(fs, n);
	if (e == 0)
		e = lfs_flush_inodes(fs);
	return e;
}

int lfs_log_stage(struct lfs *fs)
{
	if (fs->rdonly)
		return 0;
	if (fs->err)
		return fs->err;
	fs->in_commit = 1;
	int e = append_changes(fs);
	fs->in_commit = 0;
	return e;
}

/* A commit; `durable`: it is durable when this returns (fsync, sync,
 * checkpoints).  Otherwise (a commit made because much is pending) its
 * COMMIT PS is only written: the flush that the next commit makes before
 * its own COMMIT PS, or the next durable one, covers it.  Ordering is all
 * the crash argument needs - a COMMIT PS is never durable before its
 * group - and a crash before that flush loses whole groups from the end,
 * leaving a prefix of the operations. */
int lfs_commit_mode(struct lfs *fs, int durable)
{
	if (fs->rdonly)
		return 0;
	if (fs->err)
		return fs->err;
	TRY(lfs_cp_settle(fs, 1));        /* (a commit after a record, on the disk too) */
	if (fs->dirty == NULL && fs->nimchg == 0 && fs->nschg == 0 && fs->nent == 0 && fs->group == 0) {
		/* (Map nodes left uncommitted by a process that died, found
		 * dirty when loaded: libos/vvol/map.c.) */
		if ((durable && fs->undurable) || fs->v.dirty.n > 0) {
			TRY(lfs_harden(fs));
			fs->undurable = 0;
		}
		return 0;
	}
	fs->in_commit = 1;
	int e = 0;
	/* When a flush must come before the COMMIT PS anyway, the blocks
	 * written so far go in a PS of their own: the flush makes them
	 * durable, and the COMMIT PS, whose every sector is summed, holds
	 * only what the commit appends (a cleaning round's moved blocks
	 * were summed twice). */
	if ((fs->unflushed || fs->undurable || fs->v.dirty.n > 0) && fs->nent > 0 &&
	    fs->fill - fs->ps > COMMIT_SPLIT)
		e = close_ps(fs, 0, 0);
	/* Directory and indirect blocks and inodes, then the record of the
	 * changes. */
	if (e == 0)
		e = append_changes(fs);
	if (e == 0)
		e = write_deltas(fs);
	/* The group's earlier PSs (and an earlier commit not yet flushed),
	 * and the map of any segment they took, must be durable before the
	 * COMMIT PS can be.  A cleaning round's checkpoint does not wait for
	 * that flush: it sends it, and holds the COMMIT PS back until it is
	 * done (lfs_dfr_issue), while the log goes on after it - the table
	 * blocks, the record, and the program's next writes, none of them a
	 * commit (every commit and flush writes the held PS first).  Unless
	 * a segment's map must be committed too (that is not one flush). */
	if (e == 0 && fs->cp_defer && fs->v.dirty.n == 0 && (fs->unflushed || fs->undurable)) {
		e = lfs_log_wait(fs);
		if (e == 0)
			e = kit_barrier_start(&fs->k, &fs->dff);
		if (e == 0)
			fs->dfr_next = 1;
	} else if (e == 0) {
		e = lfs_harden_pending(fs);
	}
	/* A checkpoint's commit: what is written from here on may go to the
	 * disk with the record, in one flush (ckpt.c). */
	if (e == 0 && fs->cp_prove)
		lfs_proof_start(fs);
	if (e == 0)
		e = close_ps(fs, LFS_PS_COMMIT, 0);
	if (e == 0 && durable)
		e = lfs_harden(fs);
	fs->in_commit = 0;
	fs->dfr_next = 0;
	if (e < 0)
		return e;
	fs->undurable = !durable;
	clear_changes(fs);
	fs->group = 0;
	fs->unflushed = 0;
	fs->pend = 0;
	fs->st.commits++;
	if (fs->shares != NULL)
		lfs_share_publish(fs);       /* a share that cannot follow ends itself */
	if (fs->since_cp >= fs->cp_interval && !fs->cleaning && !fs->in_ckpt)
		e = lfs_checkpoint(fs, 0);
	return e;
}

int lfs_commit(struct lfs *fs)
{
	return lfs_commit_mode(fs, 1);
}
