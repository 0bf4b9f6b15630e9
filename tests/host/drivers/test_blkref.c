/*
 * test_blkref.c - the block layer against an independent reference model.
 *
 * Random submissions (reads, writes with and without FUA, flushes, at
 * random, overlapping and repeated sectors), completions in random order with
 * random status, and changes of depth and policy.  After every step the
 * requests the block layer started must be exactly those the reference
 * would have started, and the exported page must show what the reference
 * says it should.
 *
 * The reference is written differently on purpose: a flat array scanned with
 * the rules stated directly in terms of arrival numbers.
 *   - A read or write may start once no FLUSH that arrived before it is
 *     still outstanding.
 *   - A FLUSH may start once everything that arrived before it has completed.
 *   - At most `depth` requests are in the device.
 *   - Among those allowed, C-LOOK takes the lowest (sector, arrival) at or
 *     past the head, else the lowest overall; FIFO takes the oldest.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/blk.h"
#include "check.h"
#include "fakedev.h"

#define NPOOL 600

enum { FREE, QUEUED, INFLIGHT };

struct ref {
	int state;
	int op, fua;
	uint64_t sector;
	uint32_t len;
	uint64_t seq;
	uint64_t started;         /* start order, for in-flight requests */
};

static struct fakedev fd;
static struct treq tr[NPOOL];
static struct ref ref[NPOOL];
static uint64_t ref_head, ref_seq, ref_completed, ref_starts;
static uint32_t ref_depth;
static int ref_sched;
static int flush_pct;          /* how often a submission is a FLUSH */
static int ref_log[FAKE_LOGMAX], ref_nlog;
static struct blk_export page;

static int count(int state)
{
	int n = 0;
	for (int i = 0; i < NPOOL; i++)
		n += ref[i].state == state;
	return n;
}

/* Oldest outstanding request, and oldest outstanding FLUSH (arrival numbers). */
static uint64_t oldest, oldest_flush;

static void scan(void)
{
	oldest = oldest_flush = UINT64_MAX;
	for (int j = 0; j < NPOOL; j++) {
		if (ref[j].state == FREE)
			continue;
		if (ref[j].seq < oldest)
			oldest = ref[j].seq;
		if (ref[j].op == BLK_FLUSH && ref[j].seq < oldest_flush)
			oldest_flush = ref[j].seq;
	}
}

/* May queued request i start (ignoring depth)?  Needs scan() first. */
static bool allowed(int i)
{
	if (ref[i].op == BLK_FLUSH)
		return ref[i].seq == oldest;
	return ref[i].seq < oldest_flush;
}

/* Is a before b in C-LOOK's sweep from the head? */
static bool clook_before(int a, int b)
{
	bool pa = ref[a].sector >= ref_head, pb = ref[b].sector >= ref_head;
	if (pa != pb)
		return pa;
	if (ref[a].sector != ref[b].sector)
		return ref[a].sector < ref[b].sector;
	return ref[a].seq < ref[b].seq;
}

static bool served_before(int a, int b)
{
	if (ref_sched == BLK_SCHED_FIFO)
		return ref[a].seq < ref[b].seq;
	return clook_before(a, b);
}

static int ref_pick(void)
{
	if (count(INFLIGHT) >= (int)ref_depth)
		return -1;
	int best = -1;
	for (int i = 0; i < NPOOL; i++)
		if (ref[i].state == QUEUED && allowed(i) &&
		    (best < 0 || served_before(i, best)))
			best = i;
	return best;
}

static void ref_dispatch(void)
{
	int i;
	scan();      /* starting a request does not change what is outstanding */
	while ((i = ref_pick()) >= 0) {
		ref[i].state = INFLIGHT;
		ref[i].started = ++ref_starts;
		if (ref[i].op != BLK_FLUSH)
			ref_head = ref[i].sector + ref[i].len;
		ref_log[ref_nlog++] = i;
	}
}

/* The block layer started exactly what the reference did, in that order. */
static void compare_starts(void)
{
	CHECK_EQ(fd.nlog, ref_nlog);
	for (int i = 0; i < ref_nlog; i++)
		CHECK_EQ(fd.log[i], ref_log[i]);
	CHECK_EQ(fd.ndev, count(INFLIGHT));
}

/* The order the page should list requests in: in flight by start, then
 * those allowed to start in service order, then the rest by arrival. */
static bool listed_before(int a, int b)
{
	int ka = ref[a].state == INFLIGHT ? 0 : allowed(a) ? 1 : 2;
	int kb = ref[b].state == INFLIGHT ? 0 : allowed(b) ? 1 : 2;
	if (ka != kb)
		return ka < kb;
	if (ka == 0)
		return ref[a].started < ref[b].started;
	if (ka == 1)
		return served_before(a, b);
	return ref[a].seq < ref[b].seq;
}

static int cmp_listed(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return listed_before(x, y) ? -1 : listed_before(y, x) ? 1 : 0;
}

static void compare_page(void)
{
	struct blk_export x;
	CHECK_EQ(blkx_snapshot(&page, &x), 0);
	CHECK_EQ(x.gen % 2, 0);
	CHECK_EQ(x.magic, BLKX_MAGIC);
	CHECK_EQ(x.head, ref_head);
	CHECK_EQ(x.sched, ref_sched);
	CHECK_EQ(x.depth, ref_depth);
	CHECK_EQ(x.nsubmitted, ref_seq);
	CHECK_EQ(x.ncompleted, ref_completed);
	CHECK_EQ(x.ninflight, count(INFLIGHT));
	CHECK_EQ(x.nqueued, count(QUEUED));

	int order[NPOOL], n = 0;
	for (int i = 0; i < NPOOL; i++)
		if (ref[i].state != FREE)
			order[n++] = i;
	scan();
	qsort(order, (size_t)n, sizeof(int), cmp_listed);
	int shown = n < (int)BLKX_NENT ? n : (int)BLKX_NENT;
	CHECK_EQ(x.nent, shown);
	for (int k = 0; k < shown; k++) {
		const struct ref *r = &ref[order[k]];
		const struct blk_export_ent *e = &x.ent[k];
		CHECK_EQ(e->seq, (uint32_t)r->seq);
		CHECK_EQ(e->op, r->op);
		CHECK_EQ(e->sector, r->sector);
		CHECK_EQ(e->nsectors, r->len);
		int flags = (r->state == INFLIGHT ? BLKX_F_INFLIGHT : 0) |
		            (r->fua ? BLKX_F_FUA : 0) |
		            (r->state == QUEUED && !allowed(order[k]) ? BLKX_F_BARRIER : 0);
		CHECK_EQ(e->flags, flags);
	}
}

static void step_submit(int u, uint64_t cap)
{
	int i = 0;
	while (i < NPOOL && ref[i].state != FREE)
		i++;
	CHECK(i < NPOOL);
	int roll = (int)rng_below(100);
	int op = roll < flush_pct ? BLK_FLUSH : roll < 50 ? BLK_READ : BLK_WRITE;
	uint32_t len = op == BLK_FLUSH ? 0 : 1 + (uint32_t)rng_below(64);
	/* Cluster some requests on a few sectors so ties and overlaps occur. */
	uint64_t sector = op == BLK_FLUSH ? 0 :
	                  rng_below(4) == 0 ? rng_below(8) * 16 : rng_below(cap - len + 1);
	treq_make(&tr[i], i, u, op, sector, len);
	int fua = op == BLK_WRITE && rng_below(4) == 0;
	if (fua)
		tr[i].r.flags = BLK_F_FUA;

	int outstanding = count(QUEUED) + count(INFLIGHT);
	int e = blk_submit(&tr[i].r);
	if (outstanding >= BLK_QUEUE_MAX) {
		CHECK_EQ(e, BLK_E_QFULL);
		return;
	}
	CHECK_EQ(e, 0);
	ref[i] = (struct ref){ QUEUED, op, fua, sector, len, ++ref_seq, 0 };
	ref_dispatch();
}

static void step_complete(void)
{
	if (fd.ndev == 0)
		return;
	int k = (int)rng_below((uint64_t)fd.ndev);
	int id = ((struct treq *)fd.dev[k]->priv)->id;
	int status = rng_below(10) == 0 ? BLK_E_IO : 0;
	CHECK_EQ(ref[id].state, INFLIGHT);
	ref[id].state = FREE;
	ref_completed++;
	fake_complete(&fd, k, status);
	CHECK_EQ(tr[id].ndone, 1);
	CHECK_EQ(tr[id].status, status);
	ref_dispatch();
}

static void run(uint64_t seed, int steps)
{
	rng_seed(seed);
	blk_reset();
	memset(ref, 0, sizeof(ref));
	ref_head = ref_seq = ref_completed = ref_starts = 0;
	ref_nlog = 0;
	uint64_t cap = 1000 + rng_below(100000);
	int u = fake_attach(&fd, cap, 8);
	CHECK_EQ(blk_export_attach(u, &page), 0);
	ref_depth = BLK_DEPTH_DEFAULT;
	ref_sched = BLK_SCHED_CLOOK;

	/* Phases of mostly submitting and mostly completing, so the queue
	 * fills to capacity and drains again. */
	int bias = 70;
	for (int s = 0; s < steps; s++) {
		if (s % 500 == 0)
			bias = 100 - bias;
		int roll = (int)rng_below(1000);
		if (roll < 5) {
			uint32_t d = 1 + (uint32_t)rng_below(10);
			ref_depth = d < 8 ? d : 8;
			CHECK_EQ(blk_set_depth(u, d), ref_depth);
			ref_dispatch();
		} else if (roll < 8) {
			ref_sched = (int)rng_below(2);
			CHECK_EQ(blk_set_sched(u, ref_sched), 0);
		} else if (roll % 100 < bias) {
			step_submit(u, cap);
		} else {
			step_complete();
		}
		compare_starts();
		compare_page();
	}
	/* Drain. */
	while (fd.ndev > 0) {
		step_complete();
		compare_starts();
		compare_page();
	}
	CHECK_EQ(count(QUEUED), 0);
	CHECK(fd.maxdev <= 8);
}

int main(void)
{
	/* Without flushes C-LOOK sorts long queues; with many, most of the
	 * queue waits behind barriers. */
	static const int pct[3] = { 0, 1, 6 };
	for (uint64_t seed = 1; seed <= 9; seed++) {
		flush_pct = pct[seed % 3];
		run(seed, 3000);
	}
	printf("blkref: block layer matches the reference model\n");
	return 0;
}
