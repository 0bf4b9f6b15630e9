/*
 * virtio_scsi.h - bring up a virtio-scsi host adapter, over any virtio
 * transport (virtio.h): its queues, the request engine (vscsi.[ch]) and
 * the SCSI layer's scan (scsi.h), which makes each disk LUN behind it a
 * block unit.
 */
#ifndef VIRTIO_SCSI_H
#define VIRTIO_SCSI_H

#include <stdbool.h>
#include "drivers/virtio.h"

/* Set up the adapter d and scan it.  Returns the number of block units
 * registered (0 or more), or a negative error (VIO_E_*, BLK_E_*). */
int virtio_scsi_attach(struct virtio_dev *d, bool polled);

/* A one-line description of a unit for the boot log, or false if the unit
 * is not a SCSI disk. */
bool virtio_scsi_describe(int unit, char *buf, int size);

#endif
