/*
 * rawbench.c - raw disk throughput through the real driver, for the
 * measurements in docs/blocklayer.md (boot with rawio=1).
 *
 *   rawbench seq  read|write SIZE QD COUNT [UNIT]   sequential requests of SIZE bytes
 *   rawbench rand read|write SIZE QD COUNT [UNIT]   random places, SIZE-aligned
 *   rawbench sched COUNT QD... [-u UNIT]            random 4 KB reads: FIFO, then C-LOOK
 *   rawbench all [UNIT]                             the standard set (below)
 *   rawbench vs COUNT ROUNDS UNIT UNIT...            random 4 KB reads on several units,
 *                                                   interleaved, against the first
 *
 * QD requests are kept outstanding: each completion submits the next, as an
 * application with QD buffers would.  The block layer still hands the
 * device at most its depth (2 by default) at a time.  On the disk model the
 * analytic prediction (drivers/diskmodel.c, linked in) is printed beside
 * each figure where the model has a formula for it.  Every result is also
 * printed as one "RESULT key=value ..." line for scripts.  1 MB = 10^6 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/rawlib.h"
#include "libos/exo.h"
#include "drivers/blk.h"
#include "drivers/diskmodel.h"

struct slot {
	volatile int32_t word;
	uint8_t *buf;
	bool busy;
};

static struct raw_info info;
static unsigned unit;
static bool is_model;
static struct dm_disk model;

/* x / 1000 with three decimals, for printing rates without floating point. */
static void milli(char *out, size_t n, uint64_t x)
{
	snprintf(out, n, "%lu.%03lu", (unsigned long)(x / 1000), (unsigned long)(x % 1000));
}

/*
 * Run `count` requests of `size` bytes, `qd` outstanding; sequential from
 * `start` or random (seeded) over the whole unit.  Returns the elapsed
 * nanoseconds from the first submission to the last completion.
 */
static uint64_t run(int op, uint32_t size, int qd, int count, bool seq, uint64_t seed)
{
	struct slot *s = calloc((size_t)qd, sizeof *s);
	for (int i = 0; i < qd; i++) {
		s[i].buf = malloc(size);
		pat_fill(s[i].buf, size, unit, 0, 9);
	}
	uint64_t per = size / 512, span = info.capacity / per, next = span / 4, rs = seed;
	int submitted = 0, completed = 0;
	uint64_t t0 = exo_time();
	for (;;) {
		/* Refill every free slot, then wait for one to finish. */
		for (int i = 0; i < qd && submitted < count; i++) {
			if (s[i].busy)
				continue;
			uint64_t blk = seq ? next++ % span : rnd_next(&rs) % span;
			struct raw_req q;
			raw_req_make(&q, op, unit, blk * per, s[i].buf, size, &s[i].word);
			long r = raw_submit(&q, 1);
			if (r != 1) {
				printf("rawbench: submit failed: %s\n", exo_strerror(r));
				exit(1);
			}
			s[i].busy = true;
			submitted++;
		}
		if (completed == count)
			break;
		raw_wait((unsigned)qd - 1);
		for (int i = 0; i < qd; i++) {
			if (s[i].busy && s[i].word != RAW_PENDING) {
				if (s[i].word != 0) {
					printf("rawbench: request failed: %s\n", exo_strerror(s[i].word));
					exit(1);
				}
				s[i].busy = false;
				completed++;
			}
		}
	}
	uint64_t ns = exo_time_to_ns(exo_time() - t0);
	for (int i = 0; i < qd; i++)
		free(s[i].buf);
	free(s);
	return ns;
}

/* The model's analytic figure, as requests per second times 1000, or 0. */
static uint64_t predict_mreqs(bool seq, int op, uint32_t size, int qd, int sched)
{
	if (!is_model)
		return 0;
	uint32_t n = size / 512;
	uint64_t ns;
	if (seq && qd == 1)
		ns = dm_mean_sync_seq_ns(&model, n, op);
	else if (seq)
		return dm_seq_bytes_per_s(&model) * 1000 / size;
	else if (qd == 1)
		ns = dm_mean_random_ns(&model, n, false);
	else if (sched == BLK_SCHED_FIFO)
		ns = dm_mean_random_ns(&model, n, true);   /* the drive always has the next one */
	else
		return 0;                                 /* C-LOOK: no formula (test_clook_sim) */
	return 1000000000000ull / ns;
}

static void report(const char *test, int op, uint32_t size, int qd, int count, uint64_t ns, bool seq)
{
	struct raw_info now;
	raw_info(unit, &now);
	uint64_t mreqs = (uint64_t)count * 1000000000000ull / ns;        /* req/s x 1000 */
	uint64_t mmb = mreqs * size / 1000000;                           /* MB/s x 1000 */
	uint64_t pred = predict_mreqs(seq, op, size, qd, (int)now.sched);
	char a[32], b[32], c[128] = "";
	milli(a, sizeof a, mmb);
	milli(b, sizeof b, mreqs);
	if (pred != 0) {
		char p1[32], p2[32];
		milli(p1, sizeof p1, pred * size / 1000000);
		milli(p2, sizeof p2, pred);
		snprintf(c, sizeof c, "  (model predicts %s MB/s, %s req/s)", p1, p2);
	}
	const char *sched = now.sched == BLK_SCHED_FIFO ? "fifo" : "clook";
	printf("rawbench: %s %s-%s %u B qd %d x%d (%s, depth %u): %s MB/s, %s req/s%s\n", info.name, test,
	       op == RAW_READ ? "read" : "write", size, qd, count, sched, now.depth, a, b, c);
	printf("RESULT dev=%s test=%s-%s size=%u qd=%d n=%d sched=%s depth=%u polled=%u ns=%lu mbps_x1000=%lu "
	       "reqps_x1000=%lu pred_reqps_x1000=%lu\n", info.name, test, op == RAW_READ ? "read" : "write",
	       size, qd, count, sched, now.depth, now.polled, (unsigned long)ns, (unsigned long)mmb,
	       (unsigned long)mreqs, (unsigned long)pred);
}

static void one(const char *test, int op, uint32_t size, int qd, int count)
{
	bool seq = strcmp(test, "seq") == 0;
	uint64_t ns = run(op, size, qd, count, seq, 0xbe7c4 + (uint64_t)qd);
	report(test, op, size, qd, count, ns, seq);
}

/* FIFO against C-LOOK: the same random 4 KB reads at each number outstanding. */
static void sched_compare(int count, const int *qds, int nqd)
{
	for (int k = 0; k < nqd; k++) {
		uint64_t mr[2];
		int pol[2] = { BLK_SCHED_FIFO, BLK_SCHED_CLOOK };
		for (int j = 0; j < 2; j++) {
			long e = raw_set(unit, RAW_SET_SCHED, (unsigned long)pol[j]);
			if (e != 0) {
				printf("rawbench: raw_set: %s\n", exo_strerror(e));
				exit(1);
			}
			uint64_t ns = run(RAW_READ, 4096, qds[k], count, false, 0x5c4ed);
			report("rand", RAW_READ, 4096, qds[k], count, ns, false);
			mr[j] = (uint64_t)count * 1000000000000ull / ns;
		}
		char f[32], c[32];
		milli(f, sizeof f, mr[0]);
		milli(c, sizeof c, mr[1]);
		long gain = (long)((int64_t)(mr[1] - mr[0]) * 1000 / (int64_t)mr[0]);
		printf("rawbench: %d random 4 KB reads, %d outstanding: FIFO %s req/s, C-LOOK %s req/s, C-LOOK %+ld.%ld %%\n",
		       count, qds[k], f, c, gain / 10, (gain < 0 ? -gain : gain) % 10);
	}
	raw_set(unit, RAW_SET_SCHED, BLK_SCHED_CLOOK);
}

static void open_unit(unsigned u)
{
	unit = u;
	long e = raw_info(unit, &info);
	if (e != 0) {
		printf("rawbench: unit %u: %s%s\n", unit, exo_strerror(e),
		       e == BLK_E_PERM ? " (boot with rawio=1)" : "");
		exit(2);
	}
	is_model = strcmp(info.name, "model:RZ25") == 0 && dm_init(&model, &dm_rz25) == 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void fill(void)
{
	/* A fresh image is sparse, and the host answers reads of holes
	 * without touching storage: write every sector first. */
	uint64_t ns = run(RAW_WRITE, RAW_MAX_BYTES, 8, (int)(info.capacity / (RAW_MAX_BYTES / 512)), true, 0);
	printf("rawbench: unit %u: filled %lu MiB in %lu ms\n", unit, (unsigned long)(info.capacity >> 11),
	       (unsigned long)(ns / 1000000));
}

/*
 * The same random 4 KB reads on several units (say a virtio-blk and a
 * virtio-scsi disk), at 1 and 32 outstanding, with the unit's depth set to
 * the number outstanding.  Round after round the units take turns, so
 * whatever else the host is doing falls on all of them alike; each figure
 * is the median of the rounds, and each unit is compared with the first.
 */
#define VS_MAXU 8
#define VS_MAXR 32
static void versus(int count, int rounds, const unsigned *units, int nu)
{
	static uint64_t rate[2][VS_MAXU][VS_MAXR];      /* req/s x 1000 */
	const int qds[2] = { 1, 32 };
	char names[VS_MAXU][32];
	for (int u = 0; u < nu; u++) {
		open_unit(units[u]);
		snprintf(names[u], sizeof names[u], "%s", info.name);
		fill();
	}
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < 2; k++)
			for (int u = 0; u < nu; u++) {
				open_unit(units[u]);
				raw_set(unit, RAW_SET_DEPTH, (unsigned long)qds[k]);
				int n = qds[k] == 1 ? count : 4 * count;
				uint64_t ns = run(RAW_READ, 4096, qds[k], n, false, 0x75 + (uint64_t)r);
				report("rand", RAW_READ, 4096, qds[k], n, ns, false);
				rate[k][u][r] = (uint64_t)n * 1000000000000ull / ns;
			}
	for (int k = 0; k < 2; k++) {
		uint64_t med[VS_MAXU], pmed[VS_MAXU];
		/* The ratio to the first unit within each round (the two ran back to
		 * back, under the same load), and its median: steadier than the
		 * ratio of the medians on a busy host. */
		for (int u = 0; u < nu; u++) {
			uint64_t pr[VS_MAXR];
			for (int r = 0; r < rounds; r++)
				pr[r] = rate[k][u][r] * 1000 / rate[k][0][r];
			qsort(pr, (size_t)rounds, sizeof(uint64_t), cmp_u64);
			pmed[u] = rounds % 2 ? pr[rounds / 2] : (pr[rounds / 2 - 1] + pr[rounds / 2]) / 2;
		}
		for (int u = 0; u < nu; u++) {
			qsort(rate[k][u], (size_t)rounds, sizeof(uint64_t), cmp_u64);
			med[u] = rounds % 2 ? rate[k][u][rounds / 2]
			                    : (rate[k][u][rounds / 2 - 1] + rate[k][u][rounds / 2]) / 2;
		}
		for (int u = 0; u < nu; u++) {
			char m[32], lo[32], hi[32];
			milli(m, sizeof m, med[u]);
			milli(lo, sizeof lo, rate[k][u][0]);
			milli(hi, sizeof hi, rate[k][u][rounds - 1]);
			uint64_t ratio = med[u] * 1000 / med[0];
			printf("rawbench: vs: random 4 KB reads, qd %d: unit %u (%s): median %s req/s [%s-%s] over %d rounds, "
			       "%lu.%03lux unit %u (median of per-round ratios %lu.%03lux)\n", qds[k], units[u], names[u], m,
			       lo, hi, rounds, (unsigned long)(ratio / 1000), (unsigned long)(ratio % 1000), units[0],
			       (unsigned long)(pmed[u] / 1000), (unsigned long)(pmed[u] % 1000));
			printf("RESULT test=vs qd=%d unit=%u dev=%s rounds=%d median_reqps_x1000=%lu ratio_x1000=%lu "
			       "paired_ratio_x1000=%lu\n", qds[k], units[u], names[u], rounds, (unsigned long)med[u],
			       (unsigned long)ratio, (unsigned long)pmed[u]);
		}
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: rawbench seq|rand read|write SIZE QD COUNT [UNIT]\n"
	                "       rawbench sched COUNT QD... [-u UNIT]\n"
	                "       rawbench all [UNIT]\n"
	                "       rawbench vs COUNT ROUNDS UNIT UNIT...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "seq") == 0 || strcmp(argv[1], "rand") == 0) {
		if (argc < 6)
			usage();
		open_unit(argc > 6 ? (unsigned)atoi(argv[6]) : 0);
		int op = strcmp(argv[2], "write") == 0 ? RAW_WRITE : RAW_READ;
		uint32_t size = (uint32_t)atoi(argv[3]);
		int qd = atoi(argv[4]), count = atoi(argv[5]);
		if (size == 0 || size % 512 != 0 || size > RAW_MAX_BYTES || qd < 1 || qd > 256 || count < 1)
			usage();
		one(argv[1], op, size, qd, count);
	} else if (strcmp(argv[1], "sched") == 0) {
		if (argc < 4)
			usage();
		int qds[16], nqd = 0;
		unsigned u = 0;
		for (int i = 3; i < argc; i++) {
			if (strcmp(argv[i], "-u") == 0 && i + 1 < argc)
				u = (unsigned)atoi(argv[++i]);
			else if (nqd < 16)
				qds[nqd++] = atoi(argv[i]);
		}
		open_unit(u);
		for (int i = 0; i < nqd; i++)
			if (qds[i] < 1 || qds[i] > 256)
				usage();
		sched_compare(atoi(argv[2]), qds, nqd);
	} else if (strcmp(argv[1], "all") == 0) {
		open_unit(argc > 2 ? (unsigned)atoi(argv[2]) : 0);
		/* Enough requests for a stable figure: the model is slow but exact,
		 * virtio fast and noisy. */
		int nseq = is_model ? 400 : 4000, nrand = is_model ? 1000 : 20000;
		if (!is_model)
			fill();
		/* Writes first, so reads find written data. */
		int qds[2] = { 1, 32 };
		for (int k = 0; k < 2; k++) {
			one("seq", RAW_WRITE, 65536, qds[k], nseq);
			one("seq", RAW_READ, 65536, qds[k], nseq);
		}
		for (int k = 0; k < 2; k++) {
			one("rand", RAW_WRITE, 4096, qds[k], nrand);
			one("rand", RAW_READ, 4096, qds[k], nrand);
		}
		if (is_model) {
			int sq[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
			sched_compare(1000, sq, 9);
		}
	} else if (strcmp(argv[1], "vs") == 0) {
		if (argc < 6)
			usage();
		int count = atoi(argv[2]), rounds = atoi(argv[3]), nu = argc - 4;
		unsigned units[VS_MAXU];
		if (count < 1 || rounds < 1 || rounds > VS_MAXR || nu > VS_MAXU)
			usage();
		for (int i = 0; i < nu; i++)
			units[i] = (unsigned)atoi(argv[4 + i]);
		versus(count, rounds, units, nu);
	} else {
		usage();
	}
	return 0;
}
