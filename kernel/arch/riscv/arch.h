/*
 * arch.h - the RISC-V side of kernel/arch.h: the trap frame, the switch
 * context, the floating-point save area, and the small inline pieces the
 * portable kernel calls.  The privileged-architecture definitions are in
 * riscv.h; the port's code is in this directory (docs/kernel.md).
 */
#ifndef ARCH_RISCV_H
#define ARCH_RISCV_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/arch/riscv/riscv.h"

/* User registers x1..x31 (xN at offset (N-1)*8), then what the trap entry
 * code needs.  trapentry.S depends on these offsets. */
struct trapframe {
	uint64_t ra, sp, gp, tp, t0, t1, t2, s0, s1;
	uint64_t a0, a1, a2, a3, a4, a5, a6, a7;
	uint64_t s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
	uint64_t t3, t4, t5, t6;
	uint64_t sepc;          /* 248 */
	uint64_t kernel_sp;     /* 256: top of this process's kernel stack */
	uint64_t kernel_tp;     /* 264: hart id */
};

/* Callee-saved registers for swtch(). */
struct context {
	uint64_t ra, sp;
	uint64_t s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
};

struct fpstate {
	uint64_t f[32];
	uint64_t fcsr;
};
void fp_save(struct fpstate *fp);            /* swtch.S */
void fp_restore(const struct fpstate *fp);

/* System calls: number in a7, arguments in a0..a5, the result in a0. */
static inline uint64_t tf_sysnum(const struct trapframe *tf) { return tf->a7; }
static inline uint64_t tf_arg(const struct trapframe *tf, int i)
{
	const uint64_t *a = &tf->a0;
	return a[i];
}
static inline void tf_set_ret(struct trapframe *tf, uint64_t v) { tf->a0 = v; }
static inline void tf_set_entry(struct trapframe *tf, uint64_t pc, uint64_t sp, uint64_t a0, uint64_t a1,
                                uint64_t a2)
{
	tf->sepc = pc;
	tf->sp = sp;
	tf->a0 = a0;
	tf->a1 = a1;
	tf->a2 = a2;
}
static inline uint64_t tf_pc(const struct trapframe *tf) { return tf->sepc; }

/* Wait for an interrupt, then let it in and shut interrupts out again
 * (SIE is bit 1 of sstatus).  The wfi runs with interrupts off: it still returns once one is pending
 * (the privileged spec wakes a hart for any interrupt enabled in sie,
 * whatever sstatus.SIE says), and none can be taken between the caller's
 * last look at what is runnable and the wfi.  Enabling first, as this did,
 * let an interrupt that was already pending run its handler (a disk
 * completion waking a process) just before the wfi, which then slept
 * until the next interrupt: up to a whole timer tick with a runnable
 * process and an idle CPU. */
static inline void wait_for_interrupt(void)
{
	/* One block, so the profiler can tell where a wait took its
	 * interrupt (prof_sample.c, after_wfi): wfi, then SIE on and off. */
	__asm__ volatile("wfi\n\tcsrsi sstatus, 2\n\tcsrci sstatus, 2" ::: "memory");
}

/* The 16550 of QEMU virt is memory-mapped, one byte per register. */
static inline uint8_t uart_reg_read(uint64_t base, int reg) { return ((volatile uint8_t *)base)[reg]; }
static inline void uart_reg_write(uint64_t base, int reg, uint8_t v) { ((volatile uint8_t *)base)[reg] = v; }

#endif
