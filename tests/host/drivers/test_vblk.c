/*
 * test_vblk.c - the virtio-blk request engine (drivers/vblk.c) through the
 * real block layer and virtqueue, against a simulated device (simblk.h) that
 * checks every request it is given and completes them in random order.
 *
 *  - random reads, writes, FUA writes and flushes with randomly fragmented,
 *    unaligned buffers, 128 requests in flight, data checked against a
 *    shadow copy, durability checked against the device's durable image;
 *  - the same with tight device limits (seg_max, size_max), which cut
 *    requests into several chains, and with direct descriptors on a small
 *    ring, which makes requests wait for ring space;
 *  - faults: an I/O error in one chain of a split request (the rest is not
 *    sent), FLUSH unsupported, a short used length, a status never written;
 *  - a read-only device, a device without a write cache, a 4 KiB logical
 *    block, notification suppression, and a request too fragmented for the
 *    device's limits.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/blk.h"
#include "drivers/virtqueue.h"
#include "drivers/vblk.h"
#include "simblk.h"
#include "check.h"

static uint8_t ring[65536] __attribute__((aligned(4096)));
static struct vq_desc itab[VQ_MAX_SIZE * VQ_MAX_SIZE];
static struct virtq vq;
static struct vblk vb;
static struct simblk dev;
static int unit;

struct treq {
	struct blkreq r;
	struct blk_seg seg[BLK_MAX_SEGS];
	uint8_t *mem;           /* the buffer the segments point into */
	int ndone;
	int status;
	bool busy;
};

static void treq_done(struct blkreq *r)
{
	struct treq *t = r->priv;
	t->ndone++;
	t->status = r->status;
	t->busy = false;
}

static void setup(uint16_t qsize, bool indirect, struct vblk_limits lim)
{
	static bool have_dev;
	if (have_dev)
		simblk_free(&dev);
	blk_reset();
	CHECK_EQ(vq_init(&vq, qsize, ring, indirect ? itab : NULL, indirect ? qsize : 0), 0);
	if (lim.blk_size == 0)
		lim.blk_size = 512;
	simblk_init(&dev, &vq, indirect, &lim);
	have_dev = true;
	unit = vblk_attach(&vb, &vq, &lim, simblk_notify, &dev);
	CHECK(unit >= 0);
	CHECK_EQ(blk_set_depth(unit, VBLK_MAX_REQS), VBLK_MAX_REQS);
}

/* Cut nbytes of t->mem into random pieces of minpiece..maxpiece bytes (the
 * last may be shorter) with random gaps between them. */
static void fragment_range(struct treq *t, uint32_t nbytes, uint32_t minpiece, uint32_t maxpiece,
                           int maxsegs)
{
	size_t room = (size_t)nbytes * 2 + (size_t)maxsegs * 64 + 64;
	free(t->mem);
	t->mem = malloc(room);
	CHECK(t->mem != NULL);
	size_t at = rng_below(13);
	uint32_t done = 0;
	int n = 0;
	while (done < nbytes) {
		uint32_t piece = minpiece + (uint32_t)rng_below(maxpiece - minpiece + 1);
		if (piece > nbytes - done)
			piece = nbytes - done;
		if (n == maxsegs - 1)
			piece = nbytes - done;      /* the last segment takes the rest */
		t->seg[n++] = (struct blk_seg){ (uint64_t)(uintptr_t)(t->mem + at), piece };
		at += piece + rng_below(50);
		done += piece;
	}
	CHECK(at <= room);
	t->r.seg = t->seg;
	t->r.nseg = (uint16_t)n;
}

static void fragment(struct treq *t, uint32_t nbytes, uint32_t maxpiece, int maxsegs)
{
	fragment_range(t, nbytes, 1, maxpiece, maxsegs);
}

static void make(struct treq *t, int op, uint64_t sector, uint32_t n)
{
	uint8_t *mem = t->mem;
	memset(t, 0, sizeof(*t));
	t->mem = mem;
	t->r.unit = unit;
	t->r.op = (uint8_t)op;
	t->r.sector = sector;
	t->r.nsectors = n;
	t->r.done = treq_done;
	t->r.priv = t;
}

static void gather(const struct treq *t, uint8_t *out)
{
	for (int i = 0; i < t->r.nseg; i++) {
		memcpy(out, (void *)(uintptr_t)t->seg[i].addr, t->seg[i].len);
		out += t->seg[i].len;
	}
}

static void scatter(struct treq *t, const uint8_t *in)
{
	for (int i = 0; i < t->r.nseg; i++) {
		memcpy((void *)(uintptr_t)t->seg[i].addr, in, t->seg[i].len);
		in += t->seg[i].len;
	}
}

/* The device takes what is offered and completes one held request at random;
 * the driver reaps.  Returns false when the device holds nothing. */
static bool device_step(void)
{
	if (simblk_take(&dev) == 0)
		return false;
	simblk_complete(&dev, (int)rng_below((uint64_t)dev.nheld));
	blk_poll();
	return true;
}

static void run_until_done(struct treq *t, int n)
{
	for (;;) {
		bool busy = false;
		for (int i = 0; i < n; i++)
			busy |= t[i].busy;
		if (!busy)
			return;
		CHECK(device_step());
	}
}

static void submit(struct treq *t)
{
	t->busy = true;
	CHECK_EQ(blk_submit(&t->r), 0);
}

/* ---- random traffic ----------------------------------------------------- */

#define NT 128
static struct treq tr[NT];

/* minpiece keeps every block within what one chain can carry when the
 * device limits buffers: a 512-byte block then touches at most 3 pieces. */
static void random_traffic(const char *what, uint16_t qsize, bool indirect,
                           struct vblk_limits lim, uint32_t minpiece, uint32_t maxpiece, int rounds)
{
	setup(qsize, indirect, lim);
	uint64_t cap = lim.capacity;
	uint8_t *shadow = calloc(1, cap * 512), *tmp = malloc(BLK_MAX_SECTORS * 512);
	CHECK(shadow && tmp);

	for (int round = 0; round < rounds; round++) {
		/* Up to NT requests on disjoint stripes, so their order does not matter. */
		int n = 1 + (int)rng_below(NT);
		uint64_t stripe = cap / NT;
		int op = (round % 2 == 0) ? BLK_WRITE : BLK_READ;
		for (int i = 0; i < n; i++) {
			uint32_t len = 1 + (uint32_t)rng_below(stripe < 64 ? stripe : 64);
			uint64_t sector = (uint64_t)i * stripe + rng_below(stripe - len + 1);
			make(&tr[i], op, sector, len);
			fragment_range(&tr[i], len * 512, minpiece, maxpiece, BLK_MAX_SEGS);
			if (op == BLK_WRITE) {
				for (uint32_t k = 0; k < len * 512; k++)
					tmp[k] = (uint8_t)rng_next();
				scatter(&tr[i], tmp);
				if (rng_below(4) == 0)
					tr[i].r.flags = BLK_F_FUA;
			}
		}
		for (int i = 0; i < n; i++) {
			submit(&tr[i]);
			/* Now and then the device makes progress while we submit. */
			if (rng_below(8) == 0)
				device_step();
		}
		run_until_done(tr, n);
		for (int i = 0; i < n; i++) {
			struct treq *t = &tr[i];
			CHECK_EQ(t->ndone, 1);
			CHECK_EQ(t->status, 0);
			uint8_t *disk = shadow + t->r.sector * 512;
			gather(t, tmp);
			if (op == BLK_WRITE) {
				memcpy(disk, tmp, t->r.nsectors * 512);
				/* A FUA write is durable when it completes. */
				if (t->r.flags & BLK_F_FUA)
					CHECK(memcmp(dev.durable + t->r.sector * 512, tmp, t->r.nsectors * 512) == 0);
			} else {
				CHECK(memcmp(disk, tmp, t->r.nsectors * 512) == 0);
			}
		}
	}
	CHECK(memcmp(dev.cache, shadow, cap * 512) == 0);
	/* One FLUSH makes everything durable. */
	make(&tr[0], BLK_FLUSH, 0, 0);
	submit(&tr[0]);
	run_until_done(tr, 1);
	CHECK_EQ(tr[0].status, 0);
	CHECK(memcmp(dev.durable, shadow, cap * 512) == 0);
	CHECK_EQ(vq.nfree, vq.size);
	CHECK_EQ(vq.bad_used, 0);
	printf("  %-34s %5u requests, %5llu chains, %4llu split, %4llu waited for ring space,"
	       " device held up to %u, data buffers per chain <= %u\n",
	       what, dev.nreq, (unsigned long long)vb.stats.chains, (unsigned long long)vb.stats.split,
	       (unsigned long long)vb.stats.deferred, dev.q.maxheld, dev.max_data_bufs);
	free(shadow);
	free(tmp);
}

/* ---- faults and features ----------------------------------------------- */

static struct vblk_limits plain(uint64_t cap)
{
	return (struct vblk_limits){ .capacity = cap, .blk_size = 512, .flush = true };
}

/* An I/O error in one chain of a split request fails it, and what was not
 * yet sent is never sent; a request beside it is unaffected. */
static void test_ioerr(void)
{
	struct vblk_limits lim = plain(256);
	lim.seg_max = 2;
	setup(8, false, lim);            /* direct: a 4-descriptor chain, two at a time */
	struct treq *a = &tr[0], *b = &tr[1];
	make(a, BLK_WRITE, 0, 16);
	fragment_range(a, 16 * 512, 512, 512, 16);   /* 16 pieces: 8 chains of 2 */
	make(b, BLK_WRITE, 100, 1);
	fragment(b, 512, 512, 1);
	dev.fail_sector = 5;              /* in a's third chain */
	submit(a);
	submit(b);
	/* Serve in order: chains 1 and 2 succeed, chain 3 fails. */
	for (int k = 0; k < 3; k++) {
		CHECK(simblk_take(&dev) > 0);
		simblk_complete(&dev, 0);
		blk_poll();
	}
	while (device_step())
		;
	CHECK_EQ(a->ndone, 1);
	CHECK_EQ(a->status, BLK_E_IO);
	CHECK_EQ(b->ndone, 1);
	CHECK_EQ(b->status, 0);
	/* Two of a's chains fit the ring at a time: chains 1-4 reached the
	 * device (4 was offered when 2 finished), 5-8 never did; then b. */
	CHECK_EQ(dev.nreq, 5);
	CHECK_EQ(dev.nwrite, 4);
	CHECK_EQ(vq.nfree, vq.size);
	printf("  I/O error in a split request: 5 of 9 chains reached the device: ok\n");
}

static void test_status_faults(void)
{
	setup(16, true, plain(64));
	struct treq *t = &tr[0];

	dev.flush_unsupp = true;
	make(t, BLK_FLUSH, 0, 0);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, BLK_E_UNSUPP);
	dev.flush_unsupp = false;

	/* A FUA write whose flush fails has failed. */
	dev.flush_unsupp = true;
	make(t, BLK_WRITE, 3, 2);
	fragment(t, 1024, 1024, 4);
	t->r.flags = BLK_F_FUA;
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, BLK_E_UNSUPP);
	dev.flush_unsupp = false;

	dev.short_len = true;             /* the device says it wrote less than asked */
	make(t, BLK_READ, 3, 2);
	fragment(t, 1024, 300, 8);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, BLK_E_IO);

	dev.no_status = true;             /* the device never wrote the status byte */
	make(t, BLK_WRITE, 7, 1);
	fragment(t, 512, 512, 1);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, BLK_E_IO);

	dev.fail_sector = 9;
	make(t, BLK_READ, 8, 4);
	fragment(t, 2048, 2048, 1);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, BLK_E_IO);
	dev.fail_sector = -1;

	make(t, BLK_READ, 8, 4);          /* and the device works on */
	fragment(t, 2048, 700, 8);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, 0);
	printf("  status faults: flush unsupported, short length, no status, I/O error: ok\n");
}

/* FUA and FLUSH against the device's volatile cache. */
static void test_durability(void)
{
	setup(16, true, plain(64));
	struct treq *w = &tr[0], *f = &tr[1];
	uint8_t data[1024];
	for (int i = 0; i < 1024; i++)
		data[i] = (uint8_t)(i * 3 + 1);

	/* A plain write completes while only in the cache. */
	make(w, BLK_WRITE, 4, 2);
	fragment(w, 1024, 1024, 3);
	scatter(w, data);
	submit(w);
	run_until_done(w, 1);
	CHECK_EQ(w->status, 0);
	CHECK(memcmp(dev.cache + 4 * 512, data, 1024) == 0);
	CHECK(memcmp(dev.durable + 4 * 512, data, 1024) != 0);
	make(f, BLK_FLUSH, 0, 0);
	submit(f);
	run_until_done(f, 1);
	CHECK_EQ(f->status, 0);
	CHECK(memcmp(dev.durable + 4 * 512, data, 1024) == 0);

	/* A FUA write: after the data chain the request is still open, and a
	 * FLUSH chain follows; at completion the data is durable. */
	for (int i = 0; i < 1024; i++)
		data[i] ^= 0x5a;
	make(w, BLK_WRITE, 20, 2);
	fragment(w, 1024, 1024, 3);
	scatter(w, data);
	w->r.flags = BLK_F_FUA;
	uint32_t flushes = dev.nflush;
	submit(w);
	CHECK_EQ(simblk_take(&dev), 1);
	simblk_complete(&dev, 0);        /* the data */
	blk_poll();
	CHECK_EQ(w->ndone, 0);
	CHECK(memcmp(dev.durable + 20 * 512, data, 1024) != 0);
	CHECK_EQ(simblk_take(&dev), 1);   /* the flush */
	simblk_complete(&dev, 0);
	blk_poll();
	CHECK_EQ(w->ndone, 1);
	CHECK_EQ(w->status, 0);
	CHECK_EQ(dev.nflush, flushes + 1);
	CHECK(memcmp(dev.durable + 20 * 512, data, 1024) == 0);
	printf("  durability: write cached until FLUSH, FUA write flushed before completing: ok\n");
}

static void test_features(void)
{
	struct treq *t = &tr[0];
	/* Read-only device: writes fail at once, reads work. */
	struct vblk_limits lim = plain(64);
	lim.ro = true;
	setup(16, true, lim);
	make(t, BLK_WRITE, 0, 1);
	fragment(t, 512, 512, 1);
	submit(t);
	CHECK_EQ(t->ndone, 1);
	CHECK_EQ(t->status, BLK_E_UNSUPP);
	make(t, BLK_READ, 0, 1);
	fragment(t, 512, 512, 1);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, 0);
	CHECK_EQ(dev.nreq, 1);

	/* No write cache: FLUSH completes at once, FUA writes are plain writes,
	 * and writes are durable when they complete. */
	lim = plain(64);
	lim.flush = false;
	setup(16, true, lim);
	make(t, BLK_FLUSH, 0, 0);
	submit(t);
	CHECK_EQ(t->ndone, 1);
	CHECK_EQ(t->status, 0);
	make(t, BLK_WRITE, 2, 1);
	fragment(t, 512, 100, 8);
	memset(t->mem, 0x77, 1200);
	t->r.flags = BLK_F_FUA;
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, 0);
	CHECK_EQ(dev.nflush, 0);
	CHECK_EQ(dev.durable[2 * 512], 0x77);

	/* 4 KiB logical blocks: the block layer refuses partial blocks; whole
	 * blocks are cut into chains only at block boundaries. */
	lim = plain(256);
	lim.blk_size = 4096;
	lim.seg_max = 2;
	setup(16, true, lim);
	make(t, BLK_READ, 0, 1);
	fragment(t, 512, 512, 1);
	CHECK_EQ(blk_submit(&t->r), BLK_E_ALIGN);
	make(t, BLK_READ, 4, 8);
	fragment(t, 4096, 4096, 1);
	CHECK_EQ(blk_submit(&t->r), BLK_E_ALIGN);
	make(t, BLK_WRITE, 8, 16);        /* pieces 1000+3096 | 4096 */
	free(t->mem);
	t->mem = calloc(1, 8192);
	t->seg[0] = (struct blk_seg){ (uint64_t)(uintptr_t)t->mem, 1000 };
	t->seg[1] = (struct blk_seg){ (uint64_t)(uintptr_t)t->mem + 1000, 3096 };
	t->seg[2] = (struct blk_seg){ (uint64_t)(uintptr_t)t->mem + 4096, 4096 };
	t->r.seg = t->seg;
	t->r.nseg = 3;
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(t->status, 0);
	CHECK_EQ(dev.nreq, 2);
	/* 1000 + 3000 + 96 + ...: the first block needs three buffers, more than
	 * seg_max allows, so the request cannot be expressed. */
	make(t, BLK_WRITE, 8, 16);
	t->seg[0] = (struct blk_seg){ (uint64_t)(uintptr_t)t->mem, 1000 };
	t->seg[1] = (struct blk_seg){ (uint64_t)(uintptr_t)t->mem + 1000, 3000 };
	t->seg[2] = (struct blk_seg){ (uint64_t)(uintptr_t)t->mem + 4000, 4192 };
	t->r.seg = t->seg;
	t->r.nseg = 3;
	submit(t);
	CHECK_EQ(t->ndone, 1);
	CHECK_EQ(t->status, BLK_E_TOOBIG);
	CHECK_EQ(dev.nreq, 2);

	/* The same with 512-byte sectors: 256 one- and two-byte segments in
	 * one sector cannot fit 254 buffers. */
	lim = plain(64);
	setup(256, true, lim);
	make(t, BLK_READ, 0, 1);
	for (int i = 0; i < 256; i++)
		t->seg[i] = (struct blk_seg){ (uint64_t)(uintptr_t)t->mem + (uint64_t)i * 2, 2 };
	t->r.seg = t->seg;
	t->r.nseg = 256;
	submit(t);
	CHECK_EQ(t->ndone, 1);
	CHECK_EQ(t->status, BLK_E_TOOBIG);
	CHECK_EQ(dev.nreq, 0);

	/* The device asks not to be notified: the driver stays quiet. */
	setup(16, true, plain(64));
	dev.q.used->flags = VQ_USED_F_NO_NOTIFY;
	make(t, BLK_READ, 0, 1);
	fragment(t, 512, 512, 1);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(dev.notifies, 0);
	dev.q.used->flags = 0;
	make(t, BLK_READ, 0, 1);
	fragment(t, 512, 512, 1);
	submit(t);
	run_until_done(t, 1);
	CHECK_EQ(dev.notifies, 1);

	/* Attach refuses nonsense. */
	struct vblk other;
	lim = plain(0);
	CHECK_EQ(vblk_attach(&other, &vq, &lim, simblk_notify, &dev), BLK_E_INVAL);
	printf("  read-only, write-through, 4 KiB blocks, over-fragmented requests, quiet device: ok\n");
}

int main(void)
{
	rng_seed(7);
	struct vblk_limits lim = plain(8192);
	random_traffic("indirect, 256 ring, no limits", 256, true, lim, 1, 5000, 60);
	CHECK(dev.q.maxheld >= 64);
	CHECK_EQ(vb.stats.split, 0);
	lim.seg_max = 4;
	lim.size_max = 1000;
	random_traffic("indirect, seg_max 4, size_max 1000", 256, true, lim, 256, 1000, 40);
	CHECK(dev.max_data_bufs <= 4);
	CHECK(vb.stats.split > 0);
	lim = plain(8192);
	random_traffic("direct, 16 ring", 16, false, lim, 1, 2000, 40);
	CHECK(vb.stats.deferred > 0);
	CHECK(dev.max_data_bufs <= 14);
	test_ioerr();
	test_status_faults();
	test_durability();
	test_features();
	simblk_free(&dev);
	for (int i = 0; i < NT; i++)
		free(tr[i].mem);
	printf("test_vblk: ok\n");
	return 0;
}
