/*
 * mstats.h - the heap's census (libos/malloc.c): what is live and what is
 * idle, per size class and per call site, to find what makes a program's
 * heap grow (apps/edscale.c -m prints it).  On x86-64 the C library's own
 * heap (newlib) is used and the census is not kept: the calls say so.
 */
#ifndef LIBOS_MSTATS_H
#define LIBOS_MSTATS_H

#include <stddef.h>
#include <stdint.h>

#define MALLOC_CLASSES 48   /* small size classes, 16 bytes to 32 KiB    */
#define MALLOC_SITES   256  /* call sites counted at once                 */

struct malloc_class {
	uint32_t size;      /* usable bytes of a block of the class          */
	uint64_t live;      /* blocks given out and not freed                */
	uint64_t idle;      /* freed blocks waiting on the class's list      */
};

struct malloc_census {
	uint64_t heap;        /* bytes the heap took from sbrk                 */
	uint64_t top;         /* of those, never carved into a block           */
	uint64_t small_live;  /* bytes in live small blocks, headers included  */
	uint64_t small_idle;  /* bytes in free small blocks, headers included  */
	uint64_t large_live;  /* bytes in live large blocks, headers included  */
	uint64_t large_idle;  /* bytes in free large blocks, headers included  */
	int nclass;
	struct malloc_class cls[MALLOC_CLASSES];
};

/* A call site: where malloc, calloc, realloc or memalign was called from,
 * its blocks still live (counted from malloc_sites(1) on), their usable
 * bytes, and all it allocated. pc 0 collects the sites past the table. */
struct malloc_site {
	uintptr_t pc;
	uint64_t live;
	uint64_t bytes;
	uint64_t allocs;
};

/* Fill *c; 0, or -1 where the census is not kept (newlib). */
int malloc_census(struct malloc_census *c);

/* Count the blocks allocated from now on by call site (on), or stop (0):
 * a few more instructions per malloc and free while on. */
void malloc_sites(int on);

/* Up to max sites into out, the most live bytes first; their number. */
int malloc_site_list(struct malloc_site *out, int max);

#endif
