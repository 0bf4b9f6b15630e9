/*
 * kshare.c - the kernel's exported read-only pages, and the kernel
 * information page among them.
 *
 * Subsystems register page ranges at boot; every new address space gets
 * them mapped with PTE_R | PTE_U and the "borrowed" software bit, so tearing
 * the address space down leaves the kernel's pages alone.  Windows too big
 * to map up front (the free map of a 16 TiB disk is 4 GiB) are "lazy":
 * a page is mapped when a process first reads it and faults.
 */
#include "kernel/kshare.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/proc.h"
#include "kernel/trap.h"
#include "kernel/bootinfo.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/errno.h"

/* One entry per exported page: free maps of large disks run to hundreds. */
#define MAX_SHARED_PAGES 8192

static struct { uint64_t va; uint64_t pa; } shares[MAX_SHARED_PAGES];
static int nshares;

struct kinfo *kinfo;

static int map_range(pagetable_t pt, int from, int to)
{
	for (int i = from; i < to; i++) {
		int err = uvm_lend(pt, shares[i].va, shares[i].pa);
		if (err < 0) return err;
	}
	return 0;
}

int kshare_register(uint64_t va, void *pa, uint64_t npages)
{
	if (npages > (uint64_t)(MAX_SHARED_PAGES - nshares)) return K_E_NOMEM;
	int first = nshares;
	for (uint64_t k = 0; k < npages; k++) {
		shares[nshares].va = va + k * PGSIZE;
		shares[nshares].pa = (uint64_t)pa + k * PGSIZE;
		nshares++;
	}
	for (int i = 0; i < NPROC; i++)
		if (procs[i].state != P_UNUSED && procs[i].state != P_ZOMBIE && procs[i].pagetable)
			map_range(procs[i].pagetable, first, nshares);
	return 0;
}

int kshare_map_all(pagetable_t pt)
{
	return map_range(pt, 0, nshares);
}

/* ---- lazily mapped windows ---------------------------------------------------- */

#define MAX_LAZY 16

static struct {
	uint64_t va, npages;
	void *(*resolve)(void *arg, uint64_t i);
	void *arg;
} lazy[MAX_LAZY];
static int nlazy;

int kshare_lazy(uint64_t va, uint64_t npages, void *(*resolve)(void *arg, uint64_t i), void *arg)
{
	for (int i = 0; i < nlazy; i++)
		if (lazy[i].va == va) {
			lazy[i].npages = npages;
			lazy[i].resolve = resolve;
			lazy[i].arg = arg;
			return 0;
		}
	if (nlazy == MAX_LAZY) return K_E_NOMEM;
	lazy[nlazy].va = va;
	lazy[nlazy].npages = npages;
	lazy[nlazy].resolve = resolve;
	lazy[nlazy].arg = arg;
	nlazy++;
	return 0;
}

bool kshare_fault(struct proc *p, uint64_t scause, uint64_t va)
{
	if (scause != CAUSE_LPF || p->pagetable == NULL) return false;
	uint64_t page = PGROUNDDOWN(va);
	for (int i = 0; i < nlazy; i++) {
		if (page < lazy[i].va || (page - lazy[i].va) / PGSIZE >= lazy[i].npages) continue;
		void *pa = lazy[i].resolve(lazy[i].arg, (page - lazy[i].va) / PGSIZE);
		return pa != NULL && uvm_lend(p->pagetable, page, (uint64_t)pa) == 0;
	}
	return false;
}

void kshare_unmap_page(uint64_t va)
{
	for (int i = 0; i < NPROC; i++)
		if (procs[i].state != P_UNUSED && procs[i].state != P_ZOMBIE && procs[i].pagetable)
			uvm_unlend(procs[i].pagetable, va);
}

void kinfo_init(void)
{
	kinfo = kalloc();
	if (kinfo == NULL) panic("kinfo_init: out of memory");
	kinfo->magic = KINFO_MAGIC;
	kinfo->timebase_hz = bootinfo.timebase_hz;
	kinfo->ram_bytes = bootinfo.ram_size;
	kinfo->boot_time = rdtime();
	kinfo->flags = bootinfo.kinfo_flags;   /* devices_init adds its own later */
	strncpy_safe(kinfo->bootargs, bootinfo.bootargs, sizeof kinfo->bootargs);
	kinfo->total_pages = kalloc_total_pages();
	kalloc_export(&kinfo->free_pages);
	kshare_register(UKINFO, kinfo, 1);
}
