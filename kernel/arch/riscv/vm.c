/*
 * vm.c - Sv39 address spaces.
 *
 * The kernel builds one root table at boot with everything it needs below
 * 4 GiB: device windows, kernel stacks, and all of RAM identity-mapped (the
 * kernel image with 4 KiB pages so text can be read-only, the rest with 2 MiB
 * pages).  The four level-1 tables under root entries 0-3 are created up front
 * and never replaced, so every process root simply copies those four entries:
 * later kernel mappings (a new kernel stack, say) appear in all address spaces
 * at once, and no trap ever switches satp.  User mappings live under root
 * entries 4-255 and always carry PTE_U; kernel mappings never do.
 *
 * The kernel never touches user memory through user pointers: copyin/copyout
 * (kernel/uvm.c) translate each page through uvm_translate here, which insists
 * on PTE_U plus the needed R or W bit, so a bad pointer is an error code,
 * never a kernel fault.
 */
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/arch/riscv/memlayout.h"
#include "kernel/uapi/errno.h"

#define KERNEL_ROOT_ENTRIES 4        /* root entries 0..3 cover the low 4 GiB */
#define MEGAPAGE (2ull * 1024 * 1024)

extern char _text_start[], _text_end[], _kernel_end[];

static pagetable_t kernel_root;

/* Find the leaf PTE for va at level 0, creating tables if alloc. */
static pte_t *walk(pagetable_t pt, uint64_t va, bool alloc)
{
	for (int level = 2; level > 0; level--) {
		pte_t *pte = &pt[PX(level, va)];
		if (*pte & PTE_V) {
			if (*pte & (PTE_R | PTE_W | PTE_X)) return NULL;   /* a superpage: no level-0 PTE */
			pt = (pagetable_t)PTE2PA(*pte);
		} else {
			if (!alloc) return NULL;
			pagetable_t next = kalloc();
			if (next == NULL) return NULL;
			*pte = PA2PTE(next) | PTE_V;
			pt = next;
		}
	}
	return &pt[PX(0, va)];
}

static void map_megapage(uint64_t va, uint64_t pa, uint64_t perm)
{
	pte_t *l1 = &kernel_root[PX(2, va)];
	pagetable_t t1 = (pagetable_t)PTE2PA(*l1);
	t1[PX(1, va)] = PA2PTE(pa) | perm | PTE_V | PTE_A | PTE_D | PTE_G;
}

int kvm_map(uint64_t va, uint64_t pa, uint64_t size, uint64_t perm)
{
	for (uint64_t off = 0; off < size; off += PGSIZE) {
		pte_t *pte = walk(kernel_root, va + off, true);
		if (pte == NULL) return K_E_NOMEM;
		if (*pte & PTE_V) panic("kvm_map: %p already mapped", (void *)(va + off));
		*pte = PA2PTE(pa + off) | perm | PTE_V | PTE_A | PTE_D | PTE_G;
	}
	sfence_vma();
	return 0;
}

void kvm_unmap(uint64_t va, uint64_t size)
{
	for (uint64_t off = 0; off < size; off += PGSIZE) {
		pte_t *pte = walk(kernel_root, va + off, false);
		if (pte) *pte = 0;
	}
	sfence_vma();
}

void kvm_init(uint64_t ram_base, uint64_t ram_size)
{
	kernel_root = kalloc();
	if (kernel_root == NULL) panic("kvm_init: out of memory");
	for (int i = 0; i < KERNEL_ROOT_ENTRIES; i++) {
		pagetable_t t1 = kalloc();
		if (t1 == NULL) panic("kvm_init: out of memory");
		kernel_root[i] = PA2PTE(t1) | PTE_V;
	}

	/* Devices. */
	kvm_map(SIFIVE_TEST_BASE, SIFIVE_TEST_BASE, PGSIZE, PTE_R | PTE_W);
	kvm_map(PLIC_BASE, PLIC_BASE, PLIC_SIZE, PTE_R | PTE_W);
	kvm_map(UART0_BASE, UART0_BASE, PGSIZE, PTE_R | PTE_W);
	kvm_map(VIRTIO_MMIO_BASE, VIRTIO_MMIO_BASE, VIRTIO_MMIO_COUNT * VIRTIO_MMIO_STRIDE, PTE_R | PTE_W);

	/* The kernel image: text read+execute, everything after it read+write. */
	uint64_t text = (uint64_t)_text_start, etext = PGROUNDUP((uint64_t)_text_end);
	uint64_t image_end = (uint64_t)_kernel_end;
	uint64_t first_mega = (image_end + MEGAPAGE - 1) & ~(MEGAPAGE - 1);
	kvm_map(text, text, etext - text, PTE_R | PTE_X);
	kvm_map(etext, etext, first_mega - etext, PTE_R | PTE_W);
	/* OpenSBI's region below the kernel stays unmapped: the kernel has no business there. */

	/* The rest of RAM, 2 MiB at a time. */
	uint64_t ram_end = ram_base + ram_size;
	for (uint64_t a = first_mega; a + MEGAPAGE <= ram_end; a += MEGAPAGE)
		map_megapage(a, a, PTE_R | PTE_W);
	uint64_t tail = first_mega > ram_end ? ram_end : first_mega + ((ram_end - first_mega) & ~(MEGAPAGE - 1));
	if (tail < ram_end) kvm_map(tail, tail, ram_end - tail, PTE_R | PTE_W);
}

void kvm_enable(void)
{
	sfence_vma();
	csr_write(satp, MAKE_SATP(kernel_root));
	sfence_vma();
}

/* Run on pt's address space (NULL: the kernel's own table). */
void vm_use(pagetable_t pt)
{
	csr_write(satp, MAKE_SATP(pt ? pt : kernel_root));
	sfence_vma();
}

pagetable_t uvm_create(void)
{
	pagetable_t pt = kalloc();
	if (pt == NULL) return NULL;
	for (int i = 0; i < KERNEL_ROOT_ENTRIES; i++) pt[i] = kernel_root[i];
	return pt;
}

int uvm_map(pagetable_t pt, uint64_t va, uint64_t pa, uint64_t perm)
{
	if (!uva_range_ok(va, PGSIZE)) return K_E_INVAL;
	pte_t *pte = walk(pt, va, true);
	if (pte == NULL) return K_E_NOMEM;
	if (*pte & PTE_V) return K_E_INVAL;   /* overlapping segments in an ELF, say */
	*pte = PA2PTE(pa) | perm | PTE_U | PTE_V | PTE_A | PTE_D;
	return 0;
}

void uvm_dealloc(pagetable_t pt, uint64_t va, uint64_t len)
{
	for (uint64_t off = 0; off < len; off += PGSIZE) {
		pte_t *pte = walk(pt, va + off, false);
		if (pte == NULL || !(*pte & PTE_V)) continue;
		if (!(*pte & PTE_BORROWED)) kfree((void *)PTE2PA(*pte));
		*pte = 0;
	}
	sfence_vma();
}

int uvm_lend(pagetable_t pt, uint64_t va, uint64_t pa)
{
	return uvm_map(pt, va, pa, PTE_R | PTE_BORROWED);
}

void uvm_unlend(pagetable_t pt, uint64_t va)
{
	pte_t *pte = walk(pt, va, false);
	if (pte && (*pte & PTE_V) && (*pte & PTE_BORROWED)) *pte = 0;
	sfence_vma();
}

static void free_table(pagetable_t t, int level)
{
	for (int i = 0; i < 512; i++) {
		pte_t e = t[i];
		if (!(e & PTE_V)) continue;
		if (level > 0 && !(e & (PTE_R | PTE_W | PTE_X)))
			free_table((pagetable_t)PTE2PA(e), level - 1);
		else if (level == 0 && !(e & PTE_BORROWED))
			kfree((void *)PTE2PA(e));
	}
	kfree(t);
}

void uvm_destroy(pagetable_t pt)
{
	/* Entries below KERNEL_ROOT_ENTRIES are the shared kernel tables. */
	for (int i = KERNEL_ROOT_ENTRIES; i < 512; i++)
		if (pt[i] & PTE_V) free_table((pagetable_t)PTE2PA(pt[i]), 1);
	kfree(pt);
}

uint64_t uvm_translate_owned(pagetable_t pt, uint64_t va, bool write)
{
	if (!uva_range_ok(va, 1)) return 0;
	pte_t *pte = walk(pt, va, false);
	if (pte == NULL || (*pte & PTE_BORROWED)) return 0;
	return uvm_translate(pt, va, write);
}

uint64_t uvm_translate(pagetable_t pt, uint64_t va, bool write)
{
	if (!uva_range_ok(va, 1)) return 0;
	pte_t *pte = walk(pt, va, false);
	if (pte == NULL) return 0;
	uint64_t need = PTE_V | PTE_U | (write ? PTE_W : PTE_R);
	if ((*pte & need) != need) return 0;
	return PTE2PA(*pte) | (va & (PGSIZE - 1));
}
