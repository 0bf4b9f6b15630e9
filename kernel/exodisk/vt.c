/*
 * vt.c - the binding table: for every bound extent header and exonode block
 * of a unit, its kind, size and current version stamp.
 *
 * It answers two questions the exodisk must never get wrong.  "Is this
 * sector metadata at all?" - reading a header or exonode block requires a
 * binding, so an application cannot make the kernel interpret data it
 * wrote as protection metadata.  "Is this the current version?" - a block
 * read from disk must carry exactly the stamp recorded here, so an older
 * copy written back by someone with access to the raw disk is rejected.
 *
 * An open-addressed hash table with linear probing, in whole pages, so that
 * a checkpoint writes its pages as they are and a mount reads them back
 * without rebuilding anything.  Deletion shifts later records back instead
 * of leaving tombstones, so the table never degrades.
 */
#include "kernel/exodisk/edcore.h"

struct ed_vtrec *ed_vt_slot(struct ed_disk *d, uint32_t i)
{
	uint8_t *page = ed_pvec_page(&d->vt, i / ED_VT_PER_PAGE);
	return (struct ed_vtrec *)(page + (i % ED_VT_PER_PAGE) * sizeof(struct ed_vtrec));
}

static uint32_t home_slot(const struct ed_disk *d, uint64_t sector)
{
	uint64_t h = sector * 0x9e3779b97f4a7c15ull;
	return (uint32_t)((h >> 32) % d->vt_slots);
}

/* Index of sector's record, or -1. */
static int64_t find_index(struct ed_disk *d, uint64_t sector)
{
	for (uint32_t i = home_slot(d, sector), n = 0; n < d->vt_slots; n++) {
		struct ed_vtrec *r = ed_vt_slot(d, i);
		if (r->stamp == 0)
			return -1;
		if (r->sector == sector)
			return i;
		if (++i == d->vt_slots)
			i = 0;
	}
	return -1;
}

struct ed_vtrec *ed_vt_find(struct ed_disk *d, uint64_t sector)
{
	int64_t i = find_index(d, sector);
	return i < 0 ? NULL : ed_vt_slot(d, (uint32_t)i);
}

int ed_vt_put(struct ed_disk *d, uint64_t sector, uint64_t stamp, uint8_t kind, uint8_t nsect)
{
	struct ed_vtrec *r = ed_vt_find(d, sector);
	if (r == NULL) {
		if (d->vt_count >= d->vt_max)
			return ED_E_BINDFULL;
		uint32_t i = home_slot(d, sector);
		while ((r = ed_vt_slot(d, i))->stamp != 0)
			if (++i == d->vt_slots)
				i = 0;
		d->vt_count++;
	}
	r->sector = sector;
	r->stamp = stamp;
	r->kind = kind;
	r->nsect = nsect;
	return 0;
}

void ed_vt_remove(struct ed_disk *d, uint64_t sector)
{
	int64_t at = find_index(d, sector);
	if (at < 0)
		return;
	uint32_t hole = (uint32_t)at;
	ed_memset(ed_vt_slot(d, hole), 0, sizeof(struct ed_vtrec));
	d->vt_count--;
	/* Shift back every following record of the same probe run whose home
	 * is not between the hole and where it sits (cyclically). */
	uint32_t i = hole;
	for (;;) {
		if (++i == d->vt_slots)
			i = 0;
		struct ed_vtrec *q = ed_vt_slot(d, i);
		if (q->stamp == 0)
			return;
		uint32_t want = home_slot(d, q->sector);
		bool between = hole <= i ? (want > hole && want <= i) : (want > hole || want <= i);
		if (!between) {
			*ed_vt_slot(d, hole) = *q;
			ed_memset(q, 0, sizeof(*q));
			hole = i;
		}
	}
}
