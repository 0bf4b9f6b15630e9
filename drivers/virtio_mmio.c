/*
 * virtio_mmio.c - the virtio-mmio transport (see virtio_mmio.h).
 *
 * Registers are 32 bits wide and accessed only as whole aligned words, as
 * the spec requires.  A register access is I/O and ring memory is ordinary
 * memory; RISC-V orders the two only with a fence that names both, so the
 * accessors fence on either side: a doorbell written after the ring update
 * reaches the device after it, and ring reads after an interrupt-status read
 * see what the device wrote before raising it.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/virtio_mmio.h"
#include "drivers/virtqueue.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/riscv.h"

static inline void io_fence(void)
{
	__asm__ volatile("fence iorw, iorw" ::: "memory");
}

static uint32_t rd(const struct virtio_mmio *d, uint32_t off)
{
	uint32_t v = *(volatile uint32_t *)(d->base + off);
	io_fence();
	return v;
}

static void wr(const struct virtio_mmio *d, uint32_t off, uint32_t v)
{
	io_fence();
	*(volatile uint32_t *)(d->base + off) = v;
}

int vio_probe(struct virtio_mmio *d, uint64_t base, uint32_t irq)
{
	d->base = base;
	d->irq = irq;
	d->device_id = 0;
	d->features = 0;
	if (rd(d, VIO_MAGIC) != VIRTIO_MMIO_MAGIC)
		return VIO_E_NODEV;
	uint32_t version = rd(d, VIO_VERSION);
	uint32_t id = rd(d, VIO_DEVICE_ID);
	if (id == 0)
		return VIO_E_NODEV;       /* an empty slot: touch nothing else */
	if (version != 2)
		return VIO_E_LEGACY;
	d->device_id = id;
	return (int)id;
}

uint32_t vio_status(const struct virtio_mmio *d)
{
	return rd(d, VIO_STATUS);
}

void vio_fail(struct virtio_mmio *d)
{
	wr(d, VIO_STATUS, rd(d, VIO_STATUS) | VIO_S_FAILED);
}

int vio_negotiate(struct virtio_mmio *d, uint64_t wanted, uint64_t required)
{
	/* Reset, then say we have seen the device and know how to drive it. */
	wr(d, VIO_STATUS, 0);
	while (rd(d, VIO_STATUS) != 0)
		;
	wr(d, VIO_STATUS, VIO_S_ACKNOWLEDGE);
	wr(d, VIO_STATUS, VIO_S_ACKNOWLEDGE | VIO_S_DRIVER);

	uint64_t offered = 0;
	for (uint32_t sel = 0; sel < 2; sel++) {
		wr(d, VIO_DEVICE_FEAT_SEL, sel);
		offered |= (uint64_t)rd(d, VIO_DEVICE_FEATURES) << (32 * sel);
	}
	if ((offered & required) != required) {
		vio_fail(d);
		return VIO_E_FEATURES;
	}
	uint64_t accept = offered & wanted;
	for (uint32_t sel = 0; sel < 2; sel++) {
		wr(d, VIO_DRIVER_FEAT_SEL, sel);
		wr(d, VIO_DRIVER_FEATURES, (uint32_t)(accept >> (32 * sel)));
	}
	wr(d, VIO_STATUS, VIO_S_ACKNOWLEDGE | VIO_S_DRIVER | VIO_S_FEATURES_OK);
	/* The device may still say no to the combination. */
	if (!(rd(d, VIO_STATUS) & VIO_S_FEATURES_OK)) {
		vio_fail(d);
		return VIO_E_FEATURES;
	}
	d->features = accept;
	return 0;
}

static uint64_t pages_for(uint64_t bytes)
{
	return (bytes + PGSIZE - 1) / PGSIZE;
}

int vio_queue_setup(struct virtio_mmio *d, uint32_t index, struct virtq *vq, uint16_t want, bool indirect)
{
	wr(d, VIO_QUEUE_SEL, index);
	if (rd(d, VIO_QUEUE_READY) != 0)
		return VIO_E_QUEUE;
	uint32_t max = rd(d, VIO_QUEUE_NUM_MAX);
	if (max == 0)
		return VIO_E_QUEUE;
	if (max > want)
		max = want;
	uint16_t size = 1;
	while ((uint32_t)size * 2 <= max && size * 2 <= VQ_MAX_SIZE)
		size *= 2;

	void *ring = kalloc_contig(pages_for(vq_ring_bytes(size)));
	if (ring == NULL)
		return VIO_E_NOMEM;
	/* One table per head, each as long as the longest chain allowed. */
	struct vq_desc *itab = NULL;
	if (indirect) {
		itab = kalloc_contig(pages_for((uint64_t)size * size * sizeof(struct vq_desc)));
		if (itab == NULL) {
			kfree_contig(ring, pages_for(vq_ring_bytes(size)));
			return VIO_E_NOMEM;
		}
	}
	if (vq_init(vq, size, ring, itab, size) != 0)
		panic("vio_queue_setup: vq_init refused size %u", size);

	wr(d, VIO_QUEUE_NUM, size);
	uint64_t desc = (uint64_t)(uintptr_t)vq->desc;
	uint64_t drv = (uint64_t)(uintptr_t)vq->avail;
	uint64_t dev = (uint64_t)(uintptr_t)vq->used;
	wr(d, VIO_QUEUE_DESC_LO, (uint32_t)desc);
	wr(d, VIO_QUEUE_DESC_HI, (uint32_t)(desc >> 32));
	wr(d, VIO_QUEUE_DRIVER_LO, (uint32_t)drv);
	wr(d, VIO_QUEUE_DRIVER_HI, (uint32_t)(drv >> 32));
	wr(d, VIO_QUEUE_DEVICE_LO, (uint32_t)dev);
	wr(d, VIO_QUEUE_DEVICE_HI, (uint32_t)(dev >> 32));
	wr(d, VIO_QUEUE_READY, 1);
	return 0;
}

void vio_driver_ok(struct virtio_mmio *d)
{
	wr(d, VIO_STATUS, rd(d, VIO_STATUS) | VIO_S_DRIVER_OK);
}

uint32_t vio_config32(const struct virtio_mmio *d, uint32_t off)
{
	uint32_t gen, v;
	do {
		gen = rd(d, VIO_CONFIG_GEN);
		v = rd(d, VIO_CONFIG + off);
	} while (rd(d, VIO_CONFIG_GEN) != gen);
	return v;
}

uint64_t vio_config64(const struct virtio_mmio *d, uint32_t off)
{
	/* Two 32-bit reads (the spec's width for 64-bit fields), retried if the
	 * device changed its configuration in between. */
	uint32_t gen, lo, hi;
	do {
		gen = rd(d, VIO_CONFIG_GEN);
		lo = rd(d, VIO_CONFIG + off);
		hi = rd(d, VIO_CONFIG + off + 4);
	} while (rd(d, VIO_CONFIG_GEN) != gen);
	return (uint64_t)hi << 32 | lo;
}

void vio_notify(const struct virtio_mmio *d, uint32_t queue)
{
	wr(d, VIO_QUEUE_NOTIFY, queue);
}

uint32_t vio_intr_ack(const struct virtio_mmio *d)
{
	uint32_t st = rd(d, VIO_INTR_STATUS) & (VIO_INT_USED | VIO_INT_CONFIG);
	if (st != 0)
		wr(d, VIO_INTR_ACK, st);
	return st;
}
