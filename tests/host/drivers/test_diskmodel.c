/*
 * test_diskmodel.c - the mechanical disk model against its own analytic
 * formulas and against the RZ25's specification (thesis Table 5.1).
 *
 * The formulas (dm_mean_*) are computed from the parameters alone; the
 * simulations drive dm_access() request by request.  Agreement shows the
 * simulation does what the documentation says; agreement with the spec
 * shows the default parameters describe the RZ25.  The tests use doubles
 * freely (the model itself does not).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "drivers/diskmodel.h"
#include "check.h"

#define MS 1e6                       /* ns per ms */
#define KB 1024.0

static struct dm_disk d;

static void check_near(const char *what, double got, double want, double tol)
{
	double err = fabs(got - want) / want;
	if (err > tol) {
		fprintf(stderr, "%s: %.4f, wanted %.4f (off by %.2f%%, allowed %.2f%%)\n",
		        what, got, want, 100 * err, 100 * tol);
		CHECK(err <= tol);
	}
}

/* ---- parameters and geometry --------------------------------------------- */

static void test_params(void)
{
	CHECK_EQ(dm_init(&d, &dm_rz25), 0);
	CHECK_EQ(d.nsectors, 1492ull * 9 * 62);
	check_near("capacity (MB)", d.nsectors * 512.0 / 1e6, 426, 0.002);
	CHECK_EQ(d.rev_ns, 13599275);                    /* 60 s / 4412 */
	/* Skews just cover the switches: 4 sectors = 0.877 ms > 0.8 ms head
	 * switch, 13 sectors = 2.85 ms > 2.8 ms one-cylinder seek. */
	CHECK_EQ(d.track_skew, 4);
	CHECK_EQ(d.cyl_skew, 13);
	double sector_ns = d.rev_ns / 62.0;
	CHECK(d.track_skew * sector_ns >= dm_rz25.head_switch_ns);
	CHECK((d.track_skew - 1) * sector_ns < dm_rz25.head_switch_ns);
	CHECK(d.cyl_skew * sector_ns >= dm_seek_ns(&d, 1));

	/* Inconsistent tables are refused. */
	struct dm_params p;
	struct dm_disk bad;
#define REFUSE(field, value) do { p = dm_rz25; p.field = value; CHECK_EQ(dm_init(&bad, &p), -1); } while (0)
	REFUSE(cylinders, 1);
	REFUSE(cylinders, DM_MAX_CYLINDERS + 1);
	REFUSE(heads, 0);
	REFUSE(spt, 0);
	REFUSE(rpm, 0);
	REFUSE(seek_1cyl_ns, 0);
	REFUSE(seek_avg_ns, 2000000);        /* below the one-cylinder seek */
	REFUSE(seek_knee, 0);
	REFUSE(head_switch_ns, 20000000);    /* longer than a revolution */
	REFUSE(seek_1cyl_ns, 14000000);      /* skew would not fit in a track */
	REFUSE(bus_bytes_per_s, 0);
	p = dm_rz25; p.buffer_sectors = 0; p.bus_bytes_per_s = 0;
	CHECK_EQ(dm_init(&bad, &p), 0);      /* no buffer, no bus rate needed */
#undef REFUSE
}

/* ---- the seek curve ------------------------------------------------------ */

static void test_seek_curve(void)
{
	CHECK_EQ(dm_seek_ns(&d, 0), 0);
	CHECK_EQ(dm_seek_ns(&d, 1), dm_rz25.seek_1cyl_ns);
	uint32_t c = dm_rz25.cylinders;
	/* Increasing, and each step no larger than the one before (concave:
	 * the sqrt part flattens, the linear part keeps the knee's slope), up
	 * to the curve's quantisation of about 8 ns. */
	uint64_t prev_step = dm_seek_ns(&d, 1);
	for (uint32_t k = 1; k + 1 < c; k++) {
		uint64_t a = dm_seek_ns(&d, k), b = dm_seek_ns(&d, k + 1);
		CHECK(b > a);
		CHECK(b - a <= prev_step + 20);
		prev_step = b - a;
	}
	double full = dm_seek_ns(&d, c - 1) / MS;
	CHECK(full > 20 && full < 35);                      /* plausible full stroke */

	/* The mean over random (from, to) pairs is the spec's 14 ms: exactly,
	 * by summing the distance distribution ... */
	double sum = 0;
	for (uint32_t k = 1; k < c; k++)
		sum += 2.0 * (c - k) / ((double)c * c) * dm_seek_ns(&d, k);
	check_near("mean seek (exact sum)", sum / MS, 14.0, 0.0001);
	check_near("dm_mean_seek_ns", dm_mean_seek_ns(&d) / MS, sum / MS, 0.0001);
	/* ... and by sampling. */
	rng_seed(3);
	double s = 0;
	for (int i = 0; i < 200000; i++) {
		uint32_t a = (uint32_t)rng_below(c), b = (uint32_t)rng_below(c);
		s += dm_seek_ns(&d, a > b ? a - b : b - a);
	}
	check_near("mean seek (sampled)", s / 200000 / MS, 14.0, 0.01);
	printf("seek: 1 cyl %.2f ms, 10 cyl %.2f ms, 100 cyl %.2f ms, knee (%u) %.2f ms, full %.2f ms, mean %.3f ms\n",
	       dm_seek_ns(&d, 1) / MS, dm_seek_ns(&d, 10) / MS, dm_seek_ns(&d, 100) / MS,
	       dm_rz25.seek_knee, dm_seek_ns(&d, dm_rz25.seek_knee) / MS, full, sum / MS);
}

/* ---- rotation ------------------------------------------------------------ */

static void test_rotation(void)
{
	struct dm_state st;
	struct dm_timing tm;
	dm_state_init(&st);

	/* A queue of back-to-back sequential reads and writes: after the
	 * first, no request waits for the platter, inside a track or across. */
	uint64_t sector = 62 * 9 * 7 + 50;       /* starts 12 sectors before a track end */
	dm_access(&d, &st, 0, DM_WRITE, sector, 4, &tm);
	uint64_t prev_done = tm.done;
	for (int i = 0; i < 200; i++) {
		sector += 4;
		dm_access(&d, &st, 0, i < 100 ? DM_WRITE : DM_READ, sector, 4, &tm);
		CHECK_EQ(tm.start, prev_done);
		if (!tm.hit) {   /* the writes, and the first read after them */
			/* A track boundary between requests costs exactly its skew. */
			bool boundary = (sector % 62) == 0;
			if (boundary) {
				uint64_t skew = (sector % (62 * 9)) == 0 ? d.cyl_skew : d.track_skew;
				double cost = (double)(tm.seek + tm.rotate);
				check_near("skew time", cost, skew * d.rev_ns / 62.0, 0.01);
			} else {
				CHECK_EQ(tm.seek, 0);
				CHECK_EQ(tm.rotate, 0);
			}
		}
		/* Each request of 4 sectors takes 4 sector times, plus a skew if it
		 * crosses a track. */
		double took = (double)(tm.done - prev_done);
		double want = 4 * d.rev_ns / 62.0;
		uint64_t first = sector, last = sector + 3;
		if (first / 62 != last / 62 || first % 62 == 0)
			want += ((last / 62) % 9 == 0 ? d.cyl_skew : d.track_skew) * d.rev_ns / 62.0;
		check_near("sequential request time", took, want, 0.001);
		prev_done = tm.done;
	}

	/* Positioning: another surface of the same cylinder costs a head
	 * switch; another cylinder, the seek for the distance; the wait for
	 * the platter never reaches a full turn. */
	dm_state_init(&st);
	uint64_t cyl_sectors = 62 * 9;
	uint64_t t = dm_access(&d, &st, 0, DM_READ, 100 * cyl_sectors + 5, 1, &tm);
	t = dm_access(&d, &st, t, DM_READ, 100 * cyl_sectors + 3 * 62 + 40, 1, &tm);
	CHECK_EQ(tm.seek, dm_rz25.head_switch_ns);
	CHECK(tm.rotate < d.rev_ns);
	t = dm_access(&d, &st, t, DM_WRITE, 137 * cyl_sectors + 7 * 62, 1, &tm);
	CHECK_EQ(tm.seek, dm_seek_ns(&d, 37));
	t = dm_access(&d, &st, t, DM_WRITE, 37 * cyl_sectors, 1, &tm);
	CHECK_EQ(tm.seek, dm_seek_ns(&d, 100));
	/* The breakdown adds up. */
	CHECK_EQ(tm.start + tm.seek + tm.rotate + tm.transfer, tm.done);
	CHECK_EQ(tm.transfer, dm_transfer_ns(&d, 1));

	/* Random requests wait half a revolution on average, spread evenly. */
	dm_state_init(&st);
	rng_seed(5);
	double sum = 0;
	int below_half = 0;
	t = 0;
	for (int i = 0; i < 10000; i++) {
		t = dm_access(&d, &st, t, DM_READ, rng_below(d.nsectors), 1, &tm);
		CHECK(tm.rotate < d.rev_ns);
		sum += tm.rotate;
		below_half += tm.rotate < d.rev_ns / 2;
	}
	check_near("mean rotational wait (ms)", sum / 10000 / MS, d.rev_ns / 2.0 / MS, 0.02);
	check_near("share of waits below half a turn", below_half / 10000.0, 0.5, 0.04);
}

/* ---- random requests: simulation against the formula and the spec ------- */

struct randres { double access, service; };

/* n random requests of len sectors within the first `span` sectors; issued
 * one at a time (each when the previous completes) or all queued at once. */
static struct randres random_span(int op, uint32_t len, bool queued, uint64_t seed, uint64_t span)
{
	struct dm_state st;
	struct dm_timing tm;
	dm_state_init(&st);
	rng_seed(seed);
	const int n = 10000;
	double access = 0;
	uint64_t t = 0, first = 0;
	for (int i = 0; i < n; i++) {
		uint64_t s = rng_below(span - len + 1);
		t = dm_access(&d, &st, queued ? 0 : t, op, s, len, &tm);
		access += tm.seek + tm.rotate;
		if (i == 0)
			first = t;
	}
	/* Completion-to-completion: leaves out the very first request. */
	return (struct randres){ access / n / MS, (double)(t - first) / (n - 1) / MS };
}

static struct randres random_run(int op, uint32_t len, bool queued, uint64_t seed)
{
	return random_span(op, len, queued, seed, d.nsectors);
}

static void test_random(void)
{
	double f_access = dm_mean_access_ns(&d) / MS;
	check_near("formula: mean access vs spec 20.8 ms", f_access, 20.8, 0.002);

	struct randres r1 = random_run(DM_READ, 1, false, 11);
	check_near("1-sector random reads: access vs formula", r1.access, f_access, 0.015);
	check_near("1-sector random reads: access vs spec", r1.access, 20.8, 0.015);
	double f1 = dm_mean_random_ns(&d, 1, false) / MS;
	check_near("1-sector random reads: service vs formula", r1.service, f1, 0.015);
	/* Table 5.1: at most 42 random I/Os per second. */
	check_near("1-sector random reads per second vs spec 42", 1000 / r1.service, 42, 0.02);

	struct randres w8 = random_run(DM_WRITE, 8, false, 12);
	double f8 = dm_mean_random_ns(&d, 8, false) / MS;
	check_near("4 KB random writes: service vs formula", w8.service, f8, 0.015);

	struct randres q8 = random_run(DM_READ, 8, true, 13);
	double f8q = dm_mean_random_ns(&d, 8, true) / MS;
	check_near("4 KB random reads, queued: service vs formula", q8.service, f8q, 0.015);

	struct randres q64 = random_run(DM_READ, 128, true, 14);
	double f64q = dm_mean_random_ns(&d, 128, true) / MS;
	check_near("64 KB random reads, queued: service vs formula", q64.service, f64q, 0.015);

	/* The thesis's large-file experiment read 4 KB blocks at random from
	 * an 80 MB file, one at a time, at 0.22 MB/s (Table A.3): seeks are
	 * shorter than across the whole disk.  The model should land close. */
	struct randres f80 = random_span(DM_READ, 8, false, 15, (80 << 20) / 512);
	double mbs80 = 4096 / (f80.service / 1e3) / (1 << 20);
	check_near("4 KB random reads in 80 MB vs thesis 0.22 MB/s", mbs80, 0.22, 0.08);

	printf("random (ms)              formula  simulated (10,000 requests)\n");
	printf("  access, 512 B          %7.3f  %7.3f   (spec: 20.8)\n", f_access, r1.access);
	printf("  512 B, one at a time   %7.3f  %7.3f   = %.1f IO/s (spec: 42)\n", f1, r1.service, 1000 / r1.service);
	printf("  4 KB, one at a time    %7.3f  %7.3f   = %.1f IO/s\n", f8, w8.service, 1000 / w8.service);
	printf("  4 KB, queued           %7.3f  %7.3f   = %.1f IO/s\n", f8q, q8.service, 1000 / q8.service);
	printf("  64 KB, queued          %7.3f  %7.3f\n", f64q, q64.service);
	printf("  4 KB in 80 MB, one at a time      %7.3f   = %.3f MB/s (thesis, Disk Driver: 0.22)\n", f80.service, mbs80);
}

/* ---- sequential transfers ------------------------------------------------ */

/* Move `total` bytes in requests of len sectors from sector `from`; returns
 * mean ms per request and sets *kbs to the rate in KB/s. */
static double seq_run(int op, uint32_t len, bool queued, uint64_t from, uint64_t total, double *kbs)
{
	struct dm_state st;
	dm_state_init(&st);
	uint64_t n = total / (len * 512ull);
	uint64_t t = 0, first = 0;
	for (uint64_t i = 0; i < n; i++) {
		t = dm_access(&d, &st, queued ? 0 : t, op, from + i * len, len, NULL);
		if (i == 0)
			first = t;
	}
	double per = (double)(t - first) / (double)(n - 1);
	*kbs = len * 512.0 / KB / (per / 1e9);
	return per / MS;
}

static void test_sequential(void)
{
	double f_kbs = dm_seq_bytes_per_s(&d) / KB;
	check_near("formula: spiral rate vs spec 2110 KB/s", f_kbs, 2110, 0.002);

	/* The thesis's large-file experiment: 80 MB in 64 KB requests. */
	double wq, rq, rs, ws;
	seq_run(DM_WRITE, 128, true, 0, 80 << 20, &wq);
	seq_run(DM_READ, 128, true, 0, 80 << 20, &rq);
	check_near("64 KB writes, queued: KB/s vs formula", wq, f_kbs, 0.003);
	check_near("64 KB reads, queued: KB/s vs formula", rq, f_kbs, 0.003);

	/* One at a time: reads stream on thanks to read-ahead; writes find
	 * the next sector gone and wait a revolution. */
	double r64 = seq_run(DM_READ, 128, false, 1000, 80 << 20, &rs);
	double w64 = seq_run(DM_WRITE, 128, false, 1000, 80 << 20, &ws);
	check_near("64 KB reads, one at a time: ms vs formula", r64,
	           dm_mean_sync_seq_ns(&d, 128, DM_READ) / MS, 0.003);
	check_near("64 KB writes, one at a time: ms vs formula", w64,
	           dm_mean_sync_seq_ns(&d, 128, DM_WRITE) / MS, 0.003);
	CHECK(ws < 0.75 * rs);

	/* Small files of 10 KB (20 sectors), as in thesis Table A.1. */
	double k10;
	double w10 = seq_run(DM_WRITE, 20, false, 5000, 10 << 20, &k10);
	double r10 = seq_run(DM_READ, 20, false, 5000, 10 << 20, &k10);
	check_near("10 KB writes, one at a time: ms vs formula", w10,
	           dm_mean_sync_seq_ns(&d, 20, DM_WRITE) / MS, 0.003);
	/* Here the bus and overhead (4.84 ms) are slower than the platter
	 * (4.39 ms): the drive runs ahead until the buffer is full, stops, and
	 * sometimes has to wait for the platter to catch up; the formula is
	 * then a lower bound. */
	double f10r = dm_mean_sync_seq_ns(&d, 20, DM_READ) / MS;
	CHECK(f10r > dm_transfer_ns(&d, 20) / MS);
	CHECK(r10 >= f10r);
	check_near("10 KB reads, one at a time: ms vs formula", r10, f10r, 0.03);

	printf("sequential               formula  simulated\n");
	printf("  64 KB queued, KB/s     %7.1f  write %7.1f  read %7.1f   (spec: 2110)\n", f_kbs, wq, rq);
	printf("  64 KB one at a time    read %7.1f KB/s, write %7.1f KB/s   (thesis, Disk Driver: 2.36 / 1.56 MB/s)\n", rs, ws);
	printf("  10 KB one at a time    write %6.2f ms (formula %.2f), read %5.2f ms (formula %.2f)   (thesis: 17.7 / 4.6 ms)\n",
	       w10, dm_mean_sync_seq_ns(&d, 20, DM_WRITE) / MS, r10, dm_mean_sync_seq_ns(&d, 20, DM_READ) / MS);
}

/* ---- the read-ahead buffer ----------------------------------------------- */

static void test_readahead(void)
{
	struct dm_state st;
	struct dm_timing tm;
	uint64_t bus8 = 8 * 512 * 1000000000ull / dm_rz25.bus_bytes_per_s;
	dm_state_init(&st);
	uint64_t t = dm_access(&d, &st, 0, DM_READ, 10000, 8, &tm);
	CHECK(!tm.hit);

	/* Long after, the 120 sectors following are all buffered: served at
	 * bus speed with no mechanical delay ... */
	uint64_t later = t + 1000000000ull;
	t = dm_access(&d, &st, later, DM_READ, 10008, 8, &tm);
	CHECK(tm.hit);
	CHECK_EQ(tm.done, later + dm_rz25.overhead_ns + bus8);
	/* ... including after a skip, as long as it is inside the buffer ... */
	t = dm_access(&d, &st, t, DM_READ, 10100, 8, &tm);
	CHECK(tm.hit);
	CHECK_EQ(tm.done - tm.start, bus8);
	/* ... but the drive stopped at 10008 + 120 = 10128 when the buffer
	 * filled: a request running past that needs the platter again. */
	t = dm_access(&d, &st, t, DM_READ, 10120, 16, &tm);
	CHECK(tm.hit);
	CHECK(tm.done - tm.start > bus8 * 2 + d.rev_ns / 62 * 8);
	/* Behind the buffer, or after a write, is a miss. */
	dm_access(&d, &st, t, DM_READ, 9000, 8, &tm);
	CHECK(!tm.hit);
	t = dm_access(&d, &st, tm.done, DM_WRITE, 9008, 8, &tm);
	dm_access(&d, &st, t, DM_READ, 9016, 8, &tm);
	CHECK(!tm.hit);

	/* With no buffer, nothing is ever a hit and one-at-a-time sequential
	 * reads lose revolutions just like writes. */
	struct dm_params p = dm_rz25;
	p.buffer_sectors = 0;
	struct dm_disk nb;
	CHECK_EQ(dm_init(&nb, &p), 0);
	dm_state_init(&st);
	t = 0;
	for (int i = 0; i < 100; i++) {
		t = dm_access(&nb, &st, t, DM_READ, 20 * (uint64_t)i, 20, &tm);
		CHECK(!tm.hit);
		if (i > 0)
			CHECK(tm.rotate > d.rev_ns / 2);
	}
}

/* ---- determinism, flushes, overhead overlap ------------------------------ */

static void test_determinism(void)
{
	struct dm_state a, b, what_if;
	dm_state_init(&a);
	dm_state_init(&b);
	rng_seed(21);
	uint64_t ta = 0, tb = 0;
	for (int i = 0; i < 5000; i++) {
		uint64_t arrival = ta + rng_below(30000000);
		int op = (int)rng_below(3);
		uint64_t s = rng_below(d.nsectors - 64);
		uint32_t n = op == DM_FLUSH ? 0 : 1 + (uint32_t)rng_below(64);
		/* Asking "what if" on a copy changes nothing. */
		what_if = a;
		uint64_t guess = dm_access(&d, &what_if, arrival, op, s, n, NULL);
		ta = dm_access(&d, &a, arrival, op, s, n, NULL);
		tb = dm_access(&d, &b, arrival, op, s, n, NULL);
		CHECK_EQ(ta, tb);
		CHECK_EQ(guess, ta);
		CHECK(memcmp(&a, &b, sizeof a) == 0);
		CHECK(ta >= arrival + dm_rz25.overhead_ns);
	}

	/* A flush is only a command: overhead, or the end of the work queued
	 * before it, whichever is later; it leaves the heads alone. */
	struct dm_state st;
	struct dm_timing tm;
	dm_state_init(&st);
	uint64_t t = dm_access(&d, &st, 0, DM_WRITE, 400000, 8, &tm);
	struct dm_pos pos = st.pos;
	CHECK_EQ(dm_access(&d, &st, 0, DM_FLUSH, 0, 0, &tm), t);
	CHECK_EQ(dm_access(&d, &st, t + 5000000, DM_FLUSH, 0, 0, &tm), t + 5000000 + dm_rz25.overhead_ns);
	CHECK(st.pos.cyl == pos.cyl && st.pos.head == pos.head);

	/* Overhead overlaps queued work: a request that reached the drive at
	 * least one overhead before it is free starts the moment it is free;
	 * one that arrives later starts an overhead after arriving. */
	dm_state_init(&st);
	t = dm_access(&d, &st, 0, DM_READ, 700000, 8, &tm);
	uint64_t free_at = dm_access(&d, &st, t - dm_rz25.overhead_ns - 1000, DM_READ, 100, 8, &tm);
	CHECK_EQ(tm.start, t);
	dm_access(&d, &st, free_at - 1000, DM_READ, 300000, 8, &tm);
	CHECK_EQ(tm.start, free_at - 1000 + dm_rz25.overhead_ns);
	/* An idle drive pays the whole overhead. */
	uint64_t idle = tm.done + 10;
	dm_access(&d, &st, idle, DM_READ, 500000, 8, &tm);
	CHECK_EQ(tm.start, idle + dm_rz25.overhead_ns);
}

int main(void)
{
	test_params();
	test_seek_curve();
	test_rotation();
	test_random();
	test_sequential();
	test_readahead();
	test_determinism();
	printf("diskmodel: all checks passed\n");
	return 0;
}
