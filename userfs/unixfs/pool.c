/*
 * pool.c - memory for the many small things unixfs makes and drops per
 * file: names (struct uent), objects (struct uinode) and small files'
 * bytes (ibuf), counted per mount.
 *
 * They come from malloc.  This file once carved them from 64 KiB slabs in
 * power-of-two classes, because picolibc's malloc walked one free list on
 * every call; the guest's heap is in size classes now (libos/malloc.c, and
 * newlib's on x86-64 is binned), so a slab pool only cost memory: a small
 * file of 1 KiB took a 2 KiB block (its size plus the class word), and
 * memory one class had freed never served another.  In the million-file
 * run (issue 11) the bytes of the files waiting for their write-back took
 * twice the room they needed.  What stays here is the count: the bytes a
 * mount holds in these things (unixfs_counters' pool_bytes).
 */
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#ifdef __linux__
#include <malloc.h>                     /* malloc_usable_size (glibc) */
#else
size_t malloc_usable_size(void *p);     /* the guest's libc has it; no header says so */
#endif

/* The largest block the pool gives (as the slab pool's largest class). */
#define UPOOL_MAX (512u * 1024 - 8)

void *upool_alloc_raw(struct ufs *fs, size_t n)
{
	if (n > UPOOL_MAX)
		return NULL;
	void *p = malloc(n ? n : 1);
	if (p != NULL)
		fs->pool.bytes += malloc_usable_size(p);
	return p;
}

void *upool_alloc(struct ufs *fs, size_t n)
{
	void *p = upool_alloc_raw(fs, n);
	if (p != NULL)
		memset(p, 0, upool_size(p));
	return p;
}

void upool_free(struct ufs *fs, void *obj)
{
	if (obj == NULL)
		return;
	fs->pool.bytes -= malloc_usable_size(obj);
	free(obj);
}

size_t upool_size(const void *obj)
{
	return malloc_usable_size((void *)obj);
}

void upool_destroy(struct ufs *fs)
{
	/* Everything was given back one by one (ufs_idrop_all). */
	memset(&fs->pool, 0, sizeof fs->pool);
}
