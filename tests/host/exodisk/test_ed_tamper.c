/*
 * test_ed_tamper.c - someone with the raw disk tries to fool the exodisk.
 *
 * Each attack edits the disk image directly (as a machine without the
 * exodisk could) and then boots:
 *   - a changed byte in a header or exonode block: ED_E_BADMAC;
 *   - a valid header copied to another bound sector, or to another disk
 *     formatted with the same key: ED_E_BADMAC (the MAC names disk and sector);
 *   - an older version of a block written back over the current one:
 *     ED_E_STALE (the binding table knows the current version);
 *   - a header forged at a sector that is not bound: ED_E_NOTBOUND;
 *   - the wrong boot key, damaged superblocks, tree pages or log: the mount
 *     fails with an error or falls back to the previous checkpoint; a
 *     damaged page of the binding tree, read only when a lookup needs it,
 *     fails that lookup (ED_E_BADMAC) and nothing else; an old version of a
 *     tree page put back where it was is rejected too (its MAC is in the
 *     page above);
 * and none of them ever yields data, or a crash.  A fuzz loop then flips
 * random bytes all over the metadata and boots, checks, and reads: errors
 * are fine, anything ASan or UBSan would notice is not.
 */
#include "tests/host/exodisk/edfixture.h"
#include "kernel/exodisk/ondisk.h"

#define D    8192
#define SECT 512

static struct ed_cap RC, WC;

static int64_t op(struct fx *f, int o, struct ed_protector *p, struct ed_operation *st)
{
	return h_req(&f->h, f->ed, &f->a, o, p, NULL, st, NULL, 0, NULL, 0, NULL);
}

static uint8_t *medium(struct fx *f, uint64_t s)
{
	return f->hd.medium + s * SECT;
}

static uint64_t data_start(struct fx *f)
{
	struct ed_check_stats st;
	CHECK_EQ(ed_check_live(f->ed, f->unit, NULL, NULL, &st), 0);
	return st.data_start;
}

/* Shut down and reboot, so that the homes are the only copies: the
 * shutdown's checkpoint emptied the log (otherwise the next mount would
 * repair a damaged home from the log's copy). */
static void shutdown_unit(struct fx *f, int unit)
{
	struct ed_protector any = h_ext(unit, 0, 0, RC, WC);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_SHUTDOWN, &any), 0);
}

static void settle_reboot(struct fx *f)
{
	shutdown_unit(f, 0);
	fx_forget(f);
	CHECK_EQ(fx_boot(f), 0);
}

/* Is needle anywhere in the n bytes at p? */
static bool contains(const uint8_t *p, size_t n, const void *needle, size_t k)
{
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(p + i, needle, k) == 0)
			return true;
	return false;
}

static void test_tamper_replay_transplant(void)
{
	struct fx f;
	fx_new(&f, D, HD_POLLED, NULL, 21);
	uint64_t ds = data_start(&f);
	uint64_t A = ds + 10, B = ds + 100, X = ds + 200;
	struct ed_protector a = h_ext(0, A, 8 * SECT, RC, WC);
	struct ed_protector b = h_ext(0, B, 8 * SECT, RC, WC);     /* same capabilities */
	struct ed_protector x = h_xn(0, X, 0, 96, RC, WC);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &a, NULL), 0);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &b, NULL), 0);
	CHECK_EQ(op(&f, ED_OP_EXONODE_ALLOCATE, &x, NULL), 0);
	struct ed_operation st = { .one = X + 10, .two = 8 * SECT };
	CHECK_EQ(op(&f, ED_OP_EXONODE_ADD_EXTENT, &x, &st), 0);
	static uint8_t buf[8 * SECT], r[8 * SECT];
	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &a, 1, A, buf, sizeof(buf)), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &a), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &b), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	settle_reboot(&f);

	/* Capabilities are not readable on disk. */
	CHECK(!contains(medium(&f, A), SECT, &RC, sizeof(RC)));
	CHECK(!contains(medium(&f, A), SECT, &WC, sizeof(WC)));
	CHECK(!contains(medium(&f, X), SECT, &RC, sizeof(RC)));

	/* Keep old versions for the replay below. */
	static uint8_t oldA[SECT], oldX[SECT], savedB[SECT];
	memcpy(oldA, medium(&f, A), SECT);
	memcpy(oldX, medium(&f, X), SECT);
	memcpy(savedB, medium(&f, B), SECT);

	/* 1. Tampering: flip one bit of a's header (say, to make it longer). */
	struct ed_exthdr *h = (struct ed_exthdr *)medium(&f, A);
	h->nsectors += 100;
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	memset(r, 0xcc, sizeof(r));
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), ED_E_BADMAC);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &a, 0, A, r, sizeof(r)), ED_E_BADMAC);
	for (size_t i = 0; i < sizeof(r); i++)
		CHECK_EQ(r[i], 0xcc);                     /* no data went out */
	struct ed_check_stats cs;
	fx_forget(&f);
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), 0);
	CHECK(cs.violations > 0);
	h->nsectors -= 100;
	ed_destroy(f.ed);
	blk_reset();
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &a, 0, A, r, sizeof(r)), 0);     /* repaired: fine again */
	/* The application's part of that sector is not metadata: changing it
	 * on disk is just changing data. */
	medium(&f, A)[300] ^= 1;
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), 0);

	/* 2. Transplant: a's header over b's (same capabilities, same key). */
	memcpy(medium(&f, B), medium(&f, A), SECT);
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), ED_E_BADMAC);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &b, 0, B, r, SECT), ED_E_BADMAC);
	memcpy(medium(&f, B), savedB, SECT);
	/* ... or to a sector that holds no binding: not metadata at all. */
	memcpy(medium(&f, A + 50), medium(&f, A), SECT);
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	struct ed_protector forged = h_ext(0, A + 50, 0, RC, WC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &forged), ED_E_NOTBOUND);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &forged, 0, A + 50, r, SECT), ED_E_NOTBOUND);

	/* 3. Replay: a grows and is written back; then its old header returns. */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), 0);
	st = (struct ed_operation){ .one = 4 * SECT };
	CHECK_EQ(op(&f, ED_OP_EXTENT_GROW, &a, &st), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &a), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ, &x), 0);
	x.xn_entry = 0;
	CHECK_EQ(op(&f, ED_OP_EXONODE_REMOVE_ENTRY, &x, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	settle_reboot(&f);
	CHECK(memcmp(medium(&f, A), oldA, ED_EXT_HDR_BYTES) != 0);
	memcpy(medium(&f, A), oldA, SECT);
	memcpy(medium(&f, X), oldX, SECT);   /* the old block still lists X+10.. */
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), ED_E_STALE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &a, 0, A, r, SECT), ED_E_STALE);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_READ, &x), ED_E_STALE);
	/* ... and the sectors the old exonode listed were free: take them. */
	struct ed_protector thief = h_ext(0, X + 10, 8 * SECT, RC, WC);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &thief, NULL), 0);
	fx_free(&f);
}

/* The trees' pages: a binding-tree leaf damaged or replaced by an older
 * version (a Merkle tree: the MAC is in the pointer to it) fails the
 * lookups that need it, the rest works; a free-map page damaged refuses
 * the mount, or the previous checkpoint is used. */
struct pages { uint64_t s[256]; int n; };
static void collect(void *arg, uint64_t sector)
{
	struct pages *p = arg;
	if (p->n < 256)
		p->s[p->n++] = sector;
}

static void test_tree_pages(void)
{
	struct fx f;
	struct ed_config cfg = { .meta_pages = 4 };
	fx_new(&f, 16384, HD_SYNC, &cfg, 25);
	uint64_t ds = data_start(&f);
	/* Enough bindings for a tree of several leaves. */
	int n = 1200;
	for (int i = 0; i < n; i++) {
		struct ed_protector p = h_ext(0, ds + 8 + 4 * (uint64_t)i, SECT, RC, WC);
		CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
		if (i % 64 == 63)
			CHECK_EQ(op(&f, ED_OP_MARK_REPLACEMENT, &p, NULL), 0);
	}
	shutdown_unit(&f, 0);
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	struct pages pg = { .n = 0 };
	CHECK_EQ(ed_check_meta_pages(f.ed, 0, collect, &pg), 0);
	CHECK(pg.n >= 5);
	/* Which are binding-tree leaves: a page whose header says level 0. */
	uint64_t leaf = 0;
	for (int i = 0; i < pg.n && leaf == 0; i++) {
		const struct ed_bthdr *h = (const struct ed_bthdr *)medium(&f, pg.s[i]);
		if (h->magic == ED_BT_MAGIC && h->level == 0 && h->n > 0)
			leaf = pg.s[i];
	}
	CHECK(leaf != 0);
	const struct ed_btrec *rec = (const struct ed_btrec *)(medium(&f, leaf) + sizeof(struct ed_bthdr));
	uint64_t victim = rec[0].key & ED_BT_SECTOR_MASK;
	static uint8_t saved[8 * SECT];
	memcpy(saved, medium(&f, leaf), sizeof saved);
	fx_forget(&f);
	/* A changed byte in the leaf: its bindings fail, others do not. */
	medium(&f, leaf)[100] ^= 0x10;
	CHECK_EQ(fx_boot(&f), 0);
	struct ed_protector v = h_ext(0, victim, 0, RC, WC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &v), ED_E_BADMAC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &v), ED_E_BADMAC);   /* read again, same */
	int good = 0;
	for (int i = 0; i < n; i += 97) {
		struct ed_protector p = h_ext(0, ds + 8 + 4 * (uint64_t)i, 0, RC, WC);
		good += h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &p) == 0;
	}
	CHECK(good >= 9);
	struct ed_check_stats cs;
	fx_forget(&f);
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), 0);
	CHECK(cs.violations > 0);
	ed_destroy(f.ed);
	blk_reset();
	/* An older, authentic version of the leaf where it was: the leaf
	 * changes (a deallocation) and is checkpointed to a new place; the old
	 * bytes are put back at the new place. */
	memcpy(medium(&f, leaf), saved, sizeof saved);
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &v), 0);
	CHECK_EQ(op(&f, ED_OP_EXTENT_DEALLOCATE, &v, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &v), 0);
	shutdown_unit(&f, 0);
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	pg.n = 0;
	CHECK_EQ(ed_check_meta_pages(f.ed, 0, collect, &pg), 0);
	uint64_t newleaf = 0;
	for (int i = 0; i < pg.n && newleaf == 0; i++) {
		const struct ed_bthdr *h = (const struct ed_bthdr *)medium(&f, pg.s[i]);
		const struct ed_btrec *r2 = (const struct ed_btrec *)(medium(&f, pg.s[i]) + sizeof(*h));
		if (h->magic == ED_BT_MAGIC && h->level == 0 && h->n > 0 && pg.s[i] != leaf &&
		    (r2[0].key & ED_BT_SECTOR_MASK) == (rec[1].key & ED_BT_SECTOR_MASK))
			newleaf = pg.s[i];
	}
	fx_forget(&f);
	CHECK(newleaf != 0);
	memcpy(medium(&f, newleaf), saved, sizeof saved);      /* it still names the victim */
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &v), ED_E_BADMAC);
	fx_forget(&f);
	/* A damaged free-map page (the root of its tree, or a leaf the
	 * superblock names itself): that checkpoint is refused; the mount uses
	 * the previous one, or fails - never trusts it. */
	struct ed_super *sa = (struct ed_super *)medium(&f, 0), *sb = (struct ed_super *)medium(&f, 8);
	struct ed_super *newer = sa->gen > sb->gen ? sa : sb;
	uint64_t fmpage = newer->fm_root.sector;
	for (uint32_t i = 0; i < newer->fm_nover && fmpage <= 1; i++)
		fmpage = newer->fm_over[i].ptr.sector;
	CHECK(fmpage > 1);
	medium(&f, fmpage)[200] ^= 1;
	int r = fx_boot(&f);
	CHECK(r == 0 || r == ED_E_BADMAC);
	if (r == 0)
		fx_check_live(&f);
	fx_free(&f);
}

/* Two disks, one key: a header moved from one to the other is rejected. */
static void test_other_disk(void)
{
	struct fx f;
	fx_new(&f, D, HD_SYNC, NULL, 22);
	struct hostdisk hd2;
	CHECK(hostdisk_init(&hd2, D, HD_SYNC, true, 99) == 1);
	CHECK_EQ(ed_format(f.ed, 1, NULL), 0);
	CHECK_EQ(ed_mount(f.ed, 1), 0);
	uint64_t A = data_start(&f) + 10;
	struct ed_protector a0 = h_ext(0, A, 4 * SECT, RC, WC), a1 = h_ext(1, A, 4 * SECT, RC, WC);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &a0, NULL), 0);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &a1, NULL), 0);
	struct ed_operation st = { .one = 4 * SECT };
	CHECK_EQ(op(&f, ED_OP_EXTENT_GROW, &a0, &st), 0);     /* disk 0's is longer */
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &a0), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &a1), 0);
	/* Shut both down, so both homes are the only copies. */
	shutdown_unit(&f, 0);
	shutdown_unit(&f, 1);
	fx_forget(&f);
	memcpy(hd2.medium + A * SECT, f.hd.medium + A * SECT, SECT);
	CHECK(hostdisk_reattach(&f.hd) == 0 && hostdisk_reattach(&hd2) == 1);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_mount(f.ed, 0), 0);
	CHECK_EQ(ed_mount(f.ed, 1), 0);
	fx_clients(&f);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a0), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a1), ED_E_BADMAC);
	/* A whole superblock from the other disk does not mount either (its
	 * snapshot is not there). */
	h_settle();
	fx_forget(&f);
	memcpy(hd2.medium, f.hd.medium, SECT);
	memcpy(hd2.medium + 8 * SECT, f.hd.medium + 8 * SECT, SECT);
	CHECK(hostdisk_reattach(&f.hd) == 0 && hostdisk_reattach(&hd2) == 1);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	fx_clients(&f);
	CHECK(ed_mount(f.ed, 1) < 0);
	CHECK_EQ(ed_mount(f.ed, 0), 0);
	hostdisk_free(&hd2);
	fx_free(&f);
}

static void test_keys_and_superblocks(void)
{
	struct fx f;
	fx_new(&f, D, HD_SYNC, NULL, 23);
	uint64_t A = data_start(&f) + 10;
	struct ed_protector a = h_ext(0, A, 4 * SECT, RC, WC);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &a, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &a), 0);
	fx_forget(&f);

	/* The wrong key: nothing authenticates. */
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, "not-the-right-k!");
	CHECK_EQ(ed_mount(f.ed, 0), ED_E_BADMAC);
	struct ed_check_stats cs;
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), ED_E_BADMAC);
	ed_destroy(f.ed);
	blk_reset();

	/* Damage the newer superblock: the older checkpoint and the log after
	 * it still give the same state. */
	CHECK_EQ(fx_boot(&f), 0);
	fx_forget(&f);
	struct ed_super *sa = (struct ed_super *)f.hd.medium;
	struct ed_super *sb = (struct ed_super *)(f.hd.medium + 8 * SECT);
	struct ed_super *newer = sa->gen > sb->gen ? sa : sb;
	newer->gen ^= 0x100;
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), 0);
	fx_check_live(&f);
	fx_forget(&f);
	/* Both gone: not an exodisk any more. */
	sa->magic ^= 1;
	sb->magic ^= 1;
	CHECK_EQ(fx_boot(&f), ED_E_FORMAT);
	ed_destroy(f.ed);
	blk_reset();
	f.ed = NULL;
	hostdisk_free(&f.hd);
}

/* ---- fuzzing ----------------------------------------------------------------------- */

static uint64_t fs_;
static uint64_t frnd(void)
{
	fs_ ^= fs_ >> 12;
	fs_ ^= fs_ << 25;
	fs_ ^= fs_ >> 27;
	return fs_ * 2685821657736338717ull;
}

/* The log sector holding the header of record seq, or 0. */
static uint64_t log_record(struct fx *f, uint64_t ds, uint64_t seq)
{
	for (uint64_t s = ED_LOG_FIRST; s < ds; s++) {
		const struct ed_loghdr *h = (const struct ed_loghdr *)medium(f, s);
		if (h->magic == ED_LOG_MAGIC && h->seq == seq && h->pos == s - ED_LOG_FIRST)
			return s;
	}
	return 0;
}

/* Issue 17 F6: a record damaged after it was durable, with records after
 * it, is reported (check and mount say which, and how much was lost), the
 * unit mounts as it was before it, and the next mount finds nothing wrong;
 * a damaged last record (a write that never completed) loses nothing. */
static void test_damaged_log(void)
{
	struct fx f;
	struct ed_format_opts fo = { .log_sectors = 128 };
	fx_new_fmt(&f, D, HD_SYNC, NULL, 31, &fo);
	uint64_t ds = data_start(&f);
	struct ed_protector x[6];
	for (int i = 0; i < 6; i++) {
		x[i] = h_ext(0, ds + 16 * (uint64_t)i, 8 * SECT, RC, WC);
		CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &x[i], NULL), 0);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &x[i]), 0);
	}
	h_settle();
	struct ed_unit_info u;
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	uint64_t first = 1;
	while (first < 100 && log_record(&f, ds, first) == 0)
		first++;
	uint64_t last = first;
	while (log_record(&f, ds, last + 1) != 0)
		last++;
	CHECK(last >= first + 5);
	fx_forget(&f);

	/* The last record torn: nothing after it, nothing reported. */
	static uint8_t saved[D * SECT];
	memcpy(saved, f.hd.medium, sizeof saved);
	medium(&f, log_record(&f, ds, last))[100] ^= 0x40;
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.lost_records, 0);
	CHECK_EQ(u.replayed, last - first);
	fx_forget(&f);

	/* A record in the middle damaged. */
	memcpy(f.hd.medium, saved, sizeof saved);
	uint64_t bad = first + 2, at = log_record(&f, ds, bad);
	medium(&f, at)[100] ^= 0x40;
	struct ed_check_stats cs;
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), 0);
	CHECK_EQ(cs.violations, 1);
	ed_destroy(f.ed);
	blk_reset();
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.lost_seq, bad);
	CHECK_EQ(u.lost_at, at);
	CHECK_EQ(u.lost_records, last - bad + 1);
	CHECK(u.lost_blocks >= last - bad);
	CHECK_EQ(u.replayed, bad - first);
	/* The extents of the lost records are gone, the earlier ones stay. */
	for (int i = 0; i < 6; i++) {
		bool kept = fx_allocated(&f, x[i].blkno);
		CHECK(i < 2 ? kept : !kept);
	}
	/* New work goes on, and the next boot finds the log whole. */
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &x[5], NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &x[5]), 0);
	h_settle();
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.lost_records, 0);
	CHECK(fx_allocated(&f, x[5].blkno) && !fx_allocated(&f, x[4].blkno));
	fx_check_live(&f);
	fx_free(&f);
}

/* Issue 17 item 3: the newest checkpoint damaged (a page of its trees, or
 * its superblock).  A mount falls back to the checkpoint before it and
 * replays the log from there; it must say that it did and what it cost,
 * and an offline check must count it as a violation.  (Before, both fell
 * back in silence and the check reported 0 violations.) */
static void test_damaged_checkpoint(void)
{
	struct fx f;
	struct ed_format_opts fo = { .log_sectors = 128 };
	fx_new_fmt(&f, D, HD_SYNC, NULL, 41, &fo);
	uint64_t ds = data_start(&f);
	struct ed_protector a = h_ext(0, ds + 16, 8 * SECT, RC, WC), b = h_ext(0, ds + 64, 8 * SECT, RC, WC);
	struct ed_protector any = h_ext(0, 0, 0, RC, WC);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &a, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &a), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_CHECKPOINT, &any), 0);   /* the older: a */
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &b, NULL), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &b), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_CHECKPOINT, &any), 0);   /* the newest: a and b */
	h_settle();
	fx_forget(&f);
	static uint8_t saved[D * SECT];
	memcpy(saved, f.hd.medium, sizeof saved);
	struct ed_super *sa = (struct ed_super *)medium(&f, 0), *sb = (struct ed_super *)medium(&f, 8);
	struct ed_super *newer = sa->gen > sb->gen ? sa : sb, *older = newer == sa ? sb : sa;
	uint64_t ngen = newer->gen, ogen = older->gen, page = newer->bt_root.sector;
	uint64_t nseq = newer->log_seq, nsb = newer == sa ? 0 : 8;
	CHECK(ngen == ogen + 1 && page > 1 && page != older->bt_root.sector);
	uint64_t brec = log_record(&f, ds, nseq - 1);     /* b's write-back */
	CHECK(brec != 0);

	/* 1. Its binding tree's root damaged; the log still holds b. */
	medium(&f, page)[300] ^= 0x10;
	struct ed_check_stats cs;
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), 0);
	CHECK_EQ(cs.violations, 1);
	ed_destroy(f.ed);
	blk_reset();
	CHECK_EQ(fx_boot(&f), 0);
	struct ed_unit_info u;
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.fell, 1);
	CHECK_EQ(u.fell_sb, nsb);
	CHECK_EQ(u.fell_at, page);
	CHECK_EQ(u.fell_gen, ngen);
	CHECK_EQ(u.fell_used_gen, ogen);
	CHECK_EQ(u.fell_lost, 0);
	CHECK_EQ(u.lost_records, 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), 0);
	fx_check_live(&f);
	/* The mount wrote a superblock in the damaged one's place: the next
	 * mount and check find nothing wrong. */
	fx_forget(&f);
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.fell, 0);
	fx_forget(&f);
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), 0);
	CHECK_EQ(cs.violations, 0);
	ed_destroy(f.ed);
	blk_reset();

	/* 2. The same, and b's log record damaged too: only the newest
	 * checkpoint still had b, so b is lost, and the mount counts it. */
	memcpy(f.hd.medium, saved, sizeof saved);
	medium(&f, page)[300] ^= 0x10;
	medium(&f, brec)[100] ^= 0x40;
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.fell, 1);
	CHECK_EQ(u.fell_lost, 1);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), ED_E_NOTBOUND);
	fx_check_live(&f);
	fx_forget(&f);

	/* 3. The newest superblock itself damaged: which one was newer cannot
	 * be told, and the check and mount say so. */
	memcpy(f.hd.medium, saved, sizeof saved);
	medium(&f, nsb)[40] ^= 0x01;
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), 0);
	CHECK_EQ(cs.violations, 1);
	ed_destroy(f.ed);
	blk_reset();
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.fell, 1);
	CHECK_EQ(u.fell_sb, nsb);
	CHECK_EQ(u.fell_gen, 0);
	CHECK_EQ(u.fell_used_gen, ogen);
	CHECK_EQ(u.fell_lost, UINT64_MAX);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), 0);
	fx_free(&f);
}

/* The disk both mount-error tests start from: extent a written back and
 * checkpointed, then extent b written back and checkpointed (so only the
 * newest checkpoint has b), shut down uncleanly: f's medium holds it and
 * nothing is mounted.  Returns the data area's first sector. */
static uint64_t two_checkpoints(struct fx *f, uint64_t seed, struct ed_protector *a,
                                struct ed_protector *b)
{
	struct ed_format_opts fo = { .log_sectors = 128 };
	fx_new_fmt(f, D, HD_SYNC, NULL, seed, &fo);
	uint64_t ds = data_start(f);
	*a = h_ext(0, ds + 16, 8 * SECT, RC, WC);
	*b = h_ext(0, ds + 64, 8 * SECT, RC, WC);
	struct ed_protector any = h_ext(0, 0, 0, RC, WC);
	for (int i = 0; i < 2; i++) {
		struct ed_protector *p = i == 0 ? a : b;
		CHECK_EQ(op(f, ED_OP_EXTENT_ALLOCATE, p, NULL), 0);
		CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, p), 0);
		CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_CHECKPOINT, &any), 0);
	}
	h_settle();
	fx_forget(f);
	return ds;
}

/* A mount that cannot load the newest checkpoint's trees for a reason
 * other than damage - out of memory, a failed read - must not fall back to
 * the older checkpoint: that mount writes a superblock over the newer one
 * and loses the log records only it covers (here b's, whose record is
 * damaged).  Every page allocation and every disk request of the mount is
 * failed in turn: the mount fails with that error or goes on without it,
 * never falls back, and the next clean boot has a and b. */
static void test_transient_mount_errors(void)
{
	struct fx f;
	struct ed_protector a, b;
	uint64_t ds = two_checkpoints(&f, 43, &a, &b);
	struct ed_super *sa = (struct ed_super *)medium(&f, 0), *sb = (struct ed_super *)medium(&f, 8);
	uint64_t nseq = sa->gen > sb->gen ? sa->log_seq : sb->log_seq;
	uint64_t brec = log_record(&f, ds, nseq - 1);
	CHECK(brec != 0);
	medium(&f, brec)[100] ^= 0x40;      /* only the newest checkpoint has b now */
	static uint8_t saved[D * SECT];
	memcpy(saved, f.hd.medium, sizeof saved);
	for (int kind = 0; kind < 2; kind++) {
		long failed = 0, k;
		for (k = 0;; k++) {
			memcpy(f.hd.medium, saved, sizeof saved);
			CHECK(hostdisk_reattach(&f.hd) == 0);
			f.ed = h_core(&f.h, &f.cfg, NULL);
			fx_clients(&f);
			if (kind == 0)
				f.h.fail_alloc = k;
			else
				f.hd.fail_countdown = k;
			int err = ed_mount(f.ed, 0);
			bool hit = kind == 0 ? f.h.fail_alloc < 0 : f.hd.fail_countdown < 0;
			f.h.fail_alloc = -1;
			f.hd.fail_countdown = -1;
			struct ed_unit_info u;
			if (err == 0) {
				CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
				CHECK_EQ(u.fell, 0);
				h_settle();
			} else {
				CHECK_EQ(err, kind == 0 ? ED_E_NOMEM : BLK_E_IO);
				failed++;
			}
			fx_forget(&f);
			CHECK_EQ(fx_boot(&f), 0);
			CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
			CHECK_EQ(u.fell, 0);
			CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), 0);
			CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), 0);
			h_settle();
			fx_forget(&f);
			if (!hit)
				break;
		}
		CHECK(failed > 0);
		printf("  transient %s at mount: %ld points, %ld mounts failed, none fell back\n",
		       kind == 0 ? "page allocation failures" : "I/O errors", k, failed);
	}
	fx_free(&f);
}

/* A page of the newest checkpoint the disk cannot read (a media error that
 * stays): the mount tries it ED_MOUNT_READ_TRIES times; an error that goes
 * away within them changes nothing, one that stays is damage the disk
 * reports - the mount falls back to the older checkpoint and says so
 * (fell_io) rather than fail on every boot.  A disk that fails the older's
 * reads as well is not mounted, and nothing is written. */
static void test_unreadable_checkpoint(void)
{
	struct fx f;
	struct ed_protector a, b;
	(void)two_checkpoints(&f, 44, &a, &b);
	static uint8_t saved[D * SECT];
	memcpy(saved, f.hd.medium, sizeof saved);
	struct ed_super *sa = (struct ed_super *)medium(&f, 0), *sb = (struct ed_super *)medium(&f, 8);
	struct ed_super *newer = sa->gen > sb->gen ? sa : sb, *older = newer == sa ? sb : sa;
	uint64_t ngen = newer->gen, ogen = older->gen, page = newer->bt_root.sector;
	uint64_t nsb = newer == sa ? 0 : 8;
	CHECK(page != older->bt_root.sector);
	struct ed_unit_info u;

	/* 1. It fails twice, then reads: the third try mounts the newest. */
	f.hd.bad_lo = page;
	f.hd.bad_n = 1;
	f.hd.bad_left = 2;             /* ED_MOUNT_READ_TRIES (3) less one */
	long pauses = f.h.pauses;
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(f.hd.bad_left, 0);
	CHECK_EQ(f.h.pauses - pauses, 2);   /* a pause before each try again */
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.fell, 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), 0);
	h_settle();
	fx_forget(&f);

	/* 2. Every read of the older's root fails too (the disk is failing
	 * more than one page): not mounted, and the image is untouched. */
	memcpy(f.hd.medium, saved, sizeof saved);
	f.hd.bad_lo = ED_MIN(page, older->bt_root.sector);
	f.hd.bad_n = ED_MAX(page, older->bt_root.sector) - f.hd.bad_lo + 1;
	f.hd.bad_left = -1;
	CHECK(f.hd.bad_n < 64);
	CHECK_EQ(fx_boot(&f), BLK_E_IO);
	CHECK(memcmp(f.hd.medium, saved, sizeof saved) == 0);
	fx_forget(&f);

	/* 3. It never reads: the mount falls back, loudly, and has everything
	 * (the log still held b). */
	f.hd.bad_lo = page;
	f.hd.bad_n = 1;
	f.hd.bad_left = -1;
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.fell, 1);
	CHECK_EQ(u.fell_io, 1);
	CHECK_EQ(u.fell_sb, nsb);
	CHECK_EQ(u.fell_at, page);
	CHECK_EQ(u.fell_gen, ngen);
	CHECK_EQ(u.fell_used_gen, ogen);
	CHECK_EQ(u.fell_lost, 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &a), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), 0);
	fx_check_live(&f);
	h_settle();
	fx_forget(&f);
	/* The mount's superblock replaced the one naming the bad page: the
	 * next boot does not read it and finds nothing wrong. */
	CHECK_EQ(fx_boot(&f), 0);
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &u), 0);
	CHECK_EQ(u.fell, 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), 0);
	h_settle();
	fx_forget(&f);
	f.hd.bad_n = 0;
	printf("  unreadable newest checkpoint: retried, then the older one mounted (fell_io)\n");
	fx_free(&f);
}

static void test_fuzz(void)
{
	/* A populated disk whose log still holds records. */
	struct fx f;
	struct ed_format_opts fo = { .log_sectors = 128 };
	fx_new_fmt(&f, D, HD_SYNC, NULL, 24, &fo);
	uint64_t ds = data_start(&f);
	struct ed_protector objs[24];
	int n = 0;
	for (int i = 0; i < 12; i++) {
		objs[n] = h_ext(0, ds + 20 * (uint64_t)i, 8 * SECT, RC, WC);
		CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &objs[n], NULL), 0);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &objs[n]), 0);
		n++;
		objs[n] = h_xn(0, ds + 300 + 10 * (uint64_t)i, 0, 200, RC, WC);
		CHECK_EQ(op(&f, ED_OP_EXONODE_ALLOCATE, &objs[n], NULL), 0);
		struct ed_operation st = { .one = ds + 500 + 10 * (uint64_t)i, .two = 4 * SECT };
		CHECK_EQ(op(&f, ED_OP_EXONODE_ADD_EXTENT, &objs[n], &st), 0);
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXONODE_ADD_DATA, &objs[n], NULL,
		               &(struct ed_operation){ .one = 16 }, NULL, 0, "fuzzing-data-16!", 16, NULL), 1);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &objs[n]), 0);
		n++;
	}
	h_settle();
	struct pages tp = { .n = 0 };
	CHECK_EQ(ed_check_meta_pages(f.ed, 0, collect, &tp), 0);
	fx_forget(&f);
	static uint8_t pristine[D * SECT];
	memcpy(pristine, f.hd.medium, sizeof(pristine));
	struct ed_check_stats cs;
	CHECK(hostdisk_reattach(&f.hd) == 0);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	CHECK_EQ(ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs), 0);
	CHECK_EQ(cs.violations, 0);
	CHECK(cs.log_records > 0);
	ed_destroy(f.ed);
	blk_reset();

	/* Where the metadata is: superblocks, log, snapshots, bound blocks. */
	uint64_t targets[64];
	int nt = 0;
	targets[nt++] = 0;
	targets[nt++] = 8;
	for (uint64_t s = 16; s < ds; s += 7)
		if (nt < 40)
			targets[nt++] = s;
	nt = nt > 30 ? 30 : nt;
	for (int i = 0; i < tp.n && nt < 52; i++)      /* the trees' pages */
		targets[nt++] = tp.s[i] + (uint64_t)(i % 8);
	for (int i = 0; i < n && nt < 64; i++)
		targets[nt++] = objs[i].blkno;

	fs_ = 12345;
	long mounted = 0, refused = 0, read_ok = 0, read_err = 0;
	for (int iter = 0; iter < 300; iter++) {
		memcpy(f.hd.medium, pristine, sizeof(pristine));
		int flips = 1 + (int)(frnd() % 4);
		for (int k = 0; k < flips; k++) {
			uint64_t s = targets[frnd() % (uint64_t)nt];
			uint64_t off = frnd() % SECT;
			if (frnd() % 4 == 0)
				memset(f.hd.medium + s * SECT + off - off % 8, (int)(frnd() & 0xff), 8);
			else
				f.hd.medium[s * SECT + off] ^= (uint8_t)(1u << (frnd() % 8));
		}
		CHECK(hostdisk_reattach(&f.hd) == 0);
		f.ed = h_core(&f.h, &f.cfg, NULL);
		fx_clients(&f);
		(void)ed_check_disk(f.ed, 0, NULL, NULL, NULL, &cs);
		if (ed_mount(f.ed, 0) != 0) {
			refused++;
			ed_destroy(f.ed);
			blk_reset();
			continue;
		}
		mounted++;
		static uint8_t r[8 * SECT];
		for (int i = 0; i < n; i++) {
			int op_read = objs[i].kind == ED_PK_EXTENT ? ED_OP_EXTENT_READ : ED_OP_EXONODE_READ;
			int64_t e = h_sync(&f.h, f.ed, &f.a, op_read, &objs[i]);
			e = e == 0 ? h_io(&f.h, f.ed, &f.a, &objs[i], 0,
			                  objs[i].kind == ED_PK_EXTENT ? objs[i].blkno + 1
			                                               : ds + 500 + 10 * (uint64_t)(i / 2),
			                  r, SECT) : e;
			if (e == 0)
				read_ok++;
			else
				read_err++;
		}
		(void)ed_check_live(f.ed, 0, NULL, NULL, &cs);
		fx_forget(&f);
	}
	CHECK(mounted > 0 && refused > 0 && read_err > 0 && read_ok > 0);
	printf("  fuzz: 300 corrupted images: %ld mounted, %ld refused; reads %ld ok, %ld rejected\n",
	       mounted, refused, read_ok, read_err);
	f.ed = NULL;
	hostdisk_free(&f.hd);
}

int main(void)
{
	RC = h_cap(0x0102030405060708ull, 0x1112131415161718ull);
	WC = h_cap(0x2122232425262728ull, 0x3132333435363738ull);
	test_tamper_replay_transplant();
	test_tree_pages();
	test_other_disk();
	test_keys_and_superblocks();
	test_damaged_log();
	test_damaged_checkpoint();
	test_transient_mount_errors();
	test_unreadable_checkpoint();
	test_fuzz();
	printf("test_ed_tamper: ok\n");
	return 0;
}
