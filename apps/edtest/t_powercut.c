/*
 * t_powercut.c - the exodisk's own workload for the power-cut tests of the
 * real stack (tools/powercut/crashtest.py -t exodisk, docs/powercut.md):
 * no library file system, only exodisk requests, so every cut lands in
 * the exodisk's commit log, its checkpoints and its write-backs.
 *
 *   powercut-run STEPS       the steps, "pcwork: ack N" after each
 *   powercut-check STEPS N   after the cut and a reboot: every object as of
 *                            step N (acknowledged) or N + 1
 *
 * Six objects at fixed places in the middle of the disk: even ones are
 * extents, odd ones exonodes holding one extent entry and one data entry.
 * A step creates an absent object (its data written and flushed, then the
 * object written back and flushed: the libOS's half of "never a pointer
 * before what it points to"), rewrites a present one's data in place,
 * or deallocates it (written back, flushed).  Sizes and data follow a fixed
 * sequence, so the check can rebuild the model.  After a cut each object
 * must be as in one of the two states: bound with each sector holding the
 * old or new data, or not bound with its sectors free in the map.
 * Capabilities come from a fixed seed, the same in every boot.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

#define PC_SEED 0x706f77657263ull    /* "powerc" */
#define NOBJ    6
#define SPAN    64                   /* sectors per object's place */
#define XOFF    8                    /* an exonode's extent, after its block */

struct obj {
	int exists;
	uint32_t n;                  /* sectors of data */
	uint32_t seed;               /* what they hold */
	uint32_t mseed;              /* an exonode's data entry: its creation's */
};

static uint64_t B;

static uint64_t place(int i) { return B + (uint64_t)i * SPAN; }
static int is_xn(int i) { return i & 1; }
static uint64_t data_at(int i) { return place(i) + (is_xn(i) ? XOFF : 0); }

/* Object i with n sectors: its protector (fixed capabilities per object). */
static struct ed_protector prot(int i, uint32_t n)
{
	if (is_xn(i))
		return pxn(place(i), 0, 200, 10 + 2 * (unsigned)i);
	return pext(place(i), (uint64_t)n * SECT, 10 + 2 * (unsigned)i);
}

static uint64_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 33;
}

enum { CREATE, REWRITE, DEALLOC };
struct step { int op, i; uint32_t n, seed; };

static struct step draw(uint64_t *rs, int s, const struct obj *m)
{
	struct step st;
	st.i = (int)(rnd(rs) % NOBJ);
	int kind = (int)(rnd(rs) % 3);
	st.n = 1 + (uint32_t)(rnd(rs) % 40);
	st.seed = 1000 + (uint32_t)s;
	if (!m[st.i].exists)
		st.op = CREATE;
	else
		st.op = kind == 0 ? DEALLOC : REWRITE;
	if (st.op != CREATE)
		st.n = m[st.i].n;
	return st;
}

static void apply(struct obj *m, const struct step *st)
{
	struct obj *o = &m[st->i];
	if (st->op == DEALLOC) {
		o->exists = 0;
	} else {
		if (st->op == CREATE)
			o->mseed = st->seed;
		o->exists = 1;
		o->n = st->n;
		o->seed = st->seed;
	}
}

static uint8_t buf[SPAN * SECT];

static int wrote(int32_t r, const char *what, int i)
{
	if (r != 0)
		printf("pcwork: object %d: %s: %d (%s)\n", i, what, r, exo_strerror(r));
	return r == 0;
}

static int perform(const struct step *st)
{
	int i = st->i;
	struct ed_protector p = prot(i, st->n);
	uint64_t d = data_at(i);
	char meta[16] = { 0 };
	snprintf(meta, sizeof meta, "obj%d-%u", i, st->seed);
	switch (st->op) {
	case CREATE:
		if (is_xn(i)) {
			if (!wrote((int32_t)edc_xn_alloc(E, &p), "xn_alloc", i) ||
			    !wrote((int32_t)edc_xn_add_extent(E, &p, -1, d, (uint64_t)st->n * SECT), "add_extent", i) ||
			    edc_xn_add_data(E, &p, -1, meta, sizeof meta) != 1)
				return 0;
		} else if (!wrote((int32_t)edc_extent_alloc(E, &p), "extent_alloc", i)) {
			return 0;
		}
		fill(buf, (uint64_t)st->n * SECT, d, st->seed);
		if (!wrote(io(&p, 1, d, buf, (uint64_t)st->n * SECT), "write", i) ||
		    !wrote(edc_flush(E, U), "flush", i))
			return 0;
		return wrote(is_xn(i) ? xn_write(&p) : ext_write(&p), "write-back", i) &&
		       wrote(edc_flush(E, U), "flush", i);
	case REWRITE:
		fill(buf, (uint64_t)st->n * SECT, d, st->seed);
		return wrote(io(&p, 1, d, buf, (uint64_t)st->n * SECT), "rewrite", i) &&
		       wrote(edc_flush(E, U), "flush", i);
	case DEALLOC:
		if (is_xn(i)) {
			if (!wrote((int32_t)edc_xn_remove(E, &p, 1), "remove data", i) ||
			    !wrote((int32_t)edc_xn_remove(E, &p, 0), "remove extent", i) ||
			    !wrote((int32_t)edc_xn_dealloc(E, &p), "xn_dealloc", i))
				return 0;
		} else if (!wrote((int32_t)edc_extent_dealloc(E, &p), "extent_dealloc", i)) {
			return 0;
		}
		return wrote(is_xn(i) ? xn_write(&p) : ext_write(&p), "write-back", i) &&
		       wrote(edc_flush(E, U), "flush", i);
	}
	return 0;
}

/* Object i as in state a or b? */
static int obj_ok(int i, const struct obj *a, const struct obj *b)
{
	const struct obj *oa = &a[i], *ob = &b[i];
	uint32_t n = oa->exists ? oa->n : ob->n;
	struct ed_protector p = prot(i, n);
	int32_t r = is_xn(i) ? xn_read(&p) : ext_read(&p);
	uint64_t d = data_at(i);
	if (r == ED_E_NOTBOUND) {
		if (oa->exists && ob->exists) {
			printf("pcwork: object %d: not bound, but acknowledged\n", i);
			return 0;
		}
		if (!all_free(place(i), SPAN)) {
			printf("pcwork: object %d: not bound, yet its sectors are allocated\n", i);
			return 0;
		}
		return 1;
	}
	if (r != 0) {
		printf("pcwork: object %d: read in: %d (%s)\n", i, r, exo_strerror(r));
		return 0;
	}
	if (!oa->exists && !ob->exists) {
		printf("pcwork: object %d: bound, but no step made it\n", i);
		return 0;
	}
	if (!all_allocated(d, n) || (is_xn(i) && !allocated(place(i)))) {
		printf("pcwork: object %d: bound, but the free map says its sectors are free\n", i);
		return 0;
	}
	if (is_xn(i)) {
		char meta[16], wa[16] = { 0 }, wb[16] = { 0 };
		snprintf(wa, sizeof wa, "obj%d-%u", i, oa->mseed);
		snprintf(wb, sizeof wb, "obj%d-%u", i, ob->mseed);
		int64_t got = edc_xn_read_data(E, &p, 1, meta, sizeof meta);
		if (got != (int64_t)sizeof meta || !((oa->exists && memcmp(meta, wa, sizeof meta) == 0) ||
		                                     (ob->exists && memcmp(meta, wb, sizeof meta) == 0))) {
			printf("pcwork: object %d: data entry: %lld, \"%.16s\"\n", i, (long long)got, meta);
			return 0;
		}
	}
	memset(buf, 0, sizeof buf);
	if ((r = io(&p, 0, d, buf, (uint64_t)n * SECT)) != 0) {
		printf("pcwork: object %d: read: %d (%s)\n", i, r, exo_strerror(r));
		return 0;
	}
	for (uint32_t k = 0; k < n; k++) {
		int hdr = !is_xn(i) && k == 0;
		const uint8_t *s = buf + (uint64_t)k * SECT;
		if (!((oa->exists && same(s, SECT, d + k, oa->seed, hdr)) ||
		      (ob->exists && same(s, SECT, d + k, ob->seed, hdr)))) {
			printf("pcwork: object %d: sector %u holds neither step's data\n", i, k);
			return 0;
		}
	}
	return 1;
}

static int setup(int argc, char **argv, int check_mode, int *steps, int *acked)
{
	cap_seed(PC_SEED);
	B = (FM.nsectors / 2) & ~1023ull;
	*steps = argc > 1 ? atoi(argv[1]) : 0;
	*acked = check_mode && argc > 2 ? atoi(argv[2]) : 0;
	if (*steps < 1 || *acked < 0 || *acked > *steps || argc != (check_mode ? 3 : 2)) {
		fprintf(stderr, "usage: edtest powercut-run STEPS | powercut-check STEPS ACKED\n");
		return -1;
	}
	return 0;
}

int p_powercut_run(int argc, char **argv)
{
	int steps, acked;
	if (setup(argc, argv, 0, &steps, &acked) < 0)
		return 2;
	if (!all_free(B, NOBJ * SPAN)) {
		printf("pcwork: sectors %llu.. are not free (a fresh disk?)\n", (unsigned long long)B);
		return 2;
	}
	struct obj m[NOBJ] = { { 0 } };
	uint64_t rs = 0x5eed;
	for (int s = 0; s < steps; s++) {
		struct step st = draw(&rs, s, m);
		if (!perform(&st)) {
			printf("pcwork: step %d failed\n", s + 1);
			return 1;
		}
		apply(m, &st);
		printf("pcwork: ack %d\n", s + 1);
		fflush(stdout);
	}
	printf("pcwork: %d steps done\n", steps);
	return 0;
}

int p_powercut_check(int argc, char **argv)
{
	int steps, acked;
	if (setup(argc, argv, 1, &steps, &acked) < 0)
		return 2;
	struct obj a[NOBJ] = { { 0 } }, b[NOBJ];
	uint64_t rs = 0x5eed;
	for (int s = 0; s < acked; s++) {
		struct step st = draw(&rs, s, a);
		apply(a, &st);
	}
	memcpy(b, a, sizeof b);
	if (acked < steps) {
		struct step st = draw(&rs, acked, b);
		apply(b, &st);
	}
	int bad = 0;
	for (int i = 0; i < NOBJ; i++)
		bad += !obj_ok(i, a, b);
	printf("pcwork: checked as of step %d%s: %s\n", acked, acked < steps ? " or the next" : "",
	       bad ? "WRONG" : "all well");
	return bad != 0;
}
