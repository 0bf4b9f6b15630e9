/*
 * test_blkexport.c - the exported queue page under a concurrent reader.
 *
 * One thread drives a polled RAM disk hard (submitting, polling, changing
 * depth), so the block layer rewrites the unit's page continually, while
 * this thread reads it the way an application does, with blkx_snapshot().
 * Every snapshot it accepts must be internally consistent; a torn copy
 * (half old, half new) would break at least one of the cross-checks below.
 * The reader must also see some attempts refused, or it never raced at all.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "drivers/blk.h"
#include "drivers/ramdisk.h"
#include "check.h"

#define DISK_SECTORS 4096
static uint8_t disk[DISK_SECTORS * 512];
static struct ramdisk rd;
static struct blk_export page;
static atomic_bool stop;
static uint8_t buf[8 * 512];

#define NREQ 200
static struct blkreq req[NREQ];
static struct blk_seg seg[NREQ];
static bool busy[NREQ];

static void done(struct blkreq *r) { busy[r - req] = false; }

static void *writer(void *arg)
{
	uint64_t x = 12345;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < NREQ; i++) {
			if (busy[i])
				continue;
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			struct blkreq *r = &req[i];
			memset(r, 0, sizeof(*r));
			r->unit = rd.unit;
			r->op = (x >> 60) < 2 ? BLK_FLUSH : (x >> 61) ? BLK_READ : BLK_WRITE;
			if (r->op != BLK_FLUSH) {
				r->nsectors = 1 + (uint32_t)((x >> 20) % 8);
				r->sector = (x >> 30) % (DISK_SECTORS - 8);
				seg[i] = (struct blk_seg){ (uint64_t)(uintptr_t)buf, r->nsectors * 512 };
				r->seg = &seg[i];
				r->nseg = 1;
			}
			r->done = done;
			busy[i] = true;
			CHECK_EQ(blk_submit(r), 0);
		}
		blk_set_depth(rd.unit, 1 + (uint32_t)(x % 6));
		blk_poll();
		/* Leave the page alone for a moment now and then, as a kernel
		 * busy with other work would, so the reader gets some clean reads. */
		if (x % 4 == 0)
			nanosleep(&(struct timespec){ 0, 20000 }, NULL);
	}
	return arg;
}

/* What must hold in any state the block layer ever publishes. */
static void check_consistent(const struct blk_export *x)
{
	CHECK_EQ(x->gen % 2, 0);
	CHECK_EQ(x->magic, BLKX_MAGIC);
	CHECK_EQ(x->capacity, DISK_SECTORS);
	CHECK_EQ(x->ncompleted + x->ninflight + x->nqueued, x->nsubmitted);
	uint32_t total = x->ninflight + x->nqueued;
	CHECK_EQ(x->nent, total < BLKX_NENT ? total : BLKX_NENT);
	CHECK(x->depth >= 1 && x->depth <= 6 && x->ninflight <= 6);   /* the writer keeps depth <= 6 */
	uint32_t inflight = 0;
	for (uint32_t i = 0; i < x->nent; i++) {
		const struct blk_export_ent *e = &x->ent[i];
		if (e->flags & BLKX_F_INFLIGHT) {
			CHECK_EQ(inflight, i);            /* in-flight entries come first */
			inflight++;
		}
		CHECK(e->seq != 0 && e->seq <= (uint32_t)x->nsubmitted);
		CHECK(e->op <= BLKX_OP_FLUSH);
		if (e->op == BLKX_OP_FLUSH)
			CHECK(e->nsectors == 0 && e->sector == 0);
		else
			CHECK(e->nsectors >= 1 && e->nsectors <= 8 && e->sector + e->nsectors <= DISK_SECTORS);
	}
	CHECK_EQ(inflight, x->ninflight);
}

int main(void)
{
	blk_reset();
	CHECK_EQ(ramdisk_attach(&rd, disk, sizeof disk, RAMDISK_POLLED), 0);
	CHECK_EQ(blk_export_attach(rd.unit, &page), 0);

	/* Without a writer: a stable page reads, an odd generation does not. */
	static struct blk_export x;
	CHECK_EQ(blkx_snapshot(&page, &x), 0);
	CHECK_EQ(x.unit, rd.unit);
	CHECK_EQ(x.version, BLKX_VERSION);
	CHECK_EQ(x.sched, BLK_SCHED_CLOOK);
	CHECK_EQ(x.nent, 0);
	page.gen++;
	CHECK_EQ(blkx_snapshot(&page, &x), -1);
	page.gen++;

	pthread_t t;
	CHECK_EQ(pthread_create(&t, NULL, writer, NULL), 0);
	long good = 0, refused = 0, busy_seen = 0;
	/* Read until there is plenty of evidence, for at most about a second. */
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; good < 20000 || busy_seen < 5000 || refused < 100; i++) {
		if (i % 1024 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec - t0.tv_sec >= 2)
				break;
		}
		if (blkx_snapshot(&page, &x) != 0) {
			refused++;
			continue;
		}
		check_consistent(&x);
		good++;
		busy_seen += x.nent > 0;
	}
	atomic_store(&stop, true);
	CHECK_EQ(pthread_join(t, NULL), 0);
	printf("blkexport: %ld consistent snapshots (%ld with requests), %ld torn attempts refused\n",
	       good, busy_seen, refused);
	CHECK(good > 1000);
	CHECK(busy_seen > 100);
	/* On one CPU the reader may never catch the writer mid-update. */
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1)
		CHECK(refused > 0);
	return 0;
}
