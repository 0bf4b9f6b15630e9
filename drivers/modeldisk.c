/*
 * modeldisk.c - the disk model as a block device (see modeldisk.h).
 *
 * start() asks the model when the request will be done, given the current
 * virtual time, and files it; the data moves when the request completes,
 * as on the RAM disk.  The model serves requests one after another, so
 * completion times rise in start order and a ring is all the bookkeeping
 * needed.  The model has no write cache: data is durable at completion, and
 * a FLUSH costs only its command overhead.
 */
#include <stdint.h>
#include <stddef.h>
#include "drivers/blk.h"
#include "drivers/diskmodel.h"
#include "drivers/ramdisk.h"
#include "drivers/modeldisk.h"

_Static_assert(DM_READ == BLK_READ && DM_WRITE == BLK_WRITE && DM_FLUSH == BLK_FLUSH,
               "model and block-layer op codes agree");

static int modeldisk_start(void *dev, struct blkreq *r)
{
	struct modeldisk *md = dev;
	if (md->qlen == MODELDISK_MAX_INFLIGHT)
		return BLK_E_QFULL;   /* cannot happen: the block layer respects max_inflight */
	/* A request from outside arrives now; one started by a completion
	 * arrives at that completion's time, which advance() has set. */
	if (md->clock != NULL && !md->advancing) {
		uint64_t t = md->clock(md);
		if (t > md->now)
			md->now = t;
	}
	uint64_t done = dm_access(&md->disk, &md->st, md->now, r->op, r->sector, r->nsectors, NULL);
	uint32_t slot = (md->qhead + md->qlen) % MODELDISK_MAX_INFLIGHT;
	md->q[slot].r = r;
	md->q[slot].done = done;
	md->qlen++;
	if (md->rearm != NULL && !md->advancing)
		md->rearm(md);
	return 0;
}

uint64_t modeldisk_next_event(const struct modeldisk *md)
{
	return md->qlen > 0 ? md->q[md->qhead].done : UINT64_MAX;
}

void modeldisk_advance(struct modeldisk *md, uint64_t t)
{
	bool outer = !md->advancing;     /* done() may submit, and so re-enter start() */
	md->advancing = true;
	while (md->qlen > 0 && md->q[md->qhead].done <= t) {
		struct blkreq *r = md->q[md->qhead].r;
		if (md->q[md->qhead].done > md->now)
			md->now = md->q[md->qhead].done;
		md->qhead = (md->qhead + 1) % MODELDISK_MAX_INFLIGHT;
		md->qlen--;
		ramdisk_xfer(md->mem, r);
		blk_complete(r, 0);
	}
	if (t > md->now)
		md->now = t;
	if (outer) {
		md->advancing = false;
		if (md->rearm != NULL)
			md->rearm(md);
	}
}

/* Polled completion: reap what is due at the current virtual time. */
static void modeldisk_poll(void *dev)
{
	struct modeldisk *md = dev;
	modeldisk_advance(md, md->clock != NULL ? md->clock(md) : md->now);
}

static const struct blkdev_ops modeldisk_ops = {
	.start = modeldisk_start,
	.poll = modeldisk_poll,
};

int modeldisk_attach(struct modeldisk *md, const struct dm_params *p, void *mem, uint64_t bytes)
{
	__builtin_memset(md, 0, sizeof(*md));
	if (dm_init(&md->disk, p) != 0)
		return BLK_E_INVAL;
	if (mem == NULL || bytes / BLK_SECTOR_SIZE < md->disk.nsectors)
		return BLK_E_INVAL;
	dm_state_init(&md->st);
	md->mem = mem;

	/* "model:" and the table's name, for the boot log. */
	const char *prefix = "model:";
	size_t n = 0;
	for (const char *s = prefix; *s != '\0'; s++)
		md->name[n++] = *s;
	for (const char *s = p->name; s != NULL && *s != '\0' && n + 1 < sizeof(md->name); s++)
		md->name[n++] = *s;
	md->name[n] = '\0';

	md->info.nsectors = md->disk.nsectors;
	md->info.max_inflight = MODELDISK_MAX_INFLIGHT;
	md->info.name = md->name;
	md->unit = blk_register(&modeldisk_ops, md, &md->info);
	return md->unit;
}
