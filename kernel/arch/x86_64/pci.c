/*
 * pci.c - the PCI bus: configuration space through the legacy ports
 * 0xcf8/0xcfc (the first 256 bytes of each function, which is where every
 * capability virtio-pci uses lives), a scan of the buses in slot order,
 * memory BARs, the capability list, and MSI-X tables.  SeaBIOS has
 * assigned the BARs before the kernel starts; the kernel uses its choices.
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/klib.h"

#define CONFIG_ADDRESS 0xcf8
#define CONFIG_DATA    0xcfc

#define PCI_VENDOR     0x00
#define PCI_COMMAND    0x04
#define PCI_STATUS     0x06
#define PCI_CLASS      0x08
#define PCI_HEADER     0x0e
#define PCI_BAR0       0x10
#define PCI_SECONDARY  0x19
#define PCI_CAP_PTR    0x34
#define CMD_MEMORY     (1u << 1)
#define CMD_MASTER     (1u << 2)
#define CMD_INTX_OFF   (1u << 10)
#define STATUS_CAPS    (1u << 4)

static void select(uint32_t bdf, uint32_t off)
{
	outl(CONFIG_ADDRESS, 0x80000000u | bdf << 8 | (off & 0xfc));
}

uint32_t pci_read32(uint32_t bdf, uint32_t off)
{
	select(bdf, off);
	return inl(CONFIG_DATA);
}

uint16_t pci_read16(uint32_t bdf, uint32_t off)
{
	select(bdf, off);
	return inw((uint16_t)(CONFIG_DATA + (off & 2)));
}

uint8_t pci_read8(uint32_t bdf, uint32_t off)
{
	select(bdf, off);
	return inb((uint16_t)(CONFIG_DATA + (off & 3)));
}

void pci_write32(uint32_t bdf, uint32_t off, uint32_t v)
{
	select(bdf, off);
	outl(CONFIG_DATA, v);
}

void pci_write16(uint32_t bdf, uint32_t off, uint16_t v)
{
	select(bdf, off);
	outw((uint16_t)(CONFIG_DATA + (off & 2)), v);
}

uint64_t pci_bar(uint32_t bdf, int bar)
{
	if (bar < 0 || bar > 5)
		return 0;
	uint32_t lo = pci_read32(bdf, PCI_BAR0 + 4 * (uint32_t)bar);
	if (lo & 1)
		return 0;                                   /* an I/O BAR */
	uint64_t a = lo & ~0xfu;
	if (((lo >> 1) & 3) == 2 && bar < 5)            /* 64-bit: the next BAR is the high half */
		a |= (uint64_t)pci_read32(bdf, PCI_BAR0 + 4 * (uint32_t)(bar + 1)) << 32;
	return a;
}

uint8_t pci_find_cap(uint32_t bdf, uint8_t id, uint8_t from)
{
	if (!(pci_read16(bdf, PCI_STATUS) & STATUS_CAPS))
		return 0;
	uint8_t at = from == 0 ? pci_read8(bdf, PCI_CAP_PTR) : pci_read8(bdf, (uint32_t)from + 1);
	for (int guard = 0; at >= 0x40 && guard < 48; guard++) {
		at &= 0xfc;
		if (pci_read8(bdf, at) == id)
			return at;
		at = pci_read8(bdf, (uint32_t)at + 1);
	}
	return 0;
}

void pci_enable(uint32_t bdf)
{
	uint16_t cmd = pci_read16(bdf, PCI_COMMAND);
	pci_write16(bdf, PCI_COMMAND, (uint16_t)(cmd | CMD_MEMORY | CMD_MASTER));
}

static void scan_bus(uint32_t bus, int depth, void (*fn)(uint32_t, uint16_t, uint16_t))
{
	for (uint32_t dev = 0; dev < 32; dev++) {
		uint32_t nfunc = 1;
		for (uint32_t f = 0; f < nfunc; f++) {
			uint32_t bdf = PCI_BDF(bus, dev, f);
			uint32_t id = pci_read32(bdf, PCI_VENDOR);
			if ((id & 0xffff) == 0xffff)
				continue;
			if (f == 0 && (pci_read8(bdf, PCI_HEADER) & 0x80))
				nfunc = 8;
			fn(bdf, (uint16_t)id, (uint16_t)(id >> 16));
			/* A PCI-to-PCI bridge: its devices follow it. */
			if ((pci_read32(bdf, PCI_CLASS) >> 16) == 0x0604 && depth < 8) {
				uint32_t sec = pci_read8(bdf, PCI_SECONDARY);
				if (sec > bus)
					scan_bus(sec, depth + 1, fn);
			}
		}
	}
}

void pci_scan(void (*fn)(uint32_t bdf, uint16_t vendor, uint16_t device))
{
	scan_bus(0, 0, fn);
}

/* ---- MSI-X ------------------------------------------------------------------ */

#define PCI_CAP_MSIX   0x11
#define MSIX_ENABLE    (1u << 15)
#define MSIX_MASKALL   (1u << 14)
#define MSIX_VEC_MASKED 1u

#define MAX_MSIX_DEVS 16
static struct { uint32_t bdf; volatile uint32_t *table; uint16_t size; } msix[MAX_MSIX_DEVS];
static int nmsix;

static int msix_find(uint32_t bdf)
{
	for (int i = 0; i < nmsix; i++)
		if (msix[i].bdf == bdf)
			return i;
	return -1;
}

int msix_enable(uint32_t bdf, uint16_t need)
{
	uint8_t cap = pci_find_cap(bdf, PCI_CAP_MSIX, 0);
	if (cap == 0 || nmsix == MAX_MSIX_DEVS)
		return -1;
	uint16_t mc = pci_read16(bdf, cap + 2u);
	uint16_t size = (uint16_t)((mc & 0x7ff) + 1);
	if (size < need)
		return -1;
	uint32_t t = pci_read32(bdf, cap + 4u);
	uint64_t base = pci_bar(bdf, (int)(t & 7));
	if (base == 0)
		return -1;
	uint64_t pa = base + (t & ~7u);
	uint64_t va = mmio_map(pa & ~(PGSIZE - 1), (pa & (PGSIZE - 1)) + (uint64_t)size * 16);
	int i = nmsix++;
	msix[i].bdf = bdf;
	msix[i].table = (volatile uint32_t *)(va + (pa & (PGSIZE - 1)));
	msix[i].size = size;
	for (uint16_t e = 0; e < size; e++)
		msix[i].table[e * 4 + 3] = MSIX_VEC_MASKED;
	/* MSI-X on and INTx off: the function signals only by message now. */
	pci_write16(bdf, cap + 2u, (uint16_t)((mc | MSIX_ENABLE) & ~MSIX_MASKALL));
	pci_write16(bdf, 0x04, (uint16_t)(pci_read16(bdf, 0x04) | CMD_INTX_OFF));
	return 0;
}

void msix_set(uint32_t bdf, uint16_t entry, uint8_t vector)
{
	int i = msix_find(bdf);
	if (i < 0 || entry >= msix[i].size)
		panic("msix_set: %x has no MSI-X entry %u", bdf, entry);
	volatile uint32_t *e = msix[i].table + entry * 4;
	e[0] = 0xfee00000u | lapic_id() << 12;     /* this CPU's local APIC, physical destination */
	e[1] = 0;
	e[2] = vector;                             /* fixed delivery, edge */
	e[3] = 0;                                  /* unmasked */
}
