/*
 * virtqueue.h - the driver's side of a virtio 1.x split virtqueue.
 *
 * A split virtqueue is three areas of memory shared with the device: a table
 * of buffer descriptors, the "available" ring in which the driver offers
 * chains of descriptors, and the "used" ring in which the device hands them
 * back.  This file keeps the driver's bookkeeping: which descriptors are
 * free, which chain each head belongs to, how far the used ring has been
 * read.  It knows nothing about the transport (drivers/virtio_mmio.c tells
 * the device where the areas are and rings its doorbell) or about what the
 * buffers mean (drivers/vblk.c).
 *
 * A chain may be put in an indirect table (VIRTIO_F_INDIRECT_DESC): it then
 * takes one ring descriptor however long it is, which is how one request can
 * gather a header, many application pages and a status byte while a 256-entry
 * ring still holds 256 requests.
 *
 * Portable: the kernel gives physical (= kernel) addresses, host tests give
 * host pointers; either way the device sees uint64_t addresses.  The caller
 * provides all memory and serialises calls (one hart, interrupts off).
 */
#ifndef VIRTQUEUE_H
#define VIRTQUEUE_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

/* The ring sizes this driver supports: a power of two up to VQ_MAX_SIZE. */
#define VQ_MAX_SIZE 256

/* Descriptor flags (virtio 1.x, 2.7.5). */
#define VQ_DESC_F_NEXT      1   /* the chain continues in `next`                */
#define VQ_DESC_F_WRITE     2   /* the device writes this buffer                */
#define VQ_DESC_F_INDIRECT  4   /* the buffer is a table of descriptors         */
/* Ring flags. */
#define VQ_AVAIL_F_NO_INTERRUPT 1   /* driver: do not interrupt me when you use buffers */
#define VQ_USED_F_NO_NOTIFY     1   /* device: no need to ring my doorbell              */

/* Errors from vq_add. */
#define VQ_E_FULL   (-1)   /* not enough free descriptors now: try again after a vq_get */
#define VQ_E_INVAL  (-2)   /* a chain this queue can never take                          */

struct vq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vq_used_elem {
	uint32_t id;        /* head of the chain the device used */
	uint32_t len;       /* bytes the device wrote into the chain's writable buffers */
};

/* The ring areas, as the device sees them. */
struct vq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];    /* then a uint16_t used_event we do not use */
};
struct vq_used {
	uint16_t flags;
	uint16_t idx;
	struct vq_used_elem ring[];
};

/* One piece of a chain.  Device-readable pieces must come first. */
struct vq_buf {
	uint64_t addr;
	uint32_t len;
	bool dev_writes;
};

struct virtq {
	uint16_t size;
	/* Shared with the device. */
	volatile struct vq_desc *desc;
	volatile struct vq_avail *avail;
	volatile struct vq_used *used;
	/* Indirect tables, one of itab_len entries per head, or NULL. */
	struct vq_desc *itab;
	uint32_t itab_len;

	/* The driver's own state: never read back from shared memory, so a
	 * confused device cannot corrupt it. */
	uint16_t free_head, nfree;
	uint16_t next_free[VQ_MAX_SIZE];   /* free list, and chain links while in use */
	uint16_t chain_len[VQ_MAX_SIZE];   /* ring descriptors held by the chain at this head */
	void *token[VQ_MAX_SIZE];          /* caller's cookie per head; NULL = head not in use */
	uint16_t avail_idx;                /* our copy of avail->idx */
	uint16_t last_used;                /* next used-ring entry to read */
	uint32_t nchains;                  /* chains the device holds */
	uint32_t bad_used;                 /* used entries naming no chain of ours (ignored) */
};

/* Bytes of the shared ring area for `size` entries (descriptor table, then
 * the available ring, then the used ring at the next 4-byte boundary). */
size_t vq_ring_bytes(uint16_t size);

/* Set up a queue over zeroed `ring` memory of vq_ring_bytes(size) bytes,
 * 16-byte aligned.  itab (may be NULL: no indirect descriptors) holds size
 * tables of itab_len entries.  0, or VQ_E_INVAL for a bad size. */
int  vq_init(struct virtq *vq, uint16_t size, void *ring, struct vq_desc *itab, uint32_t itab_len);

/* Longest chain vq_add accepts. */
uint32_t vq_max_chain(const struct virtq *vq);

/* Put a chain of n buffers in the available ring; token (non-NULL) comes
 * back from vq_get when the device is done with it.  The device does not see
 * it until vq_publish(). */
int  vq_add(struct virtq *vq, const struct vq_buf *bufs, uint32_t n, void *token);
/* Make the chains added since the last call visible to the device.  Returns
 * true if the device wants to be notified (the caller rings its doorbell). */
bool vq_publish(struct virtq *vq);
/* The next chain the device has used: its token (and *len, the bytes it
 * wrote), or NULL if there is none.  Its descriptors are free again. */
void *vq_get(struct virtq *vq, uint32_t *len);
/* Ask the device to interrupt on used buffers, or not (polled mode). */
void vq_set_interrupts(struct virtq *vq, bool on);

#endif /* VIRTQUEUE_H */
