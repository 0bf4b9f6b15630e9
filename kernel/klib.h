/*
 * klib.h - the kernel's small C library: memory and string routines,
 * printf to the console, panic and assertions.
 */
#ifndef KLIB_H
#define KLIB_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdarg.h>

void  *memset(void *dst, int c, size_t n);
void  *memcpy(void *dst, const void *src, size_t n);
void  *memmove(void *dst, const void *src, size_t n);
int    memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int    strcmp(const char *a, const char *b);
int    strncmp(const char *a, const char *b, size_t n);
char  *strncpy_safe(char *dst, const char *src, size_t size);   /* always NUL-terminates */
int    str_starts(const char *s, const char *prefix);

int    kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int    kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int    ksnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void   panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#define KASSERT(cond) do { if (!(cond)) panic("assertion failed: %s at %s:%d", #cond, __FILE__, __LINE__); } while (0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
