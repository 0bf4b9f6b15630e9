/*
 * cpu.h - the x86-64 port's internal interfaces: segments, the interrupt
 * controllers, the timer, PCI, firmware tables and the boot sequence.
 * Nothing outside kernel/arch/x86_64/ (and drivers/virtio_pci.c, which
 * uses PCI and MSI-X) includes this.
 */
#ifndef X86_CPU_H
#define X86_CPU_H

#include <stdint.h>
#include <stdbool.h>

/* gdt.c */
void gdt_init(void);
void tss_set_rsp0(uint64_t rsp0);

/* trap.c: vectors */
#define VEC_TIMER      0x20      /* the HPET's comparator, through the IOAPIC */
#define VEC_SPURIOUS   0xff
#define VEC_FIRST_DEV  0x30      /* devices' vectors are handed out from here */
/* A vector for fn(arg): an IOAPIC line or an MSI.  Returns the vector or -1. */
int  vector_alloc(void (*fn)(void *arg), void *arg);
void idt_init(void);

/* acpi.c: what the firmware's tables say about the machine */
struct x86_platform {
	uint64_t lapic;                /* local APIC registers */
	uint64_t ioapic;               /* the (first) IOAPIC */
	uint32_t ioapic_gsi_base;
	uint64_t hpet;                 /* HPET registers, or 0 */
	uint32_t isa_gsi[16];          /* ISA IRQ -> global system interrupt */
	uint16_t isa_flags[16];        /* MADT polarity/trigger flags per ISA IRQ */
	bool acpi;                     /* tables found (else the PC defaults) */
};
extern struct x86_platform plat;
void acpi_init(void);

/* lapic.c, ioapic.c */
void lapic_init(void);
void lapic_eoi(void);
void lapic_self_ipi(uint8_t vector);
uint32_t lapic_id(void);
void ioapic_init(void);
void ioapic_route(uint32_t isa_irq, uint8_t vector);

/* hpet.c: the clock reference and the timer's comparator */
void hpet_calibrate(void);    /* on the boot page tables: sets bootinfo.timebase_hz */
void hpet_init(void);
void hpet_timer_interrupt(void);

/* pci.c: configuration space through ports 0xcf8/0xcfc */
uint32_t pci_read32(uint32_t bdf, uint32_t off);
uint16_t pci_read16(uint32_t bdf, uint32_t off);
uint8_t  pci_read8(uint32_t bdf, uint32_t off);
void pci_write32(uint32_t bdf, uint32_t off, uint32_t v);
void pci_write16(uint32_t bdf, uint32_t off, uint16_t v);
#define PCI_BDF(b, d, f) ((uint32_t)(b) << 8 | (uint32_t)(d) << 3 | (uint32_t)(f))
/* The physical address a memory BAR decodes (64-bit BARs take two), or 0. */
uint64_t pci_bar(uint32_t bdf, int bar);
/* Offset of the first capability with this id at or after `from` (0 to
 * start), or 0. */
uint8_t pci_find_cap(uint32_t bdf, uint8_t id, uint8_t from);
/* Every function on the buses, in bus/device/function order. */
void pci_scan(void (*fn)(uint32_t bdf, uint16_t vendor, uint16_t device));
/* Turn on memory decoding and bus mastering. */
void pci_enable(uint32_t bdf);
/* Map a device's register window (uncached) into the kernel; returns its
 * virtual address.  Windows below 4 GiB are identity-mapped. */
uint64_t mmio_map(uint64_t pa, uint64_t size);

/* MSI-X: program table entry `entry` of the function at bdf to raise
 * `vector` on this CPU, and unmask it. */
int msix_enable(uint32_t bdf, uint16_t nentries_needed);
void msix_set(uint32_t bdf, uint16_t entry, uint8_t vector);

/* multiboot.c */
void multiboot_parse(uint32_t magic, uint64_t info);

/* fpu.c */
void fpu_init(void);

#endif
