/*
 * t_nospace.c - a disk that runs out (not in the default groups: it fills
 * the unit; tests/qemu/cases_exodisk.py runs `edtest nospace` on a small
 * second disk).
 *
 * One-sector extents (a binding each) are allocated and written back, 32
 * at a time, until an allocation is refused with ED_E_NOSPACE: the free
 * sectors left are what the exodisk keeps for its own metadata, and no
 * accepted write-back was lost to reach that point - every one of them is
 * still bound, with its data.  Write-backs go on working on a full disk
 * (deallocations first of all), and once some are durable the space is
 * there again.
 */
#include <stdio.h>
#include <stdlib.h>
#include "apps/edtest/edt.h"

#define BATCH 32

static struct ed_protector *e;
static volatile int32_t *w;

static int64_t dealloc_cached(const struct ed_protector *p)
{
	int64_t r = edc_extent_dealloc(E, p);
	if (r == ED_E_NOTCACHED && ext_read(p) == 0)
		r = edc_extent_dealloc(E, p);
	return r;
}

/* Write back [from, to) together and count the failures. */
static int write_back(int from, int to)
{
	int bad = 0;
	for (int i = from; i < to; i++)
		edc_extent_write(E, &e[i], &w[i]);
	for (int i = from; i < to; i++)
		bad += edc_wait(E, &w[i]) != 0;
	return bad;
}

void t_nospace(void)
{
	struct ed_unit_info u;
	expect(edc_unit_info(E, U, &u) >= 0, 1, "ED_OP_UNIT_INFO");
	note("unit %d: %llu sectors, %llu allocated, %llu kept for the exodisk's metadata", U,
	     (unsigned long long)u.nsectors, (unsigned long long)u.allocated,
	     (unsigned long long)u.reserved);
	uint64_t max = u.nsectors;
	e = calloc(max, sizeof *e);
	w = calloc(max, sizeof *w);
	if (!check(e != NULL && w != NULL, "memory for %llu extents", (unsigned long long)max))
		return;
	static uint8_t buf[SECT];
	int n = 0, lost = 0;
	int64_t refusal = 0;
	uint64_t goal = u.data_start;
	while (refusal == 0 && (uint64_t)n < max) {
		int start = n;
		while (n - start < BATCH) {
			uint64_t s = edc_fm_find(&FM, goal, 1, 1);
			if (s == UINT64_MAX) {
				refusal = ED_E_NOSPACE;        /* the map has nothing either */
				break;
			}
			e[n] = pext(s, SECT, 1700);
			int64_t r = edc_extent_alloc(E, &e[n]);
			if (r == ED_E_ALLOCATED)
				continue;
			if (r != 0) {
				refusal = r;
				break;
			}
			fill(buf, SECT, s, 17);
			io(&e[n], 1, s, buf, SECT);
			goal = s + 1;
			n++;
		}
		if (refusal != 0) {
			/* What was left when the allocation was refused. */
			edc_unit_info(E, U, &u);
			check(u.nsectors - u.allocated > 0 && u.nsectors - u.allocated <= u.reserved,
			      "free sectors left then: %llu, the exodisk's reserve: %llu",
			      (unsigned long long)(u.nsectors - u.allocated), (unsigned long long)u.reserved);
		}
		lost += write_back(start, n);
	}
	expect(refusal, ED_E_NOSPACE, "allocating until the disk is full: %d extents, then", n);
	expect(lost, 0, "every one of them written back");
	edc_unit_info(E, U, &u);
	note("free sectors after the write-backs: %llu, the reserve %llu (checkpoints move it)",
	     (unsigned long long)(u.nsectors - u.allocated), (unsigned long long)u.reserved);
	/* Nothing accepted was lost: every extent is bound, with its data. */
	int bad = 0;
	for (int i = 0; i < n; i++) {
		if (!(edc_in_cache(E, &e[i]) & ED_IC_CACHED) && ext_read(&e[i]) != 0) {
			bad++;
			continue;
		}
		bad += io(&e[i], 0, e[i].blkno, buf, SECT) != 0 || !same(buf, SECT, e[i].blkno, 17, true);
	}
	expect(bad, 0, "all %d extents still bound and readable, with their data", n);
	/* A full disk still takes write-backs: give back every other one. */
	int freed = 0;
	for (int i = 0; i < n; i += 2 * BATCH) {
		int end = i + BATCH < n ? i + BATCH : n;
		for (int k = i; k < end; k++)
			freed += dealloc_cached(&e[k]) == 0;
		lost += write_back(i, end);
	}
	expect(lost, 0, "deallocations of %d of them written back on the full disk", freed);
	edc_unit_info(E, U, &u);
	check(u.nsectors - u.allocated > u.reserved, "the space is back: %llu free",
	      (unsigned long long)(u.nsectors - u.allocated));
	/* And the rest go too. */
	int ok = 0;
	for (int i = BATCH; i < n; i += 2 * BATCH) {
		int end = i + BATCH < n ? i + BATCH : n;
		for (int k = i; k < end; k++)
			ok += dealloc_cached(&e[k]) == 0;
		lost += write_back(i, end);
	}
	expect(lost, 0, "the rest deallocated and written back (%d)", ok);
	edc_unit_info(E, U, &u);
	note("after: %llu sectors allocated, %llu bindings", (unsigned long long)u.allocated,
	     (unsigned long long)u.bindings);
	free(e);
	free((void *)w);
}
