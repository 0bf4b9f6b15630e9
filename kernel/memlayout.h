/*
 * memlayout.h - where the kernel's memory is: this header picks the
 * architecture's own (kernel/arch/riscv/memlayout.h,
 * kernel/arch/x86_64/memlayout.h).  Each provides what the portable kernel
 * uses: RAM_MAX_SIZE (how much RAM the kernel maps), KERNEL_VA_END (where
 * user space begins), and the per-process kernel stacks KSTACK(slot),
 * KSTACK_PAGES long with an unmapped guard page below each.
 */
#ifndef MEMLAYOUT_H
#define MEMLAYOUT_H

#if defined(__x86_64__)
#include "kernel/arch/x86_64/memlayout.h"
#elif defined(__riscv)
#include "kernel/arch/riscv/memlayout.h"
#else
#error "kernel/memlayout.h: no port for this architecture"
#endif

#endif
