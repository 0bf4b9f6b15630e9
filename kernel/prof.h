/*
 * prof.h - the profiler's hooks into the rest of the kernel (kernel/prof.c;
 * the system call is in kernel/uapi/prof.h, the guide in docs/profiling.md).
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

#endif
