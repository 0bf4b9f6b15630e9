/*
 * x86.h - x86-64 definitions the kernel uses: port and MSR access, control
 * registers, the interrupt flag, the time-stamp counter, the 4-level page
 * table format, segment selectors, and what kernel/arch.h asks every
 * architecture to provide (see docs/kernel.md, "Architectures").
 */
#ifndef X86_H
#define X86_H

/* Constants are usable from assembly (boot.S, trapentry.S) too. */
#ifdef __ASSEMBLER__
#define XBIT(n) (1 << (n))
#else
#define XBIT(n) (1ull << (n))
#include <stdint.h>
#include <stdbool.h>
#endif

#ifndef __ASSEMBLER__
/* ---- instructions ------------------------------------------------------- */

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint16_t inw(uint16_t port)
{
	uint16_t v;
	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint32_t inl(uint16_t port)
{
	uint32_t v;
	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;
	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return (uint64_t)hi << 32 | lo;
}
static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static inline uint64_t read_cr0(void) { uint64_t v; __asm__ volatile("mov %%cr0, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr2(void) { uint64_t v; __asm__ volatile("mov %%cr2, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr3(void) { uint64_t v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr4(void) { uint64_t v; __asm__ volatile("mov %%cr4, %0" : "=r"(v)); return v; }
static inline void write_cr0(uint64_t v) { __asm__ volatile("mov %0, %%cr0" :: "r"(v) : "memory"); }
static inline void write_cr3(uint64_t v) { __asm__ volatile("mov %0, %%cr3" :: "r"(v) : "memory"); }
static inline void write_cr4(uint64_t v) { __asm__ volatile("mov %0, %%cr4" :: "r"(v) : "memory"); }

static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
	__asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(sub));
}

static inline void cpu_relax(void) { __asm__ volatile("pause"); }

#endif

#define CR0_TS   XBIT(3)
#define CR0_WP   XBIT(16)
#define CR4_PGE  XBIT(7)
#define CR4_OSFXSR XBIT(9)
#define CR4_OSXMMEXCPT XBIT(10)

#define MSR_EFER        0xc0000080
#define MSR_STAR        0xc0000081
#define MSR_LSTAR       0xc0000082
#define MSR_FMASK       0xc0000084
#define MSR_FS_BASE     0xc0000100
#define MSR_GS_BASE     0xc0000101
#define MSR_APIC_BASE   0x1b
#define EFER_SCE        XBIT(0)    /* syscall/sysret */
#define EFER_LME        XBIT(8)
#define EFER_NXE        XBIT(11)

#define RFLAGS_IF  XBIT(9)
#define RFLAGS_TF  XBIT(8)
#define RFLAGS_DF  XBIT(10)
#define RFLAGS_AC  XBIT(18)
#define RFLAGS_RESERVED XBIT(1)    /* always set */
/* What a user program may set itself (popf): the arithmetic flags, TF, DF,
 * AC and ID - never IF or IOPL. */
#define RFLAGS_USER (XBIT(0) | XBIT(2) | XBIT(4) | XBIT(6) | XBIT(7) | RFLAGS_TF | \
                     RFLAGS_DF | XBIT(11) | RFLAGS_AC | XBIT(21))

#ifndef __ASSEMBLER__
/* ---- what kernel/arch.h promises --------------------------------------- */

static inline void intr_on(void)  { __asm__ volatile("sti" ::: "memory"); }
static inline void intr_off(void) { __asm__ volatile("cli" ::: "memory"); }
static inline int  intr_get(void)
{
	uint64_t f;
	__asm__ volatile("pushfq; popq %0" : "=r"(f));
	return (f & RFLAGS_IF) != 0;
}
/* Let interrupts in and wait for one, then shut them out again.  sti takes
 * effect only after the next instruction, so an interrupt that is already
 * pending is taken inside the hlt, never between sti and hlt. */
static inline void wait_for_interrupt(void) { __asm__ volatile("sti; hlt; cli" ::: "memory"); }
static inline void wfi(void) { __asm__ volatile("hlt" ::: "memory"); }

/* The timebase and the cycle counter are both the time-stamp counter: it
 * is invariant (a constant rate, calibrated at boot against the HPET), and
 * user mode may read it (CR4.TSD clear), as RISC-V's time and cycle CSRs. */
static inline uint64_t rdtime(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
static inline uint64_t rdcycle(void) { return rdtime(); }

#endif

/* ---- paging --------------------------------------------------------------- */

#define PGSIZE   XBIT(12)
#define PGSHIFT  12
#define PGROUNDUP(a)   (((a) + PGSIZE - 1) & ~(PGSIZE - 1))
#define PGROUNDDOWN(a) ((a) & ~(PGSIZE - 1))

/* Permissions as the portable kernel asks for them (uvm_map, kvm_map);
 * vm.c turns them into the hardware bits below.  A page is always readable
 * on x86 once present. */
#define PTE_R         XBIT(0)
#define PTE_W         XBIT(1)
#define PTE_X         XBIT(2)
#define PTE_U         XBIT(3)
/* The page is the kernel's, lent read-only to the process (kshare.c). */
#define PTE_BORROWED  XBIT(4)

/* Hardware page-table entry bits. */
#define X86_P    XBIT(0)
#define X86_RW   XBIT(1)
#define X86_US   XBIT(2)
#define X86_PWT  XBIT(3)
#define X86_PCD  XBIT(4)
#define X86_A    XBIT(5)
#define X86_D    XBIT(6)
#define X86_PS   XBIT(7)           /* a 2 MiB (or 1 GiB) page */
#define X86_G    XBIT(8)
#define X86_SOFT_BORROWED XBIT(9)  /* available to software: a lent page */
#define X86_NX   XBIT(63)
#define X86_ADDR (XBIT(52) - XBIT(12))

#ifndef __ASSEMBLER__
#define PX(level, va) ((((uint64_t)(va)) >> (12 + 9 * (level))) & 0x1ff)

typedef uint64_t pte_t;
typedef pte_t *pagetable_t;   /* 512 entries: the root is the PML4 */

static inline void tlb_flush_all(void) { write_cr3(read_cr3()); }
static inline void invlpg(uint64_t va) { __asm__ volatile("invlpg (%0)" :: "r"(va) : "memory"); }
#endif

/* ---- segments (gdt.c) ----------------------------------------------------- */

/* The GDT's layout is fixed by syscall/sysret: STAR names the kernel code
 * selector (data follows it) and the base from which sysret derives the user
 * data (base + 8) and user code (base + 16) selectors. */
#define SEG_KCODE  0x08
#define SEG_KDATA  0x10
#define SEG_UBASE  0x18   /* 32-bit user code (unused), the sysret base */
#define SEG_UDATA  (0x20 | 3)
#define SEG_UCODE  (0x28 | 3)
#define SEG_TSS    0x30

#endif /* X86_H */
