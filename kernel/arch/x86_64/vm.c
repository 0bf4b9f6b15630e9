/*
 * vm.c - x86-64 address spaces: 4-level page tables, arranged like the
 * RISC-V port's Sv39 ones (kernel/arch/riscv/vm.c) so the rest of the
 * kernel cannot tell the difference.
 *
 * Sv39's root has a 1 GiB entry per slot; here the third level, the PDPT,
 * does.  The kernel's PDPT (under PML4 entry 0) holds the low 4 GiB in its
 * entries 0-3: four page directories created at boot and never replaced,
 * with devices, kernel stacks and all of RAM identity-mapped (the kernel
 * image in 4 KiB pages so text can be read-only and the rest not
 * executable, the rest of RAM in 2 MiB pages).  Every process has its own
 * PML4 and its own PDPT for entry 0, whose entries 0-3 are copies of the
 * kernel's, so later kernel mappings (a new kernel stack) appear everywhere
 * at once and no trap switches page tables; its user mappings live under
 * PDPT entries 4-255 ([4 GiB, 256 GiB)).  PML4 entry 1 is the kernel's
 * window for device memory above 4 GiB, shared the same way.
 *
 * Permissions are ANDed down the levels: the PML4 and user PDPT entries
 * allow user access, the kernel's four page-directory entries do not, so
 * nothing of the kernel is reachable from user mode.  Leaves get NX unless
 * executable (EFER.NXE is on from boot.S).
 */
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/arch/x86_64/memlayout.h"
#include "kernel/arch/x86_64/cpu.h"
#include "kernel/uapi/errno.h"

#define KERNEL_PDPT_ENTRIES 4          /* PDPT entries 0..3: the low 4 GiB */
#define MEGAPAGE (2ull * 1024 * 1024)
#define TABLE (X86_P | X86_RW | X86_US)   /* a table entry: the leaves decide */

extern char _text_start[], _text_end[], _kernel_end[];

static pagetable_t kernel_root, kernel_pdpt, high_pdpt;
static uint64_t mmio_high_next = MMIO_HIGH_BASE;

/* Hardware bits for the portable permissions. */
static pte_t leaf_bits(uint64_t perm)
{
	pte_t e = X86_P | X86_A;
	if (perm & PTE_W) e |= X86_RW | X86_D;
	if (perm & PTE_U) e |= X86_US;
	if (!(perm & PTE_X)) e |= X86_NX;
	if (perm & PTE_BORROWED) e |= X86_SOFT_BORROWED;
	return e;
}

static pagetable_t next_table(pte_t *e, bool alloc, pte_t bits)
{
	if (*e & X86_P) {
		if (*e & X86_PS) return NULL;               /* a large page: no table below */
		return (pagetable_t)(*e & X86_ADDR);
	}
	if (!alloc) return NULL;
	pagetable_t t = kalloc();
	if (t == NULL) return NULL;
	*e = (pte_t)t | bits;
	return t;
}

/* Find the 4 KiB leaf for va, creating tables if alloc. */
static pte_t *walk(pagetable_t pml4, uint64_t va, bool alloc)
{
	pagetable_t t = pml4;
	for (int level = 3; level > 0; level--) {
		t = next_table(&t[PX(level, va)], alloc, TABLE);
		if (t == NULL) return NULL;
	}
	return &t[PX(0, va)];
}

static int map_pages(pagetable_t pml4, uint64_t va, uint64_t pa, uint64_t size, pte_t bits, bool remap_ok)
{
	for (uint64_t off = 0; off < size; off += PGSIZE) {
		pte_t *pte = walk(pml4, va + off, true);
		if (pte == NULL) return K_E_NOMEM;
		if (*pte & X86_P) {
			if (remap_ok && (*pte & X86_ADDR) == pa + off) continue;
			panic("vm: %p already mapped", (void *)(va + off));
		}
		*pte = (pa + off) | bits;
	}
	return 0;
}

int kvm_map(uint64_t va, uint64_t pa, uint64_t size, uint64_t perm)
{
	int e = map_pages(kernel_root, va, pa, size, leaf_bits(perm & ~PTE_U), false);
	tlb_flush_all();
	return e;
}

void kvm_unmap(uint64_t va, uint64_t size)
{
	for (uint64_t off = 0; off < size; off += PGSIZE) {
		pte_t *pte = walk(kernel_root, va + off, false);
		if (pte) *pte = 0;
	}
	tlb_flush_all();
}

uint64_t mmio_map(uint64_t pa, uint64_t size)
{
	uint64_t start = PGROUNDDOWN(pa), end = PGROUNDUP(pa + size);
	pte_t bits = X86_P | X86_RW | X86_A | X86_D | X86_PCD | X86_PWT | X86_NX;
	uint64_t va;
	if (end <= (4ull << 30)) {
		va = start;                                  /* identity, like the rest of the low 4 GiB */
	} else {
		if (end - start > MMIO_HIGH_BASE + MMIO_HIGH_SIZE - mmio_high_next)
			panic("mmio_map: the high device window is full");
		va = mmio_high_next;
		mmio_high_next += end - start;
	}
	if (map_pages(kernel_root, va, start, end - start, bits, true) < 0)
		panic("mmio_map: out of memory");
	tlb_flush_all();
	return va + (pa - start);
}

static void map_megapage(uint64_t va, uint64_t pa, pte_t bits)
{
	pagetable_t pd = (pagetable_t)(kernel_pdpt[PX(2, va)] & X86_ADDR);
	pd[PX(1, va)] = pa | bits | X86_PS;
}

void kvm_init(uint64_t ram_base, uint64_t ram_size)
{
	kernel_root = kalloc();
	kernel_pdpt = kalloc();
	high_pdpt = kalloc();
	if (kernel_root == NULL || kernel_pdpt == NULL || high_pdpt == NULL) panic("kvm_init: out of memory");
	kernel_root[0] = (pte_t)kernel_pdpt | TABLE;
	kernel_root[1] = (pte_t)high_pdpt | X86_P | X86_RW;
	for (int i = 0; i < KERNEL_PDPT_ENTRIES; i++) {
		pagetable_t pd = kalloc();
		if (pd == NULL) panic("kvm_init: out of memory");
		kernel_pdpt[i] = (pte_t)pd | X86_P | X86_RW;      /* no X86_US: kernel only */
	}

	/* The kernel image: text read+execute, everything after it read+write. */
	uint64_t text = (uint64_t)_text_start, etext = PGROUNDUP((uint64_t)_text_end);
	uint64_t image_end = (uint64_t)_kernel_end;
	uint64_t first_mega = (image_end + MEGAPAGE - 1) & ~(MEGAPAGE - 1);
	kvm_map(text, text, etext - text, PTE_R | PTE_X);
	kvm_map(etext, etext, first_mega - etext, PTE_R | PTE_W);
	/* Below the kernel is the BIOS's and the boot loader's: not mapped, so
	 * page 0 stays unmapped and a NULL pointer faults. */

	/* The rest of RAM, 2 MiB at a time. */
	uint64_t ram_end = ram_base + ram_size;
	pte_t rw = X86_P | X86_RW | X86_A | X86_D | X86_NX;
	for (uint64_t a = first_mega; a + MEGAPAGE <= ram_end; a += MEGAPAGE)
		map_megapage(a, a, rw);
	uint64_t tail = first_mega > ram_end ? ram_end : first_mega + ((ram_end - first_mega) & ~(MEGAPAGE - 1));
	if (tail < ram_end) kvm_map(tail, tail, ram_end - tail, PTE_R | PTE_W);
}

void kvm_enable(void)
{
	write_cr3((uint64_t)kernel_root);
}

void vm_use(pagetable_t pt)
{
	write_cr3((uint64_t)(pt ? pt : kernel_root));
}

pagetable_t uvm_create(void)
{
	pagetable_t pml4 = kalloc(), pdpt = kalloc();
	if (pml4 == NULL || pdpt == NULL) {
		if (pml4) kfree(pml4);
		if (pdpt) kfree(pdpt);
		return NULL;
	}
	for (int i = 0; i < KERNEL_PDPT_ENTRIES; i++) pdpt[i] = kernel_pdpt[i];
	pml4[0] = (pte_t)pdpt | TABLE;
	for (int i = 1; i < 512; i++) pml4[i] = kernel_root[i];
	return pml4;
}

int uvm_map(pagetable_t pt, uint64_t va, uint64_t pa, uint64_t perm)
{
	if (!uva_range_ok(va, PGSIZE)) return K_E_INVAL;
	pte_t *pte = walk(pt, va, true);
	if (pte == NULL) return K_E_NOMEM;
	if (*pte & X86_P) return K_E_INVAL;          /* overlapping segments in an ELF, say */
	*pte = pa | leaf_bits(perm | PTE_U);
	return 0;
}

void uvm_dealloc(pagetable_t pt, uint64_t va, uint64_t len)
{
	for (uint64_t off = 0; off < len; off += PGSIZE) {
		pte_t *pte = walk(pt, va + off, false);
		if (pte == NULL || !(*pte & X86_P)) continue;
		if (!(*pte & X86_SOFT_BORROWED)) kfree((void *)(*pte & X86_ADDR));
		*pte = 0;
	}
	tlb_flush_all();
}

int uvm_lend(pagetable_t pt, uint64_t va, uint64_t pa)
{
	return uvm_map(pt, va, pa, PTE_R | PTE_BORROWED);
}

void uvm_unlend(pagetable_t pt, uint64_t va)
{
	pte_t *pte = walk(pt, va, false);
	if (pte && (*pte & X86_P) && (*pte & X86_SOFT_BORROWED)) *pte = 0;
	tlb_flush_all();
}

/* Free a user table at `level` (2: a PDPT's child PD... 0: a page table)
 * and what it maps. */
static void free_table(pagetable_t t, int level)
{
	for (int i = 0; i < 512; i++) {
		pte_t e = t[i];
		if (!(e & X86_P)) continue;
		if (level > 0)
			free_table((pagetable_t)(e & X86_ADDR), level - 1);
		else if (!(e & X86_SOFT_BORROWED))
			kfree((void *)(e & X86_ADDR));
	}
	kfree(t);
}

void uvm_destroy(pagetable_t pml4)
{
	pagetable_t pdpt = (pagetable_t)(pml4[0] & X86_ADDR);
	/* PDPT entries below KERNEL_PDPT_ENTRIES, and PML4 entries above 0,
	 * are the kernel's, shared. */
	for (int i = KERNEL_PDPT_ENTRIES; i < 512; i++)
		if (pdpt[i] & X86_P) free_table((pagetable_t)(pdpt[i] & X86_ADDR), 1);
	kfree(pdpt);
	kfree(pml4);
}

uint64_t uvm_translate(pagetable_t pt, uint64_t va, bool write)
{
	if (!uva_range_ok(va, 1)) return 0;
	pte_t *pte = walk(pt, va, false);
	if (pte == NULL) return 0;
	pte_t need = X86_P | X86_US | (write ? X86_RW : 0);
	if ((*pte & need) != need) return 0;
	return (*pte & X86_ADDR) | (va & (PGSIZE - 1));
}

uint64_t uvm_translate_owned(pagetable_t pt, uint64_t va, bool write)
{
	if (!uva_range_ok(va, 1)) return 0;
	pte_t *pte = walk(pt, va, false);
	if (pte == NULL || (*pte & X86_SOFT_BORROWED)) return 0;
	return uvm_translate(pt, va, write);
}
