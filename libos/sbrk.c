/*
 * sbrk.c - picolibc's malloc grows the heap through sbrk; ours asks the
 * kernel for pages instead of using a fixed region from the linker script.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include "libos/sys.h"

void *sbrk(ptrdiff_t incr)
{
	long old = sys_sbrk(incr);
	if (old < 0) {
		errno = ENOMEM;
		return (void *)-1;
	}
	return (void *)(uintptr_t)old;
}
