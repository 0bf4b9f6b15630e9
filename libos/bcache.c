/*
 * bcache.c - the application-level buffer cache (see bcache.h): a hash
 * table of blocks and an LRU list.  Free buffers sit at the tail of the
 * list, so taking the tail-most replaceable buffer uses free ones first.
 * A buffer's memory is allocated the first time it is used, so a large
 * cache costs only what a program fills of it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/bcache.h"

static uint32_t hashof(const struct bcache *bc, uint64_t owner, uint64_t lblk)
{
	uint64_t h = (owner * 0x9e3779b97f4a7c15ull) ^ (lblk + 0x632be59bd9b4e019ull);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (uint32_t)((h >> 32) % bc->nhash);
}

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

int bc_init(struct bcache *bc, uint32_t nbufs)
{
	memset(bc, 0, sizeof *bc);
	if (nbufs < 4)
		nbufs = 4;
	bc->nbufs = nbufs;
	bc->nhash = nbufs * 2 + 1;
	bc->bufs = calloc(nbufs, sizeof *bc->bufs);
	bc->hash = calloc(bc->nhash, sizeof *bc->hash);
	if (!bc->bufs || !bc->hash) {
		bc_destroy(bc);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nbufs; i++)
		lru_back(bc, &bc->bufs[i]);
	return 0;
}

void bc_destroy(struct bcache *bc)
{
	for (uint32_t i = 0; bc->bufs && i < bc->nbufs; i++)
		free(bc->bufs[i].data);
	free(bc->bufs);
	free(bc->hash);
	memset(bc, 0, sizeof *bc);
}

struct bbuf *bc_lookup(struct bcache *bc, uint64_t owner, uint64_t lblk)
{
	for (struct bbuf *b = bc->hash[hashof(bc, owner, lblk)]; b; b = b->hnext)
		if (b->owner == owner && b->lblk == lblk) {
			lru_unlink(bc, b);
			lru_front(bc, b);
			bc->hits++;
			return b;
		}
	return NULL;
}

static void unhash(struct bcache *bc, struct bbuf *b)
{
	struct bbuf **pp = &bc->hash[hashof(bc, b->owner, b->lblk)];
	while (*pp != b)
		pp = &(*pp)->hnext;
	*pp = b->hnext;
	b->hnext = NULL;
}

/* Make b free and put it at the tail. */
static void release(struct bcache *bc, struct bbuf *b)
{
	if (b->used) {
		unhash(bc, b);
		bc->nused--;
	}
	if (b->flags & BB_DIRTY)
		bc->ndirty--;
	b->used = 0;
	b->flags = 0;
	b->pins = 0;
	lru_unlink(bc, b);
	lru_back(bc, b);
}

struct bbuf *bc_get(struct bcache *bc, uint64_t owner, uint64_t lblk)
{
	struct bbuf *b = bc_lookup(bc, owner, lblk);
	if (b != NULL)
		return b;
	bc->misses++;
	for (b = bc->tail; b != NULL; b = b->prev)
		if (!(b->flags & BB_DIRTY) && b->pins == 0)
			break;
	if (b == NULL)
		return NULL;
	if (b->data == NULL && (b->data = malloc(BC_BSIZE)) == NULL)
		return NULL;             /* no memory: as if every block were dirty */
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
	lru_unlink(bc, b);
	lru_front(bc, b);
	return b;
}

void bc_pin(struct bbuf *b) { b->pins++; }
void bc_unpin(struct bbuf *b) { if (b->pins > 0) b->pins--; }

void bc_dirty(struct bcache *bc, struct bbuf *b)
{
	if (!(b->flags & BB_DIRTY))
		bc->ndirty++;
	b->flags |= BB_DIRTY | BB_VALID;
}

void bc_clean(struct bcache *bc, struct bbuf *b)
{
	if (b->flags & BB_DIRTY)
		bc->ndirty--;
	b->flags &= ~BB_DIRTY;
}

void bc_drop(struct bcache *bc, uint64_t owner, uint64_t from)
{
	for (uint32_t i = 0; bc->nused > 0 && i < bc->nbufs; i++) {
		struct bbuf *b = &bc->bufs[i];
		if (b->used && b->owner == owner && b->lblk >= from)
			release(bc, b);
	}
}

void bc_drop_range(struct bcache *bc, uint64_t owner, uint64_t from, uint64_t to)
{
	if (bc->nused == 0)
		return;
	if (to - from <= 64) {
		/* A short range (a write of a few blocks): look each one up
		 * rather than scanning every buffer. */
		for (uint64_t l = from; l < to; l++)
			for (struct bbuf *b = bc->hash[hashof(bc, owner, l)]; b; b = b->hnext)
				if (b->owner == owner && b->lblk == l) {
					release(bc, b);
					break;
				}
		return;
	}
	for (uint32_t i = 0; bc->nused > 0 && i < bc->nbufs; i++) {
		struct bbuf *b = &bc->bufs[i];
		if (b->used && b->owner == owner && b->lblk >= from && b->lblk < to)
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
	for (uint32_t i = 0; i < bc->nbufs && n < max; i++) {
		struct bbuf *b = &bc->bufs[i];
		if (b->used && (b->flags & BB_DIRTY) && (all || (b->owner == owner && b->lblk >= from)))
			out[n++] = b;
	}
	qsort(out, n, sizeof *out, cmp_buf);
	return n;
}

uint32_t bc_count(struct bcache *bc, uint64_t owner, uint64_t from, uint64_t to, int dirty_only)
{
	uint32_t n = 0;
	if (bc->nused == 0 || (dirty_only && bc->ndirty == 0))
		return 0;
	if (to - from <= 64) {
		/* A short range: look each block up. */
		for (uint64_t l = from; l < to; l++)
			for (struct bbuf *b = bc->hash[hashof(bc, owner, l)]; b; b = b->hnext)
				if (b->owner == owner && b->lblk == l && (!dirty_only || (b->flags & BB_DIRTY)))
					n++;
		return n;
	}
	for (uint32_t i = 0; i < bc->nbufs; i++) {
		struct bbuf *b = &bc->bufs[i];
		if (b->used && b->owner == owner && b->lblk >= from && b->lblk < to &&
		    (!dirty_only || (b->flags & BB_DIRTY)))
			n++;
	}
	return n;
}
