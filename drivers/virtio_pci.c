/*
 * virtio_pci.c - the virtio-pci transport, modern interface (virtio 1.x,
 * section 4.1), as the x86-64 kernel's virtio transport (virtio.h).
 *
 * A virtio PCI function (vendor 1af4h) describes its registers with
 * vendor-specific PCI capabilities, each naming a BAR and a window in it:
 * the common configuration (features, status, queue setup), the
 * notification area (a doorbell per queue, at queue_notify_off times a
 * multiplier), the ISR status and the device-specific configuration.  A
 * device without the common-configuration capability speaks only the
 * legacy interface, which this driver does not (docs/blocklayer.md).
 *
 * Interrupts are MSI-X messages straight to this CPU's local APIC: table
 * entry 0 for the queues, entry 1 for configuration changes, each on a
 * vector of its own, so the handler knows which without reading the ISR.
 * INTx (a shared, level-triggered line routed through ACPI's tables) is not
 * supported: a device without MSI-X can still be driven in polled mode
 * (boot option polled=1).
 *
 * The windows are uncached memory (mmio_map); x86 keeps uncached accesses
 * in program order with each other and with earlier writes to ordinary
 * memory, so the ring update is visible before the doorbell rings and only
 * the compiler needs a barrier.
 */
#include <stdint.h>
#include <stdbool.h>
#include "drivers/virtio.h"
#include "drivers/virtqueue.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/klib.h"

#define VIRTIO_PCI_VENDOR     0x1af4
#define PCI_CAP_VENDOR        0x09
#define PCI_SUBSYSTEM_ID      0x2e

/* Capability types (cfg_type). */
#define VPCI_CAP_COMMON  1
#define VPCI_CAP_NOTIFY  2
#define VPCI_CAP_ISR     3
#define VPCI_CAP_DEVICE  4

/* Common configuration registers. */
#define C_DFSELECT      0x00
#define C_DF            0x04
#define C_GFSELECT      0x08
#define C_GF            0x0c
#define C_MSIX_CONFIG   0x10
#define C_NUM_QUEUES    0x12
#define C_STATUS        0x14
#define C_CFG_GEN       0x15
#define C_Q_SELECT      0x16
#define C_Q_SIZE        0x18
#define C_Q_MSIX        0x1a
#define C_Q_ENABLE      0x1c
#define C_Q_NOFF        0x1e
#define C_Q_DESC        0x20
#define C_Q_DRIVER      0x28
#define C_Q_DEVICE      0x30

#define NO_VECTOR       0xffff
#define MSIX_QUEUES     0
#define MSIX_CONFIG     1

#define MAX_VPCI 8

struct vpci {
	struct virtio_dev vd;          /* first: the driver's handle is a pointer to it */
	uint32_t bdf;
	volatile uint8_t *common, *notify, *isr, *device;
	uint32_t notify_mult;
	uint32_t device_len;
	bool msix;
	void (*intr_fn)(void *arg, uint32_t why);
	void *intr_arg;
	int vec_queues, vec_config;
};

static struct vpci devs[MAX_VPCI];
static int ndevs;

static inline void barrier(void) { __asm__ volatile("" ::: "memory"); }

static uint8_t  r8(volatile uint8_t *b, uint32_t o)  { barrier(); uint8_t v = b[o]; barrier(); return v; }
static uint16_t r16(volatile uint8_t *b, uint32_t o) { barrier(); uint16_t v = *(volatile uint16_t *)(b + o); barrier(); return v; }
static uint32_t r32(volatile uint8_t *b, uint32_t o) { barrier(); uint32_t v = *(volatile uint32_t *)(b + o); barrier(); return v; }
static void w8(volatile uint8_t *b, uint32_t o, uint8_t v)   { barrier(); b[o] = v; barrier(); }
static void w16(volatile uint8_t *b, uint32_t o, uint16_t v) { barrier(); *(volatile uint16_t *)(b + o) = v; barrier(); }
static void w32(volatile uint8_t *b, uint32_t o, uint32_t v) { barrier(); *(volatile uint32_t *)(b + o) = v; barrier(); }
static void w64(volatile uint8_t *b, uint32_t o, uint64_t v)
{
	/* Two 32-bit halves, low first (the spec allows the driver that). */
	w32(b, o, (uint32_t)v);
	w32(b, o + 4, (uint32_t)(v >> 32));
}

static struct vpci *of(struct virtio_dev *d) { return (struct vpci *)d; }

static uint8_t p_status(struct virtio_dev *d) { return r8(of(d)->common, C_STATUS); }
static void p_set_status(struct virtio_dev *d, uint8_t s) { w8(of(d)->common, C_STATUS, s); }

static uint64_t p_read_features(struct virtio_dev *d)
{
	uint64_t f = 0;
	for (uint32_t sel = 0; sel < 2; sel++) {
		w32(of(d)->common, C_DFSELECT, sel);
		f |= (uint64_t)r32(of(d)->common, C_DF) << (32 * sel);
	}
	return f;
}

static void p_write_features(struct virtio_dev *d, uint64_t f)
{
	for (uint32_t sel = 0; sel < 2; sel++) {
		w32(of(d)->common, C_GFSELECT, sel);
		w32(of(d)->common, C_GF, (uint32_t)(f >> (32 * sel)));
	}
}

static int p_negotiate(struct virtio_dev *d, uint64_t wanted, uint64_t required)
{
	return virtio_negotiate_common(d, wanted, required, p_read_features, p_write_features);
}

static void queues_intr(void *arg)
{
	struct vpci *p = arg;
	if (p->intr_fn != NULL)
		p->intr_fn(p->intr_arg, VIRTIO_INT_USED);
}

static void config_intr(void *arg)
{
	struct vpci *p = arg;
	if (p->intr_fn != NULL)
		p->intr_fn(p->intr_arg, VIRTIO_INT_CONFIG);
}

static int p_irq_setup(struct virtio_dev *d, void (*fn)(void *, uint32_t), void *arg)
{
	struct vpci *p = of(d);
	if (msix_enable(p->bdf, 2) != 0)
		return VIO_E_IRQ;
	p->vec_queues = vector_alloc(queues_intr, p);
	p->vec_config = vector_alloc(config_intr, p);
	if (p->vec_queues < 0 || p->vec_config < 0)
		return VIO_E_IRQ;
	p->intr_fn = fn;
	p->intr_arg = arg;
	msix_set(p->bdf, MSIX_QUEUES, (uint8_t)p->vec_queues);
	msix_set(p->bdf, MSIX_CONFIG, (uint8_t)p->vec_config);
	w16(p->common, C_MSIX_CONFIG, MSIX_CONFIG);
	if (r16(p->common, C_MSIX_CONFIG) != MSIX_CONFIG)
		return VIO_E_IRQ;              /* the device could not take the vector */
	p->msix = true;
	return 0;
}

static uint32_t p_queue_max(struct virtio_dev *d, uint32_t index)
{
	struct vpci *p = of(d);
	if (index >= r16(p->common, C_NUM_QUEUES))
		return 0;
	w16(p->common, C_Q_SELECT, (uint16_t)index);
	if (r16(p->common, C_Q_ENABLE) != 0)
		return 0;                      /* in use: not ours to set up */
	return r16(p->common, C_Q_SIZE);
}

static int p_queue_enable(struct virtio_dev *d, uint32_t index, struct virtq *vq)
{
	struct vpci *p = of(d);
	w16(p->common, C_Q_SELECT, (uint16_t)index);
	if (r16(p->common, C_Q_ENABLE) != 0)
		return VIO_E_QUEUE;
	w16(p->common, C_Q_SIZE, vq->size);
	uint16_t want = p->msix ? MSIX_QUEUES : NO_VECTOR;
	w16(p->common, C_Q_MSIX, want);
	if (r16(p->common, C_Q_MSIX) != want)
		return VIO_E_IRQ;
	w64(p->common, C_Q_DESC, (uint64_t)(uintptr_t)vq->desc);
	w64(p->common, C_Q_DRIVER, (uint64_t)(uintptr_t)vq->avail);
	w64(p->common, C_Q_DEVICE, (uint64_t)(uintptr_t)vq->used);
	w16(p->common, C_Q_ENABLE, 1);
	return 0;
}

static void p_notify(struct virtio_dev *d, uint32_t queue)
{
	struct vpci *p = of(d);
	w16(p->common, C_Q_SELECT, (uint16_t)queue);
	uint32_t off = r16(p->common, C_Q_NOFF) * p->notify_mult;
	w16(p->notify, off, (uint16_t)queue);
}

static uint32_t p_config_read(struct virtio_dev *d, uint32_t off, int width)
{
	struct vpci *p = of(d);
	if (off + (uint32_t)width > p->device_len)
		return 0;
	if (width == 1) return r8(p->device, off);
	if (width == 2) return r16(p->device, off);
	return r32(p->device, off);
}

static uint32_t p_config_gen(struct virtio_dev *d) { return r8(of(d)->common, C_CFG_GEN); }

static void p_describe(struct virtio_dev *d, char *buf, int size)
{
	struct vpci *p = of(d);
	ksnprintf(buf, (size_t)size, "pci %02x:%02x.%x%s", p->bdf >> 8, (p->bdf >> 3) & 0x1f, p->bdf & 7,
	          p->msix ? " msi-x" : "");
}

static const struct virtio_transport pci_transport = {
	.negotiate = p_negotiate,
	.irq_setup = p_irq_setup,
	.queue_enable = p_queue_enable,
	.queue_max = p_queue_max,
	.notify = p_notify,
	.config_read = p_config_read,
	.config_gen = p_config_gen,
	.status = p_status,
	.set_status = p_set_status,
	.describe = p_describe,
};

/* Map the window a virtio capability describes. */
static volatile uint8_t *cap_window(uint32_t bdf, uint8_t cap, uint32_t *len)
{
	uint8_t bar = pci_read8(bdf, cap + 4u);
	uint32_t off = pci_read32(bdf, cap + 8u), l = pci_read32(bdf, cap + 12u);
	uint64_t base = pci_bar(bdf, bar);
	if (base == 0 || l == 0)
		return NULL;
	if (len != NULL)
		*len = l;
	return (volatile uint8_t *)mmio_map(base + off, l);
}

static struct virtio_dev *probe(uint32_t bdf, uint16_t device, int *err)
{
	/* Modern IDs are 1040h + the virtio type; transitional ones (1000h-
	 * 103fh) give the type in the subsystem ID. */
	uint32_t type = device >= 0x1040 ? device - 0x1040u : pci_read16(bdf, PCI_SUBSYSTEM_ID);
	if (ndevs == MAX_VPCI) {
		*err = VIO_E_NOMEM;
		return NULL;
	}
	struct vpci *p = &devs[ndevs];
	*p = (struct vpci){ .vd = { .t = &pci_transport, .device_id = type }, .bdf = bdf };
	uint8_t caps[5] = { 0 };
	for (uint8_t c = pci_find_cap(bdf, PCI_CAP_VENDOR, 0); c != 0; c = pci_find_cap(bdf, PCI_CAP_VENDOR, c)) {
		uint8_t kind = pci_read8(bdf, c + 3u);
		if (kind >= 1 && kind <= 4 && caps[kind] == 0)
			caps[kind] = c;
	}
	if (caps[VPCI_CAP_COMMON] == 0 || caps[VPCI_CAP_NOTIFY] == 0) {
		*err = VIO_E_LEGACY;
		return NULL;
	}
	pci_enable(bdf);
	p->common = cap_window(bdf, caps[VPCI_CAP_COMMON], NULL);
	p->notify = cap_window(bdf, caps[VPCI_CAP_NOTIFY], NULL);
	p->notify_mult = pci_read32(bdf, caps[VPCI_CAP_NOTIFY] + 16u);
	if (caps[VPCI_CAP_ISR])
		p->isr = cap_window(bdf, caps[VPCI_CAP_ISR], NULL);
	if (caps[VPCI_CAP_DEVICE])
		p->device = cap_window(bdf, caps[VPCI_CAP_DEVICE], &p->device_len);
	if (p->common == NULL || p->notify == NULL) {
		*err = VIO_E_NODEV;            /* a BAR the firmware left unassigned */
		return NULL;
	}
	ndevs++;
	*err = 0;
	return &p->vd;
}

static void (*scan_found)(struct virtio_dev *d, int err, const char *where);

static void scan_one(uint32_t bdf, uint16_t vendor, uint16_t device)
{
	if (vendor != VIRTIO_PCI_VENDOR || device < 0x1000 || device > 0x107f)
		return;
	char where[32];
	ksnprintf(where, sizeof where, "pci %02x:%02x.%x", bdf >> 8, (bdf >> 3) & 0x1f, bdf & 7);
	int err;
	struct virtio_dev *d = probe(bdf, device, &err);
	scan_found(d, err, where);
}

void virtio_scan(void (*found)(struct virtio_dev *d, int err, const char *where))
{
	scan_found = found;
	pci_scan(scan_one);
}
