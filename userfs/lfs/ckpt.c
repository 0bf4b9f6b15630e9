/*
 * ckpt.c - checkpoints, and what a mount does with them: read the newer
 * of the two copies, roll forward through the log written after it, and
 * start the log where the last commit left it.  mkfs's part is here too.
 *
 * A checkpoint makes the log's tables durable so that a mount need not
 * replay the whole log: it commits (log.c), writes the inode map blocks
 * and the blocks of the segment usage table changed since the last
 * checkpoint to the log (one PS flagged CKPT), and writes the checkpoint
 * record - where each table block is, where the log's head is - to the
 * copy the previous checkpoint did not use, and flushes.  The record goes
 * in the same flush as the commit's PS and the table blocks, carrying
 * their sum (its proof; the commit flushed everything before them): a
 * mount believes it only if they are there (proof_ok).  A cleaning
 * round's checkpoint returns before either flush is done; lfs_cp_settle
 * writes the held COMMIT PS and the record after the first, and makes
 * the emptied segments reusable after the second.  A torn record
 * fails its MAC, an unproved one its proof, and the other copy, one
 * checkpoint older, is used: roll-forward from there walks the same log.
 *
 * The SUT blocks cannot count themselves: the values they hold are the
 * table without them, and a mount adds their own bytes back (each SUT
 * block's segment, from the record's pointers).
 *
 * Reuse.  A segment whose live bytes reached zero may be written again
 * only once a durable checkpoint says so (struct lfs_seg.cpzero, set here
 * after the record's flush): until then the checkpoint a mount would use
 * may still point into it, or roll-forward from it walk through it.
 * Emptied segments beyond the pool are given back to the exodisk at the
 * same moment (seg.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

int lfs_debug_sets;

static int cp_fits(const struct lfs *fs, uint32_t nim, uint32_t nsut)
{
	return sizeof(struct lfs_cp) + (uint64_t)(nim + nsut) * 8 <= (uint64_t)fs->sb.cp_sect * LFS_SECT;
}

/* The usage table blocks a record points at: those that can hold a used
 * segment (below the high-water mark).  The ones above it were never
 * written (every entry zero): a record leaves them out, so its size
 * follows the segments the file system has used, not the volume. */
static uint32_t rec_nsut(const struct lfs *fs)
{
	uint64_t n = (fs->hwm + LFS_PER_BLK - 1) / LFS_PER_BLK;
	return n < fs->nsutblk ? (uint32_t)n : fs->nsutblk;
}

/* The most inode map entries a record carries instead of their blocks:
 * what its copy has room for after the pointers, at most IMIN_MAX (12 KiB
 * of record).  Written in the record, an entry costs 24 bytes once; in its
 * block in the log, 16 bytes a block's worth at a time, which the cleaner
 * then reads and moves again while the block is live (docs/lfs.md, "The
 * cleaner"). */
#define IMIN_MAX 512u
/* A block with this many such entries goes to the log rather than into
 * every record until it does: its 4 KiB there (and what the cleaner pays
 * for them) against 24 bytes per entry, summed and copied at every
 * checkpoint. */
#define IMIN_BLOCK 32u

static uint32_t imap_changes(const struct lfs_imblk *m)
{
	return lfs_imbits_count(m->cpchg);
}
static uint32_t imin_room(const struct lfs *fs)
{
	uint64_t room = (uint64_t)fs->sb.cp_sect * LFS_SECT, used = sizeof(struct lfs_cp) +
	                ((uint64_t)fs->nimblk + rec_nsut(fs)) * 8;
	uint64_t n = room > used ? (room - used) / sizeof(struct lfs_dimap) : 0;
	return n < IMIN_MAX ? (uint32_t)n : IMIN_MAX;
}

/* The record's inode map entries: those newer than their blocks in the
 * log, of the blocks in memory (cpchg) and of those not read since the
 * last record carried them (imin).  How many. */
static uint32_t put_imin(const struct lfs *fs, struct lfs_dimap *d)
{
	uint32_t n = 0, js[LFS_PER_BLK];
	for (uint32_t i = 0; i < fs->nimblk; i++) {
		const struct lfs_imblk *m = fs->im[i];
		if (m == NULL || !m->dirty)
			continue;
		uint32_t k = lfs_imbits_list(m->cpchg, js);
		for (uint32_t x = 0; x < k; x++) {
			d[n].ino = i * LFS_PER_BLK + js[x];
			d[n].pad = 0;
			d[n++].e = m->e[js[x]];
		}
	}
	if (fs->nimin > 0)
		memcpy(d + n, fs->imin, fs->nimin * sizeof *d);
	return n + fs->nimin;
}

/* Write a record made by write_record (the copy's sectors). */
static int send_record(struct lfs *fs)
{
	uint8_t *buf = fs->cprec;
	fs->cprec = NULL;
	if (buf == NULL)
		return 0;
	int64_t r = kit_io(&fs->k, fs->k.anchor, 0, 1, fs->sb.cp_disk[fs->cprec_copy], buf,
	                   (uint64_t)fs->cprec_n * LFS_SECT);
	free(buf);
	if (r < 0)
		return kit_err(r);
	fs->st.cp_bytes += (uint64_t)fs->cprec_n * LFS_SECT;
	return 0;
}

/* Write the record to copy (cpseq + 1) & 1, and flush - or, async, leave
 * both to lfs_cp_settle (the record waits in fs->cprec).  proved: it goes
 * to the disk in one flush with the PSs from fs->proof_lba on, and says
 * how they sum. */
static int write_record(struct lfs *fs, int clean, int proved, int async)
{
	size_t room = (size_t)fs->sb.cp_sect * LFS_SECT;
	uint32_t nsut = rec_nsut(fs);
	if (!cp_fits(fs, fs->nimblk, nsut) || fs->nimcp + fs->nimin > imin_room(fs))
		return -ENOSPC;
	uint8_t *buf = calloc(1, room);
	if (buf == NULL)
		return -ENOMEM;
	struct lfs_cp *cp = (struct lfs_cp *)buf;
	uint64_t seq = fs->cpseq + 1;
	int copy = (int)(seq & 1);
	cp->magic = LFS_CP_MAGIC;
	cp->version = LFS_CP_VERSION;
	cp->copy = (uint16_t)copy;
	cp->fsid = fs->sb.fsid;
	cp->cpseq = seq;
	cp->time = lfs_now();
	cp->clean = (uint32_t)clean;
	cp->head_lba = fs->seg * fs->sb.seg_sect + fs->ps;
	cp->head_seq = fs->seq;
	cp->head_prev = fs->prev;
	cp->cur_seg = fs->seg;
	cp->next_seg = fs->next;
	cp->max_ino = fs->max_ino;
	cp->free_head = fs->free_head;
	cp->nfiles = fs->nfiles;
	cp->nimap = fs->nimblk;
	cp->nsut = nsut;
	cp->st_new = fs->st.new_bytes;
	cp->st_clean_read = fs->st.clean_read;
	cp->st_clean_moved = fs->st.clean_moved;
	cp->hwm = fs->hwm;
	cp->proof_lba = proved ? fs->proof_lba : 0;
	cp->proof_hash = proved ? fs->proof_hash : 0;
	uint64_t *p = (uint64_t *)(cp + 1);
	memcpy(p, fs->imaddr, fs->nimblk * sizeof *p);
	memcpy(p + fs->nimblk, fs->sutaddr, nsut * sizeof *p);
	cp->nimin = put_imin(fs, (struct lfs_dimap *)(p + fs->nimblk + nsut));
	cp->nbytes = (uint32_t)(sizeof *cp + (fs->nimblk + nsut) * sizeof *p +
	                        cp->nimin * sizeof(struct lfs_dimap));
	cp->mac = lfs_mac(fs, buf, cp->nbytes);
	free(fs->cprec);
	fs->cprec = buf;
	fs->cprec_n = (cp->nbytes + LFS_SECT - 1) / LFS_SECT;
	fs->cprec_copy = (uint8_t)copy;
	if (!async) {
		int e = send_record(fs);
		if (e == 0)
			e = kit_barrier(&fs->k);
		fs->st.flushes++;
		if (e < 0)
			return e;
	}
	/* (Taken now even when the flush is still to come: a segment the log
	 * enters from here on is tagged with it, and is not reusable before
	 * a later checkpoint - lfs_seg_reusable.) */
	fs->cpseq = seq;
	fs->cp_pending = (uint8_t)async;
	fs->cpf_sent = 0;
	return 0;
}

/* A usage table block's copy leaves (-1) or enters (+1) the segment of
 * lba: its live bytes, not its table entry (see nsut). */
static void sut_copy(struct lfs *fs, uint64_t lba, int dir)
{
	uint64_t s = lfs_seg_of(fs, lba);
	if (s == 0 || s >= fs->sb.nsegs)
		return;
	struct lfs_seg *g = lfs_seg(fs, s);
	if (dir < 0) {
		if (g->nsut == 0 || g->e.live < LFS_BSIZE) {
			lfs_damaged(fs, "segment usage below zero", s);
			return;
		}
		g->nsut--;
		g->e.live -= LFS_BSIZE;
		fs->live_total -= LFS_BSIZE;
	} else {
		g->nsut++;
		g->e.live += LFS_BSIZE;
		fs->live_total += LFS_BSIZE;
		g->cpzero = 0;
	}
	lfs_seg_mark(fs, s);
	lfs_seg_changed(fs, s);
}

static void settle(struct lfs *fs, uint64_t s)
{
	struct lfs_seg *g = lfs_seg(fs, s);
	g->dirty = 0;
	g->cpzero = g->e.live == 0 && !g->reserved;
	lfs_seg_changed(fs, s);
}

/* What a checkpoint does once its record is durable. */
static int durable(struct lfs *fs)
{
	lfs_multi_checkpointed(fs);       /* the others' journal starts again */
	if (lfs_debug_sets && lfs_seg_sets_check(fs) != 0) {
		lfs_damaged(fs, "the segment sets disagree with the usage table", fs->cpseq);
		fs->err = -EIO;              /* the test's next change fails */
		return -EIO;
	}
	fs->av_valid = 0;
	return lfs_release(fs);
}

/* A cleaning round's checkpoint, after lfs_checkpoint returned: its
 * COMMIT PS waits for the flush of its group (lfs_dfr_issue), then one
 * flush takes the COMMIT PS, the table blocks and the record to the disk
 * (the record's proof covers the PSs, in whatever order they land), and
 * then the segments the round emptied may be used again. */
int lfs_cp_settle(struct lfs *fs, int wait)
{
	TRY(lfs_dfr_issue(fs, wait));
	if (!fs->cp_pending || fs->dfr)
		return 0;                    /* (not waiting: the first flush is not done) */
	if (!fs->cpf_sent) {
		int e = send_record(fs);
		if (e == 0)
			e = lfs_log_wait(fs);    /* (a flush covers the writes done) */
		if (e == 0)
			e = kit_barrier_start(&fs->k, &fs->cpf);
		fs->st.flushes++;
		if (e < 0) {
			fs->cp_pending = 0;
			fs->ncpw = 0;
			if (fs->err == 0)
				fs->err = e;
			return e;
		}
		fs->cpf_sent = 1;
	}
	if (!wait && fs->cpf.pending && fs->cpf.word == ED_PENDING)
		return 0;
	fs->cp_pending = 0;
	int e = kit_barrier_end(&fs->k, &fs->cpf);
	if (e < 0) {
		/* Not known durable: what it emptied is never reused. */
		fs->ncpw = 0;
		if (fs->err == 0)
			fs->err = e;
		return e;
	}
	/* Listed at the checkpoint, those empty then (none was written
	 * since: the log takes only reusable segments). */
	for (uint32_t i = 0; i < fs->ncpw; i++) {
		struct lfs_seg *g = lfs_sg(fs, fs->cpw[i]);
		g->cpzero = g->e.live == 0 && !g->reserved;
		lfs_seg_changed(fs, fs->cpw[i]);
	}
	fs->ncpw = 0;
	return durable(fs);
}

void lfs_cp_abandon(struct lfs *fs)
{
	if (fs->cp_pending || fs->dfr)
		fs->sh_stale = 1;            /* (the next holder must not trust our head) */
	fs->dfr = fs->dfr_next = 0;
	kit_barrier_end(&fs->k, &fs->dff);
	if (fs->cp_pending && fs->cpf_sent)
		kit_barrier_end(&fs->k, &fs->cpf);
	fs->cp_pending = fs->cpf_sent = 0;
	fs->ncpw = 0;
	free(fs->cprec);
	fs->cprec = NULL;
}

int lfs_checkpoint(struct lfs *fs, int clean)
{
	if (fs->rdonly)
		return 0;
	if (fs->err)
		return fs->err;
	TRY(lfs_cp_settle(fs, 1));        /* (the copies alternate) */
	/* Not a durable commit: the record's flush makes it durable.  After
	 * the commit's own flush (everything before its COMMIT PS), the
	 * commit and the table blocks are summed as they are written (the
	 * proof), so that the record can go to the disk in the same flush as
	 * they do: a mount believes it only if they are all there.
	 *
	 * A cleaning round's checkpoint is not waited for (async): its commit
	 * holds the COMMIT PS back while its flush is on its way, the record
	 * waits in memory, and lfs_cp_settle finishes the rest while the
	 * program goes on writing.  (Another process gets the log only after
	 * it is settled - multi.c; not while proxies follow the files, which
	 * see commits as they are made.) */
	int async = fs->cleaning && !clean && !fs->cpl_all && fs->shares == NULL;
	fs->cp_prove = 1;
	fs->cp_defer = (uint8_t)async;
	int e = lfs_commit_mode(fs, 0);
	fs->cp_prove = fs->cp_defer = 0;
	if (e == 0 && !fs->proving) {
		/* (Nothing to commit: the proof starts here, after a flush of
		 * what is not yet durable.) */
		e = lfs_harden_pending(fs);
		if (e == 0)
			lfs_proof_start(fs);
	}
	if (e < 0) {
		fs->proving = 0;
		return e;
	}
	if (clean)
		fs->clean_keep = 0;           /* (an unmount: nothing is kept mapped) */
	fs->in_ckpt = 1;
	/* The inode map.  Its entries changed since their blocks were last
	 * written go in the record while they fit (write_record), and then
	 * only the blocks whose copies are in segments being cleaned go to
	 * the log: a checkpoint after a cleaning round costs the usage table
	 * blocks and the record, not every map block the round's files
	 * touched.  Once they do not fit, every block that changed goes to
	 * the log (first reading those the record carried entries for). */
	uint32_t fit = imin_room(fs);
	fit = fit > 4 ? fit - 4 : 0;      /* (the log may pass the mark meanwhile:
	                                     a usage table pointer more) */
	int all = fs->nimcp + fs->nimin > fit;
	while (all && e == 0 && fs->nimin > 0) {
		uint32_t before = fs->nimin;
		struct lfs_imblk *m;
		e = lfs_imap_block(fs, fs->imin[0].ino / LFS_PER_BLK, &m);   /* (applies them) */
		if (e == 0 && fs->nimin == before)
			e = -EIO;             /* (cannot be: a block in memory has none waiting) */
	}
	for (uint32_t i = 0; i < fs->nimblk && e == 0; i++) {
		struct lfs_imblk *m = fs->im[i];
		if (m == NULL || !m->dirty)
			continue;
		if (!all && !m->move && imap_changes(m) < IMIN_BLOCK)
			continue;
		struct lfs_psent pe = { 0, 0, i, LFS_K_IMAP, LFS_BSECT, 0 };
		uint64_t lba;
		uint8_t *p = lfs_log_append(fs, &pe, &lba, &e);
		if (p == NULL)
			break;
		memset(p, 0, LFS_BSIZE);
		memcpy(p + sizeof(struct lfs_blkhdr), m->e, sizeof m->e);
		lfs_seal_block(p, LFS_IMAP_MAGIC, i);
		if (fs->imaddr[i] != 0)
			lfs_seg_use(fs, LFS_PTR_LBA(fs->imaddr[i]), -(int64_t)LFS_BSIZE);
		fs->imaddr[i] = LFS_PTR(lba, LFS_BSECT);
		lfs_seg_use(fs, lba, LFS_BSIZE);
		fs->nimcp -= imap_changes(m);
		memset(m->cpchg, 0, sizeof m->cpchg);
		m->dirty = m->move = 0;
		fs->nimdirty--;
		fs->st.cp_bytes += LFS_BSIZE;
		fs->st.cp_imap_blocks++;
	}
	/* The usage table blocks that changed since the last checkpoint, and
	 * only those: the cost follows what changed, not the volume.  A block
	 * holds its segments' entries without the table blocks' own bytes
	 * (struct lfs_seg.nsut), so moving a table block changes no block's
	 * contents; a mount adds them back from the record's pointers.  A
	 * segment the log enters while these are appended dirties its block
	 * again: hence until none is left. */
	while (e == 0 && fs->nsutchg > 0) {
		uint32_t i = fs->sutchg[--fs->nsutchg];
		struct lfs_psent pe = { 0, 0, i, LFS_K_SUT, LFS_BSECT, 0 };
		uint64_t lba;
		uint8_t *p = lfs_log_append(fs, &pe, &lba, &e);
		if (p == NULL) {
			fs->nsutchg++;
			break;
		}
		fs->sutdirty[i] = 0;
		if (fs->sutaddr[i] != 0)
			sut_copy(fs, LFS_PTR_LBA(fs->sutaddr[i]), -1);
		sut_copy(fs, lba, 1);
		fs->sutaddr[i] = LFS_PTR(lba, LFS_BSECT);
		e = lfs_sut_block(fs, i, p);
		if (e < 0)
			break;               /* the record is never written */
		fs->st.cp_sut_blocks++;
		fs->st.cp_bytes += LFS_BSIZE;
	}
	/* The record that points at them: in the same flush, with the proof,
	 * when the log entered at most one new segment meanwhile (a mount
	 * reads what the proof covers) and no segment it took waits for the
	 * volume's map to be committed; else after a flush of its own, as
	 * before (the proof 0). */
	if (e == 0)
		e = lfs_log_close(fs, LFS_PS_CKPT);
	int proved = fs->proving && fs->proof_segs <= 1 && fs->v.dirty.n == 0;
	fs->proving = 0;
	/* The segments a round's checkpoint empties are listed now, and
	 * become reusable when it is durable (lfs_cp_settle). */
	async = async && !fs->cpl_all;
	if (e == 0 && !async)
		e = lfs_dfr_issue(fs, 1);
	if (e == 0 && !(async && proved))
		e = proved ? lfs_log_wait(fs) : lfs_harden(fs);   /* (a flush covers writes done) */
	if (e == 0)
		e = write_record(fs, clean, proved, async);
	if (e == 0)
		fs->undurable = fs->unflushed = 0;   /* (the record's flush covered them) */
	fs->in_ckpt = 0;
	if (e < 0) {
		if (fs->err == 0)
			fs->err = e;
		return e;
	}
	/* Durable: what it says is empty may be written again.  Only the
	 * segments whose state changed since the last checkpoint can have
	 * changed their answer (lfs_seg_mark). */
	for (uint32_t i = 0; i < fs->nschg; i++)
		lfs_sg(fs, fs->schg[i])->changed = 0;
	fs->nschg = 0;
	fs->since_cp = 0;
	fs->st.checkpoints++;
	if (fs->cp_pending) {
		/* The list (cpl) becomes the pending one (cpw), keeping only
		 * the segments empty now: off the list, so that what changes
		 * them from here on lists them for the next checkpoint. */
		uint32_t n = 0;
		for (uint32_t i = 0; i < fs->ncpl; i++) {
			struct lfs_seg *g = lfs_sg(fs, fs->cpl[i]);
			g->dirty = 0;
			if (g->e.live == 0 && !g->reserved)
				fs->cpl[n++] = fs->cpl[i];
		}
		uint32_t *v = fs->cpw, cap = fs->cpwcap;
		fs->cpw = fs->cpl;
		fs->cpwcap = fs->cplcap;
		fs->ncpw = n;
		fs->cpl = v;
		fs->cplcap = cap;
		fs->ncpl = 0;
		fs->av_valid = 0;
		return lfs_cp_settle(fs, 0);  /* (sends the flush, if it can go now) */
	}
	if (fs->cpl_all) {
		for (uint64_t s = 1; s < fs->hwm; s++)
			if (fs->sutload[s / LFS_PER_BLK])
				settle(fs, s);
	} else {
		for (uint32_t i = 0; i < fs->ncpl; i++)
			settle(fs, fs->cpl[i]);
	}
	fs->ncpl = 0;
	fs->cpl_all = 0;
	return durable(fs);
}

/* ---- reading a checkpoint --------------------------------------------------------- */

int lfs_cp_read(struct lfs *fs, int copy, struct lfs_cp *cp, uint64_t **ptrs)
{
	size_t room = (size_t)fs->sb.cp_sect * LFS_SECT;
	uint8_t *buf = malloc(room);
	if (buf == NULL)
		return -ENOMEM;
	/* The first sector says how long the record is; the rest of the copy's
	 * area is read only as far as that (a mount reads what the record
	 * holds, not the area). */
	int64_t r = kit_io(&fs->k, fs->k.anchor, 0, 0, fs->sb.cp_disk[copy], buf, LFS_SECT);
	int e = r < 0 ? kit_err(r) : 0;
	fs->st.cp_rd_sect++;
	struct lfs_cp c;
	memcpy(&c, buf, sizeof c);
	if (e == 0 && c.nbytes > LFS_SECT && c.nbytes <= room) {
		size_t more = ((size_t)c.nbytes + LFS_SECT - 1) / LFS_SECT * LFS_SECT - LFS_SECT;
		r = kit_io(&fs->k, fs->k.anchor, 0, 0, fs->sb.cp_disk[copy] + 1, buf + LFS_SECT, more);
		e = r < 0 ? kit_err(r) : 0;
		fs->st.cp_rd_sect += more / LFS_SECT;
	}
	if (e == 0) {
		uint64_t mac = c.mac;
		((struct lfs_cp *)buf)->mac = 0;
		/* (A version 2 record has no map entries: its nimin was spare.) */
		if (c.magic != LFS_CP_MAGIC || c.version < LFS_VERSION || c.version > LFS_CP_VERSION ||
		    (c.version == LFS_VERSION && c.nimin != 0) || c.fsid != fs->sb.fsid ||
		    c.copy != copy || c.nbytes > room || c.nbytes < sizeof c ||
		    c.nbytes != sizeof c + ((uint64_t)c.nimap + c.nsut) * 8 +
		                (uint64_t)c.nimin * sizeof(struct lfs_dimap) ||
		    lfs_mac(fs, buf, c.nbytes) != mac)
			e = -EIO;
	}
	if (e < 0) {
		free(buf);
		return e;
	}
	if (c.version < 4)
		c.proof_lba = c.proof_hash = 0;   /* (spare before version 4) */
	*cp = c;
	*ptrs = (uint64_t *)buf;      /* the pointers start at sizeof c */
	return 0;
}

/* Is ptr a believable table block pointer? */
static int ptr_ok(const struct lfs *fs, uint64_t p)
{
	return p == 0 || (LFS_PTR_NSECT(p) == LFS_BSECT && LFS_PTR_LBA(p) >= fs->sb.seg_sect &&
	                  LFS_PTR_LBA(p) + LFS_BSECT <= fs->sb.nsegs * fs->sb.seg_sect);
}

/* ---- roll-forward ------------------------------------------------------------------- */

struct roll {
	uint8_t *ps;              /* one PS, at most a segment                    */
	uint8_t *delta;           /* the group's commit records                    */
	size_t ndelta, capdelta;
};

static int keep_delta(struct roll *r, const uint8_t *p, size_t n)
{
	if (r->ndelta + n > r->capdelta) {
		size_t cap = r->capdelta ? r->capdelta * 2 : 65536;
		while (cap < r->ndelta + n)
			cap *= 2;
		uint8_t *v = realloc(r->delta, cap);
		if (v == NULL)
			return -ENOMEM;
		r->delta = v;
		r->capdelta = cap;
	}
	memcpy(r->delta + r->ndelta, p, n);
	r->ndelta += n;
	return 0;
}

/* Apply a group's commit records.  They were each checked. */
int lfs_apply_deltas(struct lfs *fs, const uint8_t *delta, size_t n)
{
	for (size_t off = 0; off < n;) {
		const struct lfs_delta *d = (const void *)(delta + off);
		size_t bytes = sizeof *d + (size_t)(d->nimap + d->nsut) * sizeof(struct lfs_dimap);
		size_t nsect = (bytes + LFS_SECT - 1) / LFS_SECT;
		if (d->max_ino > fs->max_ino) {
			if (d->max_ino == 0)
				return -EIO;
			TRY(lfs_imap_grow(fs, (d->max_ino - 1) / LFS_PER_BLK));
		}
		fs->max_ino = d->max_ino > fs->max_ino ? d->max_ino : fs->max_ino;
		fs->free_head = d->free_head;
		fs->nfiles = d->nfiles;
		const struct lfs_dimap *di = (const void *)(d + 1);
		for (uint32_t i = 0; i < d->nimap; i++) {
			if (di[i].ino == 0 || di[i].ino >= fs->max_ino)
				return -EIO;
			struct lfs_imblk *m;
			TRY(lfs_imap_block(fs, di[i].ino / LFS_PER_BLK, &m));
			m->e[di[i].ino % LFS_PER_BLK] = di[i].e;
			lfs_imap_cpmark(fs, m, di[i].ino % LFS_PER_BLK);
		}
		const struct lfs_dsut *ds = (const void *)(di + d->nimap);
		for (uint32_t i = 0; i < d->nsut; i++) {
			if (ds[i].seg == 0 || ds[i].seg >= fs->sb.nsegs)
				return -EIO;
			struct lfs_seg *g = lfs_seg(fs, ds[i].seg);
			lfs_seg_unlist(fs, ds[i].seg);     /* its mtime may change */
			fs->live_total = fs->live_total - g->e.live + ds[i].e.live;
			g->e = ds[i].e;
			g->cpzero = 0;
			lfs_sut_dirty(fs, ds[i].seg);
			lfs_seg_changed(fs, ds[i].seg);
		}
		off += nsect * LFS_SECT;
	}
	return 0;
}

/* Keep the commit records of a checked PS (body: its sectors after the
 * header; ent: its trailer). */
static int gather(struct lfs *fs, struct roll *r, const struct lfs_pshdr *h)
{
	const uint8_t *body = r->ps + LFS_SECT;
	const struct lfs_psent *ent = (const void *)(r->ps + (size_t)(h->nsect - h->ntrail) * LFS_SECT);
	uint32_t at = 0, limit = h->nsect - 1 - h->ntrail;
	for (uint32_t i = 0; i < h->nent; i++) {
		if (ent[i].nsect == 0 || at + ent[i].nsect > limit)
			return -EIO;
		if (ent[i].kind == LFS_K_DELTA) {
			const uint8_t *p = body + (size_t)at * LFS_SECT;
			size_t n = (size_t)ent[i].nsect * LFS_SECT;
			struct lfs_delta d;
			memcpy(&d, p, sizeof d);
			size_t bytes = sizeof d + (size_t)(d.nimap + d.nsut) * sizeof(struct lfs_dimap);
			uint8_t *t = malloc(n);
			if (t == NULL)
				return -ENOMEM;
			memcpy(t, p, n);
			((struct lfs_delta *)t)->csum = 0;
			int ok = d.magic == LFS_DELTA_MAGIC && bytes <= n && lfs_sum32(t, n) == d.csum;
			free(t);
			if (!ok)
				return -EIO;
			TRY(keep_delta(r, p, n));
		}
		at += ent[i].nsect;
	}
	return 0;
}

/* Is h, read from lba, a PS header of this file system (its MAC, its
 * own address) whose sizes fit its segment? */
static int hdr_ok(const struct lfs *fs, const struct lfs_pshdr *h, uint64_t lba)
{
	uint64_t s = lfs_seg_of(fs, lba);
	uint32_t off = (uint32_t)(lba - s * fs->sb.seg_sect);
	if (h->magic != LFS_PS_MAGIC || h->version != LFS_VERSION || h->fsid != fs->sb.fsid ||
	    h->lba != lba || h->mac != lfs_mac(fs, h, offsetof(struct lfs_pshdr, mac)))
		return 0;
	return h->nsect >= 1 && off + h->nsect <= fs->sb.seg_sect && h->ntrail < h->nsect &&
	       h->ntrail == lfs_trail_sect(h->nent) && h->next_seg < fs->sb.nsegs;
}

/* The header sector at lba into buf (and h): 1 a PS's header, 0 not
 * one, -1 not read (outside the volume, or unmapped). */
static int ps_head(struct lfs *fs, uint64_t lba, uint8_t *buf, struct lfs_pshdr *h)
{
	uint64_t s = lfs_seg_of(fs, lba);
	if (s == 0 || s >= fs->sb.nsegs || lfs_io(fs, 0, lba, buf, 1) < 0)
		return -1;
	memcpy(h, buf, sizeof *h);
	return hdr_ok(fs, h, lba);
}

/* The rest of what close_ps wrote of that PS (a filler: its header alone)
 * after it in buf: all the sectors it wrote, or 0 if the read failed. */
static uint32_t ps_body(struct lfs *fs, uint64_t lba, uint8_t *buf, const struct lfs_pshdr *h)
{
	uint32_t body = (h->ntrail ? h->nsect : 1) - 1;
	if (body > 0 && lfs_io(fs, 0, lba + 1, buf + LFS_SECT, body) < 0)
		return 0;
	return body + 1;
}

/* Read and check the PS at lba; 1 if it is the chain's next one (seq,
 * and prev: the MAC of the header before it). */
static int read_ps(struct lfs *fs, struct roll *r, uint64_t lba, uint64_t seq, uint64_t prev,
                   struct lfs_pshdr *h)
{
	int head = ps_head(fs, lba, r->ps, h);
	if (head < 0)
		return 0;
	fs->st.roll_sect++;
	if (!head || h->seq != seq || h->prev != prev)
		return 0;
	uint32_t n = ps_body(fs, lba, r->ps, h);
	if (n == 0)
		return 0;
	fs->st.roll_sect += n - 1;
	const uint8_t *t = r->ps + (size_t)(h->nsect - h->ntrail) * LFS_SECT;
	if (lfs_sum64(t, (size_t)h->ntrail * LFS_SECT, h->seq) != h->trail_hash)
		return 0;
	if ((h->flags & LFS_PS_COMMIT) &&
	    lfs_sum64(r->ps + LFS_SECT, (size_t)(h->nsect - 1) * LFS_SECT, h->seq) != h->data_hash)
		return 0;
	fs->st.roll_ps++;
	return 1;
}

/* Where the log goes after the PS h at lba: the next PS's address, and
 * the segment after that one's (0: not known yet).  0 if it goes
 * nowhere (its segment is full and no next one was named). */
static uint64_t after(const struct lfs *fs, const struct lfs_pshdr *h, uint64_t lba, uint64_t *nnext)
{
	uint64_t s = lfs_seg_of(fs, lba);
	uint32_t off = (uint32_t)(lba - s * fs->sb.seg_sect) + h->nsect;
	*nnext = h->next_seg;
	if (off + LFS_PS_MIN <= fs->sb.seg_sect)
		return s * fs->sb.seg_sect + off;
	*nnext = 0;
	return h->next_seg * fs->sb.seg_sect;
}

/* Is a record's proof right?  A record written in one flush with the PSs
 * after the flush before it (its commit and table blocks) counts only if
 * they reached the disk too: from proof_lba to the record's head, each
 * PS's written sectors, summed in order, must give proof_hash.  Torn or
 * lost, the record is as good as torn, and the other copy, one checkpoint
 * older, is used: that one's roll-forward reaches the same commit if it
 * is there, and the segments either names are not reused before the
 * newer record's flush (rule 3).  1 yes, 0 no, -ENOMEM: no buffer to
 * read them into (no verdict: the mount stops). */
int lfs_debug_proof_nomem;

static int proof_ok(struct lfs *fs, const struct lfs_cp *cp)
{
	if (cp->proof_lba == 0)
		return 1;
	uint8_t *ps = lfs_debug_proof_nomem ? NULL : malloc(lfs_segbytes(fs));
	if (ps == NULL)
		return -ENOMEM;              /* (not a verdict on the record) */
	uint64_t lba = cp->proof_lba, sum = cp->proof_lba, nnext;
	/* (The writer gives up the proof when the log enters a second
	 * segment: at most two segments of PSs.) */
	uint32_t left = 2 * fs->sb.seg_sect;
	int ok = 0;
	while (lba != 0 && left > 0) {
		if (lba == cp->head_lba) {
			ok = sum == cp->proof_hash;
			break;
		}
		struct lfs_pshdr h;
		if (ps_head(fs, lba, ps, &h) != 1 || (h.ntrail ? h.nsect : 1) > left)
			break;
		uint32_t n = ps_body(fs, lba, ps, &h);
		if (n == 0)
			break;
		fs->st.proof_sect += n;
		left -= n;
		sum = lfs_sum64(ps, (size_t)n * LFS_SECT, sum);
		lba = after(fs, &h, lba, &nnext);
	}
	free(ps);
	return ok;
}

/* ---- was it the tail? ---------------------------------------------------------------
 *
 * Roll-forward ends at the first PS that fails.  After a power cut that
 * is the torn tail, and what follows the last commit applied is rightly
 * ignored; but damage to a durable PS (bits flipped in its header, its
 * blocks, its commit record) fails the same way, and stopping there would
 * silently drop every commit written after it.  The bad PS alone cannot
 * tell the two apart.  What can: a COMMIT PS is written only after every
 * PS before it in the chain is durable (log.c: the flush before it), and
 * the next mount's roll-forward then reaches it and applies it, so the
 * log always resumes after every commit that ever reached the disk.
 * Hence after a cut no valid COMMIT PS with a sequence number above the
 * point where the log ended exists anywhere - lost tails leave only
 * non-commit PSs (and torn commits, which fail their hash).  A valid one
 * beyond proves that the PS where roll-forward stopped was durable and
 * is now damaged.
 *
 * Looking for one costs what was written, not the disk: the rest of the
 * segment where the log ended (one read; any header there with a higher
 * sequence number is followed along its own chain), then the segment the
 * log goes to next, as the last good header, the bad one's if its MAC
 * holds, or a later one names it (its first header, followed).  Following
 * a chain stops at its first commit or where it fails.
 *
 * What this cannot see (docs/lfs.md, "Damage"): damage to the newest
 * commit, or to anything after it, is a torn tail as far as the disk can
 * say - nothing durable follows it; and when the damage takes out every
 * header that names the next segment (the bad PS was its segment's first
 * and every header after it in the segment is damaged too, e.g. one PS
 * filling the segment) the commits in the segments after it are not
 * found. */

struct later {
	uint64_t seq, lba;        /* the first valid commit found beyond the end    */
	uint64_t seen[8];         /* segments whose start was followed              */
	uint32_t nseen;
};

static int seen(struct later *c, uint64_t s, int add)
{
	for (uint32_t i = 0; i < c->nseen; i++)
		if (c->seen[i] == s)
			return 1;
	if (add && c->nseen < 8)
		c->seen[c->nseen++] = s;
	return 0;
}

/* Follow the chain from the valid header h at lba, applying nothing: 1
 * if it reaches a COMMIT PS (c says which).  *end: where it ended, in
 * lba's segment (for the scan to go on after it). */
static int follow(struct lfs *fs, struct roll *r, const struct lfs_pshdr *h0, uint64_t lba,
                  struct later *c, uint64_t *end)
{
	uint64_t seq = h0->seq, prev = h0->prev, s0 = lfs_seg_of(fs, lba);
	uint64_t before = fs->st.roll_sect, before_ps = fs->st.roll_ps;
	int found = 0;
	*end = lba + 1;
	for (uint64_t steps = 0; steps < fs->sb.nsegs * (uint64_t)fs->sb.seg_sect; steps++) {
		struct lfs_pshdr h;
		if (!read_ps(fs, r, lba, seq, prev, &h))
			break;
		if (h.flags & LFS_PS_COMMIT) {
			c->seq = h.seq;
			c->lba = lba;
			found = 1;
			break;
		}
		uint64_t nnext;
		lba = after(fs, &h, lba, &nnext);
		if (lba == 0)
			break;
		if (lfs_seg_of(fs, lba) == s0)
			*end = lba;
		else if (lba % fs->sb.seg_sect == 0 && seen(c, lfs_seg_of(fs, lba), 1))
			break;                /* (followed from there already) */
		seq++;
		prev = h.mac;
	}
	fs->st.tail_sect += fs->st.roll_sect - before;
	fs->st.roll_sect = before;        /* (the roll's own counts stay its own) */
	fs->st.roll_ps = before_ps;
	return found;
}

/* The log ended at lba, where a PS with sequence number seq should have
 * been; next: the segment its headers name as the next one (0: not
 * known).  1 if a valid commit lies beyond (c says which). */
static int tail_probe(struct lfs *fs, struct roll *r, uint64_t lba, uint64_t seq, uint64_t next,
                      struct later *c)
{
	uint64_t s = lfs_seg_of(fs, lba);
	uint32_t off = (uint32_t)(lba - s * fs->sb.seg_sect), n = fs->sb.seg_sect - off;
	uint64_t nexts[4] = { next, 0, 0, 0 };
	uint32_t nn = 1;
	uint8_t *buf = malloc((size_t)n * LFS_SECT);
	if (buf == NULL)
		return -ENOMEM;
	seen(c, s, 1);
	int found = 0;
	if (lfs_io(fs, 0, lba, buf, n) == 0) {
		fs->st.tail_sect += n;
		for (uint32_t i = 0; i < n && !found; i++) {
			struct lfs_pshdr h;
			memcpy(&h, buf + (size_t)i * LFS_SECT, sizeof h);
			if (!hdr_ok(fs, &h, lba + i) || h.seq < seq)
				continue;             /* (an older lap of the segment) */
			if (h.next_seg != 0 && nn < 4 && h.next_seg != nexts[nn - 1])
				nexts[nn++] = h.next_seg;
			if (h.seq == seq) {
				i += h.nsect - 1;     /* the bad PS itself: only where it goes */
				continue;
			}
			uint64_t end;
			found = follow(fs, r, &h, lba + i, c, &end);
			if (end > lba + i + 1)
				i = (uint32_t)(end - lba) - 1;
		}
	}
	free(buf);
	for (uint32_t k = 0; k < nn && !found; k++) {
		uint64_t t = nexts[k];
		if (t == 0 || t == s || seen(c, t, 1))
			continue;
		struct lfs_pshdr h;
		uint64_t at = t * fs->sb.seg_sect, end;
		if (lfs_io(fs, 0, at, r->ps, 1) < 0)
			continue;
		fs->st.tail_sect++;
		memcpy(&h, r->ps, sizeof h);
		if (hdr_ok(fs, &h, at) && h.seq > seq)
			found = follow(fs, r, &h, at, c, &end);
	}
	return found;
}

int lfs_roll(struct lfs *fs, uint64_t lba, uint64_t seq, uint64_t prev, uint64_t seg, uint64_t next)
{
	struct roll r = { 0 };
	r.ps = malloc(lfs_segbytes(fs));
	if (r.ps == NULL)
		return -ENOMEM;
	/* Where the log resumes: after the last commit applied. */
	uint64_t hseg = seg, hnext = next;
	uint32_t hpos = (uint32_t)(lba - seg * fs->sb.seg_sect);
	uint64_t hseq = seq, hprev = prev;
	uint64_t known = next;            /* the segment after lba's, if known */
	int e = 0, ended = 0;
	for (uint64_t steps = 0; steps < fs->sb.nsegs * (uint64_t)fs->sb.seg_sect; steps++) {
		struct lfs_pshdr h;
		if (!read_ps(fs, &r, lba, seq, prev, &h)) {
			ended = 1;
			break;
		}
		uint64_t s = lfs_seg_of(fs, lba);
		lfs_seg(fs, s)->tag = (uint32_t)fs->cpseq;
		lfs_sg(fs, s)->cpzero = 0;
		lfs_seg_mark(fs, s);
		lfs_seg_changed(fs, s);
		if (h.ntrail > 0 && gather(fs, &r, &h) < 0) {
			known = h.next_seg;
			ended = 1;
			break;
		}
		seq++;
		prev = h.mac;
		uint64_t nnext;
		lba = after(fs, &h, lba, &nnext);
		if (lba == 0)
			break;
		known = nnext;
		if (h.flags & LFS_PS_COMMIT) {
			e = lfs_apply_deltas(fs, r.delta, r.ndelta);
			if (e < 0) {
				lfs_damaged(fs, "a commit record roll-forward cannot apply", lba);
				break;
			}
			r.ndelta = 0;
			fs->st.roll_groups++;
			hseg = lfs_seg_of(fs, lba);
			hpos = (uint32_t)(lba - hseg * fs->sb.seg_sect);
			hnext = nnext;
			hseq = seq;
			hprev = prev;
		}
	}
	/* The log ended where a PS fails: a torn tail, unless a valid commit
	 * lies beyond (above).  Not when the end is a head another process
	 * left durable. */
	struct later c = { 0 };
	if (e == 0 && ended && !(fs->roll_end != 0 && seq == fs->roll_end)) {
		e = tail_probe(fs, &r, lba, seq, known, &c);
		if (e > 0) {
			fs->logbad.seq = seq;
			fs->logbad.lba = lba;
			fs->logbad.later_seq = c.seq;
			fs->logbad.later_lba = c.lba;
			fprintf(stderr, "lfs: damaged: the log fails its checks at partial segment %llu "
			        "(segment %llu, sector %llu), but a valid commit follows it (partial "
			        "segment %llu, segment %llu): the commits after partial segment %llu "
			        "cannot be applied; mounted read-only as of that one (run fsck -t lfs)\n",
			        (unsigned long long)seq, (unsigned long long)lfs_seg_of(fs, lba),
			        (unsigned long long)(lba % fs->sb.seg_sect), (unsigned long long)c.seq,
			        (unsigned long long)lfs_seg_of(fs, c.lba), (unsigned long long)(hseq - 1));
			fs->rdonly = 1;           /* (as lfs_damaged: nothing more is written) */
			e = 0;
		}
	}
	free(r.ps);
	free(r.delta);
	if (e < 0)
		return e;
	fs->seq = hseq;
	fs->prev = hprev;
	return lfs_log_start(fs, hseg, hpos, hnext);
}

int lfs_load(struct lfs *fs)
{
	struct lfs_cp c[2];
	uint64_t *p[2] = { NULL, NULL };
	int ok[2];
	for (int i = 0; i < 2; i++)
		ok[i] = lfs_cp_read(fs, i, &c[i], &p[i]) == 0;
	int use = ok[0] && ok[1] ? c[1].cpseq > c[0].cpseq : ok[1];
	for (int tries = 0; tries < 2 && ok[use]; tries++) {
		int proved = proof_ok(fs, &c[use]);
		if (proved < 0) {
			fprintf(stderr, "lfs: no memory to check the checkpoint record: cannot mount\n");
			free(p[0]);
			free(p[1]);
			return proved;
		}
		if (proved)
			break;
		ok[use] = 0;
		use = !use;
		fs->st.cp_unproved++;
	}
	if (!ok[use]) {
		fprintf(stderr, "lfs: neither checkpoint copy is valid: cannot mount\n");
		free(p[0]);
		free(p[1]);
		return -EIO;
	}
	const struct lfs_cp *cp = &c[use];
	const uint64_t *ptr = (const uint64_t *)((const uint8_t *)p[use] + sizeof *cp);
	int e = 0;
	/* A record leaves out the table blocks wholly above its high-water
	 * mark (never written); one without a mark (older) has them all. */
	if (cp->nsut > fs->nsutblk ||
	    (cp->nsut < fs->nsutblk && (cp->hwm == 0 || cp->hwm > (uint64_t)cp->nsut * LFS_PER_BLK)) ||
	    cp->max_ino == 0 || cp->cur_seg == 0 ||
	    cp->cur_seg >= fs->sb.nsegs || cp->next_seg >= fs->sb.nsegs ||
	    lfs_seg_of(fs, cp->head_lba) != cp->cur_seg ||
	    (uint64_t)cp->max_ino > (uint64_t)cp->nimap * LFS_PER_BLK)
		e = -EIO;
	for (uint32_t i = 0; e == 0 && i < cp->nimap + cp->nsut; i++)
		if (!ptr_ok(fs, ptr[i]))
			e = -EIO;
	/* The map entries the record carries: applied to their blocks as
	 * those are read (imap.c), so the mount reads no map block. */
	const struct lfs_dimap *imin = (const void *)(ptr + cp->nimap + cp->nsut);
	for (uint32_t i = 0; e == 0 && i < cp->nimin; i++)
		if (imin[i].ino == 0 || imin[i].ino >= cp->max_ino)
			e = -EIO;
	if (e == 0)
		e = lfs_imap_init(fs, cp->nimap);
	if (e == 0 && cp->nimin > 0) {
		fs->imin = malloc(cp->nimin * sizeof *fs->imin);
		if (fs->imin == NULL)
			e = -ENOMEM;
		else
			memcpy(fs->imin, imin, cp->nimin * sizeof *fs->imin);
		fs->nimin = fs->imin ? cp->nimin : 0;
	}
	if (e == 0) {
		memcpy(fs->imaddr, ptr, cp->nimap * sizeof *ptr);
		memcpy(fs->sutaddr, ptr + cp->nimap, cp->nsut * sizeof *ptr);
		fs->cpseq = cp->cpseq;
		fs->max_ino = cp->max_ino;
		fs->free_head = cp->free_head;
		fs->nfiles = cp->nfiles;
		fs->st.new_bytes = cp->st_new;
		fs->st.clean_read = cp->st_clean_read;
		fs->st.clean_moved = cp->st_clean_moved;
	}
	free(p[0]);
	free(p[1]);
	if (e == -EIO)
		fprintf(stderr, "lfs: the checkpoint is damaged: cannot mount\n");
	if (e < 0)
		return e;
	/* The usage table is not read here: its blocks come in as they are
	 * wanted (seg.c, lfs_seg) - roll-forward's segments, the log's, the
	 * segments whose blocks die - so a mount costs what was written
	 * since the checkpoint, not the volume.  What a block cannot say for
	 * itself, the table blocks' own bytes, comes from the pointers; and
	 * segments from the high-water mark on were never used. */
	uint64_t top = cp->cur_seg > cp->next_seg ? cp->cur_seg : cp->next_seg;
	for (uint32_t i = 0; i < cp->nsut && e == 0; i++)
		if (fs->sutaddr[i] != 0) {
			uint64_t s = lfs_seg_of(fs, LFS_PTR_LBA(fs->sutaddr[i]));
			e = lfs_sut_mem(fs, (uint32_t)(s / LFS_PER_BLK));
			if (e == 0)
				lfs_sg(fs, s)->nsut++;
			top = s > top ? s : top;
		}
	if (e < 0)
		return e;
	/* (0: a checkpoint from before the mark was kept: all may be used.) */
	fs->hwm = cp->hwm > 0 && cp->hwm <= fs->sb.nsegs ? cp->hwm : fs->sb.nsegs;
	if (top >= fs->hwm)
		fs->hwm = fs->sb.nsegs;          /* it cannot be right */
	fs->live_total = 0;
	fs->seq = cp->head_seq;
	fs->prev = cp->head_prev;
	fs->mounting = 1;
	/* Other processes using it may have the commits since in memory. */
	e = fs->sh.a != NULL ? lfs_multi_load(fs) : 0;
	if (e == 0)
		e = lfs_roll(fs, cp->head_lba, cp->head_seq, cp->head_prev, cp->cur_seg, cp->next_seg);
	fs->mounting = 0;
	return e < 0 ? e : 0;
}

/* ---- mkfs --------------------------------------------------------------------------- */

int lfs_format(struct lfs *fs)
{
	if (!cp_fits(fs, 1, fs->nsutblk))
		return -EINVAL;
	TRY(lfs_imap_init(fs, 0));
	fs->cpseq = 1;                  /* the first checkpoint is 2: copy 0 */
	/* (Every segment is reusable: a table block comes in as zeros, and
	 * zero live bytes read in say cpzero.) */
	TRY(lfs_seg_sets_build(fs));
	uint64_t s = lfs_seg_take(fs);
	if (s == 0)
		return -ENOSPC;
	TRY(lfs_log_start(fs, s, 0, 0));
	fs->max_ino = LFS_ROOT_INO;
	struct lnode *root;
	TRY(lfs_ialloc(fs, LIBFS_T_DIR, 0755, &root));
	int e = root->ino == LFS_ROOT_INO ? lfs_dir_init(fs, root) : -EIO;
	lfs_put(fs, root);
	if (e == 0)
		e = lfs_checkpoint(fs, 1);
	return e;
}
