/*
 * disktest.c - exercise the disk drivers through the raw path
 * (kernel/uapi/rawio.h; boot with rawio=1: make qemu BOOTARGS=rawio=1 CMD=disktest).
 *
 *   disktest            on every unit: patterns across the whole disk, 128
 *                       requests in flight, flushes and FUA, the exported
 *                       queue page; prints a summary, exits 0 if all is well
 *   disktest bad        bad requests on unit 0: each refused with its own
 *                       error, nothing written, the disk unharmed
 *   disktest qfull      more requests than a unit's queue holds (needs a slow
 *                       unit, the disk model, to fill it)
 *   disktest exit       a child exits with requests in flight; the kernel and
 *                       the disk go on, and every page comes back
 *   disktest perm       with the raw path off, every call says BLK_E_PERM
 *   disktest qwrite     store into the read-only queue page (is killed)
 *
 * Every data sector carries a pattern naming its unit, sector and pass
 * (rawlib.c), so reads of the wrong place, stale data and torn transfers
 * show.  Every completion word starts as a sentinel and must read
 * RAW_PENDING or 0 after submission and 0 after completion.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/rawlib.h"
#include "libos/exo.h"
#include "libos/sys.h"
#include "drivers/blk.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/syscall.h"

#define SENTINEL   0x5a5a5a5a
#define KEEP       64              /* requests kept in flight by the data passes */
#define REGIONS    256             /* pattern regions per unit                   */
#define RLEN       128             /* sectors per region (64 KB)                 */

static int failures, nexpected;
static unsigned long nchecks, nrequests;
static uint64_t bytes_verified;

static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	failures++;
}

/* Check that a call returned what it should; say so either way. */
static void expect(const char *what, long got, long want)
{
	nchecks++;
	if (got == want) {
		nexpected++;
		printf("ok: %s -> %ld (%s)\n", what, got, exo_strerror(got));
	} else
		fail("%s -> %ld (%s), expected %ld (%s)", what, got, exo_strerror(got), want, exo_strerror(want));
}

struct io {
	struct raw_req q;
	volatile int32_t word;
	uint8_t *mem;                  /* allocation behind q.buf */
};

static struct raw_info info_of(unsigned unit)
{
	struct raw_info in;
	long e = raw_info(unit, &in);
	if (e != 0) {
		fail("raw_info(%u): %s", unit, exo_strerror(e));
		memset(&in, 0, sizeof in);
	}
	return in;
}

static long pending_now(void)
{
	return raw_wait(0xffffffffu);   /* returns at once with the count */
}

/* Submit v[0..n) in order with at most `keep` pending, then wait for all;
 * check every completion word on the way. */
static void run_keep(struct io **v, int n, int keep)
{
	long pending = pending_now();
	for (int i = 0; i < n; i++) {
		if (pending >= keep)
			pending = raw_wait((unsigned)keep - 1);
		v[i]->word = SENTINEL;
		long r = raw_submit(&v[i]->q, 1);
		nrequests++;
		if (r != 1) {
			fail("submit op %u unit %u sector %lu len %u: %s", v[i]->q.op, v[i]->q.unit,
			     (unsigned long)v[i]->q.sector, v[i]->q.nbytes, exo_strerror(r));
			v[i]->word = 0;
			continue;
		}
		int32_t w = v[i]->word;
		if (w != RAW_PENDING && w != 0)
			fail("completion word after submission is %d", (int)w);
		pending++;
	}
	raw_wait(0);
	for (int i = 0; i < n; i++) {
		nchecks++;
		if (v[i]->word != 0)
			fail("unit %u sector %lu op %u completed with %d (%s)", v[i]->q.unit,
			     (unsigned long)v[i]->q.sector, v[i]->q.op, (int)v[i]->word, exo_strerror(v[i]->word));
	}
}

static void shuffle(struct io **v, int n, uint64_t *rs)
{
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rnd_next(rs) % (uint64_t)(i + 1));
		struct io *t = v[i];
		v[i] = v[j];
		v[j] = t;
	}
}

static void flush_unit(unsigned unit)
{
	struct io f;
	raw_req_make(&f.q, RAW_FLUSH, unit, 0, NULL, 0, &f.word);
	struct io *v[1] = { &f };
	run_keep(v, 1, 1);
}

/* Verify the data of finished reads against the pattern. */
static void verify(struct io **v, int n, uint32_t pass)
{
	for (int i = 0; i < n; i++) {
		struct raw_req *q = &v[i]->q;
		long bad = pat_check((void *)(uintptr_t)q->buf, q->nbytes, q->unit, q->sector, pass);
		nchecks++;
		if (bad >= 0)
			fail("unit %u: sector %lu read back wrong (request at %lu, %u bytes)", q->unit,
			     (unsigned long)(q->sector + (uint64_t)bad), (unsigned long)q->sector, q->nbytes);
		else
			bytes_verified += q->nbytes;
	}
}

/* ---- patterns across the whole disk ------------------------------------- */

/* Pass 1: REGIONS 64 KB regions spread evenly from the first sector to the
 * last of every unit, written and read back in shuffled order, units mixed.
 * Pass 2: requests of random length at random places with buffers at random
 * (unaligned) addresses, so buffers straddle pages. */
static void test_patterns(unsigned nunits)
{
	uint64_t rs = 0x5eed;
	int n = 0, cap_n = (int)nunits * REGIONS;
	struct io *ios = calloc((size_t)cap_n, sizeof *ios);
	struct io **v = calloc((size_t)cap_n, sizeof *v);
	for (unsigned u = 0; u < nunits; u++) {
		uint64_t cap = info_of(u).capacity;
		int regions = cap / RLEN < REGIONS ? (int)(cap / RLEN) : REGIONS;
		for (int k = 0; k < regions; k++) {
			uint64_t start = regions == 1 ? 0 : (uint64_t)k * (cap - RLEN) / (uint64_t)(regions - 1);
			struct io *io = &ios[n];
			io->mem = malloc(RLEN * 512);
			raw_req_make(&io->q, RAW_WRITE, u, start, io->mem, RLEN * 512, &io->word);
			pat_fill(io->mem, RLEN * 512, u, start, 1);
			v[n++] = io;
		}
	}
	shuffle(v, n, &rs);
	run_keep(v, n, KEEP);
	for (unsigned u = 0; u < nunits; u++)
		flush_unit(u);
	for (int i = 0; i < n; i++) {
		memset(ios[i].mem, 0, RLEN * 512);
		ios[i].q.op = RAW_READ;
	}
	shuffle(v, n, &rs);
	run_keep(v, n, KEEP);
	verify(v, n, 1);
	printf("disktest: pass 1: %d regions of 64 KB from first to last sector of %u unit%s, "
	       "written and read back, %d in flight\n", n, nunits, nunits == 1 ? "" : "s", KEEP);

	/* Pass 2: random lengths, random unaligned buffers. */
	for (int i = 0; i < n; i++)
		free(ios[i].mem);
	int m = 0;
	for (unsigned u = 0; u < nunits; u++) {
		uint64_t cap = info_of(u).capacity;
		uint64_t slot = cap / REGIONS;
		for (int k = 0; k < REGIONS && slot > 0; k++) {
			uint64_t maxlen = slot < 256 ? slot : 256;
			uint32_t len = 1 + (uint32_t)(rnd_next(&rs) % maxlen);
			uint64_t start = (uint64_t)k * slot + rnd_next(&rs) % (slot - len + 1);
			struct io *io = &ios[m];
			io->mem = malloc(len * 512 + 4096);
			uint8_t *buf = io->mem + rnd_next(&rs) % 4096;
			raw_req_make(&io->q, RAW_WRITE, u, start, buf, len * 512, &io->word);
			pat_fill(buf, len * 512, u, start, 2);
			v[m++] = io;
		}
	}
	shuffle(v, m, &rs);
	run_keep(v, m, KEEP);
	for (int i = 0; i < m; i++) {
		/* Read back into a different unaligned place. */
		uint32_t len = ios[i].q.nbytes;
		free(ios[i].mem);
		ios[i].mem = malloc(len + 4096);
		uint8_t *buf = ios[i].mem + 4095 - rnd_next(&rs) % 4096;
		memset(buf, 0, len);
		ios[i].q.buf = (uint64_t)(uintptr_t)buf;
		ios[i].q.op = RAW_READ;
	}
	shuffle(v, m, &rs);
	run_keep(v, m, KEEP);
	verify(v, m, 2);
	printf("disktest: pass 2: %d requests of 1..256 sectors at random places, unaligned buffers\n", m);
	for (int i = 0; i < m; i++)
		free(ios[i].mem);
	free(ios);
	free(v);
}

/* ---- many in flight ---------------------------------------------------- */

/* 128 reads handed over in one call, with the block layer allowed to give
 * the device all it can hold: a virtio disk must then hold at least 64. */
static void test_inflight(unsigned unit)
{
	enum { N = 128 };
	struct raw_info before = info_of(unit);
	long depth = raw_set(unit, RAW_SET_DEPTH, N);
	if (depth < 1)
		fail("raw_set depth: %s", exo_strerror(depth));
	static struct raw_req q[N];
	static struct io ios[N];
	uint8_t *mem = malloc(N * 4096);
	uint64_t cap = before.capacity, stride = cap / N;
	for (int i = 0; i < N; i++) {
		/* 4 KB at 128 places across the disk: write them, then read them
		 * back all at once. */
		raw_req_make(&ios[i].q, RAW_WRITE, unit, (uint64_t)i * stride, mem + i * 4096, 4096, &ios[i].word);
		pat_fill(mem + i * 4096, 4096, unit, (uint64_t)i * stride, 3);
	}
	struct io *v[N];
	for (int i = 0; i < N; i++)
		v[i] = &ios[i];
	run_keep(v, N, N);
	memset(mem, 0, N * 4096);
	for (int i = 0; i < N; i++) {
		ios[i].q.op = RAW_READ;
		ios[i].word = SENTINEL;
		q[i] = ios[i].q;
	}
	long r = raw_submit(q, N);
	nrequests += N;
	expect("128 reads in one raw_submit", r, N);
	long still = pending_now();
	raw_wait(0);
	for (int i = 0; i < N; i++) {
		nchecks++;
		if (ios[i].word != 0)
			fail("batched read %d completed with %d", i, (int)ios[i].word);
	}
	verify(v, N, 3);
	struct raw_info after = info_of(unit);
	printf("disktest: unit %u: 128 requests in flight (%ld still pending after the call); "
	       "depth %ld, the device held up to %u at once (it can hold %u)\n",
	       unit, still, depth, after.hiwater, after.max_inflight);
	uint32_t want = after.max_inflight < 64 ? after.max_inflight : 64;
	nchecks++;
	if (strcmp(after.name, "virtio-blk") == 0 && after.hiwater < want)
		fail("unit %u: the device never held %u requests at once (high-water %u)", unit, want, after.hiwater);
	raw_set(unit, RAW_SET_DEPTH, before.depth);
	free(mem);
}

/* ---- flush ordering ------------------------------------------------------ */

/* "write A; flush; write B": B may not complete before the flush, nor the
 * flush before A; B waits behind the flush in the queue.  Watched from user
 * space, without system calls, as the completions land. */
static void test_flush(unsigned unit)
{
	uint64_t cap = info_of(unit).capacity;
	uint8_t *a = malloc(8192), *b = malloc(8192);
	uint64_t sa = cap / 3, sb = cap / 5;          /* B before A: C-LOOK would like it first */
	pat_fill(a, 8192, unit, sa, 4);
	pat_fill(b, 8192, unit, sb, 4);
	static struct io w1, f, w2;
	raw_req_make(&w1.q, RAW_WRITE, unit, sa, a, 8192, &w1.word);
	raw_req_make(&f.q, RAW_FLUSH, unit, 0, NULL, 0, &f.word);
	raw_req_make(&w2.q, RAW_WRITE, unit, sb, b, 8192, &w2.word);
	struct raw_req batch[3] = { w1.q, f.q, w2.q };
	w1.word = f.word = w2.word = SENTINEL;
	long r = raw_submit(batch, 3);
	nrequests += 3;
	nchecks++;
	if (r != 3)
		fail("write, flush, write: submitted %ld", r);
	/* The queue page right away: if the flush is still there, B is behind it. */
	struct blk_export x;
	raw_queue_snapshot(unit, &x);
	int fpos = -1, bpos = -1;
	for (uint32_t i = 0; i < x.nent; i++) {
		if (x.ent[i].op == BLKX_OP_FLUSH)
			fpos = (int)i;
		if (x.ent[i].op == BLKX_OP_WRITE && x.ent[i].sector == sb)
			bpos = (int)i;
	}
	nchecks++;
	if (fpos >= 0 && bpos >= 0 && (bpos < fpos || !(x.ent[bpos].flags & BLKX_F_BARRIER) ||
	                                (x.ent[bpos].flags & BLKX_F_INFLIGHT)))
		fail("unit %u: the write after a flush is not held behind it in the queue page", unit);
	uint64_t deadline = exo_time() + exo_ns_to_time(60000000000ull);
	int observations = 0;
	for (;;) {
		/* Read B, then the flush, then A: whatever completed before an
		 * earlier read has certainly completed before a later one. */
		int32_t c2 = w2.word, cf = f.word, c1 = w1.word;
		bool d1 = c1 != RAW_PENDING, df = cf != RAW_PENDING, d2 = c2 != RAW_PENDING;
		observations++;
		if ((d2 && !df) || (df && !d1)) {
			fail("unit %u: completion order broken: write A %d, flush %d, write B %d", unit, c1, cf, c2);
			break;
		}
		if (d1 && df && d2)
			break;
		if (exo_time() > deadline) {
			fail("unit %u: write, flush, write did not complete in 60 s", unit);
			break;
		}
	}
	raw_wait(0);
	nchecks += 3;
	if (w1.word != 0 || f.word != 0 || w2.word != 0)
		fail("unit %u: write %d flush %d write %d", unit, (int)w1.word, (int)f.word, (int)w2.word);
	/* A FUA write, then read everything back. */
	static struct io fua;
	pat_fill(a, 8192, unit, sa + 64, 4);
	raw_req_make(&fua.q, RAW_WRITE, unit, sa + 64, a, 8192, &fua.word);
	fua.q.flags = RAW_F_FUA;
	struct io *v[1] = { &fua };
	run_keep(v, 1, 1);
	static struct io r1, r2, r3;
	uint8_t *c = malloc(8192);
	raw_req_make(&r1.q, RAW_READ, unit, sa, a, 8192, &r1.word);
	raw_req_make(&r2.q, RAW_READ, unit, sb, b, 8192, &r2.word);
	raw_req_make(&r3.q, RAW_READ, unit, sa + 64, c, 8192, &r3.word);
	struct io *rv[3] = { &r1, &r2, &r3 };
	memset(a, 0, 8192);
	memset(b, 0, 8192);
	run_keep(rv, 3, 3);
	verify(rv, 3, 4);
	printf("disktest: unit %u: write, flush, write completed in order (%d looks at the words, "
	       "flush %s in the queue page); FUA write ok\n", unit, observations,
	       fpos >= 0 ? "seen" : "already gone");
	free(a);
	free(b);
	free(c);
}

/* ---- the exported queue ------------------------------------------------- */

/* Submit 32 reads, then watch them through the queue page alone: no system
 * call from submission until the last completion word turns 0. */
static void test_export(unsigned unit)
{
	enum { N = 32 };
	struct raw_info in = info_of(unit);
	struct blk_export x;
	raw_queue_snapshot(unit, &x);
	nchecks++;
	if (x.magic != BLKX_MAGIC || x.version != BLKX_VERSION || x.unit != unit || x.capacity != in.capacity)
		fail("unit %u: queue page header wrong (magic %x unit %u capacity %lu)", unit, x.magic, x.unit,
		     (unsigned long)x.capacity);
	uint64_t sub0 = x.nsubmitted, done0 = x.ncompleted;
	nchecks++;
	if (x.ninflight != 0 || x.nqueued != 0 || sub0 != done0)
		fail("unit %u: queue not idle before the test (%u in flight, %u queued)", unit, x.ninflight, x.nqueued);

	static struct raw_req q[N];
	static struct io ios[N];
	uint64_t sectors[N], rs = 0xe4707 + unit;
	uint8_t *mem = malloc(N * 4096);
	for (int i = 0; i < N; i++) {
		sectors[i] = (rnd_next(&rs) % (in.capacity / 8)) * 8;
		raw_req_make(&q[i], RAW_READ, unit, sectors[i], mem + i * 4096, 4096, &ios[i].word);
		ios[i].word = SENTINEL;
	}
	long r = raw_submit(q, N);
	nrequests += N;
	expect("32 reads in one raw_submit", r, N);

	/* From here until every word is 0: memory reads only. */
	raw_queue_snapshot(unit, &x);
	uint64_t seen_done = x.ncompleted;
	int changes = 0;
	nchecks += 4;
	if (x.nsubmitted != sub0 + N)
		fail("unit %u: page says %lu submitted, expected %lu", unit, (unsigned long)x.nsubmitted,
		     (unsigned long)(sub0 + N));
	if (x.ncompleted - done0 + x.ninflight + x.nqueued != N)
		fail("unit %u: page counts do not add up: %lu done, %u in flight, %u queued", unit,
		     (unsigned long)(x.ncompleted - done0), x.ninflight, x.nqueued);
	if (x.nent != x.ninflight + x.nqueued)
		fail("unit %u: page has %u entries for %u requests", unit, x.nent, x.ninflight + x.nqueued);
	/* In-flight entries first, then the queue in service order: under
	 * C-LOOK those at or past the head ascending, then the rest ascending. */
	bool wrapped = false;
	for (uint32_t i = 0; i < x.nent; i++) {
		bool mine = false;
		for (int k = 0; k < N; k++)
			mine |= x.ent[i].sector == sectors[k] && x.ent[i].nsectors == 8 && x.ent[i].op == BLKX_OP_READ;
		if (!mine)
			fail("unit %u: page entry %u (sector %lu) is not one of ours", unit, i, (unsigned long)x.ent[i].sector);
		bool infl = (x.ent[i].flags & BLKX_F_INFLIGHT) != 0;
		if (infl != (i < x.ninflight))
			fail("unit %u: page entry %u in-flight flag out of place", unit, i);
		if (infl || x.sched != BLK_SCHED_CLOOK)
			continue;
		uint64_t s = x.ent[i].sector;
		if (s < x.head)
			wrapped = true;
		bool ahead_after_wrap = wrapped && s >= x.head;
		bool descending = i > x.ninflight && s < x.ent[i - 1].sector && !(s < x.head && x.ent[i - 1].sector >= x.head);
		if (ahead_after_wrap || descending)
			fail("unit %u: queued request at %lu out of C-LOOK order (head %lu)", unit,
			     (unsigned long)s, (unsigned long)x.head);
	}
	uint32_t listed = x.nent, inflight0 = x.ninflight;
	uint64_t deadline = exo_time() + exo_ns_to_time(60000000000ull);
	for (;;) {
		const struct blk_export *live = raw_queue_page(unit);
		uint64_t d = __atomic_load_n(&live->ncompleted, __ATOMIC_ACQUIRE);
		if (d != seen_done) {
			changes++;
			seen_done = d;
		}
		bool all = true;
		for (int i = 0; i < N; i++)
			all &= ios[i].word == 0;
		if (all && seen_done - done0 == N)
			break;
		if (exo_time() > deadline) {
			fail("unit %u: completions not seen through the page within 60 s", unit);
			break;
		}
	}
	/* The words turned 0 with no system call in between. */
	for (int i = 0; i < N; i++) {
		nchecks++;
		if (ios[i].word != 0)
			fail("unit %u: read %d completed with %d", unit, i, (int)ios[i].word);
	}
	printf("disktest: unit %u: queue page showed %u requests (%u in the device, head %lu) and "
	       "%d changes of the completion count while polled without system calls\n",
	       unit, listed, inflight0, (unsigned long)x.head, changes);
	free(mem);
}

/* ---- bad input ------------------------------------------------------------ */

static long submit_word(struct raw_req *q, volatile int32_t *word)
{
	*word = SENTINEL;
	long r = raw_submit(q, 1);
	nchecks++;
	if (*word != SENTINEL)
		fail("a refused request changed its completion word to %d", (int)*word);
	return r;
}

static void test_bad(void)
{
	const unsigned unit = 0;
	int expected0 = nexpected;
	uint64_t cap = info_of(unit).capacity;
	/* Known data where the bad writes would land, read back at the end. */
	const uint64_t area = 2048, tail = cap - 16;
	static struct io pre[2];
	uint8_t *p1 = malloc(64 * 512), *p2 = malloc(16 * 512);
	pat_fill(p1, 64 * 512, unit, area, 5);
	pat_fill(p2, 16 * 512, unit, tail, 5);
	raw_req_make(&pre[0].q, RAW_WRITE, unit, area, p1, 64 * 512, &pre[0].word);
	raw_req_make(&pre[1].q, RAW_WRITE, unit, tail, p2, 16 * 512, &pre[1].word);
	struct io *pv[2] = { &pre[0], &pre[1] };
	run_keep(pv, 2, 2);

	uint8_t *junk = malloc(RAW_MAX_BYTES + 8192);
	memset(junk, 0xee, RAW_MAX_BYTES + 8192);
	static volatile int32_t word;
	struct raw_req q;
	uint64_t free0 = exo_kinfo()->free_pages;

#define BAD(what, op, sec, buf, len, want) do { \
		raw_req_make(&q, op, unit, sec, buf, len, &word); \
		expect(what, submit_word(&q, &word), want); \
	} while (0)

	BAD("write past the end of the disk", RAW_WRITE, cap - 8, junk, 16 * 512, BLK_E_RANGE);
	BAD("write at sector = capacity", RAW_WRITE, cap, junk, 512, BLK_E_RANGE);
	BAD("write at sector 2^64-2 (no wrap-around)", RAW_WRITE, UINT64_MAX - 1, junk, 4096, BLK_E_RANGE);
	BAD("write of zero bytes", RAW_WRITE, area, junk, 0, BLK_E_LEN);
	BAD("write of 1000 bytes (not whole sectors)", RAW_WRITE, area, junk, 1000, BLK_E_LEN);
	BAD("read of 513 bytes", RAW_READ, area, junk, 513, BLK_E_LEN);
	BAD("write of 1 MiB + 512 bytes", RAW_WRITE, area, junk, RAW_MAX_BYTES + 512, BLK_E_TOOBIG);
	BAD("write from a kernel address", RAW_WRITE, area, (void *)0x80200000ul, 4096, BLK_E_FAULT);
	BAD("write from an unmapped address", RAW_WRITE, area, (void *)0x3000000000ul, 4096, BLK_E_FAULT);
	BAD("write from NULL", RAW_WRITE, area, NULL, 512, BLK_E_FAULT);
	uint8_t *brk = sbrk(0);
	BAD("write from a buffer running off the heap", RAW_WRITE, area, brk - 512, 8192, BLK_E_FAULT);
	BAD("read into the program's read-only text", RAW_READ, area, (void *)(uintptr_t)&test_bad, 512, BLK_E_FAULT);
	BAD("read into the kernel-information page", RAW_READ, area, (void *)(uintptr_t)UKINFO, 512, BLK_E_FAULT);
	BAD("read into the queue page", RAW_READ, area, (void *)(uintptr_t)UDISKQ(0), 512, BLK_E_FAULT);
	BAD("flush carrying 512 bytes", RAW_FLUSH, 0, junk, 512, BLK_E_LEN);
	BAD("unknown operation 7", 7, area, junk, 512, BLK_E_OP);
	raw_req_make(&q, RAW_READ, unit, area, junk, 512, &word);
	q.flags = RAW_F_FUA;
	expect("FUA on a read", submit_word(&q, &word), BLK_E_OP);
	q.flags = 0x80;
	expect("unknown flag", submit_word(&q, &word), BLK_E_OP);
	raw_req_make(&q, RAW_WRITE, 99, area, junk, 512, &word);
	expect("write to unit 99", submit_word(&q, &word), BLK_E_UNIT);

	/* Bad completion words: nothing may be queued. */
	raw_req_make(&q, RAW_WRITE, unit, area, junk, 512, (volatile int32_t *)0x80200000ul);
	expect("completion word in the kernel", raw_submit(&q, 1), K_E_FAULT);
	raw_req_make(&q, RAW_WRITE, unit, area, junk, 512, (volatile int32_t *)((uintptr_t)&word + 1));
	expect("misaligned completion word", raw_submit(&q, 1), K_E_FAULT);
	raw_req_make(&q, RAW_WRITE, unit, area, junk, 512, (volatile int32_t *)(uintptr_t)UKINFO);
	expect("read-only completion word", raw_submit(&q, 1), K_E_FAULT);

	/* Bad calls. */
	expect("raw_submit from a kernel address", raw_submit((void *)0x80200000ul, 1), K_E_FAULT);
	raw_req_make(&q, RAW_WRITE, unit, area, junk, 512, &word);
	expect("raw_submit of 0 requests", raw_submit(&q, 0), K_E_INVAL);
	expect("raw_submit of 257 requests", raw_submit(&q, RAW_MAX_BATCH + 1), K_E_INVAL);
	expect("unknown raw_io command", sys_call2(SYS_raw_io, 99, 0), K_E_INVAL);
	struct raw_info ri;
	expect("raw_info of unit 99", raw_info(99, &ri), BLK_E_UNIT);
	expect("raw_info into the kernel", raw_info(unit, (void *)0x80200000ul), K_E_FAULT);
	expect("raw_set policy 5", raw_set(unit, RAW_SET_SCHED, 5), BLK_E_INVAL);
	expect("raw_set depth 0", raw_set(unit, RAW_SET_DEPTH, 0), BLK_E_INVAL);
	expect("raw_set setting 9", raw_set(unit, 9, 1), K_E_INVAL);

	/* A batch with a bad request in the middle stops there. */
	static struct io b[4];
	uint8_t *bb = malloc(4 * 512);
	struct raw_req batch[4];
	for (int i = 0; i < 4; i++) {
		pat_fill(bb + i * 512, 512, unit, area + 100 + (uint64_t)i, 6);
		raw_req_make(&batch[i], RAW_WRITE, unit, area + 100 + (uint64_t)i, bb + i * 512, 512, &b[i].word);
		b[i].word = SENTINEL;
	}
	batch[2].sector = cap;   /* past the end */
	expect("batch of 4 with the third past the end", raw_submit(batch, 4), 2);
	raw_wait(0);
	nchecks += 2;
	if (b[0].word != 0 || b[1].word != 0)
		fail("the good requests of the batch: %d %d", (int)b[0].word, (int)b[1].word);
	if (b[2].word != SENTINEL || b[3].word != SENTINEL)
		fail("requests at and after the bad one were touched: %d %d", (int)b[2].word, (int)b[3].word);

	/* Nothing was pinned and kept, nothing written where the bad writes aimed. */
	raw_wait(0);
	nchecks++;
	if (exo_kinfo()->free_pages != free0)
		fail("free pages %lu after the bad requests, %lu before", (unsigned long)exo_kinfo()->free_pages,
		     (unsigned long)free0);
	/* A write may come from read-only memory: the device only reads it. */
	static struct io ro;
	raw_req_make(&ro.q, RAW_WRITE, unit, area + 200, (void *)(uintptr_t)&test_bad, 512, &ro.word);
	struct io *rov[1] = { &ro };
	run_keep(rov, 1, 1);
	memset(p1, 0, 64 * 512);
	memset(p2, 0, 16 * 512);
	pre[0].q.op = pre[1].q.op = RAW_READ;
	run_keep(pv, 2, 2);
	verify(pv, 2, 5);
	printf("disktest: bad input: %d calls answered with the expected result, disk and memory unharmed\n",
	       nexpected - expected0);
#undef BAD
}

/* ---- queue full ------------------------------------------------------------ */

static void test_qfull(unsigned unit)
{
	enum { N = BLK_QUEUE_MAX };
	static struct io ios[N + 1];
	uint8_t *mem = malloc((N + 1) * 512);
	uint64_t stride = info_of(unit).capacity / (N + 1);
	int accepted = 0;
	long r = 0;
	struct blk_export x;
	for (int i = 0; i <= N; i++) {
		raw_req_make(&ios[i].q, RAW_READ, unit, (uint64_t)i * stride, mem + i * 512, 512, &ios[i].word);
		ios[i].word = SENTINEL;
		r = raw_submit(&ios[i].q, 1);
		nrequests++;
		if (r != 1)
			break;
		accepted++;
	}
	raw_queue_snapshot(unit, &x);
	expect("the request after the queue filled", r, BLK_E_QFULL);
	nchecks += 2;
	if (accepted != N || x.ninflight + x.nqueued != N)
		fail("unit %u: queue full after %d requests (page: %u)", unit, accepted, x.ninflight + x.nqueued);
	if (ios[accepted].word != SENTINEL)
		fail("the refused request's word changed to %d", (int)ios[accepted].word);
	raw_wait(0);
	for (int i = 0; i < accepted; i++) {
		nchecks++;
		if (ios[i].word != 0)
			fail("read %d completed with %d", i, (int)ios[i].word);
	}
	/* Room again. */
	r = raw_submit(&ios[N].q, 1);
	nrequests++;
	raw_wait(0);
	expect("a request once the queue has drained", r, 1);
	printf("disktest: unit %u: queue full at %d requests, the next refused, all completed\n", unit, accepted);
	free(mem);
}

/* ---- exit with requests in flight ------------------------------------------- */

/* The child: queue 64 reads and 64 writes of 64 KB into and from its heap,
 * and exit at once.  Its status is how many were pending as it left. */
static int exit_child(unsigned unit)
{
	enum { N = 64 };
	static struct raw_req q[2 * N];
	static volatile int32_t words[2 * N];
	uint8_t *mem = malloc(2 * N * 65536);
	if (mem == NULL)
		return 255;
	uint64_t cap = info_of(unit).capacity, stride = cap / (2 * N);
	for (int i = 0; i < 2 * N; i++) {
		raw_req_make(&q[i], i < N ? RAW_READ : RAW_WRITE, unit, (uint64_t)i * stride, mem + (size_t)i * 65536,
		             65536, &words[i]);
		if (i >= N)
			pat_fill(mem + (size_t)i * 65536, 65536, unit, (uint64_t)i * stride, 7);
	}
	long r = raw_submit(q, 2 * N);
	if (r != 2 * N)
		return 254;
	long pending = pending_now();
	return pending > 200 ? 200 : (int)pending;   /* exit now, requests in flight */
}

static void test_exit(unsigned unit)
{
	/* Everything this test allocates, before counting free pages. */
	static struct io w, r;
	uint8_t *a = malloc(65536), *b = malloc(65536);
	printf("disktest: unit %u: a child exits with requests in flight\n", unit);
	uint64_t free0 = exo_kinfo()->free_pages;
	char ubuf[8];
	snprintf(ubuf, sizeof ubuf, "%u", unit);
	char *argv[] = { "disktest", "exit-child", ubuf, NULL };
	int pid = exo_spawn("/bin/disktest", argv, NULL);
	if (pid < 0) {
		fail("spawn: %s", exo_strerror(pid));
		return;
	}
	int status = -1;
	exo_wait(pid, &status);
	struct blk_export x;
	raw_queue_snapshot(unit, &x);
	uint64_t free_mid = exo_kinfo()->free_pages;
	printf("disktest: child exited with %d requests pending (the queue page shows %u in flight, %u queued; "
	       "%lu pages fewer free than before it)\n", status, x.ninflight, x.nqueued,
	       (unsigned long)(free0 > free_mid ? free0 - free_mid : 0));
	nchecks++;
	if (status < 1 || status > 128)
		fail("the child should have exited with requests in flight (status %d)", status);
	/* The disk goes on working meanwhile and afterwards. */
	uint64_t s = info_of(unit).capacity / 2 + 8;
	pat_fill(a, 65536, unit, s, 8);
	raw_req_make(&w.q, RAW_WRITE, unit, s, a, 65536, &w.word);
	raw_req_make(&r.q, RAW_READ, unit, s, b, 65536, &r.word);
	struct io *wv[1] = { &w }, *rv[1] = { &r };
	run_keep(wv, 1, 1);
	run_keep(rv, 1, 1);
	verify(rv, 1, 8);
	/* Once the child's requests are done, all its pages are free again. */
	uint64_t deadline = exo_time() + exo_ns_to_time(60000000000ull);
	do {
		raw_queue_snapshot(unit, &x);
		if (x.ninflight + x.nqueued == 0)
			break;
		exo_sleep_ns(10000000);
	} while (exo_time() < deadline);
	uint64_t free1 = exo_kinfo()->free_pages;
	nchecks++;
	if (free1 < free0)
		fail("%lu pages still missing after the child's requests completed", (unsigned long)(free0 - free1));
	printf("disktest: the orphaned requests completed; free pages %lu before the child, %lu after\n",
	       (unsigned long)free0, (unsigned long)free1);
	free(a);
	free(b);
}

/* ---- raw path off ----------------------------------------------------------- */

static int test_perm(void)
{
	struct raw_req q;
	static volatile int32_t word = SENTINEL;
	uint8_t buf[512];
	raw_req_make(&q, RAW_READ, 0, 0, buf, 512, &word);
	struct raw_info in;
	expect("raw_submit with the raw path off", raw_submit(&q, 1), BLK_E_PERM);
	expect("raw_wait with the raw path off", raw_wait(0), BLK_E_PERM);
	expect("raw_info with the raw path off", raw_info(0, &in), BLK_E_PERM);
	expect("raw_set with the raw path off", raw_set(0, RAW_SET_DEPTH, 4), BLK_E_PERM);
	nchecks += 2;
	if (word != SENTINEL)
		fail("completion word changed");
	if (raw_enabled())
		fail("kinfo says the raw path is on");
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "all";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(what, "perm") == 0)
		return test_perm();
	if (strcmp(what, "qwrite") == 0) {
		*(volatile uint64_t *)(uintptr_t)UDISKQ(0) = 0;
		printf("FAIL: the queue page took a store\n");
		return 1;
	}
	if (!raw_enabled()) {
		printf("disktest: the raw disk path is off; boot with rawio=1 "
		       "(make qemu BOOTARGS=rawio=1 CMD=disktest)\n");
		return 2;
	}
	unsigned nunits = raw_ndisks();
	if (nunits == 0) {
		printf("disktest: no disks\n");
		return 2;
	}
	if (strcmp(what, "exit-child") == 0 && argc > 2)
		return exit_child((unsigned)atoi(argv[2]));
	uint64_t t0 = exo_time();
	if (strcmp(what, "all") == 0) {
		for (unsigned u = 0; u < nunits; u++) {
			struct raw_info in = info_of(u);
			printf("disktest: unit %u: %s, %lu sectors, %s completion\n", u, in.name,
			       (unsigned long)in.capacity, in.polled ? "polled" : "interrupt");
		}
		test_patterns(nunits);
		for (unsigned u = 0; u < nunits; u++) {
			test_inflight(u);
			test_flush(u);
			test_export(u);
		}
	} else if (strcmp(what, "bad") == 0) {
		test_bad();
	} else if (strcmp(what, "qfull") == 0) {
		test_qfull(0);
	} else if (strcmp(what, "exit") == 0) {
		test_exit(0);
	} else {
		fprintf(stderr, "usage: disktest [all|bad|qfull|exit|perm|qwrite]\n");
		return 2;
	}
	uint64_t ms = exo_time_to_ns(exo_time() - t0) / 1000000;
	if (failures == 0)
		printf("disktest: ok: %lu checks, %lu requests, %lu KiB verified, %u unit%s, %lu ms\n",
		       nchecks, nrequests, (unsigned long)(bytes_verified >> 10), nunits, nunits == 1 ? "" : "s",
		       (unsigned long)ms);
	else
		printf("disktest: FAILED: %d of %lu checks\n", failures, nchecks);
	return failures ? 1 : 0;
}
