/*
 * pool.c - memory for the many small things unixfs makes and drops per
 * file: names (struct uent), objects (struct uinode) and small files'
 * bytes (ibuf, up to UPOOL_SMALL), carved from 32 KiB spans of one size
 * class each, per mount; and, counted the same way, the larger buffers
 * (groups, read-ahead, larger small files) that come from malloc.
 *
 * History.  This file once carved these from 64 KiB slabs in power-of-two
 * classes (picolibc's malloc walked one free list on every call), which
 * cost memory: a 1 KiB file's bytes took a 2 KiB block (its size plus a
 * class word), and memory one class had freed never served another.  Then
 * they came from malloc, whose heap is in size classes now.  The spans are
 * back for locality, not speed of the calls: in the million-file run
 * (issue 11) the per-file cost in instructions stayed flat (1.05x) while
 * the elapsed time per file grew 1.2-1.6x, because each file's name,
 * object and bytes came from the program's one heap, wherever that heap's
 * free lists had them - among the directories' arrays, the I/O buffers,
 * the other processes' worth of blocks - so one create touched more pages
 * as the file system grew, and under QEMU every extra page is a softmmu
 * TLB miss (tools/memtouch measures it: docs/unixfs.md, "Memory").  Here a
 * mount's names, objects and bytes sit in spans of their own, a class's
 * objects are given from the span that most recently had room, and freed
 * ones are given again first (LIFO), so the things a create touches are
 * few pages that were touched a moment ago.
 *
 * Not wasting memory: classes go in 16-byte steps up to 256 bytes and then
 * in steps of an eighth of a power of two (288, 320, ... 4096), so a block
 * is at most 12.5% larger than asked (a 1 KiB file's bytes take exactly
 * 1 KiB); a span's 64-byte header and its tail that holds no whole object
 * cost at most 3% but for the largest classes (4096: 7 objects, 12%).  A
 * span whose objects are all freed goes back to the mount's empty spans,
 * which any class takes next; spans are cut from chunks of 4 to 32 spans
 * from malloc (aligned inside them: the span of an object is its address
 * rounded down), and a chunk whose spans are all empty goes back to malloc
 * once the mount keeps UPOOL_RESERVE empty spans besides.  pool_bytes
 * (unixfs_counters) is the bytes held: every chunk, and the large buffers.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#ifdef __linux__
#include <malloc.h>                     /* malloc_usable_size (glibc) */
#else
size_t malloc_usable_size(void *p);     /* the guest's libc has it; no header says so */
#endif

/* Under AddressSanitizer (host tests) what no object covers is poisoned,
 * so that a use after free or past an object's class size still stops the
 * test, as it would with malloc. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define SPAN        UPOOL_SPAN
#define SPAN_HDR    64u                 /* struct uspan, rounded up          */
#define CHUNK_MIN   4u                  /* spans in a mount's first chunk     */
#define CHUNK_MAX   32u                 /* ... and in the largest             */
#define UPOOL_RESERVE 8u                /* empty spans kept before a chunk goes */

/* A span: its header, then objects of one class. */
struct uspan {
	struct uspan *next, *prev;     /* its class's spans with room, or the empty ones */
	void *free;                    /* objects given back, LIFO           */
	struct uchunk *chunk;
	uint32_t used;                 /* objects given out                  */
	uint32_t carved;               /* bytes from the start never given: the rest */
	uint16_t cls;
	uint8_t  listed;               /* on a list (class or empty)         */
};
_Static_assert(sizeof(struct uspan) <= SPAN_HDR, "the span header");

/* A piece of malloc holding spans. */
struct uchunk {
	struct uchunk *next, *prev;
	void *mem;                     /* what malloc gave                   */
	size_t bytes;
	uint32_t nspan, nempty;
};

/* ---- the classes ---------------------------------------------------------------- */

/* Class of n bytes (1 <= n <= UPOOL_SMALL): 0..15 are 16..256 in steps of
 * 16; then 8 per power of two. */
static unsigned class_of(size_t n)
{
	if (n <= 256)
		return (unsigned)((n + 15) / 16) - 1 + (n == 0);
	unsigned p = 8;                      /* 2^p < n <= 2^(p+1) */
	while (((size_t)1 << (p + 1)) < n)
		p++;
	size_t step = (size_t)1 << (p - 3);
	return 16 + (p - 8) * 8 + (unsigned)((n - ((size_t)1 << p) + step - 1) / step) - 1;
}

static size_t class_size(unsigned c)
{
	if (c < 16)
		return 16 * (c + 1);
	unsigned p = 8 + (c - 16) / 8;
	return ((size_t)1 << p) + ((size_t)(c - 16) % 8 + 1) * ((size_t)1 << (p - 3));
}
_Static_assert(UPOOL_CLASSES == 16 + 4 * 8, "classes up to 4096");

static struct uspan *span_of(const void *obj)
{
	return (struct uspan *)((uintptr_t)obj & ~(uintptr_t)(SPAN - 1));
}

/* ---- lists ------------------------------------------------------------------------ */

static void list_push(struct uspan **head, struct uspan *s)
{
	s->prev = NULL;
	s->next = *head;
	if (s->next != NULL)
		s->next->prev = s;
	*head = s;
	s->listed = 1;
}

static void list_take(struct uspan **head, struct uspan *s)
{
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		*head = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	s->next = s->prev = NULL;
	s->listed = 0;
}

/* ---- chunks and spans ---------------------------------------------------------- */

static int chunk_new(struct ufs *fs)
{
	struct upool *P = &fs->pool;
	uint32_t k = P->next_chunk ? P->next_chunk : CHUNK_MIN;
	struct uchunk *c = malloc(sizeof *c);
	if (c == NULL)
		return -1;
	size_t bytes = (size_t)(k + 1) * SPAN;
	uint8_t *mem = malloc(bytes);
	if (mem == NULL) {
		free(c);
		return -1;
	}
	c->mem = mem;
	c->bytes = bytes;
	c->nspan = c->nempty = 0;
	c->prev = NULL;
	c->next = P->chunks;
	if (c->next != NULL)
		c->next->prev = c;
	P->chunks = c;
	POISON(mem, bytes);
	uint8_t *s = (uint8_t *)(((uintptr_t)mem + SPAN - 1) & ~(uintptr_t)(SPAN - 1));
	for (; s + SPAN <= mem + bytes; s += SPAN) {
		struct uspan *sp = (struct uspan *)s;
		UNPOISON(sp, SPAN_HDR);
		memset(sp, 0, sizeof *sp);
		sp->chunk = c;
		c->nspan++;
		c->nempty++;
		P->nempty++;
		list_push(&P->empty, sp);
	}
	P->bytes += bytes;
	if (k < CHUNK_MAX)
		P->next_chunk = k * 2;
	return 0;
}

static void chunk_free(struct ufs *fs, struct uchunk *c)
{
	struct upool *P = &fs->pool;
	uint8_t *s = (uint8_t *)(((uintptr_t)c->mem + SPAN - 1) & ~(uintptr_t)(SPAN - 1));
	for (uint32_t i = 0; i < c->nspan; i++, s += SPAN)
		list_take(&P->empty, (struct uspan *)s);
	P->nempty -= c->nspan;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		P->chunks = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	P->bytes -= c->bytes;
	UNPOISON(c->mem, c->bytes);
	free(c->mem);
	free(c);
}

/* An empty span for class cls, on its class's list. */
static struct uspan *span_new(struct ufs *fs, unsigned cls)
{
	struct upool *P = &fs->pool;
	if (P->empty == NULL && chunk_new(fs) < 0)
		return NULL;
	struct uspan *s = P->empty;
	list_take(&P->empty, s);
	P->nempty--;
	s->chunk->nempty--;
	s->cls = (uint16_t)cls;
	s->used = 0;
	s->carved = SPAN_HDR;
	s->free = NULL;
	list_push(&P->part[cls], s);
	return s;
}

/* ---- the calls -------------------------------------------------------------------- */

void *upool_alloc_raw(struct ufs *fs, size_t n)
{
	if (n > UPOOL_SMALL)
		return NULL;
	struct upool *P = &fs->pool;
	unsigned cls = class_of(n);
	size_t size = class_size(cls);
	struct uspan *s = P->part[cls];
	if (s == NULL && (s = span_new(fs, cls)) == NULL)
		return NULL;
	void *p;
	if (s->free != NULL) {
		p = s->free;
		UNPOISON(p, size);
		s->free = *(void **)p;
	} else {
		p = (uint8_t *)s + s->carved;
		UNPOISON(p, size);
		s->carved += (uint32_t)size;
	}
	s->used++;
	/* Full: off its class's list until something is given back. */
	if (s->free == NULL && s->carved + size > SPAN)
		list_take(&P->part[cls], s);
	P->live += size;
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
	struct upool *P = &fs->pool;
	struct uspan *s = span_of(obj);
	unsigned cls = s->cls;
	P->live -= class_size(cls);
	*(void **)obj = s->free;
	POISON(obj, class_size(cls));
	s->free = obj;
	s->used--;
	if (s->used == 0) {
		/* Empty: any class may have it now. */
		if (s->listed)
			list_take(&P->part[cls], s);
		list_push(&P->empty, s);
		P->nempty++;
		struct uchunk *c = s->chunk;
		if (++c->nempty == c->nspan && P->nempty - c->nspan >= UPOOL_RESERVE)
			chunk_free(fs, c);
		return;
	}
	if (!s->listed)
		list_push(&P->part[cls], s);
	else if (P->part[cls] != s) {
		/* The span just touched is the one to give from next. */
		list_take(&P->part[cls], s);
		list_push(&P->part[cls], s);
	}
}

size_t upool_size(const void *obj)
{
	return class_size(span_of(obj)->cls);
}

/* ---- larger buffers ------------------------------------------------------------- */

void *upool_big_alloc(struct ufs *fs, size_t n)
{
	void *p = malloc(n ? n : 1);
	if (p != NULL)
		fs->pool.bytes += malloc_usable_size(p);
	return p;
}

void *upool_big_realloc(struct ufs *fs, void *old, size_t n)
{
	size_t was = old != NULL ? malloc_usable_size(old) : 0;
	void *p = realloc(old, n ? n : 1);
	if (p != NULL)
		fs->pool.bytes += malloc_usable_size(p) - was;
	return p;
}

void upool_big_free(struct ufs *fs, void *p)
{
	if (p == NULL)
		return;
	fs->pool.bytes -= malloc_usable_size(p);
	free(p);
}

void upool_destroy(struct ufs *fs)
{
	/* Everything was given back one by one (ufs_idrop_all); chunks that
	 * are left were kept in reserve. */
	struct upool *P = &fs->pool;
	while (P->chunks != NULL) {
		struct uchunk *c = P->chunks;
		P->chunks = c->next;
		UNPOISON(c->mem, c->bytes);
		free(c->mem);
		free(c);
	}
	memset(P, 0, sizeof *P);
}
