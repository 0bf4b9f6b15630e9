/*
 * home.c - writing committed blocks to their home sectors.
 *
 * Once a block's new version is durable in the commit log, its home copy
 * is out of date; the exodisk writes it there in the background (no FUA: a
 * checkpoint flushes before it lets the log forget the version).  At most
 * one write of a home sector is in flight at a time, because two could
 * reach the disk in either order.  Extent headers share their sector with
 * application data, so their home write carries the committed header and
 * the latest application bytes of that sector, staged in the entry's stage
 * buffer, which data writes to that sector also use (dataio.c) - one at a
 * time.
 */
#include "kernel/exodisk/edcore.h"

static void home_done(struct blkreq *r);

void ed_home_need(struct exodisk *ed, struct ed_disk *d, struct ed_entry *e)
{
	if (!(e->flags & EF_HOME_NEED)) {
		e->flags |= EF_HOME_NEED;
		d->nhome++;
	}
	ed_home_try(ed, e);
}

static void home_clear(struct exodisk *ed, struct ed_entry *e)
{
	if (e->flags & EF_HOME_NEED) {
		e->flags &= ~EF_HOME_NEED;
		ed->disk[e->unit]->nhome--;
	}
}

void ed_home_try(struct exodisk *ed, struct ed_entry *e)
{
	if (!(e->flags & EF_HOME_NEED) || (e->flags & EF_HOME_IO))
		return;
	if (e->home_stamp == e->com_stamp) {
		home_clear(ed, e);
		return;
	}
	struct blk_seg *seg = &e->seg;
	struct ed_disk *d = ed->disk[e->unit];
	if (e->kind == ED_KIND_EXTENT) {
		if (e->flags & EF_STAGE)
			return;              /* ed_stage_release() will call again */
		if (d->zgate) {
			d->z_later = true;   /* a checkpoint zeroes: ed_zero_open tries again */
			return;
		}
		d->app_wr++;                 /* the header's sector is an application's */
		e->flags |= EF_STAGE;
		ed_memcpy(e->stage, e->com, ED_EXT_HDR_BYTES);
		ed_memcpy(e->stage + ED_EXT_HDR_BYTES, e->cur + ED_EXT_HDR_BYTES,
		          ED_SECTOR - ED_EXT_HDR_BYTES);
		*seg = (struct blk_seg){ (uint64_t)(uintptr_t)e->stage, ED_SECTOR };
	} else {
		*seg = (struct blk_seg){ (uint64_t)(uintptr_t)e->com, e->nsect * ED_SECTOR };
	}
	e->flags |= EF_HOME_IO;
	e->inflight_stamp = e->com_stamp;
	struct blkreq *r = &e->req;
	ed_memset(r, 0, sizeof(*r));
	r->op = BLK_WRITE;
	r->unit = e->unit;
	r->sector = e->sector;
	r->nsectors = e->kind == ED_KIND_EXTENT ? 1 : e->nsect;
	r->seg = seg;
	r->nseg = 1;
	r->done = home_done;
	r->priv = e;
	int err = blk_submit(r);
	if (err != 0) {
		r->status = err;
		home_done(r);
	}
}

static void home_done(struct blkreq *r)
{
	struct ed_entry *e = r->priv;
	struct exodisk *ed = e->ed;
	ed_lock(ed);
	struct ed_disk *d = ed->disk[e->unit];
	bool staged = e->kind == ED_KIND_EXTENT;
	e->flags &= ~EF_HOME_IO;
	if (staged)
		d->app_wr--;
	if (r->status == 0) {
		e->home_stamp = e->inflight_stamp;
		d->st_homes++;
		if (staged)
			ed_unw_written(d, e->sector, 1);   /* the header sector is written whole */
		if (e->home_stamp == e->com_stamp)
			home_clear(ed, e);
	} else if (d->ck_error == 0) {
		/* Leave HOME_NEED set: the next checkpoint retries, and cannot
		 * finish (so the log keeps the version) until the write works. */
		d->ck_error = r->status;
	}
	if (staged && r->status == 0) {
		ed_stage_release(ed, e);
	} else if (staged) {
		e->flags &= ~EF_STAGE;       /* no retry now: the next checkpoint's */
		ed_sg_next(ed, e);
	} else if (r->status == 0) {
		ed_home_try(ed, e);
	}
	ed_ent_orphan(ed, e);
	ed_zero_kick(ed, d);
	ed_commit_kick(ed, d);
	ed_ckpt_progress(ed, d);
	ed_unlock(ed);
}

/* The stage is free: the home write first (it is what durability waits
 * for), else the next data write of the header sector. */
void ed_stage_release(struct exodisk *ed, struct ed_entry *e)
{
	e->flags &= ~EF_STAGE;
	ed_home_try(ed, e);
	if (!(e->flags & EF_STAGE))
		ed_sg_next(ed, e);
	ed_ckpt_progress(ed, ed->disk[e->unit]);
}
