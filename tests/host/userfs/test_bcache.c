/*
 * test_bcache.c - libos/bcache against a model: random gets, lookups,
 * writes (dirty), write-backs (clean), pins, drops of an owner's tail or
 * of a range, dirty lists and counts, over a few owners, with caches
 * smaller and larger than what is asked of them.  After every operation
 * the cache's counters and lists must agree with the model, and a block
 * must keep its bytes while it is cached.  Then the costs bcache.h
 * promises: with 100,000 buffers mostly dirty, dropping a small owner's
 * blocks, listing its dirty ones and finding a clean block to replace
 * must not walk the cache: the buffers looked at per file (bc->visits)
 * are about the same as in a 64-buffer cache.  And memory running out
 * while the cache fills, then coming back (memory_pressure).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/bcache.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { if (failures++ < 20) { printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } } while (0)

#define OWNERS 5
#define BLOCKS 64

/* The model: what is cached, its stamp, and whether it is dirty. */
struct mblock { int cached, dirty; uint32_t stamp; };
static struct mblock m[OWNERS][BLOCKS];
static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (uint32_t)(rng % n); }

/* The buffer naming (o, l), found without counting a use: on the LRU or
 * the dirty list. */
static struct bbuf *walk_find(struct bcache *bc, uint64_t o, uint64_t l)
{
	for (struct bbuf *b = bc->head; b; b = b->next)
		if (b->used && b->owner == o && b->lblk == l)
			return b;
	for (struct bbuf *b = bc->dhead; b; b = b->next)
		if (b->owner == o && b->lblk == l)
			return b;
	return NULL;
}

static void check_all(struct bcache *bc, int step)
{
	uint32_t used = 0, dirty = 0;
	for (int o = 0; o < OWNERS; o++) {
		uint32_t on = 0, od = 0;
		for (int l = 0; l < BLOCKS; l++) {
			/* Look without counting a use. */
			struct bbuf *b = walk_find(bc, (uint64_t)o, (uint64_t)l);
			CHECK(!!b == m[o][l].cached, "step %d: owner %d block %d cached %d, model %d", step, o, l, !!b,
			      m[o][l].cached);
			if (b == NULL || !m[o][l].cached)
				continue;
			CHECK(!!(b->flags & BB_DIRTY) == m[o][l].dirty, "step %d: dirty flag of %d/%d", step, o, l);
			uint32_t s;
			memcpy(&s, b->data, 4);
			CHECK(s == m[o][l].stamp, "step %d: %d/%d holds %u, model %u", step, o, l, s, m[o][l].stamp);
			on++;
			od += m[o][l].dirty;
		}
		uint32_t nd;
		CHECK(bc_owner_blocks(bc, (uint64_t)o, &nd) == on && nd == od, "step %d: owner %d counts", step, o);
		CHECK(bc_count(bc, (uint64_t)o, 0, UINT64_MAX, 1) == od, "step %d: owner %d dirty count", step, o);
		CHECK(bc_count(bc, (uint64_t)o, 0, 1000, 0) == on, "step %d: owner %d count by walk", step, o);
		used += on;
		dirty += od;
	}
	CHECK(bc->nused == used && bc->ndirty == dirty, "step %d: nused %u/%u ndirty %u/%u", step, bc->nused, used,
	      bc->ndirty, dirty);
	/* The lists: clean ones on the LRU list, dirty ones on the dirty list. */
	uint32_t nl = 0, ndl = 0;
	for (struct bbuf *b = bc->head; b; b = b->next, nl++)
		CHECK(!(b->flags & BB_DIRTY), "step %d: a dirty block on the LRU list", step);
	for (struct bbuf *b = bc->dhead; b; b = b->next, ndl++)
		CHECK(b->flags & BB_DIRTY, "step %d: a clean block on the dirty list", step);
	CHECK(ndl == dirty && nl == bc->cap - dirty, "step %d: lists %u + %u", step, nl, ndl);
	CHECK(bc->cap <= bc->nbufs, "step %d: %u buffers made, at most %u", step, bc->cap, bc->nbufs);
}

static void model_run(uint32_t nbufs, int steps)
{
	struct bcache bc;
	memset(m, 0, sizeof m);
	CHECK(bc_init(&bc, nbufs) == 0, "init");
	uint32_t stamp = 1;
	struct bbuf *pinned = NULL;
	for (int step = 0; step < steps && failures == 0; step++) {
		int o = (int)rnd(OWNERS), l = (int)rnd(BLOCKS);
		switch (rnd(10)) {
		case 0: case 1: case 2: {            /* read: get, fill if new */
			struct bbuf *b = bc_get(&bc, (uint64_t)o, (uint64_t)l);
			if (b == NULL) {
				/* Only when nothing can be replaced or made. */
				CHECK(bc.cap == bc.nbufs, "step %d: get failed with %u of %u made", step, bc.cap, bc.nbufs);
				uint32_t clean = 0;
				for (struct bbuf *x = bc.head; x; x = x->next)
					clean += x->pins == 0;
				CHECK(clean == 0, "step %d: get failed with %u replaceable", step, clean);
				break;
			}
			/* Whatever it replaced left the model. */
			for (int oo = 0; oo < OWNERS; oo++)
				for (int ll = 0; ll < BLOCKS; ll++)
					if (m[oo][ll].cached && !(oo == o && ll == l)) {
						if (walk_find(&bc, (uint64_t)oo, (uint64_t)ll) == NULL) {
							CHECK(!m[oo][ll].dirty, "step %d: dirty %d/%d replaced", step, oo, ll);
							m[oo][ll].cached = 0;
						}
					}
			if (!(b->flags & BB_VALID)) {
				CHECK(!m[o][l].cached, "step %d: cached block lost VALID", step);
				memcpy(b->data, &(uint32_t){ 0 }, 4);
				b->flags |= BB_VALID;
				m[o][l] = (struct mblock){ 1, 0, 0 };
			}
			break;
		}
		case 3: case 4: {                    /* write */
			struct bbuf *b = bc_get(&bc, (uint64_t)o, (uint64_t)l);
			if (b == NULL)
				break;
			for (int oo = 0; oo < OWNERS; oo++)
				for (int ll = 0; ll < BLOCKS; ll++)
					if (m[oo][ll].cached && !(oo == o && ll == l)) {
						if (walk_find(&bc, (uint64_t)oo, (uint64_t)ll) == NULL)
							m[oo][ll].cached = 0;
					}
			memcpy(b->data, &stamp, 4);
			bc_dirty(&bc, b);
			m[o][l] = (struct mblock){ 1, 1, stamp++ };
			break;
		}
		case 5: {                            /* write back an owner's dirty blocks from l */
			struct bbuf *list[OWNERS * BLOCKS];
			uint32_t n = bc_dirty_list(&bc, 0, (uint64_t)o, (uint64_t)l, list, OWNERS * BLOCKS);
			uint32_t want = 0;
			for (int ll = l; ll < BLOCKS; ll++)
				want += m[o][ll].cached && m[o][ll].dirty;
			CHECK(n == want, "step %d: dirty list %u, model %u", step, n, want);
			for (uint32_t i = 0; i < n; i++) {
				CHECK(list[i]->owner == (uint64_t)o && list[i]->lblk >= (uint64_t)l, "step %d: listed", step);
				CHECK(i == 0 || list[i - 1]->lblk < list[i]->lblk, "step %d: list order", step);
				bc_clean(&bc, list[i]);
				m[o][list[i]->lblk].dirty = 0;
			}
			break;
		}
		case 6: {                            /* truncate */
			if (pinned) {
				bc_unpin(pinned);
				pinned = NULL;
			}
			bc_drop(&bc, (uint64_t)o, (uint64_t)l);
			for (int ll = l; ll < BLOCKS; ll++)
				m[o][ll].cached = m[o][ll].dirty = 0;
			break;
		}
		case 7: {                            /* a range replaced */
			if (pinned) {
				bc_unpin(pinned);
				pinned = NULL;
			}
			int to = l + (int)rnd(BLOCKS - (uint32_t)l + 1);
			bc_drop_range(&bc, (uint64_t)o, (uint64_t)l, (uint64_t)to);
			for (int ll = l; ll < to; ll++)
				m[o][ll].cached = m[o][ll].dirty = 0;
			break;
		}
		case 8: {                            /* count a range */
			int to = l + (int)rnd(BLOCKS - (uint32_t)l + 1), dirty_only = (int)rnd(2);
			uint32_t want = 0;
			for (int ll = l; ll < to; ll++)
				want += m[o][ll].cached && (!dirty_only || m[o][ll].dirty);
			CHECK(bc_count(&bc, (uint64_t)o, (uint64_t)l, (uint64_t)to, dirty_only) == want,
			      "step %d: count [%d, %d) of %d", step, l, to, o);
			break;
		}
		default: {                           /* pin one cached block for a while */
			if (pinned) {
				bc_unpin(pinned);
				pinned = NULL;
			} else if (m[o][l].cached) {
				pinned = bc_lookup(&bc, (uint64_t)o, (uint64_t)l);
				CHECK(pinned != NULL, "step %d: lookup of a cached block", step);
				if (pinned)
					bc_pin(pinned);
			}
			break;
		}
		}
		check_all(&bc, step);
	}
	bc_destroy(&bc);
}

/* Small-file work (get, write, write back, drop: one block per owner)
 * beside a big owner's mostly dirty blocks: buffers looked at per file. */
static double small_files(uint32_t nbufs, uint32_t big_dirty)
{
	struct bcache bc;
	CHECK(bc_init(&bc, nbufs) == 0, "init %u", nbufs);
	for (uint32_t i = 0; i < big_dirty; i++) {
		struct bbuf *b = bc_get(&bc, 1, i);
		bc_dirty(&bc, b);
	}
	uint64_t v0 = bc.visits;
	for (uint64_t f = 0; f < 2000; f++) {
		struct bbuf *b = bc_get(&bc, 100 + f, 0), *list[4];
		CHECK(b != NULL, "get beside %u dirty blocks", big_dirty);
		if (b == NULL)
			break;
		bc_dirty(&bc, b);
		CHECK(bc_dirty_list(&bc, 0, 100 + f, 0, list, 4) == 1, "dirty list of one");
		bc_clean(&bc, b);
		CHECK(bc_count(&bc, 100 + f, 0, UINT64_MAX, 1) == 0, "count");
		CHECK(bc_count(&bc, 100 + f, 0, 100, 0) == 1, "count a range");
		bc_drop(&bc, 100 + f, 0);
	}
	double per = (double)(bc.visits - v0) / 2000;
	bc_destroy(&bc);
	return per;
}

/* Slab memory that runs out after `budget` slabs, for memory_pressure. */
static int budget;
static void *scarce(size_t n)
{
	if (budget <= 0)
		return NULL;
	budget--;
	return malloc(n);
}

/* Memory runs out while the cache fills: gets go on working with the
 * memory it has (replacing blocks), it makes no more buffers meanwhile
 * (they would only wait for memory too), and once memory can be had
 * again it takes back everything it is allowed: the blocks it holds come
 * back to nbufs, not to what it had when memory ran out. */
static void memory_pressure(void)
{
	struct bcache bc;
	CHECK(bc_init(&bc, 2000) == 0, "init");
	bc.alloc = scarce;
	budget = 4;                                   /* 64 blocks */
	uint32_t made = bc.cap;
	for (uint64_t i = 0; i < 3000; i++) {
		struct bbuf *b = bc_get(&bc, 1 + i % 3, i);
		CHECK(b != NULL && b->data != NULL, "get %lu with memory for 64 blocks", (unsigned long)i);
		if (b == NULL)
			break;
		memcpy(b->data, &i, sizeof i);
		b->flags |= BB_VALID;
		if (i % 5 == 0) {
			bc_dirty(&bc, b);
			bc_clean(&bc, b);
		}
	}
	CHECK(bc.nused == 64, "%u blocks held with memory for 64", bc.nused);
	CHECK(bc.cap == made, "%u buffers made under pressure, %u before", bc.cap, made);
	CHECK(bc.nparked == made - 64, "%u parked", bc.nparked);
	/* Every block it says it holds is the right one. */
	uint32_t right = 0;
	for (uint64_t i = 2936; i < 3000; i++) {
		struct bbuf *b = bc_lookup(&bc, 1 + i % 3, i);
		uint64_t v = UINT64_MAX;
		if (b != NULL)
			memcpy(&v, b->data, sizeof v);
		right += v == i;
	}
	CHECK(right == 64, "the last 64 blocks held: %u", right);
	budget = 1000;                                /* memory again */
	for (uint64_t i = 3000; i < 9000; i++) {
		struct bbuf *b = bc_get(&bc, 1 + i % 3, i);
		CHECK(b != NULL, "get %lu with memory back", (unsigned long)i);
		if (b == NULL)
			break;
		b->flags |= BB_VALID;
	}
	CHECK(bc.nparked == 0 && bc.cap == 2000 && bc.nused == 2000,
	      "after memory came back: %u parked, %u made, %u held of 2000", bc.nparked, bc.cap, bc.nused);
	/* Nothing replaceable (all pinned) while buffers are parked: it asks
	 * for memory at once rather than failing. */
	struct bcache p;
	CHECK(bc_init(&p, 64) == 0, "init");
	p.alloc = scarce;
	budget = 1;
	for (uint64_t i = 0; i < 16; i++) {
		struct bbuf *b = bc_get(&p, 1, i);
		CHECK(b != NULL, "get %lu", (unsigned long)i);
		if (b != NULL)
			bc_pin(b);
	}
	CHECK(bc_get(&p, 1, 99) == NULL, "all 16 pinned, no memory: NULL");
	budget = 1;
	struct bbuf *b = bc_get(&p, 1, 100);
	CHECK(b != NULL && b->data != NULL, "all pinned, memory again: a parked buffer");
	bc_destroy(&p);
	bc_destroy(&bc);
}

int main(void)
{
	memory_pressure();
	model_run(16, 4000);           /* smaller than what is asked: replacement */
	model_run(OWNERS * BLOCKS + 8, 4000);   /* everything fits */
	model_run(4, 2000);            /* nearly always full */
	{
		/* Growth: made as needed, never past nbufs; rehashing keeps
		 * every block findable. */
		struct bcache bc;
		CHECK(bc_init(&bc, 5000) == 0, "init");
		uint32_t first = bc.cap;
		for (uint64_t i = 0; i < 6000; i++) {
			struct bbuf *b = bc_get(&bc, i % 7, i);
			CHECK(b != NULL, "get %lu", (unsigned long)i);
			memcpy(b->data, &i, sizeof i);
			b->flags |= BB_VALID;
		}
		CHECK(first < 5000 && bc.cap == 5000, "made %u at first, %u in the end", first, bc.cap);
		uint32_t found = 0;
		for (uint64_t i = 1000; i < 6000; i++) {
			struct bbuf *b = bc_lookup(&bc, i % 7, i);
			uint64_t v = 0;
			if (b != NULL)
				memcpy(&v, b->data, sizeof v);
			found += b != NULL && v == i;
		}
		CHECK(found == 5000, "the last 5000 blocks cached: %u", found);
		bc_destroy(&bc);
	}
	double small = small_files(64, 0), big = small_files(100000, 99000);
	printf("test_bcache: small-file work looks at %.1f buffers per file in a 64-buffer cache, "
	       "%.1f beside 99,000 dirty blocks of 100,000\n", small, big);
	CHECK(big < 2 * small + 8, "the big cache looks at %.1f buffers per file, the small one %.1f", big, small);
	if (failures) {
		printf("test_bcache: %d failures\n", failures);
		return 1;
	}
	printf("test_bcache: ok\n");
	return 0;
}
