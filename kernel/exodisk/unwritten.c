/*
 * unwritten.c - sectors allocated to an application and not written since
 * (issue 17 item 4, remanence: no application reads bytes another freed).
 *
 * A unit keeps one bit per sector in d->unw (a sparse bitmap, bitmap.c:
 * a region that is all written or all free costs nothing).  An allocation
 * through a capability sets the bits of what it adds - an extent's sectors,
 * its header sector included, and the sectors of an exonode's extent
 * entries; a data write that completed clears the bits it covered, and so
 * does the home write of an extent's header; sectors that go back to the
 * free map lose their bits.  A read (dataio.c) hands out zeros for a
 * sector whose bit is set and reads only the others from the disk, so an
 * old byte never passes through application memory.
 *
 * The exodisk's own sectors (superblocks, log, tree pages, exonode blocks)
 * are never marked: they are not application data, and nothing may ever
 * zero them.
 *
 * What is not done yet (docs/exodisk.md section 10): the set is kept in
 * memory only.  After a reboot every allocated sector counts as written
 * again, so a sector that was committed unwritten shows what the disk
 * holds; the log records that make the set durable (a flush records what
 * it made durable, replay rebuilds the rest) and the checkpoint that zeroes
 * what is still unwritten are the next step.
 */
#include "kernel/exodisk/edcore.h"

void ed_unw_init(struct ed_disk *d)
{
	ed_bm_init(&d->unw, &d->ed->env, d->nsectors, ED_BM_ZERO, &d->mem_pages);
}

void ed_unw_destroy(struct ed_disk *d)
{
	ed_bm_free(&d->unw);
}

int ed_unw_prepare(struct ed_disk *d, uint64_t start, uint64_t count)
{
	return ed_bm_prepare(&d->unw, start, count, true);
}

void ed_unw_mark(struct ed_disk *d, uint64_t start, uint64_t count)
{
	(void)ed_bm_set(&d->unw, start, count);
}

bool ed_unw_any(const struct ed_disk *d, uint64_t start, uint64_t count)
{
	return d->unw.count != 0 && ed_bm_any(&d->unw, start, count);
}

/* Sectors written, or gone back to the free map.  A leaf the range ends in
 * at its last sector is given back if it became all written: sequential
 * writes fill a leaf from its start, so it is looked at once, not at every
 * write.  (If memory runs out splitting a leaf, the bits stay set: those
 * sectors read as zeros until written again - never anything else.) */
void ed_unw_clear(struct ed_disk *d, uint64_t start, uint64_t count)
{
	if (!ed_unw_any(d, start, count))
		return;
	(void)ed_bm_clear(&d->unw, start, count);
	uint64_t end = start + count;
	if (end % ED_BM_LEAF_BITS == 0 || end == d->nsectors)
		ed_bm_compact(&d->unw, (end - 1) / ED_BM_LEAF_BITS);
}

/* Sectors an uncommitted change let go of: those the disk no longer holds
 * either are free now and lose their bits; the others stay what they were
 * (the committed binding still has them). */
void ed_unw_free(struct ed_disk *d, uint64_t start, uint64_t count)
{
	if (ed_unw_any(d, start, count))
		(void)ed_bm_clear_unless(&d->unw, &d->dfm, start, count);
}

/* The run that starts at `from` (below end) and its kind: *unwritten, and
 * the number of sectors up to end of that kind. */
uint64_t ed_unw_run(const struct ed_disk *d, uint64_t from, uint64_t end, bool *unwritten)
{
	*unwritten = d->unw.count != 0 && ed_bm_test(&d->unw, from);
	uint64_t next = d->unw.count == 0 ? d->nsectors : ed_bm_next(&d->unw, from, !*unwritten);
	return ED_MIN(next, end) - from;
}
