/*
 * arch.h - the x86-64 side of the library OS's machine dependence: how to
 * make a system call, and how to read the clock without one.
 *
 * System calls use the syscall instruction: the number in rax, arguments
 * in rdi, rsi, rdx, r10, r8, r9 (r10 instead of rcx, which the instruction
 * overwrites with the return address, as it does r11 with the flags); the
 * result comes back in rax.  kernel/arch/x86_64/trapentry.S is the other
 * side.
 *
 * The clock is the time-stamp counter, which the kernel lets user mode
 * read; its rate is in the kernel-information page (kinfo->timebase_hz,
 * measured at boot against the HPET).  x86-64 has no unprivileged cycle
 * counter, so the cycle count is the TSC as well.
 */
#ifndef LIBOS_ARCH_X86_64_H
#define LIBOS_ARCH_X86_64_H

#include <stdint.h>

static inline long sys_call6(long n, long a0, long a1, long a2, long a3, long a4, long a5)
{
	register long r10 __asm__("r10") = a3;
	register long r8 __asm__("r8") = a4;
	register long r9 __asm__("r9") = a5;
	long ret;
	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

static inline uint64_t arch_time(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t arch_cycles(void)
{
	return arch_time();
}

#endif
