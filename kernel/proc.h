/*
 * proc.h - processes: the process table, the per-CPU scheduler state, and
 * the trap frame that holds a process's user registers while it is in the
 * kernel.
 */
#ifndef PROC_H
#define PROC_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/riscv.h"
#include "kernel/handle.h"

#define NPROC       64
#define PROC_NAME   16

/* User registers x1..x31 (xN at offset (N-1)*8), then what the trap entry
 * code needs.  trapentry.S depends on these offsets. */
struct trapframe {
	uint64_t ra, sp, gp, tp, t0, t1, t2, s0, s1;
	uint64_t a0, a1, a2, a3, a4, a5, a6, a7;
	uint64_t s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
	uint64_t t3, t4, t5, t6;
	uint64_t sepc;          /* 248 */
	uint64_t kernel_sp;     /* 256: top of this process's kernel stack */
	uint64_t kernel_tp;     /* 264: hart id */
};

/* Callee-saved registers for swtch(). */
struct context {
	uint64_t ra, sp;
	uint64_t s0, s1, s2, s3, s4, s5, s6, s7, s8, s9, s10, s11;
};

struct fpstate {
	uint64_t f[32];
	uint64_t fcsr;
};

enum procstate { P_UNUSED, P_EMBRYO, P_RUNNABLE, P_RUNNING, P_SLEEPING, P_ZOMBIE };

struct ed_client;

struct proc {
	enum procstate state;
	int pid;
	struct proc *parent;
	char name[PROC_NAME];
	int slot;                  /* index in the process table = kernel stack slot */

	pagetable_t pagetable;
	uint64_t heap_start, brk;  /* the heap is [heap_start, brk) */
	struct trapframe tf;
	struct context ctx;
	struct fpstate fp;
	bool fp_valid;             /* fp holds state to restore */

	int pgid;                  /* process group (uapi/proc.h): a job of the shell */
	struct handle handles[NHANDLE];   /* pipe ends and other kernel objects (handle.c) */

	void *chan;                /* sleeping on this */
	bool alerted;              /* the next (or current) blocking call returns K_E_INTR */
	bool killed;
	int kill_status;           /* exit status if killed */
	int exit_status;
	uint64_t wake_time;        /* sys_sleep deadline */

	struct ed_client *edc;     /* exodisk state for this process, if any */
	uint64_t xnmap_used;       /* exonode map windows in use (bit i: UXNMAP_BASE + i pages) */
	uint64_t ticks_used;       /* timer ticks spent running */
	uint64_t start_time;       /* rdtime at spawn */
};

struct cpu {
	struct proc *proc;         /* running now, or NULL */
	struct context sched_ctx;  /* swtch() here to enter the scheduler */
	bool need_resched;
};

extern struct proc procs[NPROC];
extern struct cpu cpu0;

static inline struct cpu *mycpu(void) { return &cpu0; }
static inline struct proc *myproc(void) { return cpu0.proc; }

void proc_init(void);
void scheduler(void) __attribute__((noreturn));
void sched(void);
void yield(void);
void sleep_on(void *chan);
void wakeup(void *chan);
int  proc_spawn(struct proc *parent, const char *path, int argc, char **argv, int envc, char **envp,
                const struct spawn_opts *opts);
void proc_exit(int status) __attribute__((noreturn));
int  proc_wait(int pid, int *status, int options);
/* target > 0: that process; < 0: every process of group -target. */
int  proc_kill(int target, int status);
/* Make p's blocking system call (now or next) return K_E_INTR once. */
void proc_alert(struct proc *p);
/* Should a blocking call of p give up now?  True when p is being killed,
 * or was alerted (which this consumes). */
bool proc_interrupted(struct proc *p);
/* Is p a live process (not free, not a zombie) with that pid? */
bool proc_alive(struct proc *p, int pid);
/* Refresh p's entry of the exported process table (UPROCS). */
void proc_publish(struct proc *p);
void proc_fault(struct proc *p, uint64_t scause, uint64_t sepc, uint64_t stval) __attribute__((noreturn));
/* Subsystems that keep per-process state register a hook run at exit. */
void proc_on_exit(void (*hook)(struct proc *p));
void proc_dump(void);
struct proc *proc_alloc(void);
void proc_discard(struct proc *p);
void set_initproc(struct proc *p);

void swtch(struct context *from, struct context *to);
void fp_save(struct fpstate *fp);
void fp_restore(const struct fpstate *fp);

#endif
