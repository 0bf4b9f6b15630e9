/*
 * spawn.c - create a process running a program from the initrd.
 *
 * There is no fork: a library OS that wants fork-like behaviour can build it,
 * and a shell needs only "run this program with these arguments".  The ELF
 * image is untrusted input (anyone could build an initrd), so every header
 * field is checked before use: a bad image yields K_E_NOEXEC, never a panic.
 *
 * The new address space holds the program's segments at their link
 * addresses (USER_BASE and up), the heap right after them, the stack below
 * USTACK_TOP with argv and envp on it, and the kernel's exported read-only
 * pages (kshare.c).
 */
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/elf.h"
#include "kernel/initrd.h"
#include "kernel/kshare.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"

#define MAX_PHDRS 16
#define MAX_ARGS  64

static uint64_t seg_perm(uint32_t flags)
{
	uint64_t perm = 0;
	if (flags & PF_R) perm |= PTE_R;
	if (flags & PF_W) perm |= PTE_W | PTE_R;
	if (flags & PF_X) perm |= PTE_X;
	return perm;
}

/* Load the PT_LOAD segments; sets *brk to the end of the highest one. */
static int load_elf(pagetable_t pt, const uint8_t *img, size_t size, uint64_t *entry, uint64_t *brk)
{
	struct elf64_ehdr eh;
	if (size < sizeof eh) return K_E_NOEXEC;
	memcpy(&eh, img, sizeof eh);
	if (eh.magic != ELF_MAGIC || eh.class != ELFCLASS64 || eh.data != ELFDATA2LSB ||
	    eh.type != ET_EXEC || eh.machine != EM_RISCV ||
	    eh.phentsize != sizeof(struct elf64_phdr) || eh.phnum == 0 || eh.phnum > MAX_PHDRS ||
	    eh.phoff > size || (uint64_t)eh.phnum * sizeof(struct elf64_phdr) > size - eh.phoff)
		return K_E_NOEXEC;

	uint64_t top = 0;
	for (int i = 0; i < eh.phnum; i++) {
		struct elf64_phdr ph;
		memcpy(&ph, img + eh.phoff + i * sizeof ph, sizeof ph);
		if (ph.type != PT_LOAD || ph.memsz == 0) continue;
		if (ph.filesz > ph.memsz || ph.offset > size || ph.filesz > size - ph.offset ||
		    ph.vaddr < USER_BASE || ph.vaddr >= UHEAP_LIMIT || ph.memsz > UHEAP_LIMIT - ph.vaddr ||
		    (ph.vaddr & (PGSIZE - 1)) != (ph.offset & (PGSIZE - 1)))
			return K_E_NOEXEC;
		uint64_t start = PGROUNDDOWN(ph.vaddr), end = PGROUNDUP(ph.vaddr + ph.memsz);
		uint64_t perm = seg_perm(ph.flags);
		if (perm == 0) return K_E_NOEXEC;
		for (uint64_t va = start; va < end; va += PGSIZE) {
			uint8_t *page = kalloc();
			if (page == NULL) return K_E_NOMEM;
			int err = uvm_map(pt, va, (uint64_t)page, perm);
			if (err < 0) { kfree(page); return err == K_E_INVAL ? K_E_NOEXEC : err; }
			/* Copy the part of [vaddr, vaddr+filesz) that falls in this page. */
			uint64_t lo = MAX(va, ph.vaddr), hi = MIN(va + PGSIZE, ph.vaddr + ph.filesz);
			if (lo < hi) memcpy(page + (lo - va), img + ph.offset + (lo - ph.vaddr), hi - lo);
		}
		top = MAX(top, end);
	}
	if (top == 0 || eh.entry < USER_BASE || eh.entry >= top) return K_E_NOEXEC;
	*entry = eh.entry;
	*brk = top;
	return 0;
}

/* Put argv and envp on the new stack; sets the registers main() expects. */
static int push_args(struct proc *p, int argc, char **argv, int envc, char **envp)
{
	uint64_t sp = USTACK_TOP;
	uint64_t ptrs[MAX_ARGS + 1 + MAX_ARGS + 1];
	int n = 0;
	char **lists[2] = { argv, envp };
	int counts[2] = { argc, envc };
	for (int l = 0; l < 2; l++) {
		for (int i = 0; i < counts[l]; i++) {
			size_t len = strlen(lists[l][i]) + 1;
			sp -= len;
			if (copyout(p->pagetable, sp, lists[l][i], len) < 0) return K_E_2BIG;
			ptrs[n++] = sp;
		}
		ptrs[n++] = 0;
	}
	/* Pointer arrays: argv[0..argc], then envp[0..envc]; keep sp 16-aligned. */
	sp -= (uint64_t)n * sizeof(uint64_t);
	sp &= ~15ull;
	if (sp < USTACK_TOP - USTACK_SIZE + 1024) return K_E_2BIG;
	/* ptrs holds argv strings then NULL then env strings then NULL, in push order. */
	if (copyout(p->pagetable, sp, ptrs, (uint64_t)n * sizeof(uint64_t)) < 0) return K_E_2BIG;
	p->tf.sp = sp;
	p->tf.a0 = (uint64_t)argc;
	p->tf.a1 = sp;
	p->tf.a2 = sp + (uint64_t)(argc + 1) * sizeof(uint64_t);
	return 0;
}

int proc_spawn(struct proc *parent, const char *path, int argc, char **argv, int envc, char **envp)
{
	const uint8_t *img;
	size_t size;
	int err = initrd_find(path, &img, &size);
	if (err < 0) return err;
	if (argc > MAX_ARGS || envc > MAX_ARGS) return K_E_2BIG;

	struct proc *p = proc_alloc();
	if (p == NULL) return K_E_NOPROC;

	uint64_t entry, brk;
	if ((err = load_elf(p->pagetable, img, size, &entry, &brk)) < 0 ||
	    (err = uvm_alloc(p->pagetable, USTACK_TOP - USTACK_SIZE, USTACK_SIZE, PTE_R | PTE_W)) < 0 ||
	    (err = push_args(p, argc, argv, envc, envp)) < 0 ||
	    (err = kshare_map_all(p->pagetable)) < 0) {
		proc_discard(p);
		return err;
	}
	p->heap_start = p->brk = brk;
	p->tf.sepc = entry;
	const char *base = path;
	for (const char *s = path; *s; s++) if (*s == '/') base = s + 1;
	strncpy_safe(p->name, base, PROC_NAME);
	p->parent = parent;
	p->state = P_RUNNABLE;
	return p->pid;
}
