/*
 * port.h - what the RISC-V port's own files call in one another and the
 * portable kernel never sees: the trap entry and exit (trapentry.S, trap.c),
 * the PLIC (plic.c) and the device-tree reader (fdt.c).  What the portable
 * kernel needs of an architecture is kernel/arch.h.
 */
#ifndef RISCV_PORT_H
#define RISCV_PORT_H

#include <stdint.h>
#include "kernel/arch.h"

/* trapentry.S and trap.c */
void user_trap(struct trapframe *tf) __attribute__((noreturn));
void kernel_trap(uint64_t *saved, uint64_t s0);
void user_return(struct trapframe *tf) __attribute__((noreturn));
const char *scause_name(uint64_t scause);

/* plic.c: device interrupts, routed to this hart's supervisor context. */
void plic_init(uint64_t base);
void plic_enable(uint32_t irq, void (*handler)(void *arg), void *arg);
void plic_dispatch(void);

/* fdt.c: fill in bootinfo from the device tree OpenSBI passes. */
void fdt_parse(uint64_t dtb_pa);

#endif
