/*
 * vfsio.h - whole files through the mount table, for the userfs host tests:
 * a byte pattern from a seed, write a file in one go, compare a file with
 * what was written.  Any library file system (fatfix.h's tests,
 * test_exhaust.c).
 */
#ifndef TESTS_USERFS_VFSIO_H
#define TESTS_USERFS_VFSIO_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "libos/vfs.h"

/* n bytes from seed; never 0xEE, the power-cut harness's garbage. */
static inline void pattern_fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 7;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
		if (p[i] == 0xEE)
			p[i] = 0x11;
	}
}

/* Create or truncate path and write n bytes: 0, or the first error of
 * open, write (-EIO for a short one) or close. */
static inline long vfs_put(const char *path, const uint8_t *data, size_t n)
{
	struct vfile *f;
	int e = vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f);
	if (e < 0)
		return e;
	long w = vfs_write(f, data, n);
	int c = vfs_close(f);
	return w < 0 ? w : w != (long)n ? -EIO : c;
}

/* Does path hold exactly these n bytes? */
static inline int vfs_same(const char *path, const uint8_t *data, size_t n)
{
	struct vfile *f;
	if (vfs_open(path, LIBFS_O_READ, 0, &f) < 0)
		return 0;
	uint8_t *buf = malloc(n + 16);
	long r = buf != NULL ? vfs_read(f, buf, n + 16) : -ENOMEM;
	int ok = r == (long)n && memcmp(buf, data, n) == 0;
	free(buf);
	vfs_close(f);
	return ok;
}

#endif
