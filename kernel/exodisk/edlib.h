/*
 * edlib.h - the few helpers the portable exodisk core needs from C.
 *
 * The core runs in the kernel (no libc) and in host tests and tools, so it
 * uses only the compiler's builtins for memory operations; in the kernel GCC
 * turns the larger ones into calls to kernel/string.c.  On-disk structures
 * are little-endian, as both RISC-V and the hosts we build on are; the
 * assertion below keeps a big-endian build from silently misreading disks.
 */
#ifndef ED_EDLIB_H
#define ED_EDLIB_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "exodisk formats are little-endian");

#define ed_memcpy(d, s, n)   __builtin_memcpy((d), (s), (n))
#define ed_memmove(d, s, n)  __builtin_memmove((d), (s), (n))
#define ed_memset(d, c, n)   __builtin_memset((d), (c), (n))
#define ed_memcmp(a, b, n)   __builtin_memcmp((a), (b), (n))

#define ED_PAGE      4096u
#define ED_MIN(a, b) ((a) < (b) ? (a) : (b))
#define ED_MAX(a, b) ((a) > (b) ? (a) : (b))
#define ED_NELEM(a)  (sizeof(a) / sizeof((a)[0]))

static inline uint64_t ed_load64(const void *p)
{
	uint64_t v;
	ed_memcpy(&v, p, 8);
	return v;
}

static inline void ed_store64(void *p, uint64_t v)
{
	ed_memcpy(p, &v, 8);
}

/* Does [a, a+an) overlap [b, b+bn)?  Callers have checked both ranges lie
 * within the disk, so the sums cannot wrap. */
static inline bool ed_overlap(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return an != 0 && bn != 0 && a < b + bn && b < a + an;
}

#endif
