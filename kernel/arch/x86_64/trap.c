/*
 * trap.c - what happens on a trap, on x86-64.
 *
 * The IDT sends every vector to the stubs in trapentry.S; system calls come
 * through the syscall instruction (MSR_LSTAR).  From user mode: a system
 * call goes to syscall(); a device-not-available fault is the process's
 * first floating-point instruction since it was switched in (below); an
 * interrupt is handled and may preempt the process; any other exception is
 * the process's fault, and it is killed with a message naming it and the
 * cause.  From kernel mode only interrupts are expected (the kernel runs
 * with interrupts off except while waiting for one); an exception there is
 * a kernel bug and panics with the registers that explain it.
 *
 * Causes (what proc_fault reports; a killed process's status is 128 + the
 * cause): the kernel speaks RISC-V's exception codes everywhere, so that a
 * program's fate reads the same on both machines - a page fault is code 12,
 * 13 or 15 as it was an instruction fetch, a load or a store, an invalid
 * opcode is 2 (illegal instruction), int3 is 3 (breakpoint).  x86 faults
 * with no RISC-V counterpart are 32 + the vector (a general-protection fault,
 * say a privileged instruction, is 45).
 *
 * Floating point is switched lazily: switching a process in sets CR0.TS, so
 * its first FP/SSE instruction traps (#NM) and only then are its registers
 * loaded; switching it out saves them only if it took them.  The kernel is
 * built with -mgeneral-regs-only and never touches them.
 */
#include "kernel/arch/x86_64/arch.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/trap.h"
#include "kernel/proc.h"
#include "kernel/kshare.h"
#include "kernel/klib.h"
#include "kernel/syscall.h"
#include "kernel/prof.h"
#include "kernel/vm.h"

#define T_SYSCALL 256
#define T_NM      7
#define T_DF      8
#define T_PF      14

#define T_UD      6
#define T_BP      3

#define PF_WRITE  (1u << 1)
#define PF_INSTR  (1u << 4)

/* The causes it reports (CAUSE_*) are in kernel/trap.h. */

struct idt_gate {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type;        /* present, DPL, 0xe: 64-bit interrupt gate */
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t zero;
} __attribute__((packed));

static struct idt_gate idt[256] __attribute__((aligned(16)));
extern uint64_t vectors[256];
extern char syscall_entry[];
void user_return(struct trapframe *tf) __attribute__((noreturn));

static struct { void (*fn)(void *); void *arg; } handlers[256];
static int next_vector = VEC_FIRST_DEV;

int vector_alloc(void (*fn)(void *), void *arg)
{
	if (next_vector >= VEC_SPURIOUS - 1)
		return -1;
	handlers[next_vector].fn = fn;
	handlers[next_vector].arg = arg;
	return next_vector++;
}

static void timer_vector(void *arg)
{
	(void)arg;
	hpet_timer_interrupt();
}

void idt_init(void)
{
	for (int v = 0; v < 256; v++) {
		uint64_t a = vectors[v];
		idt[v] = (struct idt_gate){
			.off_lo = (uint16_t)a, .sel = SEG_KCODE, .ist = v == T_DF ? 1 : 0,
			.type = 0x8e, .off_mid = (uint16_t)(a >> 16), .off_hi = (uint32_t)(a >> 32),
		};
	}
	struct { uint16_t limit; uint64_t base; } __attribute__((packed)) p = { sizeof idt - 1, (uint64_t)idt };
	__asm__ volatile("lidt %0" :: "m"(p));
	handlers[VEC_TIMER].fn = timer_vector;
}

/* ---- floating point ------------------------------------------------------ */

#define FX_MXCSR 24                    /* where the FXSAVE image keeps MXCSR */

static struct fpstate fp_initial;      /* after fninit, MXCSR at its reset value */
static struct proc *fp_owner;          /* whose registers are in the FPU now */

static void fxsave(struct fpstate *f) { __asm__ volatile("fxsave64 %0" : "=m"(*f)); }
static void fxrstor(const struct fpstate *f) { __asm__ volatile("fxrstor64 %0" :: "m"(*f)); }
static void clts(void) { __asm__ volatile("clts"); }
static void stts(void) { write_cr0(read_cr0() | CR0_TS); }

void fpu_init(void)
{
	/* FPU on (no emulation), errors reported natively, SSE enabled. */
	uint64_t cr0 = read_cr0();
	cr0 &= ~(1ull << 2);                 /* EM */
	cr0 |= (1ull << 1) | (1ull << 5);    /* MP, NE */
	write_cr0(cr0);
	write_cr4(read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT);
	clts();
	__asm__ volatile("fninit");
	fxsave(&fp_initial);
	stts();
	/* MXCSR at its reset value (all exceptions masked, round to nearest)
	 * goes into the image, not into the register: the first fxrstor of a
	 * process loads it.  Not ldmxcsr, because a KVM that emulates the
	 * kernel's instructions (a nested hypervisor, docs/kernel.md) may not
	 * know that one and stops the guest. */
	uint32_t mxcsr = 0x1f80;
	memcpy(&fp_initial.fx[FX_MXCSR], &mxcsr, sizeof mxcsr);
}

/* #NM from user mode: give the process its registers. */
static void fp_fault(struct proc *p)
{
	clts();
	fxrstor(p->fp_valid ? &p->fp : &fp_initial);
	fp_owner = p;
}

void arch_switch_in(struct proc *p)
{
	tss_set_rsp0((uint64_t)&p->tf + TF_CPU_END);
	stts();
}

void arch_switch_out(struct proc *p)
{
	if (fp_owner == p) {
		clts();
		fxsave(&p->fp);
		p->fp_valid = true;
		fp_owner = NULL;
	}
	stts();
}

void arch_proc_init(struct proc *p, uint64_t kstack_top, void (*first_run)(void))
{
	p->tf.kernel_sp = kstack_top;
	p->ctx.rip = (uint64_t)first_run;
	p->ctx.rsp = kstack_top - 8;         /* as if called: rsp + 8 is 16-aligned */
	if (fp_owner == p)
		fp_owner = NULL;                 /* a new process in an old slot */
}

void tf_set_entry(struct trapframe *tf, uint64_t pc, uint64_t sp, uint64_t a0, uint64_t a1, uint64_t a2)
{
	tf->rip = pc;
	tf->rsp = sp;
	tf->rdi = a0;
	tf->rsi = a1;
	tf->rdx = a2;
	tf->cs = SEG_UCODE;
	tf->ss = SEG_UDATA;
	tf->rflags = RFLAGS_IF | RFLAGS_RESERVED;
}

/* ---- setup ----------------------------------------------------------------- */

void trap_init(void)
{
	gdt_init();
	idt_init();
	/* syscall: enabled in EFER; STAR names the kernel's code selector and the
	 * base sysret would use; interrupts, tracing, direction and alignment
	 * checks are off on entry. */
	wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
	wrmsr(MSR_STAR, ((uint64_t)(SEG_UBASE | 3) << 48) | ((uint64_t)SEG_KCODE << 32));
	wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
	wrmsr(MSR_FMASK, RFLAGS_IF | RFLAGS_TF | RFLAGS_DF | RFLAGS_AC | (1ull << 14));
	fpu_init();
	lapic_init();
	ioapic_init();
	hpet_init();
}

/* ---- names ----------------------------------------------------------------- */

static const char *const exc_names[32] = {
	[0] = "divide error", [1] = "debug exception", [2] = "non-maskable interrupt",
	[3] = "breakpoint", [4] = "overflow", [5] = "bound range exceeded",
	[6] = "illegal instruction", [7] = "device not available", [8] = "double fault",
	[10] = "invalid TSS", [11] = "segment not present", [12] = "stack-segment fault",
	[13] = "general protection fault", [14] = "page fault", [16] = "x87 floating-point error",
	[17] = "alignment check", [18] = "machine check", [19] = "SIMD floating-point error",
	[20] = "virtualization exception", [21] = "control-protection exception",
};

const char *trap_cause_name(uint64_t cause)
{
	switch (cause) {
	case CAUSE_ILLEGAL: return "illegal instruction";
	case CAUSE_BREAK:   return "breakpoint";
	case CAUSE_IPF:     return "instruction page fault";
	case CAUSE_LPF:     return "load page fault";
	case CAUSE_SPF:     return "store page fault";
	}
	if (cause >= 32 && cause < 64 && exc_names[cause - 32] != NULL)
		return exc_names[cause - 32];
	return "unknown exception";
}

/* ---- dispatch ---------------------------------------------------------------- */

static void interrupt(uint64_t vec)
{
	if (vec == VEC_SPURIOUS)
		return;                          /* no EOI for a spurious interrupt */
	if (handlers[vec].fn != NULL)
		handlers[vec].fn(handlers[vec].arg);
	else
		kprintf("kernel: unexpected interrupt, vector %lu\n", (unsigned long)vec);
	lapic_eoi();
}

void user_trap(struct trapframe *tf) __attribute__((noreturn));
/* A nested KVM that emulates the guest's kernel (the one this was found on,
 * docs/kernel.md) carries out a user's syscall instruction all but the
 * privilege change: rip is syscall_entry, rcx and r11 hold the return
 * address and flags, FMASK has cleared IF, but the CPU is still in user
 * mode, so fetching the kernel's entry faults.  Such a fault is that system
 * call, finished here as syscall_entry would have: the frame becomes the
 * one it builds.  Nothing else looks like it: user mode cannot run with IF
 * clear, so a program that jumps to syscall_entry itself faults with IF
 * set and is killed as before; real CPUs and TCG never get here. */
static bool syscall_left_in_user_mode(struct trapframe *tf)
{
	if (!(tf->err & PF_INSTR) || tf->rip != (uint64_t)syscall_entry ||
	    (tf->rflags & RFLAGS_IF) || !uva_range_ok(tf->rcx, 1))
		return false;
	tf->rip = tf->rcx;
	tf->rflags = (tf->r11 & RFLAGS_USER) | RFLAGS_IF | RFLAGS_RESERVED;
	return true;
}

void user_trap(struct trapframe *tf)
{
	struct proc *p = myproc();
	uint64_t t = tf->trapno;

	if (t == T_PF && syscall_left_in_user_mode(tf))
		t = T_SYSCALL;
	if (t == T_SYSCALL) {
		syscall(p);
	} else if (t >= 32) {
		int token = prof_irq_enter(t);
		interrupt(t);
		prof_irq_exit(token);
	} else if (t == T_NM) {
		fp_fault(p);
	} else if (t == T_PF) {
		uint64_t cause = (tf->err & PF_INSTR) ? CAUSE_IPF : (tf->err & PF_WRITE) ? CAUSE_SPF : CAUSE_LPF;
		/* A read of a page exported lazily (the exodisk's free maps) is
		 * mapped now, as on RISC-V; any other fault is the program's. */
		if (!kshare_fault(p, cause, read_cr2()))
			proc_fault(p, cause, tf->rip, read_cr2());
	} else {
		uint64_t cause = t == T_UD ? CAUSE_ILLEGAL : t == T_BP ? CAUSE_BREAK : CAUSE_X86(t);
		proc_fault(p, cause, tf->rip, 0);
	}

	if (p->killed) proc_exit(p->kill_status);
	if (mycpu()->need_resched) yield();
	return_to_user(p);
}

void kernel_trap(struct trapframe *f);
void kernel_trap(struct trapframe *f)
{
	if (f->trapno < 32)
		panic("exception in kernel: %s (vector %lu, error %lx) at rip %p, cr2 %p, rsp %p",
		      exc_names[f->trapno] ? exc_names[f->trapno] : "reserved vector",
		      (unsigned long)f->trapno, (unsigned long)f->err,
		      (void *)f->rip, (void *)read_cr2(), (void *)f->rsp);
	int token = prof_irq_enter(f->trapno);
	interrupt(f->trapno);
	prof_irq_exit(token);
}

void return_to_user(struct proc *p)
{
	user_return(&p->tf);
}

void intr_wait(void)
{
	int token = prof_wait_begin();
	wait_for_interrupt();
	prof_wait_end(token);
}

void irq_enable(uint32_t irq, void (*fn)(void *arg), void *arg)
{
	int v = vector_alloc(fn, arg);
	if (v < 0)
		panic("irq_enable: out of interrupt vectors");
	ioapic_route(irq, (uint8_t)v);
}
