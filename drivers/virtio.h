/*
 * virtio.h - a virtio device as its driver sees it, whatever carries it.
 *
 * virtio 1.x separates the device (virtio-blk, virtio-scsi: what the
 * queues and the configuration space mean) from the transport that carries
 * it (virtio-mmio on RISC-V virt, virtio-pci on x86 q35: where the status,
 * feature, queue and notification registers are, and how interrupts
 * arrive).  A transport fills in a struct virtio_dev and its operations; the
 * device drivers (virtio_blk.c, virtio_scsi.c) use only the calls below, so
 * the same driver runs over either transport.
 *
 * The transports in this tree: virtio_mmio.c (the RISC-V kernel) and
 * virtio_pci.c (the x86-64 kernel).  Each provides virtio_scan(), which
 * finds the platform's virtio devices; drivers/devices.c calls it at boot.
 * The ring format itself is virtqueue.[ch].  docs/blocklayer.md has the
 * details of both transports.
 */
#ifndef VIRTIO_H
#define VIRTIO_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/virtqueue.h"

/* Device status bits (virtio 1.x, 2.1). */
#define VIRTIO_S_ACKNOWLEDGE  1
#define VIRTIO_S_DRIVER       2
#define VIRTIO_S_DRIVER_OK    4
#define VIRTIO_S_FEATURES_OK  8
#define VIRTIO_S_NEEDS_RESET  64
#define VIRTIO_S_FAILED       128

/* Why an interrupt came (what a driver's handler is told). */
#define VIRTIO_INT_USED    1     /* a queue has used buffers        */
#define VIRTIO_INT_CONFIG  2     /* the configuration space changed */

/* Transport feature bits (virtio 1.x, 6). */
#define VIRTIO_F_INDIRECT_DESC  28
#define VIRTIO_F_VERSION_1      32

/* Device types (virtio 1.x, 5). */
#define VIRTIO_ID_BLOCK  2
#define VIRTIO_ID_SCSI   8

#define VIO_BIT(n) (1ull << (n))

/* Errors from transports and device bring-up (negative). */
#define VIO_E_NODEV     (-1)   /* empty slot, or not a virtio device    */
#define VIO_E_LEGACY    (-2)   /* only the legacy (pre-1.0) interface    */
#define VIO_E_FEATURES  (-3)   /* the device refused our feature set     */
#define VIO_E_QUEUE     (-4)   /* no such queue, or it is in use         */
#define VIO_E_NOMEM     (-5)
#define VIO_E_CONFIG    (-6)   /* configuration values we cannot work with */
#define VIO_E_IRQ       (-7)   /* no way to deliver its interrupts        */

struct virtio_dev;

/* What a transport does for its devices. */
struct virtio_transport {
	/* Reset, then negotiate: accept the offered bits of `wanted`; fail (and
	 * mark the device FAILED) unless all of `required` are offered.
	 * 0 or VIO_E_FEATURES; d->features holds the result. */
	int  (*negotiate)(struct virtio_dev *d, uint64_t wanted, uint64_t required);
	/* Deliver the device's interrupts to fn(arg, VIRTIO_INT_* bits) from now
	 * on.  Called after negotiate and before the queues are set up (PCI
	 * assigns MSI-X vectors to queues as they are set up).  A device whose
	 * driver never calls this is polled. */
	int  (*irq_setup)(struct virtio_dev *d, void (*fn)(void *arg, uint32_t why), void *arg);
	/* Give queue `index` to the device, over ring memory vq already
	 * describes (virtio_queue_alloc).  0 or VIO_E_QUEUE. */
	int  (*queue_enable)(struct virtio_dev *d, uint32_t index, struct virtq *vq);
	/* Largest size the device allows for queue `index` (0: no such queue). */
	uint32_t (*queue_max)(struct virtio_dev *d, uint32_t index);
	void (*notify)(struct virtio_dev *d, uint32_t queue);
	/* The device-specific configuration space: a field of `width` bytes
	 * (1, 2 or 4) at `off`, and the generation counter that changes when the
	 * device changes the space (virtio_config* below retry around it). */
	uint32_t (*config_read)(struct virtio_dev *d, uint32_t off, int width);
	uint32_t (*config_gen)(struct virtio_dev *d);
	uint8_t  (*status)(struct virtio_dev *d);
	void (*set_status)(struct virtio_dev *d, uint8_t status);
	/* Where the device is, for messages: "virtio-mmio 0x10001000 irq 1". */
	void (*describe)(struct virtio_dev *d, char *buf, int size);
};

struct virtio_dev {
	const struct virtio_transport *t;
	uint32_t device_id;
	uint64_t features;          /* negotiated */
};

/* Find the platform's virtio devices (implemented by the transport the
 * architecture links): found() is called for each, in a stable order (bus
 * slot order), with the device or NULL and an error (VIO_E_LEGACY for a
 * device this driver cannot use) and a description of where it is. */
void virtio_scan(void (*found)(struct virtio_dev *d, int err, const char *where));

/* Set up a virtqueue of at most `want` entries (bounded by the device's
 * maximum for `index`), with indirect tables if `indirect`, in freshly
 * allocated zeroed pages, and enable it.  0 or VIO_E_*. */
int  virtio_queue_setup(struct virtio_dev *d, uint32_t index, struct virtq *vq, uint16_t want, bool indirect);

/* Configuration fields, read consistently (retried while the generation
 * changes under the read).  64-bit fields are two 32-bit reads. */
uint8_t  virtio_config8(struct virtio_dev *d, uint32_t off);
uint16_t virtio_config16(struct virtio_dev *d, uint32_t off);
uint32_t virtio_config32(struct virtio_dev *d, uint32_t off);
uint64_t virtio_config64(struct virtio_dev *d, uint32_t off);

static inline int virtio_negotiate(struct virtio_dev *d, uint64_t wanted, uint64_t required)
{ return d->t->negotiate(d, wanted, required); }
static inline int virtio_irq_setup(struct virtio_dev *d, void (*fn)(void *, uint32_t), void *arg)
{ return d->t->irq_setup(d, fn, arg); }
static inline void virtio_notify(struct virtio_dev *d, uint32_t queue) { d->t->notify(d, queue); }
static inline void virtio_driver_ok(struct virtio_dev *d)
{ d->t->set_status(d, (uint8_t)(d->t->status(d) | VIRTIO_S_DRIVER_OK)); }
static inline void virtio_fail(struct virtio_dev *d)
{ d->t->set_status(d, (uint8_t)(d->t->status(d) | VIRTIO_S_FAILED)); }
static inline void virtio_describe(struct virtio_dev *d, char *buf, int size) { d->t->describe(d, buf, size); }

/* The generic part of feature negotiation, for transports: reset, say we
 * know the device, offer what both sides have, check FEATURES_OK stuck.
 * read_features/write_features move the 64 feature bits. */
int virtio_negotiate_common(struct virtio_dev *d, uint64_t wanted, uint64_t required,
                            uint64_t (*read_features)(struct virtio_dev *d),
                            void (*write_features)(struct virtio_dev *d, uint64_t f));

#endif /* VIRTIO_H */
