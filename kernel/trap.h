/*
 * trap.h - trap handling: system calls, faults and interrupts; the timer.
 */
#ifndef TRAP_H
#define TRAP_H

#include <stdint.h>
#include "kernel/proc.h"

/* The causes a fault is reported with (proc_fault; a killed process's status
 * is 128 + the cause): RISC-V's exception codes on every architecture, so a
 * program's fate reads the same on both machines.  x86 faults with no RISC-V
 * counterpart are CAUSE_X86(vector). */
#define CAUSE_ILLEGAL   2           /* illegal instruction             */
#define CAUSE_BREAK     3           /* breakpoint                      */
#define CAUSE_IPF       12          /* instruction page fault          */
#define CAUSE_LPF       13          /* load page fault                 */
#define CAUSE_SPF       15          /* store page fault                */
#define CAUSE_X86(v)    (32 + (v))

/* The architecture's trap handling (kernel/arch/.../trap.c). */
void trap_init(void);
void return_to_user(struct proc *p) __attribute__((noreturn));
/* Kernel code with nothing to do until a device finishes: let the next
 * interrupt in, handle it, and return with interrupts off again. */
void intr_wait(void);
/* What an exception code (the cause proc_fault reports) means. */
const char *trap_cause_name(uint64_t cause);
/* Route the platform's interrupt line irq (RISC-V virt: a PLIC source;
 * x86-64: an ISA IRQ, through the IOAPIC) to fn(arg). */
void irq_enable(uint32_t irq, void (*fn)(void *arg), void *arg);
/* Program the timer's one comparator: interrupt once rdtime() >= when. */
void arch_timer_set(uint64_t when);

/* The timer (timer.c). */
#define HZ 100
struct timer_event {
	uint64_t when;                       /* rdtime value */
	void (*fn)(struct timer_event *e);   /* runs in interrupt context */
	void *arg;
	struct timer_event *next;
	int armed;
};
void timer_init(void);
void timer_interrupt(void);
void timer_event_add(struct timer_event *e, uint64_t when);
void timer_event_cancel(struct timer_event *e);
uint64_t timer_deadline(void);   /* rdtime of the next tick or event, whichever is first */
void timer_rearm(void);          /* program the comparator again (the profiler's rate changed) */
extern volatile uint64_t ticks;

/* Polling hooks: run on every timer tick and each time the scheduler finds
 * nothing to run (drivers in polled-completion mode reap completions here). */
void kpoll_register(void (*fn)(void));
void kpoll_run(void);

#endif
