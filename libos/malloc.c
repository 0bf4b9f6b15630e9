/*
 * malloc.c - the C library's heap for programs on RISC-V (picolibc), in size
 * classes, so that an allocation and a free cost a few instructions however
 * many blocks are live or free.
 *
 * Why not picolibc's: its malloc keeps one free list in address order and
 * walks it on every malloc and free.  A program that keeps many blocks and
 * frees some of them (a file system holding thousands of directories while
 * files come and go) makes every later call walk the holes: at 150,000
 * files in the million-file run (issue 11) malloc and free were 41% of the
 * CPU.  newlib (x86-64) has a binned allocator already and keeps it: this
 * file compiles to nothing there.
 *
 * The heap grows through sbrk (libos/sbrk.c) in steps of at least 256 KiB,
 * and is carved from the bottom of that free region (the "top").
 *  - Small blocks (up to 32 KiB): 4 classes per power of two (16-byte steps
 *    up to 128 bytes), so a block wastes at most a quarter of its size.  A
 *    freed block goes on its class's list and is given again to the next
 *    request of that class; a list that is empty takes one block from the
 *    top.  Blocks of one class never become another's.
 *  - Large blocks: a list of free ones in address order, first fit, split
 *    when the rest is worth keeping, merged with free neighbours when freed;
 *    one that ends at the top goes back to it.  Large blocks are few (I/O
 *    buffers, growing arrays), so walking that list is cheap; a realloc of
 *    the block just below the top grows it in place.
 * Every block has a 16-byte header (class, usable size) and 16-byte
 * alignment.  A free of a pointer this heap did not give out, or given
 * twice, stops the program with a message instead of corrupting the heap
 * silently (the header's magic, and a mark on free blocks).
 *
 * Programs are single-threaded (one thread per process), so there is no lock.
 *
 * The census (libos/mstats.h): the heap keeps, per class, how many blocks
 * are live and how many wait on its free list, and on request (malloc_sites)
 * which call site allocated each live block - the block header's spare word
 * holds the site's slot - so that "the heap grows N bytes per file" can be
 * traced to a size class and a line of code (malloc_census, edscale -m).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libos/mstats.h"

#ifdef __PICOLIBC__

#define ALIGN      16u
#define GROW       (256u * 1024)     /* the least the heap grows by          */
#define SMALL_MAX  (32u * 1024)      /* larger blocks are "large"            */
#define NCLASS     48
#define MAGIC      0xa110c000u       /* high bits of hdr.tag                 */
#define T_LARGE    0xfe              /* low bits of hdr.tag: a large block   */
#define T_ALIGNED  0xfd              /* a memalign'ed pointer into a block   */
#define F_FREE     0x100             /* the block is free (double-free check) */

struct hdr {
	uint32_t tag;              /* MAGIC | flags | class (or T_*)            */
	uint32_t site;             /* 1 + its slot in sites[], 0: not counted   */
	uint64_t size;             /* usable bytes; T_ALIGNED: back to block    */
};

static struct hdr *cfree_[NCLASS];   /* free small blocks, linked by size   */
static uint32_t csize[NCLASS];       /* usable bytes of each class          */
static int nclass;
static uint8_t *top, *end;           /* the unused part of the heap         */
static uint64_t heap_bytes;          /* all that sbrk gave this heap        */
static struct hdr *large;            /* free large blocks, by address       */

/* The census: per class, live blocks and blocks on the free list; large
 * blocks live and free, in bytes; and, while malloc_sites(1) is on, the
 * live blocks of each call site (open addressing on its address; a site
 * that finds the table full is counted in the last slot, pc 0). */
_Static_assert(NCLASS == MALLOC_CLASSES, "libos/mstats.h's classes");
static uint64_t clive[NCLASS], cidle[NCLASS];
static uint64_t large_live;
static int sites_on;
static struct malloc_site sites[MALLOC_SITES];

static uint32_t site_slot(uintptr_t pc)
{
	const uint32_t n = MALLOC_SITES - 1;
	uint32_t i = (uint32_t)(((uint64_t)pc >> 1) * 2654435761u) % n;
	for (uint32_t k = 0; k < n; k++, i = i + 1 == n ? 0 : i + 1) {
		if (sites[i].pc == pc)
			return i + 1;
		if (sites[i].pc == 0) {
			sites[i].pc = pc;
			return i + 1;
		}
	}
	return MALLOC_SITES;
}

/* A block given out from pc: counted against it while sites are on. */
static inline __attribute__((always_inline)) void *given(struct hdr *h, uintptr_t pc)
{
	h->site = 0;
	if (__builtin_expect(sites_on, 0)) {
		h->site = site_slot(pc);
		struct malloc_site *s = &sites[h->site - 1];
		s->live++;
		s->bytes += h->size;
		s->allocs++;
	}
	return h + 1;
}

static inline __attribute__((always_inline)) void taken_back(struct hdr *h)
{
	if (__builtin_expect(h->site != 0, 0)) {
		struct malloc_site *s = &sites[h->site - 1];
		s->live--;
		s->bytes -= h->size;
		h->site = 0;
	}
}

static void fail(const char *what, const void *p)
{
	static const char hex[] = "0123456789abcdef";
	char msg[96], *m = msg;
	const char *pre = "malloc: ";
	while (*pre)
		*m++ = *pre++;
	while (*what)
		*m++ = *what++;
	*m++ = ' ';
	*m++ = '0';
	*m++ = 'x';
	uintptr_t v = (uintptr_t)p;
	for (int s = 60; s >= 0; s -= 4)
		*m++ = hex[(v >> s) & 15];
	*m++ = '\n';
	(void)write(2, msg, (size_t)(m - msg));
	_exit(128 + 6);                 /* as abort would (SIGABRT) */
}

/* The class of each size up to TAB_MAX, by 16-byte step: counting
 * leading zeros is a libgcc call on RISC-V without Zbb (a fifth of what
 * malloc cost, in the million-file run). */
#define TAB_MAX 4096u
static uint8_t ctab[TAB_MAX / ALIGN];

static int class_calc(size_t n)
{
	/* First the power of two, then the quarter within it. */
	if (n <= 128)
		return n == 0 ? 0 : (int)((n - 1) / ALIGN);
	int lg = 63 - __builtin_clzll((unsigned long long)(n - 1));     /* n-1 >= 128: lg >= 7 */
	size_t quarter = (size_t)1 << (lg - 2);
	int q = (int)((n - 1 - ((size_t)1 << lg)) / quarter);           /* 0..3 */
	return 8 + (lg - 7) * 4 + q;
}

static int class_of(size_t n)
{
	return n <= TAB_MAX ? ctab[n == 0 ? 0 : (n - 1) / ALIGN] : class_calc(n);
}

static void classes(void)
{
	uint32_t s = ALIGN;
	while (s <= SMALL_MAX && nclass < NCLASS) {
		csize[nclass++] = s;
		s += s < 128 ? ALIGN : (uint32_t)1 << (31 - __builtin_clz(s) - 2);
	}
	for (uint32_t i = 0; i < TAB_MAX / ALIGN; i++)
		ctab[i] = (uint8_t)class_calc((i + 1) * ALIGN);
}

/* n bytes (a multiple of ALIGN) from the top, growing the heap. */
static void *carve(size_t n)
{
	if ((size_t)(end - top) < n) {
		size_t want = n > GROW ? (n + GROW - 1) / GROW * GROW : GROW;
		uint8_t *p = sbrk((ptrdiff_t)want);
		if (p == (void *)-1)
			return NULL;
		if (p != end) {
			/* Not after the old top (someone else moved the break):
			 * what was left there stays unused. */
			uintptr_t a = ((uintptr_t)p + ALIGN - 1) & ~(uintptr_t)(ALIGN - 1);
			want -= a - (uintptr_t)p;
			p = (uint8_t *)a;
			top = p;
			if (want < n)
				return NULL;
		}
		end = p + want;
		heap_bytes += want;
	}
	void *r = top;
	top += n;
	return r;
}

static struct hdr *hdr_of(void *p, const char *who)
{
	struct hdr *h = (struct hdr *)p - 1;
	if (((uintptr_t)p & (ALIGN - 1)) != 0 || (h->tag & 0xfffff000u) != MAGIC)
		fail(who, p);
	return h;
}

/* ---- large blocks ------------------------------------------------------------------ */

/* A free large block's link to the next, in its first usable bytes. */
#define LNEXT(h) (*(struct hdr **)((h) + 1))
#define LEND(h)  ((uint8_t *)((h) + 1) + (h)->size)

static void *large_alloc(size_t n, uintptr_t pc)
{
	for (struct hdr **link = &large; *link; link = &LNEXT(*link)) {
		struct hdr *h = *link;
		if (h->size < n)
			continue;
		*link = LNEXT(h);
		if (h->size - n >= SMALL_MAX + sizeof *h) {
			/* Keep the rest free, in the same place in the list. */
			struct hdr *r = (struct hdr *)((uint8_t *)(h + 1) + n);
			r->tag = MAGIC | F_FREE | T_LARGE;
			r->size = h->size - n - sizeof *r;
			LNEXT(r) = *link;
			*link = r;
			h->size = n;
		}
		h->tag = MAGIC | T_LARGE;
		large_live += sizeof *h + h->size;
		return given(h, pc);
	}
	struct hdr *h = carve(n + sizeof *h);
	if (h == NULL)
		return NULL;
	h->tag = MAGIC | T_LARGE;
	h->size = n;
	large_live += sizeof *h + h->size;
	return given(h, pc);
}

static void large_free(struct hdr *h)
{
	taken_back(h);
	large_live -= sizeof *h + h->size;
	h->tag = MAGIC | F_FREE | T_LARGE;
	/* Its place by address (link points at where it goes, plink at the
	 * link to the block before it); merged with the free blocks before
	 * and after it when they touch. */
	struct hdr **link = &large, **plink = &large, *prev = NULL;
	while (*link && *link < h) {
		plink = link;
		prev = *link;
		link = &LNEXT(prev);
	}
	struct hdr *next = *link;
	if (next && LEND(h) == (uint8_t *)next) {
		h->size += sizeof *next + next->size;
		next = LNEXT(next);
	}
	LNEXT(h) = next;
	*link = h;
	if (prev && LEND(prev) == (uint8_t *)h) {
		prev->size += sizeof *h + h->size;
		LNEXT(prev) = next;
		h = prev;
		link = plink;
	}
	/* The last block below the top goes back to it. */
	if (LEND(h) == top) {
		*link = LNEXT(h);
		top = (uint8_t *)h;
	}
}

/* ---- the interface ------------------------------------------------------------------- */

/* malloc's work, under another name: GCC turns malloc followed by a
 * memset to 0 into a call of calloc, which here would call itself. */
static void *alloc(size_t n, uintptr_t pc)
{
	if (n > SIZE_MAX / 2) {
		errno = ENOMEM;
		return NULL;
	}
	if (nclass == 0)
		classes();
	void *p;
	if (n <= SMALL_MAX) {
		int c = class_of(n);
		struct hdr *h = cfree_[c];
		if (h != NULL) {
			cfree_[c] = (struct hdr *)(uintptr_t)h->size;
			h->size = csize[c];
			cidle[c]--;
		} else if ((h = carve(csize[c] + sizeof *h)) != NULL) {
			h->size = csize[c];
		}
		p = NULL;
		if (h != NULL) {
			h->tag = MAGIC | (uint32_t)c;
			clive[c]++;
			p = given(h, pc);
		}
	} else {
		p = large_alloc((n + ALIGN - 1) & ~(size_t)(ALIGN - 1), pc);
	}
	if (p == NULL)
		errno = ENOMEM;
	return p;
}

#define CALLER() ((uintptr_t)__builtin_return_address(0))

void *malloc(size_t n)
{
	return alloc(n, CALLER());
}

void free(void *p)
{
	if (p == NULL)
		return;
	struct hdr *h = hdr_of(p, "free of a pointer it did not give out:");
	if (h->tag & F_FREE)
		fail("free of a block already freed:", p);
	uint32_t t = h->tag & 0xff;
	if (t == T_ALIGNED) {
		free((uint8_t *)p - h->size);
	} else if (t == T_LARGE) {
		large_free(h);
	} else {
		taken_back(h);
		clive[t]--;
		cidle[t]++;
		h->tag |= F_FREE;
		h->size = (uint64_t)(uintptr_t)cfree_[t];
		cfree_[t] = h;
	}
}

void cfree(void *p)
{
	free(p);
}

size_t malloc_usable_size(void *p)
{
	if (p == NULL)
		return 0;
	struct hdr *h = hdr_of(p, "malloc_usable_size of a pointer it did not give out:");
	if ((h->tag & 0xff) == T_ALIGNED)
		return malloc_usable_size((uint8_t *)p - h->size) - h->size;
	return h->size;
}

void *calloc(size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = alloc(n * size, CALLER());
	if (p != NULL)
		memset(p, 0, n * size);
	return p;
}

void *realloc(void *p, size_t n)
{
	if (p == NULL)
		return alloc(n, CALLER());
	if (n == 0) {
		free(p);
		return NULL;
	}
	struct hdr *h = hdr_of(p, "realloc of a pointer it did not give out:");
	if (h->tag & F_FREE)
		fail("realloc of a freed block:", p);
	size_t have = malloc_usable_size(p);
	if (n <= have)
		return p;
	if ((h->tag & 0xff) == T_LARGE && LEND(h) == top && n <= SIZE_MAX / 2) {
		/* The block just below the top grows where it is. */
		size_t more = ((n + ALIGN - 1) & ~(size_t)(ALIGN - 1)) - h->size;
		uint8_t *r = carve(more);
		if (r == LEND(h)) {
			h->size += more;
			large_live += more;
			if (h->site != 0)
				sites[h->site - 1].bytes += more;
			return p;
		}
		if (r != NULL)
			top = r;           /* (the heap moved elsewhere: give them back) */
	}
	void *q = alloc(n, CALLER());
	if (q == NULL)
		return NULL;
	memcpy(q, p, have);
	free(p);
	return q;
}

static void *aligned(size_t align, size_t n, uintptr_t pc)
{
	if (align <= ALIGN)
		return alloc(n, pc);
	if ((align & (align - 1)) != 0 || n > SIZE_MAX / 4 || align > SIZE_MAX / 4) {
		errno = EINVAL;
		return NULL;
	}
	uint8_t *p = alloc(n + align + sizeof(struct hdr), pc);
	if (p == NULL)
		return NULL;
	if (((uintptr_t)p & (align - 1)) == 0)
		return p;
	uint8_t *q = (uint8_t *)(((uintptr_t)p + sizeof(struct hdr) + align - 1) & ~(uintptr_t)(align - 1));
	struct hdr *h = (struct hdr *)q - 1;
	h->tag = MAGIC | T_ALIGNED;
	h->site = 0;
	h->size = (uint64_t)(q - p);
	return q;
}

void *memalign(size_t align, size_t n)
{
	return aligned(align, n, CALLER());
}

void *aligned_alloc(size_t align, size_t n)
{
	return aligned(align, n, CALLER());
}

int posix_memalign(void **out, size_t align, size_t n)
{
	if (align < sizeof(void *) || (align & (align - 1)) != 0)
		return EINVAL;
	void *p = aligned(align, n, CALLER());
	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return aligned(4096, n, CALLER());
}

void *pvalloc(size_t n)
{
	return aligned(4096, (n + 4095) & ~(size_t)4095, CALLER());
}

/* ---- the census -------------------------------------------------------------------- */

int malloc_census(struct malloc_census *c)
{
	if (nclass == 0)
		classes();
	memset(c, 0, sizeof *c);
	c->heap = heap_bytes;
	c->top = (uint64_t)(end - top);
	c->nclass = nclass;
	for (int i = 0; i < nclass; i++) {
		c->cls[i] = (struct malloc_class){ csize[i], clive[i], cidle[i] };
		c->small_live += clive[i] * (csize[i] + sizeof(struct hdr));
		c->small_idle += cidle[i] * (csize[i] + sizeof(struct hdr));
	}
	c->large_live = large_live;
	for (struct hdr *h = large; h; h = LNEXT(h))
		c->large_idle += sizeof *h + h->size;
	return 0;
}

void malloc_sites(int on)
{
	sites_on = on;
}

int malloc_site_list(struct malloc_site *out, int max)
{
	int n = 0;
	for (int i = 0; i < MALLOC_SITES; i++) {
		if (sites[i].allocs == 0)
			continue;
		/* Insertion by live bytes, the most first: the table is small. */
		int j = n < max ? n++ : max;
		while (j > 0 && out[j - 1].bytes < sites[i].bytes) {
			if (j < max)
				out[j] = out[j - 1];
			j--;
		}
		if (j < max)
			out[j] = sites[i];
	}
	return n;
}

#else

int malloc_census(struct malloc_census *c)
{
	memset(c, 0, sizeof *c);
	return -1;
}

void malloc_sites(int on)
{
	(void)on;
}

int malloc_site_list(struct malloc_site *out, int max)
{
	(void)out;
	(void)max;
	return 0;
}
#endif
