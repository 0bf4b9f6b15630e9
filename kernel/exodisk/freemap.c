/*
 * freemap.c - the free maps of a unit: one bit per sector, 1 = allocated.
 *
 * A mounted unit has two.  The durable map (dfm) says exactly what the disk
 * says: the union of what every committed header and exonode block refers
 * to, plus the exodisk's own region and tree pages.  The conservative map
 * (fm) is the one applications see and allocation checks: a sector becomes
 * allocated in it at allocation time, and becomes free only once no durable
 * binding refers to it (thesis section 2.2).  So fm is always a superset of
 * dfm, and the difference is exactly the allocations not yet committed (and
 * the tree pages a checkpoint in progress has replaced).  Both are sparse
 * bitmaps (bitmap.c); dfm is kept as a delta against fm, so it costs memory
 * only where the two differ.
 *
 * Room for the exodisk's own pages.  The binding and free-map trees live
 * in the data area and every checkpoint writes their changed pages to new
 * places before freeing the old ones, so the disk must always have room
 * for what the next checkpoint writes.  ed_fm_reserve() is that, counted
 * generously from the dirty pages, plus a slack that lets write-backs
 * (deallocations above all) go on when applications have taken everything
 * else.  Allocations that would dip into it fail with ED_E_NOSPACE, which
 * is how a full disk looks to applications.
 */
#include "kernel/exodisk/edcore.h"

static int  dirty_prepare(struct ed_disk *d, uint64_t start, uint64_t count);
static void dirty_mark(struct ed_disk *d, uint64_t start, uint64_t count);
static void tidy(struct ed_disk *d, uint64_t start, uint64_t count);

static void fm_changed(void *arg, uint64_t li)
{
	struct ed_disk *d = arg;
	const struct ed_env *env = &d->ed->env;
	if (env->fm_remap != NULL)
		env->fm_remap(env->ctx, d->unit, li);
}

int ed_fm_init(struct exodisk *ed, struct ed_disk *d)
{
	ed_bm_init(&d->fm, &ed->env, d->nsectors, ED_BM_ZERO, &d->mem_pages);
	ed_bm_init(&d->dfm, &ed->env, d->nsectors, ED_BM_SHARED, &d->mem_pages);
	d->dfm.base = &d->fm;
	ed_bm_init(&d->fm_dirty, &ed->env, ed_bm_nleaves(&d->fm), ED_BM_ZERO, &d->mem_pages);
	ed_bm_init(&d->held, &ed->env, d->nsectors, ED_BM_ZERO, &d->mem_pages);
	ed_unw_init(d);
	/* fm.dep stays unset while the maps are built (mount): dfm reads fm. */
	return 0;
}

/* From now on fm and dfm can differ: fm's changes leave dfm's copy alone. */
void ed_fm_link(struct ed_disk *d)
{
	d->fm.dep = &d->dfm;
	d->dfm.count = d->fm.count;
	d->fm.changed = fm_changed;
	d->fm.arg = d;
}

void ed_fm_destroy(struct ed_disk *d)
{
	ed_bm_free(&d->dfm);
	ed_bm_free(&d->fm);
	ed_bm_free(&d->fm_dirty);
	ed_bm_free(&d->held);
	ed_unw_destroy(d);
}

bool ed_fm_any(struct ed_disk *d, uint64_t start, uint64_t count)
{
	return ed_bm_any(&d->fm, start, count);
}

uint64_t ed_fm_free_sectors(const struct ed_disk *d)
{
	return d->nsectors - d->fm.count;
}

/* What the next checkpoint may write, twice over (its pages, and the ones
 * it frees only once it is durable): every dirty page, and for each an
 * inner page above it and the free-map leaf its new place changes. */
uint64_t ed_fm_ckpt_need(const struct ed_disk *d, uint64_t more)
{
	uint64_t pages = 2 * ((uint64_t)d->bt_dirty + 2 * d->fm_dirty.count + 2 * more +
	                      d->fmt_height + d->bt_height) + 32;
	return pages * ED_SECT_PER_PAGE;
}

/* About a thousandth of the disk (128 KiB .. 32 MiB). */
uint64_t ed_fm_slack(const struct ed_disk *d)
{
	return ED_MIN(ED_MAX(d->nsectors / 1024, 256), 65536);
}

/* What applications cannot have stays the same as the disk works: room for
 * a checkpoint of up to a page per MiB of disk (64..1,024 pages), or for
 * what the next one needs if that is more (many dirty pages), and the
 * slack.  (A reserve that moved with every dirty page would let a full
 * disk refuse a file that a deletion just made room for.) */
uint64_t ed_fm_ckpt_cap(const struct ed_disk *d)
{
	return ED_MIN(ED_MAX(d->nsectors / 2048, 64), 1024) * ED_SECT_PER_PAGE;
}

uint64_t ed_fm_reserve(const struct ed_disk *d)
{
	return ED_MAX(ed_fm_ckpt_cap(d), ed_fm_ckpt_need(d, 0)) + ed_fm_slack(d);
}

int ed_fm_mount_change(struct ed_disk *d, uint64_t start, uint64_t count, bool set)
{
	int err = dirty_prepare(d, start, count);
	if (err == 0)
		err = set ? ed_bm_set(&d->fm, start, count) : ed_bm_clear(&d->fm, start, count);
	if (err == 0)
		dirty_mark(d, start, count);
	return err;
}

int ed_fm_claim_check(struct ed_disk *d, uint64_t start, uint64_t count)
{
	if (ed_bm_any(&d->fm, start, count))
		return ED_E_ALLOCATED;
	uint64_t free = ed_fm_free_sectors(d);
	if (count > free || free - count < ed_fm_reserve(d))
		return ED_E_NOSPACE;
	return ed_bm_prepare(&d->fm, start, count, true);
}

void ed_fm_claim(struct ed_disk *d, uint64_t start, uint64_t count)
{
	(void)ed_bm_set(&d->fm, start, count);
}

/* Leaves of [start, start + count) that read as all free or all allocated
 * become markers again, and dfm shares what fm holds: memory follows what
 * is stored.  Not dfm's while a checkpoint is writing: its requests read
 * dfm's own leaf pages (ckpt.c, seal), which compacting or sharing would
 * free under them; the checkpoint tidies what it wrote when it ends. */
static void tidy(struct ed_disk *d, uint64_t start, uint64_t count)
{
	uint64_t first = start / ED_BM_LEAF_BITS, last = (start + count - 1) / ED_BM_LEAF_BITS;
	for (uint64_t li = first; li <= last; li++) {
		ed_bm_compact(&d->fm, li);
		if (d->ck == CK_WRITE)
			continue;
		ed_bm_compact(&d->dfm, li);
		ed_bm_reshare(&d->dfm, li);
	}
}

void ed_fm_release_uncommitted(struct ed_disk *d, uint64_t start, uint64_t count)
{
	/* A log record that failed may be on the disk all the same, and a
	 * crash would then replay the allocations it made (commit.c,
	 * log_unsure): until a later record is durable, sectors let go stay
	 * allocated (held), never handed to someone else whose bytes the
	 * revived object would read.  Without memory to note them they stay
	 * allocated until the next mount. */
	if (d->log_unsure) {
		if (ed_bm_prepare(&d->held, start, count, true) == 0)
			(void)ed_bm_set(&d->held, start, count);
		return;
	}
	/* Memory can run out only if a whole-leaf claim left a marker that a
	 * partial release must split; then the sectors stay allocated in fm
	 * (never the unsafe way) until the next mount. */
	ed_unw_free(d, start, count);
	(void)ed_bm_clear_unless(&d->fm, &d->dfm, start, count);
	tidy(d, start, count);
}

/* A record is durable in the place of the one that failed (commit.c): the
 * sectors held meanwhile go back to the free map. */
void ed_fm_release_held(struct ed_disk *d)
{
	uint64_t s = 0, n;
	while (d->held.count != 0 && ed_bm_run(&d->held, &s, &n)) {
		ed_fm_release_uncommitted(d, s, n);
		s += n;
	}
	ed_bm_free(&d->held);             /* (empty, and its pages given back: rare) */
}

/* ---- the durable map -------------------------------------------------------------- */

static int dirty_prepare(struct ed_disk *d, uint64_t start, uint64_t count)
{
	uint64_t first = start / ED_BM_LEAF_BITS, last = (start + count - 1) / ED_BM_LEAF_BITS;
	return ed_bm_prepare(&d->fm_dirty, first, last - first + 1, true);
}

static void dirty_mark(struct ed_disk *d, uint64_t start, uint64_t count)
{
	uint64_t first = start / ED_BM_LEAF_BITS, last = (start + count - 1) / ED_BM_LEAF_BITS;
	(void)ed_bm_set(&d->fm_dirty, first, last - first + 1);
}

int ed_fm_commit_prepare(struct ed_disk *d, const struct ed_range *r, uint32_t nalloc,
                         uint32_t nfree)
{
	for (uint32_t i = 0; i < nalloc + nfree; i++) {
		bool alloc = i < nalloc;
		int err = ed_bm_prepare(&d->dfm, r[i].start, r[i].nsectors, alloc);
		if (err == 0 && !alloc)
			err = ed_bm_prepare(&d->fm, r[i].start, r[i].nsectors, false);
		if (err == 0)
			err = dirty_prepare(d, r[i].start, r[i].nsectors);
		if (err != 0)
			return err;
	}
	return 0;
}

void ed_fm_commit(struct ed_disk *d, const struct ed_range *r, uint32_t nalloc, uint32_t nfree)
{
	for (uint32_t i = 0; i < nalloc + nfree; i++) {
		if (i < nalloc) {
			(void)ed_bm_set(&d->dfm, r[i].start, r[i].nsectors);
		} else {
			(void)ed_bm_clear(&d->dfm, r[i].start, r[i].nsectors);
			(void)ed_bm_clear(&d->fm, r[i].start, r[i].nsectors);
			ed_unw_gone(d, r[i].start, r[i].nsectors);
		}
		dirty_mark(d, r[i].start, r[i].nsectors);
		tidy(d, r[i].start, r[i].nsectors);
	}
}

int ed_dfm_set(struct ed_disk *d, uint64_t start, uint64_t count)
{
	int err = dirty_prepare(d, start, count);
	if (err == 0)
		err = ed_bm_prepare(&d->dfm, start, count, true);
	if (err == 0) {
		(void)ed_bm_set(&d->dfm, start, count);
		dirty_mark(d, start, count);
	}
	return err;
}

int ed_dfm_clear(struct ed_disk *d, uint64_t start, uint64_t count)
{
	int err = dirty_prepare(d, start, count);
	if (err == 0)
		err = ed_bm_prepare(&d->dfm, start, count, false);
	if (err == 0) {
		(void)ed_bm_clear(&d->dfm, start, count);
		dirty_mark(d, start, count);
	}
	return err;
}

/* ---- room for the trees' pages ------------------------------------------------------ */

/* The trees' pages are taken from the top of the disk down, applications'
 * first-fit allocations usually grow up from data_start: the two meet
 * only when the disk is full. */
uint64_t ed_mspace_alloc(struct ed_disk *d, uint32_t n, uint32_t *got)
{
	*got = 0;
	const uint64_t ps = ED_SECT_PER_PAGE;
	uint64_t lo = (d->data_start + ps - 1) & ~(ps - 1), top = d->nsectors & ~(ps - 1);
	uint64_t end = d->meta_cursor > lo && d->meta_cursor <= top ? d->meta_cursor : top;
	bool wrapped = false;
	for (;;) {
		/* The highest free sector below end, then the run below it. */
		uint64_t f = ed_bm_prev(&d->fm, end, false);
		uint64_t e = f == UINT64_MAX ? 0 : (f + 1) & ~(ps - 1);
		uint64_t a = f == UINT64_MAX ? 0 : ed_bm_prev(&d->fm, f, true);
		uint64_t b = a == UINT64_MAX ? 0 : (a + 1 + ps - 1) & ~(ps - 1);
		b = ED_MAX(b, lo);
		if (f == UINT64_MAX || f < lo) {
			if (wrapped || end == top)
				return 0;
			wrapped = true;
			end = top;
			continue;
		}
		if (e <= b || e - b < ps) {
			end = a == UINT64_MAX ? 0 : a + 1;
			if (end <= lo) {
				if (wrapped)
					return 0;
				wrapped = true;
				end = top;
			}
			continue;
		}
		uint32_t k = (uint32_t)ED_MIN((uint64_t)n, (e - b) / ps);
		uint64_t s = e - (uint64_t)k * ps, len = (uint64_t)k * ps;
		if (ed_bm_prepare(&d->fm, s, len, true) != 0 || ed_dfm_set(d, s, len) != 0)
			return 0;
		(void)ed_bm_set(&d->fm, s, len);
		d->meta_cursor = s;
		*got = k;
		return s;
	}
}

/* ---- the exported map ------------------------------------------------------------------ */

void ed_fm_tidy(struct ed_disk *d, uint64_t start, uint64_t count)
{
	tidy(d, start, count);
}

void *ed_fm_export_page(struct exodisk *ed, struct ed_disk *d, uint64_t i)
{
	void *mk;
	const uint64_t *w = ed_bm_leaf(&d->fm, i, &mk);
	if (w != NULL)
		return (void *)w;
	return mk == ED_BM_ONES ? ed->ones_page : ed->zero_page;
}
