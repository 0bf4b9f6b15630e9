/*
 * t_cache.c - the exodisk cache as an application sees it: IN_CACHE,
 * MARK_REPLACEMENT, POLL; a client that holds its quota of dirty entries
 * is told to write back (nothing is lost); once clean, its least recently
 * used entries (marked ones first) are replaced; an extent whose header
 * left the cache is read in one request, checked before any data arrives;
 * DROP_CACHE empties the cache of our clean entries.
 */
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

#define MAXE 400

static struct ed_protector small[MAXE];
static volatile int32_t words[MAXE];

/* Write back small[from..to) asynchronously, 64 at a time (the kernel
 * keeps at most 128 operations in flight), waiting for each group: the
 * write-backs of a group share log records. */
static int wb_range(int from, int to)
{
	int ok = 0;
	for (int g = from; g < to; g += 64) {
		int end = g + 64 < to ? g + 64 : to;
		for (int i = g; i < end; i++)
			edc_extent_write(E, &small[i], &words[i]);
		for (int i = g; i < end; i++)
			ok += edc_wait(E, &words[i]) == 0;
	}
	return ok;
}

void t_cache(void)
{
	static uint8_t w[4 * SECT], r[4 * SECT];
	expect(edc_pending(E), 0, "POLL with nothing in flight");
	uint64_t T = area(4);
	struct ed_protector t = pext(T, 4 * SECT, 700);
	expect(edc_extent_alloc(E, &t), 0, "an extent");
	fill(w, sizeof w, T, 11);
	expect(io(&t, 1, T, w, sizeof w), 0, "with data");
	expect(ext_write(&t), 0, "written back");
	expect(edc_in_cache(E, &t), ED_IC_CACHED | ED_IC_HELD | ED_IC_COMMITTED, "IN_CACHE");
	struct ed_protector nowc = t;
	nowc.wc = cap(99);
	expect(edc_mark_replacement(E, &nowc), 0, "MARK_REPLACEMENT by its holder (no capability needed)");
	expect(edc_in_cache(E, &t), ED_IC_CACHED | ED_IC_COMMITTED, "IN_CACHE: no longer held by us");
	expect(edc_mark_replacement(E, &nowc), ED_E_CAP, "MARK_REPLACEMENT again: not held, no capability");
	expect(ext_read(&t), 0, "EXTENT_READ holds it again (it is still cached)");
	struct ed_protector nothing = pext(area(1), 0, 700);
	expect(edc_mark_replacement(E, &nothing), ED_E_NOTCACHED, "MARK_REPLACEMENT of an uncached sector");
	expect(edc_in_cache(E, &nothing), 0, "IN_CACHE of an uncached sector");

	/* Fill our quota with dirty headers: the last one that fits replaces
	 * our only clean entry (the first extent); then we are told to write
	 * back - nothing dirty is ever dropped. */
	uint64_t S = area(2 * MAXE);
	int n = 0;
	int64_t last = 0;
	for (; n < MAXE; n++) {
		small[n] = pext(S + 2 * (uint64_t)n, SECT, 710);
		last = edc_extent_alloc(E, &small[n]);
		if (last < 0)
			break;
	}
	check(n >= 100 && n < MAXE, "allocated %d one-sector extents, all dirty, before being refused", n);
	expect(last, ED_E_CACHEDIRTY, "the next allocation");
	check(!allocated(small[n].blkno), "the refused extent's sector stays free");
	expect(edc_in_cache(E, &t), 0, "our one clean entry, the first extent, made room for the last");
	int dirty = 0;
	for (int i = 0; i < n; i++)
		dirty += (edc_in_cache(E, &small[i]) & (ED_IC_DIRTY | ED_IC_HELD)) == (ED_IC_DIRTY | ED_IC_HELD);
	expect(dirty, n, "all %d are still cached, dirty and ours", n);

	/* An uncached extent: one request brings header and data; the
	 * capability is checked before any data is delivered. */
	struct ed_protector bad = t;
	bad.rc = cap(99);
	memset(r, 0xcc, sizeof r);
	expect(io(&bad, 0, T, r, sizeof r), ED_E_CAP, "read it, uncached, with a wrong read capability");
	bool untouched = true;
	for (size_t i = 0; i < sizeof r; i++)
		untouched &= r[i] == 0xcc;
	check(untouched, "not one byte reached our buffer");
	expect(io(&t, 0, T + 1, r, 2 * SECT), 0, "read it, uncached, with the right one");
	check(same(r, 2 * SECT, T + 1, 11, false), "the data");
	expect(edc_in_cache(E, &t), 0, "no room to keep its header (the cache quota is full of dirty entries)");

	expect(wb_range(0, n), n, "write back all %d (asynchronously, 64 at a time)", n);
	small[n] = pext(S + 2 * (uint64_t)n, SECT, 710);
	expect(edc_extent_alloc(E, &small[n]), 0, "allocate one more: at our quota, now clean");
	int64_t m_first = edc_in_cache(E, &small[0]), m_second = edc_in_cache(E, &small[1]);
	check(m_first == 0 && (m_second & ED_IC_HELD),
	      "it replaced our least recently used entry (IN_CACHE %#lx), not the next (%#lx)",
	      (unsigned long)m_first, (unsigned long)m_second);
	n++;
	int more = 0;
	for (int i = 0; i < 10; i++) {
		small[n + i] = pext(S + 2 * (uint64_t)(n + i), SECT, 710);
		more += edc_extent_alloc(E, &small[n + i]) == 0;
	}
	expect(more, 10, "10 more allocations: our clean entries make room");
	expect(edc_mark_replacement(E, &small[20]), 0, "mark a clean one for replacement");
	expect(edc_in_cache(E, &small[20]), ED_IC_CACHED | ED_IC_COMMITTED,
	       "it stays cached, but no longer held by us");
	expect(edc_mark_replacement(E, &small[n + 9]), 0, "mark a dirty one for replacement");
	expect(edc_in_cache(E, &small[n + 9]), ED_IC_CACHED | ED_IC_DIRTY | ED_IC_HELD,
	       "it keeps its changes and our hold (we must still write it back)");
	expect(io(&t, 0, T + 1, r, 2 * SECT), 0, "read the first extent, uncached, again");
	check(edc_in_cache(E, &t) & ED_IC_CACHED, "now its verified header was kept");
	expect(wb_range(n - 1, n + 10), 11, "write back the 11 new ones");
	n += 10;

	/* Everything of ours is committed: DROP_CACHE evicts all of it, once
	 * the background writes to their home sectors are done (an entry
	 * being written home stays, counted as busy: try again a little
	 * later). */
	int64_t left;
	uint64_t busy = 0;
	int tries = 0;
	do {
		if (tries++ > 0)
			exo_sleep_ns(1000000);
		left = edc_drop_cache(E, U, &busy);
	} while (left > 0 && busy > 0 && tries < 1000);
	check(left >= 0 && busy == 0, "DROP_CACHE after %d call%s: %ld entries stay (held by others), none busy",
	      tries, tries > 1 ? "s" : "", (long)left);
	int still = 0;
	for (int i = 0; i < n; i++)
		still += edc_in_cache(E, &small[i]) != 0;
	expect(still, 0, "none of our %d extents is cached any more", n);
	expect(io(&t, 0, T + 1, r, 2 * SECT), 0, "read the first extent from the disk again");
	check(same(r, 2 * SECT, T + 1, 11, false), "the data");

	/* Clean up, 50 at a time (each deallocation makes a dirty entry),
	 * reading in the headers that left the cache. */
	int gone = 0, back = 0;
	for (int i = 0; i < n; i += 50) {
		int end = i + 50 < n ? i + 50 : n;
		for (int k = i; k < end; k++) {
			int64_t e = edc_extent_dealloc(E, &small[k]);
			if (e == ED_E_NOTCACHED && ext_read(&small[k]) == 0)
				e = edc_extent_dealloc(E, &small[k]);
			gone += e == 0;
		}
		back += wb_range(i, end);
	}
	expect(gone, n, "deallocate them");
	expect(back, n, "write the deallocations back");
	check(all_free(S, 2 * (uint64_t)n), "their sectors are free");
	expect(edc_extent_dealloc(E, &t), 0, "deallocate the first extent");
	expect(ext_write(&t), 0, "write back");
}
