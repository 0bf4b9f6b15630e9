/*
 * test_vvol.c - the virtual volume (libos/vvol/) on the host, over a disk
 * whose free sectors hold old garbage (0xEE) that must never show:
 *
 *   zeros     a 4 GiB volume nobody wrote reads as zeros without a single
 *             disk request
 *   basic     partial chunks written, read back before and after a reboot;
 *             the rest of each chunk reads zeros, not garbage
 *   model     random writes, reads, syncs of random classes, discards and
 *             reopens against a model, for several chunk sizes
 *   classes   a chunk with sectors of two classes, one synced, then a crash:
 *             the other class reads zeros, not what was on the disk before
 *   around    reads at random in 2 MiB with a 64 KiB window around each miss:
 *             one request per window, every sector read once, nothing
 *             outside the windows read; dirty sectors win over the disk
 *   footprint 10 MiB written into a 4 GiB volume takes about 10 MiB of the
 *             disk; discarded, it goes back
 *   powercut  a workload of writes, syncs and discards cut at every disk
 *             request: the volume holds the acknowledged state or the one
 *             after it, sector by sector, and never a sector it did not write
 */
#include <errno.h>
#include <string.h>
#include "libos/vvol/vvol.h"
#include "tests/host/userfs/powercut.h"

#define GARBAGE 0xEE
#define CACHE   (2u << 20)

static struct vvol *hooked;

static int hook(struct kit *k)
{
	(void)k;
	return vvol_harden(hooked);
}

static void garbage_fill(struct ufx *u)
{
	struct hostdisk *hd = &u->f.hd;
	for (uint64_t s = 0; s < hd->nsectors; s++)
		if (!fx_allocated(&u->f, s))
			memset(hd->medium + s * BLK_SECTOR_SIZE, GARBAGE, BLK_SECTOR_SIZE);
}

static int vv_create(struct kit *k, struct vvol *v, uint64_t nsect, uint32_t chunk)
{
	int e = kit_mkfs(k, "vvt", "key=v", 480);
	if (e == 0)
		e = vvol_make(v, k, 1, nsect, chunk, CACHE);
	if (e == 0) {
		hooked = v;
		k->writeback = hook;
		e = vvol_sync(v, VV_ALL);
	}
	return e;
}

static int vv_mount(struct kit *k, struct vvol *v)
{
	int e = kit_mount(k, "vvt", "key=v");
	if (e == 0)
		e = vvol_open(v, k, 1, CACHE);
	if (e == 0) {
		hooked = v;
		k->writeback = hook;
	} else if (k->locked) {
		kit_unmount(k);
	}
	return e;
}

static void vv_unmount(struct kit *k, struct vvol *v)
{
	CHECK_EQ(vvol_sync(v, VV_ALL), 0);
	vvol_close(v);
	kit_unmount(k);
}

/* The contents of sector lba written with tag t (never all 0xEE, never
 * all zeros). */
static void pattern(uint8_t *p, uint64_t lba, uint32_t t)
{
	uint64_t x = lba * 0x9e3779b97f4a7c15ull ^ ((uint64_t)t << 32 | t);
	for (unsigned i = 0; i < ED_SECTOR; i += 8) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		memcpy(p + i, &x, 8);
	}
	p[0] = 0x5a;
}

static int is_pattern(const uint8_t *p, uint64_t lba, uint32_t t)
{
	uint8_t want[ED_SECTOR];
	pattern(want, lba, t);
	return memcmp(p, want, ED_SECTOR) == 0;
}

static int is_zero(const uint8_t *p)
{
	for (unsigned i = 0; i < ED_SECTOR; i++)
		if (p[i])
			return 0;
	return 1;
}

/* ---- zeros ----------------------------------------------------------------- */

static void test_zeros(void)
{
	struct ufx u;
	ufx_new(&u, 131072, HD_POLLED, 11);
	garbage_fill(&u);
	struct kit k;
	struct vvol v = { 0 };
	const uint64_t n = 8ull << 20;               /* 4 GiB */
	CHECK_EQ(vv_create(&k, &v, n, 0), 0);
	uint64_t reads = u.f.hd.nread;
	static uint8_t buf[200 * ED_SECTOR];
	for (uint64_t i = 0; i < 200; i++) {
		uint64_t lba = (i * 2654435761u) % (n - 200);
		CHECK_EQ(vvol_read(&v, lba, buf, 1 + i % 199, 64), 0);
		for (uint64_t s = 0; s < 1 + i % 199; s++)
			CHECK(is_zero(buf + s * ED_SECTOR));
	}
	CHECK_EQ(vvol_read(&v, n - 1, buf, 1, 100), 0);
	CHECK_EQ(vvol_read(&v, n, buf, 1, 0), -EINVAL);
	CHECK_EQ(u.f.hd.nread, reads);
	CHECK_EQ(v.st.rd_reqs, 0);
	/* The whole map is one node: the root. */
	CHECK_EQ(vvol_footprint(&v), ED_XN_MAX_SECT);
	vv_unmount(&k, &v);
	ufx_free(&u);
}

/* ---- basic ----------------------------------------------------------------- */

static void test_basic(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_POLLED, 12);
	garbage_fill(&u);
	struct kit k;
	struct vvol v = { 0 };
	const uint64_t n = 1ull << 21;               /* 1 GiB */
	CHECK_EQ(vv_create(&k, &v, n, 128), 0);
	static const uint64_t at[] = { 0, 1, 127, 128, 300, 5000, 65536 + 3, (1u << 21) - 1 };
	uint8_t sec[ED_SECTOR], got[ED_SECTOR];
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		pattern(sec, at[i], 1);
		CHECK_EQ(vvol_write(&v, at[i], sec, 1, 0), 0);
	}
	/* Not yet written back: nothing mapped, but the cache has it. */
	uint64_t phys;
	CHECK_EQ(vvol_mapped(&v, 300, &phys), 0);
	CHECK_EQ(vvol_read(&v, 300, got, 1, 0), 0);
	CHECK(is_pattern(got, 300, 1));
	CHECK_EQ(vvol_sync(&v, VV_ALL), 0);
	CHECK_EQ(vvol_mapped(&v, 300, &phys), 1);
	CHECK_EQ(v.st.allocs, 6);                    /* chunks 0, 1, 2, 39, 512, last */
	vv_unmount(&k, &v);
	ufx_reboot(&u);
	CHECK_EQ(vv_mount(&k, &v), 0);
	for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
		CHECK_EQ(vvol_read(&v, at[i], got, 1, 0), 0);
		CHECK(is_pattern(got, at[i], 1));
	}
	/* Every other sector of those chunks is zeros, not the disk's garbage. */
	static uint8_t big[256 * ED_SECTOR];
	CHECK_EQ(vvol_read(&v, 0, big, 256, 0), 0);
	for (uint64_t s = 0; s < 256; s++)
		if (s != 0 && s != 1 && s != 127 && s != 128)
			CHECK(is_zero(big + s * ED_SECTOR));
	CHECK_EQ(vvol_read(&v, 5000 - 10, big, 20, 0), 0);
	for (uint64_t s = 0; s < 20; s++)
		CHECK(s == 10 ? is_pattern(big + s * ED_SECTOR, 5000, 1) : is_zero(big + s * ED_SECTOR));
	/* A large read (past the cache), through mapped and unmapped chunks. */
	static uint8_t huge[4096 * ED_SECTOR];
	CHECK_EQ(vvol_read(&v, 65536 - 2048, huge, 4096, 0), 0);
	for (uint64_t s = 0; s < 4096; s++)
		CHECK(s == 2051 ? is_pattern(huge + s * ED_SECTOR, 65536 + 3, 1)
		                : is_zero(huge + s * ED_SECTOR));
	vv_unmount(&k, &v);
	ufx_free(&u);
}

/* ---- model ------------------------------------------------------------------ */

struct model {
	uint64_t n;
	uint32_t *tag;                /* 0: zeros */
};

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void check_range(struct vvol *v, const struct model *m, uint64_t lba, uint64_t n)
{
	static uint8_t buf[300 * ED_SECTOR];
	CHECK(n <= 300);
	if (n % 4 == 3) {
		/* Read around: a window reaching past the request on both sides. */
		uint64_t w0 = lba > n ? lba - n : 0, w1 = lba + 2 * n < m->n ? lba + 2 * n : m->n;
		CHECK_EQ(vvol_read_around(v, lba, buf, n, w0, w1), 0);
	} else {
		CHECK_EQ(vvol_read(v, lba, buf, n, (uint32_t)(n % 3) * 40), 0);
	}
	for (uint64_t s = 0; s < n; s++) {
		uint32_t t = m->tag[lba + s];
		int ok = t ? is_pattern(buf + s * ED_SECTOR, lba + s, t) : is_zero(buf + s * ED_SECTOR);
		if (!ok) {
			fprintf(stderr, "model: sector %llu: expected tag %u\n",
			        (unsigned long long)(lba + s), t);
			CHECK(ok);
		}
	}
}

static void test_model(uint32_t chunk, uint64_t seed)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_POLLED, seed);
	garbage_fill(&u);
	struct kit k;
	struct vvol v = { 0 };
	struct model m = { 40000, calloc(40000, sizeof(uint32_t)) };
	CHECK_EQ(vv_create(&k, &v, m.n, chunk), 0);
	uint64_t x = seed * 7919 + 1;
	static uint8_t buf[300 * ED_SECTOR];
	uint32_t tag = 1;
	for (int op = 0; op < 1500; op++) {
		uint64_t r = rnd(&x) % 100;
		uint64_t len = 1 + rnd(&x) % (r < 5 ? 300 : 40);
		uint64_t lba = rnd(&x) % (m.n - len);
		if (r < 45) {
			tag++;
			for (uint64_t s = 0; s < len; s++) {
				pattern(buf + s * ED_SECTOR, lba + s, tag);
				m.tag[lba + s] = tag;
			}
			int cls = (int)(rnd(&x) % VV_NCLASS), e = vvol_write(&v, lba, buf, len, cls);
			if (e == -ENOBUFS) {
				/* The cache is full of dirty blocks: write them back. */
				CHECK_EQ(vvol_sync(&v, VV_ALL), 0);
				e = vvol_write(&v, lba, buf, len, cls);
			}
			CHECK_EQ(e, 0);
		} else if (r < 80) {
			check_range(&v, &m, lba, len);
		} else if (r < 88) {
			CHECK_EQ(vvol_sync(&v, (unsigned)(rnd(&x) % 16)), 0);
		} else if (r < 93) {
			len = (1 + rnd(&x) % 4) * chunk + rnd(&x) % chunk;
			lba = rnd(&x) % (m.n - len);
			CHECK_EQ(vvol_discard(&v, lba, len), 0);
			uint64_t c0 = (lba + chunk - 1) / chunk, c1 = (lba + len) / chunk;
			for (uint64_t s = c0 * chunk; s < c1 * chunk && s < m.n; s++)
				m.tag[s] = 0;
		} else if (r < 96) {
			/* Write back everything and come back after a reboot. */
			vv_unmount(&k, &v);
			ufx_reboot(&u);
			CHECK_EQ(vv_mount(&k, &v), 0);
		} else {
			if (vvol_write(&v, lba, NULL, len, 0) == -ENOBUFS) {
				CHECK_EQ(vvol_sync(&v, VV_ALL), 0);
				CHECK_EQ(vvol_write(&v, lba, NULL, len, 0), 0);
			}
			for (uint64_t s = 0; s < len; s++)
				m.tag[lba + s] = 0;
		}
	}
	vv_unmount(&k, &v);
	ufx_reboot(&u);
	CHECK_EQ(vv_mount(&k, &v), 0);
	for (uint64_t lba = 0; lba < m.n; lba += 300)
		check_range(&v, &m, lba, m.n - lba < 300 ? m.n - lba : 300);
	vv_unmount(&k, &v);
	fx_check_live(&u.f);
	free(m.tag);
	ufx_free(&u);
}

/* ---- read-around ------------------------------------------------------------------ */

static void test_around(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_POLLED, 31);
	garbage_fill(&u);
	struct kit k;
	struct vvol v = { 0 };
	const uint64_t n = 8192;                     /* 4 MiB; data in the first 2 MiB */
	CHECK_EQ(vv_create(&k, &v, n, 128), 0);
	static uint8_t buf[4096 * ED_SECTOR];
	for (uint64_t s = 0; s < 4096; s++)
		pattern(buf + s * ED_SECTOR, s, 7);
	CHECK_EQ(vvol_write(&v, 0, buf, 4096, 0), 0);
	CHECK_EQ(vvol_sync(&v, VV_ALL), 0);
	vv_unmount(&k, &v);
	ufx_reboot(&u);
	CHECK_EQ(vv_mount(&k, &v), 0);
	/* One sector dirty in the cache: it must win over the disk's copy. */
	uint8_t sec[ED_SECTOR];
	pattern(sec, 1000, 8);
	CHECK_EQ(vvol_write(&v, 1000, sec, 1, 0), 0);
	/* 4 KiB reads in a scrambled order over the first 2 MiB, each miss
	 * reading its aligned 64 KiB (128 sectors). */
	uint64_t reqs0 = v.st.rd_reqs, sect0 = v.st.rd_sect;
	for (uint64_t i = 0; i < 512; i++) {
		uint64_t blk = (i * 167) % 512, lba = blk * 8;
		uint64_t w0 = lba - lba % 128;
		CHECK_EQ(vvol_read_around(&v, lba, buf, 8, w0, w0 + 128), 0);
		for (uint64_t s = 0; s < 8; s++)
			CHECK(is_pattern(buf + s * ED_SECTOR, lba + s, lba + s == 1000 ? 8 : 7));
	}
	/* A request per 64 KiB (32), and one more where the dirty sector
	 * splits its window in two. */
	CHECK_EQ(v.st.rd_reqs - reqs0, 33);
	CHECK_EQ(v.st.rd_sect - sect0, 4096 - 1);    /* each sector once, the dirty one never */
	/* A window clipped short reads no further than it says. */
	reqs0 = v.st.rd_reqs;
	sect0 = v.st.rd_sect;
	CHECK_EQ(vvol_read_around(&v, 4096 + 300, buf, 8, 4096 + 290, 4096 + 320), 0);
	CHECK_EQ(v.st.rd_sect - sect0, 0);           /* never written: zeros, no request */
	CHECK(is_zero(buf));
	/* Bad windows are refused. */
	CHECK_EQ(vvol_read_around(&v, 100, buf, 8, 101, 200), -EINVAL);
	CHECK_EQ(vvol_read_around(&v, 100, buf, 8, 0, 107), -EINVAL);
	vv_unmount(&k, &v);
	ufx_free(&u);
}

/* ---- classes ----------------------------------------------------------------- */

static void test_classes(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_POLLED, 14);
	garbage_fill(&u);
	struct kit k;
	struct vvol v = { 0 };
	CHECK_EQ(vv_create(&k, &v, 100000, 64), 0);
	uint8_t sec[ED_SECTOR];
	for (uint64_t s = 1000; s < 1064; s++) {
		pattern(sec, s, 7);
		CHECK_EQ(vvol_write(&v, s, sec, 1, s % 2 ? 2 : 0), 0);
	}
	/* Dirtied again in class 3: keeps class 0. */
	pattern(sec, 1010, 7);
	CHECK_EQ(vvol_write(&v, 1010, sec, 1, 3), 0);
	CHECK_EQ(vvol_dirty_sectors(&v, 1u << 0), 32);
	CHECK_EQ(vvol_dirty_sectors(&v, 1u << 2), 32);
	CHECK_EQ(vvol_sync(&v, 1u << 0), 0);
	CHECK_EQ(vvol_dirty_sectors(&v, VV_ALL), 32);
	/* The power fails: the odd sectors were never written. */
	vvol_close(&v);
	hooked = NULL;
	ufx_crash(&u);
	CHECK_EQ(vv_mount(&k, &v), 0);
	uint8_t got[ED_SECTOR];
	for (uint64_t s = 1000; s < 1064; s++) {
		CHECK_EQ(vvol_read(&v, s, got, 1, 0), 0);
		CHECK(s % 2 ? is_zero(got) : is_pattern(got, s, 7));
	}
	vv_unmount(&k, &v);
	ufx_free(&u);
}

/* ---- footprint ------------------------------------------------------------------- */

static void test_footprint(void)
{
	struct ufx u;
	ufx_new(&u, 131072, HD_POLLED, 15);
	struct kit k;
	struct vvol v = { 0 };
	uint64_t free0 = 0;
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(edc_default(), 0, &fm), 0);
	free0 = edc_fm_count_free(&fm);
	CHECK_EQ(vv_create(&k, &v, 8ull << 20, 0), 0);
	/* 10 MiB in 4 KiB pieces, in order, somewhere in the middle. */
	static uint8_t buf[8 * ED_SECTOR];
	memset(buf, 0x42, sizeof buf);
	for (uint64_t i = 0; i < 2560; i++) {
		CHECK_EQ(vvol_write(&v, 3000000 + i * 8, buf, 8, 0), 0);
		if (i % 256 == 255)
			CHECK_EQ(vvol_sync(&v, VV_ALL), 0);
	}
	CHECK_EQ(vvol_sync(&v, VV_ALL), 0);
	uint64_t used = free0 - edc_fm_count_free(&fm);
	printf("test_vvol: 10 MiB in a 4 GiB volume: %llu KiB of the disk (map %llu KiB)\n",
	       (unsigned long long)used / 2,
	       (unsigned long long)(vvol_footprint(&v) - 20480) / 2);
	CHECK(used <= 20480 + 128 + 6 * 4 + 2);     /* data, one more chunk at the edges, nodes,
	                                               anchor and lock */
	CHECK_EQ(vvol_discard(&v, 3000000, 20480), 0);
	CHECK_EQ(vvol_sync(&v, VV_ALL), 0);
	/* Freed once the commit is durable (it is: vvol_sync waited). */
	used = free0 - edc_fm_count_free(&fm);
	printf("test_vvol: after discarding it: %llu KiB\n", (unsigned long long)used / 2);
	CHECK(used <= 2 * 128 + 6 * 4 + 2);          /* the two edge chunks, nodes, anchor, lock */
	vv_unmount(&k, &v);
	ufx_free(&u);
}

/* ---- powercut ------------------------------------------------------------------- */

#define PC_N      4000           /* volume sectors */
#define PC_ROUNDS 6

/* Round r's writes: sector s gets tag r+1 if it is chosen in round r. */
static int chosen(uint64_t s, int r)
{
	return ((s * 2654435761u) >> 7) % 23 == (uint64_t)r % 23 && (s / 97) % 3 != (uint64_t)r % 3;
}

/* Round r discards this chunk range (every third round). */
static void discarded(int r, uint64_t *lba, uint64_t *n)
{
	*lba = (uint64_t)(r * 2311) % (PC_N - 2000);
	*n = r % 3 == 2 ? 1500 : 0;
}

/* The tag sector s has after rounds 0..r-1 (0: zeros); with writes_only,
 * the last of them is taken without its discard. */
static uint32_t tag_after(uint64_t s, int rounds, uint32_t chunk, int writes_only)
{
	uint32_t t = 0;
	for (int r = 0; r < rounds; r++) {
		if (chosen(s, r))
			t = (uint32_t)r + 1;
		if (writes_only && r == rounds - 1)
			break;
		uint64_t lba, n;
		discarded(r, &lba, &n);
		uint64_t c0 = (lba + chunk - 1) / chunk, c1 = (lba + n) / chunk;
		if (n && s >= c0 * chunk && s < c1 * chunk)
			t = 0;
	}
	return t;
}

static int pc_prepare_vv(struct pcut *pc)
{
	struct kit k;
	struct vvol v = { 0 };
	int e = vv_create(&k, &v, PC_N, 32);
	if (e == 0) {
		vvol_close(&v);
		kit_unmount(&k);
	}
	return e;
}

static int pc_work_vv(struct pcut *pc)
{
	struct kit k;
	struct vvol v = { 0 };
	int e = vv_mount(&k, &v);
	static uint8_t sec[ED_SECTOR];
	for (int r = 0; e == 0 && r < PC_ROUNDS; r++) {
		for (uint64_t s = 0; e == 0 && s < PC_N; s++)
			if (chosen(s, r)) {
				pattern(sec, s, (uint32_t)r + 1);
				e = vvol_write(&v, s, sec, 1, (int)(s % 3));
			}
		uint64_t lba, n;
		discarded(r, &lba, &n);
		/* Discards come after the writes of their round are durable. */
		for (int c = 0; e == 0 && c < 3; c++)
			e = vvol_sync(&v, 1u << c);
		if (e == 0 && n)
			e = vvol_discard(&v, lba, n);
		if (e == 0)
			e = vvol_sync(&v, VV_ALL);
		if (e == 0)
			pc_ack(pc, (uint64_t)r + 1);
	}
	/* After a cut the process just dies: its memory goes, nothing is written. */
	vvol_close(&v);
	if (e == 0)
		kit_unmount(&k);
	return e;
}

static int pc_check_vv(struct pcut *pc)
{
	struct kit k;
	struct vvol v = { 0 };
	int e = vv_mount(&k, &v);
	if (e < 0) {
		fprintf(stderr, "vvol powercut: mount: %d\n", e);
		return 1;
	}
	int bad = 0;
	static uint8_t buf[200 * ED_SECTOR];
	for (uint64_t lba = 0; lba < PC_N && !bad; lba += 200) {
		uint64_t n = PC_N - lba < 200 ? PC_N - lba : 200;
		if (vvol_read(&v, lba, buf, n, 0) != 0) {
			bad = 1;
			break;
		}
		for (uint64_t i = 0; i < n && !bad; i++) {
			uint64_t s = lba + i;
			uint8_t *p = buf + i * ED_SECTOR;
			/* The acknowledged state, or the round after it with its
			 * writes and perhaps its discard: sector by sector. */
			int next = (int)pc->acked + 1 > PC_ROUNDS ? PC_ROUNDS : (int)pc->acked + 1;
			uint32_t a = tag_after(s, (int)pc->acked, 32, 0);
			uint32_t w = tag_after(s, next, 32, 1);
			uint32_t b = tag_after(s, next, 32, 0);
			int ok = (a ? is_pattern(p, s, a) : is_zero(p)) || (b ? is_pattern(p, s, b) : is_zero(p)) ||
			         (w ? is_pattern(p, s, w) : is_zero(p));
			if (!ok) {
				/* Say what it holds instead. */
				long what = -1;
				for (uint64_t o = s > 300 ? s - 300 : 0; what < 0 && o < s + 300; o++)
					for (uint32_t t = 1; t <= PC_ROUNDS; t++)
						if (is_pattern(p, o, t))
							what = (long)(o * 10 + t);
				fprintf(stderr, "vvol powercut: sector %llu (acked %llu): tag %u, %u or %u "
				        "expected, found %s %ld/%ld\n", (unsigned long long)s,
				        (unsigned long long)pc->acked, a, w, b,
				        p[0] == GARBAGE && p[1] == GARBAGE ? "old garbage" : is_zero(p) ?
				        "zeros" : "sector/tag", what / 10, what % 10);
				bad = 1;
			}
		}
	}
	vvol_close(&v);
	kit_unmount(&k);
	return bad;
}

/* Every request with VVOL_PC_STRIDE=1 in the environment; make test cuts
 * at every fifth. */
static void test_powercut(void)
{
	struct pcut pc = { .name = "vvol", .nsectors = 16384, .seed = 16, .prepare = pc_prepare_vv,
	                   .work = pc_work_vv, .check = pc_check_vv };
	const char *st = getenv("VVOL_PC_STRIDE");
	CHECK_EQ(pc_run(&pc, 0, -1, st ? atoll(st) : 5), 0);
	printf("test_vvol: %llu requests, power cut at %llu of them\n",
	       (unsigned long long)pc.requests, (unsigned long long)pc.runs - 1);
	pc_free(&pc);
}

int main(int argc, char **argv)
{
	if (argc == 2) {
		/* test_vvol CUT: one power-cut run, to debug it. */
		struct pcut pc = { .name = "vvol", .nsectors = 16384, .seed = 16, .prepare = pc_prepare_vv,
		                   .work = pc_work_vv, .check = pc_check_vv, .verbose = 1 };
		pc_prepare(&pc);
		int r = pc_one(&pc, atoll(argv[1]), NULL);
		printf("cut %s: check %d, acked %llu\n", argv[1], r, (unsigned long long)pc.acked);
		pc_free(&pc);
		return r;
	}
	test_zeros();
	test_basic();
	test_model(8, 21);
	test_model(64, 22);
	test_model(128, 23);
	test_model(2048, 24);
	test_around();
	test_classes();
	test_footprint();
	test_powercut();
	printf("test_vvol: ok\n");
	return 0;
}
