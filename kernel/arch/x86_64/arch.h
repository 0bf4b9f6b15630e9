/*
 * arch.h - the x86-64 side of kernel/arch.h: the trap frame, the switch
 * context, the floating-point save area, and the small inline pieces the
 * portable kernel calls.  The rest of the port is in this directory
 * (docs/kernel.md, "The x86-64 port").
 */
#ifndef ARCH_X86_64_H
#define ARCH_X86_64_H

#include "kernel/arch/x86_64/x86.h"

#ifndef __ASSEMBLER__
#include <stdint.h>
#include <stdbool.h>

/*
 * A process's user registers while it is in the kernel.  The entry code
 * pushes the general registers below the frame the CPU pushes (rip, cs,
 * rflags, rsp, ss) on an interrupt or exception; the system-call entry
 * builds the same frame by hand.  The frame lives in struct proc: the TSS
 * points the CPU's stack at its end (TF_CPU_END), so the CPU writes the
 * interrupted user state straight into it.  trapentry.S depends on these
 * offsets.
 */
struct trapframe {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;   /*   0 */
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;       /*  64 */
	uint64_t trapno, err;                             /* 120 */
	uint64_t rip, cs, rflags, rsp, ss;                /* 136: the CPU's frame */
	uint64_t kernel_sp;                               /* 176: top of the process's kernel stack */
	uint64_t pad;
} __attribute__((aligned(16)));

/* Callee-saved registers for swtch(), with where to resume. */
struct context {
	uint64_t rip, rsp;
	uint64_t rbx, rbp, r12, r13, r14, r15;
};

/* The FXSAVE area: x87, MMX and SSE state. */
struct fpstate {
	uint8_t fx[512];
} __attribute__((aligned(16)));

/* System calls: number in rax, arguments in rdi, rsi, rdx, r10, r8, r9
 * (r10 for the fourth because the syscall instruction takes rcx), the
 * result back in rax (libos/arch/x86_64/syscall.h). */
static inline uint64_t tf_sysnum(const struct trapframe *tf) { return tf->rax; }
static inline uint64_t tf_arg(const struct trapframe *tf, int i)
{
	switch (i) {
	case 0: return tf->rdi;
	case 1: return tf->rsi;
	case 2: return tf->rdx;
	case 3: return tf->r10;
	case 4: return tf->r8;
	default: return tf->r9;
	}
}
static inline void tf_set_ret(struct trapframe *tf, uint64_t v) { tf->rax = v; }
/* A new program: start at pc with stack sp and main's three arguments. */
void tf_set_entry(struct trapframe *tf, uint64_t pc, uint64_t sp, uint64_t a0, uint64_t a1, uint64_t a2);
/* The user pc, for messages. */
static inline uint64_t tf_pc(const struct trapframe *tf) { return tf->rip; }

/* The 16550's registers are I/O ports on a PC. */
static inline uint8_t uart_reg_read(uint64_t base, int reg) { return inb((uint16_t)(base + (uint64_t)reg)); }
static inline void uart_reg_write(uint64_t base, int reg, uint8_t v) { outb((uint16_t)(base + (uint64_t)reg), v); }

#endif /* __ASSEMBLER__ */

#define TF_RAX       112
#define TF_TRAPNO    120
#define TF_CPU_END   176   /* where the CPU's frame ends: TSS.rsp0 */
#define TF_KERNEL_SP 176

#endif
