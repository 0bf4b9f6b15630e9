/*
 * test_blkqueue.c - the block layer's request checking, C-LOOK and FIFO
 * ordering, flush barriers, bounded depth and exactly-once completion,
 * against the fake device (fakedev.h), which shows every start.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/blk.h"
#include "check.h"
#include "fakedev.h"

static struct fakedev fd;
static struct treq tr[600];

/* Submit tr[id] built from the arguments; returns blk_submit's result. */
static int submit(int id, int unit, int op, uint64_t sector, uint32_t n)
{
	treq_make(&tr[id], id, unit, op, sector, n);
	return blk_submit(&tr[id].r);
}

/* The start log from position `from` equals ids[0..n). */
static void check_log(int from, const int *ids, int n)
{
	CHECK_EQ(fd.nlog - from, n);
	for (int i = 0; i < n; i++)
		CHECK_EQ(fd.log[from + i], ids[i]);
}

static int fresh_unit(uint64_t nsectors, uint32_t max_inflight)
{
	blk_reset();
	int u = fake_attach(&fd, nsectors, max_inflight);
	CHECK_EQ(u, 0);
	return u;
}

/* ---- checking: every BLK_E_* a submitter can cause ----------------------- */

static void test_validation(void)
{
	int u = fresh_unit(1000, 8);
	struct treq t;

	/* Exactly reaching the end is fine; one more is not. */
	CHECK_EQ(submit(0, u, BLK_READ, 992, 8), 0);
	CHECK_EQ(submit(1, u, BLK_READ, 993, 8), BLK_E_RANGE);
	CHECK_EQ(submit(1, u, BLK_READ, 1000, 1), BLK_E_RANGE);
	CHECK_EQ(submit(1, u, BLK_WRITE, UINT64_MAX - 3, 8), BLK_E_RANGE);   /* no wrap-around */

	CHECK_EQ(submit(1, u, BLK_READ, 0, 0), BLK_E_LEN);
	CHECK_EQ(submit(1, u, BLK_READ, 0, BLK_MAX_SECTORS + 1), BLK_E_TOOBIG);

	/* Unknown unit, op, flags; missing callback. */
	CHECK_EQ(submit(1, 1, BLK_READ, 0, 1), BLK_E_UNIT);
	CHECK_EQ(submit(1, -1, BLK_READ, 0, 1), BLK_E_UNIT);
	CHECK_EQ(submit(1, BLK_MAX_UNITS, BLK_READ, 0, 1), BLK_E_UNIT);
	CHECK_EQ(submit(1, u, 3, 0, 1), BLK_E_OP);
	treq_make(&t, 1, u, BLK_WRITE, 0, 1);
	t.r.flags = 0x80;
	CHECK_EQ(blk_submit(&t.r), BLK_E_OP);
	treq_make(&t, 1, u, BLK_READ, 0, 1);
	t.r.flags = BLK_F_FUA;                       /* FUA means nothing on a read */
	CHECK_EQ(blk_submit(&t.r), BLK_E_OP);
	treq_make(&t, 1, u, BLK_READ, 0, 1);
	t.r.done = NULL;
	CHECK_EQ(blk_submit(&t.r), BLK_E_INVAL);
	CHECK_EQ(blk_submit(NULL), BLK_E_INVAL);

	/* Segments. */
	struct blk_seg segs[BLK_MAX_SEGS + 1];
	for (int i = 0; i <= BLK_MAX_SEGS; i++) {
		segs[i].addr = (uint64_t)(uintptr_t)fake_buf;
		segs[i].len = 512;
	}
	treq_make(&t, 1, u, BLK_WRITE, 0, 3);
	t.r.seg = segs; t.r.nseg = 3;
	segs[1].len = 100;                            /* 1124 bytes: not whole sectors */
	CHECK_EQ(blk_submit(&t.r), BLK_E_LEN);
	segs[1].len = 1024;                           /* 2048 bytes for a 3-sector request */
	CHECK_EQ(blk_submit(&t.r), BLK_E_ALIGN);
	segs[1].len = 0;                              /* empty segment */
	CHECK_EQ(blk_submit(&t.r), BLK_E_ALIGN);
	segs[1].len = 512; segs[1].addr = 0;          /* no buffer */
	CHECK_EQ(blk_submit(&t.r), BLK_E_ALIGN);
	segs[1].addr = (uint64_t)(uintptr_t)fake_buf;
	t.r.nseg = 0;
	CHECK_EQ(blk_submit(&t.r), BLK_E_ALIGN);
	t.r.nseg = 3; t.r.seg = NULL;
	CHECK_EQ(blk_submit(&t.r), BLK_E_ALIGN);
	t.r.seg = segs; t.r.nseg = BLK_MAX_SEGS + 1;
	t.r.nsectors = BLK_MAX_SEGS + 1;
	CHECK_EQ(blk_submit(&t.r), BLK_E_TOOBIG);
	/* Unaligned pieces that add up are fine: 100 + 924 + 512 = 3 sectors. */
	segs[0].len = 100; segs[1].len = 924; segs[2].len = 512;
	t.r.nseg = 3; t.r.nsectors = 3;
	CHECK_EQ(blk_validate(&t.r), 0);

	/* A FLUSH carries no data. */
	CHECK_EQ(submit(1, u, BLK_FLUSH, 0, 0), 0);
	treq_make(&t, 2, u, BLK_FLUSH, 0, 0);
	t.r.nsectors = 1;
	CHECK_EQ(blk_submit(&t.r), BLK_E_LEN);

	/* Rejected requests never reach the device or their callback. */
	CHECK_EQ(fd.nlog, 1);
	CHECK_EQ(tr[0].ndone, 0);
	CHECK_EQ(t.ndone, 0);

	/* Registration and settings. */
	struct blkdev_info bad = { .nsectors = 0, .max_inflight = 4, .name = "bad" };
	CHECK_EQ(blk_register(&fake_ops, &fd, &bad), BLK_E_INVAL);
	bad = (struct blkdev_info){ .nsectors = 8, .max_inflight = 4, .blksize = 256, .name = "bad" };
	CHECK_EQ(blk_register(&fake_ops, &fd, &bad), BLK_E_INVAL);      /* block below a sector */
	bad.blksize = 1536;
	CHECK_EQ(blk_register(&fake_ops, &fd, &bad), BLK_E_INVAL);      /* not a power of two */
	struct blkdev_ops noop = { NULL, NULL };
	CHECK_EQ(blk_register(&noop, &fd, &fd.info), BLK_E_INVAL);
	for (int i = 1; i < BLK_MAX_UNITS; i++)
		CHECK_EQ(blk_register(&fake_ops, &fd, &fd.info), i);
	CHECK_EQ(blk_register(&fake_ops, &fd, &fd.info), BLK_E_UNIT);
	CHECK_EQ(blk_nunits(), BLK_MAX_UNITS);
	CHECK_EQ(blk_capacity(u), 1000);
	CHECK_EQ(blk_capacity(-1), 0);
	CHECK_EQ(blk_set_depth(u, 0), BLK_E_INVAL);
	CHECK_EQ(blk_set_depth(99, 1), BLK_E_UNIT);
	CHECK_EQ(blk_set_sched(u, 7), BLK_E_INVAL);
	CHECK_EQ(blk_set_sched(99, BLK_SCHED_FIFO), BLK_E_UNIT);
	CHECK_EQ(blk_export_attach(99, NULL), BLK_E_UNIT);
}

/* ---- queue full ---------------------------------------------------------- */

static void test_queue_full(void)
{
	int u = fresh_unit(100000, 8);
	for (int i = 0; i < BLK_QUEUE_MAX; i++)
		CHECK_EQ(submit(i, u, BLK_READ, (uint64_t)i * 8, 8), 0);
	/* In-flight requests count: 2 in the device + 254 queued is full. */
	CHECK_EQ(fd.ndev, BLK_DEPTH_DEFAULT);
	CHECK_EQ(submit(BLK_QUEUE_MAX, u, BLK_READ, 0, 8), BLK_E_QFULL);
	CHECK_EQ(submit(BLK_QUEUE_MAX, u, BLK_FLUSH, 0, 0), BLK_E_QFULL);
	CHECK_EQ(tr[BLK_QUEUE_MAX].ndone, 0);
	fake_complete(&fd, 0, 0);
	CHECK_EQ(submit(BLK_QUEUE_MAX, u, BLK_READ, 0, 8), 0);
	CHECK_EQ(submit(BLK_QUEUE_MAX + 1, u, BLK_READ, 0, 8), BLK_E_QFULL);
	while (fd.ndev > 0)
		fake_complete(&fd, 0, 0);
	for (int i = 0; i <= BLK_QUEUE_MAX; i++)
		CHECK_EQ(tr[i].ndone, 1);
}

/* ---- C-LOOK against a sort ----------------------------------------------- */

static int cmp_sector(const void *a, const void *b)
{
	uint64_t x = tr[*(const int *)a].r.sector, y = tr[*(const int *)b].r.sector;
	return x < y ? -1 : x > y;
}

/*
 * A batch of non-overlapping requests submitted at once, from a random head
 * position: the first `depth` go to the device as they arrive; the rest must
 * come out in ascending order from the head position the last of those
 * leaves, wrapping to the lowest.
 */
static void test_clook_random(void)
{
	rng_seed(1);
	for (int trial = 0; trial < 400; trial++) {
		uint64_t slots = 300 + rng_below(100000);      /* 8-sector slots on the disk */
		int u = fresh_unit(slots * 8, 16);
		uint32_t depth = 1 + (uint32_t)rng_below(4);
		CHECK_EQ(blk_set_depth(u, depth), depth);

		/* Put the head somewhere by running one request there. */
		uint64_t h0 = rng_below(slots) * 8;
		CHECK_EQ(submit(0, u, BLK_READ, h0, 8), 0);
		fake_complete(&fd, 0, 0);

		int n = 1 + (int)rng_below(250);
		static bool used[100300];
		memset(used, 0, slots);
		int first = fd.nlog;
		for (int i = 1; i <= n; i++) {
			uint64_t s;
			do s = rng_below(slots); while (used[s]);
			used[s] = true;
			int op = rng_below(2) ? BLK_READ : BLK_WRITE;
			CHECK_EQ(submit(i, u, op, s * 8 + rng_below(2), 1 + (uint32_t)rng_below(6)), 0);
		}
		while (fd.ndev > 0)
			fake_complete(&fd, (int)rng_below((uint64_t)fd.ndev), 0);

		/* Expected order. */
		int expect[256], m = 0;
		int direct = n < (int)depth ? n : (int)depth;
		for (int i = 1; i <= direct; i++)
			expect[m++] = i;
		int rest[256], nrest = 0;
		for (int i = direct + 1; i <= n; i++)
			rest[nrest++] = i;
		qsort(rest, (size_t)nrest, sizeof(int), cmp_sector);
		struct blkreq *last = &tr[direct].r;
		uint64_t head = last->sector + last->nsectors;
		int k = 0;
		while (k < nrest && tr[rest[k]].r.sector < head)
			k++;
		for (int i = 0; i < nrest; i++)
			expect[m++] = rest[(k + i) % nrest];
		check_log(first, expect, m);
		for (int i = 0; i <= n; i++)
			CHECK_EQ(tr[i].ndone, 1);
		CHECK(fd.maxdev <= (int)depth);
	}
}

/* ---- head position, wrap-around, same sector ----------------------------- */

static void test_wrap_and_head(void)
{
	int u = fresh_unit(10000, 8);
	static struct blk_export page;
	CHECK_EQ(blk_export_attach(u, &page), 0);
	CHECK_EQ(blk_set_depth(u, 1), 1);
	CHECK_EQ(page.head, 0);

	CHECK_EQ(submit(0, u, BLK_READ, 5000, 10), 0);       /* straight to the device */
	CHECK_EQ(page.head, 5010);
	CHECK_EQ(submit(1, u, BLK_READ, 7000, 1), 0);
	CHECK_EQ(submit(2, u, BLK_READ, 100, 1), 0);
	CHECK_EQ(submit(3, u, BLK_READ, 5010, 1), 0);        /* exactly at the head: this sweep */
	CHECK_EQ(submit(4, u, BLK_READ, 5005, 1), 0);        /* just behind it: next sweep */
	CHECK_EQ(submit(5, u, BLK_WRITE, 9999, 1), 0);       /* the last sector */
	CHECK_EQ(submit(6, u, BLK_READ, 100, 1), 0);         /* 2's sector: the sweep has passed it */
	CHECK_EQ(page.head, 5010);
	int first = fd.nlog;
	uint64_t heads[6];
	for (int i = 0; i < 6; i++) {
		fake_complete(&fd, 0, 0);
		heads[i] = page.head;
	}
	fake_complete(&fd, 0, 0);
	check_log(first, (int[]){3, 1, 5, 2, 4, 6}, 6);
	uint64_t want[6] = { 5011, 7001, 10000, 101, 5006, 101 };
	for (int i = 0; i < 6; i++)
		CHECK_EQ(heads[i], want[i]);

	/* At the very end of the disk every request is "behind": wrap. */
	CHECK_EQ(submit(7, u, BLK_READ, 9990, 10), 0);
	CHECK_EQ(page.head, 10000);
	CHECK_EQ(submit(8, u, BLK_READ, 9995, 1), 0);
	CHECK_EQ(submit(9, u, BLK_READ, 3, 1), 0);
	first = fd.nlog;
	fake_complete(&fd, 0, 0);
	fake_complete(&fd, 0, 0);
	fake_complete(&fd, 0, 0);
	check_log(first, (int[]){9, 8}, 2);
	CHECK_EQ(blk_export_attach(u, NULL), 0);
}

/* ---- flush barriers ------------------------------------------------------ */

static void test_flush_barrier(void)
{
	int u = fresh_unit(10000, 8);
	CHECK_EQ(blk_set_depth(u, 4), 4);

	/* Alone, a flush goes straight to the device. */
	CHECK_EQ(submit(0, u, BLK_FLUSH, 0, 0), 0);
	check_log(0, (int[]){0}, 1);
	/* Nothing passes a flush in flight, even with room in the device. */
	CHECK_EQ(submit(1, u, BLK_WRITE, 10, 1), 0);
	CHECK_EQ(fd.nlog, 1);
	fake_complete(&fd, 0, 0);
	check_log(1, (int[]){1}, 1);
	fake_complete(&fd, 0, 0);

	/* W500 W100 W900 start; the flush waits for all three to complete; the
	 * write at 50 and the read at 600 that follow it wait for the flush. */
	CHECK_EQ(submit(2, u, BLK_WRITE, 500, 1), 0);
	CHECK_EQ(submit(3, u, BLK_WRITE, 100, 1), 0);
	CHECK_EQ(submit(4, u, BLK_WRITE, 900, 1), 0);
	CHECK_EQ(submit(5, u, BLK_FLUSH, 0, 0), 0);
	CHECK_EQ(submit(6, u, BLK_WRITE, 50, 1), 0);
	CHECK_EQ(submit(7, u, BLK_READ, 600, 1), 0);
	check_log(2, (int[]){2, 3, 4}, 3);
	fake_complete(&fd, 1, 0);                 /* W100 */
	fake_complete(&fd, 0, 0);                 /* W500 */
	CHECK_EQ(fd.nlog, 5);
	fake_complete(&fd, 0, 0);                 /* W900: now the flush */
	check_log(5, (int[]){5}, 1);
	CHECK_EQ(fd.ndev, 1);
	fake_complete(&fd, 0, 0);                 /* the flush: the rest, in C-LOOK order */
	CHECK_EQ(tr[5].ndone, 1);
	check_log(6, (int[]){6, 7}, 2);           /* head was 901: wrap to 50, then 600 */
	fake_complete(&fd, 0, 0);
	fake_complete(&fd, 0, 0);

	/* Two flushes in a row, with a write between and after. */
	CHECK_EQ(submit(8, u, BLK_WRITE, 20, 1), 0);
	CHECK_EQ(submit(9, u, BLK_FLUSH, 0, 0), 0);
	CHECK_EQ(submit(10, u, BLK_FLUSH, 0, 0), 0);
	CHECK_EQ(submit(11, u, BLK_WRITE, 10, 1), 0);
	int first = fd.nlog;
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(fd.ndev, 1);             /* one at a time, each a barrier */
		fake_complete(&fd, 0, 0);
	}
	check_log(first - 1, (int[]){8, 9, 10, 11}, 4);

	/* A failed flush still releases what waits behind it. */
	CHECK_EQ(submit(12, u, BLK_WRITE, 30, 1), 0);
	CHECK_EQ(submit(13, u, BLK_FLUSH, 0, 0), 0);
	CHECK_EQ(submit(14, u, BLK_WRITE, 40, 1), 0);
	fake_complete(&fd, 0, 0);
	fake_complete(&fd, 0, BLK_E_IO);
	CHECK_EQ(tr[13].status, BLK_E_IO);
	CHECK_EQ(fd.ndev, 1);
	CHECK_EQ(fd.log[fd.nlog - 1], 14);
	fake_complete(&fd, 0, 0);
}

/* ---- bounded depth ------------------------------------------------------- */

static void test_depth(void)
{
	int u = fresh_unit(100000, 3);
	for (int i = 0; i < 20; i++)
		CHECK_EQ(submit(i, u, BLK_READ, (uint64_t)(i * 37 % 20) * 100, 4), 0);
	CHECK_EQ(fd.ndev, BLK_DEPTH_DEFAULT);
	/* Clamped to what the device can hold. */
	CHECK_EQ(blk_set_depth(u, 10), 3);
	CHECK_EQ(fd.ndev, 3);                     /* the extra slot is used at once */
	CHECK_EQ(blk_set_depth(u, 1), 1);
	CHECK_EQ(fd.ndev, 3);                     /* nothing is taken back ... */
	fake_complete(&fd, 0, 0);
	CHECK_EQ(fd.ndev, 2);                     /* ... and nothing new starts until */
	fake_complete(&fd, 0, 0);                 /* the device is below the depth */
	CHECK_EQ(fd.ndev, 1);
	fake_complete(&fd, 0, 0);
	CHECK_EQ(fd.ndev, 1);
	while (fd.ndev > 0) {
		CHECK_EQ(fd.ndev, 1);
		fake_complete(&fd, 0, 0);
	}
	CHECK_EQ(fd.nlog, 20);
	CHECK_EQ(fd.maxdev, 3);
}

/* ---- FIFO, and switching policy with a full queue ------------------------ */

static void test_fifo(void)
{
	int u = fresh_unit(100000, 8);
	CHECK_EQ(blk_set_sched(u, BLK_SCHED_FIFO), 0);
	CHECK_EQ(blk_set_depth(u, 1), 1);
	rng_seed(7);
	int n = 200;
	/* Distinct, non-overlapping requests in scrambled order. */
	for (int i = 0; i < n; i++)
		CHECK_EQ(submit(i, u, BLK_READ, (uint64_t)(i * 7919 % 9973) * 10, 1 + (uint32_t)rng_below(8)), 0);
	/* Half of them in FIFO order ... */
	for (int i = 0; i < n / 2; i++)
		fake_complete(&fd, 0, 0);
	for (int i = 0; i < n / 2 + 1; i++)
		CHECK_EQ(fd.log[i], i);
	/* ... then C-LOOK from where the head is: the remainder sorted and rotated. */
	CHECK_EQ(blk_set_sched(u, BLK_SCHED_CLOOK), 0);
	int first = fd.nlog;
	uint64_t head = tr[n / 2].r.sector + tr[n / 2].r.nsectors;
	while (fd.ndev > 0)
		fake_complete(&fd, 0, 0);
	CHECK_EQ(fd.nlog - first, n - (n / 2 + 1));
	int wraps = 0;
	for (int i = first; i < fd.nlog; i++) {
		uint64_t s = tr[fd.log[i]].r.sector;
		if (i == first)
			CHECK(s >= head || wraps++ == 0);
		else if (s < tr[fd.log[i - 1]].r.sector)
			wraps++;
	}
	CHECK(wraps <= 1);

	/* And back: a C-LOOK queue turned FIFO serves by arrival. */
	for (int i = 0; i < 50; i++)
		CHECK_EQ(submit(300 + i, u, BLK_WRITE, (uint64_t)(50 - i) * 100, 1), 0);
	CHECK_EQ(blk_set_sched(u, BLK_SCHED_FIFO), 0);
	first = fd.nlog;
	while (fd.ndev > 0)
		fake_complete(&fd, 0, 0);
	for (int i = 1; i < 50; i++)
		CHECK_EQ(fd.log[first + i - 1], 300 + i);
}

/* ---- done() exactly once ------------------------------------------------- */

static void test_done_once(void)
{
	int u = fresh_unit(1000, 8);
	CHECK_EQ(submit(0, u, BLK_READ, 0, 1), 0);
	struct blkreq *r = fd.dev[0];
	fake_complete(&fd, 0, 0);
	blk_complete(r, 0);                       /* a driver completing twice */
	blk_complete(r, BLK_E_IO);
	CHECK_EQ(tr[0].ndone, 1);
	CHECK_EQ(tr[0].status, 0);

	treq_make(&tr[1], 1, u, BLK_READ, 0, 1);  /* never submitted */
	blk_complete(&tr[1].r, 0);
	CHECK_EQ(tr[1].ndone, 0);
	blk_complete(NULL, 0);

	/* A positive status is not a success. */
	CHECK_EQ(submit(2, u, BLK_READ, 0, 1), 0);
	fake_complete(&fd, 0, 5);
	CHECK_EQ(tr[2].status, BLK_E_IO);

	/* A device that refuses: done() once with its error, and the next
	 * request still gets started. */
	CHECK_EQ(blk_set_depth(u, 1), 1);
	CHECK_EQ(submit(3, u, BLK_READ, 10, 1), 0);
	CHECK_EQ(submit(4, u, BLK_READ, 20, 1), 0);
	CHECK_EQ(submit(5, u, BLK_READ, 30, 1), 0);
	fd.refuse = BLK_E_UNSUPP;
	fake_complete(&fd, 0, 0);                 /* 3 done; 4 refused; 5 starts */
	CHECK_EQ(tr[3].ndone, 1);
	CHECK_EQ(tr[4].ndone, 1);
	CHECK_EQ(tr[4].status, BLK_E_UNSUPP);
	CHECK_EQ(fd.ndev, 1);
	CHECK_EQ(fd.log[fd.nlog - 1], 5);
	fake_complete(&fd, 0, 0);
	CHECK_EQ(tr[5].ndone, 1);
}

/* ---- a device with 4 KiB blocks; counters ------------------------------- */

static void test_blocks_and_stat(void)
{
	blk_reset();
	memset(&fd, 0, sizeof fd);
	fd.info = (struct blkdev_info){ .nsectors = 800, .max_inflight = 8, .blksize = 4096, .name = "big" };
	int u = blk_register(&fake_ops, &fd, &fd.info);
	CHECK_EQ(u, 0);
	/* Whole 8-sector blocks only: start and length both. */
	CHECK_EQ(submit(0, u, BLK_READ, 8, 8), 0);
	CHECK_EQ(submit(1, u, BLK_READ, 8, 4), BLK_E_ALIGN);
	CHECK_EQ(submit(1, u, BLK_READ, 4, 8), BLK_E_ALIGN);
	CHECK_EQ(submit(1, u, BLK_WRITE, 792, 8), 0);
	CHECK_EQ(submit(2, u, BLK_WRITE, 796, 8), BLK_E_RANGE);    /* range comes first */
	CHECK_EQ(submit(2, u, BLK_FLUSH, 0, 0), 0);
	CHECK_EQ(fd.nlog, 2);

	/* blk_stat: settings and counters, and the most the device ever held. */
	struct blk_unit_stat st;
	CHECK_EQ(blk_stat(u, &st), 0);
	CHECK_EQ(st.info.blksize, 4096);
	CHECK_EQ(st.info.nsectors, 800);
	CHECK_EQ(st.depth, BLK_DEPTH_DEFAULT);
	CHECK_EQ(st.sched, BLK_SCHED_CLOOK);
	CHECK_EQ(st.nsubmitted, 3);
	CHECK_EQ(st.ncompleted, 0);
	CHECK_EQ(st.hiwater, 2);
	CHECK_EQ(blk_set_depth(u, 8), 8);
	for (int i = 3; i < 13; i++)
		CHECK_EQ(submit(i, u, BLK_READ, (uint64_t)i * 8, 8), 0);
	while (fd.ndev > 0)
		fake_complete(&fd, 0, 0);
	CHECK_EQ(blk_stat(u, &st), 0);
	CHECK_EQ(st.ncompleted, 13);
	CHECK_EQ(st.hiwater, 8);
	CHECK_EQ(fd.maxdev, 8);
	CHECK_EQ(blk_stat(5, &st), BLK_E_UNIT);
}

int main(void)
{
	test_validation();
	test_queue_full();
	test_clook_random();
	test_wrap_and_head();
	test_flush_barrier();
	test_depth();
	test_fifo();
	test_done_once();
	test_blocks_and_stat();
	printf("blkqueue: all checks passed\n");
	return 0;
}
