/*
 * interleave.c - exobench interleave: fine-grained interleaving (thesis
 * section 5.3, Table A.4).  Two applications - two processes - run at the
 * same time, each with FILES files of 10 KB as exonodes (a group's
 * exonodes in one sector followed by the group's data, org.h), and each
 * in turn allocates and writes its files in order, reads them in order,
 * writes them in a random order, reads them in a random order, and
 * deallocates them in order.  Layouts of the two applications' areas:
 *
 *   partitioned   each area contiguous, the second starting GAP MiB
 *                 (default 250) after the first
 *   neighboring   each area contiguous, the second right after the first
 *   interleaved   one group of one application, then one of the other
 *
 *   exobench interleave [-u UNIT] [-r RUNS] [-n FILES] [-g GAP_MIB] [-l LAYOUT,...]
 *
 * As in the thesis, the sequential phases issue the requests of a whole
 * group (six files here, ten there) at once and then wait for them; the
 * random phases do one file at a time.  The two processes meet at a
 * barrier before each phase (a flag sector each allocates, seen by the
 * other in the exported free map: no system call, no shared memory), so
 * both always work on the same phase; each times its own phases.  The
 * exonode blocks are written back 32 at a time, and each phase that
 * changes them ends when they are durable.
 *
 * Both applications' exonode blocks (2 x 167 for 1,000 files each) must
 * fit in the exodisk cache, as the thesis's 200 did in its 281 entries:
 * `make bench` boots this experiment with edcache=467.  Blocks that were
 * replaced anyway are read back in (counted as readins).
 *
 * The parent starts the two applications (`exobench interleave -A ...`,
 * an internal form) once per layout and run, waits until both have raised
 * their "done" flags, and ends them.  Each application prints its own
 * lines; `make bench`'s report averages the two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"
#include "libos/exo.h"

#define FILE_BYTES 10240u
#define NPHASE 5

enum { P_SEQW, P_SEQR, P_RANDW, P_RANDR, P_DEALLOC };
static const char *const phase_name[NPHASE] = { "seqwrite", "seqread", "randwrite", "randread", "dealloc" };
static const char *const layouts[3] = { "partitioned", "neighboring", "interleaved" };

/* ---- one application -------------------------------------------------------- */

static struct sf s;
static int app;
static uint64_t flags;                   /* barrier flag sectors: 2 per phase */

static struct ed_protector xprot(int i)
{
	struct ed_protector p = edc_prot_xn(B.unit, lay_block(&s.L, i / s.L.group),
	                                    (uint16_t)(i % s.L.group), &s.rc, &s.wc);
	p.length = s.L.xnlen;
	return p;
}

/* Flag sectors, from `flags`: two per phase (one per application), then
 * each application's "done" and "failed".  A flag is raised by allocating
 * its sector, never written back, and seen by anyone in the exported free
 * map.  It stays up until its process exits - which is why an application
 * does not exit when it is done, but waits for the parent to end it: had
 * it exited, its last flag could vanish before the other saw it. */
#define F_DONE 10
#define F_FAIL 12

static int raise_flag(int k)
{
	struct ed_protector p = edc_prot_extent(B.unit, flags + (uint64_t)k, &s.rc, &s.wc);
	p.length = ED_SECTOR;
	return (int)edc_extent_alloc(B.c, &p);
}

/* Meet the other application before phase k: raise our flag, wait for
 * theirs (sleeping: a spinning wait would take the CPU from the other). */
static int barrier(int k)
{
	int r = raise_flag(2 * k + app);
	if (r != 0)
		return r;
	while (!edc_fm_test(&B.fm, flags + 2 * (uint64_t)k + (uint64_t)(1 - app)))
		exo_sleep_ns(1000000);
	return 0;
}

/* Do one exodisk call for file i; if its block left the cache, read the
 * block in and try again. */
static int64_t cached(int i, int64_t (*op)(int i, void *arg), void *arg)
{
	int64_t r = op(i, arg);
	if (r == ED_E_NOTCACHED) {
		struct ed_protector p = xprot(i);
		s.readins++;
		r = edc_xn_read_sync(B.c, &p);
		if (r == 0)
			r = op(i, arg);
	}
	return r;
}

static uint8_t *bufs;                    /* one file's buffer per group member */

/* Start file i's transfer, to or from its group member's buffer. */
struct xfer {
	int write;
	volatile int32_t *word;
};

static uint8_t *fbuf(int i)
{
	return bufs + (size_t)(i % s.L.group) * FILE_BYTES;
}

static int64_t start_io(int i, void *arg)
{
	struct xfer *x = arg;
	struct ed_protector p = xprot(i);
	return edc_io(B.c, &p, x->write, lay_data(&s.L, i), fbuf(i), FILE_BYTES, x->word);
}

static int64_t do_dealloc(int i, void *arg)
{
	struct ed_protector p = xprot(i);
	return edc_xn_dealloc(B.c, &p);
}

static uint64_t tag_of(int run, int ph)
{
	return 0x17e4000000ull + (uint64_t)app * 0x10000 + (uint64_t)run * 16 + (uint64_t)ph;
}

/* Sequential writes and reads: a group's files at once. */
static int seq_group(int g, int write, uint64_t tag)
{
	volatile int32_t words[16];
	int first = g * s.L.group, n = s.L.nfiles - first < s.L.group ? s.L.nfiles - first : s.L.group;
	for (int k = 0; k < n; k++) {
		int i = first + k;
		if (write) {
			struct ed_protector p = xprot(i);
			int64_t r = edc_xn_alloc(B.c, &p);
			if (r == 0)
				r = edc_xn_add_extent(B.c, &p, 0, lay_data(&s.L, i), FILE_BYTES);
			if (r < 0)
				return (int)r;
			stamp_block(fbuf(i), tag, (uint64_t)i);
		}
		struct xfer x = { write, &words[k] };
		int64_t r = cached(i, start_io, &x);
		if (r < 0) {
			while (k-- > 0)
				edc_wait(B.c, &words[k]);
			return (int)r;
		}
	}
	int err = 0;
	for (int k = 0; k < n; k++) {
		int32_t r = edc_wait(B.c, &words[k]);
		if (r < 0 && err == 0)
			err = r;
		if (r == 0 && !write && !stamp_ok(fbuf(first + k), tag, (uint64_t)(first + k)))
			err = -1;
	}
	if (err == 0 && write) {
		struct ed_protector p = xprot(first);
		err = wb_exonode(&s, &p);
	}
	return err;
}

/* One file at a time, as the random phases do it. */
static int one_file(int i, int write, uint64_t tag)
{
	volatile int32_t word;
	if (write)
		stamp_block(fbuf(i), tag, (uint64_t)i);
	struct xfer x = { write, &word };
	int64_t r = cached(i, start_io, &x);
	if (r < 0)
		return (int)r;
	r = edc_wait(B.c, &word);
	if (r == 0 && !write && !stamp_ok(fbuf(i), tag, (uint64_t)i))
		return -1;
	return (int)r;
}

static int phase(int ph, const uint32_t *order, uint64_t wtag_seq, uint64_t wtag_rand)
{
	int ngroups = (s.L.nfiles + s.L.group - 1) / s.L.group, r = 0;
	switch (ph) {
	case P_SEQW:
	case P_SEQR:
		for (int g = 0; g < ngroups && r == 0; g++)
			r = seq_group(g, ph == P_SEQW, wtag_seq);
		if (r == 0 && ph == P_SEQW)
			r = wb_drain(&s);
		return r;
	case P_RANDW:
	case P_RANDR:
		for (int k = 0; k < s.L.nfiles && r == 0; k++) {
			int i = (int)order[k];
			/* Random writes stamp the whole file's first block with the
			 * random pass's tag; reads expect it. */
			r = one_file(i, ph == P_RANDW, wtag_rand);
		}
		return r;
	default:
		for (int i = 0; i < s.L.nfiles && r == 0; i++) {
			r = (int)cached(i, do_dealloc, NULL);
			if (r == 0 && (i % s.L.group == s.L.group - 1 || i == s.L.nfiles - 1)) {
				struct ed_protector p = xprot(i);
				r = wb_exonode(&s, &p);
			}
		}
		return r == 0 ? wb_drain(&s) : r;
	}
}

/* One application: interleave -A app run layout start stride flags nfiles unit */
static int app_run(int argc, char **argv)
{
	if (argc != 10) {
		printf("interleave: -A takes 8 numbers (it is how the parent starts an application)\n");
		return 2;
	}
	app = atoi(argv[2]);
	int run = atoi(argv[3]);
	const char *layout = argv[4];
	memset(&s, 0, sizeof s);
	s.L.start = strtoull(argv[5], NULL, 10);
	s.L.stride = atoi(argv[6]);
	flags = strtoull(argv[7], NULL, 10);
	s.L.nfiles = atoi(argv[8]);
	s.L.fsect = FILE_BYTES / ED_SECTOR;
	s.L.xnlen = ED_XN_HDR_BYTES + ED_XN_EXTENT_BYTES;
	s.L.group = (int)((ED_SECTOR - ED_XNBLK_HDR_BYTES) / s.L.xnlen);
	s.wb.batch = 32;
	const char *err = bench_open(atoi(argv[9]));
	if (err != NULL) {
		printf("interleave: app %d: %s\n", app, err);
		return 1;
	}
	for (int i = 0; i < 16; i++) {
		s.rc.w[i / 8] = s.rc.w[i / 8] * 131 + now() + (uint64_t)app;
		s.wc.w[i / 8] = s.wc.w[i / 8] * 137 + now() + 1;
	}
	bufs = malloc((size_t)s.L.group * FILE_BYTES);
	uint32_t *order = malloc((size_t)s.L.nfiles * sizeof *order);
	if (bufs == NULL || order == NULL)
		return 1;
	memset(bufs, 0x11 * (app + 1), (size_t)s.L.group * FILE_BYTES);
	for (int ph = 0; ph < NPHASE; ph++) {
		if (ph == P_RANDW || ph == P_RANDR) {
			uint64_t seed = 0x5eed0000ull + (uint64_t)run * 64 + (uint64_t)app * 8 + (uint64_t)ph;
			shuffle(order, (uint32_t)s.L.nfiles, &seed);
		}
		int r = barrier(ph);
		if (r != 0) {
			printf("interleave: app %d: barrier: %s\n", app, exo_strerror(r));
			return 1;
		}
		uint64_t in0 = s.readins, t0 = now();
		r = phase(ph, order, tag_of(run, P_SEQW), tag_of(run, P_RANDW));
		uint64_t t = ns_since(t0);
		if (r != 0) {
			printf("interleave: app %d %s %s: %s\n", app, layout, phase_name[ph],
			       r == -1 ? "a file read back wrong" : exo_strerror(r));
			return 1;
		}
		char a[24];
		printf("  run %d %-11s app %d %-9s %s ms/file\n", run + 1, layout, app, phase_name[ph],
		       fmt_ms(a, sizeof a, t / (uint64_t)s.L.nfiles));
		emit("\"bench\":\"interleave\",\"dev\":\"%s\",\"layout\":\"%s\",\"app\":%d,\"phase\":\"%s\",\"run\":%d,"
		     "\"ns\":%lu,\"files\":%d,\"ns_per_file\":%lu,\"readins\":%lu", B.dev, layout, app, phase_name[ph], run,
		     (unsigned long)t, s.L.nfiles, (unsigned long)(t / (uint64_t)s.L.nfiles),
		     (unsigned long)(s.readins - in0));
	}
	return 0;
}

static int app_main(int argc, char **argv)
{
	int r = app_run(argc, argv);
	if (B.c == NULL) {
		printf("interleave: app %s could not start; the parent will wait for ever\n", argc > 2 ? argv[2] : "?");
		return r;
	}
	if (r != 0)
		raise_flag(F_FAIL + app);
	raise_flag(F_DONE + app);
	for (;;)
		exo_sleep_ns(1000000000);       /* until the parent ends us */
}

/* ---- the parent -------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: exobench interleave [-u UNIT] [-r RUNS] [-n FILES] [-g GAP_MIB] "
	                "[-l partitioned,neighboring,interleaved]\n");
	exit(2);
}

static int spawn_app(int a, int run, const char *layout, uint64_t start, int stride, uint64_t fl, int nfiles)
{
	char sa[8], sr[8], ss[24], st[8], sf[24], sn[16], su[8];
	snprintf(sa, sizeof sa, "%d", a);
	snprintf(sr, sizeof sr, "%d", run);
	snprintf(ss, sizeof ss, "%lu", (unsigned long)start);
	snprintf(st, sizeof st, "%d", stride);
	snprintf(sf, sizeof sf, "%lu", (unsigned long)fl);
	snprintf(sn, sizeof sn, "%d", nfiles);
	snprintf(su, sizeof su, "%d", B.unit);
	char *argv[] = { "exobench", "interleave", "-A", sa, sr, (char *)layout, ss, st, sf, sn, su, NULL };
	return exo_spawn("/bin/exobench", argv, NULL);
}

int interleave_main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "-A") == 0)
		return app_main(argc, argv);
	int unit = 0, runs = 5, nfiles = 1000;
	long gap_mib = 250;
	const char *which = "partitioned,neighboring,interleaved";
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i++];
		if (strcmp(o, "-l") == 0) {
			which = argv[i];
			continue;
		}
		long v = arg_num(argv[i], usage);
		if (strcmp(o, "-u") == 0)
			unit = (int)v;
		else if (strcmp(o, "-r") == 0)
			runs = (int)v;
		else if (strcmp(o, "-n") == 0)
			nfiles = (int)v;
		else if (strcmp(o, "-g") == 0)
			gap_mib = v;
		else
			usage();
	}
	if (runs < 1 || runs > BENCH_MAXRUNS || nfiles < 1 || nfiles > 100000 || gap_mib < 0)
		usage();
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("interleave: unit %d: %s\n", unit, err);
		return 1;
	}
	struct layout L;
	memset(&L, 0, sizeof L);
	L.nfiles = nfiles;
	L.fsect = FILE_BYTES / ED_SECTOR;
	L.xnlen = ED_XN_HDR_BYTES + ED_XN_EXTENT_BYTES;
	L.group = (int)((ED_SECTOR - ED_XNBLK_HDR_BYTES) / L.xnlen);
	uint64_t span = lay_span(&L);            /* one application's area */
	uint64_t gap = (uint64_t)gap_mib * (1 << 20) / ED_SECTOR;
	if (gap < span)
		gap = span;
	/* The flag sectors (2 per phase, in the first 16), then the areas:
	 * everything must be free. */
	uint64_t need = 16 + gap + span;
	uint64_t fl = edc_fm_find(&B.fm, 0, need, 8);
	if (fl == UINT64_MAX) {
		printf("interleave: no %lu free sectors in a row on unit %d\n", (unsigned long)need, unit);
		return 1;
	}
	uint64_t base = fl + 16;
	emit_meta("interleave", runs);
	printf("interleave: two applications of %d files of %u bytes each, %d per exonode sector; areas of %lu "
	       "sectors from sector %lu of unit %d (%s); partitioned: %ld MiB apart; %d run%s\n", nfiles, FILE_BYTES,
	       L.group, (unsigned long)span, (unsigned long)base, unit, B.dev, gap_mib, runs, runs > 1 ? "s" : "");
	for (int run = 0; run < runs; run++)
		for (int l = 0; l < 3; l++) {
			if (strstr(which, layouts[l]) == NULL)
				continue;
			uint64_t st[2] = { base, base + (l == 0 ? gap : l == 1 ? span : lay_gsect(&L)) };
			int stride = l == 2 ? 2 : 1;
			int pid[2];
			for (int a = 0; a < 2; a++) {
				pid[a] = spawn_app(a, run, layouts[l], st[a], stride, fl, nfiles);
				if (pid[a] < 0) {
					printf("interleave: spawn: %s\n", exo_strerror(pid[a]));
					return 1;
				}
			}
			while (!edc_fm_test(&B.fm, fl + F_DONE) || !edc_fm_test(&B.fm, fl + F_DONE + 1))
				exo_sleep_ns(1000000);
			int bad = edc_fm_test(&B.fm, fl + F_FAIL) || edc_fm_test(&B.fm, fl + F_FAIL + 1);
			for (int a = 0; a < 2; a++) {
				int status;
				exo_kill(pid[a]);
				exo_wait(pid[a], &status);
			}
			if (bad) {
				printf("interleave: an application failed (%s, run %d)\n", layouts[l], run + 1);
				return 1;
			}
			if (edc_fm_run(&B.fm, fl, need) != need) {
				printf("interleave: %s left sectors allocated\n", layouts[l]);
				return 1;
			}
		}
	return 0;
}
