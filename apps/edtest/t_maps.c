/*
 * t_maps.c - exonode maps (ED_OP_EXONODE_MAP): a read-only page showing
 * one exonode's entries and data, kept current by the kernel, read with no
 * system call, carrying no capability and nothing of a neighbouring
 * exonode; a store into it kills only the process that tried; 64 maps per
 * process at most.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

static bool page_has(const uint8_t *page, const void *needle, size_t n)
{
	for (size_t i = 0; i + n <= 4096; i++)
		if (memcmp(page + i, needle, n) == 0)
			return true;
	return false;
}

/* A consistent copy of the header: gen even and unchanged around the copy. */
static struct ed_xnmap_hdr snap(const volatile struct ed_xnmap_hdr *h)
{
	struct ed_xnmap_hdr c;
	for (;;) {
		uint64_t g = h->gen;
		memcpy(&c, (const void *)h, sizeof c);
		if ((g & 1) == 0 && h->gen == g)
			return c;
	}
}

void t_maps(void)
{
	uint64_t X = area(1), D = area(8);
	struct ed_protector x = pxn(X, 0, 120, 500), y = pxn(X, 1, 120, 510);
	expect(edc_xn_alloc(E, &x), 0, "an exonode");
	expect(edc_xn_alloc(E, &y), 0, "and a neighbour in its block");
	uint8_t ydata[16] = "neighbour-bytes";
	expect(edc_xn_add_data(E, &y, -1, ydata, 16), 0, "the neighbour gets data of its own");
	expect(edc_xn_add_extent(E, &x, -1, D, 4 * SECT), 0, "the exonode gets an extent");
	uint8_t xdata[24] = "application-metadata!!!";
	expect(edc_xn_add_data(E, &x, -1, xdata, 24), 1, "and 24 bytes of data");

	struct ed_protector xbad = x;
	xbad.rc = cap(99);
	expect(edc_xn_map(E, &xbad), ED_E_CAP, "map it with a wrong read capability");
	int64_t ua = edc_xn_map(E, &x);
	check(ua >= (int64_t)UXNMAP_BASE && ua < (int64_t)(UXNMAP_BASE + UXNMAP_SIZE),
	      "map it -> %#lx, in the exonode-map window", (unsigned long)ua);
	if (ua < (int64_t)UXNMAP_BASE)
		return;
	const uint8_t *page = (const uint8_t *)(uintptr_t)ua;
	const volatile struct ed_xnmap_hdr *mh = (const void *)page;
	const struct ed_xnmap_ent *me = (const void *)(page + sizeof *mh);

	/* Read it with no system call. */
	uint64_t sc0 = exo_kinfo()->syscalls;
	struct ed_xnmap_hdr h = snap(mh);
	bool entries_ok = h.nent == 2 && me[0].type == ED_ENT_EXTENT && me[0].a == D && me[0].b == 4 &&
	                  me[1].type == ED_ENT_DATA && me[1].idx == 1 && me[1].len == 24 &&
	                  memcmp(page + me[1].a, xdata, 24) == 0;
	bool no_caps = !page_has(page, &x.rc, 8) && !page_has(page, &x.wc, 8) &&
	               !page_has(page, (uint8_t *)&x.rc + 8, 8) && !page_has(page, (uint8_t *)&x.wc + 8, 8);
	bool no_neighbour = !page_has(page, &y.rc, 8) && !page_has(page, &y.wc, 8) &&
	                    !page_has(page, ydata, 9);
	uint64_t sc1 = exo_kinfo()->syscalls;
	expect((int64_t)(sc1 - sc0), 0, "system calls made while reading the map");
	check(h.magic == ED_XNMAP_MAGIC && h.state == ED_XNMAP_LIVE && h.sector == X && h.xn_num == 0 &&
	      h.unit == U && h.length == 120 && h.dirty == 1,
	      "header: magic, live, its sector and slot, 120 bytes, dirty");
	check(entries_ok, "its two entries: the extent and the data, with the bytes");
	check(no_caps, "no byte of either capability appears in the page");
	check(no_neighbour, "nothing of the neighbouring exonode appears");

	/* It follows changes. */
	expect(edc_xn_add_extent(E, &x, -1, D + 6, SECT), 2, "add a second extent");
	struct ed_xnmap_hdr h2 = snap(mh);
	check(h2.gen > h.gen && h2.nent == 3 && me[2].type == ED_ENT_EXTENT && me[2].a == D + 6,
	      "the map shows it (gen %lu -> %lu, 3 entries)", (unsigned long)h.gen, (unsigned long)h2.gen);
	expect(xn_write(&x), 0, "write the block back");
	check(snap(mh).dirty == 0, "the map says clean");
	expect(edc_xn_remove(E, &x, 0), 0, "remove the first extent");
	h2 = snap(mh);
	check(h2.nent == 2 && h2.dirty == 1 && me[0].type == ED_ENT_DATA && me[0].idx == 1 &&
	      me[1].type == ED_ENT_EXTENT && me[1].idx == 2 && me[1].a == D + 6,
	      "the map shows the removal (entries 1 and 2 left, dirty)");

	/* A store into the map kills the process that tried, and only it. */
	char srcap[33], sx[24];
	cap_fmt(srcap, &x.rc);
	snprintf(sx, sizeof sx, "%lu", (unsigned long)X);
	const char *args[] = { sx, srcap, NULL };
	expect(child("map-write", args), 128 + 15, "a child that stores into its map is killed (store page fault)");
	check(snap(mh).magic == ED_XNMAP_MAGIC && snap(mh).nent == 2, "our map is unharmed");

	/* 64 maps per process. */
	int64_t extra[70];
	int n = 0;
	int64_t last = 0;
	for (; n < 70; n++) {
		last = edc_xn_map(E, &x);
		if (last < 0)
			break;
		extra[n] = last;
	}
	expect(n, 63, "further maps until refused (one is in use)");
	expect(last, ED_E_NOMAP, "the 65th map");
	int un = 0;
	for (int i = 0; i < n; i++)
		un += edc_xn_unmap(E, &x, (uint64_t)extra[i]) == 0;
	expect(un, n, "unmap them");
	expect(edc_xn_unmap(E, &x, (uint64_t)extra[0]), ED_E_NOMAP, "unmap one twice");
	expect(edc_xn_unmap(E, &x, 0x1234), ED_E_NOMAP, "unmap an address that is no map");

	/* Deallocation: the page says GONE. */
	expect(edc_xn_remove(E, &x, 1), 0, "remove the data");
	expect(edc_xn_remove(E, &x, 2), 0, "remove the last extent");
	expect(edc_xn_dealloc(E, &x), 0, "deallocate the exonode");
	expect(snap(mh).state, ED_XNMAP_GONE, "the map's state");
	expect(edc_xn_unmap(E, &x, (uint64_t)ua), 0, "unmap it");
	expect(edc_xn_dealloc(E, &y), 0, "deallocate the neighbour");
	expect(xn_write(&x), 0, "write back the empty block");
	check(!allocated(X) && all_free(D, 8), "all free");
}

/* edtest child map-write SECTOR RC: map the exonode (sector, slot 0) and
 * store into the page; the kernel must kill us. */
int c_map_write(int argc, char **argv)
{
	if (argc < 3)
		return 99;
	struct ed_protector x = pxn(strtoull(argv[1], NULL, 10), 0, 0, 0);
	if (!cap_parse(argv[2], &x.rc))
		return 98;
	int64_t ua = edc_xn_map(E, &x);
	if (!check(ua > 0, "child: map someone else's exonode with its read capability -> %#lx",
	           (unsigned long)ua))
		return 1;
	volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)ua;
	note("child: storing into the map");
	p[1] = 0x1;
	check(false, "child: the store into the read-only map went through");
	return 1;
}
