/*
 * treq.h - test block requests for the SCSI host tests (test_scsi.c,
 * test_vscsi.c): a request with its own segment array over fresh memory
 * cut into random pieces, its bytes copied to and from flat memory, and
 * each read checked at completion against the test's shadow copy of the
 * unit, when it keeps one; and waiting for requests to finish.
 */
#ifndef TESTS_DRIVERS_TREQ_H
#define TESTS_DRIVERS_TREQ_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/blk.h"
#include "check.h"

struct treq {
	struct blkreq r;
	struct blk_seg seg[BLK_MAX_SEGS];
	uint8_t *mem;
	int ndone, status;            /* completions; the last one's status (1: none yet) */
	bool busy;
};

/* What each unit should hold, for the tests that keep it (NULL: none), and
 * how many reads were checked against it. */
static uint8_t *shadow[BLK_MAX_UNITS];
static uint64_t reads_checked;

/* Bytes of a request's buffer, in order, to/from flat memory. */
static inline void req_copy(struct treq *t, uint8_t *flat, bool to_req)
{
	size_t at = 0;
	for (int i = 0; i < t->r.nseg; i++) {
		uint8_t *p = blk_seg_ptr(t->seg[i].addr);
		if (to_req) memcpy(p, flat + at, t->seg[i].len);
		else memcpy(flat + at, p, t->seg[i].len);
		at += t->seg[i].len;
	}
}

static inline void treq_done(struct blkreq *r)
{
	struct treq *t = r->priv;
	if (r->op == BLK_READ && r->status == 0 && shadow[r->unit] != NULL) {
		/* Nothing that overlaps a read is outstanding with it, so the
		 * shadow holds what it must have read. */
		uint8_t *flat = malloc(r->nsectors * 512);
		CHECK(flat != NULL);
		req_copy(t, flat, false);
		CHECK(memcmp(flat, shadow[r->unit] + r->sector * 512, r->nsectors * 512) == 0);
		free(flat);
		reads_checked++;
	}
	t->ndone++;
	t->status = r->status;
	t->busy = false;
}

/* Poll until none of the n requests t[] is busy, calling tick (if not
 * NULL) after each poll: a test whose device completes on a simulated
 * clock moves the clock there.  A request that never finishes fails the
 * test instead of hanging it. */
static inline void treq_wait_all(struct treq *t, int n, void (*tick)(void))
{
	for (int spin = 0;; spin++) {
		bool busy = false;
		for (int i = 0; i < n; i++)
			busy |= t[i].busy;
		if (!busy)
			return;
		CHECK(spin < 200000);
		blk_poll();
		if (tick != NULL)
			tick();
	}
}

/* Cut nbytes of fresh memory into random pieces of minpiece..maxpiece
 * bytes, at random misalignments and with gaps between them. */
static inline void fragment(struct treq *t, uint32_t nbytes, uint32_t minpiece, uint32_t maxpiece)
{
	free(t->mem);
	t->mem = malloc((size_t)nbytes * 2 + BLK_MAX_SEGS * 16 + 64);
	CHECK(t->mem != NULL);
	size_t at = rng_below(13);
	uint32_t done = 0;
	int n = 0;
	while (done < nbytes) {
		uint32_t left = nbytes - done;
		uint32_t piece = minpiece + (uint32_t)rng_below(maxpiece - minpiece + 1);
		if (piece > left || n == BLK_MAX_SEGS - 1) piece = left;
		t->seg[n].addr = (uint64_t)(uintptr_t)(t->mem + at);
		t->seg[n].len = piece;
		n++;
		done += piece;
		at += piece + rng_below(9);
	}
	t->r.nseg = (uint16_t)n;
	t->r.seg = t->seg;
}

/* A fresh request (a flush carries no buffer; the others get one from
 * fragment). */
static inline void req_set(struct treq *t, int unit, uint8_t op, uint8_t flags, uint64_t sector,
                           uint32_t nsectors)
{
	memset(&t->r, 0, sizeof t->r);
	t->r.op = op;
	t->r.flags = flags;
	t->r.unit = unit;
	t->r.sector = sector;
	t->r.nsectors = nsectors;
	t->r.done = treq_done;
	t->r.priv = t;
	t->ndone = 0;
	t->status = 1;
	t->busy = true;
	if (op == BLK_FLUSH) {
		t->r.nseg = 0;
		t->r.seg = NULL;
	}
}

/* A write's buffer filled with random bytes, which the unit's shadow
 * then holds at the request's sectors. */
static inline void req_fill_random(struct treq *t)
{
	uint32_t n = t->r.nsectors;
	uint8_t *flat = malloc(n * 512);
	CHECK(flat != NULL);
	for (uint32_t b = 0; b < n * 512; b += 8) {
		uint64_t w = rng_next();
		memcpy(flat + b, &w, 8);
	}
	req_copy(t, flat, true);
	memcpy(shadow[t->r.unit] + t->r.sector * 512, flat, n * 512);
	free(flat);
}

#endif
