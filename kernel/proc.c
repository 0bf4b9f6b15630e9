/*
 * proc.c - the process table, the round-robin scheduler, sleep/wakeup,
 * exit, wait and kill.
 *
 * One hart, and the kernel runs with interrupts off, so a condition checked
 * before sleep_on() cannot change before the process is asleep: no locks are
 * needed around sleep and wakeup.  (For SMP the plan is one big kernel lock
 * taken on every trap entry; see docs/kernel.md.)
 *
 * Each slot in the table owns a kernel stack for its whole life, mapped at
 * KSTACK(slot) with an unmapped guard page below it, so a kernel stack
 * overflow faults instead of corrupting memory.
 */
#include "kernel/proc.h"
#include "kernel/trap.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/memlayout.h"
#include "kernel/power.h"
#include "kernel/prof.h"
#include "kernel/kshare.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/proc.h"
#include "kernel/uapi/layout.h"

struct proc procs[NPROC];
struct cpu cpu0;
static struct proc *initproc;
static struct kproc *exported;      /* the page at UPROCS */

_Static_assert(KPROC_SLOTS == NPROC, "the exported table has a slot per process");
_Static_assert(KPROC_SLOTS * sizeof(struct kproc) <= PGSIZE, "the exported table fits a page");
static int nextpid = 1;

#define MAX_EXIT_HOOKS 8
static void (*exit_hooks[MAX_EXIT_HOOKS])(struct proc *);
static int nexit_hooks;

void proc_on_exit(void (*hook)(struct proc *p))
{
	if (nexit_hooks == MAX_EXIT_HOOKS) panic("proc_on_exit: too many hooks");
	exit_hooks[nexit_hooks++] = hook;
}

void proc_init(void)
{
	for (int i = 0; i < NPROC; i++) {
		struct proc *p = &procs[i];
		p->slot = i;
		p->state = P_UNUSED;
		for (int k = 0; k < KSTACK_PAGES; k++) {
			void *page = kalloc();
			if (page == NULL) panic("proc_init: no memory for kernel stacks");
			kvm_map(KSTACK(i) + k * PGSIZE, (uint64_t)page, PGSIZE, PTE_R | PTE_W);
		}
	}
	exported = kalloc();
	if (exported == NULL || kshare_register(UPROCS, exported, 1) < 0)
		panic("proc_init: cannot export the process table");
}

void proc_publish(struct proc *p)
{
	static const uint32_t kstate[] = {
		[P_UNUSED] = KPROC_FREE, [P_EMBRYO] = KPROC_NEW, [P_RUNNABLE] = KPROC_READY,
		[P_RUNNING] = KPROC_RUNNING, [P_SLEEPING] = KPROC_SLEEPING, [P_ZOMBIE] = KPROC_ZOMBIE,
	};
	struct kproc *k = &exported[p->slot];
	if (p->state == P_UNUSED) {
		memset(k, 0, sizeof *k);
		return;
	}
	k->pid = p->pid;
	k->ppid = p->parent ? p->parent->pid : 0;
	k->pgid = p->pgid;
	k->state = kstate[p->state];
	k->ticks = p->ticks_used;
	k->start = p->start_time;
	memcpy(k->name, p->name, KPROC_NAME);
	k->name[KPROC_NAME - 1] = 0;
}

/* The first time the scheduler switches to a new process it lands here. */
static void first_run(void)
{
	return_to_user(myproc());
}

/* A fresh process slot with an empty address space, or NULL. */
struct proc *proc_alloc(void)
{
	struct proc *p = NULL;
	for (int i = 0; i < NPROC; i++)
		if (procs[i].state == P_UNUSED) { p = &procs[i]; break; }
	if (p == NULL) return NULL;
	p->pagetable = uvm_create();
	if (p->pagetable == NULL) return NULL;
	p->state = P_EMBRYO;
	p->pid = nextpid++;
	p->parent = NULL;
	p->pgid = p->pid;
	memset(p->handles, 0, sizeof p->handles);
	p->alerted = false;
	p->lock_wanted = false;
	p->lease_wait = false;
	p->killed = false;
	p->kill_status = 0;
	p->exit_status = 0;
	p->chan = NULL;
	p->edc = NULL;
	p->xnmap_used = 0;
	p->ticks_used = 0;
	p->start_time = rdtime();
	p->name[0] = 0;
	p->fp_valid = false;
	p->heap_start = p->brk = 0;
	memset(&p->tf, 0, sizeof p->tf);
	memset(&p->ctx, 0, sizeof p->ctx);
	arch_proc_init(p, KSTACK(p->slot) + KSTACK_PAGES * PGSIZE, first_run);
	return p;
}

/* Undo proc_alloc for a process that never ran. */
void proc_discard(struct proc *p)
{
	/* Never the running address space: the process has not run. */
	handle_close_all(p);
	if (p->pagetable) uvm_destroy(p->pagetable);
	p->pagetable = NULL;
	p->state = P_UNUSED;
	proc_publish(p);
}

static bool any_runnable(void)
{
	for (int i = 0; i < NPROC; i++)
		if (procs[i].state == P_RUNNABLE) return true;
	return false;
}

void scheduler(void)
{
	struct cpu *c = mycpu();
	int next = 0;
	for (;;) {
		struct proc *run = NULL;
		for (int k = 0; k < NPROC; k++) {
			struct proc *p = &procs[(next + k) % NPROC];
			if (p->state == P_RUNNABLE) { run = p; next = (p->slot + 1) % NPROC; break; }
		}
		if (run == NULL) {
			/* Idle: poll devices, then let interrupts in until something
			 * becomes runnable. */
			kpoll_run();
			if (any_runnable()) continue;
			wait_for_interrupt();
			continue;
		}
		run->state = P_RUNNING;
		c->proc = run;
		c->need_resched = false;
		/* The process's FP registers (the kernel itself never uses them)
		 * and the CPU's trap state follow it. */
		arch_switch_in(run);
		vm_use(run->pagetable);
		proc_publish(run);
		swtch(&c->sched_ctx, &run->ctx);
		proc_publish(run);
		arch_switch_out(run);
		c->proc = NULL;
	}
}

/* Give up the CPU; the caller has already changed myproc()->state. */
void sched(void)
{
	struct proc *p = myproc();
	if (p->state == P_RUNNING) panic("sched: %s still running", p->name);
	/* An exiting orphan is P_UNUSED here and never comes back. */
	int token = prof_sched_out(p);
	swtch(&p->ctx, &mycpu()->sched_ctx);
	prof_sched_in(p, token);
}

void yield(void)
{
	myproc()->state = P_RUNNABLE;
	sched();
}

void sleep_on(void *chan)
{
	struct proc *p = myproc();
	p->chan = chan;
	p->state = P_SLEEPING;
	sched();
	p->chan = NULL;
}

void wakeup(void *chan)
{
	for (int i = 0; i < NPROC; i++)
		if (procs[i].state == P_SLEEPING && procs[i].chan == chan) {
			procs[i].state = P_RUNNABLE;
			proc_publish(&procs[i]);
		}
}

void proc_exit(int status)
{
	struct proc *p = myproc();
	for (int i = 0; i < nexit_hooks; i++) exit_hooks[i](p);

	if (p == initproc) {
		kprintf("\nkernel: init exited with status %d; powering off\n", status);
		power_off(status);
	}
	/* The address space goes now; pages still targeted by in-flight disk
	 * requests survive on their reference counts until the device is done. */
	vm_use(NULL);
	uvm_destroy(p->pagetable);
	p->pagetable = NULL;

	/* Orphans are detached rather than handed to init: nobody will wait
	 * for them, so they free their slot themselves when they exit. */
	for (int i = 0; i < NPROC; i++)
		if (procs[i].parent == p) {
			procs[i].parent = NULL;
			if (procs[i].state == P_ZOMBIE) procs[i].state = P_UNUSED;
			proc_publish(&procs[i]);
		}
	p->exit_status = status;
	if (p->parent == NULL) {
		/* Still on this slot's kernel stack, but nothing reuses the slot
		 * before the scheduler runs, and this thread never resumes. */
		p->state = P_UNUSED;
	} else {
		p->state = P_ZOMBIE;
		wakeup(p->parent);
	}
	sched();
	panic("zombie %d ran", p->pid);
}

int proc_wait(int pid, int *status, int options)
{
	struct proc *me = myproc();
	for (;;) {
		bool have_child = false;
		for (int i = 0; i < NPROC; i++) {
			struct proc *c = &procs[i];
			if (c->parent != me || c->state == P_UNUSED) continue;
			if (pid > 0 && c->pid != pid) continue;
			have_child = true;
			if (c->state == P_ZOMBIE) {
				int cpid = c->pid;
				*status = c->exit_status;
				c->parent = NULL;
				c->state = P_UNUSED;
				proc_publish(c);
				return cpid;
			}
		}
		if (!have_child) return K_E_CHILD;
		if (options & WAIT_NOHANG) return 0;
		if (proc_interrupted(me)) return K_E_INTR;
		sleep_on(me);
	}
}

int proc_kill(int target, int status)
{
	int found = 0, spared = 0;
	for (int i = 0; i < NPROC; i++) {
		struct proc *p = &procs[i];
		if (p->state == P_UNUSED || p->state == P_ZOMBIE || p->state == P_EMBRYO) continue;
		if (target > 0 ? p->pid != target : p->pgid != -target) continue;
		/* The first process ends only by its own hand: its exit powers
		 * the machine off, which no mistyped `kill 1` should do. */
		if (p == initproc && myproc() != initproc) {
			spared = 1;
			continue;
		}
		found = 1;
		if (p->killed) continue;          /* the first reason stands */
		p->killed = true;
		p->kill_status = status;
		if (p->state == P_SLEEPING) {
			p->state = P_RUNNABLE;
			proc_publish(p);
		}
	}
	return found ? 0 : spared ? K_E_PERM : K_E_SRCH;
}

void proc_alert(struct proc *p)
{
	p->alerted = true;
	/* Every sleep loop checks its condition again when it wakes. */
	if (p->state == P_SLEEPING) {
		p->state = P_RUNNABLE;
		proc_publish(p);
	}
}

bool proc_interrupted(struct proc *p)
{
	if (p->killed) return true;
	if (p->alerted) {
		p->alerted = false;
		return true;
	}
	return false;
}

bool proc_alive(struct proc *p, int pid)
{
	return p != NULL && p->pid == pid && p->state != P_UNUSED && p->state != P_ZOMBIE;
}

void proc_fault(struct proc *p, uint64_t cause, uint64_t pc, uint64_t addr)
{
	kprintf("kernel: pid %d (%s) killed: %s at pc %p, address %p\n",
		p->pid, p->name, trap_cause_name(cause), (void *)pc, (void *)addr);
	proc_exit(128 + (int)(cause & 0x7f));
}

void set_initproc(struct proc *p) { initproc = p; }

void proc_dump(void)
{
	static const char *names[] = { "unused", "embryo", "runnable", "running", "sleeping", "zombie" };
	for (int i = 0; i < NPROC; i++) {
		struct proc *p = &procs[i];
		if (p->state == P_UNUSED) continue;
		kprintf("%d %s %s\n", p->pid, names[p->state], p->name);
	}
}
