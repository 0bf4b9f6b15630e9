/*
 * proc.h - processes: the process table, the per-CPU scheduler state, and
 * the trap frame that holds a process's user registers while it is in the
 * kernel.
 */
#ifndef PROC_H
#define PROC_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/arch.h"
#include "kernel/handle.h"

#define NPROC       64
#define PROC_NAME   16

/* struct trapframe (a process's user registers while it is in the kernel),
 * struct context (what swtch saves) and struct fpstate come from the
 * architecture (kernel/arch.h). */

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
	bool lock_wanted;          /* another process waits for a shared lock it holds (shseg.c) */
	bool lease_wait;           /* asleep in a wait that ends when lock_wanted (H_LEASE) */
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
/* p did something it may not (cause: RISC-V's exception code for it, which
 * the x86-64 port uses too, see trap_cause_name; pc and the address
 * involved): say so and end it with status 128 + cause. */
void proc_fault(struct proc *p, uint64_t cause, uint64_t pc, uint64_t addr) __attribute__((noreturn));
/* Subsystems that keep per-process state register a hook run at exit. */
void proc_on_exit(void (*hook)(struct proc *p));
void proc_dump(void);
struct proc *proc_alloc(void);
void proc_discard(struct proc *p);
void set_initproc(struct proc *p);

/* The architecture's part of processes (kernel/arch/.../). */
void swtch(struct context *from, struct context *to);
/* A new process: its first switch runs first_run on the kernel stack whose
 * top is kstack_top, and traps from user mode land on that stack. */
void arch_proc_init(struct proc *p, uint64_t kstack_top, void (*first_run)(void));
/* Around running p: restore or save what the kernel itself does not use
 * (floating point), and point the CPU's trap entry at p. */
void arch_switch_in(struct proc *p);
void arch_switch_out(struct proc *p);

#endif
