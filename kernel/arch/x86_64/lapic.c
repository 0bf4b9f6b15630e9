/*
 * lapic.c - the local APIC: every interrupt reaches the CPU through it, and
 * each one that is not spurious is acknowledged here (EOI).  The legacy
 * 8259 PICs are masked for good: devices come through the IOAPIC (ioapic.c)
 * or as MSI-X messages (virtio-pci), both of which the local APIC accepts.
 * Its own timer is not used (the HPET is the timer, hpet.c).
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include <stddef.h>

#define LAPIC_ID      0x020
#define LAPIC_TPR     0x080
#define LAPIC_EOI     0x0b0
#define LAPIC_SVR     0x0f0
#define LAPIC_ICR_LO  0x300
#define LAPIC_ICR_HI  0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_LVT_ERROR 0x370
#define LVT_MASKED    (1u << 16)
#define SVR_ENABLE    (1u << 8)
#define ICR_SELF      (1u << 18)
#define ICR_PENDING   (1u << 12)

static volatile uint32_t *lapic;

static uint32_t rd(uint32_t reg) { return lapic[reg / 4]; }
static void wr(uint32_t reg, uint32_t v) { lapic[reg / 4] = v; (void)lapic[LAPIC_ID / 4]; }

void lapic_init(void)
{
	/* Mask both 8259s: everything comes through the APICs. */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);

	lapic = (volatile uint32_t *)mmio_map(plat.lapic, 4096);
	wr(LAPIC_SVR, SVR_ENABLE | VEC_SPURIOUS);
	wr(LAPIC_LVT_TIMER, LVT_MASKED);
	wr(LAPIC_LVT_LINT0, LVT_MASKED);
	wr(LAPIC_LVT_LINT1, LVT_MASKED);
	wr(LAPIC_LVT_ERROR, LVT_MASKED);
	wr(LAPIC_TPR, 0);                    /* accept every priority */
	wr(LAPIC_EOI, 0);
}

void lapic_eoi(void)
{
	wr(LAPIC_EOI, 0);
}

uint32_t lapic_id(void)
{
	return lapic != NULL ? rd(LAPIC_ID) >> 24 : 0;
}

/* Interrupt ourselves (the timer, when its comparator was set too late). */
void lapic_self_ipi(uint8_t vector)
{
	while (rd(LAPIC_ICR_LO) & ICR_PENDING)
		;
	wr(LAPIC_ICR_HI, 0);
	wr(LAPIC_ICR_LO, ICR_SELF | vector);
}
