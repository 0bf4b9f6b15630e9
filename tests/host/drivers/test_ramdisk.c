/*
 * test_ramdisk.c - the RAM disk through the block layer: scatter-gather data
 * in and out, synchronous and polled completion, two units side by side,
 * rejected requests leaving the disk untouched, and a long chain of requests
 * each submitted from the previous one's done() on a synchronous device
 * (which must not recurse).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "drivers/blk.h"
#include "drivers/ramdisk.h"
#include "check.h"

#define DISK_SECTORS 256
static uint8_t disk0[DISK_SECTORS * 512], disk1[DISK_SECTORS * 512];
static struct ramdisk rd0, rd1;

static int ndone;
static void count_done(struct blkreq *r) { ndone++; (void)r; }

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static void make(struct blkreq *r, int unit, int op, uint64_t sector, uint32_t n,
                 struct blk_seg *seg, int nseg)
{
	memset(r, 0, sizeof(*r));
	r->unit = unit;
	r->op = (uint8_t)op;
	r->sector = sector;
	r->nsectors = n;
	r->seg = seg;
	r->nseg = (uint16_t)nseg;
	r->done = count_done;
}

static void test_scatter_gather(int unit, uint8_t *disk)
{
	/* Write 3 sectors from pieces of 100, 924 and 512 bytes ... */
	static uint8_t a[100], b[924], c[512];
	fill(a, sizeof a, 1); fill(b, sizeof b, 2); fill(c, sizeof c, 3);
	struct blk_seg ws[3] = {
		{ (uint64_t)(uintptr_t)a, sizeof a },
		{ (uint64_t)(uintptr_t)b, sizeof b },
		{ (uint64_t)(uintptr_t)c, sizeof c },
	};
	struct blkreq w;
	make(&w, unit, BLK_WRITE, 10, 3, ws, 3);
	ndone = 0;
	CHECK_EQ(blk_submit(&w), 0);
	while (ndone == 0)
		blk_poll();
	CHECK_EQ(w.status, 0);
	CHECK(memcmp(disk + 10 * 512, a, 100) == 0);
	CHECK(memcmp(disk + 10 * 512 + 100, b, 924) == 0);
	CHECK(memcmp(disk + 12 * 512, c, 512) == 0);

	/* ... and read them back cut differently, into 1000 + 536 bytes. */
	static uint8_t x[1000], y[536], want[1536];
	memcpy(want, a, 100); memcpy(want + 100, b, 924); memcpy(want + 1024, c, 512);
	struct blk_seg rs[2] = {
		{ (uint64_t)(uintptr_t)x, sizeof x },
		{ (uint64_t)(uintptr_t)y, sizeof y },
	};
	struct blkreq r;
	make(&r, unit, BLK_READ, 10, 3, rs, 2);
	ndone = 0;
	CHECK_EQ(blk_submit(&r), 0);
	while (ndone == 0)
		blk_poll();
	CHECK_EQ(r.status, 0);
	CHECK(memcmp(x, want, 1000) == 0);
	CHECK(memcmp(y, want + 1000, 536) == 0);

	/* A flush has nothing to wait for and succeeds. */
	struct blkreq f;
	make(&f, unit, BLK_FLUSH, 0, 0, NULL, 0);
	ndone = 0;
	CHECK_EQ(blk_submit(&f), 0);
	while (ndone == 0)
		blk_poll();
	CHECK_EQ(f.status, 0);
}

/* Bad writes are refused before anything reaches the disk. */
static void test_rejected_writes(int unit, uint8_t *disk)
{
	static uint8_t before[sizeof disk0], buf[4096];
	memcpy(before, disk, sizeof before);
	memset(buf, 0xee, sizeof buf);
	struct blk_seg s = { (uint64_t)(uintptr_t)buf, 4096 };
	struct blk_seg odd = { (uint64_t)(uintptr_t)buf, 1000 };
	struct blkreq w;
	ndone = 0;
	make(&w, unit, BLK_WRITE, DISK_SECTORS - 4, 8, &s, 1);   /* past the end */
	CHECK_EQ(blk_submit(&w), BLK_E_RANGE);
	make(&w, unit, BLK_WRITE, 0, 0, &s, 1);                  /* zero length */
	CHECK_EQ(blk_submit(&w), BLK_E_LEN);
	make(&w, unit, BLK_WRITE, 0, 2, &odd, 1);                /* 1000 bytes */
	CHECK_EQ(blk_submit(&w), BLK_E_LEN);
	make(&w, unit, BLK_WRITE, 0, 4, &s, 1);                  /* 8 sectors of data */
	CHECK_EQ(blk_submit(&w), BLK_E_ALIGN);
	make(&w, unit + 5, BLK_WRITE, 0, 8, &s, 1);              /* no such unit */
	CHECK_EQ(blk_submit(&w), BLK_E_UNIT);
	for (int i = 0; i < 3; i++)
		blk_poll();
	CHECK_EQ(ndone, 0);
	CHECK(memcmp(before, disk, sizeof before) == 0);
}

static void test_polled(void)
{
	/* Nothing completes, and nothing is written, until someone polls. */
	static uint8_t buf[8][512];
	struct blk_seg s[8];
	struct blkreq w[8];
	for (int i = 0; i < 8; i++) {
		fill(buf[i], 512, 40 + (unsigned)i);
		s[i] = (struct blk_seg){ (uint64_t)(uintptr_t)buf[i], 512 };
		make(&w[i], rd1.unit, BLK_WRITE, 100 + (uint64_t)i * 3, 1, &s[i], 1);
	}
	ndone = 0;
	for (int i = 0; i < 8; i++)
		CHECK_EQ(blk_submit(&w[i]), 0);
	CHECK_EQ(ndone, 0);
	CHECK(memcmp(disk1 + 100 * 512, buf[0], 512) != 0);
	/* Each poll completes what the device holds: the depth, 2. */
	int polls = 0;
	while (ndone < 8) {
		int was = ndone;
		blk_poll();
		polls++;
		CHECK_EQ(ndone - was, 2);
	}
	CHECK_EQ(polls, 4);
	for (int i = 0; i < 8; i++)
		CHECK(memcmp(disk1 + (100 + i * 3) * 512, buf[i], 512) == 0);
	/* The synchronous unit's disk was not touched. */
	CHECK(memcmp(disk0 + 100 * 512, buf[0], 512) != 0);
}

/* Each done() submits the next request; on a synchronous device that is
 * done() inside start() inside blk_submit() inside done()... unless the
 * block layer flattens it, which it must. */
static struct blkreq chain;
static struct blk_seg chain_seg;
static uint8_t chain_buf[512];
static int chain_left, chain_errors;

static void chain_done(struct blkreq *r)
{
	if (r->status != 0)
		chain_errors++;
	if (--chain_left > 0) {
		r->sector = (r->sector + 1) % DISK_SECTORS;
		r->op = r->op == BLK_READ ? BLK_WRITE : BLK_READ;
		if (blk_submit(r) != 0)
			chain_errors++;
	}
}

static void test_chain(void)
{
	chain_seg = (struct blk_seg){ (uint64_t)(uintptr_t)chain_buf, 512 };
	memset(&chain, 0, sizeof chain);
	chain.unit = rd0.unit;
	chain.op = BLK_READ;
	chain.nsectors = 1;
	chain.seg = &chain_seg;
	chain.nseg = 1;
	chain.done = chain_done;
	chain_left = 200000;
	CHECK_EQ(blk_submit(&chain), 0);
	CHECK_EQ(chain_left, 0);
	CHECK_EQ(chain_errors, 0);
}

int main(void)
{
	blk_reset();
	struct ramdisk bad;
	CHECK_EQ(ramdisk_attach(&bad, NULL, 4096, RAMDISK_SYNC), BLK_E_INVAL);
	CHECK_EQ(ramdisk_attach(&bad, disk0, 1000, RAMDISK_SYNC), BLK_E_INVAL);
	CHECK_EQ(ramdisk_attach(&bad, disk0, 4096, 9), BLK_E_INVAL);
	CHECK_EQ(blk_nunits(), 0);

	CHECK_EQ(ramdisk_attach(&rd0, disk0, sizeof disk0, RAMDISK_SYNC), 0);
	CHECK_EQ(ramdisk_attach(&rd1, disk1, sizeof disk1, RAMDISK_POLLED), 1);
	CHECK_EQ(blk_capacity(0), DISK_SECTORS);
	CHECK_EQ(blk_capacity(1), DISK_SECTORS);

	test_scatter_gather(rd0.unit, disk0);
	test_scatter_gather(rd1.unit, disk1);
	test_rejected_writes(rd0.unit, disk0);
	test_rejected_writes(rd1.unit, disk1);
	test_polled();
	test_chain();
	printf("ramdisk: all checks passed\n");
	return 0;
}
