/*
 * kshare.c - the kernel's exported read-only pages, and the kernel
 * information page among them.
 *
 * Subsystems register page ranges at boot; every new address space gets
 * them mapped with PTE_R | PTE_U and the "borrowed" software bit, so tearing
 * the address space down leaves the kernel's pages alone.
 */
#include "kernel/kshare.h"
#include "kernel/vm.h"
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/proc.h"
#include "kernel/bootinfo.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/errno.h"

#define MAX_SHARES 32

static struct { uint64_t va; uint64_t pa; uint64_t npages; } shares[MAX_SHARES];
static int nshares;

struct kinfo *kinfo;

static int map_one(pagetable_t pt, int i)
{
	for (uint64_t k = 0; k < shares[i].npages; k++) {
		int err = uvm_lend(pt, shares[i].va + k * PGSIZE, shares[i].pa + k * PGSIZE);
		if (err < 0) return err;
	}
	return 0;
}

int kshare_register(uint64_t va, void *pa, uint64_t npages)
{
	if (nshares == MAX_SHARES) return K_E_NOMEM;
	shares[nshares].va = va;
	shares[nshares].pa = (uint64_t)pa;
	shares[nshares].npages = npages;
	for (int i = 0; i < NPROC; i++)
		if (procs[i].state != P_UNUSED && procs[i].state != P_ZOMBIE && procs[i].pagetable)
			map_one(procs[i].pagetable, nshares);
	nshares++;
	return 0;
}

int kshare_map_all(pagetable_t pt)
{
	for (int i = 0; i < nshares; i++) {
		int err = map_one(pt, i);
		if (err < 0) return err;
	}
	return 0;
}

void kinfo_init(void)
{
	kinfo = kalloc();
	if (kinfo == NULL) panic("kinfo_init: out of memory");
	kinfo->magic = KINFO_MAGIC;
	kinfo->timebase_hz = bootinfo.timebase_hz;
	kinfo->ram_bytes = bootinfo.ram_size;
	kinfo->boot_time = rdtime();
	strncpy_safe(kinfo->bootargs, bootinfo.bootargs, sizeof kinfo->bootargs);
	kinfo->total_pages = kalloc_total_pages();
	kalloc_export(&kinfo->free_pages);
	kshare_register(UKINFO, kinfo, 1);
}
