/*
 * largefile.c - exobench largefile: the large-file experiment of thesis
 * section 5.2.4 (Table A.3): one 80 MB file is allocated, written
 * sequentially in 64 KB requests, read sequentially in 64 KB requests,
 * written at random in 4 KB requests, read at random in 4 KB requests, and
 * deallocated, one request at a time, for the organizations Raw, Extent
 * and Exonode (unixfs's row is `exobench unixfs large`).
 *
 *   exobench largefile [-u UNIT] [-r RUNS] [-m MIB] [-k OPS] [-o raw,extent,exonode] [-c]
 *
 * MB here is MiB: the file is MIB x 2^20 bytes (default 80).  The random
 * phases visit OPS distinct 4 KB blocks in a random order (default: every
 * block of the file, as the thesis's "randomly write" the file; a new
 * order for each phase and run).  Throughput is reported in MB/s of 10^6
 * bytes, as docs/diskmodel.md and rawbench report it.
 *
 * All three organizations keep the data in the same sectors: the area's
 * first sector is the Extent's header (the Exonode's block; unused by
 * Raw), the file's bytes the sectors after it.  Allocation and
 * deallocation are durable when they end (the header or exonode block is
 * written back, a commit-log record); the data phases issue no flush for
 * any organization (the disk model has no write cache: a write is on the
 * platter when it completes).  Every block read is checked against what
 * was written last.
 *
 * -c, as the Linux comparison runs it (docs/linux-baseline.md): every phase
 * starts cold (the exodisk cache emptied of the unit's entries, not
 * timed: the first request through the header or exonode reads it back)
 * and the two writing phases end with a device flush, timed, so their data
 * is durable when the clock stops, as a file system's is after fsync.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"
#include "apps/rawlib.h"
#include "libos/exo.h"

#define SEQ_BYTES  (64u * 1024)
#define RAND_BYTES (4u * 1024)
#define NPHASE 6

enum { P_ALLOC, P_SEQW, P_SEQR, P_RANDW, P_RANDR, P_DEALLOC };
static const char *const phase_name[NPHASE] = { "alloc", "seqwrite", "seqread", "randwrite", "randread",
	                                         "dealloc" };

struct lf {
	uint64_t area;          /* header / block sector; data from area + 1 */
	uint64_t nblocks;       /* 4 KB blocks in the file                   */
	struct ed_cap rc, wc;
	struct ed_protector p;  /* the Extent's or the Exonode's protector   */
};

struct lforg {
	const char *name;
	int (*alloc)(struct lf *f);
	int (*io)(struct lf *f, int write, uint64_t off, void *buf, uint32_t bytes);
	int (*dealloc)(struct lf *f);
};

/* ---- Raw: no metadata ---------------------------------------------------- */
static int raw_none(struct lf *f) { return 0; }

static int raw_io(struct lf *f, int write, uint64_t off, void *buf, uint32_t bytes)
{
	return raw_sync(write ? RAW_WRITE : RAW_READ, f->area + 1 + off / ED_SECTOR, buf, bytes);
}

/* ---- Extent: one self-protected extent, header in the area's first sector */
static int ext_alloc(struct lf *f)
{
	f->p = edc_prot_extent(B.unit, f->area, &f->rc, &f->wc);
	f->p.length = (1 + f->nblocks * (RAND_BYTES / ED_SECTOR)) * ED_SECTOR;
	int64_t r = edc_extent_alloc(B.c, &f->p);
	return r != 0 ? (int)r : edc_extent_write_sync(B.c, &f->p);
}

/* After -c emptied the cache, the first use reads the metadata back. */
static int readin(struct lf *f)
{
	return f->p.kind == ED_PK_EXONODE ? edc_xn_read_sync(B.c, &f->p) : edc_extent_read_sync(B.c, &f->p);
}

static int ed_io(struct lf *f, int write, uint64_t off, void *buf, uint32_t bytes)
{
	int r = io_sync(&f->p, write, f->area + 1 + off / ED_SECTOR, buf, bytes);
	if (r == ED_E_NOTCACHED && (r = readin(f)) == 0)
		r = io_sync(&f->p, write, f->area + 1 + off / ED_SECTOR, buf, bytes);
	return r;
}

static int ext_dealloc(struct lf *f)
{
	int64_t r = edc_extent_dealloc(B.c, &f->p);
	if (r == ED_E_NOTCACHED && (r = readin(f)) == 0)
		r = edc_extent_dealloc(B.c, &f->p);
	return r != 0 ? (int)r : edc_extent_write_sync(B.c, &f->p);
}

/* ---- Exonode: one exonode (the area's first sector is its block) with one
 * extent entry covering the file. */
static int xn_alloc(struct lf *f)
{
	f->p = edc_prot_xn(B.unit, f->area, 0, &f->rc, &f->wc);
	f->p.length = ED_XN_HDR_BYTES + ED_XN_EXTENT_BYTES;
	int64_t r = edc_xn_alloc(B.c, &f->p);
	if (r == 0)
		r = edc_xn_add_extent(B.c, &f->p, 0, f->area + 1, f->nblocks * RAND_BYTES);
	return r < 0 ? (int)r : edc_xn_write_sync(B.c, &f->p);
}

static int xn_dealloc(struct lf *f)
{
	int64_t r = edc_xn_dealloc(B.c, &f->p);
	if (r == ED_E_NOTCACHED && (r = readin(f)) == 0)
		r = edc_xn_dealloc(B.c, &f->p);
	return r != 0 ? (int)r : edc_xn_write_sync(B.c, &f->p);
}

static const struct lforg orgs[] = {
	{ "raw", raw_none, raw_io, raw_none },
	{ "extent", ext_alloc, ed_io, ext_dealloc },
	{ "exonode", xn_alloc, ed_io, xn_dealloc },
};
#define NORGS (int)(sizeof orgs / sizeof orgs[0])

/* ---- the experiment -------------------------------------------------------- */
static uint8_t *buf;            /* SEQ_BYTES */
static uint32_t *order;         /* a permutation of the file's blocks */
static uint64_t ops;            /* blocks the random phases visit */
static uint64_t tag;            /* changes with every write pass */
static uint64_t written[2];     /* tag of the sequential pass, of the random one */
static uint8_t *rtag;           /* per block: 0 = sequential pass, 1 = random */

static void stamp_range(uint8_t *b, uint32_t bytes, uint64_t first_block)
{
	for (uint32_t o = 0; o < bytes; o += RAND_BYTES)
		stamp_block(b + o, tag, first_block + o / RAND_BYTES);
}

static uint64_t check_range(const uint8_t *b, uint32_t bytes, uint64_t first_block)
{
	uint64_t bad = 0;
	for (uint32_t o = 0; o < bytes; o += RAND_BYTES) {
		uint64_t k = first_block + o / RAND_BYTES;
		bad += !stamp_ok(b + o, written[rtag[k]], k);
	}
	return bad;
}

/* What a phase needs before the clock starts: a new tag for the writing
 * phases, and for the random ones an order that depends on the run and
 * the phase only, so that every organization visits the same blocks in
 * the same order. */
static void prepare(struct lf *f, int ph, int run)
{
	if (ph == P_RANDW || ph == P_RANDR) {
		uint64_t seed = large_order_seed(run, ph);
		shuffle(order, (uint32_t)f->nblocks, &seed);
	}
	if (ph == P_SEQW) {
		written[0] = ++tag;
		memset(rtag, 0, f->nblocks);
	}
	if (ph == P_RANDW)
		written[1] = ++tag;
}

/* One phase; returns 0 or an error; *moved gets the bytes transferred,
 * *nops the requests, *bad the blocks read back wrong. */
static int phase(const struct lforg *o, struct lf *f, int ph, bool flush, uint64_t *moved, uint64_t *nops,
                 uint64_t *bad)
{
	uint64_t fbytes = f->nblocks * RAND_BYTES;
	*moved = *nops = 0;
	int r = 0;
	switch (ph) {
	case P_ALLOC:
		r = o->alloc(f);
		break;
	case P_DEALLOC:
		r = o->dealloc(f);
		break;
	case P_SEQW:
	case P_SEQR:
		for (uint64_t off = 0; off < fbytes && r == 0; off += SEQ_BYTES) {
			uint32_t n = fbytes - off < SEQ_BYTES ? (uint32_t)(fbytes - off) : SEQ_BYTES;
			if (ph == P_SEQW)
				stamp_range(buf, n, off / RAND_BYTES);
			r = o->io(f, ph == P_SEQW, off, buf, n);
			if (r == 0 && ph == P_SEQR)
				*bad += check_range(buf, n, off / RAND_BYTES);
			*moved += n;
			++*nops;
		}
		break;
	default:
		for (uint64_t i = 0; i < ops && r == 0; i++) {
			uint64_t k = order[i];
			if (ph == P_RANDW) {
				stamp_block(buf, tag, k);
				rtag[k] = 1;
			}
			r = o->io(f, ph == P_RANDW, k * RAND_BYTES, buf, RAND_BYTES);
			if (r == 0 && ph == P_RANDR)
				*bad += check_range(buf, RAND_BYTES, k);
			*moved += RAND_BYTES;
			++*nops;
		}
	}
	if (r == 0 && flush && (ph == P_SEQW || ph == P_RANDW))
		r = o->io == raw_io ? raw_sync(RAW_FLUSH, 0, NULL, 0) : edc_flush(B.c, B.unit);
	return r;
}

static void usage(void)
{
	fprintf(stderr, "usage: exobench largefile [-u UNIT] [-r RUNS] [-m MIB] [-k OPS] [-o raw,extent,exonode] [-c]\n");
	exit(2);
}

int largefile_main(int argc, char **argv)
{
	int unit = 0, runs = 5;
	long mib = 80, kops = 0;
	const char *which = "raw,extent,exonode";
	bool cold = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0) {
			cold = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "-u") == 0)
			unit = (int)arg_num(argv[++i], usage);
		else if (strcmp(argv[i], "-r") == 0)
			runs = (int)arg_num(argv[++i], usage);
		else if (strcmp(argv[i], "-m") == 0)
			mib = arg_num(argv[++i], usage);
		else if (strcmp(argv[i], "-k") == 0)
			kops = arg_num(argv[++i], usage);
		else if (strcmp(argv[i], "-o") == 0)
			which = argv[++i];
		else
			usage();
	}
	if (runs < 1 || runs > BENCH_MAXRUNS || mib < 1 || mib > 1024)
		usage();
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("largefile: unit %d: %s\n", unit, err);
		return 1;
	}
	const struct lforg *use[NORGS];
	int nuse = 0;
	for (int k = 0; k < NORGS; k++) {
		if (strstr(which, orgs[k].name) == NULL)
			continue;
		if (k == 0 && !B.raw) {
			printf("largefile: the raw path is off (boot with rawio=1): no Raw row\n");
			continue;
		}
		use[nuse++] = &orgs[k];
	}
	if (nuse == 0)
		usage();

	struct lf f;
	memset(&f, 0, sizeof f);
	f.nblocks = (uint64_t)mib * (1 << 20) / RAND_BYTES;
	ops = kops > 0 && (uint64_t)kops < f.nblocks ? (uint64_t)kops : f.nblocks;
	uint64_t span = 1 + f.nblocks * (RAND_BYTES / ED_SECTOR);
	f.area = edc_fm_find(&B.fm, 0, span, 8);
	buf = malloc(SEQ_BYTES);
	order = malloc(f.nblocks * sizeof order[0]);
	rtag = malloc(f.nblocks);
	if (f.area == UINT64_MAX || buf == NULL || order == NULL || rtag == NULL) {
		printf("largefile: no room (%lu free sectors in a row, or memory)\n", (unsigned long)span);
		return 1;
	}
	for (int i = 0; i < 16; i++) {
		f.rc.w[i / 8] = f.rc.w[i / 8] * 131 + now();
		f.wc.w[i / 8] = f.wc.w[i / 8] * 137 + now() + 1;
	}
	emit_meta("largefile", runs);
	printf("largefile: one file of %ld MiB (%lu blocks of 4 KB) at sectors %lu-%lu of unit %d (%s); "
	       "random phases: %lu blocks; %d run%s\n", mib, (unsigned long)f.nblocks, (unsigned long)f.area,
	       (unsigned long)(f.area + span - 1), B.unit, B.dev, (unsigned long)ops, runs, runs > 1 ? "s" : "");

	static uint64_t ns[3][NPHASE][BENCH_MAXRUNS];
	for (int run = 0; run < runs; run++) {
		for (int k = 0; k < nuse; k++) {
			const struct lforg *o = use[k];
			for (int ph = 0; ph < NPHASE; ph++) {
				uint64_t moved, nops, bad = 0;
				prepare(&f, ph, run);
				int64_t left = cold ? bench_cold() : 0;
				if (left < 0) {
					printf("largefile: emptying the exodisk cache: %s\n", exo_strerror((int)left));
					return 1;
				}
				uint64_t r0 = disk_requests(), t0 = now();
				int r = phase(o, &f, ph, cold, &moved, &nops, &bad);
				uint64_t t = ns_since(t0);
				if (r != 0) {
					printf("largefile: %s %s: %s\n", o->name, phase_name[ph], exo_strerror(r));
					return 1;
				}
				if (bad) {
					printf("largefile: %s %s: %lu blocks read back wrong\n", o->name, phase_name[ph],
					       (unsigned long)bad);
					return 1;
				}
				ns[k][ph][run] = t;
				emit("\"bench\":\"largefile\",\"dev\":\"%s\",\"org\":\"%s\",\"phase\":\"%s\",\"run\":%d,"
				     "\"ns\":%lu,\"bytes\":%lu,\"ops\":%lu,\"file_bytes\":%lu,\"requests\":%lu,\"cold\":%d,"
				     "\"cache_left\":%ld",
				     B.dev, o->name, phase_name[ph], run, (unsigned long)t, (unsigned long)moved,
				     (unsigned long)nops, (unsigned long)(f.nblocks * RAND_BYTES),
				     (unsigned long)(disk_requests() - r0), cold ? 1 : 0, (long)left);
				char a[24];
				if (moved > 0)
					printf("  run %d %-8s %-9s %s MB/s\n", run + 1, o->name, phase_name[ph],
					       fmt_milli(a, sizeof a, moved * 1000000 / (t ? t : 1)));
				else
					printf("  run %d %-8s %-9s %s ms\n", run + 1, o->name, phase_name[ph], fmt_ms(a, sizeof a, t));
			}
			if (edc_fm_run(&B.fm, f.area, span) != span) {
				printf("largefile: %s left sectors allocated in the area\n", o->name);
				return 1;
			}
		}
	}

	printf("\nlarge file, %s (unit %d), %d run%s: MB/s (10^6 bytes) over the mean time [slowest-fastest run]; "
	       "allocate and deallocate in ms\n", B.dev, B.unit, runs, runs > 1 ? "s" : "");
	for (int k = 0; k < nuse; k++) {
		printf("  %-8s", use[k]->name);
		for (int ph = 0; ph < NPHASE; ph++) {
			struct summary s;
			summarize(ns[k][ph], runs, &s);
			char a[24], b[24];
			if (ph == P_ALLOC || ph == P_DEALLOC) {
				printf("  %s %s ms", phase_name[ph], fmt_ms(a, sizeof a, s.mean));
				continue;
			}
			uint64_t bytes = ph == P_SEQW || ph == P_SEQR ? f.nblocks * RAND_BYTES : ops * RAND_BYTES;
			/* MB/s in thousandths: bytes / ns * 1000 = MB/s; spread from the sd of times. */
			uint64_t rate = s.mean ? bytes * 1000000 / s.mean : 0;
			printf("  %s %s", phase_name[ph], fmt_milli(a, sizeof a, rate));
			uint64_t lo = s.max ? bytes * 1000000 / s.max : 0, hi = s.min ? bytes * 1000000 / s.min : 0;
			printf(" [%s-", fmt_milli(b, sizeof b, lo));
			printf("%s]", fmt_milli(a, sizeof a, hi));
		}
		printf("\n");
	}
	free(buf);
	free(order);
	free(rtag);
	return 0;
}
