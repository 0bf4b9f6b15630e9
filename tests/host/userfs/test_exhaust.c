/*
 * test_exhaust.c - issue 17, F3: when a resource runs out, the operation
 * that cannot proceed fails with the right errno, and nothing already
 * accepted is dropped.  For each resource - the disk nearly full, one file
 * at the extent limit, the exodisk's cache held by another process - files
 * written and closed without error must read back after the failure, a
 * sync and a clean reboot, and the failing operation (or the sync or
 * unmount that finds it) must say so.  Before the fix one failed
 * write-back made ufs_sync give up and the other files were lost at exit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include "tests/host/userfs/vfsio.h"

#define OPTS "unit=0,key=exhaust"

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

/* The accepted files, by name, size and seed. */
struct kept {
	char path[32];
	size_t size;
	uint32_t seed;
};

static int check_kept(const struct kept *k, int n, const char *when)
{
	static uint8_t buf[1 << 20];
	int lost = 0;
	for (int i = 0; i < n; i++) {
		pattern_fill(buf, k[i].size, k[i].seed);
		if (!vfs_same(k[i].path, buf, k[i].size)) {
			if (lost < 5)
				fprintf(stderr, "  %s: %s (%zu bytes, written and closed without error) "
				        "is lost or wrong\n", when, k[i].path, k[i].size);
			lost++;
		}
	}
	if (lost)
		fprintf(stderr, "  %s: %d of %d accepted files lost\n", when, lost, n);
	return lost;
}

static void reboot_and_check(struct ufx *u, const struct kept *k, int n, const char *what)
{
	CHECK_EQ(vfs_umount("/"), 0);
	ufx_reboot(u);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
	CHECK_EQ(check_kept(k, n, what), 0);
	CHECK_EQ(vfs_umount("/"), 0);
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	CHECK_EQ(st.problems, 0);
}

/* The disk nearly full: small files in the directory's space, then files
 * of a few blocks, until the disk refuses; each accepted one survives the
 * sync, and the refusal is ENOSPC at write or close, not at the sync. */
static void test_disk_full(int small)
{
	struct ufx u;
	ufx_new(&u, 8192, HD_SYNC, 11 + small);
	ufx_mkfs(&u, OPTS);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
	static struct kept k[4096];
	static uint8_t buf[1 << 20];
	int n = 0, refused = 0;
	/* Most of the disk in one file first, so the rest fills fast. */
	pattern_fill(buf, sizeof buf, 1);
	snprintf(k[n].path, sizeof k[n].path, "/big");
	CHECK_EQ(vfs_put("/big", buf, 2 << 19), 0);
	k[n].size = 2 << 19;
	k[n++].seed = 1;
	CHECK_EQ(vfs_mkdir("/d", 0755), 0);
	for (int i = 0; n < 4096 && refused < 8; i++) {
		struct kept *f = &k[n];
		snprintf(f->path, sizeof f->path, "/d/f%d", i);
		f->size = small ? 200 + (size_t)(i % 7) * 300 : 3 * 4096 + (size_t)(i % 5) * 4096;
		f->seed = 1000 + (uint32_t)i;
		pattern_fill(buf, f->size, f->seed);
		int e = vfs_put(f->path, buf, f->size);
		if (e == 0) {
			n++;
			continue;
		}
		/* The refusal must be the disk's. */
		if (e != -ENOSPC) {
			fprintf(stderr, "  %s: refused with %d, not ENOSPC\n", f->path, e);
			CHECK(0);
		}
		refused++;
		vfs_unlink(f->path);
	}
	CHECK(refused > 0);
	CHECK(n > 10);
	/* Everything accepted is written back: the sync has nothing to refuse. */
	int s = vfs_sync();
	if (s != 0)
		fprintf(stderr, "  sync after filling the disk (%s files): %d\n", small ? "small" : "larger", s);
	CHECK_EQ(check_kept(k, n, "after the sync"), 0);
	CHECK_EQ(s, 0);
	reboot_and_check(&u, k, n, "after a reboot");
	ufx_free(&u);
}

/* One file fragmented until it has all the extents a unixfs file can
 * have: its write or fsync fails with EFBIG; files written before and
 * after it, closed without error, survive the sync and a reboot. */
static void test_extent_limit(void)
{
	struct ufx u;
	ufx_new(&u, 1 << 18, HD_SYNC, 21);
	ufx_mkfs(&u, OPTS);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
	static struct kept k[8];
	static uint8_t buf[4096 * 4];
	int n = 0;
	pattern_fill(buf, 5000, 7);
	CHECK_EQ(vfs_put("/before", buf, 5000), 0);
	snprintf(k[n].path, sizeof k[n].path, "/before");
	k[n].size = 5000;
	k[n++].seed = 7;
	CHECK_EQ(vfs_sync(), 0);
	/* Two files a block at a time, in turn, synced each time: neither gets
	 * two neighbouring blocks, so /frag has an extent per block. */
	struct vfile *fa, *fb;
	CHECK_EQ(vfs_open("/frag", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fa), 0);
	CHECK_EQ(vfs_open("/spacer", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fb), 0);
	int err = 0;
	long i;
	memset(buf, 'f', 4096);
	for (i = 0; i < 20000 && err == 0; i++) {
		long w = vfs_pwrite(fa, buf, 4096, (uint64_t)i * 4096);
		if (w < 0) {
			err = (int)w;
			break;
		}
		if ((err = vfs_fsync(fa)) < 0)
			break;
		CHECK_EQ(vfs_pwrite(fb, buf, 4096, (uint64_t)i * 4096), 4096);
		CHECK_EQ(vfs_fsync(fb), 0);
	}
	if (err != -EFBIG)
		fprintf(stderr, "  /frag: %ld blocks, then error %d (want EFBIG)\n", i, err);
	CHECK_EQ(err, -EFBIG);
	/* An unrelated file written afterwards. */
	pattern_fill(buf, sizeof buf, 8);
	CHECK_EQ(vfs_put("/after", buf, sizeof buf), 0);
	snprintf(k[n].path, sizeof k[n].path, "/after");
	k[n].size = sizeof buf;
	k[n++].seed = 8;
	pattern_fill(buf, 300, 9);
	CHECK_EQ(vfs_put("/small-after", buf, 300), 0);
	snprintf(k[n].path, sizeof k[n].path, "/small-after");
	k[n].size = 300;
	k[n++].seed = 9;
	/* The sync reports /frag's failure again (it still holds an unwritten
	 * block) but writes back everything else. */
	int s = vfs_sync();
	CHECK_EQ(check_kept(k, n, "after the sync"), 0);
	CHECK_EQ(s, -EFBIG);
	/* Closing /frag says its last block could not be written back. */
	CHECK_EQ(vfs_close(fa), -EFBIG);
	CHECK_EQ(vfs_close(fb), 0);
	/* So does the unmount (a program's exit): that block is the one thing
	 * lost. */
	CHECK_EQ(vfs_umount("/"), -EFBIG);
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
	CHECK_EQ(check_kept(k, n, "after a reboot"), 0);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/frag", &st), 0);
	CHECK(st.size >= (uint64_t)(i - 1) * 4096);
	reboot_and_check(&u, k, n, "after a second reboot");
	ufx_free(&u);
}

/* The exodisk's cache held by another process (its entries dirty, at its
 * quota): our write-backs fail while it lives.  A sync then says so and
 * drops nothing; once it is gone the next sync writes everything. */
static void test_cache_held(void)
{
	struct ufx u;
	struct ed_config cfg = { .cache_entries = 31 };
	memset(&u, 0, sizeof u);
	fx_new(&u.f, 65536, HD_SYNC, &cfg, 31);
	ufx_start(&u);
	ufx_mkfs(&u, OPTS);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
	static struct kept k[512];
	static uint8_t buf[20000];
	int n = 0;
	for (int d = 0; d < 4; d++) {
		char p[32];
		snprintf(p, sizeof p, "/d%d", d);
		CHECK_EQ(vfs_mkdir(p, 0755), 0);
	}
	CHECK_EQ(vfs_sync(), 0);
	/* The hog: as many dirty exonodes as the core lets it hold. */
	struct edc_host b;
	edc_host_init(&b, &u.f.h, u.f.ed);
	struct ed_cap rc = h_cap(1, 2), wc = h_cap(3, 4);
	int held = 0;
	for (uint64_t s = 60000; held < 64; held++, s += 8) {
		struct ed_protector p = edc_prot_xn(0, s, 0, &rc, &wc);
		p.length = 128;
		if (edc_xn_alloc(&b.edc, &p) != 0)
			break;
	}
	CHECK(held >= 4);
	int failed = 0;
	for (int i = 0; i < 200; i++) {
		struct kept *f = &k[n];
		snprintf(f->path, sizeof f->path, "/d%d/f%d", i % 4, i);
		f->size = i % 3 == 0 ? sizeof buf : 100 + (size_t)i;
		f->seed = 5000 + (uint32_t)i;
		pattern_fill(buf, f->size, f->seed);
		int e = vfs_put(f->path, buf, f->size);
		if (e == 0)
			n++;
		else
			failed++;
	}
	int s = vfs_sync();
	fprintf(stderr, "  cache held by another process (%d entries): %d of 200 files accepted, "
	        "sync %d\n", held, n, s);
	CHECK_EQ(check_kept(k, n, "while the cache is held"), 0);
	edc_host_exit(&b);
	CHECK_EQ(vfs_sync(), 0);
	reboot_and_check(&u, k, n, "after the other process exited and a reboot");
	ufx_free(&u);
}

int main(void)
{
	test_disk_full(1);
	test_disk_full(0);
	test_cache_held();
	test_extent_limit();
	printf("test_exhaust: ok\n");
	return 0;
}
