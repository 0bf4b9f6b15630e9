/*
 * start.c - the x86-64 kernel's way to kmain: boot.S arrives here in long
 * mode on the boot page tables (the first 4 GiB identity-mapped) with the
 * Multiboot magic and information.  The console is COM1, the ISA serial
 * port at I/O port 0x3f8 on IRQ 4; the Multiboot information gives RAM, the
 * command line and the initrd; the ACPI tables give the interrupt
 * controllers and the HPET, against which the time-stamp counter is
 * measured.  All of that must happen while the boot page tables still map
 * the firmware's memory.
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/bootinfo.h"
#include "kernel/klib.h"
#include "drivers/uart.h"

#define COM1_PORT 0x3f8
#define COM1_IRQ  4

void kmain(void) __attribute__((noreturn));
void x86_boot_entry(uint32_t magic, uint64_t info) __attribute__((noreturn));

void x86_boot_entry(uint32_t magic, uint64_t info)
{
	bootinfo.uart_base = COM1_PORT;
	bootinfo.uart_irq = COM1_IRQ;
	uart_init(bootinfo.uart_base);           /* so that an early panic can speak */
	multiboot_parse(magic, info);
	acpi_init();
	hpet_calibrate();
	ksnprintf(bootinfo.cpu, sizeof bootinfo.cpu, "x86-64");
	kmain();
}
