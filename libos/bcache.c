/*
 * bcache.c - the application-level buffer cache (see bcache.h): a hash
 * table of blocks, an LRU list of clean ones, a list of dirty ones, and a
 * list of each owner's blocks (owners found through a hash table of their
 * own).  Free buffers sit at the tail of the LRU list, so taking the
 * tail-most unpinned buffer uses free ones first.  Buffer memory comes in
 * slabs of BC_SLAB blocks the first time a buffer of the slab is used, so
 * a large cache costs only what a program fills of it, and filling it
 * costs one malloc per slab, not per block.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/bcache.h"

#define BC_SLAB 16u                      /* blocks per allocation: 64 KiB */
#define BC_PARK_WAIT 64u                 /* replacements between asks for memory */

static uint32_t mix(uint64_t h, uint32_t n)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)((h >> 32) % n);
}

static uint32_t hashof(const struct bcache *bc, uint64_t owner, uint64_t lblk)
{
	return mix((owner * 0x9e3779b97f4a7c15ull) ^ (lblk + 0x632be59bd9b4e019ull), bc->nhash);
}

static uint32_t ohashof(const struct bcache *bc, uint64_t owner)
{
	return mix(owner * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull, bc->nhash);
}

/* ---- the LRU and dirty lists (a buffer is on one of them, or parked) ---- */

static void lru_unlink(struct bcache *bc, struct bbuf *b)
{
	if (b->prev) b->prev->next = b->next; else bc->head = b->next;
	if (b->next) b->next->prev = b->prev; else bc->tail = b->prev;
	b->prev = b->next = NULL;
}

static void lru_front(struct bcache *bc, struct bbuf *b)
{
	b->prev = NULL;
	b->next = bc->head;
	if (bc->head) bc->head->prev = b; else bc->tail = b;
	bc->head = b;
}

static void lru_back(struct bcache *bc, struct bbuf *b)
{
	b->next = NULL;
	b->prev = bc->tail;
	if (bc->tail) bc->tail->next = b; else bc->head = b;
	bc->tail = b;
}

static void dirty_unlink(struct bcache *bc, struct bbuf *b)
{
	if (b->prev) b->prev->next = b->next; else bc->dhead = b->next;
	if (b->next) b->next->prev = b->prev; else bc->dtail = b->prev;
	b->prev = b->next = NULL;
}

static void dirty_back(struct bcache *bc, struct bbuf *b)
{
	b->next = NULL;
	b->prev = bc->dtail;
	if (bc->dtail) bc->dtail->next = b; else bc->dhead = b;
	bc->dtail = b;
}

/* ---- owners ----------------------------------------------------------------- */

static struct bown *own_find(const struct bcache *bc, uint64_t owner)
{
	for (struct bown *o = bc->ohash[ohashof(bc, owner)]; o; o = o->hnext)
		if (o->owner == owner)
			return o;
	return NULL;
}

/* Put b (just named) on its owner's list; there is always a free record,
 * since owners with blocks are never more than buffers. */
static void own_attach(struct bcache *bc, struct bbuf *b)
{
	struct bown *o = own_find(bc, b->owner);
	if (o == NULL) {
		o = bc->ofree;
		bc->ofree = o->hnext;
		uint32_t h = ohashof(bc, b->owner);
		*o = (struct bown){ b->owner, NULL, 0, 0, bc->ohash[h] };
		bc->ohash[h] = o;
	}
	b->own = o;
	b->oprev = NULL;
	b->onext = o->first;
	if (o->first)
		o->first->oprev = b;
	o->first = b;
	o->n++;
}

static void own_detach(struct bcache *bc, struct bbuf *b)
{
	struct bown *o = b->own;
	if (b->oprev) b->oprev->onext = b->onext; else o->first = b->onext;
	if (b->onext) b->onext->oprev = b->oprev;
	b->oprev = b->onext = NULL;
	b->own = NULL;
	if (--o->n == 0) {
		struct bown **pp = &bc->ohash[ohashof(bc, o->owner)];
		while (*pp != o)
			pp = &(*pp)->hnext;
		*pp = o->hnext;
		o->hnext = bc->ofree;
		bc->ofree = o;
	}
}

/* ---- the cache ----------------------------------------------------------------- */

#define BC_FIRST 256u                    /* buffers made at first        */

/* Hash tables for cap buffers, everything named rehashed into them. */
static int rehash(struct bcache *bc, uint32_t cap)
{
	uint32_t nhash = cap * 2 + 1;
	struct bbuf **hash = calloc(nhash, sizeof *hash);
	struct bown **ohash = calloc(nhash, sizeof *ohash);
	if (hash == NULL || ohash == NULL) {
		free(hash);
		free(ohash);
		return -ENOMEM;
	}
	struct bbuf **oldh = bc->hash;
	struct bown **oldo = bc->ohash;
	uint32_t oldn = bc->nhash;
	bc->hash = hash;
	bc->ohash = ohash;
	bc->nhash = nhash;
	for (uint32_t i = 0; i < oldn; i++) {
		for (struct bbuf *b = oldh[i], *next; b != NULL; b = next) {
			next = b->hnext;
			uint32_t h = hashof(bc, b->owner, b->lblk);
			b->hnext = hash[h];
			hash[h] = b;
		}
		for (struct bown *o = oldo[i], *next; o != NULL; o = next) {
			next = o->hnext;
			uint32_t h = ohashof(bc, o->owner);
			o->hnext = ohash[h];
			ohash[h] = o;
		}
	}
	free(oldh);
	free(oldo);
	return 0;
}

/* Make more buffers (as many as there are, up to nbufs), free, at the
 * tail of the LRU list; 0 or -ENOMEM. */
static int grow(struct bcache *bc)
{
	uint32_t n = bc->cap == 0 ? BC_FIRST : bc->cap;
	if (n > bc->nbufs - bc->cap)
		n = bc->nbufs - bc->cap;
	if (n == 0 || bc->nchunks == BC_CHUNKS)
		return -ENOMEM;
	struct bbuf *bufs = calloc(n, sizeof *bufs);
	struct bown *owns = calloc(n, sizeof *owns);
	if (bufs == NULL || owns == NULL || rehash(bc, bc->cap + n) < 0) {
		free(bufs);
		free(owns);
		return -ENOMEM;
	}
	bc->chunk[bc->nchunks] = bufs;
	bc->ochunk[bc->nchunks++] = owns;
	for (uint32_t i = 0; i < n; i++) {
		bufs[i].idx = bc->cap + i;
		lru_back(bc, &bufs[i]);
		owns[i].hnext = bc->ofree;
		bc->ofree = &owns[i];
	}
	bc->cap += n;
	return 0;
}

int bc_init(struct bcache *bc, uint32_t nbufs)
{
	memset(bc, 0, sizeof *bc);
	if (nbufs < 4)
		nbufs = 4;
	bc->nbufs = nbufs;
	bc->alloc = malloc;
	bc->slabs = calloc((nbufs + BC_SLAB - 1) / BC_SLAB, sizeof *bc->slabs);
	if (bc->slabs == NULL || grow(bc) < 0) {
		bc_destroy(bc);
		return -ENOMEM;
	}
	return 0;
}

void bc_destroy(struct bcache *bc)
{
	for (uint32_t i = 0; bc->slabs && i < (bc->nbufs + BC_SLAB - 1) / BC_SLAB; i++)
		free(bc->slabs[i]);
	for (uint32_t i = 0; i < bc->nchunks; i++) {
		free(bc->chunk[i]);
		free(bc->ochunk[i]);
	}
	free(bc->slabs);
	free(bc->hash);
	free(bc->ohash);
	memset(bc, 0, sizeof *bc);
}

static struct bbuf *find(struct bcache *bc, uint64_t owner, uint64_t lblk)
{
	for (struct bbuf *b = bc->hash[hashof(bc, owner, lblk)]; b; b = b->hnext) {
		bc->visits++;
		if (b->owner == owner && b->lblk == lblk && b->used)
			return b;
	}
	return NULL;
}

struct bbuf *bc_lookup(struct bcache *bc, uint64_t owner, uint64_t lblk)
{
	struct bbuf *b = find(bc, owner, lblk);
	if (b == NULL)
		return NULL;
	if (!(b->flags & BB_DIRTY)) {
		lru_unlink(bc, b);
		lru_front(bc, b);
	}
	bc->hits++;
	return b;
}

static void unhash(struct bcache *bc, struct bbuf *b)
{
	struct bbuf **pp = &bc->hash[hashof(bc, b->owner, b->lblk)];
	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	b->hnext = NULL;
}

/* Make b free and put it at the tail of the LRU list. */
static void release(struct bcache *bc, struct bbuf *b)
{
	if (b->flags & BB_DIRTY) {
		bc->ndirty--;
		b->own->ndirty--;
		dirty_unlink(bc, b);
	} else {
		lru_unlink(bc, b);
	}
	if (b->used) {
		unhash(bc, b);
		own_detach(bc, b);
		bc->nused--;
	}
	b->used = 0;
	b->flags = 0;
	b->pins = 0;
	lru_back(bc, b);
}

/* Memory for b's slab; 0 or -ENOMEM. */
static int give_memory(struct bcache *bc, struct bbuf *b)
{
	/* Buffers are made in chunks of whole slabs (BC_FIRST and every
	 * chunk after it are multiples of BC_SLAB, but for the last), so a
	 * slab's buffers are consecutive in b's chunk. */
	uint32_t s = b->idx / BC_SLAB, first = s * BC_SLAB;
	uint32_t n = bc->cap - first < BC_SLAB ? bc->cap - first : BC_SLAB;
	if (bc->slabs[s] == NULL && (bc->slabs[s] = bc->alloc((size_t)BC_SLAB * BC_BSIZE)) == NULL)
		return -ENOMEM;
	struct bbuf *b0 = b - (b->idx - first);
	for (uint32_t k = 0; k < n; k++)
		b0[k].data = bc->slabs[s] + (size_t)k * BC_BSIZE;
	return 0;
}

/* Out of memory: the free buffers that have none leave the LRU list for
 * the parked list, so the cache is as large as what it has and finding a
 * buffer to replace does not walk past them.  Free buffers are always
 * behind every used one on the LRU list (they go to its tail, used ones to
 * its head), so the walk stops at the first used one. */
static void park_memoryless(struct bcache *bc)
{
	for (struct bbuf *b = bc->tail, *prev; b != NULL && !b->used; b = prev) {
		prev = b->prev;
		if (b->data == NULL) {
			lru_unlink(bc, b);
			b->parked = 1;
			b->next = bc->parked;
			bc->parked = b;
			bc->nparked++;
		}
	}
	bc->park_wait = BC_PARK_WAIT;
}

/* Memory again for the parked buffers of one slab (they go back, free, to
 * the tail of the LRU list); 0, or -ENOMEM: ask again BC_PARK_WAIT
 * replacements later. */
static int unpark(struct bcache *bc)
{
	if (give_memory(bc, bc->parked) < 0) {
		bc->park_wait = BC_PARK_WAIT;
		return -ENOMEM;
	}
	for (struct bbuf **pp = &bc->parked; *pp != NULL;) {
		struct bbuf *b = *pp;
		if (b->data == NULL) {
			pp = &b->next;
			continue;
		}
		*pp = b->next;
		b->parked = 0;
		bc->nparked--;
		lru_back(bc, b);
	}
	return 0;
}

struct bbuf *bc_get(struct bcache *bc, uint64_t owner, uint64_t lblk)
{
	struct bbuf *b = bc_lookup(bc, owner, lblk);
	if (b != NULL)
		return b;
	bc->misses++;
	for (;;) {
		/* Everything on the LRU list is clean: skip only pinned ones.
		 * When none is free, make more buffers if it may. */
		for (b = bc->tail; b != NULL && b->pins != 0; b = b->prev)
			bc->visits++;
		int full = b == NULL || b->used;
		/* Memory was short: buffers waiting for it come first, and no
		 * more are made meanwhile (each would only be parked too). */
		if (full && bc->parked != NULL && (bc->park_wait == 0 || b == NULL) && unpark(bc) == 0)
			continue;
		if (full && bc->parked != NULL && bc->park_wait > 0)
			bc->park_wait--;
		if (full && bc->parked == NULL && bc->cap < bc->nbufs && grow(bc) == 0)
			continue;
		if (b == NULL)
			return NULL;
		if (b->data != NULL || give_memory(bc, b) == 0)
			break;
		park_memoryless(bc);
	}
	if (b->used)
		bc->evictions++;
	release(bc, b);
	b->owner = owner;
	b->lblk = lblk;
	b->used = 1;
	bc->nused++;
	uint32_t h = hashof(bc, owner, lblk);
	b->hnext = bc->hash[h];
	bc->hash[h] = b;
	own_attach(bc, b);
	lru_unlink(bc, b);
	lru_front(bc, b);
	return b;
}

void bc_pin(struct bbuf *b) { b->pins++; }
void bc_unpin(struct bbuf *b) { if (b->pins > 0) b->pins--; }

void bc_dirty(struct bcache *bc, struct bbuf *b)
{
	if (!(b->flags & BB_DIRTY)) {
		bc->ndirty++;
		b->own->ndirty++;
		lru_unlink(bc, b);
		dirty_back(bc, b);
	}
	b->flags |= BB_DIRTY | BB_VALID;
}

void bc_clean(struct bcache *bc, struct bbuf *b)
{
	if (b->flags & BB_DIRTY) {
		bc->ndirty--;
		b->own->ndirty--;
		dirty_unlink(bc, b);
		lru_front(bc, b);
	}
	b->flags &= ~BB_DIRTY;
}

void bc_drop(struct bcache *bc, uint64_t owner, uint64_t from)
{
	struct bown *o = own_find(bc, owner);
	if (o == NULL)
		return;
	/* Releasing the owner's last block frees o: stop by count. */
	uint32_t left = o->n;
	for (struct bbuf *b = o->first, *next; left > 0; b = next, left--) {
		bc->visits++;
		next = b->onext;
		if (b->lblk >= from)
			release(bc, b);
	}
}

void bc_drop_range(struct bcache *bc, uint64_t owner, uint64_t from, uint64_t to)
{
	struct bown *o = own_find(bc, owner);
	if (o == NULL || from >= to)
		return;
	if (to - from <= o->n) {
		/* A short range (a write of a few blocks): look each one up. */
		for (uint64_t l = from; l < to; l++) {
			struct bbuf *b = find(bc, owner, l);
			if (b != NULL)
				release(bc, b);
		}
		return;
	}
	uint32_t left = o->n;
	for (struct bbuf *b = o->first, *next; left > 0; b = next, left--) {
		bc->visits++;
		next = b->onext;
		if (b->lblk >= from && b->lblk < to)
			release(bc, b);
	}
}

static int cmp_buf(const void *x, const void *y)
{
	const struct bbuf *a = *(struct bbuf *const *)x, *b = *(struct bbuf *const *)y;
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	if (a->lblk != b->lblk)
		return a->lblk < b->lblk ? -1 : 1;
	return 0;
}

uint32_t bc_dirty_list(struct bcache *bc, int all, uint64_t owner, uint64_t from,
                       struct bbuf **out, uint32_t max)
{
	uint32_t n = 0;
	if (all) {
		for (struct bbuf *b = bc->dhead; b != NULL && n < max; b = b->next)
			out[n++] = b;
	} else {
		struct bown *o = own_find(bc, owner);
		uint32_t want = o ? o->ndirty : 0;
		for (struct bbuf *b = want ? o->first : NULL; b != NULL && n < max && want > 0; b = b->onext) {
			bc->visits++;
			if (b->flags & BB_DIRTY) {
				want--;
				if (b->lblk >= from)
					out[n++] = b;
			}
		}
	}
	qsort(out, n, sizeof *out, cmp_buf);
	return n;
}

uint32_t bc_count(struct bcache *bc, uint64_t owner, uint64_t from, uint64_t to, int dirty_only)
{
	struct bown *o = own_find(bc, owner);
	if (o == NULL || from >= to || (dirty_only && o->ndirty == 0))
		return 0;
	if (from == 0 && to == UINT64_MAX)
		return dirty_only ? o->ndirty : o->n;
	uint32_t n = 0;
	if (to - from <= o->n) {
		/* A short range: look each block up. */
		for (uint64_t l = from; l < to; l++) {
			struct bbuf *b = find(bc, owner, l);
			if (b != NULL && (!dirty_only || (b->flags & BB_DIRTY)))
				n++;
		}
		return n;
	}
	for (struct bbuf *b = o->first; b != NULL; b = b->onext) {
		bc->visits++;
		if (b->lblk >= from && b->lblk < to && (!dirty_only || (b->flags & BB_DIRTY)))
			n++;
	}
	return n;
}

uint32_t bc_owner_blocks(struct bcache *bc, uint64_t owner, uint32_t *ndirty)
{
	struct bown *o = own_find(bc, owner);
	if (ndirty)
		*ndirty = o ? o->ndirty : 0;
	return o ? o->n : 0;
}
