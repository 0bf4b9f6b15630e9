/*
 * uvm.c - the kernel's only ways into user memory, on any architecture:
 * range checks and copies that go page by page through the process's page
 * table (uvm_translate, the architecture's vm.c) and insist on the user
 * permission, so a bad pointer is an error code, never a kernel fault;
 * and what is built on the architecture's uvm_map and uvm_dealloc alone.
 */
#include "kernel/vm.h"
#include "kernel/klib.h"
#include "kernel/kalloc.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"

bool uva_range_ok(uint64_t va, uint64_t len)
{
	return va >= USER_BASE && va <= USER_TOP && len <= USER_TOP - va;
}

int uvm_alloc(pagetable_t pt, uint64_t va, uint64_t len, uint64_t perm)
{
	for (uint64_t off = 0; off < len; off += PGSIZE) {
		void *page = kalloc();
		if (page == NULL) { uvm_dealloc(pt, va, off); return K_E_NOMEM; }
		int err = uvm_map(pt, va + off, (uint64_t)page, perm);
		if (err < 0) { kfree(page); uvm_dealloc(pt, va, off); return err; }
	}
	return 0;
}

int uvm_check(pagetable_t pt, uint64_t va, uint64_t len, bool write)
{
	if (!uva_range_ok(va, len)) return K_E_FAULT;
	if (len == 0) return 0;
	for (uint64_t a = PGROUNDDOWN(va); a < va + len; a += PGSIZE)
		if (uvm_translate(pt, a, write) == 0) return K_E_FAULT;
	return 0;
}

int copyin(pagetable_t pt, void *dst, uint64_t src_va, size_t len)
{
	if (!uva_range_ok(src_va, len)) return K_E_FAULT;
	while (len > 0) {
		uint64_t pa = uvm_translate(pt, src_va, false);
		if (pa == 0) return K_E_FAULT;
		size_t n = MIN(len, PGSIZE - (src_va & (PGSIZE - 1)));
		memcpy(dst, (void *)pa, n);
		dst = (char *)dst + n; src_va += n; len -= n;
	}
	return 0;
}

int copyout(pagetable_t pt, uint64_t dst_va, const void *src, size_t len)
{
	if (!uva_range_ok(dst_va, len)) return K_E_FAULT;
	while (len > 0) {
		uint64_t pa = uvm_translate(pt, dst_va, true);
		if (pa == 0) return K_E_FAULT;
		size_t n = MIN(len, PGSIZE - (dst_va & (PGSIZE - 1)));
		memcpy((void *)pa, src, n);
		src = (const char *)src + n; dst_va += n; len -= n;
	}
	return 0;
}

int copyinstr(pagetable_t pt, char *dst, uint64_t src_va, size_t max)
{
	for (size_t i = 0; i < max; i++) {
		if (!uva_range_ok(src_va + i, 1)) return K_E_FAULT;
		uint64_t pa = uvm_translate(pt, src_va + i, false);
		if (pa == 0) return K_E_FAULT;
		/* Copy the rest of this page in one go. */
		size_t n = MIN(max - i, PGSIZE - ((src_va + i) & (PGSIZE - 1)));
		const char *s = (const char *)pa;
		for (size_t k = 0; k < n; k++) {
			dst[i + k] = s[k];
			if (s[k] == 0) return (int)(i + k);
		}
		i += n - 1;
	}
	if (max > 0) dst[max - 1] = 0;
	return K_E_NAMETOOLONG;
}
