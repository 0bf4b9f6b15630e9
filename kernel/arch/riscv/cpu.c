/*
 * cpu.c - the small RISC-V pieces of the architecture interface
 * (kernel/arch.h) that the rest of the port does not already provide:
 * a new process's first switch, floating point across switches, and the
 * names the portable kernel calls for the timer, interrupt lines, power-off
 * and exception names.
 */
#include "kernel/arch.h"
#include "kernel/proc.h"
#include "kernel/trap.h"
#include "kernel/power.h"
#include "kernel/arch/riscv/sbi.h"
#include "kernel/arch/riscv/port.h"

void arch_proc_init(struct proc *p, uint64_t kstack_top, void (*first_run)(void))
{
	p->tf.kernel_sp = kstack_top;
	p->tf.kernel_tp = 0;
	p->ctx.ra = (uint64_t)first_run;
	p->ctx.sp = kstack_top;
}

/* Floating point: the kernel is built without it, so a process's registers
 * stay in the FPU while the kernel runs; sstatus.FS says whether the process
 * dirtied them, and only then are they saved. */
void arch_switch_in(struct proc *p)
{
	csr_clear(sstatus, SSTATUS_FS);
	csr_set(sstatus, p->fp_valid ? SSTATUS_FS_CLEAN : SSTATUS_FS_INITIAL);
	if (p->fp_valid) fp_restore(&p->fp);
}

void arch_switch_out(struct proc *p)
{
	if ((csr_read(sstatus) & SSTATUS_FS) == SSTATUS_FS_DIRTY) {
		fp_save(&p->fp);
		p->fp_valid = true;
	}
}

void arch_timer_set(uint64_t when) { sbi_set_timer(when); }

void irq_enable(uint32_t irq, void (*fn)(void *arg), void *arg) { plic_enable(irq, fn, arg); }

void arch_poweroff(int status) { sbi_shutdown(status); }

const char *trap_cause_name(uint64_t cause) { return scause_name(cause); }
