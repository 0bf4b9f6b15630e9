/*
 * virtio.c - what every virtio transport shares (see virtio.h): the
 * negotiation handshake, queue memory, and consistent configuration reads.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/virtio.h"
#include "drivers/virtqueue.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/vm.h"

int virtio_negotiate_common(struct virtio_dev *d, uint64_t wanted, uint64_t required,
                            uint64_t (*read_features)(struct virtio_dev *d),
                            void (*write_features)(struct virtio_dev *d, uint64_t f))
{
	/* Reset (the device says it is done by reading back 0), then say we
	 * have seen the device and know how to drive it (virtio 1.x, 3.1.1). */
	d->t->set_status(d, 0);
	while (d->t->status(d) != 0)
		;
	d->t->set_status(d, VIRTIO_S_ACKNOWLEDGE);
	d->t->set_status(d, VIRTIO_S_ACKNOWLEDGE | VIRTIO_S_DRIVER);

	uint64_t offered = read_features(d);
	if ((offered & required) != required) {
		virtio_fail(d);
		return VIO_E_FEATURES;
	}
	uint64_t accept = offered & wanted;
	write_features(d, accept);
	d->t->set_status(d, VIRTIO_S_ACKNOWLEDGE | VIRTIO_S_DRIVER | VIRTIO_S_FEATURES_OK);
	/* The device may still say no to the combination. */
	if (!(d->t->status(d) & VIRTIO_S_FEATURES_OK)) {
		virtio_fail(d);
		return VIO_E_FEATURES;
	}
	d->features = accept;
	return 0;
}

static uint64_t pages_for(uint64_t bytes)
{
	return (bytes + PGSIZE - 1) / PGSIZE;
}

int virtio_queue_setup(struct virtio_dev *d, uint32_t index, struct virtq *vq, uint16_t want, bool indirect)
{
	uint32_t max = d->t->queue_max(d, index);
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
	uint64_t itab_pages = pages_for((uint64_t)size * size * sizeof(struct vq_desc));
	if (indirect) {
		itab = kalloc_contig(itab_pages);
		if (itab == NULL) {
			kfree_contig(ring, pages_for(vq_ring_bytes(size)));
			return VIO_E_NOMEM;
		}
	}
	if (vq_init(vq, size, ring, itab, size) != 0)
		panic("virtio_queue_setup: vq_init refused size %u", size);
	int e = d->t->queue_enable(d, index, vq);
	if (e != 0) {
		kfree_contig(ring, pages_for(vq_ring_bytes(size)));
		if (itab != NULL)
			kfree_contig(itab, itab_pages);
	}
	return e;
}

uint32_t virtio_config32(struct virtio_dev *d, uint32_t off)
{
	uint32_t gen, v;
	do {
		gen = d->t->config_gen(d);
		v = d->t->config_read(d, off, 4);
	} while (d->t->config_gen(d) != gen);
	return v;
}

uint16_t virtio_config16(struct virtio_dev *d, uint32_t off)
{
	uint32_t gen, v;
	do {
		gen = d->t->config_gen(d);
		v = d->t->config_read(d, off, 2);
	} while (d->t->config_gen(d) != gen);
	return (uint16_t)v;
}

uint8_t virtio_config8(struct virtio_dev *d, uint32_t off)
{
	uint32_t gen, v;
	do {
		gen = d->t->config_gen(d);
		v = d->t->config_read(d, off, 1);
	} while (d->t->config_gen(d) != gen);
	return (uint8_t)v;
}

uint64_t virtio_config64(struct virtio_dev *d, uint32_t off)
{
	/* Two 32-bit reads (the spec's width for 64-bit fields), retried if the
	 * device changed its configuration in between. */
	uint32_t gen, lo, hi;
	do {
		gen = d->t->config_gen(d);
		lo = d->t->config_read(d, off, 4);
		hi = d->t->config_read(d, off + 4, 4);
	} while (d->t->config_gen(d) != gen);
	return (uint64_t)hi << 32 | lo;
}
