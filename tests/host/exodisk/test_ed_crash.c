/*
 * test_ed_crash.c - power failures at random moments, and recovery.
 *
 * A random workload runs with write-backs left in flight on a disk with a
 * volatile write cache and a small commit log (so checkpoints happen all
 * the time).  At a random moment the power fails: writes in flight and
 * cached writes each reach the medium or not, sector by sector.  Then:
 *
 *  - the disk as the next mount will see it (ed_check_disk, read-only) has
 *    no violation: every allocated sector belongs to exactly one binding,
 *    nothing is leaked, nothing freed is still referred to - so no sector
 *    was lost and none was reused before the binding that dropped it was
 *    durable;
 *  - every object is exactly as its last acknowledged write-back left it,
 *    or as the write-back in flight at the crash would have left it; nothing
 *    that was never written back exists;
 *  - sometimes the power fails again during recovery, which must still
 *    end in a good mount at the next boot;
 *  - the mounted disk passes the live check, and the workload continues.
 */
#include "tests/host/exodisk/edfixture.h"
#include "kernel/exodisk/ondisk.h"

#define D       16384
#define SECT    512
#define MAXOBJ  40
#define MAXENT  6
#define XNLEN   152

struct cx {
	bool live;
	int nent;
	struct { uint64_t start, n; } e[MAXENT];
};

struct cstate {                /* what a write-back makes durable */
	bool exists;
	uint64_t n;                /* extent */
	struct cx slot[3];         /* exonode block */
};

struct cobj {
	int kind;                  /* 0 unused, 1 extent, 2 exonode block */
	uint64_t s;
	struct ed_cap rc, wc;
	struct cstate cur, acked, flight;
	bool dead[3];              /* deallocated slots awaiting write-back */
	bool inflight;
	int32_t res;
};

static struct cobj obj[MAXOBJ];
static struct fx F;
static uint64_t DS, rs;
static long ncrash, nrecrash, nacked, nflight_at_crash;

static uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ull;
}

static uint64_t rn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool block_exists(const struct cstate *c)
{
	return c->slot[0].live || c->slot[1].live || c->slot[2].live;
}

static struct ed_protector prot(const struct cobj *o, int slot)
{
	if (o->kind == 1)
		return h_ext(0, o->s, 0, o->rc, o->wc);
	return h_xn(0, o->s, (uint16_t)slot, XNLEN, o->rc, o->wc);
}

static int64_t req(int op, struct ed_protector *p, struct ed_operation *st)
{
	return h_req(&F.h, F.ed, &F.a, op, p, NULL, st, NULL, 0, NULL, 0, NULL);
}

/* Harvest finished write-backs. */
static void harvest(void)
{
	for (int i = 0; i < MAXOBJ; i++) {
		struct cobj *o = &obj[i];
		if (!o->kind || !o->inflight || o->res == ED_PENDING)
			continue;
		o->inflight = false;
		CHECK_EQ(o->res, 0);
		o->acked = o->flight;
		for (int k = 0; k < 3; k++)
			o->dead[k] = false;
		nacked++;
		if (!o->acked.exists && !o->cur.exists)
			memset(o, 0, sizeof(*o));
	}
}

static bool usable(struct cobj *o)
{
	if (!o->kind || o->inflight)
		return false;
	struct ed_protector p = prot(o, 0);
	if (req(ED_OP_IN_CACHE, &p, NULL) != 0)
		return true;
	if (!o->acked.exists)
		return false;
	return h_sync(&F.h, F.ed, &F.a, o->kind == 1 ? ED_OP_EXTENT_READ : ED_OP_EXONODE_READ, &p) == 0;
}

static void start_writeback(struct cobj *o)
{
	struct ed_protector p = prot(o, 0);
	if (!(req(ED_OP_IN_CACHE, &p, NULL) & ED_IC_DIRTY))
		return;
	if (o->kind == 2)
		for (int k = 0; k < 3; k++)
			if (o->cur.slot[k].live || o->dead[k])
				p = prot(o, k);
	struct ed_buf b;
	memset(&b, 0, sizeof(b));
	CHECK_EQ(h_req(&F.h, F.ed, &F.a, o->kind == 1 ? ED_OP_EXTENT_WRITE : ED_OP_EXONODE_WRITE,
	               &p, &b, NULL, NULL, 0, NULL, 0, &o->res), 0);
	o->inflight = true;
	o->flight = o->cur;
}

static struct cobj *free_obj(void)
{
	for (int i = 0; i < MAXOBJ; i++)
		if (!obj[i].kind)
			return &obj[i];
	return NULL;
}

static void step(void)
{
	struct cobj *o = &obj[rn(MAXOBJ)];
	int r = (int)rn(100);
	if (r < 10) {
		struct cobj *n = free_obj();
		if (n == NULL)
			return;
		uint64_t s = DS + rn(D - DS - 64), len = 1 + rn(32);
		struct ed_cap rc = h_cap(rnd(), 1), wc = h_cap(rnd(), 2);
		struct ed_protector p = h_ext(0, s, len * SECT, rc, wc);
		if (req(ED_OP_EXTENT_ALLOCATE, &p, NULL) != 0)
			return;
		memset(n, 0, sizeof(*n));
		n->kind = 1;
		n->s = s;
		n->rc = rc;
		n->wc = wc;
		n->cur.exists = true;
		n->cur.n = len;
	} else if (r < 18) {
		struct cobj *n = free_obj();
		if (n == NULL)
			return;
		uint64_t s = DS + rn(D - DS - 64);
		struct ed_cap rc = h_cap(rnd(), 3), wc = h_cap(rnd(), 4);
		struct ed_protector p = h_xn(0, s, 0, XNLEN, rc, wc);
		for (int i = 0; i < MAXOBJ; i++)
			if (obj[i].kind && obj[i].s == s)
				return;
		if (req(ED_OP_EXONODE_ALLOCATE, &p, NULL) != 0)
			return;
		memset(n, 0, sizeof(*n));
		n->kind = 2;
		n->s = s;
		n->rc = rc;
		n->wc = wc;
		n->cur.exists = true;
		n->cur.slot[0].live = true;
	} else if (r < 35) {
		if (o->kind != 1 || !o->cur.exists || !usable(o))
			return;
		struct ed_protector p = prot(o, 0);
		int what = (int)rn(4);
		if (what == 0) {
			struct ed_operation st = { .one = (1 + rn(8)) * SECT };
			if (req(ED_OP_EXTENT_GROW, &p, &st) == 0)
				o->cur.n += st.one / SECT;
		} else if (what == 1 && o->cur.n > 1) {
			struct ed_operation st = { .one = (1 + rn(o->cur.n - 1)) * SECT };
			CHECK_EQ(req(ED_OP_EXTENT_SHRINK, &p, &st), 0);
			o->cur.n -= st.one / SECT;
		} else if (what == 2) {
			CHECK_EQ(req(ED_OP_EXTENT_DEALLOCATE, &p, NULL), 0);
			o->cur.exists = false;
			if (!o->acked.exists)
				memset(o, 0, sizeof(*o));
		} else {
			static uint8_t buf[8 * SECT];
			uint64_t n = 1 + rn(o->cur.n < 8 ? o->cur.n : 8);
			int32_t res;
			struct ed_buf b = { .b_flags = ED_B_WRITE, .b_blkno = o->s + rn(o->cur.n - n + 1),
			                    .b_bcount = n * SECT };
			CHECK_EQ(h_req(&F.h, F.ed, &F.a, ED_OP_IO, &p, &b, NULL, buf, n * SECT, NULL, 0,
			               &res), 0);
			CHECK_EQ(h_wait(&res), 0);
		}
	} else if (r < 60) {
		if (o->kind != 2 || !o->cur.exists || !usable(o))
			return;
		int k = (int)rn(3);
		struct cx *x = &o->cur.slot[k];
		struct ed_protector p = prot(o, k);
		int what = (int)rn(4);
		if (!x->live) {
			if (o->dead[k])
				return;
			if (req(ED_OP_EXONODE_ALLOCATE, &p, NULL) == 0)
				x->live = true;
			return;
		}
		if (what <= 1 && x->nent < MAXENT) {
			uint64_t s = DS + rn(D - DS - 64), n = 1 + rn(16);
			struct ed_operation st = { .one = s, .two = n * SECT };
			if (req(ED_OP_EXONODE_ADD_EXTENT, &p, &st) >= 0) {
				x->e[x->nent].start = s;
				x->e[x->nent].n = n;
				x->nent++;
			}
		} else if (what == 2 && x->nent > 0) {
			/* Remove the entry with the lowest entry number still there:
			 * entry numbers are assigned lowest-free, so find it by
			 * reading entry 0.. until one removes. */
			for (int idx = 0; idx < 8; idx++) {
				p.xn_entry = idx;
				if (req(ED_OP_EXONODE_REMOVE_ENTRY, &p, NULL) == 0)
					break;
			}
			/* Which one went is not needed: refresh this slot's list from
			 * the exonode map. */
			struct ed_operation m = { .one = ED_MAP_MAP };
			p.xn_entry = -1;
			int64_t ua = req(ED_OP_EXONODE_MAP, &p, &m);
			CHECK(ua > 0);
			const struct ed_xnmap_hdr *mh = h_map_page(&F.h, (uint64_t)ua);
			const struct ed_xnmap_ent *me = (const void *)(mh + 1);
			x->nent = 0;
			for (int i = 0; i < mh->nent; i++) {
				x->e[x->nent].start = me[i].a;
				x->e[x->nent].n = me[i].b;
				x->nent++;
			}
			m.one = ED_MAP_UNMAP;
			m.two = (uint64_t)ua;
			CHECK_EQ(req(ED_OP_EXONODE_MAP, &p, &m), 0);
		} else if (what == 3) {
			CHECK_EQ(req(ED_OP_EXONODE_DEALLOCATE, &p, NULL), 0);
			o->dead[k] = o->acked.exists && o->acked.slot[k].live;
			x->live = false;
			x->nent = 0;
			o->cur.exists = block_exists(&o->cur);
			if (!o->cur.exists && !o->acked.exists)
				memset(o, 0, sizeof(*o));
		}
	} else if (r < 85) {
		if (o->kind && !o->inflight)
			start_writeback(o);
	} else {
		for (int i = 0; i < 1 + (int)rn(20); i++)
			blk_poll();
	}
	harvest();
}

/* ---- after the crash: what the disk holds --------------------------------------------- */

struct found {
	int kind;
	uint64_t s;
	struct cstate st;
};
static struct found found[4 * MAXOBJ];
static int nfound;

static void visit(void *arg, uint8_t kind, uint64_t sector, uint32_t nsect, const uint8_t *plain)
{
	CHECK(nfound < 4 * MAXOBJ);
	struct found *f = &found[nfound++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->s = sector;
	f->st.exists = true;
	if (kind == 1) {
		f->st.n = ((const struct ed_exthdr *)plain)->nsectors;
		return;
	}
	const struct ed_xnblk *b = (const void *)plain;
	CHECK_EQ(b->slot_bytes, XNLEN);
	for (int k = 0; k < 3; k++) {
		const struct ed_xnhdr *x = (const void *)(plain + ED_XNBLK_HDR_BYTES + k * XNLEN);
		if (x->state != ED_SLOT_LIVE)
			continue;
		f->st.slot[k].live = true;
		const uint8_t *p = (const uint8_t *)(x + 1);
		for (uint32_t off = 0; off < x->used; off += ED_XN_EXTENT_BYTES) {
			const struct ed_xnrec *r = (const void *)(p + off);
			CHECK_EQ(r->type, ED_ENT_EXTENT);
			struct cx *c = &f->st.slot[k];
			c->e[c->nent].start = ed_load64(r + 1);
			c->e[c->nent].n = r->a;
			c->nent++;
		}
	}
}

static bool same_slot(const struct cx *a, const struct cx *b)
{
	if (a->live != b->live || a->nent != b->nent)
		return false;
	for (int i = 0; i < a->nent; i++) {
		bool hit = false;
		for (int j = 0; j < b->nent; j++)
			hit |= a->e[i].start == b->e[j].start && a->e[i].n == b->e[j].n;
		if (!hit)
			return false;
	}
	return true;
}

static bool same(int kind, const struct cstate *a, const struct cstate *b)
{
	if (a->exists != b->exists)
		return false;
	if (!a->exists)
		return true;
	if (kind == 1)
		return a->n == b->n;
	for (int k = 0; k < 3; k++)
		if (!same_slot(&a->slot[k], &b->slot[k]))
			return false;
	return true;
}

static void verify_after_crash(void)
{
	struct ed_check_stats st;
	nfound = 0;
	CHECK_EQ(ed_check_disk(F.ed, 0, fx_report, visit, &F, &st), 0);
	if (st.violations != 0)
		fprintf(stderr, "after crash %ld: %llu violations\n", ncrash,
		        (unsigned long long)st.violations);
	CHECK_EQ(st.violations, 0);
	CHECK_EQ(st.notes, 0);
	/* Every object is as acknowledged, or as its write-back in flight. */
	bool matched[4 * MAXOBJ] = { false };
	for (int i = 0; i < MAXOBJ; i++) {
		struct cobj *o = &obj[i];
		if (!o->kind)
			continue;
		struct cstate none;
		memset(&none, 0, sizeof(none));
		const struct cstate *actual = &none;
		for (int j = 0; j < nfound; j++)
			if (found[j].s == o->s) {
				CHECK_EQ(found[j].kind, o->kind);
				actual = &found[j].st;
				matched[j] = true;
			}
		bool ok = same(o->kind, actual, &o->acked) ||
		          (o->inflight && same(o->kind, actual, &o->flight));
		if (!ok) {
			fprintf(stderr, "crash %ld: object at %llu (kind %d, in flight %d) not as written back\n",
			        ncrash, (unsigned long long)o->s, o->kind, o->inflight);
			exit(1);
		}
		nflight_at_crash += o->inflight;
		/* The model now follows the disk. */
		o->inflight = false;
		o->acked = o->cur = *actual;
		memset(o->dead, 0, sizeof(o->dead));
		if (!actual->exists)
			memset(o, 0, sizeof(*o));
	}
	for (int j = 0; j < nfound; j++)
		if (!matched[j]) {
			fprintf(stderr, "crash %ld: a binding at %llu that was never written back\n", ncrash,
			        (unsigned long long)found[j].s);
			exit(1);
		}
}

static void crash_and_recover(void)
{
	ncrash++;
	hostdisk_crash(&F.hd);
	ed_destroy(F.ed);
	h_drop_pins(&F.h);
	blk_reset();
	CHECK(hostdisk_reattach(&F.hd) == 0);
	F.ed = h_core(&F.h, &F.cfg, NULL);
	fx_clients(&F);
	verify_after_crash();
	/* Sometimes the power fails again, during recovery. */
	while (rn(3) == 0) {
		nrecrash++;
		F.hd.die_countdown = (int64_t)rn(12);
		int e = ed_mount(F.ed, 0);
		/* Either recovery failed, or it finished just before the power
		 * did; either way this core is gone. */
		CHECK(e <= 0);
		ed_destroy(F.ed);
		h_drop_pins(&F.h);
		blk_reset();
		CHECK(hostdisk_reattach(&F.hd) == 0);
		F.ed = h_core(&F.h, &F.cfg, NULL);
		fx_clients(&F);
		verify_after_crash();
	}
	CHECK_EQ(ed_mount(F.ed, 0), 0);
	CHECK_EQ(F.h.pins, 0);
	fx_check_live(&F);
}

static void run(uint64_t seed)
{
	rs = seed;
	memset(obj, 0, sizeof(obj));
	struct ed_format_opts fo = { .log_sectors = 48 };
	fx_new_fmt(&F, D, HD_POLLED, NULL, seed, &fo);
	struct ed_check_stats st;
	CHECK_EQ(ed_check_live(F.ed, 0, NULL, NULL, &st), 0);
	DS = st.data_start;
	for (int c = 0; c < 6; c++) {
		int steps = 50 + (int)rn(400);
		for (int i = 0; i < steps; i++)
			step();
		crash_and_recover();
	}
	fx_free(&F);
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 40;
	for (int i = 0; i < runs; i++)
		run(0x243f6a8885a308d3ull * (uint64_t)(i + 3));
	printf("test_ed_crash: ok (%ld crashes, %ld more during recovery, %ld write-backs "
	       "acknowledged, %ld in flight at a crash)\n", ncrash, nrecrash, nacked, nflight_at_crash);
	return 0;
}
