/*
 * prof.c - the profiler's portable half: every process's counters of system
 * calls and disk requests (and the system's, in kinfo->counts), the time
 * spent in system calls and asleep, and the system call SYS_prof.  The
 * sampling of a profile - timer interrupts, call chains, the profile's
 * buffer - is each architecture's (kernel/arch/riscv/prof_sample.c; on
 * x86-64 none yet: kernel/arch/x86_64/prof_none.c), reached through the
 * prof_sample_* calls of kernel/prof.h.  The system call is described in
 * kernel/uapi/prof.h, the whole in docs/profiling.md.
 */
#include "kernel/prof.h"
#include "kernel/syscall.h"
#include "kernel/vm.h"
#include "kernel/klib.h"
#include "kernel/kshare.h"
#include "kernel/uapi/prof.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"
#include "drivers/blk.h"

/* Per-process counters, by process-table slot; reset at spawn. */
struct pcount {
	struct exo_counts counts;
	bool in_syscall;
	uint32_t sysnum;            /* the system call in progress */
	uint64_t sys_start;         /* rdtime when it started */
	uint64_t sleep_start;       /* rdtime when the process went to sleep, or 0 */
};
static struct pcount pc[NPROC];

const struct exo_counts *prof_counts(struct proc *p) { return &pc[p->slot].counts; }
bool prof_in_syscall(struct proc *p) { return pc[p->slot].in_syscall; }
uint32_t prof_sysnum(struct proc *p) { return pc[p->slot].sysnum; }

static void count_syscall(struct exo_counts *c, uint64_t num, uint64_t op)
{
	c->syscalls++;
	if (num < EXO_NSYSCALLS) c->by_syscall[num]++;
	if (num == SYS_exodisk_request && op < EXO_NEDOPS) c->by_edop[op]++;
}

static void count_disk(struct exo_counts *c, const struct blkreq *r)
{
	switch (r->op) {
	case BLK_READ:
		c->disk_reads++;
		c->sectors_read += r->nsectors;
		break;
	case BLK_WRITE:
		c->disk_writes++;
		c->sectors_written += r->nsectors;
		if (r->flags & BLK_F_FUA) c->disk_fua++;
		break;
	case BLK_FLUSH:
		c->disk_flushes++;
		break;
	}
}

/* The block layer tells us of every request it accepts.  One queued during
 * a system call is that process's; the system counts them all. */
static void disk_request(const struct blkreq *r)
{
	count_disk(&kinfo->counts, r);
	struct proc *p = myproc();
	if (p && pc[p->slot].in_syscall) count_disk(&pc[p->slot].counts, r);
}

void prof_syscall_enter(struct proc *p)
{
	struct pcount *c = &pc[p->slot];
	uint64_t num = tf_sysnum(&p->tf), op = tf_arg(&p->tf, 0);
	count_syscall(&c->counts, num, op);
	count_syscall(&kinfo->counts, num, op);
	c->in_syscall = true;
	c->sysnum = (uint32_t)num;
	c->sys_start = rdtime();
	prof_sample_syscall_enter(p);
}

void prof_syscall_exit(struct proc *p)
{
	struct pcount *c = &pc[p->slot];
	prof_sample_syscall_exit(p);
	uint64_t t = rdtime() - c->sys_start;
	c->counts.sys_time += t;
	kinfo->counts.sys_time += t;
	c->in_syscall = false;
}

int prof_sched_out(struct proc *p)
{
	int token = prof_sample_sched_out(p);
	pc[p->slot].sleep_start = p->state == P_SLEEPING ? rdtime() : 0;
	return token;
}

void prof_sched_in(struct proc *p, int token)
{
	struct pcount *c = &pc[p->slot];
	if (c->sleep_start) {
		uint64_t t = rdtime() - c->sleep_start;
		c->counts.wait_time += t;
		kinfo->counts.wait_time += t;
		c->sleep_start = 0;
	}
	prof_sample_sched_in(p, token);
}

void prof_spawn(struct proc *parent, struct proc *child, const char *path)
{
	memset(&pc[child->slot], 0, sizeof pc[child->slot]);
	prof_sample_spawn(parent, child, path);
}

static void prof_exit(struct proc *p)
{
	prof_sample_exit(p);
}

static int64_t sys_prof(struct proc *p, uint64_t op, uint64_t a1, uint64_t a2,
			uint64_t a3, uint64_t a4, uint64_t a5)
{
	if (op == PROF_COUNTS)
		return copyout(p->pagetable, a1, &pc[p->slot].counts, sizeof(struct exo_counts)) < 0 ? K_E_FAULT : 0;
	return prof_sample_call(p, op, a1, a2, a3, a4);
}

void prof_init(void)
{
	syscall_register(SYS_prof, sys_prof, "prof");
	proc_on_exit(prof_exit);
	blk_set_submit_hook(disk_request);
}
