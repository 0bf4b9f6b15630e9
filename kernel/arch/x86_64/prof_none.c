/*
 * prof_none.c - the profiler's sampler on x86-64: not there yet.  The
 * counters of system calls and disk requests are portable (kernel/prof.c)
 * and work here; sampling (kernel/arch/riscv/prof_sample.c on RISC-V)
 * needs an x86-64 side - its interrupt masking, timer and frame layout -
 * so until then these keep the hooks quiet and SYS_prof's profile
 * operations say plainly that profiling is not available here.
 */
#include "kernel/prof.h"
#include "kernel/uapi/errno.h"

int64_t prof_sample_call(struct proc *p, uint64_t op, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	return K_E_NOSYS;
}

void prof_sample_syscall_enter(struct proc *p) { }
void prof_sample_syscall_exit(struct proc *p) { }
int  prof_sample_sched_out(struct proc *p) { return 0; }
void prof_sample_sched_in(struct proc *p, int token) { }
void prof_sample_spawn(struct proc *parent, struct proc *child, const char *path) { }
void prof_sample_exit(struct proc *p) { }

bool prof_kernel_trap(uint64_t cause, uint64_t pc, uint64_t ra, uint64_t fp) { return false; }
void prof_tick(uint64_t now) { }
uint64_t prof_next_sample(void) { return UINT64_MAX; }
int  prof_irq_enter(uint64_t cause) { return 0; }
void prof_irq_exit(int token) { }
int  prof_wait_begin(void) { return 0; }
void prof_wait_end(int token) { }
