/*
 * freemap.c - the free maps: one bit per sector, 1 = allocated, in whole
 * 4096-byte pages (32768 sectors each).
 *
 * A mounted unit has two.  The durable map (dfm) says exactly what the disk
 * says: the union of what every committed header and exonode block refers
 * to, plus the exodisk's own region.  The conservative map (fm) is the one
 * applications see and allocation checks: a sector becomes allocated in it
 * at allocation time, and becomes free only once no durable binding refers
 * to it (thesis section 2.2).  So fm is always a superset of dfm, and the
 * difference is exactly the allocations not yet committed.
 */
#include "kernel/exodisk/edcore.h"

#define BITS_PER_PAGE (ED_PAGE * 8u)

uint64_t *ed_fm_word(const struct ed_pvec *m, uint64_t bit)
{
	uint64_t *page = ed_pvec_page(m, (uint32_t)(bit / BITS_PER_PAGE));
	return &page[(bit % BITS_PER_PAGE) / 64];
}

/* Mask of the bits of [start, start+count) that lie in start's word, and the
 * number of them. */
static inline uint64_t span_mask(uint64_t start, uint64_t count, uint64_t *n)
{
	uint64_t off = start % 64;
	uint64_t k = ED_MIN(count, 64 - off);
	*n = k;
	return (k == 64 ? ~0ull : ((1ull << k) - 1)) << off;
}

bool ed_fm_test(const struct ed_pvec *m, uint64_t sector)
{
	return (*ed_fm_word(m, sector) >> (sector % 64)) & 1;
}

bool ed_fm_any(const struct ed_pvec *m, uint64_t start, uint64_t count)
{
	while (count > 0) {
		uint64_t n, mask = span_mask(start, count, &n);
		if (*ed_fm_word(m, start) & mask)
			return true;
		start += n;
		count -= n;
	}
	return false;
}

bool ed_fm_all(const struct ed_pvec *m, uint64_t start, uint64_t count)
{
	while (count > 0) {
		uint64_t n, mask = span_mask(start, count, &n);
		if ((*ed_fm_word(m, start) & mask) != mask)
			return false;
		start += n;
		count -= n;
	}
	return true;
}

void ed_fm_set(struct ed_pvec *m, uint64_t start, uint64_t count)
{
	while (count > 0) {
		uint64_t n, mask = span_mask(start, count, &n);
		*ed_fm_word(m, start) |= mask;
		start += n;
		count -= n;
	}
}

void ed_fm_clear(struct ed_pvec *m, uint64_t start, uint64_t count)
{
	while (count > 0) {
		uint64_t n, mask = span_mask(start, count, &n);
		*ed_fm_word(m, start) &= ~mask;
		start += n;
		count -= n;
	}
}

void ed_fm_release_uncommitted(struct ed_disk *d, uint64_t start, uint64_t count)
{
	while (count > 0) {
		uint64_t n, mask = span_mask(start, count, &n);
		uint64_t *f = ed_fm_word(&d->fm, start);
		*f &= ~mask | *ed_fm_word(&d->dfm, start);
		start += n;
		count -= n;
	}
}

uint64_t ed_fm_count(const struct ed_pvec *m, uint64_t nbits)
{
	uint64_t total = 0;
	for (uint64_t b = 0; b < nbits; b += 64) {
		uint64_t w = *ed_fm_word(m, b);
		if (nbits - b < 64)
			w &= (1ull << (nbits - b)) - 1;
		total += (uint64_t)__builtin_popcountll(w);
	}
	return total;
}
