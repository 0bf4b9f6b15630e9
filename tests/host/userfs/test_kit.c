/*
 * test_kit.c - the libFS kit (libos/kit/) piece by piece, on the host:
 *
 *   anchor   found again after a reboot by key and type alone; strangers'
 *            objects on the well-known places cost at most one read each;
 *            the cost of finding it does not grow with the disk; every place
 *            taken: -ENOSPC, and sb= instead
 *   lock     a second process waits, then -EBUSY; a dead holder frees it
 *   alloc    a rival process takes the sectors or the exonode block the
 *            allocator chose, of every kind, and the allocator looks again
 *   bytes    random writes, holes, truncates against a model, reopened from
 *            the exonode and after a reboot, on a disk full of old garbage
 *            that must never show
 *   commit   the barrier is skipped when nothing was written; dirty sets
 *   powercut the harness itself: a toy file system that orders its writes
 *            survives a cut at every request, one that commits its size
 *            before the barrier is caught
 */
#include <errno.h>
#include <string.h>
#include "libos/kit/kit.h"
#include "libos/clock.h"
#include "tests/host/userfs/powercut.h"

static struct ed_cap junk(uint64_t a) { return h_cap(a ^ 0xbad, a * 131 + 5); }

/* ---- anchor and lock --------------------------------------------------------- */

static void make_fs(const char *type, const char *opts, uint64_t *anchor)
{
	struct kit k;
	CHECK_EQ(kit_mkfs(&k, type, opts, 256), 0);
	uint64_t sb[2] = { 42, 43 };
	CHECK_EQ(kit_xn_put(&k, k.anchor, 0, 1, sb, sizeof sb), 0);
	CHECK_EQ(kit_commit(&k, k.anchor, 0), 0);
	*anchor = k.anchor;
}

static int place_index(struct kit *k, uint64_t s)
{
	for (unsigned i = 0; i < KIT_ANCHOR_PLACES; i++)
		if (kit_anchor_place(k, i) == s)
			return (int)i;
	return -1;
}

static void test_anchor_lock(void)
{
	struct ufx u;
	ufx_new(&u, 16384, HD_POLLED, 3);
	uint64_t a;
	make_fs("kt", "key=alice", &a);
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", "key=alice"), 0);
	CHECK_EQ(place_index(&k, a), 0);              /* an empty disk: the first place */
	CHECK(edc_fm_test(&k.fm, a) && !edc_fm_test(&k.fm, a + 1));
	struct kit k2;
	CHECK_EQ(kit_mkfs(&k2, "kt", "key=alice", 128), -EEXIST);
	ufx_reboot(&u);

	/* Found again by key and type alone. */
	CHECK_EQ(kit_mount(&k, "kt", "key=alice"), 0);
	CHECK_EQ(k.anchor, a);
	CHECK_EQ(k.st.probes, 1);
	uint64_t sb[2];
	CHECK_EQ(kit_xn_get(&k, k.anchor, 0, 1, sb, sizeof sb), 16);
	CHECK(sb[0] == 42 && sb[1] == 43);
	CHECK_EQ(kit_mount(&k2, "kt", "key=bob"), -ENODEV);
	CHECK_EQ(kit_mount(&k2, "other", "key=alice"), -ENODEV);
	CHECK_EQ(kit_mount(&k2, "kt", "key=bob,sb=0x10000000"), -EINVAL);

	/* The lock: a second process waits and gives up; when the holder dies
	 * without unlocking, the exodisk frees the lock with its process. */
	struct edc_host b;
	edc_host_init(&b, &u.f.h, u.f.ed);
	edc_set_default(&b.edc);
	CHECK_EQ(kit_mount(&k2, "kt", "key=alice,wait=0"), -EBUSY);
	uint64_t t0 = libos_time_ns();
	CHECK_EQ(kit_mount(&k2, "kt", "key=alice,wait=50"), -EBUSY);
	CHECK(libos_time_ns() - t0 >= 50 * 1000000ull);
	ufx_stop(&u);                                  /* alice's process dies */
	CHECK_EQ(kit_mount(&k2, "kt", "key=alice,wait=0"), 0);
	kit_unmount(&k2);
	CHECK(!edc_fm_test(&k2.fm, a + 1));           /* the lock left nothing behind */
	CHECK_EQ(kit_mount(&k2, "kt", "key=alice,wait=0"), 0);
	kit_unmount(&k2);
	edc_host_exit(&b);
	ufx_start(&u);
	/* A second file system of another type, same owner, same disk. */
	uint64_t a2;
	make_fs("kt2", "key=alice", &a2);
	CHECK(a2 != a);
	CHECK_EQ(kit_mount(&k, "kt2", "key=alice"), 0);
	CHECK_EQ(k.anchor, a2);
	kit_unmount(&k);
	ufx_free(&u);
}

/* Strangers' objects on the first places: mkfs takes the next; a mount
 * reads at most one block per stranger's exonode block in the way, and
 * costs the same on a disk eight times larger. */
static uint64_t squatted_mount_reads(uint64_t nsectors)
{
	struct ufx u;
	ufx_new(&u, nsectors, HD_POLLED, 4);
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", "key=carol"), 0);
	struct edc_host s;
	edc_host_init(&s, &u.f.h, u.f.ed);
	struct ed_cap c = junk(9);
	for (unsigned i = 0; i < 6; i++) {
		uint64_t at = kit_anchor_place(&k, i);
		if (edc_fm_test(&k.fm, at))
			continue;             /* the exodisk's own area, or a repeat */
		struct ed_protector p = i % 2 ? edc_prot_xn(0, at, 0, &c, &c) : edc_prot_extent(0, at, &c, &c);
		p.length = i % 2 ? 64 : 4096;
		CHECK_EQ(i % 2 ? edc_xn_alloc(&s.edc, &p) : edc_extent_alloc(&s.edc, &p), 0);
		CHECK_EQ(i % 2 ? edc_xn_write_sync(&s.edc, &p) : edc_extent_write_sync(&s.edc, &p), 0);
	}
	uint64_t a;
	make_fs("kt", "key=carol", &a);
	CHECK_EQ(place_index(&k, a), 6);
	edc_host_exit(&s);
	ufx_reboot(&u);
	uint64_t reads = u.f.hd.nread;
	CHECK_EQ(kit_mount(&k, "kt", "key=carol"), 0);
	reads = u.f.hd.nread - reads;
	CHECK_EQ(k.anchor, a);
	CHECK_EQ(k.st.probes, 7);
	CHECK(reads <= 4);                 /* 3 strangers' blocks and ours */
	kit_unmount(&k);
	ufx_free(&u);
	return reads;
}

static void test_anchor_full(void)
{
	/* Every place taken: mkfs says so, and sb= is the way out. */
	struct ufx u;
	ufx_new(&u, 16384, HD_POLLED, 5);
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", "key=dave"), 0);
	struct edc_host s;
	edc_host_init(&s, &u.f.h, u.f.ed);
	struct ed_cap c = junk(11);
	for (unsigned i = 0; i < KIT_ANCHOR_PLACES; i++) {
		uint64_t at = kit_anchor_place(&k, i);
		if (edc_fm_test(&k.fm, at))
			continue;             /* two places may coincide */
		struct ed_protector p = edc_prot_extent(0, at, &c, &c);
		p.length = 512;
		CHECK_EQ(edc_extent_alloc(&s.edc, &p), 0);
	}
	struct kit m;
	CHECK_EQ(kit_mkfs(&m, "kt", "key=dave", 128), -ENOSPC);
	uint64_t free_at = kit_find(&k, 8000, 2, 8);
	char opts[64];
	snprintf(opts, sizeof opts, "key=dave,sb=%llu", (unsigned long long)free_at);
	CHECK_EQ(kit_mkfs(&m, "kt", opts, 128), 0);
	CHECK_EQ(m.anchor, free_at);
	CHECK_EQ(kit_commit(&m, m.anchor, 0), 0);
	CHECK_EQ(kit_mount(&m, "kt", "key=dave"), -ENODEV);
	CHECK_EQ(kit_mount(&m, "kt", opts), 0);
	kit_unmount(&m);
	/* sb= on a taken sector, and a bad length. */
	CHECK_EQ(kit_mkfs(&m, "kt", opts, 128), -EEXIST);
	CHECK_EQ(kit_mkfs(&m, "kt", "key=erin", 1024), -EINVAL);
	edc_host_exit(&s);
	ufx_free(&u);
}

/* Exonode sizing, as docs/libfs.md states it: a block is sized for one
 * exonode of the length, and as many as fit share it. */
static void test_sizing(void)
{
	static const struct { uint32_t len, nsect, per; } t[] = {
		{ 64, 1, 7 }, { 120, 1, 4 }, { 152, 1, 3 }, { 240, 1, 2 }, { 480, 1, 1 },
		{ 488, 2, 2 }, { 504, 2, 1 }, { 992, 2, 1 }, { 1000, 3, 1 }, { 2016, 4, 1 },
	};
	struct ufx u;
	ufx_new(&u, 16384, HD_SYNC, 2);
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", ""), 0);
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		uint64_t s = kit_find(&k, 4000, 8, 8);
		for (uint32_t sl = 0; sl < t[i].per; sl++)
			CHECK_EQ(kit_xn_alloc(&k, s, (uint16_t)sl, t[i].len), 0);
		CHECK_EQ(kit_xn_alloc(&k, s, (uint16_t)t[i].per, t[i].len), ED_E_SLOT);
		for (uint32_t j = 0; j < 8; j++)
			CHECK_EQ(edc_fm_test(&k.fm, s + j), j < t[i].nsect);
		/* A freed slot that was never written back is free at once; one
		 * that was stays dead until the block is written back again. */
		CHECK_EQ(kit_xn_free(&k, s, 0), 0);
		CHECK_EQ(kit_xn_alloc(&k, s, 0, t[i].len), 0);
		CHECK_EQ(kit_commit(&k, s, 0), 0);
		CHECK_EQ(kit_xn_free(&k, s, 0), 0);
		/* (A block whose only exonode was freed waits for its write-back
		 * to be deallocated: ED_E_DEALLOC.) */
		CHECK_EQ(kit_xn_alloc(&k, s, 0, t[i].len), t[i].per > 1 ? ED_E_SLOT : ED_E_DEALLOC);
		CHECK_EQ(kit_commit(&k, s, t[i].per > 1 ? 1 : 0), 0);
		CHECK_EQ(kit_xn_alloc(&k, s, 0, t[i].len), 0);
	}
	ufx_free(&u);
}

/* ---- a rival that allocates where the kit was about to ----------------------
 * This transport sits between the kit's process and the core and, on every
 * `every`th allocation it sees, lets another process allocate the same
 * place first, with something of each kind in turn: an extent, an exonode
 * block of the same length (a slot taken), one of another length. */
struct rival {
	struct edc_host *inner, *other;
	int every, n, stolen[3];
	uint32_t len;                /* the exonode length the kit allocates */
};

static int64_t rival_request(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
                             struct ed_operation *stuff)
{
	struct rival *rv = ctx;
	uint64_t at = UINT64_MAX;
	if (op == ED_OP_EXONODE_ALLOCATE && prot->xn_num == 0)
		at = prot->blkno;
	else if (op == ED_OP_EXONODE_ADD_EXTENT)
		at = stuff->one;
	if (at != UINT64_MAX && rv->every > 0 && ++rv->n % rv->every == 0) {
		struct ed_cap c = junk(at);
		int kind = (rv->stolen[0] + rv->stolen[1] + rv->stolen[2]) % 3;
		struct ed_protector p = kind == 0 ? edc_prot_extent(0, at, &c, &c)
		                                  : edc_prot_xn(0, at, 0, &c, &c);
		p.length = kind == 0 ? 512 : kind == 1 ? rv->len : 64;
		int64_t r = kind == 0 ? edc_extent_alloc(&rv->other->edc, &p)
		                      : edc_xn_alloc(&rv->other->edc, &p);
		rv->stolen[kind] += r == 0;
	}
	return rv->inner->edc.t->request(rv->inner, op, prot, buf, stuff);
}

static struct edc_host *inner(void *ctx) { return ((struct rival *)ctx)->inner; }
static void rival_idle(void *ctx) { inner(ctx)->edc.t->idle(inner(ctx)); }
static const uint64_t *rival_fm(void *ctx, int unit, uint32_t i)
{
	return inner(ctx)->edc.t->fm_page(inner(ctx), unit, i);
}
static uint64_t rival_nsect(void *ctx, int unit)
{
	return inner(ctx)->edc.t->nsectors(inner(ctx), unit);
}
static const struct edc_transport rival_transport = {
	rival_request, rival_idle, rival_fm, rival_nsect,
};

static void test_alloc_races(void)
{
	struct ufx u;
	ufx_new(&u, 32768, HD_SYNC, 6);
	struct edc_host other;
	edc_host_init(&other, &u.f.h, u.f.ed);
	struct rival rv = { .inner = &u.p, .other = &other, .len = 160 };
	struct edc wrapped;
	edc_init(&wrapped, &rival_transport, &rv);
	edc_set_default(&wrapped);
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", "key=race"), 0);
	struct kit_pool pool = { .len = 160 };
	rv.every = 2;
	uint64_t xs[40];
	uint16_t sl[40];
	for (int i = 0; i < 40; i++) {
		CHECK_EQ(kit_alloc_xn(&k, &pool, 1000, &xs[i], &sl[i]), 0);
		uint64_t start;
		int64_t n = kit_alloc_extent(&k, xs[i], sl[i], 1, xs[i], 24, 8, &start);
		CHECK(n == 24);
		CHECK(start % KIT_UNIT == 0);
		/* Ours: written and read through the exonode. */
		static uint8_t w[24 * 512], r[24 * 512];
		memset(w, i + 1, sizeof w);
		CHECK_EQ(kit_io(&k, xs[i], sl[i], 1, start, w, sizeof w), 0);
		CHECK_EQ(kit_io(&k, xs[i], sl[i], 0, start, r, sizeof r), 0);
		CHECK(memcmp(w, r, sizeof w) == 0);
		CHECK_EQ(kit_commit(&k, xs[i], sl[i]), 0);
	}
	rv.every = 0;
	for (int kind = 0; kind < 3; kind++)
		CHECK(rv.stolen[kind] > 0);
	CHECK(k.st.raced >= 10);
	/* No two exonodes in one place, no allocation starting at 1 (mod 8). */
	for (int i = 0; i < 40; i++) {
		CHECK(xs[i] % 8 != 1);
		for (int j = 0; j < i; j++)
			CHECK(xs[i] != xs[j] || sl[i] != sl[j]);
	}
	fx_check_live(&u.f);
	edc_host_exit(&other);
	edc_set_default(&u.p.edc);
	ufx_free(&u);
}

/* Many one-sector exonode blocks around one goal: each group of 8 keeps
 * its lock sector free, and the finder must skip all of them (a fixed
 * number of skips once said -ENOSPC after 441 blocks on an empty disk). */
static void test_many_blocks(void)
{
	struct ufx u;
	ufx_new(&u, 262144, HD_SYNC, 8);      /* room for 2,166 exonode blocks */
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", "key=many"), 0);
	struct kit_pool pool = { .len = 480 };
	uint64_t xs;
	uint16_t sl;
	for (int i = 0; i < 1000; i++) {
		CHECK_EQ(kit_alloc_xn(&k, &pool, 5000, &xs, &sl), 0);
		CHECK(xs % 8 != 1);
		CHECK_EQ(kit_commit(&k, xs, sl), 0);
	}
	ufx_free(&u);
}

/* ---- the byte store against a model ------------------------------------------ */

#define MODEL_MAX (600 * 1024)
static uint8_t model[MODEL_MAX], got[MODEL_MAX], src[MODEL_MAX];

static uint64_t rs = 77;
static uint64_t rn(uint64_t n) { rs = rs * 6364136223846793005ull + 1442695040888963407ull; return (rs >> 33) % n; }

static void same_as_model(struct kit *k, struct kit_bytes *b, uint64_t size)
{
	CHECK_EQ(b->size, size);
	CHECK_EQ(kit_bytes_read(k, b, got, MODEL_MAX, 0), (long)size);
	for (uint64_t i = 0; i < size; i++)
		if (got[i] != model[i]) {
			fprintf(stderr, "byte %llu: %#x, expected %#x\n", (unsigned long long)i, got[i], model[i]);
			CHECK(0);
		}
}

static void test_bytes(void)
{
	struct pcut pc;                   /* only for its disk full of garbage */
	memset(&pc, 0, sizeof pc);
	ufx_new(&pc.u, 32768, HD_POLLED, 7);
	for (uint64_t s = 0; s < pc.u.f.hd.nsectors; s++)
		if (!fx_allocated(&pc.u.f, s))
			memset(pc.u.f.hd.medium + s * 512, PC_GARBAGE, 512);
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", "key=bytes"), 0);
	struct kit_pool pool = { .len = 480 };
	uint64_t xs;
	uint16_t sl;
	CHECK_EQ(kit_alloc_xn(&k, &pool, 2000, &xs, &sl), 0);
	struct kit_bytes b;
	kit_bytes_init(&b, xs, sl, 2);
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (uint8_t)(1 + i % 251);     /* never 0, never 0xEE */
	uint64_t size = 0;
	memset(model, 0, sizeof model);
	for (int step = 0; step < 400; step++) {
		uint64_t op = rn(10);
		if (op < 6) {
			uint64_t off = rn(op == 0 ? MODEL_MAX / 2 : size + 2000);
			uint64_t n = 1 + rn(op == 1 ? 70000 : 3000);
			if (off + n > MODEL_MAX)
				n = MODEL_MAX - off;
			uint64_t from = rn(sizeof src - n);
			CHECK_EQ(kit_bytes_write(&k, &b, src + from, n, off), (long)n);
			memcpy(model + off, src + from, n);
			if (off + n > size)
				size = off + n;
		} else if (op < 8) {
			uint64_t len = rn(op == 6 ? size + 1 : MODEL_MAX);
			CHECK_EQ(kit_bytes_truncate(&k, &b, len), 0);
			if (len < size)
				memset(model + len, 0, size - len);
			size = len;
			if (rn(2))
				CHECK_EQ(kit_bytes_trim(&k, &b), 0);
		} else if (op == 8) {
			/* Reopened from the exonode's own entries. */
			struct kit_bytes c;
			CHECK_EQ(kit_bytes_open(&k, &c, xs, sl, 2, size), 0);
			CHECK_EQ(c.n, b.n);
			CHECK_EQ(c.nsect, b.nsect);
			b = c;
		} else {
			uint64_t off = rn(size + 1000), n = rn(20000);
			long want = off >= size ? 0 : (long)(off + n > size ? size - off : n);
			CHECK_EQ(kit_bytes_read(&k, &b, got, n, off), want);
			CHECK(want == 0 || memcmp(got, model + off, (size_t)want) == 0);
		}
		if (step % 50 == 49)
			same_as_model(&k, &b, size);
	}
	same_as_model(&k, &b, size);
	CHECK(b.n < KIT_BYTES_EXT);
	/* Durable: the size in the exonode after a barrier, then a reboot. */
	CHECK_EQ(kit_xn_put(&k, xs, sl, 0, &size, sizeof size), 0);
	CHECK_EQ(kit_bytes_trim(&k, &b), 0);
	CHECK_EQ(kit_publish(&k, xs, sl), 0);
	ufx_reboot(&pc.u);
	CHECK_EQ(kit_open(&k, "kt", "key=bytes"), 0);
	uint64_t back = 0;
	CHECK_EQ(kit_xn_get(&k, xs, sl, 0, &back, sizeof back), 8);
	CHECK_EQ(back, size);
	CHECK_EQ(kit_bytes_open(&k, &b, xs, sl, 2, back), 0);
	same_as_model(&k, &b, size);
	/* A size the extents cannot hold is refused. */
	CHECK_EQ(kit_bytes_open(&k, &b, xs, sl, 2, b.nsect * 512 + 1), -EIO);
	fx_check_live(&pc.u.f);
	ufx_free(&pc.u);
}

/* ---- commit ---------------------------------------------------------------------- */

static void test_commit(void)
{
	struct ufx u;
	ufx_new(&u, 16384, HD_POLLED, 8);
	struct kit k;
	CHECK_EQ(kit_open(&k, "kt", "key=commit"), 0);
	struct kit_pool pool = { .len = 120 };
	struct kit_dirty d;
	memset(&d, 0, sizeof d);
	uint64_t xs[10];
	uint16_t sl[10];
	for (int i = 0; i < 10; i++) {
		CHECK_EQ(kit_alloc_xn(&k, &pool, 3000, &xs[i], &sl[i]), 0);
		CHECK_EQ(kit_dirty_add(&d, xs[i], sl[i], i % 3), 0);
	}
	CHECK(d.n < 10);                       /* four to a block: one entry each */
	uint64_t f0 = u.p.nflushes;
	CHECK_EQ(kit_barrier(&k), 0);
	CHECK_EQ(u.p.nflushes, f0);            /* nothing written: no flush */
	uint64_t start;
	CHECK_EQ(kit_alloc_extent(&k, xs[0], sl[0], 1, 0, 8, 8, &start), 8);
	static uint8_t w[4096];
	CHECK_EQ(kit_io(&k, xs[0], sl[0], 1, start, w, sizeof w), 0);
	CHECK_EQ(kit_publish(&k, xs[0], sl[0]), 0);
	CHECK_EQ(u.p.nflushes, f0 + 1);
	CHECK_EQ(kit_publish(&k, xs[0], sl[0]), 0);      /* clean, and no flush */
	CHECK_EQ(u.p.nflushes, f0 + 1);
	CHECK_EQ(kit_dirty_commit(&k, &d), 0);
	CHECK_EQ(d.n, 0);
	kit_dirty_free(&d);
	ufx_reboot(&u);
	CHECK_EQ(kit_open(&k, "kt", "key=commit"), 0);
	for (int i = 0; i < 10; i++) {
		uint8_t page[4096];
		CHECK_EQ(kit_xn_map(&k, xs[i], sl[i], page), 0);    /* all durable */
	}
	ufx_free(&u);
}

/* ---- the power-cut harness, on a toy file system ------------------------------
 * One file: the anchor's entry 1 holds its size, entries 2.. its bytes.
 * The workload appends chunks; each append is acknowledged once durable.
 * `broken` commits the size before the barrier. */
struct toy {
	int broken;
	int chunks;
};

static uint8_t chunk_byte(int i) { return (uint8_t)('a' + i % 26); }

static int toy_prepare(struct pcut *pc)
{
	struct kit k;
	uint64_t size = 0;
	int e = kit_mkfs(&k, "toy", "key=toy", 256);
	if (e == 0)
		e = kit_err(kit_xn_put(&k, k.anchor, 0, 1, &size, sizeof size));
	return e < 0 ? e : kit_commit(&k, k.anchor, 0);
}

static int toy_work(struct pcut *pc)
{
	struct toy *t = pc->arg;
	struct kit k;
	struct kit_bytes b;
	int e = kit_mount(&k, "toy", "key=toy");
	if (e < 0)
		return e;
	kit_bytes_init(&b, k.anchor, 0, 2);
	static uint8_t buf[5000];
	for (int i = 0; i < t->chunks; i++) {
		memset(buf, chunk_byte(i), sizeof buf);
		long n = kit_bytes_write(&k, &b, buf, sizeof buf, b.size);
		if (n < 0)
			return (int)n;
		if (t->broken) {
			e = kit_err(kit_xn_put(&k, k.anchor, 0, 1, &b.size, 8));
			if (e == 0)
				e = kit_commit(&k, k.anchor, 0);
			if (e == 0)
				e = kit_barrier(&k);
		} else {
			e = kit_barrier(&k);
			if (e == 0)
				e = kit_err(kit_xn_put(&k, k.anchor, 0, 1, &b.size, 8));
			if (e == 0)
				e = kit_commit(&k, k.anchor, 0);
		}
		if (e < 0)
			return e;
		pc_ack(pc, (uint64_t)i + 1);
	}
	kit_unmount(&k);
	return 0;
}

static int toy_check(struct pcut *pc)
{
	struct kit k;
	uint64_t size = 0;
	int e = kit_mount(&k, "toy", "key=toy");
	if (e == 0)
		e = kit_err(kit_xn_get(&k, k.anchor, 0, 1, &size, 8));
	struct kit_bytes b;
	if (e >= 0)
		e = kit_bytes_open(&k, &b, k.anchor, 0, 2, size);
	if (e < 0) {
		if (!pc->quiet)
			fprintf(stderr, "toy: mount: %d\n", e);
		return 1;
	}
	/* At least what was acknowledged, at most one more chunk, whole. */
	uint64_t chunks = size / 5000;
	if (size % 5000 != 0 || chunks < pc->acked || chunks > pc->acked + 1) {
		if (!pc->quiet)
			fprintf(stderr, "toy: size %llu after %llu chunks acknowledged\n",
		        (unsigned long long)size, (unsigned long long)pc->acked);
		return 1;
	}
	static uint8_t buf[5000];
	for (uint64_t i = 0; i < chunks; i++) {
		if (kit_bytes_read(&k, &b, buf, 5000, i * 5000) != 5000)
			return 1;
		for (int j = 0; j < 5000; j++)
			if (buf[j] != chunk_byte((int)i)) {
				if (!pc->quiet)
			fprintf(stderr, "toy: chunk %llu byte %d: %#x\n", (unsigned long long)i, j, buf[j]);
				return 1;
			}
	}
	kit_unmount(&k);
	return 0;
}

static void test_harness(void)
{
	struct toy t = { .broken = 0, .chunks = 12 };
	struct pcut pc = { .name = "toy", .nsectors = 16384, .seed = 9, .prepare = toy_prepare,
	                   .work = toy_work, .check = toy_check, .arg = &t };
	CHECK_EQ(pc_run(&pc, 0, -1, 1), 0);
	CHECK(pc.requests > 30);
	CHECK_EQ(pc.runs, pc.requests + 1);
	pc_free(&pc);
	/* The same workload with the size committed before the barrier: some
	 * cut must leave a durable size over data the disk never got. */
	t.broken = 1;
	memset(&pc, 0, sizeof pc);
	pc = (struct pcut){ .name = "toy-broken", .nsectors = 16384, .seed = 9, .quiet = 1,
	                    .prepare = toy_prepare, .work = toy_work, .check = toy_check, .arg = &t };
	int failed = pc_run(&pc, 0, -1, 1);
	CHECK(failed > 0);
	pc_free(&pc);
}

int main(void)
{
	test_anchor_lock();
	uint64_t small = squatted_mount_reads(16384), big = squatted_mount_reads(131072);
	CHECK_EQ(small, big);
	test_anchor_full();
	test_sizing();
	test_alloc_races();
	test_many_blocks();
	test_bytes();
	test_commit();
	test_harness();
	printf("test_kit: ok\n");
	return 0;
}
