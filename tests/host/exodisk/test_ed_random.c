/*
 * test_ed_random.c - long random sequences of exodisk operations, checked
 * against a reference model.
 *
 * The model keeps, for every extent and exonode, its working state and its
 * last written-back state, and from them derives what the two free maps
 * must be: the durable map is the exodisk region plus everything some
 * written-back object refers to; the exported map adds everything a working
 * copy refers to.  After every operation the exported free map must equal
 * the model's bit for bit - which pins down the thesis's conservative
 * semantics exactly (allocated at allocation, freed only when the freeing is
 * durable, at once if it never was).  The model also predicts which
 * allocations must fail, and remembers a version per data sector so every
 * read is compared with the last write.  Every so often the live checker
 * runs, and now and then the system reboots cleanly: working copies that
 * were not written back disappear, and everything must still agree.
 */
#include "tests/host/exodisk/edfixture.h"

#define D       8192
#define SECT    512
#define MAXOBJ  48
#define MAXENT  6
#define XNLEN   152        /* 56-byte header + 6 extent entries; 3 per sector */

struct ment {
	int idx;
	uint64_t start, n;
};

struct mxn {                   /* an exonode's entries (extents only) */
	bool live;
	int nent;
	struct ment e[MAXENT];
};

struct mobj {
	int kind;                  /* 0 unused, 1 extent, 2 exonode block */
	uint64_t s;                /* header sector / block sector */
	struct ed_cap rc, wc;      /* (per block: slots share the block's caps) */
	bool committed;
	/* extent */
	uint64_t n, com_n;
	bool dealloc;
	/* exonode block: 3 slots */
	struct mxn cur[3], com[3];
	bool dead[3];
};

static struct mobj obj[MAXOBJ];
static uint16_t ver[D];        /* 0: contents unknown */
static uint8_t dfm[D], fm[D];
static struct fx F;
static uint64_t DS;
static uint64_t seed_state;
static long nops[32];

static uint64_t rnd(void)
{
	seed_state ^= seed_state >> 12;
	seed_state ^= seed_state << 25;
	seed_state ^= seed_state >> 27;
	return seed_state * 2685821657736338717ull;
}

static uint64_t rn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static void pattern(uint8_t *p, uint64_t s, uint16_t v)
{
	for (int i = 0; i < SECT; i += 8) {
		uint64_t w = (s << 20) ^ ((uint64_t)v << 4) ^ (uint64_t)i;
		memcpy(p + i, &w, 8);
	}
}

/* ---- the model's free maps ------------------------------------------------------------ */

static void mark(uint8_t *m, uint64_t s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		m[s + i] = 1;
}

static bool xn_any_live(const struct mxn *x)
{
	for (int i = 0; i < 3; i++)
		if (x[i].live)
			return true;
	return false;
}

static void refs(const struct mobj *o, bool committed, uint8_t *m)
{
	if (o->kind == 1) {
		if (committed ? o->committed : !o->dealloc)
			mark(m, o->s, committed ? o->com_n : o->n);
		return;
	}
	const struct mxn *x = committed ? o->com : o->cur;
	if (committed && !o->committed)
		return;
	if (!xn_any_live(x))
		return;
	mark(m, o->s, 1);
	for (int i = 0; i < 3; i++)
		if (x[i].live)
			for (int j = 0; j < x[i].nent; j++)
				mark(m, x[i].e[j].start, x[i].e[j].n);
}

/* The exodisk's own tree pages: the core says where they are (the live
 * checker verifies them). */
static void mark_meta(void *arg, uint64_t s)
{
	mark(arg, s, 8);
}

static void model_maps(void)
{
	memset(dfm, 0, sizeof(dfm));
	mark(dfm, 0, DS);
	CHECK_EQ(ed_check_meta_pages(F.ed, 0, mark_meta, dfm), 0);
	for (int i = 0; i < MAXOBJ; i++)
		if (obj[i].kind)
			refs(&obj[i], true, dfm);
	memcpy(fm, dfm, sizeof(fm));
	for (int i = 0; i < MAXOBJ; i++)
		if (obj[i].kind)
			refs(&obj[i], false, fm);
}

static void compare_maps(const char *after)
{
	model_maps();
	const uint8_t *page = ed_freemap_page(F.ed, 0, 0);    /* D sectors fit one page */
	for (uint64_t s = 0; s < D; s++) {
		int bit = (page[s / 8] >> (s % 8)) & 1;
		if (fm[s] != bit) {
			fprintf(stderr, "after %s: sector %llu: model %d, free map %d\n", after,
			        (unsigned long long)s, fm[s], bit);
			exit(1);
		}
	}
}

static bool model_free(uint64_t s, uint64_t n)
{
	if (s < DS || s + n > D)
		return false;
	for (uint64_t i = 0; i < n; i++)
		if (fm[s + i])
			return false;
	return true;
}

/* An object leaves the model.  A header's sector keeps the header in its
 * first bytes, so its data is no longer what the model remembers. */
static void forget(struct mobj *o)
{
	if (o->kind == 1)
		ver[o->s] = 0;
	memset(o, 0, sizeof(*o));
}

/* ---- helpers on the real system ---------------------------------------------------------- */

static struct ed_protector prot(const struct mobj *o, int slot)
{
	if (o->kind == 1)
		return h_ext(0, o->s, 0, o->rc, o->wc);
	return h_xn(0, o->s, (uint16_t)slot, XNLEN, o->rc, o->wc);
}

static int64_t req(int op, struct ed_protector *p, struct ed_operation *st)
{
	return h_req(&F.h, F.ed, &F.a, op, p, NULL, st, NULL, 0, NULL, 0, NULL);
}

/* The object's block must be in the cache to change it: read it if not. */
static void ensure_cached(struct mobj *o)
{
	struct ed_protector p = prot(o, 0);
	if (req(ED_OP_IN_CACHE, &p, NULL) != 0)
		return;
	CHECK(o->committed);    /* uncommitted blocks are dirty: never evicted */
	int64_t r = h_sync(&F.h, F.ed, &F.a, o->kind == 1 ? ED_OP_EXTENT_READ : ED_OP_EXONODE_READ, &p);
	CHECK_EQ(r, 0);
}

static bool is_dirty(struct mobj *o)
{
	struct ed_protector p = prot(o, 0);
	return (req(ED_OP_IN_CACHE, &p, NULL) & ED_IC_DIRTY) != 0;
}

/* Write back and update the model's committed state. */
static void writeback(struct mobj *o)
{
	if (!is_dirty(o))
		return;
	int slot = 0;
	if (o->kind == 2)
		for (int i = 0; i < 3; i++)
			if (o->cur[i].live || o->dead[i])
				slot = i;
	struct ed_protector p = prot(o, slot);
	CHECK_EQ(h_sync(&F.h, F.ed, &F.a, o->kind == 1 ? ED_OP_EXTENT_WRITE : ED_OP_EXONODE_WRITE, &p), 0);
	nops[0]++;
	if (o->kind == 1) {
		if (o->dealloc) {
			forget(o);
			return;
		}
		o->committed = true;
		o->com_n = o->n;
		return;
	}
	for (int i = 0; i < 3; i++) {
		o->com[i] = o->cur[i];
		o->dead[i] = false;
	}
	o->committed = true;
	if (!xn_any_live(o->cur))
		memset(o, 0, sizeof(*o));
}

/* The cache has 31 entries: keep the number of dirty ones well below, as
 * an application must (it is told ED_E_CACHEDIRTY otherwise). */
static void writeback_all(void)
{
	for (int i = 0; i < MAXOBJ; i++)
		if (obj[i].kind)
			writeback(&obj[i]);
}

static int ndirty;

static void dirtied(void)
{
	if (++ndirty > 16) {
		writeback_all();
		ndirty = 0;
	}
}

static struct mobj *pick(int kind)
{
	for (int tries = 0; tries < 20; tries++) {
		struct mobj *o = &obj[rn(MAXOBJ)];
		if (o->kind == kind && (kind != 1 || !o->dealloc))
			return o;
	}
	return NULL;
}

static struct mobj *free_obj(void)
{
	for (int i = 0; i < MAXOBJ; i++)
		if (!obj[i].kind)
			return &obj[i];
	return NULL;
}

/* ---- operations --------------------------------------------------------------------- */

static void op_alloc_extent(void)
{
	dirtied();        /* first: it may write back, before the model changes */
	struct mobj *o = free_obj();
	if (o == NULL)
		return;
	uint64_t n = 1 + rn(24), s = DS + rn(D - DS);
	if (rn(20) == 0)
		s = rn(D + 10);        /* sometimes nonsense */
	struct ed_cap rc = h_cap(rnd(), 1), wc = h_cap(rnd(), 2);
	struct ed_protector p = h_ext(0, s, n * SECT, rc, wc);
	model_maps();
	int64_t r = req(ED_OP_EXTENT_ALLOCATE, &p, NULL);
	bool ok = model_free(s, n);
	if (!ok) {
		CHECK(r == ED_E_ALLOCATED || r == ED_E_RANGE);
		return;
	}
	CHECK_EQ(r, 0);
	nops[1]++;
	memset(o, 0, sizeof(*o));
	o->kind = 1;
	o->s = s;
	o->n = n;
	o->rc = rc;
	o->wc = wc;
	/* New sectors read as zeros until written (a reboot forgets that:
	 * then they show the disk's bytes), so what they held is gone. */
	for (uint64_t i = 0; i < n; i++)
		ver[s + i] = 0;
}

static void op_extent_change(void)
{
	dirtied();        /* first: it may write back, before the model changes */
	struct mobj *o = pick(1);
	if (o == NULL)
		return;
	ensure_cached(o);
	struct ed_protector p = prot(o, 0);
	int what = (int)rn(3);
	model_maps();
	if (what == 0) {                           /* grow */
		uint64_t k = 1 + rn(8);
		struct ed_operation st = { .one = k * SECT };
		int64_t r = req(ED_OP_EXTENT_GROW, &p, &st);
		if (!model_free(o->s + o->n, k)) {
			CHECK(r == ED_E_ALLOCATED || r == ED_E_RANGE);
			return;
		}
		CHECK_EQ(r, 0);
		for (uint64_t i = 0; i < k; i++)
			ver[o->s + o->n + i] = 0;
		o->n += k;
		nops[2]++;
	} else if (what == 1) {                    /* shrink */
		uint64_t k = rn(o->n + 1);
		struct ed_operation st = { .one = k * SECT };
		int64_t r = req(ED_OP_EXTENT_SHRINK, &p, &st);
		if (k == 0) {
			CHECK_EQ(r, ED_E_ARG);
			return;
		}
		if (k >= o->n) {
			CHECK_EQ(r, ED_E_RANGE);
			return;
		}
		CHECK_EQ(r, 0);
		o->n -= k;
		nops[3]++;
	} else {                                   /* deallocate */
		CHECK_EQ(req(ED_OP_EXTENT_DEALLOCATE, &p, NULL), 0);
		nops[4]++;
		if (!o->committed)
			forget(o);
		else
			o->dealloc = true;
	}
}

static void op_alloc_exonode(void)
{
	dirtied();        /* first: it may write back, before the model changes */
	struct mobj *o = NULL;
	int slot = 0;
	if (rn(2) == 0) {
		/* Another slot in an existing block. */
		o = pick(2);
		if (o == NULL)
			return;
		slot = (int)rn(3);
		ensure_cached(o);
		struct ed_protector p = prot(o, slot);
		int64_t r = req(ED_OP_EXONODE_ALLOCATE, &p, NULL);
		bool block_gone = !xn_any_live(o->cur);
		if (block_gone) {
			CHECK_EQ(r, ED_E_DEALLOC);
			return;
		}
		if (o->cur[slot].live || o->dead[slot]) {
			CHECK_EQ(r, ED_E_SLOT);
			return;
		}
		CHECK_EQ(r, 0);
		o->cur[slot].live = true;
		o->cur[slot].nent = 0;
		nops[5]++;
		return;
	}
	o = free_obj();
	if (o == NULL)
		return;
	uint64_t s = DS + rn(D - DS);
	for (int i = 0; i < MAXOBJ; i++)
		if (obj[i].kind == 2 && obj[i].s == s)
			return;        /* that is the other path */
	struct ed_cap rc = h_cap(rnd(), 3), wc = h_cap(rnd(), 4);
	struct ed_protector p = h_xn(0, s, 0, XNLEN, rc, wc);
	model_maps();
	int64_t r = req(ED_OP_EXONODE_ALLOCATE, &p, NULL);
	if (!model_free(s, 1)) {
		CHECK(r == ED_E_ALLOCATED || r == ED_E_NOTCACHED || r == ED_E_XNSIZE ||
		      r == ED_E_SLOT || r == ED_E_DEALLOC || r == ED_E_KIND);
		return;
	}
	CHECK_EQ(r, 0);
	memset(o, 0, sizeof(*o));
	o->kind = 2;
	o->s = s;
	o->rc = rc;
	o->wc = wc;
	o->cur[0].live = true;
	ver[s] = 0;
	nops[6]++;
}

static int live_slot(struct mobj *o)
{
	int k = (int)rn(3);
	for (int i = 0; i < 3; i++)
		if (o->cur[(k + i) % 3].live)
			return (k + i) % 3;
	return -1;
}

static int find_ent(struct mxn *x, int idx)
{
	for (int i = 0; i < x->nent; i++)
		if (x->e[i].idx == idx)
			return i;
	return -1;
}

static int lowest_free_idx(struct mxn *x)
{
	for (int idx = 0;; idx++)
		if (find_ent(x, idx) < 0)
			return idx;
}

static void op_exonode_change(void)
{
	dirtied();        /* first: it may write back, before the model changes */
	struct mobj *o = pick(2);
	if (o == NULL)
		return;
	int slot = live_slot(o);
	if (slot < 0)
		return;
	ensure_cached(o);
	struct mxn *x = &o->cur[slot];
	struct ed_protector p = prot(o, slot);
	int what = (int)rn(5);
	model_maps();
	if (what == 0) {                                   /* add an extent */
		uint64_t n = 1 + rn(16), s = DS + rn(D - DS);
		struct ed_operation st = { .one = s, .two = n * SECT };
		int64_t r = req(ED_OP_EXONODE_ADD_EXTENT, &p, &st);
		if (x->nent >= MAXENT - 2) {               /* keep room for splits */
			if (r >= 0) {
				/* It fit (the model is stricter than the exonode): undo. */
				p.xn_entry = (int32_t)r;
				CHECK_EQ(req(ED_OP_EXONODE_REMOVE_ENTRY, &p, NULL), 0);
			}
			return;
		}
		if (!model_free(s, n)) {
			CHECK(r == ED_E_ALLOCATED || r == ED_E_RANGE);
			return;
		}
		CHECK_EQ(r, lowest_free_idx(x));
		x->e[x->nent++] = (struct ment){ (int)r, s, n };
		for (uint64_t i = 0; i < n; i++)
			ver[s + i] = 0;
		nops[7]++;
	} else if (what == 1 && x->nent > 0) {             /* remove one */
		int k = (int)rn((uint64_t)x->nent);
		p.xn_entry = x->e[k].idx;
		CHECK_EQ(req(ED_OP_EXONODE_REMOVE_ENTRY, &p, NULL), 0);
		x->e[k] = x->e[--x->nent];
		nops[8]++;
	} else if (what == 2 && x->nent > 0 && x->nent < MAXENT) {   /* split */
		int k = (int)rn((uint64_t)x->nent);
		uint64_t off = rn(x->e[k].n + 1);
		p.xn_entry = x->e[k].idx;
		struct ed_operation st = { .one = off * SECT, .two = (uint64_t)-1 };
		int64_t r = req(ED_OP_EXONODE_SPLIT, &p, &st);
		if (off == 0 || off >= x->e[k].n) {
			CHECK_EQ(r, ED_E_RANGE);
			return;
		}
		CHECK_EQ(r, lowest_free_idx(x));
		x->e[x->nent++] = (struct ment){ (int)r, x->e[k].start + off, x->e[k].n - off };
		x->e[k].n = off;
		nops[9]++;
	} else if (what == 3 && x->nent > 1) {             /* combine */
		int i = (int)rn((uint64_t)x->nent), j = (int)rn((uint64_t)x->nent);
		if (i == j)
			return;
		p.xn_entry = x->e[i].idx;
		struct ed_operation st = { .one = (uint64_t)x->e[j].idx };
		int64_t r = req(ED_OP_EXONODE_COMBINE, &p, &st);
		bool adj = x->e[i].start + x->e[i].n == x->e[j].start ||
		           x->e[j].start + x->e[j].n == x->e[i].start;
		if (!adj) {
			CHECK_EQ(r, ED_E_RANGE);
			return;
		}
		CHECK_EQ(r, 0);
		x->e[i].start = x->e[i].start < x->e[j].start ? x->e[i].start : x->e[j].start;
		x->e[i].n += x->e[j].n;
		x->e[j] = x->e[--x->nent];
		nops[10]++;
	} else if (what == 4) {                            /* deallocate */
		CHECK_EQ(req(ED_OP_EXONODE_DEALLOCATE, &p, NULL), 0);
		bool was = o->committed && o->com[slot].live;
		x->live = false;
		x->nent = 0;
		o->dead[slot] = was;
		if (!xn_any_live(o->cur) && !o->committed)
			memset(o, 0, sizeof(*o));
		nops[11]++;
	}
}

/* A random range the object covers: [s, s+n). */
static bool covered_range(struct mobj *o, int *slot, uint64_t *s, uint64_t *n)
{
	if (o->kind == 1) {
		uint64_t a = rn(o->n), b = a + 1 + rn(o->n - a);
		*s = o->s + a;
		*n = b - a;
		*slot = 0;
		return true;
	}
	int sl = live_slot(o);
	if (sl < 0 || o->cur[sl].nent == 0)
		return false;
	struct ment *e = &o->cur[sl].e[rn((uint64_t)o->cur[sl].nent)];
	uint64_t a = rn(e->n), b = a + 1 + rn(e->n - a);
	*s = e->start + a;
	*n = b - a;
	*slot = sl;
	return true;
}

static void op_io(void)
{
	struct mobj *o = pick(rn(2) ? 1 : 2);
	if (o == NULL)
		return;
	int slot;
	uint64_t s, n;
	if (!covered_range(o, &slot, &s, &n))
		return;
	if (o->kind == 2 || rn(2) == 0)
		ensure_cached(o);       /* else maybe the uncached-extent read path */
	struct ed_protector p = prot(o, slot);
	static uint8_t buf[64 * SECT];
	if (n > 64)
		n = 64;
	bool write = rn(2) == 0;
	if (write) {
		ensure_cached(o);
		for (uint64_t i = 0; i < n; i++) {
			uint16_t v = (uint16_t)(1 + rn(60000));
			pattern(buf + i * SECT, s + i, v);
			ver[s + i] = v;
		}
		CHECK_EQ(h_io(&F.h, F.ed, &F.a, &p, 1, s, buf, n * SECT), 0);
		nops[12]++;
		return;
	}
	CHECK_EQ(h_io(&F.h, F.ed, &F.a, &p, 0, s, buf, n * SECT), 0);
	nops[13]++;
	uint8_t want[SECT];
	for (uint64_t i = 0; i < n; i++) {
		if (ver[s + i] == 0)
			continue;
		pattern(want, s + i, ver[s + i]);
		unsigned from = (o->kind == 1 && s + i == o->s) ? ED_EXT_HDR_BYTES : 0;
		if (memcmp(buf + i * SECT + from, want + from, SECT - from) != 0) {
			fprintf(stderr, "read of sector %llu returned wrong data\n", (unsigned long long)(s + i));
			exit(1);
		}
	}
	/* Someone without the capability gets nothing. */
	ensure_cached(o);
	p.rc = h_cap(rnd(), 99);
	CHECK_EQ(h_req(&F.h, F.ed, &F.b, ED_OP_IO, &p,
	               &(struct ed_buf){ .b_flags = ED_B_READ, .b_blkno = s, .b_bcount = SECT },
	               NULL, buf, SECT, NULL, 0, NULL), ED_E_CAP);
}

static void op_writeback(void)
{
	for (int t = 0; t < 4; t++) {
		struct mobj *o = &obj[rn(MAXOBJ)];
		if (o->kind)
			writeback(o);
	}
}

/* A clean reboot: uncommitted working copies are gone. */
static void op_remount(void)
{
	fx_remount(&F);
	for (int i = 0; i < MAXOBJ; i++) {
		struct mobj *o = &obj[i];
		if (!o->kind)
			continue;
		if (!o->committed) {
			forget(o);
			continue;
		}
		if (o->kind == 1) {
			o->n = o->com_n;
			o->dealloc = false;
		} else {
			for (int k = 0; k < 3; k++) {
				o->cur[k] = o->com[k];
				o->dead[k] = false;
			}
		}
	}
	nops[14]++;
}

static void op_evict(void)
{
	struct mobj *o = &obj[rn(MAXOBJ)];
	if (!o->kind)
		return;
	/* Name a live exonode of the block, so the write capability counts
	 * even when this client no longer holds the entry. */
	int slot = o->kind == 2 ? live_slot(o) : 0;
	struct ed_protector p = prot(o, slot < 0 ? 0 : slot);
	int64_t r = req(ED_OP_MARK_REPLACEMENT, &p, NULL);
	if (r == ED_E_CAP)
		CHECK(slot < 0);          /* no live exonode: no capability to show */
	else
		CHECK(r == 0 || r == ED_E_NOTCACHED);
}

static void run(uint64_t seed, int steps)
{
	seed_state = seed;
	memset(obj, 0, sizeof(obj));
	memset(ver, 0, sizeof(ver));
	struct ed_config cfg = { .cache_entries = 31, .client_quota = 29 };
	fx_new(&F, D, seed % 2 ? HD_POLLED : HD_SYNC, &cfg, seed);
	struct ed_check_stats st;
	CHECK_EQ(ed_check_live(F.ed, 0, NULL, NULL, &st), 0);
	DS = st.data_start;
	for (int i = 0; i < steps; i++) {
		int r = (int)rn(100);
		const char *what;
		if (r < 12) { op_alloc_extent(); what = "alloc extent"; }
		else if (r < 24) { op_extent_change(); what = "extent change"; }
		else if (r < 34) { op_alloc_exonode(); what = "alloc exonode"; }
		else if (r < 56) { op_exonode_change(); what = "exonode change"; }
		else if (r < 82) { op_io(); what = "io"; }
		else if (r < 94) { op_writeback(); what = "write-back"; }
		else if (r < 98) { op_evict(); what = "mark"; }
		else if (r < 99 && i % 7 == 0) { op_remount(); what = "remount"; }
		else { what = "nothing"; }
		compare_maps(what);
		if (i % 250 == 0)
			fx_check_live(&F);
	}
	writeback_all();
	compare_maps("final write-back");
	fx_check_live(&F);
	op_remount();
	compare_maps("final remount");
	fx_check_live(&F);
	fx_free(&F);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 16;
	for (int i = 0; i < runs; i++)
		run(0x9e3779b97f4a7c15ull * (uint64_t)(i + 1), 2500);
	printf("test_ed_random: ok (%d runs; write-backs %ld, extents %ld, exonodes %ld, "
	       "entries %ld, splits %ld, combines %ld, writes %ld, reads %ld, reboots %ld)\n",
	       runs, nops[0], nops[1], nops[6] + nops[5], nops[7], nops[9], nops[10], nops[12],
	       nops[13], nops[14]);
	return 0;
}
