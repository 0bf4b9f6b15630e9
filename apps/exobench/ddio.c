/*
 * ddio.c - exobench ddio: disk-directed I/O (thesis section 5.4.2, Figure
 * 5-6), built on the reusable libOS library libos/ddio.h.
 *
 * A list of N random sectors of a 122 MB self-protected extent is read
 * and each sector "processed" (copied to another buffer and checked);
 * lists follow one another until TOTAL sectors (default 10,240) are done:
 *
 *   sync   one read at a time, in list order (ddio_run with one slot:
 *          issue, wait, process)
 *   ddio   all N reads of a list started at once and processed in the
 *          order they complete (ddio_run with N slots)
 *
 *   exobench ddio [-u UNIT] [-r RUNS] [-t TOTAL] [-m MIB] [-N 1,2,4,...]
 *
 * Both modes read the same lists, so they differ only in how the reads
 * are issued; the result is requests per second.  N defaults to 1, 2, 4,
 * ..., 128 (the kernel keeps at most 128 exodisk operations in flight).
 * MB is MiB; the extent's header sector is never read, and its header
 * stays in the exodisk cache, so every read is one disk request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"
#include "libos/ddio.h"
#include "libos/exo.h"

#define MAXN 128
#define MAXNS 16
#define WCHUNK (1u << 20)

static struct ed_protector xp;
static uint64_t first, nsect;           /* the extent's first sector and length */
static uint64_t tag;
static uint8_t (*sbuf)[ED_SECTOR];      /* one sector per request of a list  */
static uint8_t out[ED_SECTOR];          /* where processing copies to        */
static uint64_t bad;

static int process(void *ctx, const struct ddio_req *r, int32_t result)
{
	if (result != 0)
		return result;
	memcpy(out, r->mem, ED_SECTOR);
	bad += !stamp_ok(out, tag, r->blkno);
	return 0;
}

/* Write every sector of the extent but the header's with its stamp. */
static int fill(void)
{
	uint8_t *b = malloc(WCHUNK);
	if (b == NULL)
		return ED_E_NOMEM;
	int r = 0;
	for (uint64_t s = first + 1; s < first + nsect && r == 0; s += WCHUNK / ED_SECTOR) {
		uint64_t n = first + nsect - s < WCHUNK / ED_SECTOR ? first + nsect - s : WCHUNK / ED_SECTOR;
		for (uint64_t k = 0; k < n; k++)
			stamp_block(b + k * ED_SECTOR, tag, s + k);
		r = io_sync(&xp, 1, s, b, n * ED_SECTOR);
	}
	free(b);
	return r;
}

static void usage(void)
{
	fprintf(stderr, "usage: exobench ddio [-u UNIT] [-r RUNS] [-t TOTAL] [-m MIB] [-N N,N,...]\n");
	exit(2);
}

int ddio_main(int argc, char **argv)
{
	int unit = 0, runs = 5, nn = 0;
	long total = 10240, mib = 122;
	int ns_list[MAXNS];
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i++];
		if (strcmp(o, "-N") == 0) {
			for (char *q = argv[i]; *q;) {
				char *end;
				long v = strtol(q, &end, 10);
				if (end == q || v < 1 || v > MAXN || nn == MAXNS || (*end != ',' && *end != 0))
					usage();
				ns_list[nn++] = (int)v;
				q = *end == ',' ? end + 1 : end;
			}
			continue;
		}
		long v = arg_num(argv[i], usage);
		if (strcmp(o, "-u") == 0)
			unit = (int)v;
		else if (strcmp(o, "-r") == 0)
			runs = (int)v;
		else if (strcmp(o, "-t") == 0)
			total = v;
		else if (strcmp(o, "-m") == 0)
			mib = v;
		else
			usage();
	}
	if (nn == 0)
		for (int v = 1; v <= MAXN; v *= 2)
			ns_list[nn++] = v;
	if (runs < 1 || runs > BENCH_MAXRUNS || total < 1 || mib < 1 || mib > 1024)
		usage();
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("ddio: unit %d: %s\n", unit, err);
		return 1;
	}
	nsect = (uint64_t)mib * (1 << 20) / ED_SECTOR;
	first = edc_fm_find(&B.fm, 0, nsect, 8);
	sbuf = malloc(MAXN * ED_SECTOR);
	struct ddio_req *list = malloc(MAXN * sizeof *list);
	static struct ddio_slot slots[MAXN];
	if (first == UINT64_MAX || sbuf == NULL || list == NULL) {
		printf("ddio: no room (%lu free sectors in a row, or memory)\n", (unsigned long)nsect);
		return 1;
	}
	struct ed_cap rc, wc;
	memset(&rc, 0, sizeof rc);
	memset(&wc, 0, sizeof wc);
	for (int i = 0; i < 16; i++) {
		rc.w[i / 8] = rc.w[i / 8] * 131 + now();
		wc.w[i / 8] = wc.w[i / 8] * 137 + now() + 1;
	}
	xp = edc_prot_extent(unit, first, &rc, &wc);
	xp.length = nsect * ED_SECTOR;
	tag = 0xdd10000000ull + now();
	int64_t r = edc_extent_alloc(B.c, &xp);
	if (r == 0)
		r = edc_extent_write_sync(B.c, &xp);
	uint64_t t0 = now();
	if (r == 0)
		r = fill();
	if (r != 0) {
		printf("ddio: setting up the extent: %s\n", exo_strerror((long)r));
		return 1;
	}
	emit_meta("ddio", runs);
	char a[24];
	printf("ddio: %ld MiB extent at sectors %lu-%lu of unit %d (%s), written in %s ms; %ld random one-sector "
	       "reads per measurement; %d run%s\n", mib, (unsigned long)first, (unsigned long)(first + nsect - 1), unit,
	       B.dev, fmt_ms(a, sizeof a, ns_since(t0)), total, runs, runs > 1 ? "s" : "");
	if (!(edc_in_cache(B.c, &xp) & ED_IC_CACHED) && edc_extent_read_sync(B.c, &xp) != 0) {
		printf("ddio: the extent's header cannot be read in\n");
		return 1;
	}

	static uint64_t res[MAXNS][2][BENCH_MAXRUNS];
	static const char *const mode[2] = { "sync", "ddio" };
	for (int run = 0; run < runs; run++)
		for (int k = 0; k < nn; k++) {
			int n = ns_list[k];
			for (int m = 0; m < 2; m++) {
				uint64_t seed = 0xdd105eedull + (uint64_t)run * 1000 + (uint64_t)n;  /* same lists */
				struct ddio d;
				ddio_init(&d, B.c, slots, m == 0 ? 1 : n);
				bad = 0;
				uint64_t t = 0, done = 0;
				while (done < (uint64_t)total) {
					int cnt = (uint64_t)total - done < (uint64_t)n ? (int)((uint64_t)total - done) : n;
					for (int j = 0; j < cnt; j++) {
						list[j].prot = &xp;
						list[j].write = 0;
						list[j].blkno = first + 1 + rnd(&seed) % (nsect - 1);
						list[j].mem = sbuf[j];
						list[j].bytes = ED_SECTOR;
						list[j].tag = NULL;
					}
					uint64_t t1 = now();
					int32_t e = ddio_run(&d, list, cnt, process, NULL);
					t += now() - t1;
					if (e != 0) {
						printf("ddio: %s N=%d: %s\n", mode[m], n, exo_strerror(e));
						return 1;
					}
					done += (uint64_t)cnt;
				}
				if (bad) {
					printf("ddio: %s N=%d: %lu sectors read back wrong\n", mode[m], n, (unsigned long)bad);
					return 1;
				}
				uint64_t tns = exo_time_to_ns(t);
				res[k][m][run] = tns;
				uint64_t rate = tns ? (uint64_t)total * 1000000000000ull / tns : 0;   /* thousandths */
				printf("  run %d N=%-3d %-4s %s requests/s\n", run + 1, n, mode[m], fmt_milli(a, sizeof a, rate));
				emit("\"bench\":\"ddio\",\"dev\":\"%s\",\"n\":%d,\"mode\":\"%s\",\"run\":%d,\"ns\":%lu,\"reads\":%ld,"
				     "\"sleeps\":%lu,\"retries\":%lu", B.dev, n, mode[m], run, (unsigned long)tns, total,
				     (unsigned long)d.sleeps, (unsigned long)d.retries);
			}
		}
	printf("\ndisk-directed I/O, %s: requests per second over the mean time; gain of ddio over sync\n", B.dev);
	for (int k = 0; k < nn; k++) {
		struct summary s0, s1;
		summarize(res[k][0], runs, &s0);
		summarize(res[k][1], runs, &s1);
		uint64_t r0 = s0.mean ? (uint64_t)total * 1000000000000ull / s0.mean : 0;
		uint64_t r1 = s1.mean ? (uint64_t)total * 1000000000000ull / s1.mean : 0;
		char b[24];
		printf("  N=%-3d sync %10s  ddio %10s  %+ld%%\n", ns_list[k], fmt_milli(a, sizeof a, r0),
		       fmt_milli(b, sizeof b, r1), r0 ? (long)((int64_t)(r1 * 100 / r0) - 100) : 0L);
	}
	r = edc_extent_dealloc(B.c, &xp);
	if (r == 0)
		r = edc_extent_write_sync(B.c, &xp);
	if (r != 0) {
		printf("ddio: deallocating the extent: %s\n", exo_strerror((long)r));
		return 1;
	}
	return 0;
}
