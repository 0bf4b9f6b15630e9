/*
 * test_fmfind.c - the free-map searches of libos/edc.c (edc_fm_find,
 * edc_fm_find_in, edc_fm_run) and the kit's search near a goal
 * (kit_find_near) against a plain sector-by-sector search, over random
 * maps: half used at random, one free sector in each group of 8 (what
 * one-sector blocks and their lock sectors leave), mostly used, runs of
 * random lengths, and a long used stretch over several pages of the map
 * with a few free sectors in it before a free end (what a disk filled
 * from one place looks like); goals anywhere, counts 1-80, alignments
 * 1-64, windows of any length.  The searches work a word of the map at a
 * time and look each page up once, so their edges (a run across a word or
 * a page, the end of the unit or of a window, bits past it) are what this
 * checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/edc.h"
#include "libos/kit/kit.h"
#include "tests/host/exodisk/edharness.h"

static uint64_t *map;          /* one bit per sector, 1 = allocated */
static uint64_t nsect;

static const uint64_t *map_page(void *ctx, int unit, uint32_t i)
{
	(void)ctx;
	(void)unit;
	return i < (nsect + 32767) / 32768 ? map + (uint64_t)i * 512 : NULL;
}

static uint64_t map_nsectors(void *ctx, int unit)
{
	(void)ctx;
	(void)unit;
	return nsect;
}

static int used(uint64_t s)
{
	return s >= nsect || ((map[s / 64] >> (s % 64)) & 1);
}

static uint64_t plain_in(uint64_t from, uint64_t to, uint64_t count, uint64_t align)
{
	for (uint64_t s = (from + align - 1) / align * align; s < to && to - s >= count; s += align) {
		uint64_t k = 0;
		while (k < count && !used(s + k))
			k++;
		if (k == count)
			return s;
	}
	return UINT64_MAX;
}

/* What edc_fm_find promises: from goal to the end, then from 0 round to it. */
static uint64_t plain_find(uint64_t goal, uint64_t count, uint64_t align)
{
	if (count == 0 || count > nsect)
		return UINT64_MAX;
	if (goal >= nsect)
		goal = 0;
	uint64_t r = plain_in(goal, nsect, count, align);
	if (r == UINT64_MAX && goal > 0)
		r = plain_in(0, goal + count < nsect ? goal + count : nsect, count, align);
	return r;
}

/* What kit_find_near promises: a run starting in [goal, goal + reach]
 * (ending by goal + reach + n), never at sector 1 of a group of 8. */
static uint64_t plain_near(uint64_t goal, uint64_t reach, uint64_t count, uint64_t align)
{
	for (uint64_t from = goal;;) {
		uint64_t to = goal + reach + count < nsect ? goal + reach + count : nsect;
		uint64_t s = plain_in(from, to, count, align);
		if (s == UINT64_MAX || s % 8 != 1)
			return s;
		from = s + 1;
	}
}

static uint64_t plain_run(uint64_t start, uint64_t max)
{
	uint64_t n = 0;
	while (n < max && !used(start + n))
		n++;
	return n;
}

int main(void)
{
	struct edc_transport t = { .fm_page = map_page, .nsectors = map_nsectors };
	struct edc c;
	edc_init(&c, &t, NULL);
	static const uint64_t aligns[] = { 1, 8, 8, 16, 64, 8 };
	srand(1);
	long checks = 0;
	for (int it = 0; it < 1500; it++) {
		nsect = 1 + (uint64_t)rand() % (it % 10 == 0 ? 200000 : 5000);
		uint64_t words = (nsect + 32767) / 32768 * 512;
		map = calloc(words, 8);
		CHECK(map != NULL);
		int kind = rand() % 5, len = 1 + rand() % 300;
		for (uint64_t s = 0; s < nsect; s++) {
			int u = kind == 0 ? rand() % 2 : kind == 1 ? (s % 8 != 1 || rand() % 7 == 0) :
			        kind == 2 ? rand() % 10 != 0 : kind == 3 ? (int)(s / len) % 2 :
			        s < nsect / 4 * 3 && rand() % 3000 != 0;
			if (u)
				map[s / 64] |= 1ull << (s % 64);
		}
		if (it % 2)          /* bits past the end: set or clear, neither counts */
			for (uint64_t s = nsect; s < words * 64; s++)
				map[s / 64] |= 1ull << (s % 64);
		struct edc_fm fm = { &c, 0, nsect };
		struct kit k = { .c = &c, .fm = fm };
		for (int q = 0; q < 40; q++, checks += 4) {
			uint64_t goal = (uint64_t)rand() % (nsect + 10), count = 1 + (uint64_t)rand() % (q % 2 ? 80 : 20);
			uint64_t align = aligns[rand() % 6];
			CHECK_EQ(edc_fm_find(&fm, goal, count, align), plain_find(goal, count, align));
			uint64_t to = goal + (uint64_t)rand() % (q % 3 ? 500 : 70000);
			CHECK_EQ(edc_fm_find_in(&fm, goal, to, count, align),
			         plain_in(goal, to < nsect ? to : nsect, count, align));
			uint64_t reach = (uint64_t)rand() % (q % 3 ? 300 : 50000);
			CHECK_EQ(kit_find_near(&k, goal, reach, count, align),
			         plain_near(goal, reach, count, align));
			uint64_t start = (uint64_t)rand() % nsect, max = 1 + (uint64_t)rand() % 300;
			uint64_t want = plain_run(start, max);
			CHECK_EQ(edc_fm_run(&fm, start, max), want > nsect - start ? nsect - start : want);
		}
		free(map);
	}
	printf("test_fmfind: %ld searches agree with the plain ones\n", checks);
	printf("test_fmfind: ok\n");
	return 0;
}
