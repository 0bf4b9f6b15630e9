/*
 * test_ed_scale.c - metadata that grows with what is stored (issue 11).
 *
 *   - sizes: too small, too big and odd-sized disks; an exodisk of another
 *     format version; an image shorter than its exodisk.  Refusals write
 *     nothing.
 *   - a 16 TiB disk (sparse in memory): format writes a few pages, a mount
 *     reads a few, memory per unit stays small, objects at both ends work
 *     and survive a remount.
 *   - the binding tree grows past three levels with tens of thousands of
 *     bindings, is read back page by page through a cache of four pages
 *     with every read in flight (requests wait and retry), and shrinks back
 *     to nothing when they go.
 *   - checkpoints cut by a power failure at every one of their writes (and,
 *     each time, with the disk's volatile cache landing differently), after
 *     changes that split leaves and grow the tree, drop emptied nodes and
 *     touch free-map leaves far apart: recovery gives back exactly what was
 *     acknowledged, and the checker finds nothing.
 *   - a disk filled until allocation says ED_E_NOSPACE: write-backs still
 *     work, a power failure loses nothing acknowledged, space comes back.
 *
 *   test_ed_scale            the bounded sample make test runs
 *   test_ed_scale exhaustive more seeds per cut, bigger trees
 */
#include <time.h>
#include "tests/host/exodisk/edfixture.h"
#include "kernel/exodisk/ondisk.h"
#include "kernel/exodisk/edcore.h"

#define SECT 512

static bool exhaustive;
static struct ed_cap RC, WC;

static int64_t op(struct fx *f, int o, struct ed_protector *p, struct ed_operation *st)
{
	return h_req(&f->h, f->ed, &f->a, o, p, NULL, st, NULL, 0, NULL, 0, NULL);
}

static uint64_t data_start(struct fx *f)
{
	struct ed_check_stats st;
	CHECK_EQ(ed_check_live(f->ed, f->unit, NULL, NULL, &st), 0);
	return st.data_start;
}

static struct ed_unit_info info(struct fx *f)
{
	struct ed_unit_info u;
	CHECK_EQ(ed_unit_info(f->ed, f->unit, NULL, &u), 0);
	return u;
}

/* Allocate one-sector extents at sectors[0..n) and write them back, 32 at a
 * time (one log record each); every one must be acknowledged. */
static void make_extents(struct fx *f, const uint64_t *sectors, int n)
{
	static int32_t res[32];
	for (int i = 0; i < n; i += 32) {
		int k = n - i < 32 ? n - i : 32;
		for (int j = 0; j < k; j++) {
			struct ed_protector p = h_ext(0, sectors[i + j], SECT, RC, WC);
			int64_t r = op(f, ED_OP_EXTENT_ALLOCATE, &p, NULL);
			if (r != 0)
				fprintf(stderr, "allocating extent %d at %llu: %lld\n", i + j,
				        (unsigned long long)sectors[i + j], (long long)r);
			CHECK_EQ(r, 0);
			struct ed_buf b;
			memset(&b, 0, sizeof(b));
			CHECK_EQ(h_req(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, &p, &b, NULL, NULL, 0, NULL, 0,
			               &res[j]), 0);
		}
		for (int j = 0; j < k; j++)
			CHECK_EQ(h_wait(&res[j]), 0);
	}
}

/* Deallocate the extents at sectors[0..n) (reading headers in as needed)
 * and write the deallocations back. */
static void drop_extents(struct fx *f, const uint64_t *sectors, int n)
{
	static int32_t res[32];
	for (int i = 0; i < n; i += 32) {
		int k = n - i < 32 ? n - i : 32;
		for (int j = 0; j < k; j++) {
			struct ed_protector p = h_ext(0, sectors[i + j], 0, RC, WC);
			if (!(op(f, ED_OP_IN_CACHE, &p, NULL) & ED_IC_CACHED))
				CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_EXTENT_READ, &p), 0);
			CHECK_EQ(op(f, ED_OP_EXTENT_DEALLOCATE, &p, NULL), 0);
			struct ed_buf b;
			memset(&b, 0, sizeof(b));
			CHECK_EQ(h_req(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, &p, &b, NULL, NULL, 0, NULL, 0,
			               &res[j]), 0);
		}
		for (int j = 0; j < k; j++)
			CHECK_EQ(h_wait(&res[j]), 0);
	}
}

static void shutdown_unit(struct fx *f)
{
	struct ed_protector any = h_ext(0, 0, 0, RC, WC);
	CHECK_EQ(h_sync(&f->h, f->ed, &f->a, ED_OP_SHUTDOWN, &any), 0);
}

/* ---- what the checker sees ------------------------------------------------------------ */

static uint8_t *expect_map;            /* sectors that must hold a one-sector extent */
static uint64_t expect_n, seen_n, seen_bad;

static void visit(void *arg, uint8_t kind, uint64_t sector, uint32_t nsect, const uint8_t *plain)
{
	seen_n++;
	const struct ed_exthdr *h = (const void *)plain;
	if (kind != ED_KIND_EXTENT || h->nsectors != 1 || !expect_map[sector])
		seen_bad++;
}

/* The unmounted disk holds exactly the extents the map says, nothing wrong
 * (the disk is looked at by a core of its own, which is then gone). */
static void verify_disk(struct fx *f)
{
	struct ed_check_stats st;
	seen_n = seen_bad = 0;
	CHECK(f->ed == NULL);
	CHECK(hostdisk_reattach(&f->hd) == f->unit);
	f->ed = h_core(&f->h, &f->cfg, NULL);
	CHECK_EQ(ed_check_disk(f->ed, f->unit, fx_report, visit, f, &st), 0);
	CHECK_EQ(st.violations, 0);
	CHECK_EQ(seen_bad, 0);
	CHECK_EQ(seen_n, expect_n);
	ed_destroy(f->ed);
	blk_reset();
	f->ed = NULL;
}

/* ---- sizes ---------------------------------------------------------------------------- */

static void test_sizes(void)
{
	struct fx f;
	memset(&f, 0, sizeof(f));
	blk_reset();
	h_init(&f.h, 5);
	/* Too small: refused, nothing written. */
	f.unit = hostdisk_init(&f.hd, ed_format_min_sectors() - 1, HD_SYNC, true, 1);
	f.ed = h_core(&f.h, NULL, NULL);
	CHECK_EQ(ed_format(f.ed, f.unit, NULL), ED_E_RANGE);
	CHECK_EQ(f.hd.nwrite, 0);
	ed_destroy(f.ed);
	hostdisk_free(&f.hd);
	blk_reset();
	/* Past what the free map can show (2^36 sectors): refused, nothing written. */
	f.unit = hostdisk_init(&f.hd, ED_MAX_SECTORS + 8, HD_SYNC, true, 1);
	f.ed = h_core(&f.h, NULL, NULL);
	CHECK_EQ(ed_format(f.ed, f.unit, NULL), ED_E_TOOBIG);
	CHECK_EQ(f.hd.nwrite, 0);
	struct ed_format_opts fo = { .nsectors = ED_MAX_SECTORS + 1 };
	CHECK_EQ(ed_format(f.ed, f.unit, &fo), ED_E_TOOBIG);
	ed_destroy(f.ed);
	hostdisk_free(&f.hd);

	/* The smallest disk, and odd sizes, work to their last sector. */
	uint64_t sizes[] = { ed_format_min_sectors(), 1000001, 65537 };
	for (int i = 0; i < 3; i++) {
		fx_new(&f, sizes[i], HD_SYNC, NULL, 6 + (uint64_t)i);
		struct ed_unit_info u = info(&f);
		CHECK_EQ(u.nsectors, sizes[i]);
		/* The last sector free of tree pages is an extent's. */
		uint64_t last = sizes[i] - 1;
		while (fx_allocated(&f, last))
			last--;
		struct ed_protector p = h_ext(0, last, SECT, RC, WC);
		CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
		struct ed_protector past = h_ext(0, sizes[i], SECT, RC, WC);
		CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &past, NULL), ED_E_RANGE);
		shutdown_unit(&f);
		fx_remount(&f);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &p), 0);
		fx_check_live(&f);
		fx_free(&f);
	}

	/* Another format version: recognised as such, left alone. */
	fx_new(&f, 16384, HD_SYNC, NULL, 9);
	fx_forget(&f);
	struct ed_keys keys;
	ed_keys_derive(&keys, (const uint8_t *)ED_DEV_KEY);
	for (uint64_t s = 0; s <= 8; s += 8) {
		struct ed_super *sb = (struct ed_super *)hostdisk_medium_sector(&f.hd, s);
		if (sb->magic == ED_SB_MAGIC) {
			sb->fmt = 1;
			ed_super_seal(&keys, sb, s);
		}
	}
	CHECK_EQ(fx_boot(&f), ED_E_VERSION);
	ed_destroy(f.ed);
	blk_reset();
	f.ed = NULL;
	hostdisk_free(&f.hd);

	/* An image shorter than its exodisk (truncated): refused. */
	fx_new(&f, 16384, HD_SYNC, NULL, 10);
	fx_forget(&f);
	f.hd.nsectors = 16000;
	CHECK_EQ(fx_boot(&f), ED_E_TOOBIG);
	ed_destroy(f.ed);
	blk_reset();
	f.ed = NULL;
	f.hd.nsectors = 16384;
	hostdisk_free(&f.hd);
	printf("  sizes: too small and too big refused with nothing written; odd sizes work to the "
	       "last sector\n");
}

/* ---- a 16 TiB disk ------------------------------------------------------------------- */

static void test_big(void)
{
	const uint64_t N = 1ull << 35;         /* 16 TiB */
	struct fx f;
	memset(&f, 0, sizeof(f));
	blk_reset();
	h_init(&f.h, 11);
	f.unit = hostdisk_init(&f.hd, N, HD_SYNC, true, 12);
	CHECK(f.unit == 0);
	f.ed = h_core(&f.h, NULL, NULL);
	hostdisk_reset_counts(&f.hd);
	CHECK_EQ(ed_format(f.ed, 0, NULL), 0);
	uint64_t fmt_written = f.hd.sect_written;
	CHECK(fmt_written <= 8192);                        /* at most 4 MiB */
	CHECK_EQ(ed_format_sectors(f.ed), fmt_written);
	hostdisk_reset_counts(&f.hd);
	CHECK_EQ(ed_mount(f.ed, 0), 0);
	uint64_t mount_read = f.hd.sect_read;
	fx_clients(&f);
	struct ed_unit_info u = info(&f);
	CHECK(u.kmem_bytes <= 256 * 1024);
	CHECK(mount_read <= 256);          /* superblocks, 7 tree pages, 64 KiB of log */
	/* Objects at both ends, and a 1 TiB extent in the middle. */
	uint64_t ds = data_start(&f);
	uint64_t far = N - 100000;
	struct ed_protector a = h_ext(0, ds + 8, 4 * SECT, RC, WC);
	struct ed_protector b = h_ext(0, far, 16 * SECT, RC, WC);
	struct ed_protector c = h_ext(0, 1ull << 34, (1ull << 31) * SECT, RC, WC);
	struct ed_protector x = h_xn(0, far + 64, 0, 120, RC, WC);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &a, NULL), 0);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &b, NULL), 0);
	CHECK_EQ(op(&f, ED_OP_EXTENT_ALLOCATE, &c, NULL), 0);
	CHECK_EQ(op(&f, ED_OP_EXONODE_ALLOCATE, &x, NULL), 0);
	struct ed_operation st = { .one = far + 1000, .two = 64 * SECT };
	CHECK_EQ(op(&f, ED_OP_EXONODE_ADD_EXTENT, &x, &st), 0);
	static uint8_t buf[16 * SECT], back[16 * SECT];
	for (uint32_t i = 0; i < sizeof buf; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &b, 1, far + 1, buf, 15 * SECT), 0);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &c, 1, (1ull << 34) - 1, buf, 8 * SECT), ED_E_RANGE);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &c, 1, (1ull << 34) + (1ull << 31) - 8, buf, 8 * SECT), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &a), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &b), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &c), 0);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXONODE_WRITE, &x), 0);
	struct ed_protector any = h_ext(0, 0, 0, RC, WC);
	hostdisk_reset_counts(&f.hd);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_SHUTDOWN, &any), 0);
	uint64_t ckpt_written = f.hd.sect_written;
	CHECK(ckpt_written < 200);
	fx_remount(&f);
	u = info(&f);
	CHECK_EQ(u.bindings, 4);
	CHECK_EQ(u.allocated, ds + 4 + 16 + (1ull << 31) + 1 + 64 + (u.meta_sectors - ds));
	CHECK(u.kmem_bytes <= 512 * 1024);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &b), 0);
	memset(back, 0, sizeof back);
	CHECK_EQ(h_io(&f.h, f.ed, &f.a, &b, 0, far + 1, back, 15 * SECT), 0);
	CHECK(memcmp(back, buf, 15 * SECT) == 0);
	fx_check_live(&f);
	printf("  16 TiB: format wrote %llu sectors, mount read %llu, checkpoint of 4 objects wrote %llu; "
	       "%llu KiB of kernel memory; %llu MiB of host memory for the disk\n",
	       (unsigned long long)fmt_written, (unsigned long long)mount_read,
	       (unsigned long long)ckpt_written, (unsigned long long)(u.kmem_bytes / 1024),
	       (unsigned long long)(hostdisk_footprint(&f.hd) >> 20));
	fx_free(&f);
}

/* ---- the binding tree: growth, paging, shrinking --------------------------------------- */

static void test_tree(void)
{
	/* In a shuffled order leaves split half full: past 127 leaves (about
	 * 22,000 bindings, the leaves some 70% full) the root splits: three
	 * levels. */
	const int n = exhaustive ? 60000 : 25000;
	const uint64_t D = 1ull << 20;         /* 512 MiB */
	struct fx f;
	struct ed_config cfg = { .meta_pages = 1024 };
	fx_new(&f, D, HD_SYNC, &cfg, 13);
	f.hd.write_cache = false;
	uint64_t ds = data_start(&f);
	uint64_t *secs = calloc((size_t)n, sizeof(*secs));
	expect_map = calloc(D, 1);
	CHECK(secs != NULL && expect_map != NULL);
	/* Every third sector, in a shuffled order. */
	for (int i = 0; i < n; i++) {
		secs[i] = ds + 8 + 3 * (uint64_t)i;
		expect_map[secs[i]] = 1;
	}
	uint64_t *order = calloc((size_t)n, sizeof(*order));
	memcpy(order, secs, (size_t)n * sizeof(*order));
	uint64_t sh = 12345;
	for (int i = n - 1; i > 0; i--) {
		sh = sh * 6364136223846793005ull + 1442695040888963407ull;
		int j = (int)((sh >> 33) % (uint64_t)(i + 1));
		uint64_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	make_extents(&f, order, n);
	free(order);
	expect_n = (uint64_t)n;
	shutdown_unit(&f);
	struct ed_super *sa = (struct ed_super *)hostdisk_medium_sector(&f.hd, 0);
	struct ed_super *sb = (struct ed_super *)hostdisk_medium_sector(&f.hd, 8);
	const struct ed_super *cur = sa->gen > sb->gen ? sa : sb;
	CHECK(cur->bt_height >= 3);
	CHECK_EQ(cur->bindings, (uint64_t)n);
	uint32_t height = cur->bt_height;
	fx_forget(&f);
	verify_disk(&f);

	/* Read back through four pages of tree, every read in flight: lookups
	 * wait (ED_E_WAIT inside the core) and retry. */
	f.hd.mode = HD_POLLED;
	f.cfg.meta_pages = cfg.meta_pages = 4;
	CHECK_EQ(fx_boot(&f), 0);
	struct ed_unit_info u0 = info(&f);
	uint64_t rs = 77;
	for (int i = 0; i < 400; i++) {
		rs = rs * 6364136223846793005ull + 1442695040888963407ull;
		int k = (int)((rs >> 33) % (uint64_t)n);
		struct ed_protector p = h_ext(0, secs[k], 0, RC, WC);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &p), 0);
		CHECK_EQ(op(&f, ED_OP_MARK_REPLACEMENT, &p, NULL), 0);
		/* A sector between two extents is no binding. */
		struct ed_protector q = h_ext(0, secs[k] + 1, 0, RC, WC);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &q), ED_E_NOTBOUND);
	}
	struct ed_unit_info u1 = info(&f);
	CHECK(u1.meta_reads - u0.meta_reads >= 100);      /* pages came and went */
	CHECK(u1.meta_resident <= cfg.meta_pages + height + 2);

	/* Deallocate every other one (in random order of batches), then the
	 * rest: emptied leaves go, the tree shrinks to nothing. */
	f.hd.mode = HD_SYNC;
	int half = 0;
	uint64_t *odd = calloc((size_t)n, sizeof(*odd));
	for (int i = 1; i < n; i += 2) {
		odd[half++] = secs[i];
		expect_map[secs[i]] = 0;
	}
	drop_extents(&f, odd, half);
	expect_n = (uint64_t)(n - half);
	shutdown_unit(&f);
	fx_forget(&f);
	if (exhaustive)
		verify_disk(&f);
	CHECK_EQ(fx_boot(&f), 0);
	int rest = 0;
	for (int i = 0; i < n; i += 2) {
		odd[rest++] = secs[i];
		expect_map[secs[i]] = 0;
	}
	drop_extents(&f, odd, rest);
	expect_n = 0;
	shutdown_unit(&f);
	sa = (struct ed_super *)hostdisk_medium_sector(&f.hd, 0);
	sb = (struct ed_super *)hostdisk_medium_sector(&f.hd, 8);
	cur = sa->gen > sb->gen ? sa : sb;
	CHECK_EQ(cur->bt_height, 0);
	CHECK_EQ(cur->bindings, 0);
	CHECK_EQ(cur->bt_root.sector, ED_MPTR_ZERO);
	fx_forget(&f);
	verify_disk(&f);
	printf("  tree: %d bindings in %u levels, read back through a 4-page cache (%llu page reads), "
	       "then dropped to an empty tree\n", n, height,
	       (unsigned long long)(u1.meta_reads - u0.meta_reads));
	free(odd);
	free(secs);
	free(expect_map);
	expect_map = NULL;
	fx_free(&f);
}

/* ---- power failures at every write of a checkpoint ------------------------------------ */

#define CK_D (1ull << 18)            /* 128 MiB */

static uint8_t *image;               /* the disk with the changes in its log, before the checkpoint */
static uint64_t *ck_secs;
static int ck_n;

/* A disk whose last checkpoint holds a tree of several levels, and whose
 * log holds changes that split leaves (inserts between the existing
 * bindings), empty a run of leaves (a range of deletions), and touch
 * free-map leaves far apart (extents at the end of the disk). */
static void ck_prepare(struct fx *f)
{
	int n1 = exhaustive ? 36000 : 9000;
	fx_new(f, CK_D, HD_SYNC, NULL, 21);
	f->hd.write_cache = false;
	uint64_t ds = data_start(f);
	ck_secs = calloc(CK_D, sizeof(*ck_secs));
	expect_map = calloc(CK_D, 1);
	for (int i = 0; i < n1; i++)
		ck_secs[i] = ds + 8 + 4 * (uint64_t)i;
	make_extents(f, ck_secs, n1);
	shutdown_unit(f);
	fx_remount(f);
	/* The changes: inserts between every 9th pair (splits), a range of
	 * 600 deletions (emptied leaves), extents near the end. */
	uint64_t *ins = calloc(2000, sizeof(*ins)), *del = calloc(2000, sizeof(*del));
	int ni = 0, nd = 0;
	for (int i = 0; i < n1 && ni < 400; i += 9)
		ins[ni++] = ck_secs[i] + 2;
	for (int i = n1 / 2; i < n1 / 2 + 600; i++)
		del[nd++] = ck_secs[i];
	for (int i = 0; i < 40; i++)
		ins[ni++] = CK_D - 4096 - 97 * (uint64_t)i;
	make_extents(f, ins, ni);
	drop_extents(f, del, nd);
	/* The expected state. */
	ck_n = 0;
	for (int i = 0; i < n1; i++)
		expect_map[ck_secs[i]] = 1;
	for (int i = 0; i < nd; i++)
		expect_map[del[i]] = 0;
	for (int i = 0; i < ni; i++)
		expect_map[ins[i]] = 1;
	for (uint64_t s = 0; s < CK_D; s++)
		if (expect_map[s])
			ck_secs[ck_n++] = s;
	expect_n = (uint64_t)ck_n;
	free(ins);
	free(del);
	/* Power off without a checkpoint: everything is in the log. */
	h_settle();
	hostdisk_crash(&f->hd);
	ed_destroy(f->ed);
	h_drop_pins(&f->h);
	blk_reset();
	f->ed = NULL;
	image = malloc(CK_D * SECT);
	memcpy(image, f->hd.medium, CK_D * SECT);
}

/* Mount the prepared disk (replaying its log: the trees are dirty again),
 * then checkpoint with the power failing when request number `cut` of the
 * checkpoint starts (-1: never).  Returns how many requests it made. */
static uint64_t ck_run(struct fx *f, int64_t cut, uint64_t seed)
{
	memcpy(f->hd.medium, image, CK_D * SECT);
	f->hd.write_cache = true;
	f->hd.rng = seed;
	CHECK_EQ(fx_boot(f), 0);
	hostdisk_reset_counts(&f->hd);
	f->hd.die_countdown = cut;
	struct ed_protector any = h_ext(0, 0, 0, RC, WC);
	int64_t r = h_sync(&f->h, f->ed, &f->a, ED_OP_SHUTDOWN, &any);
	uint64_t nreq = f->hd.nreq;
	CHECK(cut >= 0 || r == 0);
	/* The machine is off: forget it all, reboot twice (a mount after a
	 * crash, then one more to be sure it stays good). */
	hostdisk_crash(&f->hd);
	ed_destroy(f->ed);
	h_drop_pins(&f->h);
	blk_reset();
	f->ed = NULL;
	verify_disk(f);
	CHECK_EQ(fx_boot(f), 0);
	fx_check_live(f);
	shutdown_unit(f);
	fx_forget(f);
	verify_disk(f);
	return nreq;
}

static void test_ckpt_crash(void)
{
	struct fx f;
	ck_prepare(&f);
	uint64_t total = ck_run(&f, -1, 1);
	int seeds = exhaustive ? 12 : 2;
	long runs = 0;
	for (uint64_t cut = 0; cut <= total; cut++)
		for (int s = 0; s < seeds; s++, runs++)
			ck_run(&f, (int64_t)cut, 0x9e3779b97f4a7c15ull * (cut * 31 + (uint64_t)s + 1));
	printf("  checkpoint of %d bindings' changes: %llu requests, cut at each with %d landings of the "
	       "write cache (%ld recoveries), all exact\n", ck_n, (unsigned long long)total, seeds, runs);
	free(image);
	free(ck_secs);
	free(expect_map);
	expect_map = NULL;
	fx_free(&f);
}

/* ---- power failures while the tree grows --------------------------------------------- */

/* From a checkpointed tree of full leaves, bindings are added between the
 * existing ones, 32 to a log record, each splitting a leaf when the record
 * is applied (up to the root, in the exhaustive run's bigger tree); then a
 * checkpoint writes the grown tree.  The power fails at request `cut` of
 * all that.  Afterwards every binding acknowledged is there, the old ones
 * too, a binding whose write-back was cut may or may not be, and nothing
 * else. */
static uint8_t *g_image, *g_must, *g_may;
static uint64_t *g_ins;
static int g_nins, g_nbase;
static uint64_t g_seen, g_wrong;

static void g_visit(void *arg, uint8_t kind, uint64_t sector, uint32_t nsect, const uint8_t *plain)
{
	if (g_must[sector] || g_may[sector]) {
		g_seen += g_must[sector];
		g_must[sector] = 2;        /* found */
	} else {
		g_wrong++;
	}
}

static void g_prepare(struct fx *f)
{
	g_nbase = exhaustive ? 36000 : 8000;
	fx_new(f, CK_D, HD_SYNC, NULL, 41);
	f->hd.write_cache = false;
	uint64_t ds = data_start(f);
	uint64_t *base = calloc((size_t)g_nbase, sizeof(*base));
	for (int i = 0; i < g_nbase; i++)
		base[i] = ds + 8 + 4 * (uint64_t)i;
	make_extents(f, base, g_nbase);
	shutdown_unit(f);
	fx_forget(f);
	g_image = malloc(CK_D * SECT);
	memcpy(g_image, f->hd.medium, CK_D * SECT);
	g_must = calloc(CK_D, 1);
	g_may = calloc(CK_D, 1);
	g_ins = calloc(512, sizeof(*g_ins));
	g_nins = 0;
	/* Between existing bindings, spread over the leaves. */
	for (int i = 0; i < g_nbase && g_nins < 160; i += g_nbase / 160)
		g_ins[g_nins++] = base[i] + 1;
	free(base);
}

static uint64_t g_run(struct fx *f, int64_t cut, uint64_t seed)
{
	memcpy(f->hd.medium, g_image, CK_D * SECT);
	f->hd.write_cache = true;
	f->hd.rng = seed;
	CHECK_EQ(fx_boot(f), 0);
	hostdisk_reset_counts(&f->hd);
	f->hd.die_countdown = cut;
	static int32_t res[512];
	for (int i = 0; i < g_nins; i += 32) {
		for (int j = i; j < i + 32 && j < g_nins; j++) {
			struct ed_protector p = h_ext(0, g_ins[j], SECT, RC, WC);
			CHECK_EQ(op(f, ED_OP_EXTENT_ALLOCATE, &p, NULL), 0);
			struct ed_buf b;
			memset(&b, 0, sizeof(b));
			CHECK_EQ(h_req(&f->h, f->ed, &f->a, ED_OP_EXTENT_WRITE, &p, &b, NULL, NULL, 0, NULL, 0,
			               &res[j]), 0);
		}
		for (int j = i; j < i + 32 && j < g_nins; j++)
			(void)h_wait(&res[j]);
	}
	struct ed_protector any = h_ext(0, 0, 0, RC, WC);
	(void)h_sync(&f->h, f->ed, &f->a, ED_OP_SHUTDOWN, &any);
	uint64_t nreq = f->hd.nreq;
	/* What must be there, what may be. */
	memset(g_must, 0, CK_D);
	memset(g_may, 0, CK_D);
	struct ed_check_stats st;
	for (int j = 0; j < g_nins; j++) {
		if (res[j] == 0)
			g_must[g_ins[j]] = 1;
		else
			g_may[g_ins[j]] = 1;
	}
	hostdisk_crash(&f->hd);
	ed_destroy(f->ed);
	h_drop_pins(&f->h);
	blk_reset();
	f->ed = NULL;
	CHECK(hostdisk_reattach(&f->hd) == 0);
	f->ed = h_core(&f->h, &f->cfg, NULL);
	fx_clients(f);
	CHECK_EQ(ed_mount(f->ed, 0), 0);
	CHECK_EQ(ed_check_live(f->ed, 0, fx_report, f, &st), 0);
	CHECK_EQ(st.violations, 0);
	ed_client_exit(f->ed, &f->a);
	ed_client_exit(f->ed, &f->b);
	ed_destroy(f->ed);
	blk_reset();
	f->ed = NULL;
	/* The recovered disk, read as the next mount would: the base bindings
	 * (every fourth sector) and the acknowledged ones must be there. */
	g_seen = g_wrong = 0;
	CHECK(hostdisk_reattach(&f->hd) == 0);
	f->ed = h_core(&f->h, &f->cfg, NULL);
	struct ed_check_stats cs;
	for (int i = 0; i < g_nbase; i++)
		g_must[st.data_start + 8 + 4 * (uint64_t)i] = 1;
	uint64_t want = 0;
	for (uint64_t s2 = 0; s2 < CK_D; s2++)
		want += g_must[s2] == 1;
	CHECK_EQ(ed_check_disk(f->ed, 0, fx_report, g_visit, f, &cs), 0);
	CHECK_EQ(cs.violations, 0);
	CHECK_EQ(g_wrong, 0);
	CHECK_EQ(g_seen, want);
	ed_destroy(f->ed);
	blk_reset();
	f->ed = NULL;
	return nreq;
}

static void test_grow_crash(void)
{
	struct fx f;
	g_prepare(&f);
	uint64_t total = g_run(&f, -1, 1);
	/* Every request when exhaustive; a spread sample otherwise. */
	uint64_t step = exhaustive ? 1 : total / 24 + 1;
	int seeds = exhaustive ? 4 : 1;
	long runs = 0;
	for (uint64_t cut = 0; cut <= total; cut += step)
		for (int s = 0; s < seeds; s++, runs++)
			g_run(&f, (int64_t)cut, 0x2545f4914f6cdd1dull * (cut * 7 + (uint64_t)s + 1));
	printf("  %d bindings added to a tree of %d (leaf splits), then a checkpoint: %llu requests, "
	       "cut at %ld points: all exact\n", g_nins, g_nbase, (unsigned long long)total, runs);
	free(g_image);
	free(g_must);
	free(g_may);
	free(g_ins);
	fx_free(&f);
}

/* ---- overridden free-map leaves, then a fold -------------------------------------------- */

/* A checkpoint that changed few free-map leaves writes just them and lists
 * their pointers in the superblock; one that changes more than
 * ED_FM_MAX_OVER rewrites the inner pages above them all and empties the
 * list.  Here: changes in 3 leaves (listed), then in 10 more (a fold), the
 * power failing at every request of the folding checkpoint. */
#define FO_D (655360ull)             /* 320 MiB: 20 leaves */

static struct ed_super *newest_super(struct fx *f)
{
	struct ed_super *a = (struct ed_super *)f->hd.medium, *b = (struct ed_super *)(f->hd.medium + 8 * SECT);
	return a->gen > b->gen ? a : b;
}

static void extents_in_leaves(struct fx *f, uint64_t first, uint64_t n, uint64_t *secs, int *k)
{
	int k0 = *k;
	for (uint64_t li = first; li < first + n; li++)
		secs[(*k)++] = li * ED_BM_LEAF_BITS + 100;
	make_extents(f, secs + k0, *k - k0);
}

static void test_fold_crash(void)
{
	struct fx f;
	fx_new(&f, FO_D, HD_SYNC, NULL, 61);
	f.hd.write_cache = false;
	uint64_t secs[32];
	int k = 0;
	extents_in_leaves(&f, 1, 3, secs, &k);
	shutdown_unit(&f);
	fx_remount(&f);
	CHECK(newest_super(&f)->fm_nover >= 3 && newest_super(&f)->fm_nover <= ED_FM_MAX_OVER);
	extents_in_leaves(&f, 4, 10, secs, &k);
	h_settle();
	hostdisk_crash(&f.hd);
	ed_destroy(f.ed);
	h_drop_pins(&f.h);
	blk_reset();
	f.ed = NULL;
	uint8_t *img = malloc(FO_D * SECT);
	memcpy(img, f.hd.medium, FO_D * SECT);
	expect_map = calloc(FO_D, 1);
	for (int i = 0; i < k; i++)
		expect_map[secs[i]] = 1;
	expect_n = (uint64_t)k;
	long runs = 0;
	uint64_t total = 0;
	for (int64_t cut = -1; cut < 0 || (uint64_t)cut <= total; cut++)
		for (int seed = 0; seed < (cut < 0 ? 1 : 2); seed++, runs++) {
			memcpy(f.hd.medium, img, FO_D * SECT);
			f.hd.write_cache = true;
			f.hd.rng = 0x51ed270b27422ull * (uint64_t)(cut + 2) + (uint64_t)seed;
			CHECK_EQ(fx_boot(&f), 0);
			hostdisk_reset_counts(&f.hd);
			f.hd.die_countdown = cut;
			struct ed_protector any = h_ext(0, 0, 0, RC, WC);
			int64_t r = h_sync(&f.h, f.ed, &f.a, ED_OP_SHUTDOWN, &any);
			if (cut < 0) {
				CHECK_EQ(r, 0);
				total = f.hd.nreq;
				/* 13 leaves and the tree pages' own: folded. */
				CHECK_EQ(newest_super(&f)->fm_nover, 0);
				CHECK(newest_super(&f)->fm_root.sector > ED_MPTR_ONES);
			}
			hostdisk_crash(&f.hd);
			ed_destroy(f.ed);
			h_drop_pins(&f.h);
			blk_reset();
			f.ed = NULL;
			verify_disk(&f);
			CHECK_EQ(fx_boot(&f), 0);
			fx_check_live(&f);
			shutdown_unit(&f);
			fx_forget(&f);
			verify_disk(&f);
		}
	printf("  free-map leaves listed in the superblock (3), then folded into the tree (13): "
	       "%llu requests, cut at each (%ld recoveries), all exact\n", (unsigned long long)total, runs);
	free(img);
	free(expect_map);
	expect_map = NULL;
	fx_free(&f);
}

/* ---- the checker and a checkpoint that wants to start ------------------------------ */

/* A live check reads binding-tree pages; each read that completes lets
 * waiting work go on, and a checkpoint that was due (as after a mount that
 * replayed a log half full, or a commit that made it due) used to start
 * and run inside the check's walk: the trees and maps changed under it, and
 * the checkpoint's new pages showed as "allocated sectors referred to by
 * nothing (leak)" - the tree-page leak seen after power cuts, which was the
 * checker's, not the disk's.  The check now holds checkpoints off while it
 * looks; the checkpoint runs when the next work comes. */
static void test_check_holds_checkpoint(void)
{
	struct fx f;
	struct ed_config cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.meta_pages = 16;                  /* the walk must read most pages */
	fx_new(&f, CK_D, HD_SYNC, &cfg, 51);
	uint64_t ds = data_start(&f);
	int n = 9000;
	uint64_t *secs = calloc((size_t)n + 64, sizeof(*secs));
	for (int i = 0; i < n; i++)
		secs[i] = ds + 8 + 4 * (uint64_t)i;
	make_extents(&f, secs, n);
	shutdown_unit(&f);
	fx_remount(&f);
	/* Changes in the log, dirty tree pages in memory; then a checkpoint is due. */
	for (int i = 0; i < 4; i++)
		secs[n + i] = secs[i * 2000] + 2;
	make_extents(&f, secs + n, 4);
	struct ed_disk *d = f.ed->disk[f.unit];
	CHECK(d->bt_dirty > 0 && d->ck == CK_IDLE);
	ed_bt_evict(d);
	d->ck_wanted = true;
	uint64_t before = info(&f).checkpoints;
	struct ed_check_stats st;
	CHECK_EQ(ed_check_live(f.ed, f.unit, fx_report, &f, &st), 0);
	CHECK_EQ(st.violations, 0);
	CHECK(st.bindings == (uint64_t)n + 4);
	/* It ran once the check was done (a synchronous disk), and all is well. */
	CHECK_EQ(info(&f).checkpoints, before + 1);
	struct ed_protector any = h_ext(0, 0, 0, RC, WC);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_CHECKPOINT, &any), 0);
	CHECK(info(&f).checkpoints > before + 1);
	CHECK_EQ(ed_check_live(f.ed, f.unit, fx_report, &f, &st), 0);
	CHECK_EQ(st.violations, 0);
	printf("  a live check with a checkpoint due and %d bindings read through a 16-page cache: "
	       "no checkpoint under it, nothing leaked\n", n + 4);
	free(secs);
	fx_free(&f);
}

/* ---- a full disk ------------------------------------------------------------------------ */

static void test_nospace(void)
{
	const uint64_t D = 16384;              /* 8 MiB */
	struct fx f;
	fx_new(&f, D, HD_SYNC, NULL, 31);
	uint64_t ds = data_start(&f);
	expect_map = calloc(D, 1);
	uint64_t *secs = calloc(D, sizeof(*secs));
	int n = 0;
	int64_t refusal = 0;
	for (uint64_t s = ds; s < D && refusal == 0; s++) {
		if (fx_allocated(&f, s))
			continue;
		struct ed_protector p = h_ext(0, s, SECT, RC, WC);
		refusal = op(&f, ED_OP_EXTENT_ALLOCATE, &p, NULL);
		if (refusal != 0)
			break;
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
		secs[n++] = s;
		expect_map[s] = 1;
	}
	CHECK_EQ(refusal, ED_E_NOSPACE);
	struct ed_unit_info u = info(&f);
	CHECK(u.nsectors - u.allocated <= u.reserved);
	CHECK(u.nsectors - u.allocated > 0);
	/* Lose power; everything acknowledged is there. */
	expect_n = (uint64_t)n;
	CHECK_EQ(fx_crash(&f), 0);
	fx_check_live(&f);
	/* A full disk still takes deallocations; then space is back. */
	int half = 0;
	uint64_t *drop = calloc((size_t)n, sizeof(*drop));
	for (int i = 0; i < n; i += 2) {
		drop[half++] = secs[i];
		expect_map[secs[i]] = 0;
	}
	drop_extents(&f, drop, half);
	u = info(&f);
	CHECK(u.nsectors - u.allocated > u.reserved + (uint64_t)half / 2);
	expect_n = (uint64_t)(n - half);
	shutdown_unit(&f);
	fx_forget(&f);
	verify_disk(&f);
	printf("  full disk: %d one-sector extents, then ED_E_NOSPACE with %llu sectors kept; nothing "
	       "lost to a power failure; %d deallocated\n", n,
	       (unsigned long long)u.reserved, half);
	free(drop);
	free(secs);
	free(expect_map);
	expect_map = NULL;
	fx_free(&f);
}

int main(int argc, char **argv)
{
	exhaustive = argc > 1 && strcmp(argv[1], "exhaustive") == 0;
	RC = h_cap(0x5c5c, 0x1111);
	WC = h_cap(0x7e7e, 0x2222);
	void (*tests[])(void) = { test_sizes, test_big, test_tree, test_ckpt_crash, test_grow_crash,
	                          test_fold_crash, test_check_holds_checkpoint, test_nospace };
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		clock_t t0 = clock();
		tests[i]();
		if (getenv("ED_SCALE_TIMES"))
			printf("    (%.1f s of CPU)\n", (double)(clock() - t0) / CLOCKS_PER_SEC);
	}
	printf("test_ed_scale: ok%s\n", exhaustive ? " (exhaustive)" : "");
	return 0;
}
