/*
 * prof_none.c - the profiler on x86-64: not there yet.  kernel/prof.c
 * samples through RISC-V's interrupt and frame-pointer conventions; until it
 * has an x86-64 side, these keep the kernel's hooks quiet and the system
 * call says plainly that profiling is not available here.
 */
#include "kernel/prof.h"
#include "kernel/syscall.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/syscall.h"

static int64_t sys_prof_none(struct proc *p, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3,
                             uint64_t a4, uint64_t a5)
{
	return K_E_NOSYS;
}

void prof_init(void) { syscall_register(SYS_prof, sys_prof_none, "prof"); }
void prof_syscall_enter(struct proc *p) { (void)p; }
void prof_syscall_exit(struct proc *p) { (void)p; }
bool prof_kernel_trap(uint64_t cause, uint64_t pc, uint64_t ra, uint64_t fp) { return false; }
void prof_tick(uint64_t now) { (void)now; }
uint64_t prof_next_sample(void) { return UINT64_MAX; }
int  prof_irq_enter(uint64_t cause) { return 0; }
void prof_irq_exit(int token) { (void)token; }
int  prof_wait_begin(void) { return 0; }
void prof_wait_end(int token) { (void)token; }
int  prof_sched_out(struct proc *p) { return 0; }
void prof_sched_in(struct proc *p, int token) { (void)p; (void)token; }
void prof_spawn(struct proc *parent, struct proc *child, const char *path) { }
