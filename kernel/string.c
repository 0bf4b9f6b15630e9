/*
 * string.c - memory and string routines for the kernel (there is no libc in
 * the kernel).  Portable code linked into the kernel, such as the exodisk core,
 * uses these too; GCC may also emit calls to memcpy/memset for struct copies.
 */
#include "kernel/klib.h"

void *memset(void *dst, int c, size_t n)
{
	uint8_t *d = dst;
	/* Word stores once aligned: page zeroing is common. */
	while (n > 0 && ((uintptr_t)d & 7)) { *d++ = (uint8_t)c; n--; }
	if (n >= 8) {
		uint64_t w = (uint8_t)c;
		w |= w << 8; w |= w << 16; w |= w << 32;
		uint64_t *d8 = (uint64_t *)d;
		for (; n >= 8; n -= 8) *d8++ = w;
		d = (uint8_t *)d8;
	}
	while (n-- > 0) *d++ = (uint8_t)c;
	return dst;
}

void *memcpy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	if ((((uintptr_t)d | (uintptr_t)s) & 7) == 0) {
		uint64_t *d8 = (uint64_t *)d;
		const uint64_t *s8 = (const uint64_t *)s;
		for (; n >= 8; n -= 8) *d8++ = *s8++;
		d = (uint8_t *)d8;
		s = (const uint8_t *)s8;
	}
	while (n-- > 0) *d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	if (d == s || n == 0) return dst;
	if (d < s || d >= s + n) return memcpy(dst, src, n);
	while (n-- > 0) d[n] = s[n];
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n]) n++;
	return n;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;
	while (n < max && s[n]) n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) { a++; b++; }
	return (uint8_t)*a - (uint8_t)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n > 0; n--, a++, b++) {
		if (*a != *b) return (uint8_t)*a - (uint8_t)*b;
		if (*a == 0) return 0;
	}
	return 0;
}

char *strncpy_safe(char *dst, const char *src, size_t size)
{
	size_t i = 0;
	if (size == 0) return dst;
	for (; i + 1 < size && src[i]; i++) dst[i] = src[i];
	dst[i] = 0;
	return dst;
}

int str_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}
