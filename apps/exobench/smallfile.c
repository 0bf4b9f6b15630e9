/*
 * smallfile.c - exobench smallfile: the small-file experiments of thesis
 * section 5.2 (Tables A.1 and A.2): allocate and write, read, then
 * deallocate N files of S bytes, each file in one request, one at a time,
 * for the organizations Raw, Extent and Exonode (org_*.c) on the same data
 * sectors (org.h), and report the time per file.
 *
 *   exobench smallfile [-u UNIT] [-r RUNS] [-n FILES,... -s BYTES,...] [-o ORG,...] [-b BATCH] [-c]
 *
 * Without -n/-s both thesis experiments run: 1,000 x 10 KB and 10,000 x
 * 1 KB (KB = 1024 bytes); -n and -s give other experiments as two lists
 * of the same length.  Each run does every organization in turn, so all
 * share the boot and its noise; the table gives medians over the runs and
 * each organization's overhead against Raw.  The raw path needs rawio=1;
 * without it the Raw row (and the request counts, read from the raw path's
 * unit information) are left out.
 *
 * -c (cold), as the Linux comparison runs it (docs/linux-baseline.md):
 * before every phase, not timed, the exodisk cache is emptied of the
 * unit's entries (ED_OP_DROP_CACHE), so reads and deallocations start by
 * reading their metadata from the disk, as a file system's do after
 * Linux's drop_caches.  Without it, what the previous phase left cached
 * stays, as in the thesis.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"
#include "libos/exo.h"

#define MAXRUNS 16
#define NPHASE 3

static const char *const phase_name[NPHASE] = { "write", "read", "dealloc" };
static const char *const phase_title[NPHASE] = { "allocate+write", "read", "deallocate" };

struct cell {
	uint64_t ns[MAXRUNS];      /* the phase's total time in each run       */
	uint64_t reqs[MAXRUNS];    /* disk requests the unit accepted          */
	uint64_t calls[MAXRUNS];   /* system calls made                        */
	uint64_t readins[MAXRUNS]; /* synchronous read-ins of metadata         */
};

/* A file's last 8 bytes name it, so that a read of the wrong place shows. */
static void stamp(uint8_t *buf, uint64_t bytes, int i)
{
	uint64_t v = 0x5f11e000000000ull | (uint64_t)i;
	memcpy(buf + bytes - 8, &v, 8);
}

static int stamped(const uint8_t *buf, uint64_t bytes, int i)
{
	uint64_t v;
	memcpy(&v, buf + bytes - 8, 8);
	return v == (0x5f11e000000000ull | (uint64_t)i);
}

/* One phase of one organization: every file, then the phase's end. */
static int phase(const struct org *o, struct sf *s, int ph, struct cell *c, int run)
{
	uint64_t bytes = (uint64_t)s->L.fsect * ED_SECTOR;
	uint64_t r0 = disk_requests(), k0 = exo_kinfo()->syscalls, in0 = s->readins;
	uint64_t t0 = now();
	int bad = 0;
	for (int i = 0; i < s->L.nfiles; i++) {
		int r;
		if (ph == 0) {
			stamp(s->buf, bytes, i);
			r = o->write(s, i);
		} else if (ph == 1) {
			r = o->read(s, i);
			bad += r == 0 && !stamped(s->buf, bytes, i);
		} else {
			r = o->dealloc(s, i);
		}
		if (r != 0) {
			printf("smallfile: %s %s of file %d: %s\n", o->name, phase_name[ph], i, exo_strerror(r));
			return r;
		}
	}
	int r = ph == 0 ? o->write_end(s) : ph == 2 ? o->dealloc_end(s) : 0;
	c->ns[run] = ns_since(t0);
	c->reqs[run] = disk_requests() - r0;
	c->calls[run] = exo_kinfo()->syscalls - k0;
	c->readins[run] = s->readins - in0;
	if (r != 0) {
		printf("smallfile: %s: end of %s: %s\n", o->name, phase_name[ph], exo_strerror(r));
		return r;
	}
	if (bad) {
		printf("smallfile: %s: %d files read back wrong\n", o->name, bad);
		return -1;
	}
	return 0;
}

struct experiment {
	int nfiles;
	uint32_t bytes;
	const struct org *orgs[3];
	int norgs;
	int runs;
	int batch;          /* objects written back together (org.h)       */
	bool cold;          /* -c: empty the exodisk cache before each phase */
};

static void emit_run(const struct experiment *x, const struct org *o, int ph, const struct cell *c,
                     int run, int64_t left)
{
	emit("\"bench\":\"smallfile\",\"dev\":\"%s\",\"unit\":%d,\"files\":%d,\"bytes\":%u,\"batch\":%d,"
	     "\"org\":\"%s\",\"phase\":\"%s\",\"run\":%d,\"ns\":%lu,\"ns_per_file\":%lu,\"requests\":%lu,\"syscalls\":%lu,"
	     "\"readins\":%lu,\"cold\":%d,\"cache_left\":%ld",
	     B.dev, B.unit, x->nfiles, x->bytes, x->batch, o->name, phase_name[ph], run, (unsigned long)c->ns[run],
	     (unsigned long)(c->ns[run] / (uint64_t)x->nfiles), (unsigned long)c->reqs[run],
	     (unsigned long)c->calls[run], (unsigned long)c->readins[run], x->cold ? 1 : 0, (long)left);
}

/* The table: median ms per file [min-max], requests and calls per file, and
 * the overhead of the medians against Raw. */
static void report(const struct experiment *x, struct cell cells[][NPHASE], uint64_t med[][NPHASE])
{
	char a[24], b[24], c[24], d[24], e[24];
	int n = x->runs;
	printf("\n%d files of %u bytes, %s (unit %d), %d run%s: ms per file, median [min-max]; "
	       "disk requests and system calls per file\n", x->nfiles, x->bytes, B.dev, B.unit, n,
	       n > 1 ? "s" : "");
	int raw = -1;
	for (int k = 0; k < x->norgs; k++)
		if (x->orgs[k] == &org_raw)
			raw = k;
	for (int ph = 0; ph < NPHASE; ph++) {
		printf("  %-15s %-8s %22s %9s %9s %9s\n", phase_title[ph], "org", "ms/file", "req/file",
		       "calls/file", "vs raw");
		for (int k = 0; k < x->norgs; k++) {
			struct cell *cl = &cells[k][ph];
			uint64_t v[MAXRUNS], lo = UINT64_MAX, hi = 0;
			for (int r = 0; r < n; r++) {
				v[r] = cl->ns[r];
				lo = v[r] < lo ? v[r] : lo;
				hi = v[r] > hi ? v[r] : hi;
			}
			uint64_t m = median_u64(v, n), mean, sd;
			mean_sd(cl->ns, n, &mean, &sd);
			med[k][ph] = m;
			for (int r = 0; r < n; r++)
				v[r] = cl->reqs[r];
			uint64_t mreq = median_u64(v, n);
			for (int r = 0; r < n; r++)
				v[r] = cl->calls[r];
			uint64_t mcalls = median_u64(v, n);
			uint64_t nf = (uint64_t)x->nfiles;
			char vs[24] = "";
			int64_t pct10 = 0;
			/* Raw deallocates nothing (no metadata): no ratio there. */
			bool has_pct = raw >= 0 && k != raw && ph != 2 && med[raw][ph] > 0;
			if (has_pct) {
				pct10 = (int64_t)((m * 1000 + med[raw][ph] / 2) / med[raw][ph]) - 1000;
				snprintf(vs, sizeof vs, "%+ld.%ld%%", (long)(pct10 / 10),
				         (long)((pct10 < 0 ? -pct10 : pct10) % 10));
			}
			char range[56];
			snprintf(range, sizeof range, "%s [%s-%s]", fmt_ms(a, sizeof a, m / nf),
			         fmt_ms(b, sizeof b, lo / nf), fmt_ms(c, sizeof c, hi / nf));
			printf("  %-15s %-8s %22s %9s %9s %9s\n", "", x->orgs[k]->name, range,
			       fmt_milli(d, sizeof d, mreq * 1000 / nf), fmt_milli(e, sizeof e, mcalls * 1000 / nf), vs);
			emit("\"bench\":\"smallfile\",\"summary\":true,\"dev\":\"%s\",\"unit\":%d,\"files\":%d,"
			     "\"bytes\":%u,\"batch\":%d,\"org\":\"%s\",\"phase\":\"%s\",\"runs\":%d,\"median_ns_per_file\":%lu,"
			     "\"mean_ns_per_file\":%lu,\"sd_ns_per_file\":%lu,\"min_ns_per_file\":%lu,"
			     "\"max_ns_per_file\":%lu,\"requests_per_file_x1000\":%lu,\"syscalls_per_file_x1000\":%lu",
			     B.dev, B.unit, x->nfiles, x->bytes, x->batch, x->orgs[k]->name, phase_name[ph], n,
			     (unsigned long)(m / nf), (unsigned long)(mean / nf), (unsigned long)(sd / nf),
			     (unsigned long)(lo / nf), (unsigned long)(hi / nf), (unsigned long)(mreq * 1000 / nf),
			     (unsigned long)(mcalls * 1000 / nf));
			if (has_pct)
				emit("\"bench\":\"smallfile\",\"overhead\":true,\"dev\":\"%s\",\"files\":%d,\"bytes\":%u,"
				     "\"batch\":%d,\"org\":\"%s\",\"phase\":\"%s\",\"vs\":\"raw\",\"overhead_pct_x10\":%ld",
				     B.dev, x->nfiles, x->bytes, x->batch, x->orgs[k]->name, phase_name[ph], (long)pct10);
		}
	}
}

static int experiment(const struct experiment *x)
{
	static struct cell cells[3][NPHASE];
	static uint64_t med[3][NPHASE];
	struct sf s;
	memset(&s, 0, sizeof s);
	s.L.nfiles = x->nfiles;
	s.L.fsect = (x->bytes + ED_SECTOR - 1) / ED_SECTOR;
	s.L.xnlen = ED_XN_HDR_BYTES + ED_XN_EXTENT_BYTES;
	s.L.group = (int)((ED_SECTOR - ED_XNBLK_HDR_BYTES) / s.L.xnlen);
	uint64_t span = lay_span(&s.L);
	s.L.start = edc_fm_find(&B.fm, 0, span, 8);
	if (s.L.start == UINT64_MAX) {
		printf("smallfile: no %lu free sectors in a row\n", (unsigned long)span);
		return 1;
	}
	s.wb.batch = x->batch;
	s.buf = malloc((size_t)s.L.fsect * ED_SECTOR);
	memset(s.buf, 0x5a, (size_t)s.L.fsect * ED_SECTOR);
	for (int i = 0; i < 16; i++) {
		s.rc.w[i / 8] = s.rc.w[i / 8] * 131 + now();
		s.wc.w[i / 8] = s.wc.w[i / 8] * 137 + now() + 1;
	}
	printf("smallfile: %d files of %u bytes (%u sectors), %d per exonode sector, sectors %lu-%lu of unit %d "
	       "(%s), metadata written back %d at a time\n", x->nfiles, x->bytes, s.L.fsect, s.L.group,
	       (unsigned long)s.L.start, (unsigned long)(s.L.start + span - 1), B.unit, B.dev, x->batch);
	if (x->orgs[0] == &org_raw) {
		/* Durability costs flushes: how much one costs here explains
		 * much of the write-back overhead (the last request of each log
		 * record is written with FUA: write and flush). */
		uint64_t fl = raw_flush_ns(s.L.start, 16);
		char a[24];
		printf("smallfile: one flush after a one-sector write takes %s ms here (median of 16)\n",
		       fmt_ms(a, sizeof a, fl));
		emit("\"bench\":\"smallfile\",\"flush\":true,\"dev\":\"%s\",\"median_ns\":%lu", B.dev,
		     (unsigned long)fl);
	}
	memset(cells, 0, sizeof cells);
	for (int run = 0; run < x->runs; run++) {
		for (int k = 0; k < x->norgs; k++) {
			const struct org *o = x->orgs[k];
			for (int ph = 0; ph < NPHASE; ph++) {
				int64_t left = x->cold ? bench_cold() : 0;
				if (left < 0) {
					printf("smallfile: emptying the exodisk cache: %s\n", exo_strerror((int)left));
					return 1;
				}
				if (phase(o, &s, ph, &cells[k][ph], run) != 0)
					return 1;
				emit_run(x, o, ph, &cells[k][ph], run, left);
			}
			if (edc_fm_run(&B.fm, s.L.start, span) != span) {
				printf("smallfile: %s left sectors allocated in the area\n", o->name);
				return 1;
			}
			char a[24], b[24], c[24];
			uint64_t nf = (uint64_t)x->nfiles;
			printf("  run %d %-8s write %s  read %s  dealloc %s ms/file\n", run + 1, o->name,
			       fmt_ms(a, sizeof a, cells[k][0].ns[run] / nf), fmt_ms(b, sizeof b, cells[k][1].ns[run] / nf),
			       fmt_ms(c, sizeof c, cells[k][2].ns[run] / nf));
		}
	}
	report(x, cells, med);
	free(s.buf);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: exobench smallfile [-u UNIT] [-r RUNS] [-n FILES,... -s BYTES,...] "
	                "[-o raw,extent,exonode] [-b BATCH] [-c]\n");
	exit(2);
}

int smallfile_main(int argc, char **argv)
{
	int unit = 0, runs = 5, batch = 32;
	long nfiles[4] = { 1000, 10000 }, bytes[4] = { 10240, 1024 };
	int nn = 2, nb = 2;
	const char *orgs = "raw,extent,exonode";
	bool cold = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0) {
			cold = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "-u") == 0)
			unit = atoi(argv[++i]);
		else if (strcmp(argv[i], "-r") == 0)
			runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "-n") == 0)
			nn = num_list(argv[++i], nfiles, 4);
		else if (strcmp(argv[i], "-s") == 0)
			nb = num_list(argv[++i], bytes, 4);
		else if (strcmp(argv[i], "-o") == 0)
			orgs = argv[++i];
		else if (strcmp(argv[i], "-b") == 0)
			batch = atoi(argv[++i]);
		else
			usage();
	}
	if (runs < 1 || runs > MAXRUNS || batch < 1 || batch > WB_RING || nn < 1 || nn != nb)
		usage();
	for (int k = 0; k < nn; k++)
		if (nfiles[k] < 1 || nfiles[k] > 100000 || bytes[k] < 8 || bytes[k] > 64 * ED_SECTOR)
			usage();
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("smallfile: unit %d: %s\n", unit, err);
		return 1;
	}
	emit_meta("smallfile", runs);
	struct experiment x;
	memset(&x, 0, sizeof x);
	x.runs = runs;
	x.batch = batch;
	x.cold = cold;
	const struct org *all[3] = { &org_raw, &org_extent, &org_exonode };
	for (int k = 0; k < 3; k++) {
		if (strstr(orgs, all[k]->name) == NULL)
			continue;
		if (all[k] == &org_raw && !B.raw) {
			printf("smallfile: the raw path is off (boot with rawio=1): no Raw row\n");
			continue;
		}
		x.orgs[x.norgs++] = all[k];
	}
	if (x.norgs == 0)
		usage();
	for (int k = 0; k < nn; k++) {
		x.nfiles = (int)nfiles[k];
		x.bytes = (uint32_t)bytes[k];
		if (experiment(&x) != 0)
			return 1;
	}
	return 0;
}
