/*
 * t_extents.c - self-protected extents: allocate, I/O (the header area
 * reads as zeros), grow, shrink, write-back, read-in, deallocate; wrong
 * capabilities, ranges outside the extent, unaligned lengths and
 * allocations overlapping allocated sectors.
 */
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

void t_extents(void)
{
	static uint8_t w[20 * SECT], r[20 * SECT];
	uint64_t S = area(44) + 4;      /* free sectors before it, too */
	struct ed_protector p = pext(S, 16 * SECT, 10);

	expect(edc_extent_alloc(E, &p), 0, "allocate a 16-sector extent at %lu", (unsigned long)S);
	check(all_allocated(S, 16) && !allocated(S + 16), "the free map shows its 16 sectors, no more");
	expect(edc_in_cache(E, &p), ED_IC_CACHED | ED_IC_DIRTY | ED_IC_HELD,
	       "IN_CACHE of the new header: cached, dirty, held");

	/* Allocation errors. */
	struct ed_protector q = pext(S + 15, 4 * SECT, 20);
	expect(edc_extent_alloc(E, &q), ED_E_ALLOCATED, "allocate over its last sector");
	q = pext(S - 2, 4 * SECT, 20);
	expect(edc_extent_alloc(E, &q), ED_E_ALLOCATED, "allocate over its header sector");
	q = pext(S + 20, 100, 20);
	expect(edc_extent_alloc(E, &q), ED_E_ALIGN, "allocate 100 bytes (not whole sectors)");
	q = pext(S + 20, 0, 20);
	expect(edc_extent_alloc(E, &q), ED_E_ARG, "allocate zero bytes");
	q = pext(0, SECT, 20);
	expect(edc_extent_alloc(E, &q), ED_E_RANGE, "allocate sector 0 (the exodisk's own region)");
	q = pext(FM.nsectors - 2, 4 * SECT, 20);
	expect(edc_extent_alloc(E, &q), ED_E_RANGE, "allocate across the end of the disk");

	/* Data.  A transfer covering the header sector is rebuilt by the
	 * kernel around its own copy of that sector: the application's pages
	 * must be released exactly once, and the kernel's never. */
	fill(w, 16 * SECT, S, 1);
	uint64_t free0 = pages_free();
	expect(io(&p, 1, S, w, 16 * SECT), 0, "write all 16 sectors (header sector included)");
	memset(r, 0xee, sizeof r);
	expect(io(&p, 0, S, r, 16 * SECT), 0, "read them back");
	check(same(r, 16 * SECT, S, 1, true), "the data is back; the header area reads as zeros");
	expect((int64_t)pages_free(), (int64_t)free0, "free pages after both (as before)");
	memset(r, 0xee, sizeof r);
	expect(io(&p, 0, S + 3, r, 2 * SECT), 0, "read 2 sectors from the middle");
	check(same(r, 2 * SECT, S + 3, 1, false), "they hold what was written there");

	/* I/O outside the extent, with the wrong capability, unaligned. */
	struct ed_protector bad = p;
	bad.rc = cap(99);
	expect(io(&bad, 0, S, r, SECT), ED_E_CAP, "read with a wrong read capability");
	bad = p;
	bad.wc = p.rc;
	expect(io(&bad, 1, S + 1, w, SECT), ED_E_CAP, "write with the read capability as write capability");
	expect(io(&p, 0, S + 15, r, 2 * SECT), ED_E_RANGE, "read running past the extent's end");
	expect(io(&p, 0, S - 1, r, 2 * SECT), ED_E_RANGE, "read starting before the extent");
	expect(io(&p, 1, S + 16, w, SECT), ED_E_RANGE, "write the sector just after the extent");
	expect(io(&p, 0, S, r, 100), ED_E_ALIGN, "read of 100 bytes");
	expect(io(&p, 0, S, r, SECT + 8), ED_E_ALIGN, "read of 520 bytes");

	/* Grow and shrink. */
	expect(edc_extent_grow(E, &p, 4 * SECT), 0, "grow by 4 sectors");
	check(all_allocated(S, 20) && !allocated(S + 20), "the free map follows (20 sectors)");
	fill(w, 4 * SECT, S + 16, 2);
	expect(io(&p, 1, S + 16, w, 4 * SECT), 0, "write the new sectors");
	struct ed_protector blocker = pext(S + 20, SECT, 30);
	expect(edc_extent_alloc(E, &blocker), 0, "another extent right after it");
	expect(edc_extent_grow(E, &p, SECT), ED_E_ALLOCATED, "grow into the other extent");
	bad = p;
	bad.wc = cap(99);
	expect(edc_extent_grow(E, &bad, SECT), ED_E_CAP, "grow with a wrong write capability");
	expect(edc_extent_grow(E, &p, 100), ED_E_ALIGN, "grow by 100 bytes");
	expect(edc_extent_shrink(E, &p, 100), ED_E_ALIGN, "shrink by 100 bytes");
	expect(edc_extent_shrink(E, &p, 20 * SECT), ED_E_RANGE, "shrink away the header sector too");
	expect(edc_extent_shrink(E, &bad, SECT), ED_E_CAP, "shrink with a wrong write capability");
	expect(edc_extent_shrink(E, &p, 2 * SECT), 0, "shrink by 2 sectors");
	check(allocated(S + 17) && !allocated(S + 18),
	      "never written back: the 2 sectors are free at once");
	expect(edc_extent_dealloc(E, &blocker), 0, "deallocate the other extent (never written back)");
	check(!allocated(S + 20), "its sector is free at once");

	/* Write-back. */
	bad = p;
	bad.wc = cap(99);
	expect(ext_write(&bad), ED_E_CAP, "write back with a wrong write capability");
	expect(ext_write(&p), 0, "write the header back");
	expect(ext_write(&p), ED_E_CLEAN, "write it back again (clean)");
	expect(edc_in_cache(E, &p), ED_IC_CACHED | ED_IC_HELD | ED_IC_COMMITTED,
	       "IN_CACHE: cached, held, committed, not dirty");
	expect(edc_extent_shrink(E, &p, 2 * SECT), 0, "shrink by 2 more sectors");
	check(all_allocated(S, 18), "written back before: the sectors stay allocated until the next write-back");
	expect(ext_write(&p), 0, "write back the shrunk header");
	check(all_allocated(S, 16) && !allocated(S + 16), "now they are free");
	memset(r, 0xee, sizeof r);
	expect(io(&p, 0, S, r, 16 * SECT), 0, "read the whole extent again");
	check(same(r, 16 * SECT, S, 1, true), "still the data written first");

	/* Reading in: the wrong kind, nothing there. */
	struct ed_protector data = pext(S + 1, 0, 10);
	expect(ext_read(&data), ED_E_NOTBOUND, "EXTENT_READ of a data sector");
	struct ed_protector far = pext((uint64_t)1 << 40, 0, 10);
	expect(ext_read(&far), ED_E_RANGE, "EXTENT_READ of sector 2^40");
	expect(ext_read(&p), 0, "EXTENT_READ of the cached header");

	/* Deallocation of a committed extent: pending until written back. */
	expect(edc_extent_dealloc(E, &bad), ED_E_CAP, "deallocate with a wrong write capability");
	expect(edc_extent_dealloc(E, &p), 0, "deallocate the extent");
	check(all_allocated(S, 16), "its sectors stay allocated until the deallocation is written back");
	expect(io(&p, 0, S, r, SECT), ED_E_DEALLOC, "read a deallocated extent");
	expect(edc_extent_grow(E, &p, SECT), ED_E_DEALLOC, "grow a deallocated extent");
	expect(edc_extent_dealloc(E, &p), ED_E_DEALLOC, "deallocate it twice");
	expect(ext_write(&p), 0, "write the deallocation back");
	check(all_free(S, 16), "now the sectors are free");
	expect(ext_read(&p), ED_E_NOTBOUND, "EXTENT_READ of the gone extent");
	expect(io(&p, 0, S + 1, r, SECT), ED_E_NOTBOUND, "read the gone extent");
	q = pext(S, 2 * SECT, 40);
	expect(edc_extent_alloc(E, &q), 0, "its sectors can be allocated again");
	expect(edc_extent_dealloc(E, &q), 0, "and given back");
}
