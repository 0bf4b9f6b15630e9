/*
 * pool.c - memory for the many small things unixfs makes and drops per
 * file: names (struct uent), objects (struct uinode) and small files'
 * bytes (ibuf), in size classes of powers of two carved from 64 KiB slabs
 * and kept on free lists until unmount.
 *
 * Why not malloc: a simple malloc (picolibc's keeps one free list in
 * address order, walked on every malloc and free) slows down as thousands
 * of small blocks come and go - writing 10,000 small files freed their
 * buffers as they were written out, and every later allocation walked the
 * thousands of holes - and it asks the kernel for more heap a little at a
 * time (a system call each).  Here an allocation and a free are a few
 * instructions, and the heap grows 64 KiB at a time.
 */
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define MIN_SHIFT   6                   /* 64 bytes                           */
#define SLAB        (64u * 1024)

struct pfree {
	struct pfree *next;
};

/* Each block starts with its class, so free needs no size. */
struct phdr {
	uint64_t cls;
};

static int class_of(size_t n)
{
	int c = 0;
	while (((size_t)1 << (MIN_SHIFT + c)) < n + sizeof(struct phdr))
		c++;
	return c;
}

static void *take(struct ufs *fs, size_t n, size_t *szp)
{
	int c = class_of(n);
	if (c >= UPOOL_CLASSES)
		return NULL;
	struct upool *p = &fs->pool;
	size_t sz = (size_t)1 << (MIN_SHIFT + c);
	if (p->free[c] == NULL) {
		/* A slab of this class: SLAB bytes, or 16 blocks if larger (the
		 * heap grows by a system call a time: few and large). */
		size_t bytes = sz * 16 > SLAB ? sz * 16 : SLAB;
		uint8_t *s = malloc(bytes + sizeof(void *));
		if (s == NULL)
			return NULL;
		*(void **)s = p->slabs;          /* slabs are chained for unmount */
		p->slabs = s;
		p->bytes += bytes;
		for (size_t off = 0; off + sz <= bytes; off += sz) {
			struct pfree *f = (void *)(s + sizeof(void *) + off);
			f->next = p->free[c];
			p->free[c] = f;
		}
	}
	struct pfree *f = p->free[c];
	p->free[c] = f->next;
	struct phdr *h = (void *)f;
	h->cls = (uint64_t)c;
	*szp = sz - sizeof *h;
	return h + 1;
}

void *upool_alloc(struct ufs *fs, size_t n)
{
	size_t sz;
	void *obj = take(fs, n, &sz);
	if (obj != NULL)
		memset(obj, 0, sz);
	return obj;
}

void *upool_alloc_raw(struct ufs *fs, size_t n)
{
	size_t sz;
	return take(fs, n, &sz);
}

void upool_free(struct ufs *fs, void *obj)
{
	if (obj == NULL)
		return;
	struct phdr *h = (struct phdr *)obj - 1;
	int c = (int)h->cls;
	struct pfree *f = (void *)h;
	f->next = fs->pool.free[c];
	fs->pool.free[c] = f;
}

size_t upool_size(const void *obj)
{
	const struct phdr *h = (const struct phdr *)obj - 1;
	return ((size_t)1 << (MIN_SHIFT + h->cls)) - sizeof *h;
}

void upool_destroy(struct ufs *fs)
{
	struct upool *p = &fs->pool;
	while (p->slabs) {
		void *s = p->slabs;
		p->slabs = *(void **)s;
		free(s);
	}
	memset(p, 0, sizeof *p);
}
