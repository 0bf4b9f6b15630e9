/*
 * arch.h - what the portable kernel needs from an architecture.
 *
 * Each architecture (kernel/arch/riscv/, kernel/arch/x86_64/) has an arch.h
 * providing these; this header picks the one being compiled for.  The list,
 * so a new port knows what it owes (docs/kernel.md, "Architectures"):
 *
 *   memory   PGSIZE, PGSHIFT, PGROUNDUP, PGROUNDDOWN; pte_t, pagetable_t;
 *            the permissions PTE_R, PTE_W, PTE_X that callers pass to
 *            kvm_map/uvm_map; the page-table code itself is the
 *            architecture's vm.c behind kernel/vm.h (copying to and from user
 *            memory is portable: kernel/uvm.c)
 *   time     rdtime() (the timebase: bootinfo.timebase_hz per second),
 *            rdcycle(); arch_timer_set(when), the one-shot comparator that
 *            kernel/timer.c programs
 *   interrupts  intr_on(), intr_off(), intr_get(), wait_for_interrupt()
 *            (let one in, return with interrupts off); irq_enable(irq, fn,
 *            arg) for the platform's interrupt lines (kernel/trap.h)
 *   traps    struct trapframe (user registers while in the kernel) and its
 *            accessors tf_sysnum, tf_arg, tf_set_ret, tf_set_entry; trap_init,
 *            return_to_user, trap_cause_name (kernel/trap.h)
 *   processes  struct context and swtch(); struct fpstate and
 *            arch_switch_in/out (floating point, per-CPU trap state);
 *            arch_proc_init (a new process's first switch)
 *   console  uart_reg_read/uart_reg_write: the 16550's registers (MMIO on
 *            RISC-V virt, I/O ports on a PC)
 *   power    arch_poweroff(status): stop the machine, QEMU exiting with status
 *   boot     the entry code fills in bootinfo (kernel/bootinfo.h), brings up
 *            its interrupt controller and timer, and calls kmain()
 */
#ifndef ARCH_H
#define ARCH_H

#if defined(__x86_64__)
#include "kernel/arch/x86_64/arch.h"
#elif defined(__riscv)
#include "kernel/arch/riscv/arch.h"
#else
#error "kernel/arch.h: no port for this architecture"
#endif

#endif
