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
 * pages (kshare.c).  The child is in its parent's process group unless the
 * parent asks for a new group or names one to join (a pipeline's processes
 * share one), and holds only the handles the parent passes (handle.c).
 */
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/elf.h"
#include "kernel/initrd.h"
#include "kernel/kshare.h"
#include "kernel/prof.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/proc.h"

#define MAX_ARGS  64

static uint64_t seg_perm(uint32_t flags)
{
	uint64_t perm = 0;
	if (flags & PF_R) perm |= PTE_R;
	if (flags & PF_W) perm |= PTE_W | PTE_R;
	if (flags & PF_X) perm |= PTE_X;
	return perm;
}

/* Map and fill the segments elf_parse() approved. */
static int load_elf(pagetable_t pt, const uint8_t *img, size_t size, uint64_t *entry, uint64_t *brk)
{
	struct elf_info info;
	int err = elf_parse(img, size, USER_BASE, UHEAP_LIMIT, &info);
	if (err < 0) return err;
	for (int i = 0; i < info.nsegs; i++) {
		struct elf_seg *sg = &info.segs[i];
		uint64_t start = PGROUNDDOWN(sg->vaddr), end = PGROUNDUP(sg->vaddr + sg->memsz);
		for (uint64_t va = start; va < end; va += PGSIZE) {
			uint8_t *page = kalloc();
			if (page == NULL) return K_E_NOMEM;
			if ((err = uvm_map(pt, va, (uint64_t)page, seg_perm(sg->flags))) < 0) {
				kfree(page);
				return err;
			}
			/* Copy the part of [vaddr, vaddr+filesz) that falls in this page. */
			uint64_t lo = MAX(va, sg->vaddr), hi = MIN(va + PGSIZE, sg->vaddr + sg->filesz);
			if (lo < hi) memcpy(page + (lo - va), img + sg->offset + (lo - sg->vaddr), hi - lo);
		}
	}
	*entry = info.entry;
	*brk = info.end;
	return 0;
}

/* Put argv and envp on the new stack; *spp is where the stack then starts
 * (argv's array is there, envp's right after it). */
static int push_args(struct proc *p, int argc, char **argv, int envc, char **envp, uint64_t *spp)
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
	*spp = sp;
	return 0;
}

/* The group the child joins: its parent's, its own, or one it may join
 * (some member is the parent itself or the parent's child). */
static int choose_group(struct proc *parent, int want, int *pgid)
{
	if (want == SPAWN_PGID_INHERIT) {
		*pgid = parent ? parent->pgid : 0;     /* 0: replaced by the child's pid */
		return 0;
	}
	if (want == SPAWN_PGID_NEW) {
		*pgid = 0;
		return 0;
	}
	if (want < 0) return K_E_INVAL;
	for (int i = 0; i < NPROC; i++) {
		struct proc *q = &procs[i];
		if (q->state == P_UNUSED || q->state == P_EMBRYO || q->pgid != want) continue;
		if (q == parent || (parent && q->parent == parent)) {
			*pgid = want;
			return 0;
		}
	}
	return K_E_PERM;
}

int proc_spawn(struct proc *parent, const char *path, int argc, char **argv, int envc, char **envp,
	       const struct spawn_opts *opts)
{
	const uint8_t *img;
	size_t size;
	int err = initrd_find(path, &img, &size);
	if (err < 0) return err;
	if (argc > MAX_ARGS || envc > MAX_ARGS) return K_E_2BIG;
	int pgid = 0;
	if ((err = choose_group(parent, opts ? opts->pgid : SPAWN_PGID_INHERIT, &pgid)) < 0) return err;

	struct proc *p = proc_alloc();
	if (p == NULL) return K_E_NOPROC;

	uint64_t entry, brk, sp;
	if ((opts && parent && (err = handle_pass(parent, p, opts)) < 0) ||
	    (err = load_elf(p->pagetable, img, size, &entry, &brk)) < 0 ||
	    (err = uvm_alloc(p->pagetable, USTACK_TOP - USTACK_SIZE, USTACK_SIZE, PTE_R | PTE_W)) < 0 ||
	    (err = push_args(p, argc, argv, envc, envp, &sp)) < 0 ||
	    (err = kshare_map_all(p->pagetable)) < 0) {
		proc_discard(p);
		return err;
	}
	p->heap_start = p->brk = brk;
	/* main(argc, argv, envp) */
	tf_set_entry(&p->tf, entry, sp, (uint64_t)argc, sp, sp + (uint64_t)(argc + 1) * sizeof(uint64_t));
	const char *base = path;
	for (const char *s = path; *s; s++) if (*s == '/') base = s + 1;
	strncpy_safe(p->name, base, PROC_NAME);
	p->parent = parent;
	p->pgid = pgid ? pgid : p->pid;
	prof_spawn(parent, p, path);
	p->state = P_RUNNABLE;
	proc_publish(p);
	return p->pid;
}
