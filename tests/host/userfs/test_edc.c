/*
 * test_edc.c - the exodisk client library over the host transport: typed
 * wrappers against the core's answers, result words, wait-any/all, batches
 * that split large transfers and keep many requests in flight, the
 * free-map view, the errno mapping, and two processes kept apart.
 */
#include <errno.h>
#include <string.h>
#include "libos/edc_host.h"
#include "tests/host/exodisk/edfixture.h"

static struct ed_cap cap(uint64_t a) { return h_cap(a, a * 31 + 7); }

/* Wrappers: allocate an exonode, add extents, data, read it back, map it. */
static void test_wrappers(struct fx *f, struct edc *c)
{
	struct ed_cap rc = cap(1), wc = cap(2);
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(c, f->unit, &fm), 0);
	CHECK(fm.nsectors == f->hd.nsectors);
	uint64_t blk = edc_fm_find(&fm, 0, 4, 8);
	CHECK(blk != UINT64_MAX);
	struct ed_protector p = edc_prot_xn(f->unit, blk, 0, &rc, &wc);
	p.length = 256;
	CHECK_EQ(edc_xn_alloc(c, &p), 0);
	CHECK(edc_fm_test(&fm, blk));
	CHECK_EQ(edc_xn_alloc(c, &p), ED_E_SLOT);          /* slot taken */

	uint64_t data = edc_fm_find(&fm, blk, 64, 8);
	CHECK(data != UINT64_MAX && data > blk);
	CHECK_EQ(edc_xn_add_extent(c, &p, 5, data, 16 * 512), 5);
	CHECK_EQ(edc_xn_add_extent(c, &p, -1, data + 16, 16 * 512), 0);   /* first free entry */
	CHECK_EQ(edc_xn_add_extent(c, &p, -1, data + 8, 512), ED_E_ALLOCATED);
	CHECK_EQ(edc_xn_combine(c, &p, 5, 0), 0);
	CHECK_EQ(edc_xn_split(c, &p, 5, 8 * 512, 9), 9);
	uint64_t meta[3] = { 11, 22, 33 };
	CHECK_EQ(edc_xn_add_data(c, &p, 1, meta, sizeof meta), 1);
	uint64_t back[3] = { 0, 0, 0 };
	CHECK_EQ(edc_xn_read_data(c, &p, 1, back, sizeof back), (long)sizeof back);
	CHECK(memcmp(meta, back, sizeof meta) == 0);

	/* The map shows the entries and data, in entry order. */
	int64_t addr = edc_xn_map(c, &p);
	CHECK(addr > 0);
	const struct ed_xnmap_hdr *mh = (const void *)(uintptr_t)addr;
	CHECK(mh->magic == ED_XNMAP_MAGIC && mh->state == ED_XNMAP_LIVE);
	CHECK_EQ(mh->nent, 3);
	const struct ed_xnmap_ent *ent = (const void *)(mh + 1);
	CHECK(ent[0].type == ED_ENT_DATA && ent[0].idx == 1 && ent[0].len == sizeof meta);
	CHECK(memcmp((const uint8_t *)mh + ent[0].a, meta, sizeof meta) == 0);
	CHECK(ent[1].type == ED_ENT_EXTENT && ent[1].idx == 5 && ent[1].a == data && ent[1].b == 8);
	CHECK(ent[2].type == ED_ENT_EXTENT && ent[2].idx == 9 && ent[2].a == data + 8 && ent[2].b == 24);
	CHECK_EQ(edc_xn_unmap(c, &p, (uint64_t)addr), 0);

	/* Data through the extents, synchronously and in a batch. */
	static uint8_t wbuf[32 * 512], rbuf[32 * 512];
	for (size_t i = 0; i < sizeof wbuf; i++)
		wbuf[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ(edc_write(c, &p, data, wbuf, sizeof wbuf), 0);
	CHECK_EQ(edc_read(c, &p, data, rbuf, sizeof rbuf), 0);
	CHECK(memcmp(wbuf, rbuf, sizeof wbuf) == 0);
	/* Outside the exonode: refused, and the word says so too. */
	volatile int32_t w;
	CHECK_EQ(edc_io(c, &p, 0, data + 40, rbuf, 512, &w), ED_E_RANGE);
	CHECK_EQ(w, ED_E_RANGE);
	/* Wrong capability. */
	struct ed_protector bad = p;
	bad.rc = cap(99);
	CHECK_EQ(edc_read(c, &bad, data, rbuf, 512), ED_E_CAP);
	CHECK_EQ(edc_errno(ED_E_CAP), EACCES);

	/* Write back, with a barrier through the transport's flush. */
	CHECK_EQ(edc_xn_write_sync(c, &p), 0);
	CHECK_EQ(edc_xn_write_sync(c, &p), ED_E_CLEAN);
	CHECK_EQ(edc_flush(c, f->unit), 0);
	int64_t ic = edc_in_cache(c, &p);
	CHECK((ic & ED_IC_CACHED) && (ic & ED_IC_COMMITTED) && (ic & ED_IC_EXONODE) && !(ic & ED_IC_DIRTY));

	/* Remove everything again. */
	CHECK_EQ(edc_xn_remove(c, &p, 5), 0);
	CHECK_EQ(edc_xn_remove(c, &p, 9), 0);
	CHECK_EQ(edc_xn_dealloc(c, &p), 0);
	CHECK_EQ(edc_xn_write_sync(c, &p), 0);
	CHECK(!edc_fm_test(&fm, data));
	CHECK(!edc_fm_test(&fm, blk));
}

/* Self-protected extents, proxies, descendants' capabilities, and the
 * small operations. */
static void test_other_ops(struct fx *f, struct edc *c)
{
	struct ed_cap rc = cap(11), wc = cap(12);
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(c, f->unit, &fm), 0);
	uint64_t s = edc_fm_find(&fm, 0, 64, 8);
	struct ed_protector e = edc_prot_extent(f->unit, s, &rc, &wc);
	e.length = 16 * 512;
	CHECK_EQ(edc_extent_alloc(c, &e), 0);
	CHECK_EQ(edc_extent_grow(c, &e, 8 * 512), 0);
	CHECK(edc_fm_test(&fm, s + 23) && !edc_fm_test(&fm, s + 24));
	CHECK_EQ(edc_extent_shrink(c, &e, 4 * 512), 0);
	CHECK_EQ(edc_extent_write_sync(c, &e), 0);
	CHECK(!edc_fm_test(&fm, s + 20));
	/* The header's bytes in the first sector read as zero. */
	static uint8_t buf[2048], back[2048];
	memset(buf, 0x77, sizeof buf);
	CHECK_EQ(edc_write(c, &e, s, buf, sizeof buf), 0);
	CHECK_EQ(edc_read(c, &e, s, back, sizeof back), 0);
	CHECK(back[0] == 0 && back[ED_EXT_HDR_BYTES - 1] == 0 && back[ED_EXT_HDR_BYTES] == 0x77 &&
	      back[sizeof back - 1] == 0x77);
	CHECK_EQ(edc_mark_replacement(c, &e), 0);
	CHECK_EQ(edc_extent_read_sync(c, &e), 0);
	CHECK_EQ(edc_pending(c), 0);

	/* A proxy for two sectors of it, read-only, with its own capabilities. */
	struct ed_cap prc = cap(13), pwc = cap(14);
	struct ed_range r = { s + 2, 2 };
	int64_t id = edc_xn_proxy(c, &e, &r, 1, ED_PROXY_READ, &prc, &pwc);
	CHECK(id >= 0);
	struct ed_protector px = edc_prot_extent(f->unit, (uint64_t)id, &prc, &pwc);
	px.kind = ED_PK_PROXY;
	CHECK_EQ(edc_read(c, &px, s + 2, back, 1024), 0);
	CHECK(back[0] == 0x77);
	CHECK_EQ(edc_read(c, &px, s + 4, back, 512), ED_E_RANGE);    /* outside its ranges */
	CHECK_EQ(edc_write(c, &px, s + 2, buf, 512), ED_E_CAP);      /* no write right */
	CHECK_EQ(edc_extent_dealloc(c, &e), 0);
	CHECK_EQ(edc_extent_write_sync(c, &e), 0);
	CHECK(!edc_fm_test(&fm, s));

	/* A descendant: its capabilities, discovered through the parent's. */
	uint64_t b = edc_fm_find(&fm, 0, 1, 8), cb = edc_fm_find(&fm, b + 8, 1, 8);
	struct ed_protector p = edc_prot_xn(f->unit, b, 0, &rc, &wc);
	p.length = 256;
	CHECK_EQ(edc_xn_alloc(c, &p), 0);
	struct ed_cap crc = cap(15), cwc = cap(16);
	CHECK_EQ(edc_xn_add_exonode(c, &p, 3, cb, 0, 128, &crc, &cwc), 3);
	struct ed_cap grc, gwc;
	CHECK_EQ(edc_xn_cap_discover(c, &p, 3, &grc, &gwc), 3);
	CHECK(memcmp(&grc, &crc, sizeof grc) == 0 && memcmp(&gwc, &cwc, sizeof gwc) == 0);
	int64_t ic = edc_in_cache(c, &p);
	CHECK((ic & ED_IC_CACHED) && (ic & ED_IC_DIRTY) && !(ic & ED_IC_COMMITTED));
	CHECK_EQ(edc_xn_remove(c, &p, 3), 0);                      /* frees the child */
	CHECK_EQ(edc_xn_dealloc(c, &p), 0);
	CHECK(!edc_fm_test(&fm, b) && !edc_fm_test(&fm, cb));
}

/* Many requests in flight; waiting for any and for all. */
static void test_async(struct fx *f, struct edc *c)
{
	struct ed_cap rc = cap(3), wc = cap(4);
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(c, f->unit, &fm), 0);
	uint64_t blk = edc_fm_find(&fm, 0, 1, 8);
	struct ed_protector p = edc_prot_xn(f->unit, blk, 0, &rc, &wc);
	p.length = 128;
	CHECK_EQ(edc_xn_alloc(c, &p), 0);
	/* A 3 MiB extent: larger than one request may carry. */
	uint64_t n = 3 * 2048 + 16;
	uint64_t data = edc_fm_find(&fm, blk, n, 8);
	CHECK(data != UINT64_MAX);
	CHECK_EQ(edc_xn_add_extent(c, &p, -1, data, n * 512), 0);
	uint8_t *big = malloc(n * 512), *back = malloc(n * 512);
	for (uint64_t i = 0; i < n * 512; i++)
		big[i] = (uint8_t)(i ^ (i >> 9));
	struct edc_slot slots[3];
	struct edc_batch b;
	edc_batch_init(&b, c, slots, 3);
	CHECK_EQ(edc_batch_io(&b, &p, 1, data, big, n * 512), 0);
	CHECK_EQ(edc_batch_wait(&b), 0);
	CHECK(b.submitted == 4);          /* 3 x 1 MiB + the rest */
	memset(back, 0, n * 512);
	CHECK_EQ(edc_read(c, &p, data, back, n * 512), 0);
	CHECK(memcmp(big, back, n * 512) == 0);

	/* Sixteen one-sector reads at once; any, then all. */
	volatile int32_t words[16];
	volatile int32_t *wp[16];
	for (int i = 0; i < 16; i++) {
		wp[i] = &words[i];
		CHECK_EQ(edc_io(c, &p, 0, data + (uint64_t)i * 100, back + i * 512, 512, &words[i]), 0);
	}
	int k = edc_wait_any(c, wp, 16);
	CHECK(k >= 0 && k < 16 && words[k] == 0);
	CHECK_EQ(edc_wait_all(c, wp, 16), 0);
	for (int i = 0; i < 16; i++)
		CHECK(memcmp(back + i * 512, big + (uint64_t)i * 100 * 512, 512) == 0);
	CHECK_EQ(edc_wait_any(c, wp, 0), -1);
	/* A refusal is returned at once and does not spoil the batch; an
	 * error at completion is reported by the wait. */
	edc_batch_init(&b, c, slots, 3);
	CHECK_EQ(edc_batch_io(&b, &p, 0, data, back, 512), 0);
	CHECK_EQ(edc_batch_io(&b, &p, 0, data + n, back, 512), ED_E_RANGE);
	CHECK_EQ(edc_batch_wait(&b), 0);
	f->hd.fail_countdown = 0;
	CHECK_EQ(edc_batch_io(&b, &p, 0, data, back, 512), 0);
	CHECK_EQ(edc_batch_io(&b, &p, 0, data + 8, back, 512), 0);
	CHECK_EQ(edc_batch_wait(&b), BLK_E_IO);
	CHECK_EQ(edc_batch_wait(&b), 0);
	free(big);
	free(back);
	CHECK_EQ(edc_xn_remove(c, &p, 0), 0);
	CHECK_EQ(edc_xn_dealloc(c, &p), 0);
}

/* The free map view against the core's own map. */
static void test_freemap(struct fx *f, struct edc *c)
{
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(c, f->unit, &fm), 0);
	uint64_t free_count = 0;
	for (uint64_t s = 0; s < fm.nsectors; s++) {
		CHECK_EQ(edc_fm_test(&fm, s), fx_allocated(f, s));
		free_count += !fx_allocated(f, s);
	}
	/* What applications can have: the free sectors less the exodisk's reserve. */
	struct ed_unit_info u;
	CHECK_EQ(edc_unit_info(c, f->unit, &u), (int64_t)sizeof u);
	CHECK_EQ(u.nsectors - u.allocated, free_count);
	CHECK_EQ(edc_fm_count_free(&fm), free_count - u.reserved);
	uint64_t first = edc_fm_find(&fm, 0, 1, 1);
	CHECK(first != UINT64_MAX && !fx_allocated(f, first) && fx_allocated(f, first - 1));
	/* Wrap-around: a goal past every free run finds the first. */
	CHECK_EQ(edc_fm_find(&fm, fm.nsectors - 1, 8, 8), (first + 7) / 8 * 8);
	CHECK_EQ(edc_fm_find(&fm, 0, fm.nsectors, 1), UINT64_MAX);
	CHECK_EQ(edc_fm_run(&fm, first, 100), 100);
	CHECK_EQ(edc_fm_run(&fm, 0, 100), 0);
	/* The next allocated sector, against the core's map, from every
	 * sector of the first few pages of the map and a few past the end. */
	uint64_t next = fm.nsectors;
	for (uint64_t s = fm.nsectors; s-- > 0; ) {
		if (fx_allocated(f, s))
			next = s;
		if (s < 3 * 32768 || s % 997 == 0)
			CHECK_EQ(edc_fm_next_used(&fm, s), next);
	}
	CHECK_EQ(edc_fm_next_used(&fm, fm.nsectors + 5), fm.nsectors);
}

/* ED_OP_CHECKPOINT: the log is empty and the checkpoint counted when it
 * returns; two asked for at once both finish, the second by a checkpoint
 * of its own. */
static void test_checkpoint(struct fx *f, struct edc *c)
{
	struct ed_cap rc = cap(21), wc = cap(22);
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(c, f->unit, &fm), 0);
	struct ed_protector e = edc_prot_extent(f->unit, edc_fm_find(&fm, 0, 8, 8), &rc, &wc);
	e.length = 8 * 512;
	CHECK_EQ(edc_extent_alloc(c, &e), 0);
	CHECK_EQ(edc_extent_write_sync(c, &e), 0);
	struct ed_unit_info u0, u1;
	CHECK_EQ(edc_unit_info(c, f->unit, &u0), (int64_t)sizeof u0);
	CHECK(u0.log_used > 0);
	CHECK_EQ(edc_checkpoint(c, f->unit), 0);
	CHECK_EQ(edc_unit_info(c, f->unit, &u1), (int64_t)sizeof u1);
	/* Empty but for one carry record: the extent's sectors were never
	 * written, and stay unwritten across the checkpoint (docs/exodisk.md
	 * section 10, "Remanence"). */
	CHECK_EQ(u1.log_used, 1);
	CHECK(u1.checkpoints == u0.checkpoints + 1 && u1.ckpt_sectors > u0.ckpt_sectors);
	CHECK_EQ(u1.format_sectors, u0.format_sectors);

	struct ed_protector p;
	memset(&p, 0, sizeof p);
	p.unit = (uint16_t)f->unit;
	p.xn_entry = -1;
	volatile int32_t w1 = ED_PENDING, w2 = ED_PENDING;
	struct ed_buf b1 = { .b_dev = p.unit, .b_resptr = (uint64_t)(uintptr_t)&w1 };
	struct ed_buf b2 = { .b_dev = p.unit, .b_resptr = (uint64_t)(uintptr_t)&w2 };
	CHECK_EQ(c->t->request(c->ctx, ED_OP_CHECKPOINT, &p, &b1, NULL), 0);
	CHECK_EQ(c->t->request(c->ctx, ED_OP_CHECKPOINT, &p, &b2, NULL), 0);
	CHECK_EQ(edc_wait(c, &w1), 0);
	CHECK_EQ(edc_wait(c, &w2), 0);
	CHECK_EQ(edc_unit_info(c, f->unit, &u0), (int64_t)sizeof u0);
	CHECK(u0.checkpoints >= u1.checkpoints + 1);
	CHECK_EQ(edc_checkpoint(c, 9), ED_E_UNIT);
	CHECK_EQ(edc_extent_dealloc(c, &e), 0);
	CHECK_EQ(edc_extent_write_sync(c, &e), 0);
}

/* Two processes: one cannot use the other's exonode without its
 * capabilities; the exit of one undoes what it never wrote back. */
static void test_two_processes(struct fx *f, struct edc_host *a, struct edc_host *b)
{
	struct ed_cap rc = cap(5), wc = cap(6);
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(&a->edc, f->unit, &fm), 0);
	uint64_t blk = edc_fm_find(&fm, 0, 1, 8);
	struct ed_protector p = edc_prot_xn(f->unit, blk, 0, &rc, &wc);
	p.length = 128;
	CHECK_EQ(edc_xn_alloc(&a->edc, &p), 0);
	uint64_t data = edc_fm_find(&fm, blk + 8, 8, 8);
	CHECK_EQ(edc_xn_add_extent(&a->edc, &p, -1, data, 8 * 512), 0);
	CHECK_EQ(edc_xn_write_sync(&a->edc, &p), 0);
	uint8_t buf[512];
	struct ed_protector guess = p;
	guess.rc = cap(7);
	guess.wc = cap(8);
	CHECK_EQ(edc_read(&b->edc, &guess, data, buf, 512), ED_E_CAP);
	CHECK_EQ(edc_write(&b->edc, &guess, data, buf, 512), ED_E_CAP);
	CHECK_EQ(edc_xn_add_extent(&b->edc, &guess, -1, data + 64, 512), ED_E_CAP);
	CHECK_EQ(edc_read(&b->edc, &p, data, buf, 512), 0);      /* with them: fine */

	/* A never-written allocation vanishes when its process exits. */
	uint64_t blk2 = edc_fm_find(&fm, data + 8, 1, 8);
	struct ed_protector q = edc_prot_xn(f->unit, blk2, 0, &rc, &wc);
	q.length = 128;
	CHECK_EQ(edc_xn_alloc(&b->edc, &q), 0);
	CHECK(edc_fm_test(&fm, blk2));
	edc_host_exit(b);
	CHECK(!edc_fm_test(&fm, blk2));
}

int main(void)
{
	struct fx f;
	for (int mode = HD_SYNC; mode <= HD_POLLED; mode++) {
		fx_new(&f, 32768, mode, NULL, 11 + (uint64_t)mode);
		struct edc_host a, b;
		edc_host_init(&a, &f.h, f.ed);
		edc_host_init(&b, &f.h, f.ed);
		test_wrappers(&f, &a.edc);
		test_async(&f, &a.edc);
		test_other_ops(&f, &a.edc);
		test_freemap(&f, &a.edc);
		test_checkpoint(&f, &a.edc);
		test_two_processes(&f, &a, &b);
		CHECK(a.edc.nrequests > 0 && a.nflushes == 1);
		edc_host_exit(&a);
		fx_check_live(&f);
		fx_free(&f);
	}
	printf("test_edc: ok\n");
	return 0;
}
