/*
 * trap.c - what happens on a trap.
 *
 * From user mode: a system call (ecall) goes to syscall(); an interrupt is
 * handled and may preempt the process at the end of its time slice; anything
 * else is the process's fault, and it is killed with a message naming it and
 * the cause.  From kernel mode only interrupts are expected (the kernel runs
 * with interrupts disabled except while idle, and inside the system calls of
 * a process being profiled: kernel/prof.c); any exception there is a kernel
 * bug and panics with the registers that explain it.
 */
#include "kernel/trap.h"
#include "kernel/proc.h"
#include "kernel/klib.h"
#include "kernel/arch/riscv/riscv.h"
#include "kernel/syscall.h"
#include "kernel/prof.h"
#include "kernel/bootinfo.h"
#include "kernel/kshare.h"
#include "kernel/arch/riscv/port.h"

extern char trap_vector[];

void trap_init(void)
{
	csr_write(stvec, (uint64_t)trap_vector);
	csr_write(sscratch, 0);
	/* Applications may read the time and cycle counters (benchmarks time with them). */
	csr_write(scounteren, SCOUNTEREN_CY | SCOUNTEREN_TM | SCOUNTEREN_IR);
	csr_set(sie, SIE_SEIE | SIE_STIE);
	plic_init(bootinfo.plic_base);
}

const char *scause_name(uint64_t scause)
{
	switch (scause) {
	case EXC_INST_MISALIGNED:  return "misaligned instruction fetch";
	case EXC_INST_ACCESS:      return "instruction access fault";
	case EXC_ILLEGAL_INST:     return "illegal instruction";
	case EXC_BREAKPOINT:       return "breakpoint";
	case EXC_LOAD_MISALIGNED:  return "misaligned load";
	case EXC_LOAD_ACCESS:      return "load access fault";
	case EXC_STORE_MISALIGNED: return "misaligned store";
	case EXC_STORE_ACCESS:     return "store access fault";
	case EXC_ECALL_U:          return "system call";
	case EXC_INST_PAGE_FAULT:  return "instruction page fault";
	case EXC_LOAD_PAGE_FAULT:  return "load page fault";
	case EXC_STORE_PAGE_FAULT: return "store page fault";
	default:                   return "unknown exception";
	}
}

/* Interrupts, from either mode.  Returns true if it was the timer. */
static bool handle_interrupt(uint64_t scause)
{
	uint64_t irq = scause & ~SCAUSE_INTR;
	if (irq == IRQ_S_TIMER) { timer_interrupt(); return true; }
	if (irq == IRQ_S_EXT)   { plic_dispatch(); return false; }
	kprintf("kernel: unexpected interrupt %lu\n", irq);
	return false;
}

void intr_wait(void)
{
	/* A profiled system call's sampling window stays shut while it waits. */
	int token = prof_wait_begin();
	wait_for_interrupt();
	prof_wait_end(token);
}

void return_to_user(struct proc *p)
{
	/* sret to U-mode with interrupts enabled there. */
	uint64_t s = csr_read(sstatus);
	s &= ~SSTATUS_SPP;
	s |= SSTATUS_SPIE;
	csr_write(sstatus, s);
	user_return(&p->tf);
}

void user_trap(struct trapframe *tf)
{
	struct proc *p = myproc();
	uint64_t scause = csr_read(scause);

	if (scause & SCAUSE_INTR) {
		int token = prof_irq_enter(scause);
		handle_interrupt(scause);
		prof_irq_exit(token);
	} else if (scause == EXC_ECALL_U) {
		tf->sepc += 4;
		syscall(p);
	} else if (!kshare_fault(p, scause, csr_read(stval))) {
		proc_fault(p, scause, tf->sepc, csr_read(stval));
	}

	if (p->killed) proc_exit(p->kill_status);
	if (mycpu()->need_resched) yield();
	return_to_user(p);
}

/* saved: the registers trapentry.S saved (ra first); s0: the interrupted s0. */
void kernel_trap(uint64_t *saved, uint64_t s0)
{
	uint64_t scause = csr_read(scause), sepc = csr_read(sepc), sstatus = csr_read(sstatus);
	if (!(scause & SCAUSE_INTR))
		panic("exception in kernel: %s (scause %lu) at sepc %p, stval %p",
		      scause_name(scause), scause, (void *)sepc, (void *)csr_read(stval));
	/* A profiling sample inside a system call is all the profiler's. */
	if (prof_kernel_trap(scause, sepc, saved[0], s0)) return;
	int token = prof_irq_enter(scause);
	handle_interrupt(scause);
	prof_irq_exit(token);
	/* Nested trap handling may have clobbered these. */
	csr_write(sepc, sepc);
	csr_write(sstatus, sstatus);
}
