/*
 * prof.h - the profiler's hooks into the rest of the kernel, and the line
 * between its portable half (kernel/prof.c: counters, the system call) and
 * each architecture's sampler (kernel/arch/riscv/prof_sample.c; x86-64's
 * kernel/arch/x86_64/prof_none.c samples nothing).  The system call is in
 * kernel/uapi/prof.h, the guide in docs/profiling.md.
 */
#ifndef PROF_H
#define PROF_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/proc.h"

void prof_init(void);

/* syscall.c: around every system call (counters; the sampling window). */
void prof_syscall_enter(struct proc *p);
void prof_syscall_exit(struct proc *p);

/* trap.c: first thing on a trap from kernel mode, with the interrupted pc,
 * ra and s0.  Returns true if the trap was the profiler's (a sample inside a
 * system call) and the caller must simply return. */
bool prof_kernel_trap(uint64_t scause, uint64_t sepc, uint64_t ra, uint64_t s0);

/* timer.c: on every timer interrupt handled normally; and when the next
 * sample is due (UINT64_MAX when no profile is sampling). */
void prof_tick(uint64_t now);
uint64_t prof_next_sample(void);

/* trap.c: around the handling of every interrupt (device interrupts are
 * sampled while a profile is active). */
int  prof_irq_enter(uint64_t scause);
void prof_irq_exit(int token);

/* trap.c: intr_wait() brackets its wait for an interrupt. */
int  prof_wait_begin(void);
void prof_wait_end(int token);

/* proc.c: sched() brackets the switch away from the current process. */
int  prof_sched_out(struct proc *p);
void prof_sched_in(struct proc *p, int token);

/* spawn.c: a new process (fresh counters; perhaps it joins the profile). */
void prof_spawn(struct proc *parent, struct proc *child, const char *path);

/* The sampler's side, which kernel/prof.c calls: the hooks above, after
 * (on entry) or before (on exit) the counting; every SYS_prof operation but
 * PROF_COUNTS; and a process's exit.  The hooks from the trap code and the
 * timer above (prof_kernel_trap, prof_tick, prof_next_sample, prof_irq_*,
 * prof_wait_*) are the sampler's too. */
void prof_sample_syscall_enter(struct proc *p);
void prof_sample_syscall_exit(struct proc *p);
int  prof_sample_sched_out(struct proc *p);
void prof_sample_sched_in(struct proc *p, int token);
void prof_sample_spawn(struct proc *parent, struct proc *child, const char *path);
void prof_sample_exit(struct proc *p);
int64_t prof_sample_call(struct proc *p, uint64_t op, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4);

/* What kernel/prof.c tells the sampler of a process. */
struct exo_counts;
const struct exo_counts *prof_counts(struct proc *p);
bool prof_in_syscall(struct proc *p);
uint32_t prof_sysnum(struct proc *p);    /* the system call it is in */

#endif
