/*
 * ramdisk.c - a block device in memory (see ramdisk.h).
 *
 * There is nothing mechanical to wait for, so a request's data is copied
 * when it completes: at once in synchronous mode, or at the next poll in
 * polled mode.  Copying at completion rather than at start keeps the data's
 * effects in completion order, as on a real device.  RAM keeps nothing in a
 * volatile cache, so a FLUSH has nothing to do.
 */
#include <stdint.h>
#include <stddef.h>
#include "drivers/blk.h"
#include "drivers/ramdisk.h"

void ramdisk_xfer(uint8_t *mem, const struct blkreq *r)
{
	if (r->op != BLK_READ && r->op != BLK_WRITE)
		return;
	uint8_t *disk = mem + r->sector * BLK_SECTOR_SIZE;
	for (uint32_t i = 0; i < r->nseg; i++) {
		uint8_t *buf = blk_seg_ptr(r->seg[i].addr);
		if (r->op == BLK_READ)
			__builtin_memcpy(buf, disk, r->seg[i].len);
		else
			__builtin_memcpy(disk, buf, r->seg[i].len);
		disk += r->seg[i].len;
	}
}

static int ramdisk_start(void *dev, struct blkreq *r)
{
	struct ramdisk *rd = dev;
	if (rd->mode == RAMDISK_SYNC) {
		ramdisk_xfer(rd->mem, r);
		blk_complete(r, 0);
		return 0;
	}
	r->next = NULL;
	if (rd->pending_tail != NULL)
		rd->pending_tail->next = r;
	else
		rd->pending = r;
	rd->pending_tail = r;
	return 0;
}

static void ramdisk_poll(void *dev)
{
	struct ramdisk *rd = dev;
	/* Take the current batch: requests started by the completions below
	 * wait for the next poll, so one poll does a bounded amount of work. */
	struct blkreq *r = rd->pending;
	rd->pending = rd->pending_tail = NULL;
	while (r != NULL) {
		struct blkreq *next = r->next;
		ramdisk_xfer(rd->mem, r);
		blk_complete(r, 0);
		r = next;
	}
}

static const struct blkdev_ops ramdisk_ops = {
	.start = ramdisk_start,
	.poll = ramdisk_poll,
};

int ramdisk_attach(struct ramdisk *rd, void *mem, uint64_t bytes, int mode)
{
	if (mem == NULL || bytes < BLK_SECTOR_SIZE || bytes % BLK_SECTOR_SIZE != 0 ||
	    (mode != RAMDISK_SYNC && mode != RAMDISK_POLLED))
		return BLK_E_INVAL;
	rd->mem = mem;
	rd->nsectors = bytes / BLK_SECTOR_SIZE;
	rd->mode = mode;
	rd->pending = rd->pending_tail = NULL;
	rd->info.nsectors = rd->nsectors;
	rd->info.max_inflight = BLK_MAX_DEPTH;
	rd->info.name = "ramdisk";
	rd->unit = blk_register(&ramdisk_ops, rd, &rd->info);
	return rd->unit;
}
