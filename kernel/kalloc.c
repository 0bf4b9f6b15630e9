/*
 * kalloc.c - physical page allocator: a bitmap of free pages plus a
 * reference count per page.
 *
 * A bitmap (rather than xv6's free list) lets drivers ask for physically
 * contiguous runs, which virtqueues need.  Single-page allocation scans from a
 * rotating hint a word at a time, so it stays cheap.  Reference counts exist
 * for disk I/O into application memory: the request holds a reference on every
 * page it targets, so a process that exits mid-I/O cannot have its pages
 * reused while the device still writes into them.
 */
#include "kernel/kalloc.h"
#include "kernel/klib.h"
#include "kernel/arch.h"

#define MAX_RESERVED 8

static uint64_t base_pa, npages;     /* the managed range */
static uint64_t *freebits;           /* bit set = page free */
static uint16_t *refcnt;
static uint64_t nfree, hint;
/* Mirror of nfree in the exported kernel-information page, once it exists. */
static volatile uint64_t *exported_free;

void kalloc_export(volatile uint64_t *counter)
{
	exported_free = counter;
	*counter = nfree;
}

static void set_nfree(uint64_t n)
{
	nfree = n;
	if (exported_free) *exported_free = n;
}
static struct { uint64_t start, end; } reserved[MAX_RESERVED];
static int nreserved;

static inline uint64_t pgindex(void *pa) { return ((uint64_t)pa - base_pa) >> PGSHIFT; }
static inline void *pgaddr(uint64_t i)   { return (void *)(base_pa + (i << PGSHIFT)); }
static inline bool is_free(uint64_t i)   { return (freebits[i / 64] >> (i % 64)) & 1; }
static inline void set_free(uint64_t i)  { freebits[i / 64] |= 1ull << (i % 64); }
static inline void set_used(uint64_t i)  { freebits[i / 64] &= ~(1ull << (i % 64)); }

void kalloc_reserve(uint64_t start, uint64_t end)
{
	if (nreserved == MAX_RESERVED) panic("kalloc: too many reserved ranges");
	reserved[nreserved].start = PGROUNDDOWN(start);
	reserved[nreserved].end = PGROUNDUP(end);
	nreserved++;
}

static bool in_reserved(uint64_t pa)
{
	for (int i = 0; i < nreserved; i++)
		if (pa >= reserved[i].start && pa < reserved[i].end) return true;
	return false;
}

/* Manage [start, end).  The bitmap and counts are carved from the first
 * stretch of it that no reserved range touches (on x86-64 the initrd sits
 * right after the kernel). */
void kalloc_init(uint64_t start, uint64_t end)
{
	start = PGROUNDUP(start);
	end = PGROUNDDOWN(end);
	uint64_t pages = (end - start) >> PGSHIFT;
	uint64_t meta = PGROUNDUP((pages + 63) / 64 * 8 + pages * sizeof(uint16_t));
	uint64_t m = start;
	for (bool moved = true; moved;) {
		moved = false;
		for (int i = 0; i < nreserved; i++)
			if (m < reserved[i].end && reserved[i].start < m + meta) {
				m = reserved[i].end;
				moved = true;
			}
	}
	if (m + meta > end) panic("kalloc: no room for the page map");
	freebits = (uint64_t *)m;
	refcnt = (uint16_t *)(m + (pages + 63) / 64 * 8);
	memset(freebits, 0, meta);
	base_pa = start;
	npages = pages;
	for (uint64_t i = 0; i < npages; i++) {
		uint64_t pa = (uint64_t)pgaddr(i);
		if (in_reserved(pa) || (pa >= m && pa < m + meta)) continue;
		set_free(i);
		nfree++;
	}
}

static void *take(uint64_t i, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		set_used(i + k);
		refcnt[i + k] = 1;
	}
	set_nfree(nfree - n);
	void *p = pgaddr(i);
	memset(p, 0, n * PGSIZE);
	return p;
}

void *kalloc(void)
{
	uint64_t words = (npages + 63) / 64;
	for (uint64_t k = 0; k < words; k++) {
		uint64_t w = (hint + k) % words;
		if (freebits[w] == 0) continue;
		uint64_t i = w * 64 + (uint64_t)__builtin_ctzll(freebits[w]);
		if (i >= npages) continue;
		hint = w;
		return take(i, 1);
	}
	return NULL;
}

void *kalloc_contig(size_t n)
{
	if (n == 0) return NULL;
	uint64_t run = 0;
	for (uint64_t i = 0; i < npages; i++) {
		run = is_free(i) ? run + 1 : 0;
		if (run == n) return take(i + 1 - n, n);
	}
	return NULL;
}

static uint64_t checked_index(void *pa, const char *who)
{
	if ((uint64_t)pa & (PGSIZE - 1) || (uint64_t)pa < base_pa || pgindex(pa) >= npages)
		panic("%s: bad page %p", who, pa);
	uint64_t i = pgindex(pa);
	if (is_free(i)) panic("%s: page %p is free", who, pa);
	return i;
}

void kfree(void *pa)
{
	uint64_t i = checked_index(pa, "kfree");
	if (--refcnt[i] > 0) return;
	set_free(i);
	set_nfree(nfree + 1);
}

void kfree_contig(void *pa, size_t n)
{
	for (size_t k = 0; k < n; k++) kfree((char *)pa + k * PGSIZE);
}

void kref(void *pa)
{
	uint64_t i = checked_index(pa, "kref");
	if (refcnt[i] == UINT16_MAX) panic("kref: count overflow on %p", pa);
	refcnt[i]++;
}

int krefcount(void *pa)
{
	return refcnt[checked_index(pa, "krefcount")];
}

uint64_t kalloc_free_pages(void)  { return nfree; }
uint64_t kalloc_total_pages(void) { return npages; }
