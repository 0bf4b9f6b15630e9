/*
 * virtio_blk.h - bring up a virtio-blk device, over any virtio transport
 * (virtio.h), as a block-layer unit (the request engine itself is vblk.[ch]).
 */
#ifndef VIRTIO_BLK_H
#define VIRTIO_BLK_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/virtio.h"

/* virtio-blk feature bits (virtio 1.x, 5.2.3). */
#define VIRTIO_BLK_F_SIZE_MAX  1
#define VIRTIO_BLK_F_SEG_MAX   2
#define VIRTIO_BLK_F_RO        5
#define VIRTIO_BLK_F_BLK_SIZE  6
#define VIRTIO_BLK_F_FLUSH     9

/* Configuration-space offsets. */
#define VIRTIO_BLK_CFG_CAPACITY  0
#define VIRTIO_BLK_CFG_SIZE_MAX  8
#define VIRTIO_BLK_CFG_SEG_MAX   12
#define VIRTIO_BLK_CFG_BLK_SIZE  20

/* Set up the virtio-blk device d, completing requests by interrupt or, if
 * polled, only when the block layer polls.  Returns the unit number, or a
 * negative error (VIO_E_* or BLK_E_*). */
int virtio_blk_attach(struct virtio_dev *d, bool polled);

/* A one-line description of the unit's device for the boot log, or false
 * if the unit is not a virtio-blk disk. */
bool virtio_blk_describe(int unit, char *buf, int size);

#endif
