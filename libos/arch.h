/*
 * arch.h - the library OS's one machine-dependent header: the system-call
 * instruction and the clock, for the architecture being compiled for
 * (libos/arch/ARCH/arch.h).  Its other machine-dependent files are crt0.S
 * and the linker script (libos/arch/ARCH/, chosen in kernel/arch/ARCH/arch.mk).
 */
#ifndef LIBOS_ARCH_H
#define LIBOS_ARCH_H

#if defined(__x86_64__)
#include "libos/arch/x86_64/arch.h"
#elif defined(__riscv)
#include "libos/arch/riscv/arch.h"
#else
#error "libos/arch.h: no port for this architecture"
#endif

#endif
