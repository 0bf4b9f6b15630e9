/*
 * virtio_mmio.c - the virtio-mmio transport (see virtio_mmio.h).
 *
 * Registers are 32 bits wide and accessed only as whole aligned words, as
 * the spec requires (the device configuration space may also be read by
 * byte or halfword, at the field's own width).  A register access is I/O
 * and ring memory is ordinary memory; RISC-V orders the two only with a
 * fence that names both, so the accessors fence on either side: a doorbell
 * written after the ring update reaches the device after it, and ring reads
 * after an interrupt-status read see what the device wrote before raising it.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/virtio.h"
#include "drivers/virtio_mmio.h"
#include "drivers/virtqueue.h"
#include "kernel/bootinfo.h"
#include "kernel/klib.h"
#include "kernel/trap.h"

struct vmmio {
	struct virtio_dev vd;      /* first: the driver's handle is a pointer to it */
	uint64_t base;
	uint32_t irq;
	void (*intr_fn)(void *arg, uint32_t why);
	void *intr_arg;
};

static struct vmmio slots[MAX_VIRTIO];
static int nslots;

static inline void io_fence(void)
{
	__asm__ volatile("fence iorw, iorw" ::: "memory");
}

static uint32_t rd(const struct vmmio *m, uint32_t off)
{
	uint32_t v = *(volatile uint32_t *)(m->base + off);
	io_fence();
	return v;
}

static void wr(const struct vmmio *m, uint32_t off, uint32_t v)
{
	io_fence();
	*(volatile uint32_t *)(m->base + off) = v;
}

static struct vmmio *of(struct virtio_dev *d)
{
	return (struct vmmio *)d;
}

static uint8_t m_status(struct virtio_dev *d)
{
	return (uint8_t)rd(of(d), VIO_STATUS);
}

static void m_set_status(struct virtio_dev *d, uint8_t s)
{
	wr(of(d), VIO_STATUS, s);
}

static uint64_t m_read_features(struct virtio_dev *d)
{
	uint64_t offered = 0;
	for (uint32_t sel = 0; sel < 2; sel++) {
		wr(of(d), VIO_DEVICE_FEAT_SEL, sel);
		offered |= (uint64_t)rd(of(d), VIO_DEVICE_FEATURES) << (32 * sel);
	}
	return offered;
}

static void m_write_features(struct virtio_dev *d, uint64_t f)
{
	for (uint32_t sel = 0; sel < 2; sel++) {
		wr(of(d), VIO_DRIVER_FEAT_SEL, sel);
		wr(of(d), VIO_DRIVER_FEATURES, (uint32_t)(f >> (32 * sel)));
	}
}

static int m_negotiate(struct virtio_dev *d, uint64_t wanted, uint64_t required)
{
	return virtio_negotiate_common(d, wanted, required, m_read_features, m_write_features);
}

/* The slot's one interrupt line: read and acknowledge the status, then tell
 * the driver what happened. */
static void m_intr(void *arg)
{
	struct vmmio *m = arg;
	uint32_t st = rd(m, VIO_INTR_STATUS) & (VIO_INT_USED | VIO_INT_CONFIG);
	if (st == 0)
		return;
	wr(m, VIO_INTR_ACK, st);
	uint32_t why = ((st & VIO_INT_USED) ? VIRTIO_INT_USED : 0) |
	               ((st & VIO_INT_CONFIG) ? VIRTIO_INT_CONFIG : 0);
	m->intr_fn(m->intr_arg, why);
}

static int m_irq_setup(struct virtio_dev *d, void (*fn)(void *, uint32_t), void *arg)
{
	struct vmmio *m = of(d);
	if (m->irq == 0)
		return VIO_E_IRQ;
	m->intr_fn = fn;
	m->intr_arg = arg;
	irq_enable(m->irq, m_intr, m);
	return 0;
}

static uint32_t m_queue_max(struct virtio_dev *d, uint32_t index)
{
	wr(of(d), VIO_QUEUE_SEL, index);
	if (rd(of(d), VIO_QUEUE_READY) != 0)
		return 0;                     /* in use: not ours to set up */
	return rd(of(d), VIO_QUEUE_NUM_MAX);
}

static int m_queue_enable(struct virtio_dev *d, uint32_t index, struct virtq *vq)
{
	struct vmmio *m = of(d);
	wr(m, VIO_QUEUE_SEL, index);
	if (rd(m, VIO_QUEUE_READY) != 0)
		return VIO_E_QUEUE;
	wr(m, VIO_QUEUE_NUM, vq->size);
	uint64_t desc = (uint64_t)(uintptr_t)vq->desc;
	uint64_t drv = (uint64_t)(uintptr_t)vq->avail;
	uint64_t dev = (uint64_t)(uintptr_t)vq->used;
	wr(m, VIO_QUEUE_DESC_LO, (uint32_t)desc);
	wr(m, VIO_QUEUE_DESC_HI, (uint32_t)(desc >> 32));
	wr(m, VIO_QUEUE_DRIVER_LO, (uint32_t)drv);
	wr(m, VIO_QUEUE_DRIVER_HI, (uint32_t)(drv >> 32));
	wr(m, VIO_QUEUE_DEVICE_LO, (uint32_t)dev);
	wr(m, VIO_QUEUE_DEVICE_HI, (uint32_t)(dev >> 32));
	wr(m, VIO_QUEUE_READY, 1);
	return 0;
}

static void m_notify(struct virtio_dev *d, uint32_t queue)
{
	wr(of(d), VIO_QUEUE_NOTIFY, queue);
}

static uint32_t m_config_read(struct virtio_dev *d, uint32_t off, int width)
{
	uint64_t a = of(d)->base + VIO_CONFIG + off;
	uint32_t v;
	if (width == 1)
		v = *(volatile uint8_t *)a;
	else if (width == 2)
		v = *(volatile uint16_t *)a;
	else
		v = *(volatile uint32_t *)a;
	io_fence();
	return v;
}

static uint32_t m_config_gen(struct virtio_dev *d)
{
	return rd(of(d), VIO_CONFIG_GEN);
}

static void m_describe(struct virtio_dev *d, char *buf, int size)
{
	ksnprintf(buf, (size_t)size, "slot %p irq %u", (void *)of(d)->base, of(d)->irq);
}

static const struct virtio_transport mmio_transport = {
	.negotiate = m_negotiate,
	.irq_setup = m_irq_setup,
	.queue_enable = m_queue_enable,
	.queue_max = m_queue_max,
	.notify = m_notify,
	.config_read = m_config_read,
	.config_gen = m_config_gen,
	.status = m_status,
	.set_status = m_set_status,
	.describe = m_describe,
};

struct virtio_dev *virtio_mmio_probe(uint64_t base, uint32_t irq, int *err)
{
	if (nslots == MAX_VIRTIO) {
		*err = VIO_E_NOMEM;
		return NULL;
	}
	struct vmmio *m = &slots[nslots];
	*m = (struct vmmio){ .vd = { .t = &mmio_transport }, .base = base, .irq = irq };
	if (rd(m, VIO_MAGIC) != VIRTIO_MMIO_MAGIC) {
		*err = VIO_E_NODEV;
		return NULL;
	}
	uint32_t version = rd(m, VIO_VERSION);
	uint32_t id = rd(m, VIO_DEVICE_ID);
	if (id == 0) {
		*err = VIO_E_NODEV;       /* an empty slot: touch nothing else */
		return NULL;
	}
	if (version != 2) {
		*err = VIO_E_LEGACY;
		return NULL;
	}
	m->vd.device_id = id;
	nslots++;
	*err = 0;
	return &m->vd;
}

void virtio_scan(void (*found)(struct virtio_dev *d, int err, const char *where))
{
	for (int i = 0; i < bootinfo.nvirtio; i++) {
		const struct virtio_slot *s = &bootinfo.virtio[i];
		char where[48];
		ksnprintf(where, sizeof where, "virtio-mmio slot %p", (void *)s->base);
		int err;
		struct virtio_dev *d = virtio_mmio_probe(s->base, s->irq, &err);
		if (d != NULL || err != VIO_E_NODEV)
			found(d, err, where);
	}
}
