/*
 * fakedev.h - a block device for the queue tests that does nothing until the
 * test says so.
 *
 * It records the order in which the block layer starts requests and holds
 * them until the test completes one (in any order, with any status), so the
 * tests see every scheduling decision the block layer makes.  It can also be
 * told to refuse the next start.  Test requests (struct treq) count how often
 * their done() ran.
 */
#ifndef TESTS_DRIVERS_FAKEDEV_H
#define TESTS_DRIVERS_FAKEDEV_H

#include <stdint.h>
#include <string.h>
#include "drivers/blk.h"
#include "check.h"

#define FAKE_LOGMAX 200000

struct fakedev {
	struct blkdev_info info;
	struct blkreq *dev[BLK_MAX_DEPTH];   /* started, not completed, start order */
	int ndev;
	int maxdev;                          /* most ever held at once */
	int log[FAKE_LOGMAX];                /* treq ids in start order */
	int nlog;
	int refuse;                          /* if non-zero, the next start returns it */
	int unit;
};

struct treq {
	struct blkreq r;
	struct blk_seg seg;
	int id;
	int ndone;
	int status;
};

/* Data buffer the fake device never touches; requests just need segments. */
static uint8_t fake_buf[BLK_MAX_SECTORS * BLK_SECTOR_SIZE];

static void treq_done(struct blkreq *r)
{
	struct treq *t = r->priv;
	t->ndone++;
	t->status = r->status;
}

static void treq_make(struct treq *t, int id, int unit, int op, uint64_t sector, uint32_t n)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	t->r.unit = unit;
	t->r.op = (uint8_t)op;
	t->r.sector = sector;
	t->r.done = treq_done;
	t->r.priv = t;
	if (op != BLK_FLUSH) {
		t->r.nsectors = n;
		t->seg.addr = (uint64_t)(uintptr_t)fake_buf;
		t->seg.len = n * BLK_SECTOR_SIZE;
		t->r.seg = &t->seg;
		t->r.nseg = 1;
	}
}

static int fake_start(void *dev, struct blkreq *r)
{
	struct fakedev *f = dev;
	if (f->refuse != 0) {
		int e = f->refuse;
		f->refuse = 0;
		return e;
	}
	CHECK(f->ndev < BLK_MAX_DEPTH);
	CHECK(f->nlog < FAKE_LOGMAX);
	f->dev[f->ndev++] = r;
	if (f->ndev > f->maxdev)
		f->maxdev = f->ndev;
	f->log[f->nlog++] = ((struct treq *)r->priv)->id;
	return 0;
}

static const struct blkdev_ops fake_ops = { .start = fake_start, .poll = NULL };

static int fake_attach(struct fakedev *f, uint64_t nsectors, uint32_t max_inflight)
{
	memset(f, 0, sizeof(*f));
	f->info.nsectors = nsectors;
	f->info.max_inflight = max_inflight;
	f->info.name = "fake";
	f->unit = blk_register(&fake_ops, f, &f->info);
	return f->unit;
}

/* Complete the request the device holds at index i. */
static void fake_complete(struct fakedev *f, int i, int status)
{
	CHECK(i >= 0 && i < f->ndev);
	struct blkreq *r = f->dev[i];
	memmove(&f->dev[i], &f->dev[i + 1], (size_t)(f->ndev - i - 1) * sizeof(f->dev[0]));
	f->ndev--;
	blk_complete(r, status);
}

#endif
