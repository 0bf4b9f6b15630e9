/*
 * test_upool.c - unixfs's span pool (userfs/unixfs/pool.c): every size
 * from 1 to 4096 bytes gets a block that holds it and is at most 12.5%
 * larger (16 bytes for the smallest); blocks live at once never overlap
 * (each is filled with its own pattern and checked before it goes); a
 * freed block is the next one given in its class (LIFO); spans emptied
 * serve other classes; the bytes held come back to no more than a small
 * reserve when everything is freed, and to nothing at destroy; and the
 * large buffers are counted.  A random mix of 200,000 allocations and
 * frees checks the patterns throughout (with ASan, the test's build, a
 * use after free or past a block also stops it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/exodisk/edharness.h"
#include "userfs/unixfs/ufs.h"

#define LIVE 4000

struct blk {
	uint8_t *p;
	size_t n;
	uint8_t pat;
};

static void fill(struct blk *b)
{
	memset(b->p, b->pat, b->n);
}

static void check(const struct blk *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->p[i] != b->pat) {
			fprintf(stderr, "test_upool: block %p (%zu bytes) byte %zu is %u, not %u\n",
			        (void *)b->p, b->n, i, b->p[i], b->pat);
			exit(1);
		}
}

static uint64_t rnd = 88172645463325252ull;
static uint64_t next(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return rnd;
}

int main(void)
{
	struct ufs *fs = calloc(1, sizeof *fs);
	CHECK(fs != NULL);

	/* Sizes: held, not much over, zeroed. */
	for (size_t n = 1; n <= UPOOL_SMALL; n++) {
		uint8_t *p = upool_alloc(fs, n);
		CHECK(p != NULL);
		size_t got = upool_size(p);
		CHECK(got >= n);
		CHECK(got <= (n <= 128 ? n + 15 : n + n / 8));
		CHECK((uintptr_t)p % 16 == 0);
		for (size_t i = 0; i < got; i++)
			CHECK_EQ(p[i], 0);
		memset(p, 0xa5, got);
		upool_free(fs, p);
	}
	CHECK(upool_alloc(fs, UPOOL_SMALL + 1) == NULL);
	CHECK_EQ(fs->pool.live, 0);

	/* LIFO: the block just freed is the next given in its class. */
	void *a = upool_alloc(fs, 200), *b = upool_alloc(fs, 200);
	CHECK(a != NULL && b != NULL && a != b);
	upool_free(fs, a);
	CHECK(upool_alloc(fs, 195) == a);
	upool_free(fs, a);
	upool_free(fs, b);

	/* Many at once, random sizes, random frees: no overlap. */
	static struct blk live[LIVE];
	size_t peak = 0;
	for (int step = 0; step < 200000; step++) {
		struct blk *s = &live[next() % LIVE];
		if (s->p != NULL) {
			check(s);
			upool_free(fs, s->p);
			s->p = NULL;
			continue;
		}
		/* Mostly the sizes a create makes (a name, an object, 1 KiB). */
		size_t n;
		switch (next() % 4) {
		case 0: n = 150 + next() % 60; break;
		case 1: n = 200; break;
		case 2: n = 1024; break;
		default: n = 1 + next() % UPOOL_SMALL; break;
		}
		s->p = upool_alloc_raw(fs, n);
		CHECK(s->p != NULL);
		s->n = n;
		s->pat = (uint8_t)(1 + next() % 255);
		fill(s);
		if (fs->pool.bytes > peak)
			peak = fs->pool.bytes;
	}
	/* Memory held against what is live, at the end of the mix. */
	size_t want = 0;
	for (int i = 0; i < LIVE; i++)
		if (live[i].p != NULL) {
			check(&live[i]);
			want += live[i].n;
		}
	printf("test_upool: %zu bytes live asked for, %zu in blocks, %zu held (peak %zu)\n", want,
	       fs->pool.live, fs->pool.bytes, peak);
	CHECK(fs->pool.live <= want + want / 8 + LIVE * 16);
	for (int i = 0; i < LIVE; i++)
		if (live[i].p != NULL) {
			upool_free(fs, live[i].p);
			live[i].p = NULL;
		}
	CHECK_EQ(fs->pool.live, 0);
	/* Emptied chunks went back but for a reserve (and one chunk). */
	CHECK(fs->pool.bytes <= (size_t)(8 + 32 + 4) * UPOOL_SPAN);

	/* Spans emptied by one class serve another: the span a lone block of
	 * class 1024 leaves is the next any class takes; and filling class
	 * 1024, freeing it and filling class 960 as much holds no more. */
	uintptr_t mask = ~(uintptr_t)(UPOOL_SPAN - 1);
	void *one = upool_alloc_raw(fs, 1024);
	CHECK(one != NULL);
	upool_free(fs, one);
	void *other = upool_alloc_raw(fs, 40);
	CHECK(other != NULL);
	CHECK(((uintptr_t)other & mask) == ((uintptr_t)one & mask));
	upool_free(fs, other);
	static void *v[2000];
	for (int i = 0; i < 2000; i++)
		CHECK((v[i] = upool_alloc_raw(fs, 1024)) != NULL);
	size_t held = fs->pool.bytes;
	for (int i = 0; i < 2000; i++)
		upool_free(fs, v[i]);
	for (int i = 0; i < 2000; i++)
		CHECK((v[i] = upool_alloc_raw(fs, 900)) != NULL && upool_size(v[i]) == 960);
	CHECK(fs->pool.bytes <= held);
	for (int i = 0; i < 2000; i++)
		upool_free(fs, v[i]);

	/* Large buffers are counted. */
	size_t before = fs->pool.bytes;
	void *big = upool_big_alloc(fs, 100000);
	CHECK(big != NULL);
	CHECK(fs->pool.bytes >= before + 100000);
	big = upool_big_realloc(fs, big, 300000);
	CHECK(big != NULL);
	CHECK(fs->pool.bytes >= before + 300000);
	upool_big_free(fs, big);
	CHECK_EQ(fs->pool.bytes, before);

	upool_destroy(fs);
	CHECK_EQ(fs->pool.bytes, 0);
	free(fs);
	printf("test_upool: ok\n");
	return 0;
}
