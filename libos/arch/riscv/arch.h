/*
 * arch.h - the RISC-V side of the library OS's machine dependence: how to
 * make a system call, and how to read the clock without one.
 *
 * System calls are ecall with the number in a7, arguments in a0..a5 and
 * the result in a0 (kernel/arch/riscv/trapentry.S is the other side).  The
 * clock is the time CSR, at kinfo->timebase_hz; the cycle counter is
 * rdcycle (the kernel lets user mode read both through scounteren).
 */
#ifndef LIBOS_ARCH_RISCV_H
#define LIBOS_ARCH_RISCV_H

#include <stdint.h>

static inline long sys_call6(long n, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long r0 __asm__("a0") = a0;
	register long r1 __asm__("a1") = a1;
	register long r2 __asm__("a2") = a2;
	register long r3 __asm__("a3") = a3;
	register long r4 __asm__("a4") = a4;
	register long r5 __asm__("a5") = a5;
	register long r7 __asm__("a7") = n;
	__asm__ volatile("ecall"
			 : "+r"(r0)
			 : "r"(r1), "r"(r2), "r"(r3), "r"(r4), "r"(r5), "r"(r7)
			 : "memory");
	return r0;
}

static inline uint64_t arch_time(void)
{
	uint64_t t;
	__asm__ volatile("rdtime %0" : "=r"(t));
	return t;
}

static inline uint64_t arch_cycles(void)
{
	uint64_t t;
	__asm__ volatile("rdcycle %0" : "=r"(t));
	return t;
}

#endif
