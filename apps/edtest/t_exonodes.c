/*
 * t_exonodes.c - exonodes: several per block, extent entries (add, I/O,
 * combine, split, remove), application data (add, replace, read), write-
 * back, deallocation, a block larger than a sector; entry numbers out of
 * range, full exonodes, wrong slots and sizes, a sibling's capability.
 */
#include <string.h>
#include "apps/edtest/edt.h"

#define L 120        /* (512 - 32) / 120 = 4 exonodes per sector, 64 bytes of entries each */

static int64_t read_data(const struct ed_protector *p, int entry, void *buf, uint32_t room,
                         uint64_t *len)
{
	struct ed_protector q = *p;
	q.xn_entry = entry;
	struct ed_operation s = { .buf = (uint64_t)(uintptr_t)buf, .one = room };
	int64_t r = E->t->request(E->ctx, ED_OP_EXONODE_READ_DATA, &q, NULL, &s);
	*len = s.two;
	return r;
}

void t_exonodes(void)
{
	static uint8_t w[16 * SECT], r[16 * SECT];
	uint64_t X = area(1), D = area(40);
	struct ed_protector x[4];
	for (int i = 0; i < 4; i++) {
		x[i] = pxn(X, (uint16_t)i, L, 100 + 2 * (unsigned)i);
		expect(edc_xn_alloc(E, &x[i]), 0, "allocate exonode %d of block %lu (%d bytes)", i,
		       (unsigned long)X, L);
	}
	check(allocated(X) && !allocated(X + 1), "the block takes one sector");
	expect(edc_in_cache(E, &x[0]), ED_IC_CACHED | ED_IC_DIRTY | ED_IC_HELD | ED_IC_EXONODE,
	       "IN_CACHE: an exonode block, dirty, held");
	struct ed_protector y = pxn(X, 4, L, 120);
	expect(edc_xn_alloc(E, &y), ED_E_SLOT, "a fifth exonode in a block of four");
	y = pxn(X, 1, L, 120);
	expect(edc_xn_alloc(E, &y), ED_E_SLOT, "a slot in use");
	y = pxn(X, 3, 128, 120);
	expect(edc_xn_alloc(E, &y), ED_E_XNSIZE, "a length other than the block's");
	uint64_t X2 = area(4);
	y = pxn(X2, 0, 124, 120);
	expect(edc_xn_alloc(E, &y), ED_E_ALIGN, "a length not a multiple of 8");
	y = pxn(X2, 0, 16, 120);
	expect(edc_xn_alloc(E, &y), ED_E_XNSIZE, "a length smaller than the exonode header");
	y = pxn(X2, 0, ED_XN_MAX_BYTES + 8, 120);
	expect(edc_xn_alloc(E, &y), ED_E_XNSIZE, "a length over %u bytes", ED_XN_MAX_BYTES);
	y = pxn(X2, 40, L, 120);
	expect(edc_xn_alloc(E, &y), ED_E_SLOT, "slot 40 of a new block of four");

	/* Extent entries. */
	expect(edc_xn_add_extent(E, &x[0], -1, D, 8 * SECT), 0, "add an 8-sector extent (first free entry)");
	check(all_allocated(D, 8), "its sectors are allocated");
	expect(edc_xn_add_extent(E, &x[0], 5, D + 8, 8 * SECT), 5, "add another as entry 5");
	expect(edc_xn_add_extent(E, &x[0], 5, D + 20, SECT), ED_E_ENTRY, "entry 5 again (taken)");
	expect(edc_xn_add_extent(E, &x[0], ED_XN_MAX_ENTRIES, D + 20, SECT), ED_E_ENTRY, "entry 256");
	expect(edc_xn_add_extent(E, &x[0], -7, D + 20, SECT), ED_E_ENTRY, "entry -7");
	expect(edc_xn_add_extent(E, &x[0], -1, D + 4, 8 * SECT), ED_E_ALLOCATED,
	       "an extent overlapping allocated sectors");
	expect(edc_xn_add_extent(E, &x[0], -1, X, SECT), ED_E_ALLOCATED, "an extent over the exonode block");
	expect(edc_xn_add_extent(E, &x[0], -1, D + 16, 100), ED_E_ALIGN, "an extent of 100 bytes");
	expect(edc_xn_add_extent(E, &x[0], -1, D + 16, 0), ED_E_ARG, "an extent of 0 bytes");
	expect(edc_xn_add_extent(E, &x[0], -1, 2, SECT), ED_E_RANGE, "an extent at sector 2");
	struct ed_protector bad = x[0];
	bad.wc = x[1].wc;
	expect(edc_xn_add_extent(E, &bad, -1, D + 16, SECT), ED_E_CAP, "add with a sibling's write capability");
	expect(edc_xn_add_extent(E, &x[0], -1, D + 16, SECT), 1, "a third extent");
	expect(edc_xn_add_extent(E, &x[0], -1, D + 17, SECT), 2, "a fourth fills the 64 bytes of entries");
	expect(edc_xn_add_extent(E, &x[0], -1, D + 18, SECT), ED_E_XNFULL, "a fifth");
	check(!allocated(D + 18), "the refused extent's sector stays free");

	/* I/O across adjacent entries; the sibling's capability is no good. */
	fill(w, 16 * SECT, D, 3);
	expect(io(&x[0], 1, D, w, 16 * SECT), 0, "write 16 sectors spanning entries 0 and 5");
	memset(r, 0, sizeof r);
	expect(io(&x[0], 0, D, r, 16 * SECT), 0, "read them back");
	check(same(r, 16 * SECT, D, 3, false), "the data is back");
	expect(io(&x[1], 0, D, r, SECT), ED_E_RANGE, "read exonode 0's sector through exonode 1");
	struct ed_protector sib = x[1];
	sib.rc = x[0].rc;
	expect(io(&sib, 0, D, r, SECT), ED_E_CAP, "exonode 1 named with exonode 0's read capability");
	expect(io(&x[0], 0, D + 17, r, 2 * SECT), ED_E_RANGE, "read running past the last entry");
	bad = x[0];
	bad.rc = cap(99);
	expect(io(&bad, 0, D, r, SECT), ED_E_CAP, "read with a wrong read capability");
	bad.wc = x[0].rc;
	expect(io(&bad, 1, D, w, SECT), ED_E_CAP, "write with the read capability");

	/* Combine and split. */
	expect(edc_xn_combine(E, &x[0], 0, 5), 0, "combine entries 0 and 5 (adjacent)");
	expect(edc_xn_combine(E, &x[0], 0, 5), ED_E_ENTRY, "combine with the gone entry 5");
	expect(edc_xn_combine(E, &x[0], 0, 2), ED_E_RANGE, "combine entries that are not adjacent");
	expect(edc_xn_combine(E, &x[0], 0, 0), ED_E_ENTRY, "combine an entry with itself");
	expect(edc_xn_split(E, &x[0], 0, 4 * SECT, 7), 7, "split entry 0 after 4 sectors into entry 7");
	expect(edc_xn_split(E, &x[0], 0, 100, -1), ED_E_ALIGN, "split at byte 100");
	expect(edc_xn_split(E, &x[0], 0, 4 * SECT, -1), ED_E_RANGE, "split at the entry's end");
	expect(edc_xn_split(E, &x[0], 1, 0, -1), ED_E_RANGE, "split at offset 0");
	memset(r, 0, sizeof r);
	expect(io(&x[0], 0, D, r, 16 * SECT), 0, "the 16 sectors are still covered");
	check(same(r, 16 * SECT, D, 3, false), "and unchanged");

	/* Application data. */
	uint8_t data[40], back[64];
	for (int i = 0; i < 40; i++)
		data[i] = (uint8_t)(7 * i + 1);
	uint64_t len = 0;
	expect(edc_xn_add_data(E, &x[2], -1, data, 40), 0, "add 40 bytes of data to exonode 2");
	memset(back, 0, sizeof back);
	expect(read_data(&x[2], 0, back, 64, &len), 40, "read them with room for 64");
	check(len == 40 && memcmp(back, data, 40) == 0, "40 bytes, as written");
	memset(back, 0, sizeof back);
	static uint8_t page[4096];
	expect(read_data(&x[2], 0, page, sizeof page, &len), 40, "read them with room for 4096");
	check(memcmp(page, data, 40) == 0, "the same 40 bytes");
	expect(read_data(&x[2], 0, back, 16, &len), 16, "read with room for 16 only");
	check(len == 40 && memcmp(back, data, 16) == 0 && back[16] == 0, "16 copied, the length says 40");
	expect(edc_xn_add_data(E, &x[2], 0, data, 12), ED_E_ALIGN, "data of 12 bytes");
	expect(edc_xn_add_data(E, &x[2], 0, data, 0), 0, "replace it with no data at all (an empty entry)");
	expect(read_data(&x[2], 0, back, 64, &len), 0, "which reads as 0 bytes");
	expect(edc_xn_add_data(E, &x[2], 0, data, 8), 0, "replace it with 8 bytes");
	expect(read_data(&x[2], 0, back, 64, &len), 8, "read the replacement");
	bad = x[2];
	bad.rc = cap(99);
	expect(read_data(&bad, 0, back, 64, &len), ED_E_CAP, "read data with a wrong read capability");
	bad.wc = cap(99);
	expect(edc_xn_add_data(E, &bad, 0, data, 8), ED_E_CAP, "add data with a wrong write capability");
	expect(read_data(&x[0], 0, back, 64, &len), ED_E_ENTTYPE, "read data from an extent entry");
	expect(read_data(&x[2], 3, back, 64, &len), ED_E_ENTRY, "read data from an empty entry");
	expect(read_data(&x[2], 300, back, 64, &len), ED_E_ENTRY, "read data from entry 300");
	static uint8_t big[80];
	expect(edc_xn_add_data(E, &x[2], 0, big, 72), ED_E_TOOBIG, "72 bytes of data in a 64-byte entry area");

	/* Write-back: the block carries all four. */
	bad = x[2];
	bad.wc = cap(99);
	expect(xn_write(&bad), ED_E_CAP, "write the block back with a wrong write capability");
	expect(xn_write(&x[3]), 0, "write it back through exonode 3");
	expect(xn_write(&x[0]), ED_E_CLEAN, "write it back again through exonode 0 (clean)");
	struct ed_protector asext = pext(X, 0, 100);
	expect(ext_read(&asext), ED_E_KIND, "EXTENT_READ of the exonode block");

	/* Removing an extent entry frees its sectors once that is durable. */
	expect(edc_xn_remove(E, &x[0], 7), 0, "remove entry 7");
	expect(edc_xn_remove(E, &x[0], 7), ED_E_ENTRY, "remove it again");
	check(allocated(D + 4), "its sectors stay allocated until the write-back");
	expect(io(&x[0], 0, D + 4, r, SECT), ED_E_RANGE, "but are no longer covered");
	expect(xn_write(&x[0]), 0, "write back");
	check(!allocated(D + 4) && allocated(D + 3), "now they are free");

	/* Deallocation: the slot is dead until written back. */
	expect(edc_xn_dealloc(E, &x[1]), 0, "deallocate exonode 1");
	expect(edc_xn_dealloc(E, &x[1]), ED_E_DEALLOC, "deallocate it again");
	y = pxn(X, 1, L, 130);
	expect(edc_xn_alloc(E, &y), ED_E_SLOT, "reuse its slot before the write-back");
	expect(xn_write(&x[1]), 0, "write back, naming the dead slot");
	expect(edc_xn_alloc(E, &y), 0, "now the slot can be reused");
	expect(io(&x[1], 0, D + 16, r, SECT), ED_E_CAP, "the old exonode's capability opens nothing there");
	expect(edc_xn_dealloc(E, &y), 0, "deallocate the new one");
	for (int i = 0; i < 4; i++)
		if (i != 1)
			expect(edc_xn_dealloc(E, &x[i]), 0, "deallocate exonode %d", i);
	check(allocated(X) && allocated(D), "block and extents stay allocated until written back");
	struct ed_protector any = pxn(X, 2, 0, 140);
	expect(xn_write(&any), 0, "write back the empty block (no capability needed)");
	check(!allocated(X) && all_free(D, 18), "block and extents are free");
	expect(xn_read(&x[0]), ED_E_NOTBOUND, "EXONODE_READ of the gone block");

	/* An exonode of 3 sectors. */
	uint64_t B = area(3), BD = area(200);
	struct ed_protector big3 = pxn(B, 0, 1400, 150);
	expect(edc_xn_alloc(E, &big3), 0, "allocate a 1400-byte exonode");
	check(all_allocated(B, 3) && !allocated(B + 3), "its block takes 3 sectors");
	int n = 0;
	for (;; n++) {
		int64_t e = edc_xn_add_extent(E, &big3, -1, BD + 2 * (uint64_t)n, SECT);
		if (e != n)
			break;
	}
	expect(n, (1400 - ED_XN_HDR_BYTES) / ED_XN_EXTENT_BYTES, "extent entries that fit");
	expect(xn_write(&big3), 0, "write it back");
	fill(w, SECT, BD + 2 * 40, 4);
	expect(io(&big3, 1, BD + 2 * 40, w, SECT), 0, "write through entry 40");
	expect(io(&big3, 0, BD + 2 * 40 + 1, r, SECT), ED_E_RANGE, "the gap after it is not covered");
	expect(edc_xn_dealloc(E, &big3), 0, "deallocate it");
	expect(xn_write(&big3), 0, "write back");
	check(all_free(B, 3) && all_free(BD, 2 * (uint64_t)n), "everything is free again");
}
