/*
 * t_exit.c - a process that exits with I/O in flight (and holding dirty
 * cache entries, an exonode map and a proxy): the kernel keeps running,
 * every page comes back (kinfo->free_pages), its uncommitted allocations
 * are undone, a late completion never lands on sectors that changed hands,
 * and another application's data is untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

#define CSECT 4096                 /* the child's extent: 2 MiB */
#define CHUNK (512 * 1024)         /* its writes */
#define NW 64                      /* at most this many */
#define NR 16                      /* and reads of 32 KB */

static bool pages_back(void *arg)
{
	return pages_free() == *(uint64_t *)arg;
}

static bool freed(void *arg)
{
	return all_free(((uint64_t *)arg)[0], ((uint64_t *)arg)[1]);
}

void t_exit_inflight(void)
{
	static uint8_t mine[8 * SECT], r[8 * SECT];
	uint64_t P = area(8), C = area(CSECT), CX = area(1), CXD = area(64);
	struct ed_protector p = pext(P, 8 * SECT, 1300);
	expect(edc_extent_alloc(E, &p), 0, "our extent");
	fill(mine, sizeof mine, P, 41);
	expect(io(&p, 1, P, mine, sizeof mine), 0, "with our data");
	expect(ext_write(&p), 0, "written back");

	char a[3][24];
	uint64_t v[3] = { C, CX, CXD };
	const char *args[5];
	for (int i = 0; i < 3; i++) {
		snprintf(a[i], sizeof a[i], "%lu", (unsigned long)v[i]);
		args[i] = a[i];
	}
	const char *strict = pileup_certain() ? "strict" : "lenient";
	args[3] = strict;
	args[4] = NULL;
	for (int round = 0; round < 2; round++) {
		uint64_t free0 = pages_free();
		int st = child("exit-inflight", args);
		expect(st, 0, "round %d: a child exits with I/O in flight", round + 1);
		check(wait_until(pages_back, &free0, 20000), "every page came back (%lu free, %lu before)",
		      (unsigned long)pages_free(), (unsigned long)free0);
		uint64_t span[2] = { C, CSECT };
		check(wait_until(freed, span, 20000), "its uncommitted extent's sectors are free again");
		span[0] = CX;
		span[1] = 1;
		bool xfree = freed(span);
		span[0] = CXD;
		span[1] = 64;
		check(xfree && freed(span), "so are its exonode block and extent");
	}

	/* Sectors that changed hands get no late writes. */
	struct ed_protector q = pext(C, CSECT * SECT, 1310);
	expect(edc_extent_alloc(E, &q), 0, "we allocate the child's old sectors");
	static uint8_t big[CSECT * SECT];
	fill(big, sizeof big, C, 42);
	expect(edc_write(E, &q, C, big, sizeof big), 0, "and write them");
	memset(big, 0, sizeof big);
	expect(edc_read(E, &q, C, big, sizeof big), 0, "read them back");
	check(same(big, sizeof big, C, 42, true), "they hold our data only");
	expect(edc_extent_dealloc(E, &q), 0, "give them back");

	memset(r, 0, sizeof r);
	expect(io(&p, 0, P, r, sizeof r), 0, "read our extent");
	check(same(r, sizeof r, P, 41, true), "our data is untouched");
	expect(edc_extent_dealloc(E, &p), 0, "deallocate it");
	expect(ext_write(&p), 0, "write back");
}

/* edtest child exit-inflight C CX CXD strict|lenient: allocate, map, lend,
 * queue lots of I/O (writes until 16 are pending, or 64 of them) and exit
 * without waiting for any of it.  "strict": something must still be in
 * flight at the exit (see pileup_certain). */
int c_exit_inflight(int argc, char **argv)
{
	if (argc < 5)
		return 99;
	bool strict = strcmp(argv[4], "strict") == 0;
	uint64_t C = strtoull(argv[1], NULL, 10), CX = strtoull(argv[2], NULL, 10);
	uint64_t CXD = strtoull(argv[3], NULL, 10);
	static uint8_t buf[CHUNK];
	static volatile int32_t w[NW + NR];
	struct ed_protector c = pext(C, CSECT * SECT, 1400);
	struct ed_protector x = pxn(CX, 0, 96, 1410);
	int ok = edc_extent_alloc(E, &c) == 0;
	ok += edc_xn_alloc(E, &x) == 0;
	ok += edc_xn_add_extent(E, &x, -1, CXD, 64 * SECT) == 0;
	ok += edc_xn_map(E, &x) > 0;
	struct ed_range rg = { C + 1, 8 };
	struct ed_cap rc = cap(1420), wc = cap(1421);
	ok += edc_xn_proxy(E, &c, &rg, 1, ED_PROXY_READ, &rc, &wc) >= 0;
	int q = 0, n = 0;
	for (; n < NW && edc_pending(E) < 16; n++)
		q += edc_io(E, &c, 1, C + (uint64_t)(n % (CSECT / (CHUNK / SECT))) * (CHUNK / SECT), buf, CHUNK,
		            &w[n]) == 0;
	for (int i = 0; i < NR; i++, n++)
		q += edc_io(E, &x, 0, CXD, buf, 32 * 1024, &w[n]) == 0;
	int64_t pending = edc_pending(E);
	/* A fast device on a busy host can finish all of it while this process
	 * waits for the CPU (the device runs in its own host thread), so where
	 * something must be in flight, keep one more write going until a look
	 * finds one pending: every word is done then, so any can be reused. */
	for (int more = 0; strict && pending == 0 && more < 256; more++, n++) {
		q += edc_io(E, &c, 1, C, buf, CHUNK, &w[more % NW]) == 0;
		pending = edc_pending(E);
	}
	printf("   child: %d operations queued, %ld pending at exit\n", q, (long)pending);
	return ok == 5 && q == n && (pending > 0 || !strict) ? 0 : 1;
}
