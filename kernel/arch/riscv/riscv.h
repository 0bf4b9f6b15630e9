/*
 * riscv.h - RISC-V privileged-architecture definitions used by the kernel:
 * CSR access, status and cause bits, and the Sv39 page-table format.
 */
#ifndef RISCV_H
#define RISCV_H

#include <stdint.h>

#define csr_read(csr) ({ uint64_t __v; __asm__ volatile("csrr %0, " #csr : "=r"(__v)); __v; })
#define csr_write(csr, val) __asm__ volatile("csrw " #csr ", %0" :: "rK"((uint64_t)(val)))
#define csr_set(csr, bits) __asm__ volatile("csrs " #csr ", %0" :: "rK"((uint64_t)(bits)))
#define csr_clear(csr, bits) __asm__ volatile("csrc " #csr ", %0" :: "rK"((uint64_t)(bits)))

/* sstatus */
#define SSTATUS_SIE   (1ull << 1)    /* interrupts enabled in S-mode          */
#define SSTATUS_SPIE  (1ull << 5)    /* SIE before the trap                   */
#define SSTATUS_SPP   (1ull << 8)    /* trap came from S-mode                 */
#define SSTATUS_FS    (3ull << 13)   /* floating-point state                  */
#define SSTATUS_FS_OFF     (0ull << 13)
#define SSTATUS_FS_INITIAL (1ull << 13)
#define SSTATUS_FS_CLEAN   (2ull << 13)
#define SSTATUS_FS_DIRTY   (3ull << 13)
#define SSTATUS_SUM   (1ull << 18)

/* sie / sip */
#define SIE_SSIE  (1ull << 1)
#define SIE_STIE  (1ull << 5)
#define SIE_SEIE  (1ull << 9)

/* scause */
#define SCAUSE_INTR       (1ull << 63)
#define IRQ_S_SOFT        1
#define IRQ_S_TIMER       5
#define IRQ_S_EXT         9
#define EXC_INST_MISALIGNED   0
#define EXC_INST_ACCESS       1
#define EXC_ILLEGAL_INST      2
#define EXC_BREAKPOINT        3
#define EXC_LOAD_MISALIGNED   4
#define EXC_LOAD_ACCESS       5
#define EXC_STORE_MISALIGNED  6
#define EXC_STORE_ACCESS      7
#define EXC_ECALL_U           8
#define EXC_ECALL_S           9
#define EXC_INST_PAGE_FAULT   12
#define EXC_LOAD_PAGE_FAULT   13
#define EXC_STORE_PAGE_FAULT  15

/* scounteren: which counters U-mode may read */
#define SCOUNTEREN_CY (1u << 0)
#define SCOUNTEREN_TM (1u << 1)
#define SCOUNTEREN_IR (1u << 2)

static inline void intr_on(void)  { csr_set(sstatus, SSTATUS_SIE); }
static inline void intr_off(void) { csr_clear(sstatus, SSTATUS_SIE); }
static inline int  intr_get(void) { return (csr_read(sstatus) & SSTATUS_SIE) != 0; }
static inline uint64_t rdtime(void) { uint64_t t; __asm__ volatile("rdtime %0" : "=r"(t)); return t; }
static inline uint64_t rdcycle(void) { uint64_t t; __asm__ volatile("rdcycle %0" : "=r"(t)); return t; }
static inline void sfence_vma(void) { __asm__ volatile("sfence.vma zero, zero" ::: "memory"); }
static inline void wfi(void) { __asm__ volatile("wfi"); }

/* --- Sv39 ---------------------------------------------------------------- */
#define PGSIZE   4096ull
#define PGSHIFT  12
#define PGROUNDUP(a)   (((a) + PGSIZE - 1) & ~(PGSIZE - 1))
#define PGROUNDDOWN(a) ((a) & ~(PGSIZE - 1))

#define PTE_V (1ull << 0)
#define PTE_R (1ull << 1)
#define PTE_W (1ull << 2)
#define PTE_X (1ull << 3)
#define PTE_U (1ull << 4)
#define PTE_G (1ull << 5)
#define PTE_A (1ull << 6)
#define PTE_D (1ull << 7)
/* Software bit: the page is the kernel's, lent read-only to the process;
 * tearing the address space down must not free it. */
#define PTE_BORROWED (1ull << 8)

#define PA2PTE(pa)   ((((uint64_t)(pa)) >> 12) << 10)
#define PTE2PA(pte)  (((pte) >> 10) << 12)
#define PTE_FLAGS(pte) ((pte) & 0x3ff)
#define PX(level, va) ((((uint64_t)(va)) >> (12 + 9 * (level))) & 0x1ff)
#define SATP_SV39    (8ull << 60)
#define MAKE_SATP(root) (SATP_SV39 | (((uint64_t)(root)) >> 12))

typedef uint64_t pte_t;
typedef pte_t *pagetable_t;   /* 512 PTEs */

#endif
