/*
 * t_isolation.c - two processes with different capabilities: neither can
 * read, write, change, write back, map, lend or discover the other's
 * extents and exonodes, nor allocate over them; each one's data stays as
 * its owner wrote it.  The two signal each other through flag sectors in
 * the free map (read without system calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

struct bit {
	uint64_t s;
	bool set;
};

static bool bit_is(void *arg)
{
	struct bit *b = arg;
	return allocated(b->s) == b->set;
}

/* Try everything on an extent and an exonode (with one extent entry and
 * one data entry) whose capabilities we do not have. */
static void probe(const char *who, uint64_t ext, uint64_t xn, uint64_t xd, unsigned mycaps)
{
	static uint8_t buf[4 * SECT];
	fill(buf, sizeof buf, ext, 77);
	struct ed_protector e = pext(ext, 0, mycaps);
	struct ed_protector x = pxn(xn, 0, 0, mycaps);
	/* Both are in the cache (their owner holds them), so every refusal
	 * below is about the capability. */
	check(edc_in_cache(E, &e) != 0 && edc_in_cache(E, &x) != 0, "%s: the other's objects are cached", who);
	expect(io(&e, 0, ext, buf, SECT), ED_E_CAP, "%s: read the other's extent", who);
	expect(io(&e, 1, ext + 1, buf, SECT), ED_E_CAP, "%s: write the other's extent", who);
	expect(edc_extent_grow(E, &e, SECT), ED_E_CAP, "%s: grow it", who);
	expect(edc_extent_shrink(E, &e, SECT), ED_E_CAP, "%s: shrink it", who);
	expect(edc_extent_dealloc(E, &e), ED_E_CAP, "%s: deallocate it", who);
	expect(ext_write(&e), ED_E_CAP, "%s: write it back", who);
	expect(edc_mark_replacement(E, &e), ED_E_CAP, "%s: mark it for replacement", who);
	struct ed_range r = { ext + 1, 1 };
	struct ed_cap c1 = cap(mycaps + 10), c2 = cap(mycaps + 11);
	expect(edc_xn_proxy(E, &e, &r, 1, ED_PROXY_READ, &c1, &c2), ED_E_CAP, "%s: lend it by proxy", who);
	struct ed_protector over = pext(ext + 1, SECT, mycaps);
	expect(edc_extent_alloc(E, &over), ED_E_ALLOCATED, "%s: allocate over it", who);

	expect(io(&x, 0, xd, buf, SECT), ED_E_CAP, "%s: read through the other's exonode", who);
	expect(io(&x, 1, xd, buf, SECT), ED_E_CAP, "%s: write through it", who);
	expect(edc_xn_add_extent(E, &x, -1, ext + 40, SECT), ED_E_CAP, "%s: add an extent to it", who);
	uint8_t d8[8] = "intrude";
	expect(edc_xn_add_data(E, &x, -1, d8, 8), ED_E_CAP, "%s: add data to it", who);
	expect(edc_xn_read_data(E, &x, 1, buf, 64), ED_E_CAP, "%s: read its data", who);
	expect(edc_xn_remove(E, &x, 0), ED_E_CAP, "%s: remove its extent entry", who);
	expect(edc_xn_split(E, &x, 0, SECT, -1), ED_E_CAP, "%s: split its extent entry", who);
	expect(edc_xn_dealloc(E, &x), ED_E_CAP, "%s: deallocate it", who);
	expect(xn_write(&x), ED_E_CAP, "%s: write it back", who);
	expect(edc_xn_map(E, &x), ED_E_CAP, "%s: map it", who);
	r = (struct ed_range){ xd, 1 };
	expect(edc_xn_proxy(E, &x, &r, 1, ED_PROXY_READ, &c1, &c2), ED_E_CAP, "%s: lend it by proxy", who);
	expect(edc_xn_add_exonode(E, &x, -1, ext + 41, 0, 96, &c1, &c2), ED_E_CAP,
	       "%s: give it a descendant", who);
	struct ed_protector xover = pxn(xd, 0, 96, mycaps);
	expect(edc_xn_alloc(E, &xover), ED_E_ALLOCATED, "%s: put an exonode block on its extent", who);
}

/* An extent (4 sectors) and an exonode (at xn, with 4 sectors at xd and 8
 * bytes of data), filled, written back. */
static void make(const char *who, uint64_t ext, uint64_t xn, uint64_t xd, unsigned caps, uint32_t seed)
{
	static uint8_t buf[4 * SECT];
	struct ed_protector e = pext(ext, 4 * SECT, caps);
	struct ed_protector x = pxn(xn, 0, 120, caps + 2);
	int ok = edc_extent_alloc(E, &e) == 0;
	fill(buf, sizeof buf, ext, seed);
	ok += io(&e, 1, ext, buf, sizeof buf) == 0;
	ok += ext_write(&e) == 0;
	ok += edc_xn_alloc(E, &x) == 0;
	ok += edc_xn_add_extent(E, &x, -1, xd, 4 * SECT) == 0;
	uint8_t d8[8] = "private";
	ok += edc_xn_add_data(E, &x, -1, d8, 8) == 1;
	fill(buf, sizeof buf, xd, seed);
	ok += io(&x, 1, xd, buf, sizeof buf) == 0;
	ok += xn_write(&x) == 0;
	expect(ok, 8, "%s: an extent and an exonode, with data, written back", who);
}

/* Our data is as we wrote it; then take it all away again. */
static void verify_and_remove(const char *who, uint64_t ext, uint64_t xn, uint64_t xd, unsigned caps,
                              uint32_t seed)
{
	static uint8_t buf[4 * SECT];
	struct ed_protector e = pext(ext, 0, caps);
	struct ed_protector x = pxn(xn, 0, 0, caps + 2);
	memset(buf, 0, sizeof buf);
	expect(io(&e, 0, ext, buf, sizeof buf), 0, "%s: read our extent", who);
	check(same(buf, sizeof buf, ext, seed, true), "%s: our extent's data is untouched", who);
	memset(buf, 0, sizeof buf);
	expect(io(&x, 0, xd, buf, sizeof buf), 0, "%s: read through our exonode", who);
	check(same(buf, sizeof buf, xd, seed, false), "%s: our exonode's data is untouched", who);
	int ok = edc_extent_dealloc(E, &e) == 0;
	ok += ext_write(&e) == 0;
	ok += edc_xn_remove(E, &x, 0) == 0;
	ok += edc_xn_remove(E, &x, 1) == 0;
	ok += edc_xn_dealloc(E, &x) == 0;
	ok += xn_write(&x) == 0;
	expect(ok, 6, "%s: deallocate and write back", who);
}

void t_isolation(void)
{
	uint64_t pe = area(4), px = area(1), pxd = area(4);
	uint64_t ce = area(4), cx = area(1), cxd = area(4), F = area(2);
	make("parent", pe, px, pxd, 1100, 21);
	char a[7][24];
	uint64_t v[7] = { pe, px, pxd, ce, cx, cxd, F };
	const char *args[8];
	for (int i = 0; i < 7; i++) {
		snprintf(a[i], sizeof a[i], "%lu", (unsigned long)v[i]);
		args[i] = a[i];
	}
	args[7] = NULL;
	int pid = child_start("stranger", args);
	check(pid > 0, "start a child with capabilities of its own");
	if (pid <= 0)
		return;
	struct bit ready = { F, true };
	if (check(wait_until(bit_is, &ready, 20000), "the child has probed ours and made its own")) {
		probe("parent", ce, cx, cxd, 1100);
		struct ed_protector done = pext(F + 1, SECT, 1150);
		expect(edc_extent_alloc(E, &done), 0, "parent: tell the child we are done");
	}
	int status = -1;
	exo_wait(pid, &status);
	expect(status, 0, "the child's checks");
	check(all_free(ce, 4) && !allocated(cx) && all_free(cxd, 4), "the child took its objects away");
	verify_and_remove("parent", pe, px, pxd, 1100, 21);
	struct ed_protector done = pext(F + 1, SECT, 1150);
	edc_extent_dealloc(E, &done);
}

/* edtest child stranger PE PX PXD CE CX CXD F */
int c_stranger(int argc, char **argv)
{
	if (argc < 8)
		return 99;
	uint64_t v[7];
	for (int i = 0; i < 7; i++)
		v[i] = strtoull(argv[1 + i], NULL, 10);
	probe("child", v[0], v[1], v[2], 1200);
	make("child", v[3], v[4], v[5], 1200, 31);
	struct ed_protector ready = pext(v[6], SECT, 1250);
	expect(edc_extent_alloc(E, &ready), 0, "child: tell the parent we are ready");
	struct bit done = { v[6] + 1, true };
	check(wait_until(bit_is, &done, 20000), "child: the parent has probed ours");
	verify_and_remove("child", v[3], v[4], v[5], 1200, 31);
	edc_extent_dealloc(E, &ready);
	return (int)checks_failed();
}
