/*
 * reqcost.c - exobench reqcost: what one exodisk_request costs when it does
 * no disk I/O, against a trivial system call (getpid).
 *
 *   exobench reqcost [-u UNIT] [-n CALLS]
 *
 * Calls measured (the extent's header and the exonode's block are cached):
 *   getpid          the trivial system call
 *   poll            ED_OP_POLL: the exodisk's entry and exit, no object
 *   in-cache        ED_OP_IN_CACHE: one cache lookup
 *   io-extent-cap   ED_OP_IO read of one sector of a cached extent with a
 *                   wrong read capability: copy-in of the three structures,
 *                   pinning of the buffer and result word, argument checks,
 *                   cache lookup, capability check (fails), unpinning
 *   io-exonode-cap  the same through a cached exonode
 *   read-data       ED_OP_EXONODE_READ_DATA of 8 bytes with the right read
 *                   capability: a capability check that succeeds, no I/O
 *
 * Each call is timed alone with rdcycle (the median of CALLS), and in
 * batches of 100 with rdtime (the median batch, per call: rdtime's 100 ns
 * resolution is too coarse for one call).  What rdcycle counts depends on
 * QEMU: with -icount (DISK=model) it counts executed instructions, without
 * it the host's cycles; the rate printed first tells which.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "libos/exo.h"
#include "libos/sys.h"

#define BATCH 100

static struct ed_protector ext, xn, ext_bad, xn_bad;
static uint64_t ext_target, xn_target;      /* a sector each covers */
static uint8_t sector[ED_SECTOR] __attribute__((aligned(ED_SECTOR)));
static volatile int32_t word;

static int64_t c_getpid(void) { return sys_getpid(); }
static int64_t c_poll(void) { return sys_call4(SYS_exodisk_request, ED_OP_POLL, 0, 0, 0); }
static int64_t c_in_cache(void) { return sys_call4(SYS_exodisk_request, ED_OP_IN_CACHE, &ext, 0, 0); }

static int64_t io_with(struct ed_protector *p, uint64_t target)
{
	struct ed_buf b;
	memset(&b, 0, sizeof b);
	b.b_flags = ED_B_READ;
	b.b_dev = p->unit;
	b.b_blkno = target;
	b.b_bcount = ED_SECTOR;
	b.b_memaddr = (uint64_t)(uintptr_t)sector;
	b.b_resptr = (uint64_t)(uintptr_t)&word;
	return sys_call4(SYS_exodisk_request, ED_OP_IO, p, &b, 0);
}

static int64_t c_io_extent(void) { return io_with(&ext_bad, ext_target); }
static int64_t c_io_exonode(void) { return io_with(&xn_bad, xn_target); }

static int64_t c_read_data(void)
{
	uint64_t v;
	struct ed_operation s = { .buf = (uint64_t)(uintptr_t)&v, .one = 8 };
	return sys_call4(SYS_exodisk_request, ED_OP_EXONODE_READ_DATA, &xn, 0, &s);
}

static const struct {
	const char *name;
	int64_t (*call)(void);
	int64_t want;
} calls[] = {
	{ "getpid", c_getpid, -1 },
	{ "poll", c_poll, 0 },
	{ "in-cache", c_in_cache, -1 },
	{ "io-extent-cap", c_io_extent, ED_E_CAP },
	{ "io-exonode-cap", c_io_exonode, ED_E_CAP },
	{ "read-data", c_read_data, 8 },
};

static int setup(void)
{
	uint64_t S = edc_fm_find(&B.fm, 0, 8, 1);
	struct ed_cap rc = { { now(), 1 } }, wc = { { now(), 2 } }, bad = { { 3, 3 } };
	ext = edc_prot_extent(B.unit, S, &rc, &wc);
	ext.length = 2 * ED_SECTOR;
	xn = edc_prot_xn(B.unit, S + 2, 0, &rc, &wc);
	xn.length = 96;
	uint64_t v = 42;
	if (edc_extent_alloc(B.c, &ext) != 0 || edc_xn_alloc(B.c, &xn) != 0 ||
	    edc_xn_add_extent(B.c, &xn, 0, S + 4, 2 * ED_SECTOR) != 0 || edc_xn_add_data(B.c, &xn, 1, &v, 8) != 1)
		return -1;
	ext_bad = ext;
	ext_bad.rc = bad;
	xn_bad = xn;
	xn_bad.rc = bad;
	xn.xn_entry = 1;                 /* READ_DATA reads entry 1 */
	ext_target = S + 1;
	xn_target = S + 4;
	return 0;
}

int reqcost_main(int argc, char **argv)
{
	int unit = 0, n = 20000;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-u") == 0)
			unit = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-n") == 0)
			n = atoi(argv[i + 1]);
	}
	if (n < BATCH || n > 200000) {
		fprintf(stderr, "usage: exobench reqcost [-u UNIT] [-n CALLS (%d..200000)]\n", BATCH);
		return 2;
	}
	const char *err = bench_open(unit);
	if (err != NULL || setup() != 0) {
		printf("reqcost: unit %d: %s\n", unit, err ? err : "cannot set up the extent and exonode");
		return 1;
	}
	emit_meta("reqcost", 1);

	/* What rdcycle counts: its rate against rdtime over 20 ms of work. */
	uint64_t c0 = cycles(), t0 = now();
	while (ns_since(t0) < 20000000)
		;
	uint64_t rate = (cycles() - c0) * 1000 / ns_since(t0);     /* cycles per ns, x1000 */
	char a[24], b[24];
	printf("reqcost: rdcycle counts %s per nanosecond (rdtime: %lu Hz, %lu ns per tick), %d calls each\n",
	       fmt_milli(a, sizeof a, rate), (unsigned long)B.hz, (unsigned long)(1000000000 / B.hz), n);
	emit("\"bench\":\"reqcost\",\"dev\":\"%s\",\"cycles_per_ns_x1000\":%lu,\"timebase_hz\":%lu", B.dev,
	     (unsigned long)rate, (unsigned long)B.hz);

	uint64_t *cyc = malloc(sizeof(uint64_t) * (size_t)n), *bat = malloc(sizeof(uint64_t) * (size_t)(n / BATCH));
	uint64_t gp_cyc = 0, gp_ns = 0;
	printf("  %-16s %14s %14s %14s %12s\n", "call", "median cycles", "min cycles", "ns per call", "vs getpid");
	for (size_t k = 0; k < sizeof calls / sizeof calls[0]; k++) {
		for (int i = 0; i < 1000; i++)          /* warm up caches and the TLB */
			calls[k].call();
		int64_t r = calls[k].call();
		if (calls[k].want != -1 && r != calls[k].want) {
			printf("reqcost: %s returned %ld (%s), expected %ld\n", calls[k].name, (long)r, exo_strerror(r),
			       (long)calls[k].want);
			return 1;
		}
		for (int i = 0; i < n; i++) {
			uint64_t x = cycles();
			calls[k].call();
			cyc[i] = cycles() - x;
		}
		for (int i = 0; i < n / BATCH; i++) {
			uint64_t t = now();
			for (int j = 0; j < BATCH; j++)
				calls[k].call();
			bat[i] = ns_since(t);
		}
		uint64_t mc = median_u64(cyc, n), lo = cyc[0];
		uint64_t mns = median_u64(bat, n / BATCH) * 1000 / BATCH;       /* ns x 1000 per call */
		if (k == 0) {
			gp_cyc = mc;
			gp_ns = mns;
		}
		printf("  %-16s %14lu %14lu %14s %11s\n", calls[k].name, (unsigned long)mc, (unsigned long)lo,
		       fmt_milli(a, sizeof a, mns), gp_cyc ? fmt_milli(b, sizeof b, mc * 1000 / gp_cyc) : "-");
		emit("\"bench\":\"reqcost\",\"dev\":\"%s\",\"call\":\"%s\",\"calls\":%d,\"median_cycles\":%lu,"
		     "\"min_cycles\":%lu,\"median_ns_per_call_x1000\":%lu,\"vs_getpid_x1000\":%lu",
		     B.dev, calls[k].name, n, (unsigned long)mc, (unsigned long)lo, (unsigned long)mns,
		     (unsigned long)(gp_cyc ? mc * 1000 / gp_cyc : 0));
	}
	(void)gp_ns;
	free(cyc);
	free(bat);
	return 0;
}
