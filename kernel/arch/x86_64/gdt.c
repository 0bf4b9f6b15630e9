/*
 * gdt.c - segments and the task-state segment.
 *
 * Long mode barely uses segments, but the GDT still says which code runs
 * at which privilege, and syscall/sysret fix its layout (x86.h).  The TSS
 * matters more: its rsp0 is the stack the CPU switches to when an interrupt
 * or exception arrives in user mode.  We point it at the end of the running
 * process's trap frame (struct proc's tf), so the CPU pushes the user's
 * rip, cs, rflags, rsp and ss straight into the frame and the entry code
 * pushes the rest below them (trapentry.S).  IST1 is a separate stack for
 * double faults, so a kernel stack overflow still gets to print a panic.
 */
#include <stdint.h>
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"

struct tss {
	uint32_t reserved0;
	uint64_t rsp0, rsp1, rsp2;
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct tss tss __attribute__((aligned(16)));

static uint64_t gdt[8] __attribute__((aligned(16)));
static uint8_t df_stack[8192] __attribute__((aligned(16)));

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

/* A code or data segment: only the type and privilege bits mean anything. */
#define SEG_PRESENT   (1ull << 47)
#define SEG_DPL(n)    ((uint64_t)(n) << 45)
#define SEG_NONSYS    (1ull << 44)
#define SEG_EXEC      (1ull << 43)
#define SEG_RW        (1ull << 41)
#define SEG_LONG      (1ull << 53)
#define SEG_GRAN4K    (1ull << 55)
#define SEG_LIMIT_MAX (0xffffull | (0xfull << 48))

void gdt_init(void)
{
	uint64_t common = SEG_PRESENT | SEG_NONSYS | SEG_LIMIT_MAX | SEG_GRAN4K;
	gdt[0] = 0;
	gdt[SEG_KCODE >> 3] = common | SEG_EXEC | SEG_RW | SEG_LONG | SEG_DPL(0);
	gdt[SEG_KDATA >> 3] = common | SEG_RW | SEG_DPL(0);
	gdt[SEG_UBASE >> 3] = 0;                                     /* no 32-bit user code */
	gdt[SEG_UDATA >> 3] = common | SEG_RW | SEG_DPL(3);
	gdt[SEG_UCODE >> 3] = common | SEG_EXEC | SEG_RW | SEG_LONG | SEG_DPL(3);
	/* The TSS descriptor takes two slots: type 9 (available 64-bit TSS). */
	uint64_t base = (uint64_t)&tss, limit = sizeof tss - 1;
	gdt[SEG_TSS >> 3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x9ull << 40) | SEG_PRESENT |
	                    (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	gdt[(SEG_TSS >> 3) + 1] = base >> 32;

	tss.iomap_base = sizeof tss;           /* no I/O permission bitmap: user code gets no ports */
	tss.ist[0] = (uint64_t)(df_stack + sizeof df_stack);

	struct desc_ptr p = { sizeof gdt - 1, (uint64_t)gdt };
	__asm__ volatile("lgdt %0" :: "m"(p));
	/* Reload the segment registers from the new table. */
	__asm__ volatile(
		"pushq %0\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"movw %w1, %%ds\n\t"
		"movw %w1, %%es\n\t"
		"movw %w1, %%ss\n\t"
		:: "i"(SEG_KCODE), "r"(SEG_KDATA) : "rax", "memory");
	__asm__ volatile("ltr %w0" :: "r"(SEG_TSS));
}

void tss_set_rsp0(uint64_t rsp0)
{
	tss.rsp0 = rsp0;
}
