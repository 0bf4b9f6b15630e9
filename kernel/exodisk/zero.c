/*
 * zero.c - a checkpoint zeroes the unwritten runs its carry records have
 * no room for (issue 17 item 4, remanence; unwritten.c, ckpt.c).
 *
 * A checkpoint empties the log, so the unwritten set must go on past it:
 * its carry records hold up to 1,000 runs (250 on a log under 512
 * sectors).  A set more fragmented than that keeps its longest runs in the
 * records (ed_unw_carry_plan) and has the others written with zeros here,
 * after the records and before the flush that precedes the superblock: by
 * the time the superblock forgets those sectors were unwritten, the disk
 * holds zeros there.  Only what is in `unw` is zeroed: a sector in done or
 * fl was written, and that write completed before this checkpoint's last
 * flush, so it needs neither.  Each zeroed sector then leaves the set: it
 * is zeroed once per allocation, so the cost follows the sectors the
 * applications allocated and left unwritten, not the disk.
 *
 * A zero must never land after a write to the same sector.  While the
 * checkpoint zeroes, the gate is shut (d->zgate): new writes to
 * application sectors (ED_OP_IO writes, dataio.c; extents' home writes,
 * home.c) wait, and the zeroing starts only once none is in flight
 * (d->app_wr counts them); then the waiting writes go, after every zero has
 * completed.  Reads go on: an unwritten sector reads as zeros from memory
 * until its zero has completed and it leaves the set.
 */
#include "kernel/exodisk/edcore.h"

static void zero_done(struct blkreq *r);

/* The next run of zeros to write: *s, *n (false at the end).  Walks the
 * runs the carry plan saw, in sector order, with the plan's room again:
 * a run the records did not carry - left out by the plan, or past where
 * they stopped - has its unwritten sectors zeroed, a request at a time;
 * once they all are, it leaves unw (its zeros have completed). */
static bool zero_next_run(struct ed_disk *d, uint64_t *s, uint32_t *n)
{
	for (;;) {
		if (d->z_start < d->z_end) {
			uint64_t a = d->unw.count == 0 ? d->z_end :
			             ED_MIN(ed_bm_next(&d->unw, d->z_sub, true), d->z_end);
			if (a < d->z_end) {
				uint64_t b = ED_MIN(ed_bm_next(&d->unw, a, false), d->z_end);
				b = ED_MIN(b, a + BLK_MAX_SECTORS);
				*s = a;
				*n = (uint32_t)(b - a);
				d->z_sub = b;
				return true;
			}
			/* Written with zeros whole: no longer unwritten.  (Without
			 * memory to clear the bits they stay: zeros still.) */
			(void)ed_bm_clear(&d->unw, d->z_start, d->z_end - d->z_start);
			d->z_start = d->z_sub = d->z_end;
		}
		if (d->z_scan >= d->nsectors)
			return false;
		bool in;
		uint64_t k = ed_unw_carry_run(d, d->z_scan, &in);
		bool carried = in && d->z_scan < d->z_carry_end && ed_unw_carried(d, k, &d->z_room);
		if (in && !carried) {
			d->z_start = d->z_sub = d->z_scan;
			d->z_end = d->z_scan + k;
		}
		d->z_scan += k;
	}
}

/* Segments of zeros for n sectors (at most BLK_MAX_SECTORS: 256 of them,
 * what the checkpoint's page of segments holds): the zero page, over and
 * over. */
static uint32_t zero_segs(struct ed_disk *d, struct blk_seg *seg, uint32_t n)
{
	uint32_t k = 0;
	for (uint32_t left = n * ED_SECTOR; left > 0; ) {
		uint32_t len = ED_MIN(left, ED_PAGE);
		seg[k++] = (struct blk_seg){ (uint64_t)(uintptr_t)d->z_page, len };
		left -= len;
	}
	return k;
}

/* The walk starts again at sector 0 with the plan's room (it replays the
 * carry records' choices).  False when the records carried all of it. */
static bool zero_reset(struct ed_disk *d)
{
	d->z_carry_end = d->ck_carry_pos;
	d->z_room = d->z_room0;
	d->z_scan = 0;
	d->z_start = d->z_sub = d->z_end = 0;
	return !(d->ck_carry_min <= 1 && d->ck_carry_pos >= d->nsectors);
}

/* Is there anything to zero?  Then it begins (the gate shuts) and the
 * checkpoint waits in CK_ZERO for ed_ckpt_zeroed. */
bool ed_zero_begin(struct exodisk *ed, struct ed_disk *d)
{
	d->z_started = false;
	if (!zero_reset(d))
		return false;
	uint64_t s;
	uint32_t n;
	if (!zero_next_run(d, &s, &n))
		return false;
	/* Found the first; start again from it when the gate is clear. */
	d->z_sub = s;
	if (d->z_page == NULL && (d->z_page = ed_dpage_alloc(d)) == NULL) {
		ed_ckpt_zeroed(ed, d, ED_E_NOMEM);
		return true;
	}
	ed_memset(d->z_page, 0, ED_PAGE);
	d->zgate = true;
	d->st_unw_zero_ckpts++;
	ed_zero_kick(ed, d);
	return true;
}

/* Submit the next zero write, or end. */
static void zero_issue(struct exodisk *ed, struct ed_disk *d)
{
	uint64_t s;
	uint32_t n;
	if (!zero_next_run(d, &s, &n)) {
		ed_zero_open(ed, d);
		ed_ckpt_zeroed(ed, d, 0);
		return;
	}
	struct blkreq *r = &d->ckreq;      /* the checkpoint's: idle meanwhile */
	ed_memset(r, 0, sizeof(*r));
	r->op = BLK_WRITE;
	r->unit = d->unit;
	r->sector = s;
	r->nsectors = n;
	r->seg = d->ckseg;
	r->nseg = (uint16_t)zero_segs(d, d->ckseg, n);
	r->done = zero_done;
	r->priv = d;
	d->st_unw_zeroed += n;
	int err = blk_submit(r);
	if (err != 0) {
		r->status = err;
		zero_done(r);
	}
}

/* The gate is shut: once no write to application sectors is in flight,
 * the zeroing starts (a completion that leaves none calls this). */
void ed_zero_kick(struct exodisk *ed, struct ed_disk *d)
{
	if (d->ck != CK_ZERO || !d->zgate || d->z_started || d->app_wr != 0)
		return;
	d->z_started = true;
	zero_issue(ed, d);
}

static void zero_done(struct blkreq *r)
{
	struct ed_disk *d = r->priv;
	struct exodisk *ed = d->ed;
	ed_lock(ed);
	if (r->status != 0) {
		ed_zero_open(ed, d);
		ed_ckpt_zeroed(ed, d, r->status);
	} else {
		zero_issue(ed, d);
	}
	ed_idle_wake(ed);
	ed_unlock(ed);
}

/* The gate opens: the writes that waited go, in the order they came, and
 * extents' home writes and header-sector writes put off go too. */
void ed_zero_open(struct exodisk *ed, struct ed_disk *d)
{
	if (!d->zgate)
		return;
	d->zgate = false;
	d->z_started = false;
	if (d->z_page != NULL) {
		ed_dpage_free(d, d->z_page);
		d->z_page = NULL;
	}
	ed_io_unpark(ed, d);
	if (d->z_later) {
		d->z_later = false;
		for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
			struct ed_entry *e = ed_cache_ent(ed, i);
			if (e->kind != ED_KIND_EXTENT || e->unit != d->unit)
				continue;
			ed_home_try(ed, e);
			if (!(e->flags & EF_STAGE))
				ed_sg_next(ed, e);
		}
	}
}

/* The synchronous form (a checkpoint at mount or format: nothing else
 * runs, so no gate). */
int ed_zero_sync(struct exodisk *ed, struct ed_disk *d)
{
	if (!zero_reset(d))
		return 0;
	uint64_t s;
	uint32_t n;
	int err = 0;
	void *page = NULL;
	while (err == 0 && zero_next_run(d, &s, &n)) {
		if (page == NULL) {
			if ((page = d->z_page = ed_dpage_alloc(d)) == NULL)
				return ED_E_NOMEM;
			ed_memset(page, 0, ED_PAGE);
			d->st_unw_zero_ckpts++;
		}
		d->st_unw_zeroed += n;
		err = ed_sync_io(ed, d->unit, BLK_WRITE, 0, s, n, d->ckseg, zero_segs(d, d->ckseg, n));
	}
	if (page != NULL) {
		ed_dpage_free(d, page);
		d->z_page = NULL;
	}
	return err;
}
