/*
 * test_clook_sim.c - C-LOOK against FIFO on the modelled RZ25, through the
 * real block layer and the model-timed block device, in virtual time.
 *
 * 1,000 random 4 KB reads over the whole disk, with N of them outstanding at
 * a time (each completion submits the next, as disk-directed I/O does in the
 * thesis's section 5.4.2).  The block layer hands the drive at most 2 at a
 * time, so the queue decides the order.  With N = 1 there is nothing to
 * order and both policies must take exactly the same time; with more, C-LOOK
 * shortens the seeks and must win by a clear margin, growing with N; FIFO
 * must match the model's analytic rate for random requests.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include "drivers/blk.h"
#include "drivers/diskmodel.h"
#include "drivers/modeldisk.h"
#include "check.h"

#define NREQ 1000
#define LEN  8                     /* sectors: 4 KB */

static struct modeldisk md;
static uint8_t *image;             /* the modelled disk's data */
static uint64_t image_bytes;

static uint64_t where[NREQ];       /* the request list, the same for every run */
static struct blkreq req[NREQ];
static struct blk_seg seg[NREQ];
static uint8_t buf[NREQ][LEN * 512];
static int next_to_submit, ncompleted;
static uint64_t last_done;

static void submit_next(void);

static void done(struct blkreq *r)
{
	CHECK_EQ(r->status, 0);
	/* Completions arrive in virtual time, never going back. */
	CHECK(md.now >= last_done);
	last_done = md.now;
	/* The data is the disk image's: each sector was stamped with its number. */
	uint64_t stamp;
	memcpy(&stamp, buf[r - req], sizeof stamp);
	CHECK_EQ(stamp, r->sector);
	ncompleted++;
	submit_next();
}

static void submit_next(void)
{
	if (next_to_submit == NREQ)
		return;
	int i = next_to_submit++;
	struct blkreq *r = &req[i];
	memset(r, 0, sizeof(*r));
	r->unit = md.unit;
	r->op = BLK_READ;
	r->sector = where[i];
	r->nsectors = LEN;
	seg[i] = (struct blk_seg){ (uint64_t)(uintptr_t)buf[i], LEN * 512 };
	r->seg = &seg[i];
	r->nseg = 1;
	r->done = done;
	CHECK_EQ(blk_submit(r), 0);
}

/* Virtual seconds to serve all NREQ requests with `outstanding` in the queue. */
static double run(int sched, int outstanding)
{
	blk_reset();
	CHECK_EQ(modeldisk_attach(&md, &dm_rz25, image, image_bytes), 0);
	CHECK_EQ(blk_set_sched(md.unit, sched), 0);
	CHECK_EQ(blk_set_depth(md.unit, 2), 2);
	next_to_submit = ncompleted = 0;
	last_done = 0;
	for (int i = 0; i < outstanding; i++)
		submit_next();
	uint64_t t;
	while ((t = modeldisk_next_event(&md)) != UINT64_MAX)
		modeldisk_advance(&md, t);
	CHECK_EQ(ncompleted, NREQ);
	return md.now / 1e9;
}

int main(void)
{
	struct dm_disk d;
	CHECK_EQ(dm_init(&d, &dm_rz25), 0);
	/* 426 MB, mapped lazily: only the sectors touched become memory. */
	image_bytes = d.nsectors * 512;
	image = mmap(NULL, image_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(image != MAP_FAILED);
	rng_seed(1995);
	for (int i = 0; i < NREQ; i++) {
		where[i] = rng_below(d.nsectors / LEN) * LEN;
		for (int k = 0; k < LEN; k++)
			memcpy(image + (where[i] + k) * 512, &(uint64_t){ where[i] + k }, 8);
	}

	double f_one = dm_mean_random_ns(&d, LEN, false) / 1e9;
	double f_queued = dm_mean_random_ns(&d, LEN, true) / 1e9;
	printf("1,000 random 4 KB reads on the modelled RZ25, device depth 2\n");
	printf("outstanding   FIFO req/s   C-LOOK req/s   C-LOOK gain   (analytic FIFO: %.1f req/s, %.1f at 1 outstanding)\n",
	       1 / f_queued, 1 / f_one);
	static const int ns[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
	double prev_gain = -1;
	for (unsigned k = 0; k < sizeof ns / sizeof ns[0]; k++) {
		int n = ns[k];
		double fifo = run(BLK_SCHED_FIFO, n);
		double clook = run(BLK_SCHED_CLOOK, n);
		double gain = fifo / clook - 1;
		printf("%8d      %8.1f      %8.1f       %+6.1f%%\n", n, NREQ / fifo, NREQ / clook, 100 * gain);

		/* FIFO orders nothing: the analytic random rate, with the command
		 * overhead exposed when one request is outstanding and hidden
		 * behind the other when the drive has two. */
		double want = NREQ * (n == 1 ? f_one : f_queued);
		CHECK(fifo > 0.97 * want && fifo < 1.03 * want);
		if (n <= 2) {
			/* Every request goes straight to the drive: no choice to make. */
			CHECK(fifo == clook);
		} else {
			/* C-LOOK wins, and by more the more it has to choose from. */
			CHECK(gain > 0.10);
			CHECK(gain > prev_gain);
			if (n >= 128)
				CHECK(gain > 0.5);
		}
		prev_gain = gain;
	}
	munmap(image, image_bytes);
	return 0;
}
