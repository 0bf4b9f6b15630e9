/*
 * vblk.h - the virtio-blk request engine: turns block-layer requests into
 * virtio-blk requests on a split virtqueue and their completions back.
 *
 * A virtio-blk request is a chain: a 16-byte header the device reads (type,
 * sector), the data buffers, and a status byte the device writes.  One block
 * request becomes one such chain unless the device limits how many data
 * buffers a request may have (seg_max) or how large one may be (size_max);
 * then it is cut, at sector boundaries, into several chains ("parts") that
 * complete together.  Writes with BLK_F_FUA are followed by a FLUSH, since
 * virtio-blk has no FUA of its own.
 *
 * This file is portable: it talks to the device only through the virtqueue
 * and a notify callback, so the host tests drive it with a simulated device.
 * drivers/virtio_blk.c does the discovery and setup over virtio-mmio.
 */
#ifndef VBLK_H
#define VBLK_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/virtqueue.h"

/* virtio-blk request types and status values (virtio 1.x, 5.2.6). */
#define VIRTIO_BLK_T_IN      0
#define VIRTIO_BLK_T_OUT     1
#define VIRTIO_BLK_T_FLUSH   4
#define VIRTIO_BLK_S_OK      0
#define VIRTIO_BLK_S_IOERR   1
#define VIRTIO_BLK_S_UNSUPP  2

/* Block requests the engine holds at once (the block layer's max_inflight). */
#define VBLK_MAX_REQS 128

/* What the device told us about itself. */
struct vblk_limits {
	uint64_t capacity;     /* 512-byte sectors                                   */
	uint32_t blk_size;     /* logical block in bytes, a power of two >= 512       */
	uint32_t seg_max;      /* data buffers per request; 0 = only the ring limits  */
	uint32_t size_max;     /* bytes per data buffer; 0 = no limit                 */
	bool flush;            /* VIRTIO_BLK_F_FLUSH: the device has a write cache    */
	bool ro;               /* VIRTIO_BLK_F_RO                                      */
};

/* The header the device reads first. */
struct vblk_hdr {
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};

struct vblk_req;

/* One chain in the device.  Device-visible: hdr and status. */
struct vblk_slot {
	struct vblk_hdr hdr;
	uint8_t status;
	uint32_t nbytes;               /* data bytes in this part                       */
	struct vblk_req *req;
	struct vblk_slot *next_free;
};

/* The engine's state for one block request. */
struct vblk_req {
	struct blkreq *r;
	uint32_t seg, off;             /* where the next part's data starts              */
	uint64_t sector;               /* its sector                                      */
	uint32_t left;                 /* sectors not yet handed to the device            */
	uint32_t parts;                /* chains of this request in the device            */
	int32_t  status;               /* first error seen, else 0                        */
	bool     flushing;             /* FUA: the data is written, the FLUSH is next     */
	struct vblk_req *next;         /* waiting list / free list                        */
};

struct vblk_stats {
	uint64_t chains;               /* chains offered to the device                    */
	uint64_t split;                /* block requests that needed more than one chain  */
	uint64_t deferred;             /* times a chain had to wait for ring space        */
	uint64_t notifies;             /* doorbell writes                                 */
	uint32_t hiwater;              /* most chains in the device at once               */
};

struct vblk {
	struct virtq *vq;
	struct vblk_limits lim;
	void (*notify)(void *arg);     /* ring the device's doorbell                      */
	void *notify_arg;
	uint32_t max_data;             /* data buffers per chain                          */
	struct vblk_slot slot[VQ_MAX_SIZE];
	struct vblk_slot *free_slots;
	struct vblk_req req[VBLK_MAX_REQS];
	struct vblk_req *free_reqs;
	struct vblk_req *wait, *wait_tail;   /* requests with chains still to offer      */
	struct vq_buf buf[VQ_MAX_SIZE];      /* the chain being built                  */
	struct vblk_stats stats;
	struct blkdev_info info;
	int unit;
};

/* Set up the engine on an initialised, empty virtqueue and register a unit
 * for it.  Returns the unit number or a BLK_E_* error. */
int  vblk_attach(struct vblk *vb, struct virtq *vq, const struct vblk_limits *lim,
                 void (*notify)(void *), void *notify_arg);
/* Reap the chains the device has used and complete what they finish.  The
 * interrupt handler and the block layer's poll both come here. */
void vblk_reap(struct vblk *vb);

#endif /* VBLK_H */
