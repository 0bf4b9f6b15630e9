/*
 * t_proxies.c - proxy exonodes: a subset of the origin with capabilities of
 * its own, used by another process; never more rights than proved, never
 * the extent's header sector; cut back when the origin shrinks, gone when
 * the origin or the creator goes; nothing can be added to one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"

static int64_t mkproxy(const struct ed_protector *origin, const struct ed_range *r, uint32_t n,
                       uint32_t rights, unsigned capn)
{
	struct ed_cap rc = cap(capn), wc = cap(capn + 1);
	return edc_xn_proxy(E, origin, r, n, rights, &rc, &wc);
}

static void arg_u64(char *buf, uint64_t v)
{
	snprintf(buf, 24, "%lu", (unsigned long)v);
}

/* The proxy in another process: it reads what it was lent, nothing else,
 * and cannot write through a read-only proxy. */
static void lend_to_child(int64_t id, uint64_t S)
{
	struct ed_cap rc = cap(410), wc = cap(411);
	char sid[24], srcap[33], swcap[33], sstart[24];
	arg_u64(sid, (uint64_t)id);
	cap_fmt(srcap, &rc);
	cap_fmt(swcap, &wc);
	arg_u64(sstart, S);
	const char *args[] = { sid, srcap, swcap, sstart, NULL };
	expect(child("proxy-user", args), 0, "another process reads through the proxy, nothing more");
}

void t_proxies(void)
{
	static uint8_t w[32 * SECT], r[32 * SECT];
	uint64_t S = area(32);
	struct ed_protector ext = pext(S, 32 * SECT, 400);
	expect(edc_extent_alloc(E, &ext), 0, "allocate a 32-sector extent");
	fill(w, sizeof w, S, 6);
	expect(io(&ext, 1, S, w, sizeof w), 0, "fill it");
	expect(ext_write(&ext), 0, "write it back");

	struct ed_range bad[17];
	for (int i = 0; i < 17; i++)
		bad[i] = (struct ed_range){ S + 1 + (uint64_t)i, 1 };
	struct ed_range one = { S, 4 };
	expect(mkproxy(&ext, &one, 1, ED_PROXY_READ, 410), ED_E_NOTSUBSET, "a proxy over the header sector");
	one = (struct ed_range){ S + 30, 4 };
	expect(mkproxy(&ext, &one, 1, ED_PROXY_READ, 410), ED_E_NOTSUBSET, "a proxy past the extent's end");
	one = (struct ed_range){ S + 1, 0 };
	expect(mkproxy(&ext, &one, 1, ED_PROXY_READ, 410), ED_E_ARG, "a proxy range of 0 sectors");
	expect(mkproxy(&ext, bad, 17, ED_PROXY_READ, 410), ED_E_TOOBIG, "a proxy of 17 ranges");
	expect(mkproxy(&ext, bad, 0, ED_PROXY_READ, 410), ED_E_ARG, "a proxy of 0 ranges");
	one = (struct ed_range){ S + 1, 4 };
	expect(mkproxy(&ext, &one, 1, 0, 410), ED_E_ARG, "a proxy with no rights");
	expect(mkproxy(&ext, &one, 1, 8, 410), ED_E_ARG, "a proxy with unknown rights");
	struct ed_protector ro = ext;
	ro.wc = cap(99);
	expect(mkproxy(&ro, &one, 1, ED_PROXY_READ | ED_PROXY_WRITE, 410), ED_E_CAP,
	       "a writable proxy from someone who proved only the read capability");
	struct ed_protector none = ro;
	none.rc = cap(98);
	expect(mkproxy(&none, &one, 1, ED_PROXY_READ, 410), ED_E_CAP, "a proxy from someone who proved nothing");

	struct ed_range rg[2] = { { S + 1, 10 }, { S + 20, 8 } };
	int64_t id = mkproxy(&ro, rg, 2, ED_PROXY_READ, 410);
	check(id >= 0, "a read-only proxy of two ranges from the read capability -> id %ld", (long)id);
	struct ed_protector px = pproxy(id, 410);
	memset(r, 0, sizeof r);
	expect(io(&px, 0, S + 2, r, 4 * SECT), 0, "read 4 sectors through it");
	check(same(r, 4 * SECT, S + 2, 6, false), "they hold the extent's data");
	expect(io(&px, 0, S + 10, r, 2 * SECT), ED_E_RANGE, "read across the end of its first range");
	expect(io(&px, 0, S, r, SECT), ED_E_RANGE, "read the header sector through it");
	expect(io(&px, 1, S + 2, w, SECT), ED_E_CAP, "write through the read-only proxy");
	struct ed_protector pxo = px;
	pxo.rc = ext.rc;
	expect(io(&pxo, 0, S + 2, r, SECT), ED_E_CAP, "the proxy named with the origin's capability");
	struct ed_protector pxn1 = pproxy(id + 1, 410);
	expect(io(&pxn1, 0, S + 2, r, SECT), ED_E_NOPROXY, "a proxy id nobody made");
	lend_to_child(id, S);

	/* Nothing can be added to a proxy, and it has no block. */
	expect(edc_xn_add_extent(E, &px, -1, S + 40, SECT), ED_E_PROXY, "add an extent to a proxy");
	uint8_t d8[8] = { 1 };
	expect(edc_xn_add_data(E, &px, -1, d8, 8), ED_E_PROXY, "add data to a proxy");
	expect(edc_xn_split(E, &px, 0, SECT, -1), ED_E_PROXY, "split a proxy's range");
	expect(xn_write(&px), ED_E_PROXY, "write a proxy back");
	expect(edc_mark_replacement(E, &px), ED_E_PROXY, "mark a proxy for replacement");
	expect(edc_xn_map(E, &px), ED_E_PROXY, "map a proxy");

	/* A proxy of the proxy: a subset again, no more rights. */
	struct ed_range rg2 = { S + 22, 6 };
	int64_t id2 = mkproxy(&px, &rg2, 1, ED_PROXY_READ, 410);
	check(id2 >= 0 && id2 != id, "a proxy of the proxy -> id %ld", (long)id2);
	struct ed_protector px2 = pproxy(id2, 410);
	struct ed_range wide = { S + 1, 12 };
	expect(mkproxy(&px, &wide, 1, ED_PROXY_READ, 410), ED_E_NOTSUBSET, "a proxy of it wider than it");
	expect(mkproxy(&px, &rg2, 1, ED_PROXY_WRITE, 410), ED_E_CAP, "a writable proxy of the read-only proxy");

	/* The origin shrinks: both are cut back at once. */
	expect(edc_extent_shrink(E, &ext, 8 * SECT), 0, "shrink the origin to 24 sectors");
	expect(io(&px, 0, S + 20, r, 4 * SECT), 0, "the proxy still reads S+20..23");
	expect(io(&px, 0, S + 24, r, SECT), ED_E_RANGE, "but no longer S+24");
	expect(io(&px2, 0, S + 22, r, 2 * SECT), 0, "the proxy's proxy still reads S+22..23");
	expect(io(&px2, 0, S + 24, r, SECT), ED_E_RANGE, "and no longer S+24 either");

	/* Ranges can be removed, with the proxy's own write capability. */
	struct ed_protector pxw = px;
	pxw.wc = cap(99);
	expect(edc_xn_remove(E, &pxw, 1), ED_E_CAP, "remove a range with a wrong write capability");
	expect(edc_xn_remove(E, &px, 1), 0, "remove its second range");
	expect(io(&px, 0, S + 20, r, SECT), ED_E_RANGE, "that range is gone");
	expect(io(&px2, 0, S + 22, r, SECT), ED_E_RANGE, "from the proxy's proxy too");
	expect(edc_xn_remove(E, &px, 1), ED_E_ENTRY, "remove it again");

	/* A writable proxy of an exonode; removing the origin's entry cuts it. */
	uint64_t X = area(1), XD = area(8);
	struct ed_protector xn = pxn(X, 0, 96, 430);
	expect(edc_xn_alloc(E, &xn), 0, "an exonode");
	expect(edc_xn_add_extent(E, &xn, -1, XD, 8 * SECT), 0, "with an 8-sector extent");
	struct ed_range xr = { XD + 2, 2 };
	int64_t id3 = mkproxy(&xn, &xr, 1, ED_PROXY_READ | ED_PROXY_WRITE, 420);
	check(id3 >= 0, "a writable proxy of 2 of its sectors -> id %ld", (long)id3);
	struct ed_protector px3 = pproxy(id3, 420);
	fill(w, 2 * SECT, XD + 2, 7);
	expect(io(&px3, 1, XD + 2, w, 2 * SECT), 0, "write through the proxy");
	memset(r, 0, sizeof r);
	expect(io(&xn, 0, XD + 2, r, 2 * SECT), 0, "read through the exonode");
	check(same(r, 2 * SECT, XD + 2, 7, false), "the proxy's write is there");
	expect(io(&px3, 1, XD + 4, w, SECT), ED_E_RANGE, "write just past the proxy's range");
	expect(edc_xn_remove(E, &xn, 0), 0, "remove the exonode's extent");
	expect(io(&px3, 0, XD + 2, r, SECT), ED_E_RANGE, "the proxy lost it too");
	expect(edc_xn_dealloc(E, &px3), 0, "deallocate the proxy");
	expect(edc_xn_dealloc(E, &px3), ED_E_NOPROXY, "deallocate it again");
	expect(edc_xn_dealloc(E, &xn), 0, "deallocate the exonode");

	/* A proxy made by another process ends with it. */
	char srcap[33], sstart[24];
	cap_fmt(srcap, &ext.rc);
	arg_u64(sstart, S);
	const char *args[] = { srcap, sstart, NULL };
	int st = child("proxy-maker", args);
	check(st >= 0x10000, "a child made a proxy of our extent and lent it to a grandchild -> id %d", st);
	if (st >= 0x10000) {
		struct ed_protector gone = pproxy(st, 410);
		expect(io(&gone, 0, S + 1, r, SECT), ED_E_NOPROXY, "once the child has exited its proxy is gone");
	}

	/* Deallocating the origin ends its proxies. */
	expect(edc_extent_dealloc(E, &ext), 0, "deallocate the origin");
	expect(io(&px, 0, S + 2, r, SECT), ED_E_NOPROXY, "its proxy is gone");
	expect(io(&px2, 0, S + 22, r, SECT), ED_E_NOPROXY, "and the proxy's proxy");
	expect(ext_write(&ext), 0, "write the deallocation back");
}

/* edtest child proxy-user ID RC WC START: the proxy covers START+1..10
 * read-only and was made with capabilities RC, WC. */
int c_proxy_user(int argc, char **argv)
{
	if (argc < 5)
		return 99;
	struct ed_protector px = pproxy(strtoll(argv[1], NULL, 10), 0);
	uint64_t S = strtoull(argv[4], NULL, 10);
	if (!cap_parse(argv[2], &px.rc) || !cap_parse(argv[3], &px.wc))
		return 98;
	static uint8_t r[4 * SECT];
	expect(io(&px, 0, S + 1, r, 4 * SECT), 0, "child: read through the lent proxy");
	check(same(r, 4 * SECT, S + 1, 6, false), "child: the lender's data");
	expect(io(&px, 1, S + 1, r, SECT), ED_E_CAP, "child: write through it");
	expect(io(&px, 0, S + 11, r, SECT), ED_E_RANGE, "child: read beyond it");
	struct ed_protector asext = pext(S, 0, 0);
	asext.rc = px.rc;
	expect(io(&asext, 0, S + 1, r, SECT), ED_E_CAP, "child: the proxy's capability on the extent itself");
	return (int)checks_failed();
}

/* edtest child proxy-maker RC START: make a read-only proxy of the extent
 * at START (we know its read capability RC), lend it to a grandchild, and
 * exit with the proxy's id so that the parent can see it is gone. */
int c_proxy_maker(int argc, char **argv)
{
	if (argc < 3)
		return 99;
	struct ed_protector ext = pext(strtoull(argv[2], NULL, 10), 0, 0);
	if (!cap_parse(argv[1], &ext.rc))
		return 98;
	uint64_t S = ext.blkno;
	struct ed_range rg = { S + 1, 10 };
	int64_t id = mkproxy(&ext, &rg, 1, ED_PROXY_READ, 410);
	check(id >= 0, "child: a proxy of someone else's extent, from its read capability -> %ld", (long)id);
	if (id < 0)
		return 1;
	lend_to_child(id, S);
	if (checks_failed() != 0 || id > 0x7fffffff)
		return 1;
	return (int)id;
}
