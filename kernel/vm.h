/*
 * vm.h - address spaces: the kernel's mappings, which every address space
 * shares, and per-process user mappings (the architecture's vm.c: Sv39 on
 * RISC-V, 4-level paging on x86-64); safe copying to and from user memory
 * (kernel/uvm.c, portable).
 */
#ifndef VM_H
#define VM_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "kernel/arch.h"

void kvm_init(uint64_t ram_base, uint64_t ram_size);
void kvm_enable(void);
int  kvm_map(uint64_t va, uint64_t pa, uint64_t size, uint64_t perm);
void kvm_unmap(uint64_t va, uint64_t size);
void vm_use(pagetable_t pt);

pagetable_t uvm_create(void);
void uvm_destroy(pagetable_t pt);
int  uvm_map(pagetable_t pt, uint64_t va, uint64_t pa, uint64_t perm);
int  uvm_alloc(pagetable_t pt, uint64_t va, uint64_t len, uint64_t perm);
void uvm_dealloc(pagetable_t pt, uint64_t va, uint64_t len);
/* Map a kernel-owned page read-only into user space (exported state). */
int  uvm_lend(pagetable_t pt, uint64_t va, uint64_t pa);
void uvm_unlend(pagetable_t pt, uint64_t va);
/* Is [va, va+len) a range of user addresses at all (no overflow, inside user space)? */
bool uva_range_ok(uint64_t va, uint64_t len);
/* Physical address behind user va if the page allows the access, else 0. */
uint64_t uvm_translate(pagetable_t pt, uint64_t va, bool write);
/* The same, but 0 for pages the kernel only lends (they cannot be pinned). */
uint64_t uvm_translate_owned(pagetable_t pt, uint64_t va, bool write);
/* 0 if every byte of [va, va+len) allows the access, else K_E_FAULT. */
int uvm_check(pagetable_t pt, uint64_t va, uint64_t len, bool write);

/* Copies: 0 on success, K_E_FAULT if any byte is not accessible to the user. */
int copyin(pagetable_t pt, void *dst, uint64_t src_va, size_t len);
int copyout(pagetable_t pt, uint64_t dst_va, const void *src, size_t len);
/* Copy a NUL-terminated string of at most max-1 chars: length, K_E_FAULT or K_E_NAMETOOLONG. */
int copyinstr(pagetable_t pt, char *dst, uint64_t src_va, size_t max);

#endif
