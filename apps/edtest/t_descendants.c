/*
 * t_descendants.c - descendant exonodes: an ancestor's capabilities reach
 * every descendant, never the reverse, and read rights never become write
 * rights on the way down; CAP_DISCOVER reveals only what was proved;
 * removal of non-empty descendants; a chain deeper than ED_MAX_DEPTH.
 */
#include <string.h>
#include "apps/edtest/edt.h"

static int64_t add_child(const struct ed_protector *parent, uint64_t sector, uint16_t slot,
                         uint64_t len, unsigned capn)
{
	struct ed_cap rc = cap(capn), wc = cap(capn + 1);
	return edc_xn_add_exonode(E, parent, -1, sector, slot, len, &rc, &wc);
}

/* Who presents which capability to which exonode. */
static struct ed_protector as(const struct ed_protector *x, const struct ed_protector *caps)
{
	struct ed_protector p = *x;
	p.rc = caps->rc;
	p.wc = caps->wc;
	return p;
}

static void chain(void)
{
	/* 18 exonodes, each the parent of the next: 17 hops from the root to
	 * the last.  96-byte exonodes, five per sector, four sectors. */
	enum { N = 18 };
	uint64_t K = area(4), D = area(1);
	struct ed_protector x[N];
	x[0] = pxn(K, 0, 96, 300);
	expect(edc_xn_alloc(E, &x[0]), 0, "a chain: the root");
	int ok = 0;
	for (int i = 1; i < N; i++) {
		uint64_t sector = K + (uint64_t)(i / 5);
		x[i] = pxn(sector, (uint16_t)(i % 5), 96, 300 + 2 * (unsigned)i);
		ok += add_child(&x[i - 1], sector, (uint16_t)(i % 5), 96, 300 + 2 * (unsigned)i) == 0;
	}
	expect(ok, N - 1, "17 descendants, each under the one before");
	expect(edc_xn_add_extent(E, &x[N - 1], -1, D, SECT), 0, "an extent in the deepest");
	static uint8_t buf[SECT];
	fill(buf, SECT, D, 9);
	struct ed_protector p = as(&x[N - 1], &x[1]);
	expect(io(&p, 1, D, buf, SECT), 0, "write it with the capability 16 levels up");
	p = as(&x[N - 1], &x[0]);
	expect(io(&p, 1, D, buf, SECT), ED_E_DEPTH, "write it with the root's, 17 levels up");
	/* Take it down from the bottom. */
	int down = edc_xn_remove(E, &x[N - 1], 0) == 0;
	for (int i = N - 2; i >= 0; i--)
		down += edc_xn_remove(E, &x[i], 0) == 0;
	expect(down, N, "remove the extent, then each descendant from its parent, bottom up");
	expect(edc_xn_dealloc(E, &x[0]), 0, "deallocate the root");
	check(all_free(K, 4) && !allocated(D), "never written back: every sector is free again");
}

void t_descendants(void)
{
	uint64_t P = area(1), C = area(1), G = area(1), D = area(20);
	struct ed_protector parent = pxn(P, 0, 200, 200);
	struct ed_protector child = pxn(C, 0, 96, 210);
	struct ed_protector grand = pxn(G, 0, 96, 220);
	expect(edc_xn_alloc(E, &parent), 0, "allocate the parent");
	expect(add_child(&parent, C, 0, 96, 210), 0, "add a child exonode in a block of its own");
	expect(add_child(&parent, C, 0, 96, 230), ED_E_SLOT, "add another in the child's slot");
	expect(add_child(&child, G, 0, 96, 220), 0, "add a grandchild under the child");
	struct ed_protector notmine = as(&child, &grand);
	expect(add_child(&notmine, G, 1, 96, 240), ED_E_CAP, "add a descendant with the grandchild's caps");
	expect(edc_xn_add_extent(E, &grand, -1, D, 4 * SECT), 0, "an extent in the grandchild");
	expect(edc_xn_add_extent(E, &parent, -1, D + 10, 4 * SECT), 1, "an extent in the parent");

	/* Down, not up. */
	static uint8_t w[4 * SECT], r[4 * SECT];
	fill(w, sizeof w, D, 5);
	struct ed_protector p = as(&grand, &parent);
	expect(io(&p, 1, D, w, sizeof w), 0, "write the grandchild's extent with the parent's caps");
	p = as(&grand, &child);
	memset(r, 0, sizeof r);
	expect(io(&p, 0, D, r, sizeof r), 0, "read it with the child's caps");
	check(same(r, sizeof r, D, 5, false), "the data written through the parent");
	p = as(&parent, &child);
	expect(io(&p, 0, D + 10, r, SECT), ED_E_CAP, "read the parent's extent with the child's caps");
	expect(edc_xn_add_extent(E, &p, -1, D + 15, SECT), ED_E_CAP, "add to the parent with the child's caps");
	p = as(&child, &grand);
	expect(edc_xn_add_extent(E, &p, -1, D + 15, SECT), ED_E_CAP, "add to the child with the grandchild's caps");
	expect(xn_write(&p), ED_E_CAP, "write the child back with the grandchild's caps");
	p = as(&grand, &parent);
	p.wc = parent.rc;
	expect(io(&p, 1, D, w, SECT), ED_E_CAP, "write the grandchild with the parent's read cap as write cap");
	expect(io(&p, 0, D, r, SECT), 0, "(reading with it is fine)");

	/* Discovering a descendant's capabilities. */
	struct ed_cap rc, wc;
	struct ed_cap crc = cap(210), cwc = cap(211), zero = { { 0, 0 } };
	expect(edc_xn_cap_discover(E, &parent, 0, &rc, &wc), 3, "CAP_DISCOVER with both capabilities");
	check(cap_eq(&rc, &crc) && cap_eq(&wc, &cwc), "it gives the child's read and write capabilities");
	p = parent;
	p.wc = cap(99);
	rc = wc = zero;
	expect(edc_xn_cap_discover(E, &p, 0, &rc, &wc), 1, "CAP_DISCOVER with the read capability only");
	check(cap_eq(&rc, &crc) && cap_eq(&wc, &zero), "it gives the read capability, not the write one");
	p = parent;
	p.rc = cap(99);
	rc = wc = zero;
	expect(edc_xn_cap_discover(E, &p, 0, &rc, &wc), 2, "CAP_DISCOVER with the write capability only");
	check(cap_eq(&wc, &cwc) && cap_eq(&rc, &zero), "it gives the write capability, not the read one");
	p.wc = cap(99);
	expect(edc_xn_cap_discover(E, &p, 0, &rc, &wc), ED_E_CAP, "CAP_DISCOVER with neither");
	/* Issue 17 A4: without a capability, every entry gets that answer -
	 * an extent or an empty slot - so none of them leaks. */
	expect(edc_xn_cap_discover(E, &p, 1, &rc, &wc), ED_E_CAP, "CAP_DISCOVER of an extent entry with neither");
	expect(edc_xn_cap_discover(E, &p, 9, &rc, &wc), ED_E_CAP, "CAP_DISCOVER of an empty entry with neither");
	p = as(&child, &grand);
	expect(edc_xn_cap_discover(E, &p, 0, &rc, &wc), ED_E_CAP,
	       "the grandchild's caps discover nothing through the child");
	expect(edc_xn_cap_discover(E, &parent, 1, &rc, &wc), ED_E_ENTTYPE, "CAP_DISCOVER of an extent entry");
	expect(edc_xn_cap_discover(E, &parent, 9, &rc, &wc), ED_E_ENTRY, "CAP_DISCOVER of an empty entry");

	/* Removal: a descendant must be empty; deallocation needs no descendants. */
	expect(edc_xn_remove(E, &child, 0), ED_E_NOTEMPTY, "remove the grandchild while it holds an extent");
	expect(edc_xn_dealloc(E, &parent), ED_E_NOTEMPTY, "deallocate the parent while it has a child");
	expect(edc_xn_remove(E, &grand, 0), 0, "remove the grandchild's extent");
	expect(edc_xn_remove(E, &child, 0), 0, "now remove the grandchild");
	expect(io(&grand, 0, D, r, SECT), ED_E_NOTBOUND, "the grandchild is gone");
	expect(edc_xn_dealloc(E, &child), 0, "deallocate the child directly");
	expect(edc_xn_remove(E, &parent, 0), ED_E_ENTRY, "its entry in the parent went with it");
	expect(edc_xn_remove(E, &parent, 1), 0, "remove the parent's extent");
	expect(edc_xn_dealloc(E, &parent), 0, "deallocate the parent");
	check(!allocated(P) && !allocated(C) && !allocated(G) && all_free(D, 20),
	      "never written back: everything is free");

	chain();
}
