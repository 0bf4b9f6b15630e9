/*
 * virtio_mmio.h - the virtio-mmio transport (virtio 1.x, section 4.2): the
 * memory-mapped slots of QEMU's RISC-V virt machine, one device and one
 * interrupt line each.  It implements struct virtio_transport (virtio.h)
 * and virtio_scan(), which offers every populated slot the device tree
 * listed, in address order.
 *
 * Only the modern interface (register Version 2) is supported: QEMU is
 * started with -global virtio-mmio.force-legacy=false (tools/qemu-disks.sh).
 * docs/blocklayer.md explains the choice.
 */
#ifndef VIRTIO_MMIO_H
#define VIRTIO_MMIO_H

#include <stdint.h>
#include "drivers/virtio.h"

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

/* Interrupt status bits. */
#define VIO_INT_USED    1
#define VIO_INT_CONFIG  2

/* Look at one slot: a device (allocated; the transport keeps it for the
 * device's life), or NULL with *err = VIO_E_NODEV (an empty slot) or
 * VIO_E_LEGACY (the version 1 register layout). */
struct virtio_dev *virtio_mmio_probe(uint64_t base, uint32_t irq, int *err);

#endif /* VIRTIO_MMIO_H */
