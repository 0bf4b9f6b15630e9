/*
 * kshare.h - kernel pages exported read-only to every process at fixed user
 * addresses (kernel/uapi/layout.h): the kernel-information page, disk queue
 * state, exodisk free maps.  Reading them costs applications no system call.
 */
#ifndef KSHARE_H
#define KSHARE_H

#include <stdint.h>
#include "kernel/arch.h"

/* Register npages physically contiguous kernel pages starting at pa, to
 * appear at user va in every process created from now on (and in those
 * already running).  Scattered pages: one call per page. */
int  kshare_register(uint64_t va, void *pa, uint64_t npages);
int  kshare_map_all(pagetable_t pt);
void kinfo_init(void);
/* The kernel-information page, for subsystems that publish in it. */
extern struct kinfo *kinfo;

#endif
