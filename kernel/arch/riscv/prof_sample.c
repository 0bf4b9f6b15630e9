/*
 * prof_sample.c - the profiler's sampling on RISC-V: timer-driven samples of
 * the processes in a profile, with their call chains, and the profile's
 * buffer and operations (every SYS_prof operation but PROF_COUNTS).  The
 * counters of system calls and disk requests are portable
 * (kernel/prof.c, which calls in here through kernel/prof.h); what ties
 * this file to RISC-V is the sampling window (sie, sstatus, SBI's timer,
 * wfi) and the frame layout of the call chains.  The system call is
 * described in kernel/uapi/prof.h, the whole in docs/profiling.md.
 *
 * Sampling.  While a profile is active the timer also fires at the profile's
 * rate (timer.c arms it for the earlier of the scheduler's next tick and our
 * next sample).  At each sample every process in the profile gets one
 * record: the running one where the interrupt caught it, a sleeping one
 * where it went to sleep, a runnable one where it stopped.  Call chains come
 * from the frame pointers everything is compiled with.
 *
 * The kernel runs with interrupts off, so without help a sample that falls
 * due in a system call would wait for the return to user mode and land on the
 * instruction after the ecall: kernel time would be invisible.  So while a
 * profiled process is in a system call we open a "window": interrupts are
 * enabled, and a timer interrupt inside the window only records a sample
 * (prof_kernel_trap) - no scheduling, no wakeup, nothing the interrupted code
 * could notice.  Whatever else arrives is put off until the window ends, which
 * is where the kernel would have taken it without the profiler (interrupts
 * are off in system calls): a device interrupt is masked in sie, and a
 * scheduler tick or driver timer event that falls due leaves the comparator
 * set for the next sample only; when the window ends, both are restored and
 * the pending interrupts are taken on the way back to user mode.  The one
 * place the kernel turns interrupts on itself is a wait loop (a wfi with
 * them off, then on and off: wait_for_interrupt), and intr_wait()
 * (trap.c), which the kernel's wait loops use, shuts the window while it
 * waits; the samples taken there are PROF_K_WAIT,
 * since the process is waiting for a device.  A wait loop of its own (a bare
 * wfi) is caught when an interrupt wakes it: that closes the window for the
 * rest of the call, and a sample that falls due meanwhile is taken when the
 * call ends, as PROF_K_SYSCALL: we know which call, not where in it.
 * Sleeping ends the window for the scheduler's sake and waking opens it
 * again.  A sample that falls due while interrupts are off (trap entry and
 * exit, interrupt handlers, the scheduler) is taken when they are next on, at
 * whatever runs then; one that stays pending for whole periods counts them as
 * missed.
 *
 * The window's sample handler touches only the profile's buffer and the
 * interrupted process's state here, and reads kernel stacks and the user
 * stacks' pages (found at spawn); it never allocates, never walks page
 * tables and never wakes anyone.  Code outside it that appends to the buffer
 * turns interrupts off while it does.
 */
#include "kernel/prof.h"
#include "kernel/trap.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/kshare.h"
#include "kernel/initrd.h"
#include "kernel/arch/riscv/sbi.h"
#include "kernel/arch/riscv/memlayout.h"
#include "kernel/bootinfo.h"
#include "kernel/uapi/prof.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"

enum { WIN_OFF, WIN_OPEN, WIN_CLOSED };

#define WFI_INSN 0x10500073u
#define CSRSI_SIE_INSN 0x10016073u   /* csrsi sstatus, 2 */

/* Per-process state, by process-table slot; reset at spawn.  Whether the
 * process is in a system call, and which, is kernel/prof.c's. */
struct pstate {
	bool profiled;              /* in the profile */
	uint8_t window;             /* WIN_*: the sampling window of this system call */
	bool opening;               /* the window is being opened (see window_open) */
	bool masked;                /* the window has masked device interrupts */
	bool deferred;              /* ... or a timer tick or event fell due in it */
	/* The physical pages of the user stack, found when the process joins
	 * the profile: the sample handler may not walk page tables (it can
	 * interrupt code changing them), but a process's stack pages stay put
	 * from spawn to exit. */
	uint64_t stack_pa[USTACK_SIZE / PGSIZE];
};
static struct pstate ps[NPROC];

/* The profile: one at a time. */
static struct {
	bool exists, active;
	struct proc *owner;
	int owner_pid;
	struct prof_info info;
	uint8_t *buf;               /* info.size bytes, physically contiguous */
	uint64_t next_sample;       /* rdtime of the next sample */
} P;

/* The end of the buffer is kept for the records that carry counters. */
#define RESERVE (16 * 1024)

/* Where the current kernel-mode trap interrupted the kernel. */
static struct { uint64_t pc, ra, fp; } ktrap;

/* The window around a device interrupt's handler (prof_irq_enter). */
static struct { bool open, deferred; uint64_t sie; } irqw;

/* The scheduler's stack, where interrupts arrive while the CPU is idle
 * (kernel/arch/riscv/entry.S). */
extern char boot_stack[], boot_stack_top[];

/* ---- the record ---------------------------------------------------------- */

/* Room for a record with body bytes after its header, or NULL (counted). */
static void *put(int type, int kind, int nk, int nu, int pid, size_t body)
{
	size_t len = (sizeof(struct prof_rec) + body + 7) & ~(size_t)7;
	uint64_t limit = P.info.size - (type == PROF_R_SAMPLE ? RESERVE : 0);
	if (P.info.used + len > limit) {
		if (type == PROF_R_SAMPLE) P.info.dropped++;
		else P.info.lost_records++;
		return NULL;
	}
	struct prof_rec *r = (struct prof_rec *)(P.buf + P.info.used);
	r->type = (uint8_t)type;
	r->kind = (uint8_t)kind;
	r->nk = (uint8_t)nk;
	r->nu = (uint8_t)nu;
	r->pid = (uint32_t)pid;
	r->time = rdtime();
	P.info.used += len;
	return r + 1;
}

/* Outside the sample handler, appending runs with interrupts off. */
static bool intr_save(void) { bool on = intr_get(); intr_off(); return on; }
static void intr_restore(bool on) { if (on) intr_on(); }

/* ---- call chains --------------------------------------------------------- */

typedef bool (*read_fn)(void *ctx, uint64_t va, uint64_t *val);

static bool kernel_read(void *ctx, uint64_t va, uint64_t *val)
{
	*val = *(const uint64_t *)va;
	return true;
}

/* A word of a process's user stack, through stack_pa. */
static bool stack_read(void *ctx, uint64_t va, uint64_t *val)
{
	const struct pstate *s = ctx;
	uint64_t base = USTACK_TOP - USTACK_SIZE;
	if (va < base || va >= USTACK_TOP) return false;
	uint64_t pa = s->stack_pa[(va - base) / PGSIZE];
	if (pa == 0) return false;
	*val = *(const uint64_t *)(pa + (va & (PGSIZE - 1)));
	return true;
}

/*
 * Follow frame pointers from fp while they stay inside the stack [lo, hi],
 * 8-aligned and moving up; out gets the return addresses, innermost first.
 * GCC's RISC-V frame keeps the return address at fp-8 and the caller's fp at
 * fp-16.  A leaf function saves only the caller's fp, at fp-8 (its return
 * address stays in ra, which samples record separately): if the first word
 * looks like a stack address rather than code, we take it as the fp.
 */
static int walk(uint64_t fp, uint64_t lo, uint64_t hi, read_fn rd, void *ctx, uint64_t *out, int max)
{
	int n = 0;
	bool first = true;
	while (n < max && fp >= lo + 16 && fp <= hi && (fp & 7) == 0) {
		uint64_t ra, prev;
		if (!rd(ctx, fp - 8, &ra)) break;
		if (first && ra >= lo && ra <= hi) {
			prev = ra;
		} else {
			if (ra == 0 || !rd(ctx, fp - 16, &prev)) break;
			out[n++] = ra;
		}
		first = false;
		if (prev <= fp) break;
		fp = prev;
	}
	return n;
}

/*
 * When s0 is not a frame pointer at all, the process is in code built
 * without them (picolibc: its malloc keeps data in s0).  Look above sp, a
 * little way, for the nearest frame record that looks real - the caller's
 * fp slot holding a stack address further up, the ra slot an address in the
 * program - and follow the chain from there.  The functions between (the
 * one without a frame, and its caller if that saved ra only in its own save
 * area) are missed; a false record can only make a sample's chain wrong,
 * never more than that.
 */
static uint64_t find_frame(struct proc *p, uint64_t lo, uint64_t hi)
{
	uint64_t sp = p->tf.sp & ~7ull;
	for (uint64_t a = sp + 16; a <= hi && a <= sp + 512; a += 8) {
		uint64_t ra, prev;
		if (!stack_read(&ps[p->slot], a - 8, &ra) || !stack_read(&ps[p->slot], a - 16, &prev)) break;
		if (ra >= USER_BASE && ra < p->heap_start && (prev == 0 || (prev > a && prev <= hi && !(prev & 7))))
			return a;
	}
	return 0;
}

/* [pc, ra, return addresses...] of p's user context: where it was
 * interrupted, or where it made the system call it is in. */
static int user_chain(struct proc *p, uint64_t *out)
{
	uint64_t lo = USTACK_TOP - USTACK_SIZE, hi = USTACK_TOP, fp = p->tf.s0;
	out[0] = p->tf.sepc;
	out[1] = p->tf.ra;
	if (fp != 0 && (fp < lo + 16 || fp > hi || (fp & 7))) fp = find_frame(p, lo, hi);
	return 2 + walk(fp, lo, hi, stack_read, &ps[p->slot], out + 2, PROF_MAXDEPTH - 2);
}

/* The same on p's kernel stack, or the scheduler's if p is NULL. */
static int kernel_chain(struct proc *p, uint64_t pc, uint64_t ra, uint64_t fp, uint64_t *out)
{
	uint64_t lo = p ? KSTACK(p->slot) : (uint64_t)boot_stack;
	uint64_t hi = p ? lo + KSTACK_PAGES * PGSIZE : (uint64_t)boot_stack_top;
	out[0] = pc;
	out[1] = ra;
	return 2 + walk(fp, lo, hi, kernel_read, NULL, out + 2, PROF_MAXDEPTH - 2);
}

/* ---- sampling ------------------------------------------------------------ */

/* Open the window.  A sample that fell due while interrupts were off (on
 * the way into the kernel, or while the process was switched out) is taken
 * the moment they go on, here: it belongs to the system call, but not to this
 * place in it, so it is recorded as PROF_K_SYSCALL. */
static void window_open(struct pstate *s)
{
	s->window = WIN_OPEN;
	s->opening = true;
	__asm__ volatile("" ::: "memory");
	intr_on();
	__asm__ volatile("" ::: "memory");
	s->opening = false;
}

static bool insn_at(uint64_t pc, uint32_t insn)
{
	const uint16_t *h = (const uint16_t *)pc;
	return h[0] == (insn & 0xffff) && h[1] == (insn >> 16);
}

/* Was the kernel stopped in a wfi?  A bare wfi with interrupts on takes
 * the trap just past it; wait_for_interrupt (arch.h) waits with them off
 * and takes it just past the `csrsi sstatus, 2` that follows its wfi. */
static bool after_wfi(uint64_t pc)
{
	return insn_at(pc - 4, WFI_INSN) || (insn_at(pc - 4, CSRSI_SIE_INSN) && insn_at(pc - 8, WFI_INSN));
}

/* How the running process is to be sampled: in user mode, in the kernel
 * (where ktrap says), in a system call but not known where, or not at all
 * because the CPU is handling a device interrupt (where ktrap says). */
enum { CUR_USER, CUR_KERNEL, CUR_SYSCALL, CUR_IRQ };

static void sample(struct proc *q, int kind, const uint64_t *k, int nk, const uint64_t *u, int nu)
{
	uint64_t *a = put(PROF_R_SAMPLE, kind, nk, nu, q->pid, (size_t)(nk + nu) * 8);
	if (a == NULL) return;
	memcpy(a, k, (size_t)nk * 8);
	memcpy(a + nk, u, (size_t)nu * 8);
	P.info.samples[kind]++;
}

/* If a sample is due, give every process in the profile one. */
static void take_samples(uint64_t now, int cur_mode)
{
	if (!P.active || now < P.next_sample) return;
	uint64_t behind = (now - P.next_sample) / P.info.period;
	P.info.missed += behind;
	P.next_sample += (behind + 1) * P.info.period;

	struct proc *cur = myproc();
	uint64_t k[PROF_MAXDEPTH], u[PROF_MAXDEPTH];
	if (cur_mode == CUR_IRQ) {
		int nk = kernel_chain(cur, ktrap.pc, ktrap.ra, ktrap.fp, k);
		uint64_t *a = put(PROF_R_SAMPLE, PROF_K_IRQ, nk, 0, 0, (size_t)nk * 8);
		if (a) {
			memcpy(a, k, (size_t)nk * 8);
			P.info.samples[PROF_K_IRQ]++;
		}
	}
	for (int i = 0; i < NPROC; i++) {
		struct pstate *s = &ps[i];
		struct proc *q = &procs[i];
		if (!s->profiled) continue;
		/* The user part: the trap frame holds where the process was
		 * interrupted, or where it made the system call it is in. */
		if (q == cur) {
			int nu = user_chain(q, u);
			if (cur_mode == CUR_IRQ) {
				/* Its time is the interrupt's: sampled above. */
			} else if (cur_mode == CUR_USER) {
				sample(q, PROF_K_USER, k, 0, u, nu);
			} else if (cur_mode == CUR_KERNEL) {
				/* Waiting in a wfi for a device is waiting, not running. */
				int nk = kernel_chain(q, ktrap.pc, ktrap.ra, ktrap.fp, k);
				sample(q, after_wfi(ktrap.pc) ? PROF_K_WAIT : PROF_K_KERNEL, k, nk, u, nu);
			} else {
				k[0] = prof_sysnum(q);
				k[1] = 0;
				sample(q, PROF_K_SYSCALL, k, 2, u, nu);
			}
		} else if (q->state == P_SLEEPING || q->state == P_RUNNABLE) {
			int kind = q->state == P_SLEEPING ? PROF_K_WAIT : PROF_K_READY;
			int nu = user_chain(q, u), nk = 0;
			/* In a system call it stopped in sched(), whose context
			 * says where; otherwise it was preempted in user mode (or
			 * has not started yet) and the kernel part says nothing. */
			if (prof_in_syscall(q)) nk = kernel_chain(q, q->ctx.ra, 0, q->ctx.s0, k);
			sample(q, kind, k, nk, u, nu);
		}
	}
}

uint64_t prof_next_sample(void)
{
	return P.active ? P.next_sample : UINT64_MAX;
}

void prof_tick(uint64_t now)
{
	if (!P.active) return;
	/* A normal timer interrupt: from user mode, from the idle loop (no
	 * process), or from a wait loop inside a system call. */
	bool from_kernel = (csr_read(sstatus) & SSTATUS_SPP) != 0;
	take_samples(now, from_kernel ? CUR_KERNEL : CUR_USER);
}

/* The window ends: interrupts off, and whatever it put off is let through. */
static void window_end(struct pstate *s)
{
	intr_off();
	if (s->masked) csr_set(sie, SIE_SEIE);
	if (s->deferred) timer_rearm();
	s->masked = s->deferred = false;
}

bool prof_kernel_trap(uint64_t scause, uint64_t sepc, uint64_t ra, uint64_t s0)
{
	ktrap.pc = sepc;
	ktrap.ra = ra;
	ktrap.fp = s0;
	if (irqw.open) {
		/* Inside a device interrupt's handler only the timer is let in. */
		uint64_t now = rdtime();
		take_samples(now, CUR_IRQ);
		if (timer_deadline() <= now) irqw.deferred = true;
		sbi_set_timer(irqw.deferred ? prof_next_sample() : MIN(timer_deadline(), prof_next_sample()));
		return true;
	}
	struct proc *p = myproc();
	struct pstate *s = p ? &ps[p->slot] : NULL;
	if (s == NULL || s->window != WIN_OPEN) return false;
	uint64_t now = rdtime();
	bool timer = scause == (SCAUSE_INTR | IRQ_S_TIMER);
	if (timer) take_samples(now, s->opening ? CUR_SYSCALL : CUR_KERNEL);
	if (after_wfi(sepc)) {
		/* A wait loop: it wants this interrupt.  Let the loop go on with
		 * interrupts off, as it expects; it takes the interrupt (normally)
		 * when it turns them on again. */
		window_end(s);
		s->window = WIN_CLOSED;
		csr_clear(sstatus, SSTATUS_SPIE);
		return true;
	}
	if (timer) {
		if (timer_deadline() <= now) s->deferred = true;
		sbi_set_timer(s->deferred ? prof_next_sample() : MIN(timer_deadline(), prof_next_sample()));
	} else {
		csr_clear(sie, SIE_SEIE);
		s->masked = true;
	}
	return true;
}

/* ---- the hooks ----------------------------------------------------------- */

void prof_sample_syscall_enter(struct proc *p)
{
	struct pstate *s = &ps[p->slot];
	if (s->profiled && P.active) {
		window_open(s);
	}
}

void prof_sample_syscall_exit(struct proc *p)
{
	struct pstate *s = &ps[p->slot];
	if (s->window == WIN_CLOSED) {
		/* Samples the closed window could not take are this call's. */
		take_samples(rdtime(), CUR_SYSCALL);
	} else if (s->window == WIN_OPEN) {
		window_end(s);
	}
	s->window = WIN_OFF;
}

/*
 * A device interrupt's handler (the virtio completion, and whatever the
 * exodisk does on completion: its log and home writes) runs in a window of
 * its own, so its time is seen: only the timer can interrupt it, and only to
 * take a sample; a tick or event that falls due waits for the handler's end,
 * as it would without the profiler.
 */
int prof_irq_enter(uint64_t scause)
{
	if (!P.active || scause != (SCAUSE_INTR | IRQ_S_EXT) || irqw.open) return 0;
	irqw.sie = csr_read(sie);
	csr_write(sie, SIE_STIE);
	irqw.open = true;
	intr_on();
	return 1;
}

void prof_irq_exit(int token)
{
	if (!token) return;
	intr_off();
	irqw.open = false;
	csr_write(sie, irqw.sie);
	if (irqw.deferred) timer_rearm();
	irqw.deferred = false;
}

int prof_wait_begin(void)
{
	struct proc *p = myproc();
	struct pstate *s = p ? &ps[p->slot] : NULL;
	if (s == NULL || s->window != WIN_OPEN) return 0;
	window_end(s);
	s->window = WIN_CLOSED;
	return 1;
}

void prof_wait_end(int token)
{
	struct proc *p = myproc();
	if (!token || p == NULL || !P.active) return;
	window_open(&ps[p->slot]);
}

int prof_sample_sched_out(struct proc *p)
{
	struct pstate *s = &ps[p->slot];
	window_end(s);   /* the scheduler runs with interrupts off */
	return s->window != WIN_OFF;
}

void prof_sample_sched_in(struct proc *p, int token)
{
	struct pstate *s = &ps[p->slot];
	if (token && s->window != WIN_OFF && P.active) window_open(s);
}

static bool is_owner(struct proc *p)
{
	return P.exists && P.owner == p && P.owner_pid == p->pid;
}

void prof_sample_spawn(struct proc *parent, struct proc *child, const char *path)
{
	struct pstate *s = &ps[child->slot];
	memset(s, 0, sizeof *s);
	if (!P.active || parent == NULL) return;
	if (!is_owner(parent) && !(ps[parent->slot].profiled && (P.info.flags & PROF_F_INHERIT))) return;
	for (uint64_t i = 0; i < USTACK_SIZE / PGSIZE; i++)
		s->stack_pa[i] = uvm_translate(child->pagetable, USTACK_TOP - USTACK_SIZE + i * PGSIZE, false);
	s->profiled = true;
	P.info.nprocs++;
	bool on = intr_save();
	struct prof_proc *r = put(PROF_R_PROC, 0, 0, 0, child->pid, sizeof *r);
	if (r) {
		r->ppid = (uint32_t)parent->pid;
		strncpy_safe(r->path, path, sizeof r->path);
	}
	intr_restore(on);
}

static void prof_free(void)
{
	for (int i = 0; i < NPROC; i++) ps[i].profiled = false;
	kfree_contig(P.buf, P.info.size / PGSIZE);
	memset(&P, 0, sizeof P);
	timer_rearm();
}

void prof_sample_exit(struct proc *p)
{
	struct pstate *s = &ps[p->slot];
	/* Exiting in SYS_exit ends its window for good: interrupts stay off. */
	if (s->window != WIN_OFF) window_end(s);
	s->window = WIN_OFF;
	if (s->profiled && P.exists) {
		struct prof_exit *r = put(PROF_R_EXIT, 0, 0, 0, p->pid, sizeof *r);
		if (r) {
			r->proc = *prof_counts(p);
			r->all = kinfo->counts;
		}
	}
	s->profiled = false;
	if (is_owner(p)) prof_free();
}

/* ---- the system call ----------------------------------------------------- */

static int64_t prof_start(struct proc *p, uint64_t ucfg)
{
	struct prof_config cfg;
	if (P.exists) return K_E_BUSY;
	if (copyin(p->pagetable, &cfg, ucfg, sizeof cfg) < 0) return K_E_FAULT;
	uint64_t hz = cfg.hz ? cfg.hz : PROF_HZ_DEFAULT;
	uint64_t bytes = cfg.bytes ? cfg.bytes : PROF_BYTES_DEFAULT;
	if (hz < PROF_HZ_MIN || hz > PROF_HZ_MAX || bytes < PROF_BYTES_MIN || bytes > PROF_BYTES_MAX ||
	    (cfg.flags & ~PROF_F_INHERIT) != 0)
		return K_E_INVAL;
	bytes = PGROUNDUP(bytes);
	uint8_t *buf = kalloc_contig(bytes / PGSIZE);
	if (buf == NULL) return K_E_NOMEM;
	memset(&P, 0, sizeof P);
	P.buf = buf;
	P.owner = p;
	P.owner_pid = p->pid;
	P.info.timebase_hz = bootinfo.timebase_hz;
	P.info.hz = (uint32_t)hz;
	P.info.flags = cfg.flags;
	P.info.period = MAX(bootinfo.timebase_hz / hz, 1);
	P.info.size = bytes;
	P.info.start_time = rdtime();
	P.info.active = 1;
	P.next_sample = P.info.start_time + P.info.period;
	P.exists = P.active = true;
	timer_rearm();
	return 0;
}

static int64_t prof_mark(struct proc *p, uint64_t uname, uint64_t units)
{
	char name[PROF_MARK_NAME];
	int n = copyinstr(p->pagetable, name, uname, sizeof name);
	if (n < 0) return n;
	if (!P.active || !ps[p->slot].profiled) return 0;
	bool on = intr_save();
	struct prof_mark *m = put(PROF_R_MARK, 0, 0, 0, p->pid, sizeof *m);
	if (m) {
		memcpy(m->name, name, sizeof name);
		m->units = units;
		m->proc = *prof_counts(p);
		m->all = kinfo->counts;
	}
	intr_restore(on);
	return 0;
}

static int64_t prof_image(struct proc *p, uint64_t upath, uint64_t off, uint64_t ubuf, uint64_t len)
{
	char path[128];
	const uint8_t *data;
	size_t size;
	int n = copyinstr(p->pagetable, path, upath, sizeof path);
	if (n < 0) return n;
	if ((n = initrd_find(path, &data, &size)) < 0) return n;
	if (len == 0) return (int64_t)size;
	if (off > size) return K_E_INVAL;
	len = MIN(len, size - off);
	if (copyout(p->pagetable, ubuf, data + off, len) < 0) return K_E_FAULT;
	return (int64_t)len;
}

int64_t prof_sample_call(struct proc *p, uint64_t op, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	switch (op) {
	case PROF_START:  return prof_start(p, a1);
	case PROF_MARK:   return prof_mark(p, a1, a2);
	case PROF_IMAGE:  return prof_image(p, a1, a2, a3, a4);
	case PROF_STOP: case PROF_INFO: case PROF_READ: case PROF_FREE:
		break;
	default:
		return K_E_INVAL;
	}
	if (!is_owner(p)) return K_E_PERM;
	switch (op) {
	case PROF_STOP:
		if (P.active) {
			P.active = false;
			P.info.active = 0;
			P.info.stop_time = rdtime();
			timer_rearm();
		}
		return 0;
	case PROF_INFO:
		return copyout(p->pagetable, a1, &P.info, sizeof P.info) < 0 ? K_E_FAULT : 0;
	case PROF_READ: {
		uint64_t off = a1, len = a3;
		if (off > P.info.used) return K_E_INVAL;
		len = MIN(len, P.info.used - off);
		if (copyout(p->pagetable, a2, P.buf + off, len) < 0) return K_E_FAULT;
		return (int64_t)len;
	}
	default:   /* PROF_FREE */
		prof_free();
		return 0;
	}
}
