/*
 * t_bindfull.c - a full binding table (not in the default groups: boot a
 * blank disk with a small table, edbind=256, and run `edtest bindfull`).
 * The write-back that would need one binding too many completes with
 * ED_E_BINDFULL and changes nothing: its entry stays dirty and allocated,
 * nothing is lost, and once a deallocation is durable a binding is free
 * again.
 */
#include "apps/edtest/edt.h"

#define MAXN 2000

static struct ed_protector e[MAXN];
static volatile int32_t w[MAXN];

static int64_t dealloc_cached(const struct ed_protector *p)
{
	int64_t r = edc_extent_dealloc(E, p);
	if (r == ED_E_NOTCACHED && ext_read(p) == 0)
		r = edc_extent_dealloc(E, p);
	return r;
}

void t_bindfull(void)
{
	uint64_t S = area(MAXN);
	int n = 0, full = -1;
	/* Write back 32 at a time until one batch has a refusal. */
	while (full < 0 && n < MAXN) {
		int end = n + 32 < MAXN ? n + 32 : MAXN;
		for (int i = n; i < end; i++) {
			e[i] = pext(S + (uint64_t)i, SECT, 1600);
			edc_extent_alloc(E, &e[i]);
			edc_extent_write(E, &e[i], &w[i]);
		}
		for (int i = n; i < end; i++)
			if (edc_wait(E, &w[i]) == ED_E_BINDFULL && full < 0)
				full = i;
		n = end;
	}
	if (!check(full > 0, "one-sector extents written back until the table is full: the first refused is "
	           "number %d", full))
		return;
	expect(w[full], ED_E_BINDFULL, "its write-back's result");
	int refused = 0, dirty = 0;
	for (int i = 0; i < n; i++) {
		refused += w[i] == ED_E_BINDFULL;
		dirty += w[i] == ED_E_BINDFULL && (edc_in_cache(E, &e[i]) & ED_IC_DIRTY) && allocated(e[i].blkno);
	}
	expect(dirty, refused, "the %d refused ones are still dirty and allocated", refused);
	expect(ext_write(&e[full]), ED_E_BINDFULL, "writing one back again");
	/* Make room: deallocate one committed extent, durably. */
	expect(dealloc_cached(&e[0]), 0, "deallocate a written-back extent");
	expect(ext_write(&e[0]), 0, "write the deallocation back (its binding goes)");
	expect(ext_write(&e[full]), 0, "now the refused one can be written back");
	/* Clean up, 32 at a time: deallocations of committed extents are
	 * written back; never-committed ones go at once. */
	int ok = 0;
	for (int i = 1; i < n; i += 32) {
		int end = i + 32 < n ? i + 32 : n;
		for (int k = i; k < end; k++)
			ok += dealloc_cached(&e[k]) == 0;
		for (int k = i; k < end; k++) {
			w[k] = 0;
			if (edc_in_cache(E, &e[k]) & ED_IC_DIRTY)
				edc_extent_write(E, &e[k], &w[k]);
		}
		for (int k = i; k < end; k++)
			edc_wait(E, &w[k]);
	}
	expect(ok, n - 1, "deallocate the rest");
	check(all_free(S, (uint64_t)n), "all their sectors are free");
}
