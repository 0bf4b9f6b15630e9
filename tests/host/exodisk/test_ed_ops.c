/*
 * test_ed_ops.c - every exodisk operation of thesis Table 3.2, through
 * ed_request() exactly as the system call will drive it, with its bad-input
 * cases (issue 4's list, as far as the host can exercise them): wrong
 * capabilities, ranges outside the object, unaligned and absurd lengths,
 * overlapping allocation, entries out of range, escalation through
 * descendants and proxies, operations on entries being written back, and a
 * client exiting with I/O in flight.  After each group the live checker
 * must find nothing wrong.
 */
#include "tests/host/exodisk/edfixture.h"

#define D 8192                       /* test disk: 4 MiB */
#define SECT 512

static struct ed_cap RC, WC, BAD;

static int64_t op(struct fx *f, struct ed_client *c, int o, struct ed_protector *p,
                  struct ed_operation *st)
{
	return h_req(&f->h, f->ed, c, o, p, NULL, st, NULL, 0, NULL, 0, NULL);
}

static struct ed_operation stuff(uint64_t one, uint64_t two, uint64_t three)
{
	struct ed_operation st;
	memset(&st, 0, sizeof(st));
	st.one = one;
	st.two = two;
	st.three = three;
	return st;
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 31 + (i >> 9));
}

static uint64_t data_start(struct fx *f)
{
	struct ed_check_stats st;
	CHECK_EQ(ed_check_live(f->ed, f->unit, NULL, NULL, &st), 0);
	return st.data_start;
}

/* ---- self-protected extents ------------------------------------------------------ */

static void test_extents(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 1);
	uint64_t ds = data_start(&f);
	uint64_t S = ds + 100;
	struct ed_protector p = h_ext(0, S, 16 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	CHECK(fx_allocated(&f, S) && fx_allocated(&f, S + 15) && !fx_allocated(&f, S + 16));

	/* Allocation errors. */
	struct ed_protector q = h_ext(0, S + 15, 4 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_ALLOCATED);
	q = h_ext(0, S + 50, 100, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_ALIGN);
	q = h_ext(0, S + 50, 0, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_ARG);
	q = h_ext(0, 0, SECT, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_RANGE);   /* exodisk region */
	q = h_ext(0, D - 2, 4 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_RANGE);   /* past the end */
	q = h_ext(0, S + 50, (uint64_t)1 << 62, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_TOOBIG);
	q = h_ext(5, S + 50, SECT, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_UNIT);
	q = h_ext(0, S + 50, SECT, RC, WC);
	q.pad2 = 1;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_ARG);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, NULL, NULL), ED_E_ARG);
	CHECK_EQ(op(&f, &f.b, 99, &q, NULL), ED_E_OP);

	/* Data: the header area reads as zero, writes to it are ignored. */
	static uint8_t w[16 * SECT], r[16 * SECT];
	fill(w, sizeof(w), 1);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 1, S, w, sizeof(w)), 0);
	memset(r, 0xee, sizeof(r));
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, sizeof(r)), 0);
	for (unsigned i = 0; i < ED_EXT_HDR_BYTES; i++)
		CHECK_EQ(r[i], 0);
	CHECK(memcmp(r + ED_EXT_HDR_BYTES, w + ED_EXT_HDR_BYTES, sizeof(w) - ED_EXT_HDR_BYTES) == 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S + 3, r, 2 * SECT), 0);
	CHECK(memcmp(r, w + 3 * SECT, 2 * SECT) == 0);

	/* I/O errors. */
	struct ed_protector bad = p;
	bad.rc = BAD;
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &bad, 0, S, r, SECT), ED_E_CAP);
	bad = p;
	bad.wc = p.rc;                 /* the read capability does not write */
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &bad, 1, S + 1, w, SECT), ED_E_CAP);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S + 15, r, 2 * SECT), ED_E_RANGE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S - 1, r, 2 * SECT), ED_E_RANGE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, 100), ED_E_ALIGN);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, ED_IO_MAX + SECT), ED_E_TOOBIG);
	{
		int32_t res = 0;
		struct ed_buf b;
		memset(&b, 0, sizeof(b));
		b.b_flags = ED_B_READ | ED_B_WRITE;
		b.b_blkno = S;
		b.b_bcount = SECT;
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b, NULL, r, SECT, NULL, 0, &res), ED_E_ARG);
		b.b_flags = ED_B_READ;
		b.b_dev = 1;
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b, NULL, r, SECT, NULL, 0, &res), ED_E_ARG);
		b.b_dev = 0;
		b.b_bcount = 2 * SECT;     /* the buffer handed over is shorter */
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b, NULL, r, SECT, NULL, 0, &res), ED_E_ARG);
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b, NULL, NULL, 0, NULL, 0, &res), ED_E_ARG);
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, NULL, NULL, r, SECT, NULL, 0, &res), ED_E_ARG);
	}

	/* Grow and shrink. */
	struct ed_operation st = stuff(4 * SECT, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, &st), 0);
	CHECK(fx_allocated(&f, S + 19) && !fx_allocated(&f, S + 20));
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 1, S + 16, w, 4 * SECT), 0);
	struct ed_protector blocker = h_ext(0, S + 20, SECT, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &blocker, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, &st), ED_E_ALLOCATED);
	bad = p;
	bad.wc = BAD;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &bad, &st), ED_E_CAP);
	st = stuff(100, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_SHRINK, &p, &st), ED_E_ALIGN);
	st = stuff(20 * SECT, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_SHRINK, &p, &st), ED_E_RANGE);    /* header stays */
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_SHRINK, &p, NULL), ED_E_ARG);
	st = stuff(2 * SECT, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_SHRINK, &p, &st), 0);
	/* Never committed: the sectors are free at once. */
	CHECK(fx_allocated(&f, S + 17) && !fx_allocated(&f, S + 18));

	/* Write-back, then shrinking frees only when that is durable too. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), ED_E_CLEAN);
	bad = p;
	bad.wc = BAD;
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXTENT_WRITE, &bad), ED_E_CAP);
	st = stuff(2 * SECT, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_SHRINK, &p, &st), 0);
	CHECK(fx_allocated(&f, S + 16) && fx_allocated(&f, S + 17));
	/* The write-back fails (the disk reports an error): nothing is freed,
	 * the header stays dirty, and writing back again works. */
	h_settle();                    /* nothing else in flight: the log write fails */
	f.hd.fail_countdown = 0;
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), BLK_E_IO);
	CHECK(fx_allocated(&f, S + 16) && fx_allocated(&f, S + 17));
	CHECK(op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL) & ED_IC_DIRTY);
	q = h_ext(0, S + 16, SECT, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_ALLOCATED);
	/* While the write-back is in flight the sectors are still allocated:
	 * a crash now could bring back the version that refers to them. */
	int32_t wres;
	struct ed_buf wb;
	memset(&wb, 0, sizeof(wb));
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p, &wb, NULL, NULL, 0, NULL, 0, &wres), 0);
	CHECK_EQ(wres, ED_PENDING);
	CHECK(fx_allocated(&f, S + 16) && fx_allocated(&f, S + 17));
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), ED_E_ALLOCATED);
	CHECK_EQ(h_wait(&wres), 0);
	CHECK(fx_allocated(&f, S + 15) && !fx_allocated(&f, S + 16));
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q, NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_DEALLOCATE, &q, NULL), 0);
	fx_check_live(&f);

	/* Data survives a reboot; the header comes back verified. */
	fx_remount(&f);
	memset(r, 0, sizeof(r));
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, 16 * SECT), 0);
	CHECK(memcmp(r + ED_EXT_HDR_BYTES, w + ED_EXT_HDR_BYTES, 16 * SECT - ED_EXT_HDR_BYTES) == 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, 17 * SECT), ED_E_RANGE);
	/* The never-written-back blocker is gone after the reboot. */
	CHECK(!fx_allocated(&f, S + 20));
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &blocker, 0, S + 20, r, SECT), ED_E_NOTBOUND);

	/* Deallocation: refused while I/O is in flight, then pending until
	 * written back. */
	int32_t res;
	struct ed_buf b;
	memset(&b, 0, sizeof(b));
	b.b_flags = ED_B_READ;
	b.b_blkno = S + 4;
	b.b_bcount = SECT;
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b, NULL, r, SECT, NULL, 0, &res), 0);
	CHECK_EQ(res, ED_PENDING);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_DEALLOCATE, &p, NULL), ED_E_IOBUSY);
	st = stuff(12 * SECT, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_SHRINK, &p, &st), ED_E_IOBUSY);
	CHECK_EQ(h_wait(&res), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_DEALLOCATE, &p, NULL), 0);
	CHECK(fx_allocated(&f, S));
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, SECT), ED_E_DEALLOC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, &st), ED_E_DEALLOC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	CHECK(!fx_allocated(&f, S) && !fx_allocated(&f, S + 15));
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &p), ED_E_NOTBOUND);
	fx_check_live(&f);
	fx_remount(&f);
	CHECK(!fx_allocated(&f, S));
	fx_free(&f);
}

/* ---- reading in, IN_CACHE, MARK_REPLACEMENT, GET_FREE_MAP -------------------------- */

static void test_cache_ops(void)
{
	struct fx f;
	fx_new(&f, D, HD_SYNC, NULL, 2);
	uint64_t S = data_start(&f) + 10;
	struct ed_protector p = h_ext(0, S, 4 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	int64_t m = op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL);
	CHECK_EQ(m, ED_IC_CACHED | ED_IC_DIRTY | ED_IC_HELD);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	m = op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL);
	CHECK_EQ(m, ED_IC_CACHED | ED_IC_HELD | ED_IC_COMMITTED);
	CHECK_EQ(op(&f, &f.b, ED_OP_IN_CACHE, &p, NULL), ED_IC_CACHED | ED_IC_COMMITTED);

	/* Marking: the holder may; a stranger may not without the capability. */
	struct ed_protector nocap = h_ext(0, S, 0, RC, BAD);
	CHECK_EQ(op(&f, &f.b, ED_OP_MARK_REPLACEMENT, &nocap, NULL), ED_E_CAP);
	CHECK_EQ(op(&f, &f.a, ED_OP_MARK_REPLACEMENT, &p, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL), ED_IC_CACHED | ED_IC_COMMITTED);
	/* Sharing: both read it, one copy, both hold it. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &p), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXTENT_READ, &p), 0);
	CHECK(op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL) & ED_IC_HELD);
	CHECK(op(&f, &f.b, ED_OP_IN_CACHE, &p, NULL) & ED_IC_HELD);
	struct ed_protector withcap = h_ext(0, S, 0, BAD, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_MARK_REPLACEMENT, &withcap, NULL), 0);   /* drops all holds */
	CHECK(!(op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL) & ED_IC_HELD));

	/* Marking a dirty entry gives nothing up: whoever changed it keeps it
	 * (it must write it back), and its changes stay. */
	struct ed_protector g = h_ext(0, S + 20, 2 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &g, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_MARK_REPLACEMENT, &g, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &g, NULL), ED_IC_CACHED | ED_IC_DIRTY | ED_IC_HELD);
	static uint8_t sec[SECT];
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &g, 1, S + 20, sec, SECT), 0);
	CHECK(fx_allocated(&f, S + 21));
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &g), 0);

	/* Reading what is not there, or the wrong kind. */
	fx_remount(&f);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_MARK_REPLACEMENT, &p, NULL), ED_E_NOTCACHED);
	struct ed_protector data = h_ext(0, S + 1, 0, RC, WC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &data), ED_E_NOTBOUND);
	struct ed_protector asxn = h_xn(0, S, 0, 0, RC, WC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ, &asxn), ED_E_KIND);
	struct ed_protector far = h_ext(0, (uint64_t)1 << 40, 0, RC, WC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &far), ED_E_RANGE);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, NULL), ED_E_NOTCACHED);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &p), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL), ED_IC_CACHED | ED_IC_HELD | ED_IC_COMMITTED);

	/* The free map: where it is mapped, how big, and its bits. */
	struct ed_operation st = stuff(0, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_GET_FREE_MAP, &p, &st), 0);
	CHECK_EQ(st.one, D);
	CHECK_EQ(st.two, 4096);
	CHECK(st.three != 0);
	CHECK_EQ(ed_freemap_npages(f.ed, 0), 1);
	CHECK(fx_allocated(&f, 0) && fx_allocated(&f, S) && !fx_allocated(&f, S + 4));
	CHECK_EQ(op(&f, &f.a, ED_OP_GET_FREE_MAP, &p, NULL), ED_E_ARG);

	CHECK_EQ(op(&f, &f.a, ED_OP_POLL, NULL, NULL), 0);
	fx_check_live(&f);
	fx_free(&f);
}

/* ---- exonodes ------------------------------------------------------------------------ */

static void test_exonodes(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 3);
	uint64_t X = data_start(&f) + 200;
	const uint64_t L = 120;          /* (512 - 32) / 120 = 4 per sector */
	struct ed_protector x[5];
	for (int i = 0; i < 4; i++) {
		x[i] = h_xn(0, X, (uint16_t)i, L, h_cap(10 + i, 1), h_cap(20 + i, 1));
		CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x[i], NULL), 0);
	}
	CHECK(fx_allocated(&f, X) && !fx_allocated(&f, X + 1));
	x[4] = h_xn(0, X, 4, L, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x[4], NULL), ED_E_SLOT);
	x[4] = h_xn(0, X, 1, L, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x[4], NULL), ED_E_SLOT);   /* in use */
	x[4] = h_xn(0, X, 3, 128, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x[4], NULL), ED_E_XNSIZE);
	x[4] = h_xn(0, X + 1, 0, 124, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x[4], NULL), ED_E_ALIGN);
	x[4] = h_xn(0, X + 1, 0, 16, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x[4], NULL), ED_E_XNSIZE);
	x[4] = h_xn(0, X + 1, 0, ED_XN_MAX_BYTES + 8, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x[4], NULL), ED_E_XNSIZE);

	/* Entries: extents. */
	uint64_t E = X + 10;
	struct ed_operation st = stuff(E, 8 * SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), 0);
	st = stuff(E + 8, 8 * SECT, 0);
	x[0].xn_entry = 5;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), 5);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), ED_E_ENTRY);    /* taken */
	x[0].xn_entry = ED_XN_MAX_ENTRIES;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), ED_E_ENTRY);
	x[0].xn_entry = -1;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), ED_E_ALLOCATED);
	st = stuff(E + 16, 100, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), ED_E_ALIGN);
	st = stuff(E + 16, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), ED_E_ARG);
	st = stuff(2, SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), ED_E_RANGE);
	st = stuff(E + 16, SECT, 0);
	struct ed_protector bad = x[0];
	bad.wc = x[1].wc;              /* another exonode's capability */
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &bad, &st), ED_E_CAP);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], NULL), ED_E_ARG);
	/* Fill the 64-byte entry area (4 extents of 16 bytes) to the brim. */
	st = stuff(E + 16, SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), 1);
	st = stuff(E + 17, SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), 2);
	st = stuff(E + 18, SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x[0], &st), ED_E_XNFULL);

	/* I/O across two adjacent entries; the hint is only a hint. */
	static uint8_t w[16 * SECT], r[16 * SECT];
	fill(w, sizeof(w), 3);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x[0], 1, E, w, 16 * SECT), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &x[0], 0, E, r, 16 * SECT), 0);
	CHECK(memcmp(r, w, 16 * SECT) == 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &x[1], 0, E, r, SECT), ED_E_RANGE);    /* not x[1]'s */
	struct ed_protector x1as0 = x[1];
	x1as0.rc = x[0].rc;            /* a sibling's capability is no good */
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &x1as0, 0, E, r, SECT), ED_E_CAP);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &x[0], 0, E + 17, r, 2 * SECT), ED_E_RANGE);

	/* Combine and split. */
	x[0].xn_entry = 0;
	st = stuff(5, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_COMBINE, &x[0], &st), 0);
	st = stuff(5, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_COMBINE, &x[0], &st), ED_E_ENTRY);      /* 5 is gone */
	st = stuff(2, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_COMBINE, &x[0], &st), ED_E_RANGE);      /* not adjacent */
	st = stuff(0, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_COMBINE, &x[0], &st), ED_E_ENTRY);
	st = stuff(4 * SECT, 7, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_SPLIT, &x[0], &st), 7);
	st = stuff(100, (uint64_t)-1, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_SPLIT, &x[0], &st), ED_E_ALIGN);
	st = stuff(4 * SECT, (uint64_t)-1, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_SPLIT, &x[0], &st), ED_E_RANGE);        /* at the end */
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &x[0], 0, E, r, 16 * SECT), 0);            /* still covered */
	CHECK(memcmp(r, w, 16 * SECT) == 0);

	/* Application data: add, replace, read, sizes. */
	uint8_t data[40], back[64];
	fill(data, sizeof(data), 9);
	x[2].xn_entry = -1;
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &x[2], NULL,
	               &(struct ed_operation){ .one = 40 }, NULL, 0, data, 40, NULL), 0);
	x[2].xn_entry = 0;
	struct ed_operation rd = stuff(64, 0, 0);
	memset(back, 0, sizeof(back));
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ_DATA, &x[2], NULL, &rd, NULL, 0, back, 64, NULL), 40);
	CHECK_EQ(rd.two, 40);
	CHECK(memcmp(back, data, 40) == 0);
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &x[2], NULL,
	               &(struct ed_operation){ .one = 12 }, NULL, 0, data, 40, NULL), ED_E_ALIGN);
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &x[2], NULL,
	               &(struct ed_operation){ .one = 64 }, NULL, 0, data, 40, NULL), ED_E_ARG);
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &x[2], NULL,
	               &(struct ed_operation){ .one = 8 }, NULL, 0, data, 40, NULL), 0);   /* replace */
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ_DATA, &x[2], NULL, &rd, NULL, 0, back, 64, NULL), 8);
	struct ed_protector x2bad = x[2];
	x2bad.rc = BAD;
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ_DATA, &x2bad, NULL, &rd, NULL, 0, back, 64, NULL), ED_E_CAP);
	x[0].xn_entry = 0;
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ_DATA, &x[0], NULL, &rd, NULL, 0, back, 64, NULL), ED_E_ENTTYPE);
	x[2].xn_entry = 3;
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ_DATA, &x[2], NULL, &rd, NULL, 0, back, 64, NULL), ED_E_ENTRY);
	x[2].xn_entry = 0;
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &x[2], NULL,
	               &(struct ed_operation){ .one = 72 }, NULL, 0, w, 72, NULL), ED_E_TOOBIG);

	/* Write back: the block carries all four; reboot; everything is back. */
	struct ed_protector x2nowc = x[2];
	x2nowc.wc = BAD;
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_WRITE, &x2nowc), ED_E_CAP);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x[3]), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x[0]), ED_E_CLEAN);
	fx_check_live(&f);
	fx_remount(&f);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x[0], 0, E, r, SECT), ED_E_NOTCACHED);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ, &x[0]), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x[0], 0, E, r, 16 * SECT), 0);
	CHECK(memcmp(r, w, 16 * SECT) == 0);
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ_DATA, &x[2], NULL, &rd, NULL, 0, back, 64, NULL), 8);
	CHECK(memcmp(back, data, 8) == 0);

	/* Removing an extent entry frees its sectors when that is durable. */
	x[0].xn_entry = 7;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &x[0], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &x[0], NULL), ED_E_ENTRY);
	CHECK(fx_allocated(&f, E + 4));
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x[0]), 0);
	CHECK(!fx_allocated(&f, E + 4) && fx_allocated(&f, E + 3));

	/* Deallocation: the slot stays unusable until written back. */
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_DEALLOCATE, &x[1], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_DEALLOCATE, &x[1], NULL), ED_E_DEALLOC);
	struct ed_protector again = h_xn(0, X, 1, L, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &again, NULL), ED_E_SLOT);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x[1]), 0);   /* names the dead slot */
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &again, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x[1], 0, E, r, SECT), ED_E_CAP);
	/* The last exonode of a block takes the block with it. */
	for (int i = 0; i < 4; i++) {
		struct ed_protector y = i == 1 ? again : x[i];
		CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_DEALLOCATE, &y, NULL), 0);
	}
	CHECK(fx_allocated(&f, X));
	struct ed_protector anyslot = h_xn(0, X, 2, 0, RC, BAD);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_WRITE, &anyslot), 0);  /* nothing left to protect */
	CHECK(!fx_allocated(&f, X) && !fx_allocated(&f, E));
	fx_check_live(&f);

	/* A large exonode: 3 sectors, many entries. */
	struct ed_protector big = h_xn(0, X + 100, 0, 1400, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &big, NULL), 0);
	CHECK(fx_allocated(&f, X + 102) && !fx_allocated(&f, X + 103));
	struct ed_protector inside = h_ext(0, X + 101, SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &inside, NULL), ED_E_ALLOCATED);
	int n = 0;
	for (;; n++) {
		st = stuff(X + 200 + 2 * (uint64_t)n, SECT, 0);
		int64_t e = op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &big, &st);
		if (e == ED_E_XNFULL)
			break;
		CHECK_EQ(e, n);
	}
	CHECK_EQ(n, (1400 - ED_XN_HDR_BYTES) / ED_XN_EXTENT_BYTES);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &big), 0);
	fx_remount(&f);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ, &big), 0);
	for (int i = 0; i < n; i += 7)
		CHECK_EQ(h_io(&f.h, f.ed, &f.a, &big, 0, X + 200 + 2 * (uint64_t)i, r, SECT), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &big, 0, X + 201, r, SECT), ED_E_RANGE);
	struct ed_check_stats cs = fx_check_live(&f);
	CHECK_EQ(cs.exonodes, 1);
	fx_free(&f);
}

/* ED_OP_EXONODE_REMOVE_RANGE: many extent entries in one call, freed when
 * the write-back is durable, all or nothing. */
static void test_remove_range(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 9);
	uint64_t X = data_start(&f) + 250;
	struct ed_protector x = h_xn(0, X, 0, ED_XN_MAX_BYTES, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x, NULL), 0);
	uint64_t E = X + 10;
	for (int i = 0; i < 10; i++) {
		struct ed_operation st = stuff(E + 8 * (uint64_t)i, 8 * SECT, 0);
		x.xn_entry = i;
		CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x, &st), i);
	}
	uint8_t data[16];
	fill(data, sizeof(data), 2);
	x.xn_entry = 20;
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &x, NULL,
	               &(struct ed_operation){ .one = 16 }, NULL, 0, data, 16, NULL), 20);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);

	/* Bad arguments. */
	struct ed_operation st = stuff(3, 0, 0);
	x.xn_entry = 2;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, NULL), ED_E_ARG);
	struct ed_protector nowc = x;
	nowc.wc = BAD;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_REMOVE_RANGE, &nowc, &st), ED_E_CAP);
	x.xn_entry = -1;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), ED_E_ENTRY);
	x.xn_entry = 250;
	st = stuff(7, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), ED_E_ENTRY);
	x.xn_entry = 0;
	st = stuff(0, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), ED_E_ENTRY);
	st = stuff(1ull << 40, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), ED_E_ENTRY);
	/* A data entry in the range: nothing goes. */
	x.xn_entry = 8;
	st = stuff(20, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), ED_E_ENTTYPE);
	/* An extent with I/O in flight: nothing goes.  (The sector is written
	 * first: a read of an unwritten one completes at once, with zeros.) */
	int32_t res;
	struct ed_buf b;
	static uint8_t r[8 * SECT];
	memset(r, 0, sizeof(r));
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x, 1, E + 8 * 9, r, SECT), 0);
	memset(&b, 0, sizeof(b));
	b.b_flags = ED_B_READ;
	b.b_blkno = E + 8 * 9;
	b.b_bcount = SECT;
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &x, &b, NULL, r, SECT, NULL, 0, &res), 0);
	CHECK_EQ(res, ED_PENDING);
	x.xn_entry = 5;
	st = stuff(5, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), ED_E_IOBUSY);
	CHECK_EQ(h_wait(&res), 0);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x, 0, E + 8 * (uint64_t)i, r, SECT), 0);
	/* Numbers with no entry count for nothing. */
	x.xn_entry = 10;
	st = stuff(10, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), 0);

	/* Entries 2..4 and 7..9 (11 and 12 are not in use); 0, 1, 5, 6 and the
	 * data stay.  Freed only once the exonode's write-back is durable. */
	x.xn_entry = 2;
	st = stuff(3, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), 3);
	x.xn_entry = 7;
	st = stuff(6, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), 3);
	x.xn_entry = 3;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &x, NULL), ED_E_ENTRY);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x, 0, E + 8 * 3, r, SECT), ED_E_RANGE);
	CHECK(fx_allocated(&f, E + 8 * 3) && fx_allocated(&f, E + 8 * 9));
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(fx_allocated(&f, E + 8 * (uint64_t)i), i < 2 || i == 5 || i == 6);
	fx_check_live(&f);
	fx_remount(&f);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ, &x), 0);
	for (int i = 0; i < 10; i++)
		CHECK_EQ(h_io(&f.h, f.ed, &f.a, &x, 0, E + 8 * (uint64_t)i, r, SECT),
		         i < 2 || i == 5 || i == 6 ? 0 : ED_E_RANGE);
	x.xn_entry = 20;
	uint8_t back[16];
	struct ed_operation rd = stuff(16, 0, 0);
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ_DATA, &x, NULL, &rd, NULL, 0, back, 16, NULL), 16);
	CHECK(memcmp(back, data, 16) == 0);

	/* An extent never written back goes back to the free map at once. */
	st = stuff(E + 100, 8 * SECT, 0);
	x.xn_entry = 30;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x, &st), 30);
	CHECK(fx_allocated(&f, E + 100));
	x.xn_entry = 0;
	st = stuff(ED_XN_MAX_ENTRIES, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), ED_E_ENTTYPE);   /* the data */
	st = stuff(20, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), 4);
	x.xn_entry = 21;
	st = stuff(ED_XN_MAX_ENTRIES - 21, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_RANGE, &x, &st), 1);
	CHECK(!fx_allocated(&f, E + 100));
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	CHECK(!fx_allocated(&f, E) && !fx_allocated(&f, E + 8 * 6));
	struct ed_check_stats cs = fx_check_live(&f);
	CHECK_EQ(cs.exonodes, 1);
	fx_free(&f);
}

/* ---- descendants ------------------------------------------------------------------------ */

static void test_descendants(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 4);
	uint64_t X = data_start(&f) + 300;
	struct ed_cap prc = h_cap(100, 1), pwc = h_cap(101, 1);
	struct ed_cap crc = h_cap(200, 1), cwc = h_cap(201, 1);
	struct ed_protector parent = h_xn(0, X, 0, 200, prc, pwc);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &parent, NULL), 0);
	/* A child in a block of its own, and one sharing the parent's block. */
	struct ed_operation st = stuff(X + 1, 0, 96);
	st.rc = crc;
	st.wc = cwc;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXONODE, &parent, &st), 0);
	st = stuff(X, 1, 200);
	st.rc = crc;
	st.wc = cwc;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXONODE, &parent, &st), 1);
	st = stuff(X + 1, 0, 96);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXONODE, &parent, &st), ED_E_SLOT);
	struct ed_protector child = h_xn(0, X + 1, 0, 0, crc, cwc);
	/* Grandchild under the child. */
	st = stuff(X + 2, 0, 96);
	st.rc = h_cap(300, 1);
	st.wc = h_cap(301, 1);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXONODE, &child, &st), 0);
	struct ed_protector grand = h_xn(0, X + 2, 0, 0, st.rc, st.wc);
	struct ed_operation ex = stuff(X + 50, 4 * SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &grand, &ex), 0);
	ex = stuff(X + 60, 4 * SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &parent, &ex), 2);

	/* The ancestor's capabilities reach the grandchild; not the reverse. */
	static uint8_t w[4 * SECT], r[4 * SECT];
	fill(w, sizeof(w), 4);
	struct ed_protector g_by_parent = h_xn(0, X + 2, 0, 0, prc, pwc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &g_by_parent, 1, X + 50, w, 4 * SECT), 0);
	struct ed_protector g_by_child = h_xn(0, X + 2, 0, 0, crc, cwc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &g_by_child, 0, X + 50, r, 4 * SECT), 0);
	CHECK(memcmp(r, w, sizeof(w)) == 0);
	struct ed_protector p_by_child = h_xn(0, X, 0, 0, crc, cwc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &p_by_child, 0, X + 60, r, SECT), ED_E_CAP);
	struct ed_protector p_by_grand = h_xn(0, X, 0, 0, grand.rc, grand.wc);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_ADD_EXTENT, &p_by_grand, &ex), ED_E_CAP);
	/* Read rights do not become write rights on the way down. */
	struct ed_protector g_ro = h_xn(0, X + 2, 0, 0, prc, prc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &g_ro, 1, X + 50, w, SECT), ED_E_CAP);

	/* Discovering a descendant's capabilities. */
	parent.xn_entry = 0;
	struct ed_operation d = stuff(0, 0, 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_CAP_DISCOVER, &parent, &d), 3);
	CHECK(ed_cap_equal(&d.rc, &crc) && ed_cap_equal(&d.wc, &cwc));
	struct ed_protector p_ro = parent;
	p_ro.wc = BAD;
	d = stuff(0, 0, 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_CAP_DISCOVER, &p_ro, &d), 1);
	CHECK(ed_cap_equal(&d.rc, &crc));
	CHECK(d.wc.w[0] == 0 && d.wc.w[1] == 0);
	p_ro.rc = BAD;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_CAP_DISCOVER, &p_ro, &d), ED_E_CAP);
	child.xn_entry = 0;
	struct ed_protector c_by_grand = h_xn(0, X + 1, 0, 0, grand.rc, grand.wc);
	c_by_grand.xn_entry = 0;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_CAP_DISCOVER, &c_by_grand, &d), ED_E_CAP);
	parent.xn_entry = 2;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_CAP_DISCOVER, &parent, &d), ED_E_ENTTYPE);

	/* Everything to disk, reboot; access through ancestors needs them cached. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &grand), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &child), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &parent), 0);
	fx_check_live(&f);
	fx_remount(&f);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ, &grand), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &g_by_parent, 0, X + 50, r, SECT), ED_E_NOTCACHED);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ, &child), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ, &parent), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &g_by_parent, 0, X + 50, r, 4 * SECT), 0);
	CHECK(memcmp(r, w, sizeof(w)) == 0);

	/* Removing a descendant: it must be empty; then it is deallocated. */
	child.xn_entry = 0;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &child, NULL), ED_E_NOTEMPTY);
	grand.xn_entry = 0;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &grand, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &child, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &g_by_parent, 0, X + 50, r, SECT), ED_E_DEALLOC);
	/* Deallocating a child directly unlinks it from its cached parent. */
	struct ed_protector sib = h_xn(0, X, 1, 0, crc, cwc);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_DEALLOCATE, &parent, NULL), ED_E_NOTEMPTY);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_DEALLOCATE, &sib, NULL), 0);
	parent.xn_entry = 1;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &parent, NULL), ED_E_ENTRY);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &child), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &parent), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &(struct ed_protector){
	                 .kind = ED_PK_EXONODE, .blkno = X + 2, .xn_entry = -1 }), 0);
	CHECK(!fx_allocated(&f, X + 50) && !fx_allocated(&f, X + 2));
	CHECK(fx_allocated(&f, X) && fx_allocated(&f, X + 60) && fx_allocated(&f, X + 1));
	fx_check_live(&f);
	fx_remount(&f);
	struct ed_check_stats cs;
	fx_forget(&f);
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, fx_report, NULL, &f, &cs), 0);
	CHECK_EQ(cs.violations, 0);
	CHECK_EQ(cs.notes, 0);
	CHECK_EQ(cs.exonodes, 2);          /* the parent and the child */
	CHECK_EQ(cs.descendants, 1);
	fx_free(&f);
}

/* ---- proxies --------------------------------------------------------------------------- */

static int64_t mkproxy(struct fx *f, struct ed_client *c, struct ed_protector *origin,
                       const struct ed_range *r, int n, uint64_t rights, struct ed_cap prc,
                       struct ed_cap pwc)
{
	struct ed_operation st = stuff((uint64_t)n, rights, 0);
	st.rc = prc;
	st.wc = pwc;
	return h_req(&f->h, f->ed, c, ED_OP_EXONODE_PROXY, origin, NULL, &st, NULL, 0, (void *)r,
	             (uint32_t)(n * sizeof(*r)), NULL);
}

static struct ed_protector proxy_prot(int64_t id, struct ed_cap rc, struct ed_cap wc)
{
	struct ed_protector p;
	memset(&p, 0, sizeof(p));
	p.kind = ED_PK_PROXY;
	p.blkno = (uint64_t)id;
	p.xn_entry = -1;
	p.rc = rc;
	p.wc = wc;
	return p;
}

static void test_proxies(void)
{
	struct fx f;
	fx_new(&f, D, HD_SYNC, NULL, 5);
	uint64_t S = data_start(&f) + 400;
	struct ed_protector ext = h_ext(0, S, 32 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &ext, NULL), 0);
	static uint8_t w[32 * SECT], r[32 * SECT];
	fill(w, sizeof(w), 5);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &ext, 1, S, w, sizeof(w)), 0);
	struct ed_cap qrc = h_cap(500, 1), qwc = h_cap(501, 1);

	/* The origin's header sector and anything beyond it are out of reach. */
	struct ed_range bad[2] = { { S, 4 } };
	CHECK_EQ(mkproxy(&f, &f.a, &ext, bad, 1, ED_PROXY_READ, qrc, qwc), ED_E_NOTSUBSET);
	bad[0] = (struct ed_range){ S + 30, 4 };
	CHECK_EQ(mkproxy(&f, &f.a, &ext, bad, 1, ED_PROXY_READ, qrc, qwc), ED_E_NOTSUBSET);
	bad[0] = (struct ed_range){ S + 1, 0 };
	CHECK_EQ(mkproxy(&f, &f.a, &ext, bad, 1, ED_PROXY_READ, qrc, qwc), ED_E_ARG);
	bad[0] = (struct ed_range){ S + 1, 4 };
	CHECK_EQ(mkproxy(&f, &f.a, &ext, bad, 17, ED_PROXY_READ, qrc, qwc), ED_E_TOOBIG);
	CHECK_EQ(mkproxy(&f, &f.a, &ext, bad, 1, 0, qrc, qwc), ED_E_ARG);
	CHECK_EQ(mkproxy(&f, &f.a, &ext, bad, 1, 8, qrc, qwc), ED_E_ARG);
	/* Rights must be proved: a read-only holder cannot lend writing. */
	struct ed_protector ext_ro = ext;
	ext_ro.wc = BAD;
	CHECK_EQ(mkproxy(&f, &f.b, &ext_ro, bad, 1, ED_PROXY_READ | ED_PROXY_WRITE, qrc, qwc), ED_E_CAP);

	struct ed_range rg[2] = { { S + 1, 10 }, { S + 20, 8 } };
	int64_t id = mkproxy(&f, &f.b, &ext_ro, rg, 2, ED_PROXY_READ, qrc, qwc);
	CHECK(id >= 0);
	struct ed_protector px = proxy_prot(id, qrc, qwc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px, 0, S + 2, r, 4 * SECT), 0);
	CHECK(memcmp(r, w + 2 * SECT, 4 * SECT) == 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px, 0, S + 10, r, 2 * SECT), ED_E_RANGE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px, 1, S + 2, w, SECT), ED_E_CAP);      /* read-only */
	struct ed_protector pxbad = proxy_prot(id, RC, WC);                      /* origin's caps */
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &pxbad, 0, S + 2, r, SECT), ED_E_CAP);
	struct ed_protector nonesuch = proxy_prot(id + 1, qrc, qwc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &nonesuch, 0, S + 2, r, SECT), ED_E_NOPROXY);

	/* Nothing can be added to a proxy. */
	struct ed_operation st = stuff(S + 40, SECT, 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_ADD_EXTENT, &px, &st), ED_E_PROXY);
	CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_EXONODE_ADD_DATA, &px, NULL,
	               &(struct ed_operation){ .one = 8 }, NULL, 0, w, 8, NULL), ED_E_PROXY);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_SPLIT, &px, &st), ED_E_PROXY);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_REMOVE_RANGE, &px, &st), ED_E_PROXY);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_WRITE, &px), ED_E_PROXY);
	CHECK_EQ(op(&f, &f.b, ED_OP_MARK_REPLACEMENT, &px, NULL), ED_E_PROXY);

	/* A proxy of the proxy; then the origin shrinks: both are cut back. */
	struct ed_range rg2[1] = { { S + 22, 6 } };
	int64_t id2 = mkproxy(&f, &f.b, &px, rg2, 1, ED_PROXY_READ, qrc, qwc);
	CHECK(id2 >= 0);
	struct ed_protector px2 = proxy_prot(id2, qrc, qwc);
	struct ed_range wide[1] = { { S + 1, 12 } };
	CHECK_EQ(mkproxy(&f, &f.b, &px, wide, 1, ED_PROXY_READ, qrc, qwc), ED_E_NOTSUBSET);
	CHECK_EQ(mkproxy(&f, &f.b, &px, rg2, 1, ED_PROXY_WRITE, qrc, qwc), ED_E_CAP);
	st = stuff(8 * SECT, 0, 0);           /* the extent now ends at S + 24 */
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_SHRINK, &ext, &st), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px, 0, S + 20, r, 4 * SECT), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px, 0, S + 24, r, SECT), ED_E_RANGE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px2, 0, S + 22, r, 2 * SECT), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px2, 0, S + 24, r, SECT), ED_E_RANGE);
	fx_check_live(&f);
	/* Removing a range from a proxy needs the proxy's write capability. */
	px.xn_entry = 1;
	struct ed_protector pxw = px;
	pxw.wc = BAD;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_REMOVE_ENTRY, &pxw, NULL), ED_E_CAP);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_REMOVE_ENTRY, &px, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px, 0, S + 20, r, SECT), ED_E_RANGE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px2, 0, S + 22, r, SECT), ED_E_RANGE);   /* cascaded */
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_REMOVE_ENTRY, &px, NULL), ED_E_ENTRY);

	/* A writable proxy of an exonode; the origin's deallocation ends it. */
	struct ed_protector xn = h_xn(0, S + 100, 0, 96, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &xn, NULL), 0);
	st = stuff(S + 110, 8 * SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &xn, &st), 0);
	struct ed_range xr[1] = { { S + 112, 2 } };
	int64_t id3 = mkproxy(&f, &f.a, &xn, xr, 1, ED_PROXY_READ | ED_PROXY_WRITE, qrc, qwc);
	CHECK(id3 >= 0);
	struct ed_protector px3 = proxy_prot(id3, qrc, qwc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px3, 1, S + 112, w, 2 * SECT), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &xn, 0, S + 112, r, 2 * SECT), 0);
	CHECK(memcmp(r, w, 2 * SECT) == 0);
	xn.xn_entry = 0;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &xn, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px3, 0, S + 112, r, SECT), ED_E_RANGE);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_DEALLOCATE, &ext, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px, 0, S + 2, r, SECT), ED_E_NOPROXY);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px2, 0, S + 2, r, SECT), ED_E_NOPROXY);
	/* Deallocating a proxy; proxies end with their creator too. */
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_DEALLOCATE, &px3, NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_DEALLOCATE, &px3, NULL), ED_E_NOPROXY);
	st = stuff(S + 120, 4 * SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &xn, &st), 0);
	struct ed_range xr2[1] = { { S + 120, 4 } };
	int64_t id4 = mkproxy(&f, &f.a, &xn, xr2, 1, ED_PROXY_READ, qrc, qwc);
	CHECK(id4 >= 0);
	struct ed_protector px4 = proxy_prot(id4, qrc, qwc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px4, 0, S + 120, r, SECT), 0);
	ed_client_exit(f.ed, &f.a);
	CHECK_EQ(h_io(&f.h, f.ed, &f.b, &px4, 0, S + 120, r, SECT), ED_E_NOPROXY);
	fx_check_live(&f);
	fx_free(&f);
}

/* ---- exonode maps ---------------------------------------------------------------------- */

static bool page_has(const uint8_t *page, const void *needle, size_t n)
{
	for (size_t i = 0; i + n <= 4096; i++)
		if (memcmp(page + i, needle, n) == 0)
			return true;
	return false;
}

static void test_maps(void)
{
	struct ed_config cfg = { .cache_entries = 5, .client_quota = 5 };
	struct fx f;
	fx_new(&f, D, HD_SYNC, &cfg, 6);
	uint64_t X = data_start(&f) + 500;
	struct ed_cap secret_r = h_cap(0x5ec7e75ec7e7aaaaull, 0x1111111111111111ull);
	struct ed_cap secret_w = h_cap(0x5ec7e75ec7e7bbbbull, 0x2222222222222222ull);
	struct ed_cap other_r = h_cap(0x0123012301230123ull, 0x3333333333333333ull);
	struct ed_protector x = h_xn(0, X, 0, 120, secret_r, secret_w);
	struct ed_protector y = h_xn(0, X, 1, 120, other_r, other_r);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &y, NULL), 0);
	uint8_t ydata[16] = "neighbour-bytes";
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &y, NULL,
	               &(struct ed_operation){ .one = 16 }, NULL, 0, ydata, 16, NULL), 0);
	struct ed_operation st = stuff(X + 10, 4 * SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x, &st), 0);
	uint8_t xdata[24] = "application-metadata!!!";
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &x, NULL,
	               &(struct ed_operation){ .one = 24 }, NULL, 0, xdata, 24, NULL), 1);

	struct ed_operation m = stuff(ED_MAP_MAP, 0, 0);
	struct ed_protector xbad = x;
	xbad.rc = BAD;
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_MAP, &xbad, &m), ED_E_CAP);
	int64_t ua = op(&f, &f.b, ED_OP_EXONODE_MAP, &x, &m);
	CHECK(ua > 0);
	const uint8_t *page = h_map_page(&f.h, (uint64_t)ua);
	CHECK(page != NULL);
	const struct ed_xnmap_hdr *mh = (const void *)page;
	const struct ed_xnmap_ent *me = (const void *)(mh + 1);
	CHECK(mh->magic == ED_XNMAP_MAGIC && mh->state == ED_XNMAP_LIVE && (mh->gen & 1) == 0);
	CHECK_EQ(mh->sector, X);
	CHECK_EQ(mh->nent, 2);
	CHECK_EQ(mh->dirty, 1);
	CHECK(me[0].type == ED_ENT_EXTENT && me[0].a == X + 10 && me[0].b == 4);
	CHECK(me[1].type == ED_ENT_DATA && me[1].len == 24);
	CHECK(memcmp(page + me[1].a, xdata, 24) == 0);
	/* No capability, and nothing of the neighbouring exonode. */
	CHECK(!page_has(page, &secret_r, 8) && !page_has(page, &secret_w, 8));
	CHECK(!page_has(page, &other_r, 8) && !page_has(page, ydata, 9));

	/* It follows changes. */
	uint64_t g = mh->gen;
	st = stuff(X + 20, SECT, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ADD_EXTENT, &x, &st), 2);
	CHECK(mh->gen > g && (mh->gen & 1) == 0);
	CHECK_EQ(mh->nent, 3);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	CHECK_EQ(mh->dirty, 0);
	/* Leaving the cache detaches it; reading the block in revives it. */
	struct ed_protector wcx = x;
	CHECK_EQ(op(&f, &f.a, ED_OP_MARK_REPLACEMENT, &wcx, NULL), 0);
	for (int i = 0; i < 5; i++) {
		struct ed_protector e = h_ext(0, X + 100 + 10 * (uint64_t)i, SECT, RC, WC);
		CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &e, NULL), 0);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &e), 0);
	}
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &x, NULL), 0);
	CHECK_EQ(mh->state, ED_XNMAP_DETACHED);
	CHECK_EQ(mh->nent, 3);
	/* Every entry is a's now: b gets one only once a lets one go. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ, &x), ED_E_CACHEFULL);
	struct ed_protector last = h_ext(0, X + 140, 0, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_MARK_REPLACEMENT, &last, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.b, ED_OP_EXONODE_READ, &x), 0);
	CHECK_EQ(mh->state, ED_XNMAP_LIVE);
	/* Deallocation: GONE. */
	x.xn_entry = 0;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &x, NULL), 0);
	x.xn_entry = 2;
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_REMOVE_ENTRY, &x, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_DEALLOCATE, &x, NULL), 0);
	CHECK_EQ(mh->state, ED_XNMAP_GONE);
	/* Unmapping, and proxies cannot be mapped. */
	m = stuff(ED_MAP_UNMAP, (uint64_t)ua, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_MAP, &x, &m), ED_E_NOMAP);    /* not a's */
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_MAP, &x, &m), 0);
	CHECK(h_map_page(&f.h, (uint64_t)ua) == NULL);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_MAP, &x, &m), ED_E_NOMAP);
	m = stuff(7, 0, 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXONODE_MAP, &y, &m), ED_E_ARG);
	m = stuff(ED_MAP_MAP, 0, 0);
	CHECK(op(&f, &f.b, ED_OP_EXONODE_MAP, &y, &m) > 0);   /* dropped when b exits */
	fx_check_live(&f);
	fx_free(&f);
}

/* ---- the cache: full of dirty entries, quotas, shared copies --------------------------- */

static void test_cache_pressure(void)
{
	struct ed_config cfg = { .cache_entries = 7, .client_quota = 5 };
	struct fx f;
	fx_new(&f, D, HD_SYNC, &cfg, 7);
	uint64_t S = data_start(&f) + 10;
	struct ed_protector e[12];
	for (int i = 0; i < 12; i++)
		e[i] = h_ext(0, S + 4 * (uint64_t)i, 2 * SECT, RC, WC);
	for (int i = 0; i < 5; i++)
		CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &e[i], NULL), 0);
	/* a holds its quota, all dirty: it is told to write back. */
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &e[5], NULL), ED_E_CACHEDIRTY);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &e[5], NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &e[6], NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &e[7], NULL), ED_E_CACHEDIRTY);
	/* Writing back makes a's entries replaceable by a, not by b. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &e[0]), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &e[7], NULL), ED_E_CACHEDIRTY);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &e[7], NULL), 0);        /* replaced e[0] */
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[0], NULL), 0);
	/* Nothing dirty was lost: every entry is still there or on disk. */
	for (int i = 1; i < 8; i++)
		CHECK(op(&f, &f.a, ED_OP_IN_CACHE, &e[i], NULL) & ED_IC_DIRTY);
	/* Quota without dirt: clean held entries of its own are replaced. */
	for (int i = 1; i < 8; i++) {
		struct ed_client *c = (i == 5 || i == 6) ? &f.b : &f.a;
		CHECK_EQ(h_sync(&f.h, f.ed, c, ED_OP_EXTENT_WRITE, &e[i]), 0);
	}
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &e[8], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &e[9], NULL), 0);
	/* b's entries were not taken by a. */
	CHECK(op(&f, &f.b, ED_OP_IN_CACHE, &e[5], NULL) & ED_IC_HELD);
	CHECK(op(&f, &f.b, ED_OP_IN_CACHE, &e[6], NULL) & ED_IC_HELD);
	/* a third client finds everything held by others and clean: full. */
	struct ed_client c3 = { .slot = -1 };
	struct ed_protector e10 = e[10];
	int64_t r = op(&f, &c3, ED_OP_EXTENT_ALLOCATE, &e10, NULL);
	CHECK(r == ED_E_CACHEDIRTY || r == ED_E_CACHEFULL);
	/* a replaced its own least recent entries, e[1] and e[2]. */
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[1], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[2], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_MARK_REPLACEMENT, &e[3], NULL), 0);
	CHECK_EQ(op(&f, &c3, ED_OP_EXTENT_ALLOCATE, &e10, NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[3], NULL), 0);
	ed_client_exit(f.ed, &c3);   /* its uncommitted extent is undone */
	CHECK(!fx_allocated(&f, S + 40));
	fx_check_live(&f);
	fx_free(&f);
}

/* Issue 17 A3: two clients take all the cache entries and proxies they
 * can (never writing back); a third still does a whole round - allocate,
 * write, write back, read, proxy, deallocate.  (Before: the first two held
 * the whole cache, 3/4 quota each, and every proxy.) */
static void test_share(void)
{
	struct ed_config cfg = { .cache_entries = 67 };
	struct fx f;
	fx_new(&f, D, HD_SYNC, &cfg, 17);
	uint64_t S = data_start(&f) + 10;
	int n = 0, held[2] = { 0, 0 };
	struct ed_protector first[2];
	struct ed_client *hog[2] = { &f.a, &f.b };
	for (int h = 0; h < 2; h++) {
		for (;;) {
			struct ed_protector e = h_ext(0, S + 4 * (uint64_t)n++, 2 * SECT, RC, WC);
			int64_t r = op(&f, hog[h], ED_OP_EXTENT_ALLOCATE, &e, NULL);
			if (r != 0) {
				CHECK(r == ED_E_QUOTA || r == ED_E_CACHEDIRTY || r == ED_E_CACHEFULL);
				break;
			}
			if (held[h]++ == 0)
				first[h] = e;
		}
		struct ed_range rg = { first[h].blkno + 1, 1 };
		while (mkproxy(&f, hog[h], &first[h], &rg, 1, ED_PROXY_READ, h_cap(600, 1), h_cap(601, 1)) >= 0)
			;
	}
	CHECK(held[0] + held[1] < 67);
	struct ed_client c = { .slot = -1 };
	static uint8_t w[2 * SECT], r[2 * SECT];
	fill(w, sizeof(w), 17);
	struct ed_protector e = h_ext(0, S + 4 * (uint64_t)n + 8, 2 * SECT, RC, WC);
	CHECK_EQ(op(&f, &c, ED_OP_EXTENT_ALLOCATE, &e, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &c, &e, 1, e.blkno, w, sizeof(w)), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &c, ED_OP_EXTENT_WRITE, &e), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &c, &e, 0, e.blkno, r, sizeof(r)), 0);
	CHECK(memcmp(r + ED_EXT_HDR_BYTES, w + ED_EXT_HDR_BYTES, sizeof(w) - ED_EXT_HDR_BYTES) == 0);
	struct ed_range rg = { e.blkno + 1, 1 };
	CHECK(mkproxy(&f, &c, &e, &rg, 1, ED_PROXY_READ, h_cap(602, 1), h_cap(603, 1)) >= 0);
	CHECK_EQ(op(&f, &c, ED_OP_EXTENT_DEALLOCATE, &e, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &c, ED_OP_EXTENT_WRITE, &e), 0);
	ed_client_exit(f.ed, &c);
	fx_free(&f);
}

/* ---- asynchronous I/O, busy entries, exit with I/O in flight, shutdown ------------------ */

static void test_async(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 8);
	uint64_t S = data_start(&f) + 10;
	struct ed_protector p = h_ext(0, S, 64 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	static uint8_t w[64 * SECT], r[64 * SECT];
	fill(w, sizeof(w), 8);
	int32_t res[16];
	struct ed_buf b[16];
	for (int i = 0; i < 16; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].b_flags = ED_B_WRITE;
		b[i].b_blkno = S + 4 * (uint64_t)i;
		b[i].b_bcount = 4 * SECT;
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b[i], NULL, w + 4 * SECT * i, 4 * SECT,
		               NULL, 0, &res[i]), 0);
	}
	int64_t pending = op(&f, &f.a, ED_OP_POLL, NULL, NULL);
	CHECK(pending >= 1 && pending <= 16);
	CHECK_EQ(op(&f, &f.b, ED_OP_POLL, NULL, NULL), 0);
	/* More writes of the header sector while one is in flight wait their
	 * turn (two could reach the disk in either order); the last wins. */
	static uint8_t w2[SECT], w3[SECT];
	fill(w2, SECT, 77);
	fill(w3, SECT, 78);
	int32_t r2, r3;
	struct ed_buf b2 = { .b_flags = ED_B_WRITE, .b_blkno = S, .b_bcount = SECT };
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b2, NULL, w2, SECT, NULL, 0, &r2), 0);
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b2, NULL, w3, SECT, NULL, 0, &r3), 0);
	CHECK_EQ(r3, ED_PENDING);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(h_wait(&res[i]), 0);
	CHECK_EQ(h_wait(&r2), 0);
	CHECK_EQ(h_wait(&r3), 0);
	memcpy(w, w3, SECT);
	CHECK_EQ(op(&f, &f.a, ED_OP_POLL, NULL, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, sizeof(r)), 0);
	CHECK(memcmp(r + ED_EXT_HDR_BYTES, w + ED_EXT_HDR_BYTES, sizeof(w) - ED_EXT_HDR_BYTES) == 0);

	/* Entries being written back cannot be changed or written back again. */
	int32_t wb;
	struct ed_buf nb;
	memset(&nb, 0, sizeof(nb));
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p, &nb, NULL, NULL, 0, NULL, 0, &wb), 0);
	CHECK_EQ(wb, ED_PENDING);
	struct ed_operation st = stuff(SECT, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, &st), ED_E_BUSY);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_DEALLOCATE, &p, NULL), ED_E_BUSY);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), ED_E_BUSY);
	CHECK(op(&f, &f.a, ED_OP_IN_CACHE, &p, NULL) & ED_IC_BUSY);
	CHECK_EQ(h_wait(&wb), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, &st), 0);

	/* A client that exits with I/O in flight: the I/O completes into its
	 * pinned memory, the pins are released, nobody else is disturbed. */
	struct ed_client c3 = { .slot = -1 };
	for (int i = 0; i < 8; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].b_flags = ED_B_READ;
		b[i].b_blkno = S + 1 + 4 * (uint64_t)i;
		b[i].b_bcount = 4 * SECT;
		CHECK_EQ(h_req(&f.h, f.ed, &c3, ED_OP_IO, &p, &b[i], NULL, r + 4 * SECT * i, 4 * SECT,
		               NULL, 0, &res[i]), 0);
	}
	ed_client_exit(f.ed, &c3);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(h_wait(&res[i]), 0);
	h_settle();
	CHECK_EQ(f.h.pins, 0);
	/* A client that exits while a write of its uncommitted header's sector
	 * is in flight: once the write completes, its allocation is undone. */
	struct ed_client c5 = { .slot = -1 };
	struct ed_protector g = h_ext(0, S + 200, 4 * SECT, RC, WC);
	CHECK_EQ(op(&f, &c5, ED_OP_EXTENT_ALLOCATE, &g, NULL), 0);
	int32_t gres;
	struct ed_buf gb = { .b_flags = ED_B_WRITE, .b_blkno = S + 200, .b_bcount = 2 * SECT };
	CHECK_EQ(h_req(&f.h, f.ed, &c5, ED_OP_IO, &g, &gb, NULL, w, 2 * SECT, NULL, 0, &gres), 0);
	ed_client_exit(f.ed, &c5);
	CHECK(fx_allocated(&f, S + 200));
	CHECK_EQ(h_wait(&gres), 0);
	CHECK(!fx_allocated(&f, S + 200) && !fx_allocated(&f, S + 203));
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &g, NULL), 0);
	/* Issue 17 A1: the same with writes to the extent's other sectors
	 * only.  Its sectors stay allocated - nobody else can have them -
	 * until the last write has completed; then the allocation is undone. */
	struct ed_client c6 = { .slot = -1 };
	struct ed_protector q = h_ext(0, S + 220, 8 * SECT, RC, WC);
	CHECK_EQ(op(&f, &c6, ED_OP_EXTENT_ALLOCATE, &q, NULL), 0);
	int32_t qres[4];
	struct ed_buf qb[4];
	for (int i = 0; i < 4; i++) {
		qb[i] = (struct ed_buf){ .b_flags = ED_B_WRITE, .b_blkno = S + 221 + (uint64_t)i, .b_bcount = SECT };
		CHECK_EQ(h_req(&f.h, f.ed, &c6, ED_OP_IO, &q, &qb[i], NULL, w, SECT, NULL, 0, &qres[i]), 0);
	}
	ed_client_exit(f.ed, &c6);
	CHECK(fx_allocated(&f, S + 220) && fx_allocated(&f, S + 224));
	struct ed_protector q2 = h_ext(0, S + 220, 8 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.b, ED_OP_EXTENT_ALLOCATE, &q2, NULL), ED_E_ALLOCATED);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(h_wait(&qres[i]), 0);
	CHECK(!fx_allocated(&f, S + 220) && !fx_allocated(&f, S + 227));
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &q, NULL), 0);

	/* Its slot is reused by a new client at once. */
	struct ed_client c4 = { .slot = -1 };
	CHECK_EQ(op(&f, &c4, ED_OP_POLL, NULL, NULL), 0);
	ed_client_exit(f.ed, &c4);

	/* Shutdown: a clean checkpoint, then the unit refuses work. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_SHUTDOWN, &p), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, &st), ED_E_SHUTDOWN);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S, r, SECT), ED_E_SHUTDOWN);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_SHUTDOWN, &p), ED_E_SHUTDOWN);
	fx_remount(&f);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S + 64, r, SECT), 0);
	fx_check_live(&f);
	fx_free(&f);
}

/* ---- reading uncached extents: one request, checked before delivery -------------------- */

static void test_bounce(void)
{
	struct ed_config cfg = { .bounce_bytes = 16 * 4096, .nbounce = 1 };   /* 128 sectors */
	struct fx f;
	fx_new(&f, D, HD_POLLED, &cfg, 9);
	uint64_t S = data_start(&f) + 10;
	struct ed_protector p = h_ext(0, S, 400 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	static uint8_t w[400 * SECT], r[400 * SECT];
	fill(w, sizeof(w), 10);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 1, S, w, sizeof(w)), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);

	struct { uint64_t off, n; } cases[] = {
		{ 0, 400 }, { 0, 1 }, { 5, 20 }, { 100, 100 }, { 127, 2 }, { 200, 50 }, { 390, 10 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fx_remount(&f);
		uint64_t before = f.hd.nread;
		memset(r, 0xcc, sizeof(r));
		CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S + cases[i].off, r, cases[i].n * SECT), 0);
		uint64_t start = cases[i].off == 0 ? ED_EXT_HDR_BYTES : 0;
		CHECK(memcmp(r + start, w + cases[i].off * SECT + start, cases[i].n * SECT - start) == 0);
		if (cases[i].off == 0)
			for (unsigned k = 0; k < ED_EXT_HDR_BYTES; k++)
				CHECK_EQ(r[k], 0);
		/* One request when it fits the bounce buffer, two when it does not. */
		uint64_t expect = cases[i].off + cases[i].n <= 128 ? 1 : 2;
		CHECK_EQ(f.hd.nread - before, expect);
		/* Now the header is cached: a plain request. */
		before = f.hd.nread;
		CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S + 1, r, SECT), 0);
		CHECK_EQ(f.hd.nread - before, 1);
	}
	/* A wrong capability: nothing reaches the application. */
	fx_remount(&f);
	struct ed_protector bad = p;
	bad.rc = BAD;
	memset(r, 0xcc, sizeof(r));
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &bad, 0, S, r, 300 * SECT), ED_E_CAP);
	for (size_t k = 0; k < 300 * SECT; k++)
		CHECK_EQ(r[k], 0xcc);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S + 390, r, 20 * SECT), ED_E_RANGE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 0, S - 1, r, 2 * SECT), ED_E_RANGE);
	struct ed_protector notext = h_ext(0, S + 5, 0, RC, WC);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &notext, 0, S + 5, r, SECT), ED_E_NOTBOUND);
	/* Several at once share one bounce buffer in turn. */
	int32_t res[6];
	struct ed_buf b[6];
	for (int i = 0; i < 6; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].b_flags = ED_B_READ;
		b[i].b_blkno = S + 10 * (uint64_t)i;
		b[i].b_bcount = 8 * SECT;
		CHECK_EQ(h_req(&f.h, f.ed, &f.b, ED_OP_IO, &p, &b[i], NULL, r + 8 * SECT * i, 8 * SECT,
		               NULL, 0, &res[i]), 0);
	}
	for (int i = 0; i < 6; i++) {
		CHECK_EQ(h_wait(&res[i]), 0);
		size_t skip = i == 0 ? ED_EXT_HDR_BYTES : 0;   /* the header reads as zeros */
		CHECK(memcmp(r + 8 * SECT * i + skip, w + 10 * SECT * i + skip, 8 * SECT - skip) == 0);
	}
	fx_check_live(&f);
	fx_free(&f);
}

/* ---- what requests the disk sees --------------------------------------------------- */

static void test_request_counts(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 10);
	uint64_t S = data_start(&f) + 10;
	static uint8_t w[8 * SECT];
	fill(w, sizeof(w), 11);
	/* Allocate and write a file the thesis's way: the header and the data
	 * go out in one request; the write-back is one log record, and the
	 * home needs no second write (the header is already there). */
	struct ed_protector p = h_ext(0, S, 8 * SECT, RC, WC);
	h_settle();
	hostdisk_reset_counts(&f.hd);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 1, S, w, sizeof(w)), 0);
	CHECK_EQ(f.hd.nreq, 1);
	CHECK_EQ(f.hd.sect_written, 8);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	h_settle();
	CHECK_EQ(f.hd.nreq, 2);
	CHECK_EQ(f.hd.nfua, 1);
	/* A changed header does need its home rewritten, in the background. */
	struct ed_operation st = { .one = SECT };
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_GROW, &p, &st), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	h_settle();
	CHECK_EQ(f.hd.nreq, 4);
	CHECK_EQ(f.hd.nfua, 2);

	/* Group commit: write-backs issued together share log records. */
	struct ed_protector e[24];
	int32_t res[24];
	for (int i = 0; i < 24; i++) {
		e[i] = h_ext(0, S + 20 + 2 * (uint64_t)i, SECT, RC, WC);
		CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &e[i], NULL), 0);
	}
	h_settle();
	hostdisk_reset_counts(&f.hd);
	for (int i = 0; i < 24; i++) {
		struct ed_buf b;
		memset(&b, 0, sizeof(b));
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &e[i], &b, NULL, NULL, 0, NULL, 0,
		               &res[i]), 0);
	}
	for (int i = 0; i < 24; i++)
		CHECK_EQ(h_wait(&res[i]), 0);
	CHECK(f.hd.nfua >= 2 && f.hd.nfua <= 3);   /* the first alone, then the rest together */
	fx_check_live(&f);
	fx_free(&f);
}

/* ED_OP_FLUSH and ED_B_FUA: a completed write sits in the device's volatile
 * cache (the test disk keeps it apart from its medium) until a flush; a FUA
 * write reaches the medium by itself. */
static bool on_medium(struct fx *f, uint64_t s, const uint8_t *want, int n)
{
	for (int i = 0; i < n; i++)
		if (f->hd.cached[s + (uint64_t)i] ||
		    memcmp(f->hd.medium + (s + (uint64_t)i) * SECT, want + i * SECT, SECT) != 0)
			return false;
	return true;
}

static void test_flush(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 12);
	uint64_t S = data_start(&f) + 10;
	static uint8_t w[8 * SECT];
	fill(w, sizeof(w), 13);
	struct ed_protector p = h_ext(0, S, 8 * SECT, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &p, 1, S + 1, w, 7 * SECT), 0);
	h_settle();
	CHECK(!on_medium(&f, S + 1, w, 7));          /* completed, but only cached */
	uint64_t nflush = f.hd.nflush;
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_FLUSH, &p), 0);
	CHECK_EQ(f.hd.nflush, nflush + 1);
	CHECK(on_medium(&f, S + 1, w, 7));

	/* A FUA write needs no flush after it. */
	fill(w, sizeof(w), 14);
	int32_t res = 12345;
	struct ed_buf b;
	memset(&b, 0, sizeof(b));
	b.b_flags = ED_B_WRITE | ED_B_FUA;
	b.b_blkno = S + 1;
	b.b_bcount = 7 * SECT;
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b, NULL, w, 7 * SECT, NULL, 0, &res), 0);
	CHECK_EQ(h_wait(&res), 0);
	CHECK(on_medium(&f, S + 1, w, 7));

	/* Bad input: FUA on a read, no protector, no such unit. */
	b.b_flags = ED_B_READ | ED_B_FUA;
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_IO, &p, &b, NULL, w, 7 * SECT, NULL, 0, &res), ED_E_ARG);
	CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_FLUSH, NULL, NULL, NULL, NULL, 0, NULL, 0, NULL), ED_E_ARG);
	struct ed_protector nounit = p;
	nounit.unit = 5;
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_FLUSH, &nounit), ED_E_UNIT);
	fx_check_live(&f);
	fx_free(&f);
}

/* ED_OP_DROP_CACHE: clean, idle entries held by nobody else go (the
 * caller's own holds with them); another client's and dirty ones stay.
 * The result counts what stayed, stuff->one what of it is only busy. */
static void test_drop_cache(void)
{
	struct fx f;
	fx_new(&f, D, HD_SYNC, NULL, 13);
	uint64_t S = data_start(&f) + 10;
	static uint8_t w[2 * SECT], r[2 * SECT];
	fill(w, sizeof(w), 21);
	struct ed_protector e[4];
	for (int i = 0; i < 4; i++) {
		e[i] = h_ext(0, S + 4 * (uint64_t)i, 3 * SECT, RC, WC);
		struct ed_client *c = i == 2 ? &f.b : &f.a;
		CHECK_EQ(op(&f, c, ED_OP_EXTENT_ALLOCATE, &e[i], NULL), 0);
		if (i < 3)
			CHECK_EQ(h_sync(&f.h, f.ed, c, ED_OP_EXTENT_WRITE, &e[i]), 0);
	}
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &e[0], 1, S + 1, w, 2 * SECT), 0);
	struct ed_protector x = h_xn(0, S + 40, 0, 120, RC, WC);
	CHECK_EQ(op(&f, &f.a, ED_OP_EXONODE_ALLOCATE, &x, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	h_settle();

	/* a's clean extents and exonode block go; b's stays, e[3] is dirty. */
	struct ed_protector unit = h_ext(0, 0, 0, BAD, BAD);
	struct ed_operation st = stuff(99, 0, 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_DROP_CACHE, &unit, &st), 2);
	CHECK_EQ(st.one, 0);                /* neither is busy: they will not go by themselves */
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[0], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[1], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &x, NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_IN_CACHE, &e[2], NULL), ED_IC_CACHED | ED_IC_HELD | ED_IC_COMMITTED);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[3], NULL), ED_IC_CACHED | ED_IC_DIRTY | ED_IC_HELD);

	/* Once b lets go of its entry, a's drop takes it too. */
	CHECK_EQ(op(&f, &f.b, ED_OP_MARK_REPLACEMENT, &e[2], NULL), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_DROP_CACHE, &unit, NULL), 1);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &e[2], NULL), 0);

	/* Dropped entries come back from the disk intact. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &e[0]), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &e[0], 0, S + 1, r, 2 * SECT), 0);
	CHECK(memcmp(r, w, sizeof(r)) == 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ, &x), 0);
	CHECK_EQ(op(&f, &f.a, ED_OP_IN_CACHE, &x, NULL), ED_IC_CACHED | ED_IC_HELD | ED_IC_COMMITTED |
	         ED_IC_EXONODE);

	/* Written back, the last one goes as well; an empty cache stays empty. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &e[3]), 0);
	h_settle();
	CHECK_EQ(op(&f, &f.a, ED_OP_DROP_CACHE, &unit, NULL), 0);
	CHECK_EQ(op(&f, &f.b, ED_OP_DROP_CACHE, &unit, NULL), 0);

	/* Bad input. */
	CHECK_EQ(op(&f, &f.a, ED_OP_DROP_CACHE, NULL, NULL), ED_E_ARG);
	struct ed_protector nounit = unit;
	nounit.unit = 5;
	CHECK_EQ(op(&f, &f.a, ED_OP_DROP_CACHE, &nounit, NULL), ED_E_UNIT);
	fx_check_live(&f);
	fx_free(&f);
}

/* The live checker waits for a checkpoint and a log write under way by
 * sleeping (the kernel's env.sleep: other processes run), not by spinning
 * in env.wait, and the completions that end them wake it. */
static void test_check_sleeps(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 14);
	uint64_t S = data_start(&f) + 10;
	fx_forget(&f);
	h_use_sleep(&f.h);
	CHECK_EQ(fx_boot(&f), 0);
	for (int round = 0; round < 8; round++) {
		struct ed_protector p = h_ext(0, S + 8 * (uint64_t)round, 4 * SECT, RC, WC);
		struct ed_protector unit = h_ext(0, 0, 0, RC, WC);
		CHECK_EQ(op(&f, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
		int32_t wres = 1, cres = 1;
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p, NULL, NULL, NULL, 0, NULL, 0, &wres), 0);
		if (round % 2 == 0)
			CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_CHECKPOINT, &unit, NULL, NULL, NULL, 0, NULL, 0,
			               &cres), 0);
		long sleeps = f.h.sleeps;
		struct ed_check_stats st;
		CHECK_EQ(ed_check_live(f.ed, 0, fx_report, &f, &st), 0);
		CHECK_EQ(st.violations, 0);
		CHECK(f.h.sleeps > sleeps);          /* it had to wait, and did so asleep */
		CHECK_EQ(h_wait(&wres), 0);
		if (round % 2 == 0)
			CHECK_EQ(h_wait(&cres), 0);
	}
	fx_check_live(&f);
	fx_free(&f);
}

int main(void)
{
	RC = h_cap(0x1111, 0xaaaa);
	WC = h_cap(0x2222, 0xbbbb);
	BAD = h_cap(0x3333, 0xcccc);
	test_extents();
	test_cache_ops();
	test_exonodes();
	test_remove_range();
	test_descendants();
	test_proxies();
	test_maps();
	test_cache_pressure();
	test_share();
	test_async();
	test_bounce();
	test_request_counts();
	test_flush();
	test_drop_cache();
	test_check_sleeps();
	printf("test_ed_ops: ok\n");
	return 0;
}
