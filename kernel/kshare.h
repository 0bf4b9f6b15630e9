/*
 * kshare.h - kernel pages exported read-only to every process at fixed user
 * addresses (kernel/uapi/layout.h): the kernel-information page, disk queue
 * state, exodisk free maps.  Reading them costs applications no system call.
 */
#ifndef KSHARE_H
#define KSHARE_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/arch.h"

/* Register npages physically contiguous kernel pages starting at pa, to
 * appear at user va in every process created from now on (and in those
 * already running).  Scattered pages: one call per page. */
int  kshare_register(uint64_t va, void *pa, uint64_t npages);
int  kshare_map_all(pagetable_t pt);

/* A window of exported pages too large (or too changeable) to map up front:
 * each page is mapped, read-only, when a process first reads it, as
 * resolve(arg, page index) says (NULL: no such page, the process faults).
 * kshare_unmap_page removes one page from every process: its next read
 * resolves it again. */
struct proc;
int  kshare_lazy(uint64_t va, uint64_t npages, void *(*resolve)(void *arg, uint64_t i), void *arg);
void kshare_unmap_page(uint64_t va);
/* A user page fault: true if it was a first read of a lazy window's page
 * (now mapped; the process carries on). */
bool kshare_fault(struct proc *p, uint64_t scause, uint64_t va);
void kinfo_init(void);
/* The kernel-information page, for subsystems that publish in it. */
extern struct kinfo *kinfo;

#endif
