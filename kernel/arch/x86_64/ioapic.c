/*
 * ioapic.c - the I/O APIC: routes the ISA interrupt lines (the serial port,
 * the HPET in legacy mode) to vectors on this CPU.  An ISA IRQ reaches the
 * IOAPIC on the global system interrupt the firmware's MADT names for it
 * (IRQ 0 is usually on GSI 2), with the polarity and trigger mode the MADT
 * gives (ISA's own: active high, edge) (acpi.c).
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/klib.h"

#define IOREGSEL  0x00
#define IOWIN     0x10
#define IOAPICVER 0x01
#define REDTBL(n) (0x10 + 2 * (n))

#define RTE_MASKED     (1u << 16)
#define RTE_LEVEL      (1u << 15)
#define RTE_ACTIVE_LOW (1u << 13)

static volatile uint32_t *ioapic;
static uint32_t nlines;

static uint32_t rd(uint32_t reg)
{
	ioapic[IOREGSEL / 4] = reg;
	return ioapic[IOWIN / 4];
}

static void wr(uint32_t reg, uint32_t v)
{
	ioapic[IOREGSEL / 4] = reg;
	ioapic[IOWIN / 4] = v;
}

void ioapic_init(void)
{
	ioapic = (volatile uint32_t *)mmio_map(plat.ioapic, 4096);
	nlines = ((rd(IOAPICVER) >> 16) & 0xff) + 1;
	for (uint32_t i = 0; i < nlines; i++) {
		wr(REDTBL(i), RTE_MASKED);
		wr(REDTBL(i) + 1, 0);
	}
}

void ioapic_route(uint32_t isa_irq, uint8_t vector)
{
	if (isa_irq >= 16)
		panic("ioapic_route: no ISA IRQ %u", isa_irq);
	uint32_t gsi = plat.isa_gsi[isa_irq];
	if (gsi < plat.ioapic_gsi_base || gsi - plat.ioapic_gsi_base >= nlines)
		panic("ioapic_route: IRQ %u is on GSI %u, not on this IOAPIC", isa_irq, gsi);
	uint32_t line = gsi - plat.ioapic_gsi_base;
	uint16_t flags = plat.isa_flags[isa_irq];
	uint32_t lo = vector;                                  /* fixed delivery, physical destination */
	if ((flags & 0x3) == 0x3)
		lo |= RTE_ACTIVE_LOW;
	if (((flags >> 2) & 0x3) == 0x3)
		lo |= RTE_LEVEL;
	wr(REDTBL(line) + 1, lapic_id() << 24);
	wr(REDTBL(line), lo);
}
