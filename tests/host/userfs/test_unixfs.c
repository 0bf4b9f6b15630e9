/*
 * test_unixfs.c - unixfs through the mount table on a host test disk:
 * files small (immediate) and large (map nodes), directories, rename,
 * persistence across a clean reboot, the three persistence models, the
 * mount lock, a wrong key, two owners on one disk, another process taking
 * the sectors unixfs chose, and bad input (long names, missing files, a full
 * disk, corrupted directories and inodes).  test_unixfs_model.c does the
 * long randomized runs against a model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include "userfs/unixfs/ufs_format.h"
#include "libos/capkey.h"

#define OPTS "unit=0,key=test-secret"

static void pattern(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (uint8_t)(seed >> 56);
	}
}

static void put(const char *path, const void *data, size_t n)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f), 0);
	CHECK_EQ(vfs_write(f, data, n), (long)n);
	CHECK_EQ(vfs_close(f), 0);
}

static void expect(const char *path, const void *data, size_t n)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_READ, 0, &f), 0);
	uint8_t *buf = malloc(n + 16);
	CHECK_EQ(vfs_read(f, buf, n + 16), (long)n);
	CHECK(memcmp(buf, data, n) == 0);
	free(buf);
	struct libfs_stat st;
	CHECK_EQ(vfs_fstat(f, &st), 0);
	CHECK_EQ(st.size, n);
	CHECK_EQ(vfs_close(f), 0);
}

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

static void mount_it(void)
{
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
}

static void umount_it(void)
{
	CHECK_EQ(vfs_umount("/"), 0);
}

/* Files of many sizes: immediate, one block, several, past the direct
 * extents into map nodes.  Survives a reboot. */
static void test_sizes(struct ufx *u)
{
	static const size_t sizes[] = { 0, 1, 100, 352, 353, 4096, 4097, 10240, 65536, 300000,
	                                2 * 1024 * 1024 + 17 };
	const int n = (int)(sizeof sizes / sizeof sizes[0]);
	uint8_t *buf = malloc(3 * 1024 * 1024);
	mount_it();
	CHECK_EQ(vfs_mkdir("/d", 0755), 0);
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/f%d", i);
		pattern(buf, sizes[i], (uint64_t)i);
		put(path, buf, sizes[i]);
		expect(path, buf, sizes[i]);
	}
	umount_it();
	ufx_reboot(u);
	mount_it();
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/f%d", i);
		pattern(buf, sizes[i], (uint64_t)i);
		expect(path, buf, sizes[i]);
	}
	/* Overwrite in the middle, append, truncate down and up. */
	struct vfile *f;
	CHECK_EQ(vfs_open("/d/f9", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	pattern(buf, 300000, 9);
	memset(buf + 5000, 'x', 10000);
	CHECK_EQ(vfs_pwrite(f, buf + 5000, 10000, 5000), 10000);
	CHECK_EQ(vfs_ftruncate(f, 7000), 0);
	CHECK_EQ(vfs_ftruncate(f, 9000), 0);
	memset(buf + 7000, 0, 2000);
	CHECK_EQ(vfs_close(f), 0);
	expect("/d/f9", buf, 9000);
	umount_it();
	ufx_reboot(u);
	mount_it();
	expect("/d/f9", buf, 9000);
	umount_it();
	free(buf);
}

/* A full disk is -ENOSPC at write(), files written before are intact,
 * and removing one makes room again. */
static void test_enospc(void)
{
	struct ufx u;
	ufx_new(&u, 8192, HD_SYNC, 2);
	ufx_mkfs(&u, OPTS);
	mount_it();
	static uint8_t buf[256 * 1024];
	int n = 0;
	long r = 0;
	for (; n < 100; n++) {
		char path[32];
		snprintf(path, sizeof path, "/f%d", n);
		struct vfile *f;
		CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
		pattern(buf, sizeof buf, (uint64_t)n);
		r = vfs_write(f, buf, sizeof buf);
		CHECK_EQ(vfs_close(f), 0);
		if (r != (long)sizeof buf)
			break;
	}
	CHECK(n > 2 && n < 100);
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(vfs_sync(), 0);
	umount_it();
	ufx_reboot(&u);
	mount_it();
	for (int i = 0; i < n; i++) {
		char path[32];
		snprintf(path, sizeof path, "/f%d", i);
		pattern(buf, sizeof buf, (uint64_t)i);
		expect(path, buf, sizeof buf);
	}
	/* The file that did not fit is there, empty. */
	char path[32];
	snprintf(path, sizeof path, "/f%d", n);
	expect(path, buf, 0);
	CHECK_EQ(vfs_unlink("/f0"), 0);
	pattern(buf, sizeof buf, 77);
	put("/again", buf, sizeof buf);
	expect("/again", buf, sizeof buf);
	umount_it();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

/* A small exodisk cache (31 entries, 23 per process): unixfs keeps working
 * by writing back, also while another process holds what it may; when its
 * whole share is taken by changes it can never write back (memory-only
 * files' exonodes), creating more is -ENOSPC, and freeing them recovers. */
static void test_cache_full(void)
{
	struct ufx u;
	struct ed_config cfg = { .cache_entries = 31 };
	memset(&u, 0, sizeof u);
	fx_new(&u.f, 65536, HD_SYNC, &cfg, 3);
	ufx_start(&u);
	ufx_mkfs(&u, OPTS);
	mount_it();
	/* Another process holds entries with changes of its own. */
	struct edc_host b;
	edc_host_init(&b, &u.f.h, u.f.ed);
	struct ed_cap rc = h_cap(1, 2), wc = h_cap(3, 4);
	int held = 0;
	for (uint64_t s = 60000; held < 40; held++, s += 8) {
		struct ed_protector p = edc_prot_xn(0, s, 0, &rc, &wc);
		p.length = 128;
		if (edc_xn_alloc(&b.edc, &p) != 0)
			break;
	}
	CHECK(held >= 4);
	uint8_t buf[600];
	for (int d = 0; d < 6; d++) {
		char path[64];
		snprintf(path, sizeof path, "/d%d", d);
		CHECK_EQ(vfs_mkdir(path, 0755), 0);
		for (int i = 0; i < 20; i++) {
			snprintf(path, sizeof path, "/d%d/f%d", d, i);
			pattern(buf, sizeof buf, (uint64_t)(d * 100 + i));
			put(path, buf, sizeof buf);
		}
	}
	CHECK_EQ(vfs_sync(), 0);
	/* Memory-only files until the share is gone. */
	int r = 0, n = 0;
	for (; n < 200 && r == 0; n++) {
		char path[64];
		snprintf(path, sizeof path, "/d5/m%d", n);
		struct vfile *f;
		r = vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f);
		if (r == 0) {
			r = vfs_persist(f, LIBFS_P_MEMORY);
			vfs_close(f);
		}
	}
	CHECK_EQ(r, -ENOSPC);
	CHECK(n > 4);
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d5/m%d", i);
		vfs_unlink(path);
	}
	edc_host_exit(&b);
	put("/d5/after", buf, sizeof buf);
	CHECK_EQ(vfs_sync(), 0);
	umount_it();
	ufx_reboot(&u);
	mount_it();
	for (int d = 0; d < 6; d++)
		for (int i = 0; i < 20; i++) {
			char path[64];
			snprintf(path, sizeof path, "/d%d/f%d", d, i);
			pattern(buf, sizeof buf, (uint64_t)(d * 100 + i));
			expect(path, buf, sizeof buf);
		}
	expect("/d5/after", buf, sizeof buf);
	umount_it();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

/* The protector of an inode, computed as unixfs does, for poking at it. */
static struct ed_protector inode_prot(uint64_t ino)
{
	struct capkey k;
	CHECK_EQ(capkey_from_opts(&k, "unixfs", OPTS), 0);
	uint64_t sector = ufs_ino_sector(ino);
	uint16_t slot = (uint16_t)ufs_ino_slot(ino);
	struct ed_cap rc = capkey_cap(&k, 'r', sector, slot), wc = capkey_cap(&k, 'w', sector, slot);
	return edc_prot_xn(0, sector, slot, &rc, &wc);
}

/* A directory whose data is garbage, and an inode with malformed metadata:
 * -EIO for what needs them, nothing else disturbed, no crash. */
static void test_corruption(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 4);
	ufx_mkfs(&u, OPTS);
	mount_it();
	uint8_t buf[5000];
	CHECK_EQ(vfs_mkdir("/big", 0755), 0);
	CHECK_EQ(vfs_mkdir("/ok", 0755), 0);
	for (int i = 0; i < 40; i++) {            /* large enough to have extents */
		char path[64];
		snprintf(path, sizeof path, "/big/file-with-a-long-name-%d", i);
		put(path, "x", 1);
	}
	pattern(buf, sizeof buf, 5);
	put("/ok/keep", buf, sizeof buf);
	put("/victim", buf, 100);
	struct libfs_stat big, victim;
	CHECK_EQ(vfs_stat("/big", &big), 0);
	CHECK_EQ(vfs_stat("/victim", &victim), 0);
	CHECK(big.size > UFS_IMM_MAX);
	umount_it();

	/* Garbage over the directory's first data sector, on the medium. */
	struct ed_protector p = inode_prot(big.ino);
	CHECK_EQ(edc_xn_read_sync(&u.p.edc, &p), 0);
	int64_t addr = edc_xn_map(&u.p.edc, &p);
	CHECK(addr > 0);
	const struct ed_xnmap_hdr *h = (const void *)(uintptr_t)addr;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	uint64_t data = 0;
	for (uint32_t i = 0; i < h->nent; i++)
		if (ent[i].type == ED_ENT_EXTENT && data == 0)
			data = ent[i].a;
	CHECK(data != 0);
	CHECK_EQ(edc_xn_unmap(&u.p.edc, &p, (uint64_t)addr), 0);
	/* Malformed but authentic metadata for the victim (we have its keys). */
	struct ed_protector v = inode_prot(victim.ino);
	struct ufs_dinode junk;
	memset(&junk, 0x5a, sizeof junk);
	CHECK_EQ(edc_xn_add_data(&u.p.edc, &v, UFS_E_META, &junk, sizeof junk), UFS_E_META);
	CHECK_EQ(edc_xn_write_sync(&u.p.edc, &v), 0);
	ufx_reboot(&u);
	memset(hostdisk_sector(&u.f.hd, data), 0xa7, 512);

	mount_it();
	struct libfs_stat st;
	struct vfile *f;
	CHECK_EQ(vfs_stat("/big/file-with-a-long-name-3", &st), -EIO);
	CHECK_EQ(vfs_open("/big/new", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), -EIO);
	CHECK_EQ(vfs_open("/big", LIBFS_O_READ | LIBFS_O_DIR, 0, &f), 0);
	struct libfs_dirent de;
	int r;
	while ((r = vfs_readdir(f, &de)) == 1)
		;
	CHECK_EQ(r, -EIO);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_stat("/victim", &st), -EIO);
	CHECK_EQ(vfs_unlink("/victim"), -EIO);
	expect("/ok/keep", buf, sizeof buf);          /* the rest is fine */
	put("/ok/new", buf, 10);
	umount_it();
	struct ufs_fsck_stats fst;
	CHECK(unixfs_fsck(OPTS, say, NULL, &fst) >= 2);
	ufx_free(&u);
}

/* Write-through, write-back and memory-only files across a power failure. */
static void test_persistence(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_POLLED, 5);
	ufx_mkfs(&u, OPTS);
	mount_it();
	CHECK_EQ(vfs_mkdir("/p", 0755), 0);
	CHECK_EQ(vfs_sync(), 0);
	static uint8_t buf[20000];
	pattern(buf, sizeof buf, 6);
	struct vfile *wt, *wb, *mem;
	CHECK_EQ(vfs_open("/p/through", LIBFS_O_WRITE | LIBFS_O_READ | LIBFS_O_CREAT, 0644, &wt), 0);
	CHECK_EQ(vfs_persist(wt, LIBFS_P_WRITETHROUGH), 0);
	CHECK_EQ(vfs_write(wt, buf, sizeof buf), (long)sizeof buf);
	CHECK_EQ(vfs_open("/p/back", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &wb), 0);
	CHECK_EQ(vfs_write(wb, buf, sizeof buf), (long)sizeof buf);
	CHECK_EQ(vfs_open("/p/mem", LIBFS_O_WRITE | LIBFS_O_READ | LIBFS_O_CREAT, 0644, &mem), 0);
	CHECK_EQ(vfs_persist(mem, LIBFS_P_MEMORY), 0);
	CHECK_EQ(vfs_write(mem, buf, sizeof buf), (long)sizeof buf);
	struct libfs_stat st;
	CHECK_EQ(vfs_fstat(mem, &st), 0);
	CHECK(st.persist == LIBFS_P_MEMORY && st.size == sizeof buf && st.blocks == 0);
	CHECK_EQ(vfs_fstat(wt, &st), 0);
	CHECK(st.persist == LIBFS_P_WRITETHROUGH);
	/* The memory-only file is an ordinary file while mounted. */
	expect("/p/mem", buf, sizeof buf);
	CHECK_EQ(vfs_rename("/p/mem", "/p/mem2"), 0);
	expect("/p/mem2", buf, sizeof buf);
	/* An existing file cannot become memory-only. */
	CHECK_EQ(vfs_persist(wt, LIBFS_P_MEMORY), -EINVAL);
	/* Power fails: the write-through file is there in full. */
	vfs_abandon();
	ufx_crash(&u);
	mount_it();
	expect("/p/through", buf, sizeof buf);
	CHECK_EQ(vfs_stat("/p/through", &st), 0);
	CHECK(st.persist == LIBFS_P_WRITETHROUGH);   /* the choice is kept */
	CHECK_EQ(vfs_stat("/p/mem2", &st), -ENOENT);  /* never on disk */
	/* Memory-only files are gone after an unmount too, and leave nothing. */
	CHECK_EQ(vfs_open("/p/tmp", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &mem), 0);
	CHECK_EQ(vfs_persist(mem, LIBFS_P_MEMORY), 0);
	CHECK_EQ(vfs_write(mem, buf, 100), 100);
	CHECK_EQ(vfs_close(mem), 0);
	expect("/p/tmp", buf, 100);
	umount_it();
	mount_it();
	CHECK_EQ(vfs_stat("/p/tmp", &st), -ENOENT);
	umount_it();
	struct ufs_fsck_stats fst;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	ufx_free(&u);
}

/* One process at a time; a process that dies releases the file system. */
static void test_lock(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 6);
	ufx_mkfs(&u, OPTS);
	mount_it();
	put("/x", "hello", 5);
	/* A second process on the same machine. */
	struct edc_host b;
	edc_host_init(&b, &u.f.h, u.f.ed);
	edc_set_default(&b.edc);
	void *fs2;
	CHECK_EQ(unixfs_ops.mount(OPTS ",wait=0", &fs2), -EBUSY);
	/* The first dies without unmounting. */
	vfs_abandon();
	edc_host_exit(&u.p);
	u.running = 0;
	CHECK_EQ(unixfs_ops.mount(OPTS ",wait=0", &fs2), 0);
	CHECK_EQ(unixfs_ops.unmount(fs2), 0);
	edc_host_exit(&b);
	ufx_start(&u);
	/* A wrong key opens nothing. */
	CHECK_EQ(vfs_mount("/", "unixfs", "unit=0,key=wrong", 1), -EACCES);
	mount_it();
	umount_it();
	ufx_free(&u);
}

/* Two owners with separate file systems interleaved on one disk: neither
 * can read or write the other's data, even knowing exactly where it is. */
static void test_two_owners(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 7);
	struct edc_host a, b;
	edc_host_init(&a, &u.f.h, u.f.ed);
	edc_host_init(&b, &u.f.h, u.f.ed);
	edc_set_default(&a.edc);
	ufx_mkfs(&u, "key=alice");
	edc_set_default(&b.edc);
	ufx_mkfs(&u, "key=bob");
	edc_set_default(&a.edc);
	CHECK_EQ(vfs_mount("/a", "unixfs", "key=alice", 1), 0);
	edc_set_default(&b.edc);
	CHECK_EQ(vfs_mount("/b", "unixfs", "key=bob", 1), 0);
	static uint8_t abuf[40000], bbuf[40000];
	pattern(abuf, sizeof abuf, 10);
	pattern(bbuf, sizeof bbuf, 11);
	/* Interleaved creation, so their blocks interleave on the disk. */
	for (int i = 0; i < 12; i++) {
		char pa[32], pb[32];
		snprintf(pa, sizeof pa, "/a/f%d", i);
		snprintf(pb, sizeof pb, "/b/f%d", i);
		put(pa, abuf, sizeof abuf);
		CHECK_EQ(vfs_sync(), 0);
		put(pb, bbuf, sizeof bbuf);
		CHECK_EQ(vfs_sync(), 0);
	}
	CHECK_EQ(vfs_rename("/a/f0", "/b/f0x"), -EXDEV);
	struct libfs_stat sa, sb;
	CHECK_EQ(vfs_stat("/a/f3", &sa), 0);
	CHECK_EQ(vfs_stat("/b/f3", &sb), 0);
	CHECK_EQ(vfs_umount("/a"), 0);
	CHECK_EQ(vfs_umount("/b"), 0);
	/* Where bob's f3 lives, learned with bob's key... */
	struct capkey kb, ka;
	CHECK_EQ(capkey_from_opts(&kb, "unixfs", "key=bob"), 0);
	CHECK_EQ(capkey_from_opts(&ka, "unixfs", "key=alice"), 0);
	uint64_t sec = ufs_ino_sector(sb.ino);
	uint16_t slot = (uint16_t)ufs_ino_slot(sb.ino);
	struct ed_cap brc = capkey_cap(&kb, 'r', sec, slot), bwc = capkey_cap(&kb, 'w', sec, slot);
	struct ed_protector bp = edc_prot_xn(0, sec, slot, &brc, &bwc);
	int64_t addr = edc_xn_map(&b.edc, &bp);
	CHECK(addr > 0);
	const struct ed_xnmap_hdr *h = (const void *)(uintptr_t)addr;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	uint64_t data = 0;
	for (uint32_t i = 0; i < h->nent; i++)
		if (ent[i].type == ED_ENT_EXTENT && data == 0)
			data = ent[i].a;
	CHECK(data != 0);
	/* Alice's blocks sit between bob's: the disks are interleaved. */
	uint64_t asec = ufs_ino_sector(sa.ino);
	CHECK(asec > ufs_ino_sector(ufs_ino(sec, 0)) || asec < data);
	/* ...alice (whose key derives other capabilities) gets nowhere. */
	struct ed_cap arc = capkey_cap(&ka, 'r', sec, slot), awc = capkey_cap(&ka, 'w', sec, slot);
	struct ed_protector ap = edc_prot_xn(0, sec, slot, &arc, &awc);
	uint8_t got[512];
	CHECK_EQ(edc_read(&a.edc, &ap, data, got, 512), ED_E_CAP);
	CHECK_EQ(edc_write(&a.edc, &ap, data, abuf, 512), ED_E_CAP);
	CHECK_EQ(edc_xn_map(&a.edc, &ap), ED_E_CAP);
	CHECK_EQ(edc_xn_read_data(&a.edc, &ap, UFS_E_META, got, 64), ED_E_CAP);
	CHECK_EQ(edc_xn_add_data(&a.edc, &ap, UFS_E_META, got, 64), ED_E_CAP);
	CHECK_EQ(edc_xn_remove(&a.edc, &ap, UFS_E_DIRECT), ED_E_CAP);
	CHECK_EQ(edc_xn_dealloc(&a.edc, &ap), ED_E_CAP);
	/* Nor can she take bob's sectors into an exonode of her own. */
	struct ed_protector mine = edc_prot_xn(0, 65000, 0, &arc, &awc);
	mine.length = 128;
	CHECK_EQ(edc_xn_alloc(&a.edc, &mine), 0);
	CHECK_EQ(edc_xn_add_extent(&a.edc, &mine, -1, data, 512), ED_E_ALLOCATED);
	CHECK_EQ(edc_xn_dealloc(&a.edc, &mine), 0);
	/* Nor mount bob's file system with her key. */
	char o[64];
	snprintf(o, sizeof o, "key=alice,sb=%llu", (unsigned long long)ufs_ino_sector(sb.ino) / 1);
	edc_set_default(&a.edc);
	CHECK(vfs_mount("/x", "unixfs", o, 1) < 0);
	/* Bob's data is untouched. */
	edc_set_default(&b.edc);
	CHECK_EQ(vfs_mount("/b", "unixfs", "key=bob", 1), 0);
	for (int i = 0; i < 12; i++) {
		char pb[32];
		snprintf(pb, sizeof pb, "/b/f%d", i);
		expect(pb, bbuf, sizeof bbuf);
	}
	CHECK_EQ(vfs_umount("/b"), 0);
	edc_set_default(&a.edc);
	CHECK_EQ(vfs_mount("/a", "unixfs", "key=alice", 1), 0);
	expect("/a/f5", abuf, sizeof abuf);
	CHECK_EQ(vfs_umount("/a"), 0);
	edc_host_exit(&a);
	edc_host_exit(&b);
	edc_set_default(&u.p.edc);
	ufx_free(&u);
}

/* A file of hundreds of extents: the inode's direct entries, the single
 * indirect node and leaves of the double one, grown, read, shrunk back
 * through each, across a reboot. */
static void test_fragmented(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 8);
	ufx_mkfs(&u, OPTS ",cache=32");
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS ",cache=32", 1), 0);
	/* Two files written a block at a time, in turn, with a sync between:
	 * delayed allocation gives each its next block then, so they
	 * interleave and neither gets two neighbouring blocks. */
	const int nb = 320;
	static uint8_t a[320 * 4096], b[4096];
	pattern(a, sizeof a, 21);
	struct vfile *fa, *fb;
	CHECK_EQ(vfs_open("/frag", LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fa), 0);
	CHECK_EQ(vfs_open("/other", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fb), 0);
	for (int i = 0; i < nb; i++) {
		CHECK_EQ(vfs_pwrite(fa, a + (size_t)i * 4096, 4096, (uint64_t)i * 4096), 4096);
		CHECK_EQ(vfs_sync(), 0);
		CHECK_EQ(vfs_pwrite(fb, b, 4096, (uint64_t)i * 4096), 4096);
		CHECK_EQ(vfs_sync(), 0);
	}
	CHECK_EQ(vfs_close(fa), 0);
	CHECK_EQ(vfs_close(fb), 0);
	expect("/frag", a, sizeof a);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/frag", &st), 0);
	CHECK(st.blocks > (uint64_t)nb * 8 + 3 * 4);      /* map nodes as well as data */
	umount_it();
	struct ufs_fsck_stats fst;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	CHECK(fst.extents >= (uint64_t)nb && fst.mapnodes >= 3);
	ufx_reboot(&u);
	mount_it();
	expect("/frag", a, sizeof a);
	/* Shrink back through the double node's leaves, the single node, the
	 * direct entries, mid-extent each time. */
	static const size_t sizes[] = { 300 * 4096 + 100, 150 * 4096, 130 * 4096 + 1, 20 * 4096,
	                                 10 * 4096 + 5, 4097, 0 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		CHECK_EQ(vfs_open("/frag", LIBFS_O_WRITE, 0, &fa), 0);
		CHECK_EQ(vfs_ftruncate(fa, sizes[k]), 0);
		CHECK_EQ(vfs_close(fa), 0);
		CHECK_EQ(vfs_sync(), 0);
		expect("/frag", a, sizes[k]);
	}
	/* Nothing left but the inode: no extents, no map nodes. */
	CHECK_EQ(vfs_stat("/frag", &st), 0);
	CHECK_EQ(st.blocks, 1);
	umount_it();
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	CHECK(fst.mapnodes >= 3);                           /* /other's */
	ufx_free(&u);
}

/* Shrinking a file and growing it again shows zeros, never the old bytes -
 * also when reading the block the new end falls in brings the blocks after
 * it into the cache (read-ahead, from a cold cache). */
static void test_shrink_regrow(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 9);
	ufx_mkfs(&u, OPTS);
	mount_it();
	static uint8_t buf[70000], model[70000];
	pattern(buf, sizeof buf, 31);
	put("/f", buf, 64861);
	umount_it();
	mount_it();                              /* a cold cache */
	struct vfile *f;
	CHECK_EQ(vfs_open("/f", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, 3141), 0);
	CHECK_EQ(vfs_pwrite(f, buf, 5000, 15006), 5000);
	CHECK_EQ(vfs_close(f), 0);
	memset(model, 0, sizeof model);
	memcpy(model, buf, 3141);
	memcpy(model + 15006, buf, 5000);
	expect("/f", model, 20006);
	/* Growing by truncation, and across a remount. */
	CHECK_EQ(vfs_open("/f", LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, 1000), 0);
	CHECK_EQ(vfs_ftruncate(f, 60000), 0);
	CHECK_EQ(vfs_close(f), 0);
	memset(model + 1000, 0, sizeof model - 1000);
	expect("/f", model, 60000);
	umount_it();
	mount_it();
	expect("/f", model, 60000);
	umount_it();
	ufx_free(&u);
}

/* ---- a rival that takes the place unixfs chose ---------------------------
 * The free map is live, but between unixfs's look at it and its request
 * another process may allocate there.  This transport sits between unixfs
 * and the core and, on chosen allocations, lets a rival process take the
 * sectors first: an extent, an exonode block like an inode block, or one
 * with exonodes of another size.  unixfs must look elsewhere, not fail. */
struct rival {
	struct edc_host *inner;     /* unixfs's process */
	struct edc_host *other;     /* the rival */
	int every, n;               /* steal at every `every`th chance */
	int stolen[3];              /* by kind */
};

static int steal(struct rival *rv, uint64_t at)
{
	static const struct ed_cap junk = { { 0x5eed, 0xbad } };
	int kind = (rv->stolen[0] + rv->stolen[1] + rv->stolen[2]) % 3;
	struct ed_protector p = kind == 0 ? edc_prot_extent(0, at, &junk, &junk)
	                                  : edc_prot_xn(0, at, 0, &junk, &junk);
	p.length = kind == 0 ? 512 : kind == 1 ? UFS_INODE_BYTES : 64;
	int64_t r = kind == 0 ? edc_extent_alloc(&rv->other->edc, &p)
	                      : edc_xn_alloc(&rv->other->edc, &p);
	if (r == 0)
		rv->stolen[kind]++;
	return r == 0;
}

static int64_t rival_request(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
                             struct ed_operation *stuff)
{
	struct rival *rv = ctx;
	uint64_t at = UINT64_MAX;
	if (op == ED_OP_EXONODE_ALLOCATE && prot->xn_num == 0)
		at = prot->blkno;
	else if (op == ED_OP_EXONODE_ADD_EXTENT || op == ED_OP_EXONODE_ADD_EXONODE)
		at = stuff->one;
	if (at != UINT64_MAX && rv->every > 0 && ++rv->n % rv->every == 0)
		steal(rv, at);
	return rv->inner->edc.t->request(rv->inner, op, prot, buf, stuff);
}

/* The rest is unixfs's process's own transport. */
static struct edc_host *in(void *ctx) { return ((struct rival *)ctx)->inner; }
static void rival_idle(void *ctx) { in(ctx)->edc.t->idle(in(ctx)); }
static const uint64_t *rival_fm(void *ctx, int unit, uint32_t i)
{
	return in(ctx)->edc.t->fm_page(in(ctx), unit, i);
}
static uint64_t rival_nsect(void *ctx, int unit) { return in(ctx)->edc.t->nsectors(in(ctx), unit); }

static const struct edc_transport rival_transport = {
	rival_request, rival_idle, rival_fm, rival_nsect,
};

static void test_alloc_race(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 10);
	ufx_mkfs(&u, OPTS);
	struct edc_host other;
	edc_host_init(&other, &u.f.h, u.f.ed);
	struct rival rv = { .inner = &u.p, .other = &other };
	struct edc wrapped;
	edc_init(&wrapped, &rival_transport, &rv);
	edc_set_default(&wrapped);
	mount_it();
	rv.every = 3;                  /* the mount's lock is left alone */
	static uint8_t buf[300000];
	pattern(buf, sizeof buf, 41);
	CHECK_EQ(vfs_mkdir("/d", 0755), 0);
	/* Files of every shape, and one large file grown in pieces between
	 * them so that it needs many extents and map nodes. */
	struct vfile *big;
	CHECK_EQ(vfs_open("/big", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &big), 0);
	for (int i = 0; i < 40; i++) {
		char path[32];
		snprintf(path, sizeof path, i % 2 ? "/d/f%d" : "/f%d", i);
		put(path, buf + i, (size_t)(i * 997) % 20000);
		CHECK_EQ(vfs_write(big, buf + i * 7000, 7000), 7000);
		CHECK_EQ(vfs_fsync(big), 0);
	}
	CHECK_EQ(vfs_close(big), 0);
	CHECK_EQ(vfs_sync(), 0);
	rv.every = 0;
	for (int k = 0; k < 3; k++)
		CHECK(rv.stolen[k] > 0);
	umount_it();
	edc_host_exit(&other);          /* what the rival took is given back */
	edc_set_default(&u.p.edc);
	ufx_reboot(&u);
	mount_it();
	for (int i = 0; i < 40; i++) {
		char path[32];
		snprintf(path, sizeof path, i % 2 ? "/d/f%d" : "/f%d", i);
		expect(path, buf + i, (size_t)(i * 997) % 20000);
	}
	expect("/big", buf, 280000);
	umount_it();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

int main(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 1);
	ufx_mkfs(&u, OPTS);
	test_sizes(&u);
	ufx_free(&u);
	test_shrink_regrow();
	test_fragmented();
	test_enospc();
	test_cache_full();
	test_corruption();
	test_persistence();
	test_lock();
	test_two_owners();
	test_alloc_race();
	printf("test_unixfs: ok\n");
	return 0;
}
