/*
 * memlayout.h - the RISC-V kernel's view of physical and virtual memory on
 * QEMU virt (the portable kernel includes kernel/memlayout.h, which picks
 * this file or kernel/arch/x86_64/memlayout.h).
 *
 * RAM starts at 0x80000000; OpenSBI occupies the first 2 MiB and the kernel is
 * loaded at 0x80200000.  The kernel identity-maps devices and RAM, and puts
 * per-process kernel stacks (with unmapped guard pages) in the otherwise empty
 * second gigabyte.  All of it is below KERNEL_VA_END, which is where user
 * space begins (kernel/uapi/layout.h).
 */
#ifndef RISCV_MEMLAYOUT_H
#define RISCV_MEMLAYOUT_H

#include "kernel/uapi/layout.h"

#define RAM_BASE        0x80000000ull
#define RAM_MAX_SIZE    0x80000000ull          /* the kernel uses at most 2 GiB */
#define KERNEL_VA_END   USER_BASE               /* kernel mappings live below 4 GiB */

#define KSTACK_BASE     0x40000000ull
#define KSTACK_PAGES    4
#define KSTACK_SLOT     ((KSTACK_PAGES + 1) * 4096ull)   /* one guard page per stack */
#define KSTACK(i)       (KSTACK_BASE + (uint64_t)(i) * KSTACK_SLOT + 4096ull)

/* Device windows mapped for the kernel (QEMU virt defaults; the FDT confirms). */
#define SIFIVE_TEST_BASE 0x00100000ull
#define PLIC_BASE        0x0c000000ull
#define PLIC_SIZE        0x00400000ull
#define UART0_BASE       0x10000000ull
#define UART0_IRQ        10
#define VIRTIO_MMIO_BASE 0x10001000ull
#define VIRTIO_MMIO_STRIDE 0x1000ull
#define VIRTIO_MMIO_COUNT 8
#define VIRTIO_MMIO_IRQ0  1

#endif
