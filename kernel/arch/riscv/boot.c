/*
 * boot.c - the RISC-V kernel's way to kmain: OpenSBI enters entry.S in
 * S-mode with the hart id and the device tree, which says where RAM, the
 * devices and the initrd are (fdt.c) and gives the command line.
 */
#include "kernel/arch.h"
#include "kernel/bootinfo.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/arch/riscv/memlayout.h"
#include "drivers/uart.h"
#include "kernel/arch/riscv/port.h"

void kmain(void) __attribute__((noreturn));
void riscv_boot(uint64_t hartid, uint64_t dtb) __attribute__((noreturn));

void riscv_boot(uint64_t hartid, uint64_t dtb)
{
	bootinfo.hartid = hartid;
	bootinfo.uart_base = UART0_BASE;
	bootinfo.uart_irq = UART0_IRQ;
	bootinfo.plic_base = PLIC_BASE;
	fdt_parse(dtb);
	ksnprintf(bootinfo.cpu, sizeof bootinfo.cpu, "riscv64 hart %lu", (unsigned long)hartid);
	kalloc_reserve(dtb, dtb + 64 * 1024);
	kmain();
}
