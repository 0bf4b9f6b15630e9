/*
 * virtio_mmio.h - the virtio-mmio transport (virtio 1.x, section 4.2): how
 * the kernel finds a virtio device on QEMU virt's memory-mapped slots,
 * negotiates features, hands it virtqueues and rings its doorbell.
 *
 * Only the modern interface (register Version 2) is supported: QEMU is
 * started with -global virtio-mmio.force-legacy=false (tools/qemu-disks.sh).
 * docs/blocklayer.md explains the choice.  Device drivers (virtio_blk.c) sit
 * on top; the ring format itself is in virtqueue.[ch].
 */
#ifndef VIRTIO_MMIO_H
#define VIRTIO_MMIO_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/virtqueue.h"

#define VIRTIO_MMIO_MAGIC  0x74726976u   /* "virt" read as a little-endian word */

/* Register offsets. */
#define VIO_MAGIC            0x000
#define VIO_VERSION          0x004
#define VIO_DEVICE_ID        0x008
#define VIO_VENDOR_ID        0x00c
#define VIO_DEVICE_FEATURES  0x010
#define VIO_DEVICE_FEAT_SEL  0x014
#define VIO_DRIVER_FEATURES  0x020
#define VIO_DRIVER_FEAT_SEL  0x024
#define VIO_QUEUE_SEL        0x030
#define VIO_QUEUE_NUM_MAX    0x034
#define VIO_QUEUE_NUM        0x038
#define VIO_QUEUE_READY      0x044
#define VIO_QUEUE_NOTIFY     0x050
#define VIO_INTR_STATUS      0x060
#define VIO_INTR_ACK         0x064
#define VIO_STATUS           0x070
#define VIO_QUEUE_DESC_LO    0x080
#define VIO_QUEUE_DESC_HI    0x084
#define VIO_QUEUE_DRIVER_LO  0x090
#define VIO_QUEUE_DRIVER_HI  0x094
#define VIO_QUEUE_DEVICE_LO  0x0a0
#define VIO_QUEUE_DEVICE_HI  0x0a4
#define VIO_CONFIG_GEN       0x0fc
#define VIO_CONFIG           0x100

/* Device status bits. */
#define VIO_S_ACKNOWLEDGE  1
#define VIO_S_DRIVER       2
#define VIO_S_DRIVER_OK    4
#define VIO_S_FEATURES_OK  8
#define VIO_S_NEEDS_RESET  64
#define VIO_S_FAILED       128

/* Interrupt status bits. */
#define VIO_INT_USED    1
#define VIO_INT_CONFIG  2

/* Transport feature bits. */
#define VIRTIO_F_INDIRECT_DESC  28
#define VIRTIO_F_VERSION_1      32

/* Device types. */
#define VIRTIO_ID_BLOCK  2

/* Errors from the transport (negative). */
#define VIO_E_NODEV     (-1)   /* empty slot, or not a virtio device   */
#define VIO_E_LEGACY    (-2)   /* version 1 (legacy) register layout   */
#define VIO_E_FEATURES  (-3)   /* the device refused our feature set   */
#define VIO_E_QUEUE     (-4)   /* no such queue, or it is in use       */
#define VIO_E_NOMEM     (-5)

struct virtio_mmio {
	uint64_t base;
	uint32_t irq;
	uint32_t device_id;
	uint64_t features;        /* negotiated */
};

#define VIO_BIT(n) (1ull << (n))

/* Look at a slot: the device type (> 0), or VIO_E_NODEV / VIO_E_LEGACY. */
int  vio_probe(struct virtio_mmio *d, uint64_t base, uint32_t irq);
/* Reset the device and negotiate: accept the offered bits of `wanted`;
 * fail (and mark the device FAILED) unless all of `required` are offered.
 * 0 or VIO_E_FEATURES; d->features holds the result. */
int  vio_negotiate(struct virtio_mmio *d, uint64_t wanted, uint64_t required);
/* Give queue `index` to the device with at most `want` entries (and indirect
 * tables if `indirect`), in freshly allocated, zeroed pages. */
int  vio_queue_setup(struct virtio_mmio *d, uint32_t index, struct virtq *vq, uint16_t want, bool indirect);
void vio_driver_ok(struct virtio_mmio *d);
void vio_fail(struct virtio_mmio *d);
uint32_t vio_status(const struct virtio_mmio *d);

/* Device configuration space, read consistently (ConfigGeneration). */
uint32_t vio_config32(const struct virtio_mmio *d, uint32_t off);
uint64_t vio_config64(const struct virtio_mmio *d, uint32_t off);

void vio_notify(const struct virtio_mmio *d, uint32_t queue);
/* Read and acknowledge the interrupt status; returns the bits (VIO_INT_*). */
uint32_t vio_intr_ack(const struct virtio_mmio *d);

#endif /* VIRTIO_MMIO_H */
