/*
 * ckpt.c - checkpoints: the step that lets the commit log forget.
 *
 * The log holds every version committed since the last checkpoint.  A
 * checkpoint (1) waits until every block committed since then has been
 * written to its home, (2) flushes the disk's write cache, (3) writes the
 * durable free map and the binding table - the snapshot - to the snapshot
 * copy not in use, flushes again, and (4) writes a superblock naming that
 * copy, the snapshot's MAC, and the log position where replay would now
 * start.  The two superblock copies alternate, so a crash at any moment
 * leaves the previous checkpoint intact and its log still replayable.
 * Commits wait while a checkpoint runs (the snapshot must not change under
 * it); checkpoints start when the log is half full and at shutdown.
 */
#include "kernel/exodisk/edcore.h"

static void ck_done(struct blkreq *r);

static uint32_t snap_pages(const struct ed_disk *d)
{
	return d->sb.fm_pages + d->sb.vt_pages;
}

static void *snap_page(struct ed_disk *d, uint32_t i)
{
	return i < d->sb.fm_pages ? ed_pvec_page(&d->dfm, i)
	                          : ed_pvec_page(&d->vt, i - d->sb.fm_pages);
}

static uint64_t sb_sector(uint64_t gen)
{
	return (gen & 1) ? ED_SB_A : ED_SB_B;
}

/* The next superblock: a new generation, the other snapshot copy, the
 * snapshot's MAC, and the log's current end as the replay start. */
int ed_snap_prepare(struct exodisk *ed, struct ed_disk *d, struct ed_super *sb)
{
	*sb = d->sb;
	sb->gen++;
	sb->snap_copy ^= 1;
	sb->snap_gen = sb->gen;
	struct siphash s;
	ed_mac_begin(&s, &ed->keys, ED_DOM_SNAP, sb->uuid, sb->snap_start[sb->snap_copy]);
	sip_update64(&s, sb->snap_gen);
	for (uint32_t i = 0; i < snap_pages(d); i++)
		sip_update(&s, snap_page(d, i), ED_PAGE);
	ed_mac_end(&s, sb->snap_tag);
	sb->log_pos = d->log_head;
	sb->log_seq = d->log_seq;
	ed_memcpy(sb->log_chain, d->log_chain, 16);
	sb->flags = d->ck_clean ? ED_SBF_CLEAN : 0;
	ed_super_seal(&ed->keys, sb, sb_sector(sb->gen));
	return 0;
}

/* Segments for up to 256 snapshot pages starting at page `first`. */
static uint32_t snap_segs(struct ed_disk *d, uint32_t first, struct blk_seg *seg)
{
	uint32_t n = ED_MIN(snap_pages(d) - first, BLK_MAX_SECTORS / ED_SECT_PER_PAGE);
	for (uint32_t i = 0; i < n; i++)
		seg[i] = (struct blk_seg){ (uint64_t)(uintptr_t)snap_page(d, first + i), ED_PAGE };
	return n;
}

static void ck_submit(struct ed_disk *d, int op, int flags, uint64_t sector, uint32_t nsect,
                      uint32_t nseg)
{
	struct blkreq *r = &d->ckreq;
	ed_memset(r, 0, sizeof(*r));
	r->op = (uint8_t)op;
	r->flags = (uint8_t)flags;
	r->unit = d->unit;
	r->sector = sector;
	r->nsectors = nsect;
	r->seg = nseg ? d->ckseg : NULL;
	r->nseg = (uint16_t)nseg;
	r->done = ck_done;
	r->priv = d;
	int err = blk_submit(r);
	if (err != 0) {
		r->status = err;
		ck_done(r);
	}
}

static void ck_abort(struct exodisk *ed, struct ed_disk *d, int err)
{
	d->ck = CK_IDLE;
	d->ck_wanted = false;
	d->ck_error = err;
	d->closing = false;
	d->ck_clean = false;
	while (d->ck_waiters != NULL) {
		struct ed_io *io = d->ck_waiters;
		d->ck_waiters = io->next;
		ed_io_finish(ed, io, err);
	}
	/* Write-backs queued while it ran would otherwise wait forever. */
	ed_commit_kick(ed, d);
}

void ed_ckpt_request(struct exodisk *ed, struct ed_disk *d)
{
	d->ck_wanted = true;
	ed_ckpt_progress(ed, d);
}

void ed_ckpt_progress(struct exodisk *ed, struct ed_disk *d)
{
	if (!d->mounted)
		return;
	if (d->ck == CK_IDLE) {
		if (!d->ck_wanted || d->log_busy || (d->closing && d->commitq != NULL))
			return;
		d->ck = CK_WAIT;
		d->ck_error = 0;
		/* Every block committed since the last checkpoint must be at home
		 * (this also retries home writes that failed). */
		for (uint32_t i = 0; i < ed->cfg.cache_entries && d->ck == CK_WAIT; i++) {
			struct ed_entry *e = ed_cache_ent(ed, i);
			if (e->kind != 0 && e->unit == d->unit && (e->flags & EF_HOME_NEED))
				ed_home_try(ed, e);
		}
	}
	if (d->ck == CK_WAIT) {
		if (d->ck_error != 0) {
			ck_abort(ed, d, d->ck_error);
			return;
		}
		if (d->nhome > 0 || d->log_busy)
			return;
		d->ck = CK_FLUSH1;
		ck_submit(d, BLK_FLUSH, 0, 0, 0, 0);
	}
}

static void ck_done(struct blkreq *r)
{
	struct ed_disk *d = r->priv;
	struct exodisk *ed = d->ed;
	ed_lock(ed);
	if (r->status != 0) {
		ck_abort(ed, d, r->status);
		ed_unlock(ed);
		return;
	}
	switch (d->ck) {
	case CK_FLUSH1:
		ed_snap_prepare(ed, d, &d->ck_sb);
		d->ck_next = 0;
		d->ck = CK_SNAP;
		/* Write the first chunk. */
		/* fall through */
	case CK_SNAP:
		if (d->ck_next < snap_pages(d)) {
			uint32_t first = d->ck_next;
			uint32_t n = snap_segs(d, first, d->ckseg);
			d->ck_next += n;
			ck_submit(d, BLK_WRITE, 0,
			          d->ck_sb.snap_start[d->ck_sb.snap_copy] + first * ED_SECT_PER_PAGE,
			          n * ED_SECT_PER_PAGE, n);
		} else {
			d->ck = CK_FLUSH2;
			ck_submit(d, BLK_FLUSH, 0, 0, 0, 0);
		}
		break;
	case CK_FLUSH2:
		d->ck = CK_SUPER;
		ed_memcpy(d->cksec, &d->ck_sb, ED_SECTOR);
		d->ckseg[0] = (struct blk_seg){ (uint64_t)(uintptr_t)d->cksec, ED_SECTOR };
		ck_submit(d, BLK_WRITE, BLK_F_FUA, sb_sector(d->ck_sb.gen), 1, 1);
		break;
	case CK_SUPER:
		d->sb = d->ck_sb;
		d->log_used = 0;
		d->st_ckpts++;
		d->ck = CK_IDLE;
		d->ck_wanted = false;
		if (d->closing)
			d->closed = true;
		while (d->ck_waiters != NULL) {
			struct ed_io *io = d->ck_waiters;
			d->ck_waiters = io->next;
			ed_io_finish(ed, io, 0);
		}
		ed_commit_kick(ed, d);
		break;
	default:
		break;
	}
	ed_unlock(ed);
}

/* The synchronous form, used by mount (nothing else is running). */
int ed_ckpt_sync(struct exodisk *ed, struct ed_disk *d, bool clean)
{
	struct ed_super sb;
	d->ck_clean = clean;
	ed_snap_prepare(ed, d, &sb);
	d->ck_clean = false;
	for (uint32_t first = 0; first < snap_pages(d); ) {
		uint32_t n = snap_segs(d, first, d->ckseg);
		int err = ed_sync_io(ed, d->unit, BLK_WRITE, 0,
		                     sb.snap_start[sb.snap_copy] + first * ED_SECT_PER_PAGE,
		                     n * ED_SECT_PER_PAGE, d->ckseg, n);
		if (err != 0)
			return err;
		first += n;
	}
	int err = ed_sync_io(ed, d->unit, BLK_FLUSH, 0, 0, 0, NULL, 0);
	if (err != 0)
		return err;
	ed_memcpy(d->cksec, &sb, ED_SECTOR);
	err = ed_sync_rw(ed, d->unit, BLK_WRITE, sb_sector(sb.gen), 1, d->cksec);
	if (err == 0)
		err = ed_sync_io(ed, d->unit, BLK_FLUSH, 0, 0, 0, NULL, 0);
	if (err != 0)
		return err;
	d->sb = sb;
	d->log_used = 0;
	d->st_ckpts++;
	return 0;
}

/* A superblock alone: a new generation naming the same snapshot and log
 * position (mount uses it to make its mount count durable). */
int ed_super_sync(struct exodisk *ed, struct ed_disk *d)
{
	struct ed_super sb = d->sb;
	sb.gen++;
	sb.flags = 0;
	ed_super_seal(&ed->keys, &sb, sb_sector(sb.gen));
	ed_memcpy(d->cksec, &sb, ED_SECTOR);
	int err = ed_sync_rw(ed, d->unit, BLK_WRITE, sb_sector(sb.gen), 1, d->cksec);
	if (err == 0)
		err = ed_sync_io(ed, d->unit, BLK_FLUSH, 0, 0, 0, NULL, 0);
	if (err == 0)
		d->sb = sb;
	return err;
}
