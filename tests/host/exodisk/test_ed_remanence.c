/*
 * test_ed_remanence.c - no application reads bytes another one freed
 * (issue 17 item 4; kernel/exodisk/unwritten.c).
 *
 * Client a fills sectors with a secret and frees them; client b allocates
 * the same sectors (a self-protected extent, an exonode's extent entry, a
 * grown extent) and reads them through every path a read can take - the
 * plain request, the header sector of a cached extent, the bounce read of
 * an extent whose header is not cached, a proxy - before and after writing
 * part of them: whatever it did not write reads as zeros, never a byte of
 * the secret, and what it wrote reads back.
 *
 * Then the same across power cuts (test_powercut; `test_ed_remanence all`
 * for the exhaustive run): a workload allocates
 * over freed secrets, writes some sectors, flushes some of them, commits,
 * checkpoints (whose records carry the unwritten set), and the power is cut
 * at each of its disk requests in turn, losing every write not flushed (or,
 * in a second pass, each one by chance).  After the reboot, every object
 * that exists reads as: what was flushed since it was allocated, where a
 * flush was acknowledged; otherwise what was written or zeros; never a
 * byte of the secret.
 */
#include "tests/host/exodisk/edfixture.h"
#include "kernel/exodisk/edcore.h"        /* test_cycle_records watches the flush cycle */

#define D    8192
#define SECT 512
#define N    40                      /* sectors of the freed region */

static struct ed_cap RC, WC, RC2, WC2;
static bool exhaustive;         /* argv[1] "all" */

static int64_t op(struct fx *f, struct ed_client *c, int o, struct ed_protector *p,
                  struct ed_operation *st)
{
	return h_req(&f->h, f->ed, c, o, p, NULL, st, NULL, 0, NULL, 0, NULL);
}

static uint64_t data_start(struct fx *f)
{
	struct ed_check_stats st;
	CHECK_EQ(ed_check_live(f->ed, f->unit, NULL, NULL, &st), 0);
	return st.data_start;
}

static uint8_t secret[N * SECT];

/* Client a: an extent over [S, S + N) full of the secret, written back,
 * flushed, deallocated and the deallocation written back. */
static void leave_secret(struct fx *f, uint64_t S)
{
	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = (uint8_t)(0xA5 ^ (i * 7));
	struct ed_protector p = h_ext(0, S, N * SECT, RC, WC);
	CHECK_EQ(op(f, &f->a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	CHECK_EQ(h_io(&f->h, f->ed, &f->a, &p, 1, S, secret, sizeof(secret)), 0);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, &p), 0);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_FLUSH, &p), 0);
	CHECK_EQ(op(f, &f->a, ED_OP_EXTENT_DEALLOCATE, &p, NULL), 0);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, &p), 0);
	h_settle();
	CHECK(!fx_allocated(f, S));
}

/* No 8-byte window of buf (n bytes) holds the secret's bytes at any offset. */
static bool has_secret(const uint8_t *buf, size_t n)
{
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, buf + i, 8);
		if (w == 0)
			continue;
		/* The secret repeats every 256 bytes: its windows are those. */
		for (size_t j = 0; j < 256 && j + 8 <= sizeof(secret); j++)
			if (memcmp(buf + i, secret + j, 8) == 0)
				return true;
	}
	return false;
}

static bool zeros(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != 0)
			return false;
	return true;
}

/* Read [from, from + n) through prot as client c: it must be zeros except
 * where want (indexed from S) says otherwise. */
static void read_check(struct fx *f, struct ed_client *c, struct ed_protector *prot, uint64_t S,
                       uint64_t from, uint64_t n, const uint8_t *want)
{
	static uint8_t r[N * SECT];
	memset(r, 0xee, sizeof(r));
	CHECK_EQ(h_io(&f->h, f->ed, c, prot, 0, from, r, n * SECT), 0);
	CHECK(!has_secret(r, n * SECT));
	if (want == NULL)
		CHECK(zeros(r, n * SECT));
	else
		CHECK(memcmp(r, want + (from - S) * SECT, n * SECT) == 0);
}

static void test_extent(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 61);
	uint64_t S = data_start(&f) + 64;
	leave_secret(&f, S);

	/* b's extent over the same sectors: every read is zeros (the header
	 * area always is), through the cached header and run by run. */
	struct ed_protector q = h_ext(0, S, N * SECT, RC2, WC2);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), 0);
	read_check(&f, &f.b, &q, S, S, N, NULL);
	read_check(&f, &f.b, &q, S, S + 5, 7, NULL);
	read_check(&f, &f.b, &q, S, S, 1, NULL);

	/* Part written: that part reads back, the rest stays zeros. */
	static uint8_t w[N * SECT];
	memset(w, 0, sizeof(w));
	for (size_t i = 10 * SECT; i < 14 * SECT; i++)
		w[i] = (uint8_t)(i * 3 + 1);
	for (size_t i = 30 * SECT; i < 31 * SECT; i++)
		w[i] = (uint8_t)(i * 5 + 2);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &q, 1, S + 10, w + 10 * SECT, 4 * SECT), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &q, 1, S + 30, w + 30 * SECT, SECT), 0);
	read_check(&f, &f.b, &q, S, S, N, w);
	read_check(&f, &f.b, &q, S, S + 9, 6, w);
	read_check(&f, &f.b, &q, S, S + 12, 20, w);

	/* Committed and dropped from the cache: the bounce read (header not
	 * cached) hands out the same. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXTENT_WRITE, &q), 0);
	h_settle();
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	CHECK_EQ(op(&f, &f.b, ED_OP_MARK_REPLACEMENT, &q, NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_DROP_CACHE, &unit, NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_IN_CACHE, &q, NULL), 0);
	read_check(&f, &f.a, &q, S, S + 2, 20, w);
	CHECK_EQ(op(&f, &f.a, ED_OP_DROP_CACHE, &unit, NULL), 0);
	read_check(&f, &f.a, &q, S, S, N, w);
	CHECK_EQ(op(&f, &f.a, ED_OP_DROP_CACHE, &unit, NULL), 0);

	/* Grown over freed sectors: the new ones read as zeros too. */
	leave_secret(&f, S + 200);
	struct ed_protector g = h_ext(0, S + 160, 40 * SECT, RC2, WC2);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &g, NULL), 0);
	struct ed_operation st = { .one = 30 * SECT };
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_GROW, &g, &st), 0);
	g.length = 70 * SECT;
	read_check(&f, &f.b, &g, S + 160, S + 190, 30, NULL);
	fx_check_live(&f);
	fx_free(&f);
}

static void test_exonode(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 62);
	uint64_t S = data_start(&f) + 64;
	leave_secret(&f, S);
	/* An exonode elsewhere takes the freed sectors as an extent entry,
	 * writes a little, and reads; so does a proxy over them. */
	struct ed_protector x = h_xn(0, S + 300, 0, 200, RC2, WC2);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_ALLOCATE, &x, NULL), 0);
	struct ed_operation st = { .one = S, .two = N * SECT };
	CHECK(op(&f, &f.b, ED_OP_EXONODE_ADD_EXTENT, &x, &st) >= 0);
	read_check(&f, &f.b, &x, S, S, N, NULL);
	static uint8_t w[N * SECT];
	memset(w, 0, sizeof(w));
	for (size_t i = 0; i < 3 * SECT; i++)
		w[i] = (uint8_t)(i + 9);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &x, 1, S, w, 3 * SECT), 0);
	read_check(&f, &f.b, &x, S, S, N, w);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_WRITE, &x), 0);
	read_check(&f, &f.b, &x, S, S + 1, 10, w);
	fx_check_live(&f);
	fx_free(&f);
}

/* A change a dead process never committed, taken over (docs/vvol.md: a
 * shared volume's map node): a adds an extent entry over freed secrets to
 * a committed exonode and exits; b, which holds the node, writes it back.
 * The entry's sectors were never written: after a power cut they read as
 * zeros, as they did before it. */
static void test_adopted(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 69);
	uint64_t S = data_start(&f) + 64;
	leave_secret(&f, S);
	struct ed_protector x = h_xn(0, S + 300, 0, 200, RC2, WC2);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	struct ed_operation st = { .one = S, .two = N * SECT };
	CHECK(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x, &st) >= 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ, &x), 0);   /* b holds it */
	ed_client_exit(f.ed, &f.a);
	h_settle();
	read_check(&f, &f.b, &x, S, S, N, NULL);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_WRITE, &x), 0);
	f.hd.crash_keep = HD_KEEP_NONE;
	CHECK_EQ(fx_crash(&f), 0);
	f.hd.crash_keep = HD_KEEP_RANDOM;
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ, &x), 0);
	read_check(&f, &f.b, &x, S, S, N, NULL);
	fx_check_live(&f);
	printf("  an entry a dead process added, committed by another holder: zeros after a cut\n");
	fx_free(&f);
}

/* ---- the sets' bitmaps: emptied in place, compacted when uniform ---------------- */

static void test_bitmap_reuse(void)
{
	struct harness h;
	h_init(&h, 66);
	uint64_t pages = 0, nbits = 4 * ED_BM_LEAF_BITS + 100;
	struct ed_bm m;
	ed_bm_init(&m, &h.env, nbits, ED_BM_ZERO, &pages);
	/* Bits in two leaves' pages: emptied, the pages stay, and a bit set
	 * again takes no new page. */
	CHECK_EQ(ed_bm_set(&m, 5, 3), 0);
	CHECK_EQ(ed_bm_set(&m, 2 * ED_BM_LEAF_BITS + 70, 1), 0);
	uint64_t kept = pages;
	CHECK(kept > 0);
	ed_bm_zero(&m);
	CHECK_EQ(m.count, 0);
	CHECK_EQ(pages, kept);
	CHECK(ed_bm_next(&m, 0, true) == nbits);
	CHECK_EQ(ed_bm_set(&m, 6, 1), 0);
	CHECK_EQ(pages, kept);
	CHECK(ed_bm_test(&m, 6) && !ed_bm_test(&m, 5));
	/* Compaction: a page all clear, or all set below the end of a short
	 * last leaf, becomes a marker; a mixed one stays. */
	CHECK_EQ(ed_bm_clear(&m, 6, 1), 0);
	ed_bm_compact(&m, 0);
	ed_bm_compact(&m, 2);
	CHECK(pages < kept);
	CHECK_EQ(ed_bm_set(&m, 4 * ED_BM_LEAF_BITS, 50), 0);       /* the short leaf, whole, */
	CHECK_EQ(ed_bm_set(&m, 4 * ED_BM_LEAF_BITS + 50, 50), 0);  /* in two steps: a page */
	CHECK_EQ(ed_bm_set(&m, ED_BM_LEAF_BITS + 1, ED_BM_LEAF_BITS - 1), 0);
	uint64_t before = pages;
	ed_bm_compact(&m, 1);                                        /* bit 0 clear: mixed */
	CHECK_EQ(pages, before);
	CHECK_EQ(ed_bm_set(&m, ED_BM_LEAF_BITS, 1), 0);
	ed_bm_compact(&m, 1);                                        /* all set now */
	ed_bm_compact(&m, 4);
	CHECK(pages < before);
	CHECK_EQ(m.count, ED_BM_LEAF_BITS + 100);
	CHECK(ed_bm_test(&m, ED_BM_LEAF_BITS + 5) && ed_bm_test(&m, nbits - 1));
	/* A whole leaf of ones cannot be emptied in place: the tree goes. */
	ed_bm_zero(&m);
	CHECK_EQ(m.count, 0);
	CHECK(ed_bm_next(&m, 0, true) == nbits);
	ed_bm_free(&m);
	CHECK_EQ(pages, 0);
	CHECK_EQ(h.pages, 0);
	printf("  bitmaps: emptied in place keeping their pages; uniform leaves compacted\n");
}

/* ---- a flush cycle of several records -------------------------------------------- */

#define CR_EXT  30                   /* extents allocated and committed before the cycle */
#define CR_NEW  10                   /* extents allocated, written back during it */
#define CR_LEN  41                   /* sectors each: the header, then 40 of data */
#define CR_D    16384

static uint8_t cr_data(int k, uint64_t i, size_t b)
{
	return (uint8_t)((k * 41 + i * 13 + b * 7) | 1);
}

/* One extent's sectors as they must read after the cut: its odd sectors
 * written and flushed, the rest (the header's area too) zeros. */
static void cr_check(struct fx *f, struct ed_protector *p, int k)
{
	static uint8_t r[CR_LEN * SECT];
	memset(r, 0xee, sizeof(r));
	CHECK_EQ(h_io(&f->h, f->ed, &f->b, p, 0, p->blkno, r, sizeof(r)), 0);
	for (uint64_t i = 0; i < CR_LEN; i++)
		for (size_t b = 0; b < SECT; b++) {
			uint8_t want = (i % 2 == 1) ? cr_data(k, i, b) : 0;
			if (r[i * SECT + b] != want) {
				fprintf(stderr, "extent %d sector %llu byte %zu: %#x, want %#x\n", k,
				        (unsigned long long)i, b, r[i * SECT + b], want);
				CHECK(0);
			}
		}
}

/* A flush cycle whose written sectors make 600 runs in committed extents
 * needs three `written` records (250 runs a record).  While its first is
 * in flight, either 10 more extents, written in the same cycle and lower
 * on the disk, are written back (allocation records, which name what they
 * allocate that is still unwritten), or a checkpoint is asked for (its
 * carry records name the whole unwritten set).  Before the review fixes of
 * session 8 either named sectors unwritten again after a record had named
 * them written, so after a cut data the flush acknowledged read as zeros.
 * The flush is answered, then the power is cut losing every unflushed
 * write: every odd sector must read back. */
static void test_cycle_records(bool ckpt)
{
	struct fx f;
	fx_new(&f, CR_D, HD_POLLED, NULL, ckpt ? 65 : 64);
	struct ed_disk *d = f.ed->disk[f.unit];
	uint64_t S = data_start(&f) + 64;
	int n = ckpt ? CR_EXT : CR_EXT + CR_NEW;
	struct ed_protector p[CR_EXT + CR_NEW];
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	static uint8_t w[SECT];
	/* p[0 .. CR_NEW-1] (if any) are the ones written back late. */
	int late = n - CR_EXT;
	for (int k = 0; k < n; k++) {
		p[k] = h_ext(0, S + (uint64_t)k * (CR_LEN + 3), CR_LEN * SECT, RC2, WC2);
		CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &p[k], NULL), 0);
		if (k >= late)
			CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXTENT_WRITE, &p[k]), 0);
	}
	/* A flush now: the committed extents' headers are durable before the cycle. */
	h_settle();
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_FLUSH, &unit), 0);
	h_settle();
	for (int k = 0; k < n; k++)
		for (uint64_t i = 1; i < CR_LEN; i += 2) {
			for (size_t b = 0; b < SECT; b++)
				w[b] = cr_data(k, i, b);
			CHECK_EQ(h_io(&f.h, f.ed, &f.b, &p[k], 1, p[k].blkno + i, w, SECT), 0);
		}
	CHECK(d->unw_done.count >= (uint64_t)n * (CR_LEN / 2));

	/* The cycle; stop while its first record is in flight. */
	int32_t fres = 12345, res[CR_NEW + 1];
	struct ed_buf fb, bb[CR_NEW + 1];
	memset(&fb, 0, sizeof(fb));
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_FLUSH, &unit, &fb, NULL, NULL, 0, NULL, 0, &fres), 0);
	long steps = 0;
	while (!(d->fl_state == FL_LOG && d->log_busy && d->log_fl && d->fl_pos == 0)) {
		CHECK(fres == ED_PENDING && ++steps < 1000000);
		blk_poll();
	}
	CHECK(d->fl_pos_next > 0 && d->fl_pos_next < d->nsectors);   /* more records to come */
	int nwait = ckpt ? 1 : late;
	for (int k = 0; k < nwait; k++) {
		memset(&bb[k], 0, sizeof(bb[k]));
		res[k] = 12345;
		CHECK_EQ(h_req(&f.h, f.ed, &f.b, ckpt ? ED_OP_CHECKPOINT : ED_OP_EXTENT_WRITE,
		               ckpt ? &unit : &p[k], &bb[k], NULL, NULL, 0, NULL, 0, &res[k]), 0);
	}
	uint64_t ckpts = d->st_ckpts, records = d->st_unw_records;
	CHECK_EQ(h_wait(&fres), 0);
	for (int k = 0; k < nwait; k++)
		CHECK_EQ(h_wait(&res[k]), 0);
	h_settle();
	CHECK(d->st_unw_records >= records + 2);   /* the cycle took 3 records in all */
	if (ckpt)
		CHECK(d->st_ckpts == ckpts + 1);

	/* Power cut: nothing unflushed survives; the flushed data must. */
	f.hd.crash_keep = HD_KEEP_NONE;
	CHECK_EQ(fx_crash(&f), 0);
	f.hd.crash_keep = HD_KEEP_RANDOM;
	for (int k = 0; k < n; k++)
		cr_check(&f, &p[k], k);
	fx_check_live(&f);
	printf("  a flush cycle of %d runs in several records, %s between them: flushed data intact "
	       "after a cut\n", CR_EXT * (CR_LEN / 2),
	       ckpt ? "a checkpoint" : "the write-back of 10 extents written in it");
	fx_free(&f);
}

/* ---- a log record that failed, and may be on the disk all the same ---------------- */

/* A device may report an error for a write it made; then a crash replays
 * the record unless a later one is durable in its place.  b's extent is
 * written, and its write-back's record fails that way (the next FUA write
 * fails, and lands):
 *  0. the record is made while a flush's device flush is in flight, so it
 *     names the sectors unwritten; the flush, whose data is durable, must
 *     not answer before a later record replaces that one (it did: after a
 *     cut the extent came back with its flushed data reading as zeros);
 *  1. the data was flushed first; b then lets the extent go (never
 *     committed, as far as the kernel knows) and a asks for the same
 *     sectors, writes its secret there and flushes: the sectors must not
 *     be given out while the record may come back (they were: after a cut
 *     b's extent came back over a's secret);
 *  2. as 1, with a checkpoint before the cut, whose superblock must not
 *     name the failed record's place as where replay starts;
 *  3. as 1, but the sectors are held (the live check knows them) only
 *     until another write-back's record is durable: then a has them.
 * After a cut b's extent either does not exist or reads as it was flushed. */
static void test_unsure_log(int variant)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 66 + (uint64_t)variant);
	uint64_t S = data_start(&f) + 64;
	leave_secret(&f, S);
	struct ed_protector e = h_ext(0, S, N * SECT, RC2, WC2);
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	static uint8_t w[N * SECT], r[N * SECT];
	for (size_t i = 0; i < sizeof(w); i++)
		w[i] = (uint8_t)(i * 13 + 5) | 1;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &e, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &e, 1, S, w, sizeof(w)), 0);
	int64_t taken = -1;
	if (variant == 0) {
		int32_t fres = 12345, wres = 12345;
		struct ed_buf fb, wb;
		memset(&fb, 0, sizeof(fb));
		memset(&wb, 0, sizeof(wb));
		f.hd.fail_fua = f.hd.fail_lands = true;
		CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_FLUSH, &unit, &fb, NULL, NULL, 0, NULL, 0, &fres), 0);
		CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXTENT_WRITE, &e, &wb, NULL, NULL, 0, NULL, 0, &wres), 0);
		CHECK(h_wait(&wres) < 0);
		CHECK_EQ(h_wait(&fres), 0);
	} else {
		CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_FLUSH, &unit), 0);
		f.hd.fail_fua = f.hd.fail_lands = true;
		CHECK(h_sync(&f.h, f.ed, &f.b, ED_OP_EXTENT_WRITE, &e) < 0);
		CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_DEALLOCATE, &e, NULL), 0);
		struct ed_protector g = h_ext(0, S, N * SECT, RC, WC);
		taken = op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &g, NULL);
		if (variant == 3) {
			CHECK_EQ(taken, ED_E_ALLOCATED);
			fx_check_live(&f);
			struct ed_protector o = h_ext(0, S + 200, 4 * SECT, RC2, WC2);
			CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &o, NULL), 0);
			CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXTENT_WRITE, &o), 0);
			taken = op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &g, NULL);
			CHECK_EQ(taken, 0);
		}
		if (taken == 0) {
			CHECK_EQ(h_io(&f.h, f.ed, &f.a, &g, 1, S, secret, sizeof(secret)), 0);
			CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_FLUSH, &unit), 0);
		} else {
			CHECK_EQ(taken, ED_E_ALLOCATED);
		}
		if (variant == 2)
			CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_CHECKPOINT, &unit), 0);
	}
	h_settle();
	f.hd.fail_lands = false;
	f.hd.crash_keep = HD_KEEP_NONE;
	CHECK_EQ(fx_crash(&f), 0);
	f.hd.crash_keep = HD_KEEP_RANDOM;
	memset(r, 0xee, sizeof(r));
	int64_t got = h_io(&f.h, f.ed, &f.b, &e, 0, S, r, sizeof(r));
	if (got == 0) {
		if (has_secret(r, sizeof(r)))
			fprintf(stderr, "variant %d: the extent came back over another's secret\n", variant);
		CHECK(!has_secret(r, sizeof(r)));
		if (memcmp(r + ED_EXT_HDR_BYTES, w + ED_EXT_HDR_BYTES, sizeof(r) - ED_EXT_HDR_BYTES) != 0)
			fprintf(stderr, "variant %d: the extent came back without its flushed data\n", variant);
		CHECK(memcmp(r + ED_EXT_HDR_BYTES, w + ED_EXT_HDR_BYTES, sizeof(r) - ED_EXT_HDR_BYTES) == 0);
	}
	fx_check_live(&f);
	printf("  a write-back's record fails and lands (%s): after a cut the extent %s\n",
	       variant == 0 ? "a flush in flight" : variant == 1 ? "its sectors let go" :
	       variant == 2 ? "its sectors let go, a checkpoint" :
	       "its sectors let go, held until the next record", got == 0 ? "reads its flushed data" :
	       "is not there");
	fx_free(&f);
}

/* ---- power cuts ------------------------------------------------------------------ */

#define PC_D   2048                  /* a small disk: the test boots it 40+ times */
#define PC_N   24                    /* sectors per object */
#define PC_OBJ 4

struct pc_obj {
	struct ed_protector p;           /* b's protector (an extent, or the exonode) */
	uint64_t first;                  /* its first data sector */
	uint8_t want[PC_N * SECT];       /* what was written to it, zeros elsewhere */
	bool written[PC_N];              /* a write to the sector completed */
	bool acked[PC_N];                /* ... and a flush after it succeeded */
};

static struct pc_obj pco[PC_OBJ];
static uint8_t *pc_image;
static uint64_t pc_S;
static long pc_cut = -1, pc_keep;

static void pc_fill(struct pc_obj *o, uint32_t from, uint32_t n, uint32_t tag)
{
	for (uint32_t i = from * SECT; i < (from + n) * SECT; i++)
		o->want[i] = (uint8_t)(tag * 29 + i * 11 + 1) | 1;   /* never zero, never the secret */
}

/* Write sectors [from, from + n) of object o (as client b). */
static int64_t pc_write(struct fx *f, struct pc_obj *o, uint32_t from, uint32_t n, uint32_t tag)
{
	pc_fill(o, from, n, tag);
	int64_t r = h_io(&f->h, f->ed, &f->b, &o->p, 1, o->first + from, o->want + from * SECT,
	                 n * SECT);
	if (r == 0)
		for (uint32_t i = from; i < from + n; i++)
			o->written[i] = true;
	return r;
}

static int64_t pc_flush(struct fx *f)
{
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	int64_t r = h_sync(&f->h, f->ed, &f->b, ED_OP_FLUSH, &unit);
	if (r == 0)
		for (int k = 0; k < PC_OBJ; k++)
			for (int i = 0; i < PC_N; i++)
				pco[k].acked[i] |= pco[k].written[i];
	return r;
}

static int64_t pc_ckpt(struct fx *f)
{
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	return h_sync(&f->h, f->ed, &f->b, ED_OP_CHECKPOINT, &unit);
}

/* The workload, stopping at the first error (the disk died).  Objects
 * 0-2 are extents over freed secrets, object 3 an exonode's extent entry;
 * the writes leave unwritten holes, some flushed, some not, across commits
 * and checkpoints. */
static void pc_workload(struct fx *f)
{
	struct pc_obj *e0 = &pco[0], *e1 = &pco[1], *e2 = &pco[2], *x = &pco[3];
#define GO(expr) do { if ((expr) != 0) return; } while (0)
	GO(op(f, &f->b, ED_OP_EXTENT_ALLOCATE, &e0->p, NULL));
	GO(pc_write(f, e0, 3, 4, 1));
	GO(h_sync(&f->h, f->ed, &f->b, ED_OP_EXTENT_WRITE, &e0->p));
	GO(pc_write(f, e0, 10, 2, 2));
	GO(pc_flush(f));
	GO(op(f, &f->b, ED_OP_EXTENT_ALLOCATE, &e1->p, NULL));
	GO(h_sync(&f->h, f->ed, &f->b, ED_OP_EXTENT_WRITE, &e1->p));
	GO(pc_write(f, e1, 0, 6, 3));
	GO(pc_write(f, e0, 20, 3, 4));
	GO(op(f, &f->b, ED_OP_EXONODE_ALLOCATE, &x->p, NULL));
	struct ed_operation st = { .one = x->first, .two = PC_N * SECT };
	GO(op(f, &f->b, ED_OP_EXONODE_ADD_EXTENT, &x->p, &st) >= 0 ? 0 : -1);
	GO(pc_write(f, x, 5, 5, 5));
	GO(h_sync(&f->h, f->ed, &f->b, ED_OP_EXONODE_WRITE, &x->p));
	GO(pc_ckpt(f));
	GO(pc_write(f, e1, 12, 4, 6));
	GO(pc_flush(f));
	GO(op(f, &f->b, ED_OP_EXTENT_ALLOCATE, &e2->p, NULL));
	GO(pc_write(f, e2, 1, 2, 7));
	GO(h_sync(&f->h, f->ed, &f->b, ED_OP_EXTENT_WRITE, &e2->p));
	GO(pc_write(f, x, 15, 2, 8));
	GO(pc_ckpt(f));
	GO(pc_write(f, e2, 8, 8, 9));
	GO(pc_flush(f));
	GO(pc_write(f, e0, 14, 2, 10));
	GO(pc_ckpt(f));
#undef GO
}

static void pc_reset(struct fx *f)
{
	memcpy(f->hd.medium, pc_image, PC_D * SECT);
	f->hd.write_cache = true;
	for (int k = 0; k < PC_OBJ; k++) {
		memset(pco[k].want, 0, sizeof(pco[k].want));
		memset(pco[k].written, 0, sizeof(pco[k].written));
		memset(pco[k].acked, 0, sizeof(pco[k].acked));
	}
}

/* After the reboot: each object that exists reads as it must. */
static long pc_verify(struct fx *f)
{
	static uint8_t r[PC_N * SECT];
	long seen = 0;
	for (int k = 0; k < PC_OBJ; k++) {
		struct pc_obj *o = &pco[k];
		memset(r, 0xee, sizeof(r));
		if (h_io(&f->h, f->ed, &f->b, &o->p, 0, o->first, r, PC_N * SECT) != 0)
			continue;             /* not committed before the cut */
		seen++;
		if (has_secret(r, sizeof(r)))
			fprintf(stderr, "power cut at request %ld (keep %ld): object %d shows the secret\n",
			        pc_cut, pc_keep, k);
		CHECK(!has_secret(r, sizeof(r)));
		for (int i = 0; i < PC_N; i++) {
			const uint8_t *got = r + i * SECT, *want = o->want + i * SECT;
			bool hdr = k < 3 && i == 0;   /* the header's bytes read as zeros */
			size_t off = hdr ? ED_EXT_HDR_BYTES : 0;
			if (o->acked[i])
				CHECK(memcmp(got + off, want + off, SECT - off) == 0);
			else
				CHECK(zeros(got + off, SECT - off) ||
				      (o->written[i] && memcmp(got + off, want + off, SECT - off) == 0));
		}
	}
	return seen;
}

static void test_powercut(void)
{
	struct fx f;
	struct ed_format_opts fo = { .log_sectors = 128 };
	fx_new_fmt(&f, PC_D, HD_SYNC, NULL, 63, &fo);
	pc_S = data_start(&f) + 64;
	/* Secrets everywhere the workload will allocate, then checkpointed
	 * and shut down: the freed secrets are in free sectors on the medium. */
	leave_secret(&f, pc_S);
	leave_secret(&f, pc_S + N);
	leave_secret(&f, pc_S + 2 * N);
	struct ed_protector unit = h_ext(0, 0, 0, RC, WC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_SHUTDOWN, &unit), 0);
	h_settle();
	fx_forget(&f);
	pc_image = malloc(PC_D * SECT);
	memcpy(pc_image, f.hd.medium, PC_D * SECT);
	for (int k = 0; k < 3; k++) {
		pco[k].first = pc_S + (uint64_t)k * 30;
		pco[k].p = h_ext(0, pco[k].first, PC_N * SECT, RC2, WC2);
	}
	pco[3].first = pc_S + 90;
	pco[3].p = h_xn(0, pc_S + 3 * N + 10, 0, 200, RC2, WC2);

	/* The whole workload once: how many requests it makes. */
	pc_reset(&f);
	CHECK_EQ(fx_boot(&f), 0);
	hostdisk_reset_counts(&f.hd);
	pc_workload(&f);
	uint64_t total = f.hd.nreq;
	CHECK(pc_verify(&f) == PC_OBJ);
	fx_forget(&f);

	/* make test: every cut losing every unflushed write; the exhaustive
	 * run (`test_ed_remanence all`) also keeps each by chance, checks the
	 * disk live after every cut and reboots once more after a shutdown. */
	long cuts = 0, objs = 0;
	for (int keep = exhaustive ? HD_KEEP_RANDOM : HD_KEEP_NONE; keep <= HD_KEEP_NONE; keep++)
		for (uint64_t cut = 0; cut <= total; cut++) {
			pc_reset(&f);
			pc_cut = (long)cut;
			pc_keep = keep;
			f.hd.crash_keep = keep;
			f.hd.rng = 0x9e3779b97f4a7c15ull * (cut + 1) + (uint64_t)keep;
			CHECK_EQ(fx_boot(&f), 0);
			f.hd.die_countdown = (int64_t)cut;
			pc_workload(&f);
			/* Power off: what was not flushed is lost (all of it, or each
			 * sector by chance), then reboot. */
			CHECK_EQ(fx_crash(&f), 0);
			objs += pc_verify(&f);
			if (exhaustive || cut % 8 == 0)
				fx_check_live(&f);
			if (exhaustive) {
				/* And once more after a clean shutdown of that boot. */
				CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_SHUTDOWN, &unit), 0);
				h_settle();
				fx_forget(&f);
				CHECK_EQ(fx_boot(&f), 0);
				(void)pc_verify(&f);
			}
			fx_forget(&f);
			cuts++;
		}
	f.hd.crash_keep = HD_KEEP_RANDOM;
	printf("  power cut at each of %llu requests (unflushed writes lost%s): %ld reboots, %ld objects "
	       "read back, no secret, flushed data intact\n", (unsigned long long)total,
	       exhaustive ? "; then each kept by chance" : "", cuts, objs);
	free(pc_image);
	fx_free(&f);
}

/* ---- an unwritten set too fragmented for a checkpoint's carry records ------------- */

/* Twelve exonodes of b take 100 extent entries each, 1 to 3 sectors long
 * with gaps between, over a freed secret: 1,200 unwritten runs, more than
 * a checkpoint's records hold (1,000 on this 512-sector log).  Before
 * zero.c the runs past the records' room were not carried, and after a cut
 * behind that checkpoint they read as the secret. */
#define FR_D     16384
#define FR_XN    12
#define FR_ENT   100
#define FR_STEP  5                       /* sectors between entries' starts */
#define FR_LEN   (FR_XN * FR_ENT * FR_STEP)

static uint64_t fr_S;
static uint8_t *fr_image;
static uint8_t fr_want[FR_LEN][SECT];
static bool fr_written[FR_LEN], fr_acked[FR_LEN];
static long fr_cut = -1, fr_keep;
static uint64_t fr_zeroed[2];           /* sectors zeroed after each checkpoint */

static uint64_t fr_start(int j, int i) { return fr_S + (uint64_t)(j * FR_ENT + i) * FR_STEP; }
static uint32_t fr_len(int i) { return 1 + (uint32_t)(i % 3); }
static struct ed_protector fr_xn(int j)
{
	return h_xn(0, fr_S + FR_LEN + 100 + (uint64_t)j * 8, 0, ED_XN_MAX_BYTES, RC2, WC2);
}

/* a: the secret over [fr_S, fr_S + FR_LEN), durable, then freed. */
static void fr_secret(struct fx *f)
{
	for (size_t i = 0; i < sizeof(secret); i++)
		secret[i] = (uint8_t)(0xA5 ^ (i * 7));
	struct ed_protector p = h_ext(0, fr_S, FR_LEN * SECT, RC, WC);
	CHECK_EQ(op(f, &f->a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	for (uint64_t s = 0; s < FR_LEN; s += N)
		CHECK_EQ(h_io(&f->h, f->ed, &f->a, &p, 1, fr_S + s, secret, N * SECT), 0);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, &p), 0);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_FLUSH, &p), 0);
	CHECK_EQ(op(f, &f->a, ED_OP_EXTENT_DEALLOCATE, &p, NULL), 0);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, &p), 0);
	h_settle();
}

/* b writes the first sector of entry (j, i). */
static int64_t fr_write(struct fx *f, int j, int i, uint32_t tag)
{
	uint64_t s = fr_start(j, i), k = s - fr_S;
	for (size_t b = 0; b < SECT; b++)
		fr_want[k][b] = (uint8_t)((tag * 31 + b * 3 + k) | 1);
	struct ed_protector x = fr_xn(j);
	int64_t r = h_io(&f->h, f->ed, &f->b, &x, 1, s, fr_want[k], SECT);
	if (r == 0)
		fr_written[k] = true;
	return r;
}

static int64_t fr_flush(struct fx *f)
{
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	int64_t r = h_sync(&f->h, f->ed, &f->b, ED_OP_FLUSH, &unit);
	if (r == 0)
		for (int k = 0; k < FR_LEN; k++)
			fr_acked[k] |= fr_written[k];
	return r;
}

/* The exonodes and their entries, committed; writes here and there; a
 * flush; a checkpoint (which must zero 200 runs); writes to runs it
 * zeroed; another checkpoint and a flush. */
static void fr_build(struct fx *f)
{
#define GO(expr) do { if ((expr) != 0) return; } while (0)
	for (int j = 0; j < FR_XN; j++) {
		struct ed_protector x = fr_xn(j);
		GO(op(f, &f->b, ED_OP_EXONODE_ALLOCATE, &x, NULL));
		for (int i = 0; i < FR_ENT; i++) {
			struct ed_operation st = { .one = fr_start(j, i), .two = fr_len(i) * SECT };
			GO(op(f, &f->b, ED_OP_EXONODE_ADD_EXTENT, &x, &st) >= 0 ? 0 : -1);
		}
	}
	for (int k = 0; k < 12; k++)
		GO(fr_write(f, k, (k * 37) % FR_ENT, 1));
	for (int j = 0; j < FR_XN; j++) {
		struct ed_protector x = fr_xn(j);
		GO(h_sync(&f->h, f->ed, &f->b, ED_OP_EXONODE_WRITE, &x));
	}
#undef GO
}

static void fr_workload(struct fx *f)
{
#define GO(expr) do { if ((expr) != 0) return; } while (0)
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	fr_build(f);
	if (f->ed->disk[f->unit]->st_commits < FR_XN)
		return;
	GO(fr_flush(f));
	GO(h_sync(&f->h, f->ed, &f->b, ED_OP_CHECKPOINT, &unit));
	fr_zeroed[0] = f->ed->disk[f->unit]->st_unw_zeroed;
	for (int k = 0; k < 6; k++)
		GO(fr_write(f, FR_XN - 1 - k % 2, FR_ENT - 1 - 3 * k, 2));
	GO(h_sync(&f->h, f->ed, &f->b, ED_OP_CHECKPOINT, &unit));
	fr_zeroed[1] = f->ed->disk[f->unit]->st_unw_zeroed;
	GO(fr_write(f, 3, 50, 3));
	GO(fr_flush(f));
#undef GO
}

/* After the reboot: every entry of every exonode that exists reads as
 * zeros or what b wrote there (what a flush acknowledged, certainly),
 * never the secret.  Returns the exonodes seen. */
static long fr_verify(struct fx *f)
{
	static uint8_t r[3 * SECT];
	long seen = 0;
	for (int j = 0; j < FR_XN; j++) {
		struct ed_protector x = fr_xn(j);
		if (h_sync(&f->h, f->ed, &f->b, ED_OP_EXONODE_READ, &x) != 0)
			continue;                /* not committed before the cut */
		for (int i = 0; i < FR_ENT; i++) {
			uint64_t s = fr_start(j, i);
			uint32_t n = fr_len(i);
			memset(r, 0xee, sizeof(r));
			int64_t err = h_io(&f->h, f->ed, &f->b, &x, 0, s, r, n * SECT);
			if (err != 0) {
				fprintf(stderr, "exonode %d entry %d: %lld\n", j, i, (long long)err);
				CHECK(0);
			}
			if (i == 0)
				seen++;
			if (has_secret(r, n * SECT))
				fprintf(stderr, "power cut at request %ld (keep %ld): exonode %d entry %d "
				        "(sector %llu) shows the secret\n", fr_cut, fr_keep, j, i,
				        (unsigned long long)s);
			CHECK(!has_secret(r, n * SECT));
			for (uint32_t q = 0; q < n; q++) {
				uint64_t k = s - fr_S + q;
				const uint8_t *got = r + q * SECT;
				if (fr_acked[k])
					CHECK(memcmp(got, fr_want[k], SECT) == 0);
				else
					CHECK(zeros(got, SECT) ||
					      (fr_written[k] && memcmp(got, fr_want[k], SECT) == 0));
			}
		}
	}
	return seen;
}

static void fr_reset(struct fx *f)
{
	memcpy(f->hd.medium, fr_image, FR_D * SECT);
	f->hd.write_cache = true;
	memset(fr_want, 0, sizeof(fr_want));
	memset(fr_written, 0, sizeof(fr_written));
	memset(fr_acked, 0, sizeof(fr_acked));
}

/* The secret laid down and shut down cleanly: the image every run starts from. */
static void fr_setup(struct fx *f, int mode, uint64_t seed)
{
	struct ed_format_opts fo = { .log_sectors = 512 };
	fx_new_fmt(f, FR_D, mode, NULL, seed, &fo);
	fr_S = data_start(f) + 64;
	fr_secret(f);
	struct ed_protector unit = h_ext(0, 0, 0, RC, WC);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_SHUTDOWN, &unit), 0);
	h_settle();
	fx_forget(f);
	fr_image = malloc(FR_D * SECT);
	memcpy(fr_image, f->hd.medium, FR_D * SECT);
}

/* A power cut at every request of fr_workload (and, exhaustive, each
 * unflushed write kept by chance), then the reboot: no secret anywhere. */
static void test_frag_cut(void)
{
	struct fx f;
	fr_setup(&f, HD_SYNC, 67);
	fr_reset(&f);
	CHECK_EQ(fx_boot(&f), 0);
	hostdisk_reset_counts(&f.hd);
	fr_workload(&f);
	uint64_t total = f.hd.nreq;
	struct ed_disk *d = f.ed->disk[f.unit];
	CHECK_EQ(d->st_ckpts, 2);
	/* The first checkpoint zeroes the 1-sector runs past its records'
	 * room (196: the writes before it took 4 runs away); they leave the
	 * set, so the second, with 1,000 runs left, zeroes none again. */
	CHECK_EQ(d->st_unw_zero_ckpts, 1);
	CHECK_EQ(fr_zeroed[0], 196);
	CHECK_EQ(fr_zeroed[1], fr_zeroed[0]);
	uint64_t zeroed = d->st_unw_zeroed;
	CHECK_EQ(fr_verify(&f), FR_XN);
	fx_forget(&f);
	long cuts = 0, seen = 0;
	for (int keep = exhaustive ? HD_KEEP_RANDOM : HD_KEEP_NONE; keep <= HD_KEEP_NONE; keep++)
		for (uint64_t cut = 0; cut <= total; cut++) {
			fr_reset(&f);
			fr_cut = (long)cut;
			fr_keep = keep;
			f.hd.crash_keep = keep;
			f.hd.rng = 0x9e3779b97f4a7c15ull * (cut + 1) + (uint64_t)keep;
			CHECK_EQ(fx_boot(&f), 0);
			f.hd.die_countdown = (int64_t)cut;
			fr_workload(&f);
			CHECK_EQ(fx_crash(&f), 0);
			seen += fr_verify(&f);
			if (exhaustive || cut % 16 == 0)
				fx_check_live(&f);
			fx_forget(&f);
			cuts++;
		}
	f.hd.crash_keep = HD_KEEP_RANDOM;
	printf("  %d unwritten runs, %llu sectors zeroed by the checkpoints; power cut at each of %llu "
	       "requests (unflushed writes lost%s): %ld reboots, %ld exonodes read back, no secret\n",
	       FR_XN * FR_ENT, (unsigned long long)zeroed, (unsigned long long)total,
	       exhaustive ? "; then each kept by chance" : "", cuts, seen);
	free(fr_image);
	fx_free(&f);
}

/* The gate (zero.c): a write in flight when a checkpoint comes to zero,
 * and writes made while it zeroes, to sectors it zeroes, must not be
 * undone by the zeros - the first is waited for, the others wait.  (With
 * the gate taken out, some of the 40 writes made while it zeroes are in
 * flight together with their sector's zero, which the disk lands after
 * them: they read back as zeros.) */
#define FR_GW 40
static void test_frag_gate(void)
{
	struct fx f;
	fr_setup(&f, HD_POLLED, 68);
	fr_reset(&f);
	CHECK_EQ(fx_boot(&f), 0);
	struct ed_disk *d = f.ed->disk[f.unit];
	fr_build(&f);
	CHECK_EQ(fr_flush(&f), 0);
	struct ed_protector unit = h_ext(0, 0, 0, RC2, WC2);
	struct ed_protector xs[FR_XN];
	for (int j = 0; j < FR_XN; j++)
		xs[j] = fr_xn(j);
	/* The writes: the first before the checkpoint, to a 1-sector run
	 * near the end (those past the records' room are zeroed). */
	int32_t res[FR_GW + 1], ck = 12345;
	struct ed_buf bufs[FR_GW + 1], bc;
	int nw = 0;
	uint64_t ks[FR_GW + 1];
	int js[FR_GW + 1];
	memset(&bc, 0, sizeof(bc));
	for (int w = 0; w <= FR_GW; w++)
		res[w] = 12345;
	/* Issue a write of the first sector of entry (j, i), whose data is set now. */
#define FR_ISSUE(J, I) do { \
		uint64_t k_ = fr_start((J), (I)) - fr_S; \
		for (size_t b_ = 0; b_ < SECT; b_++) \
			fr_want[k_][b_] = (uint8_t)((b_ * 5 + k_ * 3 + 1) | 1); \
		memset(&bufs[nw], 0, sizeof(bufs[nw])); \
		bufs[nw].b_flags = ED_B_WRITE; \
		bufs[nw].b_blkno = fr_start((J), (I)); \
		bufs[nw].b_bcount = SECT; \
		bufs[nw].b_memaddr = (uint64_t)(uintptr_t)fr_want[k_]; \
		ks[nw] = k_; \
		js[nw] = (J); \
		CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_IO, &xs[(J)], &bufs[nw], NULL, fr_want[k_], \
		               SECT, NULL, 0, &res[nw]), 0); \
		nw++; \
	} while (0)
	FR_ISSUE(FR_XN - 1, FR_ENT - 1);
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_CHECKPOINT, &unit, &bc, NULL, NULL, 0, NULL, 0, &ck), 0);
	bool zeroing_seen = false;
	for (long steps = 0; ck == ED_PENDING || ck == 12345; steps++) {
		CHECK(steps < 10000000);
		if (d->ck == CK_ZERO && d->z_started) {
			CHECK_EQ(d->app_wr, 0);          /* no write in flight under the zeros */
			if (!zeroing_seen) {
				/* Writes to the next 1-sector runs the zeros will reach. */
				for (int j = 0; j < FR_XN && nw <= FR_GW; j++)
					for (int i = 0; i < FR_ENT && nw <= FR_GW; i++)
						if (fr_len(i) == 1 && fr_start(j, i) > d->z_start &&
						    !(j == FR_XN - 1 && i == FR_ENT - 1))
							FR_ISSUE(j, i);
				CHECK(d->zwait != NULL);       /* they wait */
				static uint8_t r[SECT];
				CHECK_EQ(h_io(&f.h, f.ed, &f.b, &xs[js[1]], 0, fr_S + ks[1], r, SECT), 0);
				CHECK(zeros(r, SECT));         /* meanwhile: zeros, not the secret */
			}
			zeroing_seen = true;
		}
		blk_poll();
	}
#undef FR_ISSUE
	CHECK_EQ(ck, 0);
	CHECK(zeroing_seen && nw == FR_GW + 1);
	for (int w = 0; w < nw; w++) {
		CHECK_EQ(h_wait(&res[w]), 0);
		fr_written[ks[w]] = true;
	}
	CHECK_EQ(fr_flush(&f), 0);
	h_settle();
	f.hd.crash_keep = HD_KEEP_NONE;
	CHECK_EQ(fx_crash(&f), 0);
	f.hd.crash_keep = HD_KEEP_RANDOM;
	CHECK_EQ(fr_verify(&f), FR_XN);
	fx_check_live(&f);
	printf("  a write in flight when a checkpoint zeroes, and %d made meanwhile: all kept\n", FR_GW);
	free(fr_image);
	fx_free(&f);
}

int main(int argc, char **argv)
{
	exhaustive = argc > 1 && strcmp(argv[1], "all") == 0;
	RC = h_cap(0x5151, 0x1515);
	WC = h_cap(0x5252, 0x2525);
	RC2 = h_cap(0x6161, 0x1616);
	WC2 = h_cap(0x6262, 0x2626);
	test_extent();
	test_exonode();
	test_adopted();
	test_bitmap_reuse();
	test_cycle_records(false);
	test_cycle_records(true);
	for (int v = 0; v < 4; v++)
		test_unsure_log(v);
	test_powercut();
	test_frag_gate();
	test_frag_cut();
	printf("test_ed_remanence: ok\n");
	return 0;
}
