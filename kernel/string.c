/*
 * string.c - memory and string routines for the kernel (there is no libc in
 * the kernel).  Portable code linked into the kernel, such as the exodisk core,
 * uses these too.
 */
#include "kernel/klib.h"

/* memset, memcpy, memmove and memcmp are in kernel/mem.c, shared with the
 * libOS. */

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
