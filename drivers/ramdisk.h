/*
 * ramdisk.h - a block device kept in memory the caller provides.
 *
 * Used by the host tests, by guest tests that must not depend on a virtio
 * disk, and (through ramdisk_xfer) as the data store of the disk model.  It
 * completes a request either inside start() (RAMDISK_SYNC) or when the block
 * layer polls it (RAMDISK_POLLED), which exercises the same paths an
 * asynchronous device does.
 */
#ifndef RAMDISK_H
#define RAMDISK_H

#include <stdint.h>
#include "drivers/blk.h"

#define RAMDISK_SYNC    0
#define RAMDISK_POLLED  1

struct ramdisk {
	uint8_t *mem;
	uint64_t nsectors;
	int mode;
	int unit;
	/* Started but not yet completed (polled mode), oldest first. */
	struct blkreq *pending, *pending_tail;
	struct blkdev_info info;
};

/* Make `bytes` of memory at mem (a whole number of sectors) a block unit.
 * Returns the unit number or a BLK_E_* error. */
int  ramdisk_attach(struct ramdisk *rd, void *mem, uint64_t bytes, int mode);

/* Copy a READ or WRITE request's data between its segments and a disk image
 * at mem (which holds the request's sectors).  FLUSH copies nothing. */
void ramdisk_xfer(uint8_t *mem, const struct blkreq *r);

#endif /* RAMDISK_H */
