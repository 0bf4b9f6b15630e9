/*
 * virtio_blk.c - virtio-blk over virtio-mmio: discovery and setup.
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
#include "drivers/virtio_mmio.h"
#include "drivers/virtio_blk.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/riscv.h"
#include "kernel/trap.h"

struct vblk_dev {
	struct virtio_mmio mmio;
	struct virtq vq;
	struct vblk vb;
	bool polled;
};

static struct vblk_dev *by_unit[BLK_MAX_UNITS];

static void vblk_dev_notify(void *arg)
{
	struct vblk_dev *d = arg;
	vio_notify(&d->mmio, 0);
}

static void vblk_dev_intr(void *arg)
{
	struct vblk_dev *d = arg;
	uint32_t st = vio_intr_ack(&d->mmio);
	if (st & VIO_INT_CONFIG) {
		/* The only change that matters would be the capacity; the unit keeps
		 * the one it registered with, and says so. */
		uint64_t cap = vio_config64(&d->mmio, VIRTIO_BLK_CFG_CAPACITY);
		if (cap != d->vb.lim.capacity)
			kprintf("virtio-blk: unit %d capacity changed to %lu sectors; still using %lu\n",
			        d->vb.unit, cap, d->vb.lim.capacity);
	}
	if (st & VIO_INT_USED)
		vblk_reap(&d->vb);
}

int virtio_blk_attach(uint64_t base, uint32_t irq, bool polled)
{
	uint64_t pages = (sizeof(struct vblk_dev) + PGSIZE - 1) / PGSIZE;
	struct vblk_dev *d = kalloc_contig(pages);
	if (d == NULL)
		return VIO_E_NOMEM;
	int e = vio_probe(&d->mmio, base, irq);
	if (e >= 0 && e != VIRTIO_ID_BLOCK)
		e = VIO_E_NODEV;
	if (e >= 0) {
		uint64_t want = VIO_BIT(VIRTIO_F_VERSION_1) | VIO_BIT(VIRTIO_F_INDIRECT_DESC) |
		                VIO_BIT(VIRTIO_BLK_F_SIZE_MAX) | VIO_BIT(VIRTIO_BLK_F_SEG_MAX) |
		                VIO_BIT(VIRTIO_BLK_F_RO) | VIO_BIT(VIRTIO_BLK_F_BLK_SIZE) |
		                VIO_BIT(VIRTIO_BLK_F_FLUSH);
		e = vio_negotiate(&d->mmio, want, VIO_BIT(VIRTIO_F_VERSION_1));
	}
	uint64_t f = d->mmio.features;
	if (e == 0)
		e = vio_queue_setup(&d->mmio, 0, &d->vq, VQ_MAX_SIZE, (f & VIO_BIT(VIRTIO_F_INDIRECT_DESC)) != 0);
	if (e != 0) {
		if (e != VIO_E_NODEV && e != VIO_E_LEGACY)
			vio_fail(&d->mmio);
		kfree_contig(d, pages);
		return e;
	}

	struct vblk_limits lim = {
		.capacity = vio_config64(&d->mmio, VIRTIO_BLK_CFG_CAPACITY),
		.blk_size = (f & VIO_BIT(VIRTIO_BLK_F_BLK_SIZE)) ? vio_config32(&d->mmio, VIRTIO_BLK_CFG_BLK_SIZE) : 512,
		.seg_max = (f & VIO_BIT(VIRTIO_BLK_F_SEG_MAX)) ? vio_config32(&d->mmio, VIRTIO_BLK_CFG_SEG_MAX) : 0,
		.size_max = (f & VIO_BIT(VIRTIO_BLK_F_SIZE_MAX)) ? vio_config32(&d->mmio, VIRTIO_BLK_CFG_SIZE_MAX) : 0,
		.flush = (f & VIO_BIT(VIRTIO_BLK_F_FLUSH)) != 0,
		.ro = (f & VIO_BIT(VIRTIO_BLK_F_RO)) != 0,
	};
	d->polled = polled;
	int unit = vblk_attach(&d->vb, &d->vq, &lim, vblk_dev_notify, d);
	if (unit < 0) {
		vio_fail(&d->mmio);         /* the queue's pages stay with the dead device */
		kfree_contig(d, pages);
		return unit;
	}
	by_unit[unit] = d;
	vq_set_interrupts(&d->vq, !polled);
	if (!polled)
		plic_enable(irq, vblk_dev_intr, d);
	vio_driver_ok(&d->mmio);
	return unit;
}

void virtio_blk_describe(int unit, char *buf, int size)
{
	struct vblk_dev *d = unit >= 0 && unit < BLK_MAX_UNITS ? by_unit[unit] : NULL;
	if (d == NULL) {
		ksnprintf(buf, (size_t)size, "not a virtio disk");
		return;
	}
	ksnprintf(buf, (size_t)size, "slot %p irq %u, queue %u%s, block %u, seg_max %u%s%s",
	          (void *)d->mmio.base, d->mmio.irq, d->vq.size, d->vq.itab ? " indirect" : " direct",
	          d->vb.lim.blk_size, d->vb.lim.seg_max, d->vb.lim.flush ? ", write cache" : "",
	          d->vb.lim.ro ? ", read-only" : "");
}
