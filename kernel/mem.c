/*
 * mem.c - memcpy, memmove, memset and memcmp that move eight bytes at a
 * time, for the kernel and for every guest program.
 *
 * picolibc as Debian builds it for riscv64 copies and fills one byte per
 * loop iteration, and its malloc fills every block it hands out, so a
 * file system's buffer copies and allocations cost eight times what they
 * need to (docs/profiling.md measured memset and memcpy at over half of
 * unixfs's CPU).  The libOS links this file as an object, so these
 * definitions win over picolibc's for the program and for picolibc itself;
 * the kernel links it in place of byte loops of its own.
 *
 * RISC-V cores may trap on misaligned loads and stores (OpenSBI then
 * emulates them, a thousand times slower), so every 8-byte access here is
 * aligned.  When source and destination are misaligned with respect to each
 * other, each destination word is assembled from two aligned source words
 * (little-endian shifts).  Such a word may extend past the last byte asked
 * for, but never past the aligned word holding it, so never into another
 * page.
 *
 * Portable C (stdint/stddef only).  tests/host/kernel/test_mem.c checks every
 * length and alignment against the host's C library.
 */
#include <stddef.h>
#include <stdint.h>

/* GCC would turn the byte loops below into calls to memcpy and memset,
 * that is, into themselves. */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

#ifdef MEM_PREFIX	/* host test: build under other names */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define memcpy CAT(MEM_PREFIX, memcpy)
#define memmove CAT(MEM_PREFIX, memmove)
#define memset CAT(MEM_PREFIX, memset)
#define memcmp CAT(MEM_PREFIX, memcmp)
#endif

/* A word that may alias anything, so the compiler keeps its hands off. */
typedef uint64_t __attribute__((may_alias)) word;

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

/* Copy forward; d and s may overlap only if d < s. */
static void copy_forward(unsigned char *d, const unsigned char *s, size_t n)
{
	if (n >= 16) {
		while ((uintptr_t)d & 7) {
			*d++ = *s++;
			n--;
		}
		unsigned off = (uintptr_t)s & 7;
		word *dw = (word *)d;
		if (off == 0) {
			const word *sw = (const word *)s;
			for (; n >= 64; n -= 64, dw += 8, sw += 8) {
				word a = sw[0], b = sw[1], c = sw[2], e = sw[3];
				word f = sw[4], g = sw[5], h = sw[6], i = sw[7];
				dw[0] = a; dw[1] = b; dw[2] = c; dw[3] = e;
				dw[4] = f; dw[5] = g; dw[6] = h; dw[7] = i;
			}
			for (; n >= 8; n -= 8)
				*dw++ = *sw++;
			s = (const unsigned char *)sw;
		} else {
			/* Each output word takes the top of one aligned source word
			 * and the bottom of the next. */
			unsigned lo = off * 8, hi = 64 - lo;
			const word *sw = (const word *)(s - off);
			word prev = *sw++;
			for (; n >= 8; n -= 8) {
				word next = *sw++;
				*dw++ = (prev >> lo) | (next << hi);
				prev = next;
				s += 8;
			}
		}
		d = (unsigned char *)dw;
	}
	while (n--)
		*d++ = *s++;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	copy_forward(dst, src, n);
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d == s || n == 0)
		return dst;
	if (d < s || d >= s + n) {
		copy_forward(d, s, n);
		return dst;
	}
	/* Overlapping with d above s: copy from the end down. */
	d += n;
	s += n;
	if ((((uintptr_t)d ^ (uintptr_t)s) & 7) == 0 && n >= 16) {
		while ((uintptr_t)d & 7) {
			*--d = *--s;
			n--;
		}
		word *dw = (word *)d;
		const word *sw = (const word *)s;
		for (; n >= 8; n -= 8)
			*--dw = *--sw;
		d = (unsigned char *)dw;
		s = (const unsigned char *)sw;
	}
	while (n--)
		*--d = *--s;
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	if (n >= 16) {
		word w = (unsigned char)c;
		w |= w << 8;
		w |= w << 16;
		w |= w << 32;
		while ((uintptr_t)d & 7) {
			*d++ = (unsigned char)c;
			n--;
		}
		word *dw = (word *)d;
		for (; n >= 64; n -= 64, dw += 8) {
			dw[0] = w; dw[1] = w; dw[2] = w; dw[3] = w;
			dw[4] = w; dw[5] = w; dw[6] = w; dw[7] = w;
		}
		for (; n >= 8; n -= 8)
			*dw++ = w;
		d = (unsigned char *)dw;
	}
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	/* Skip equal words while both are aligned; the first difference is
	 * then found byte by byte. */
	if ((((uintptr_t)x | (uintptr_t)y) & 7) == 0) {
		const word *xw = (const word *)x, *yw = (const word *)y;
		while (n >= 8 && *xw == *yw) {
			xw++;
			yw++;
			n -= 8;
		}
		x = (const unsigned char *)xw;
		y = (const unsigned char *)yw;
	}
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}
