/*
 * memlayout.h - the x86-64 kernel's view of memory on QEMU q35.
 *
 * RAM starts at 0 (the first MiB is the BIOS's; the kernel is loaded at
 * 2 MiB) and the kernel uses at most 2 GiB of it, identity-mapped, as on
 * RISC-V.  q35 has nothing between 2 GiB and its PCI window at 2.75 GiB
 * (which SeaBIOS fills with the BARs, up to the APICs and the HPET below
 * 4 GiB), so the per-process kernel stacks go there.  Device windows below
 * 4 GiB are identity-mapped as they are found (mmio_map); a 64-bit BAR
 * above 4 GiB is mapped into a window at 512 GiB, past user space.
 */
#ifndef X86_MEMLAYOUT_H
#define X86_MEMLAYOUT_H

#include "kernel/uapi/layout.h"

#define RAM_MAX_SIZE    0x80000000ull          /* the kernel uses at most 2 GiB */
#define KERNEL_VA_END   USER_BASE              /* kernel mappings live below 4 GiB */

#define KSTACK_BASE     0x80000000ull
#define KSTACK_PAGES    4
#define KSTACK_SLOT     ((KSTACK_PAGES + 1) * 4096ull)   /* one guard page per stack */
#define KSTACK(i)       (KSTACK_BASE + (uint64_t)(i) * KSTACK_SLOT + 4096ull)

#define MMIO_HIGH_BASE  0x8000000000ull        /* 512 GiB: PML4 entry 1 */
#define MMIO_HIGH_SIZE  0x8000000000ull

#endif
