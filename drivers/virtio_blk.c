/*
 * virtio_blk.c - virtio-blk over any virtio transport: setup.
 *
 * Negotiates the features the request engine (vblk.c) knows how to use,
 * reads the disk's capacity and limits from its configuration space, gives
 * it one request queue (256 entries with indirect descriptors, so 128 block
 * requests fit with room to spare), and registers a block unit.  Completions
 * arrive by interrupt, or, in polled mode, with the device's interrupts
 * suppressed and the block layer polling from the kernel's poll hook.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/virtqueue.h"
#include "drivers/vblk.h"
#include "drivers/virtio.h"
#include "drivers/virtio_blk.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/vm.h"

struct vblk_dev {
	struct virtio_dev *vd;
	struct virtq vq;
	struct vblk vb;
	bool polled;
	bool ready;                /* the engine is attached: interrupts may reap */
};

static struct vblk_dev *by_unit[BLK_MAX_UNITS];

static void vblk_dev_notify(void *arg)
{
	struct vblk_dev *d = arg;
	virtio_notify(d->vd, 0);
}

static void vblk_dev_intr(void *arg, uint32_t why)
{
	struct vblk_dev *d = arg;
	if (!d->ready)
		return;
	if (why & VIRTIO_INT_CONFIG) {
		/* The only change that matters would be the capacity; the unit keeps
		 * the one it registered with, and says so. */
		uint64_t cap = virtio_config64(d->vd, VIRTIO_BLK_CFG_CAPACITY);
		if (cap != d->vb.lim.capacity)
			kprintf("virtio-blk: unit %d capacity changed to %lu sectors; still using %lu\n",
			        d->vb.unit, cap, d->vb.lim.capacity);
	}
	if (why & VIRTIO_INT_USED)
		vblk_reap(&d->vb);
}

int virtio_blk_attach(struct virtio_dev *vd, bool polled)
{
	uint64_t pages = (sizeof(struct vblk_dev) + PGSIZE - 1) / PGSIZE;
	struct vblk_dev *d = kalloc_contig(pages);
	if (d == NULL)
		return VIO_E_NOMEM;
	d->vd = vd;
	uint64_t want = VIO_BIT(VIRTIO_F_VERSION_1) | VIO_BIT(VIRTIO_F_INDIRECT_DESC) |
	                VIO_BIT(VIRTIO_BLK_F_SIZE_MAX) | VIO_BIT(VIRTIO_BLK_F_SEG_MAX) |
	                VIO_BIT(VIRTIO_BLK_F_RO) | VIO_BIT(VIRTIO_BLK_F_BLK_SIZE) |
	                VIO_BIT(VIRTIO_BLK_F_FLUSH);
	int e = virtio_negotiate(vd, want, VIO_BIT(VIRTIO_F_VERSION_1));
	uint64_t f = vd->features;
	if (e == 0 && !polled)
		e = virtio_irq_setup(vd, vblk_dev_intr, d);
	if (e == 0)
		e = virtio_queue_setup(vd, 0, &d->vq, VQ_MAX_SIZE, (f & VIO_BIT(VIRTIO_F_INDIRECT_DESC)) != 0);
	if (e != 0) {
		virtio_fail(vd);
		kfree_contig(d, pages);
		return e;
	}

	struct vblk_limits lim = {
		.capacity = virtio_config64(vd, VIRTIO_BLK_CFG_CAPACITY),
		.blk_size = (f & VIO_BIT(VIRTIO_BLK_F_BLK_SIZE)) ? virtio_config32(vd, VIRTIO_BLK_CFG_BLK_SIZE) : 512,
		.seg_max = (f & VIO_BIT(VIRTIO_BLK_F_SEG_MAX)) ? virtio_config32(vd, VIRTIO_BLK_CFG_SEG_MAX) : 0,
		.size_max = (f & VIO_BIT(VIRTIO_BLK_F_SIZE_MAX)) ? virtio_config32(vd, VIRTIO_BLK_CFG_SIZE_MAX) : 0,
		.flush = (f & VIO_BIT(VIRTIO_BLK_F_FLUSH)) != 0,
		.ro = (f & VIO_BIT(VIRTIO_BLK_F_RO)) != 0,
	};
	d->polled = polled;
	int unit = vblk_attach(&d->vb, &d->vq, &lim, vblk_dev_notify, d);
	if (unit < 0) {
		virtio_fail(vd);            /* the queue's pages stay with the dead device */
		kfree_contig(d, pages);
		return unit;
	}
	by_unit[unit] = d;
	d->ready = true;
	vq_set_interrupts(&d->vq, !polled);
	virtio_driver_ok(vd);
	return unit;
}

bool virtio_blk_describe(int unit, char *buf, int size)
{
	struct vblk_dev *d = unit >= 0 && unit < BLK_MAX_UNITS ? by_unit[unit] : NULL;
	if (d == NULL)
		return false;
	char where[64];
	virtio_describe(d->vd, where, sizeof where);
	ksnprintf(buf, (size_t)size, "%s, queue %u%s, block %u, seg_max %u%s%s", where,
	          d->vq.size, d->vq.itab ? " indirect" : " direct",
	          d->vb.lim.blk_size, d->vb.lim.seg_max, d->vb.lim.flush ? ", write cache" : "",
	          d->vb.lim.ro ? ", read-only" : "");
	return true;
}
