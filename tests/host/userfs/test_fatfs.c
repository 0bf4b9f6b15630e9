/*
 * test_fatfs.c - fatfs (userfs/fatfs/) on the host:
 *
 *   types      FAT12, FAT16 and FAT32 made by fatfs_mkfs_image, filled with
 *              files and directories, checked by fatfs's fsck - and by
 *              fsck.fat -n, mdir and mtype (dosfstools and mtools) when
 *              they are installed (tools/deps.sh installs them)
 *   names      long names, UTF-8, case-insensitive lookup, short names
 *              alone where they fit (with the NT case bits), unique ~N
 *              tails for thousands of alike names, names FAT forbids
 *   suite      the generic libFS suite on fatfs over the exodisk (virtual
 *              volume), with a remount through a clean reboot
 *   footprint  a 4 GiB volume holding 10 MiB of files, then without them
 *   requests   what the disk sees (counts, not times): small files read in
 *              the order they were written share read-ahead windows; a
 *              large file is written in chunk-sized requests with a flush
 *              per sync step, read back in a window of requests in flight,
 *              and read at random in 4 KiB with a 64 KiB read-around per
 *              miss (a request per 64 KiB) when the cache holds the file
 *   damage     cross-linked chains, a loop, a chain past the volume, bad
 *              boot sector fields, long names with bad checksums: refused
 *              or found, repaired, and clean afterwards
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "userfs/fatfs/fatfs.h"
#include "userfs/fatfs/format.h"
#include "userfs/fssuite.h"
#include "tests/host/userfs/fatfix.h"

/* ---- types -------------------------------------------------------------------- */

static void fill_tree(void *fs)
{
	CHECK_EQ(fatfs_ops.mkdir(fs, "dir", 0755), 0);
	CHECK_EQ(fatfs_ops.mkdir(fs, "dir/Sub Directory", 0755), 0);
	static uint8_t buf[70000];
	for (int i = 0; i < 40; i++) {
		char p[80];
		snprintf(p, sizeof p, i % 2 ? "dir/Sub Directory/File number %d.data" : "f%d.txt", i);
		pattern_fill(buf, (size_t)i * 1700, (uint32_t)i);
		CHECK_EQ(file_put(fs, p, buf, (size_t)i * 1700), 0);
	}
	CHECK_EQ(file_put(fs, "big.bin", buf, sizeof buf), 0);
	CHECK_EQ(fatfs_ops.unlink(fs, "f10.txt"), 0);
	CHECK_EQ(fatfs_ops.rename(fs, "f12.txt", "dir/renamed.txt"), 0);
}

static void check_tree(void *fs)
{
	static uint8_t want[70000], got[70000];
	for (int i = 0; i < 40; i++) {
		char p[80];
		if (i == 10)
			continue;
		snprintf(p, sizeof p, i % 2 ? "dir/Sub Directory/File number %d.data" :
		         i == 12 ? "dir/renamed.txt" : "f%d.txt", i);
		pattern_fill(want, (size_t)i * 1700, (uint32_t)i);
		CHECK_EQ(file_get(fs, p, got, sizeof got), (long)i * 1700);
		CHECK(memcmp(want, got, (size_t)i * 1700) == 0);
	}
	struct libfs_stat st;
	CHECK_EQ(fatfs_ops.stat(fs, "f10.txt", &st), -ENOENT);
	CHECK_EQ(fatfs_ops.stat(fs, "DIR/sub directory", &st), 0);
	CHECK_EQ(st.type, LIBFS_T_DIR);
}

static void test_type(uint64_t nsect, const char *opts, int want_type)
{
	uint8_t *img = calloc(nsect, ED_SECTOR);
	CHECK(img != NULL);
	CHECK_EQ(fatfs_mkfs_image(img, nsect, opts), 0);
	CHECK_EQ(img[510], 0x55);
	void *fs;
	CHECK_EQ(fatfs_mount_image(img, nsect, "", &fs), 0);
	CHECK_EQ(fat_type_of(fs), want_type);
	fill_tree(fs);
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	CHECK_EQ(fatfs_mount_image(img, nsect, "", &fs), 0);
	check_tree(fs);
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	CHECK_EQ(fsck_clean(img, nsect), 0);
	/* And the tools everyone else uses, when they are here. */
	if (have_dosfstools()) {
		CHECK_EQ(host_fsck_fat(img, nsect), 0);
		CHECK(host_mdir_has(img, nsect, "::/dir/Sub Directory", "File number 39.data"));
		CHECK(host_mdir_has(img, nsect, "::/", "big.bin"));
		CHECK(host_mtype_is(img, nsect, "::/f20.txt", 20 * 1700, 20));
	}
	free(img);
}

/* ---- names ---------------------------------------------------------------------- */

static void test_names(void)
{
	const uint64_t n = 65536;
	uint8_t *img = calloc(n, ED_SECTOR);
	CHECK_EQ(fatfs_mkfs_image(img, n, "fat=16"), 0);
	void *fs;
	CHECK_EQ(fatfs_mount_image(img, n, "", &fs), 0);
	CHECK_EQ(file_put(fs, "README", (const uint8_t *)"a", 1), 0);
	CHECK_EQ(file_put(fs, "notes.txt", (const uint8_t *)"bb", 2), 0);
	CHECK_EQ(file_put(fs, "Mixed.Txt", (const uint8_t *)"ccc", 3), 0);
	CHECK_EQ(file_put(fs, "a much longer name with spaces.tar.gz", (const uint8_t *)"dddd", 4), 0);
	CHECK_EQ(file_put(fs, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80.txt", (const uint8_t *)"eeeee", 5), 0);
	/* Short names alone where they fit, NT case bits for a lower-case one. */
	uint8_t ent[32];
	CHECK_EQ(fat_root_entry(fs, "README", ent), 0);
	CHECK(memcmp(ent, "README     ", 11) == 0 && ent[DIR_NTRES] == 0);
	CHECK_EQ(fat_root_entry(fs, "notes.txt", ent), 0);
	CHECK(memcmp(ent, "NOTES   TXT", 11) == 0 && ent[DIR_NTRES] == (NTRES_LBASE | NTRES_LEXT));
	CHECK_EQ(fat_root_lfn_parts(fs, "notes.txt"), 0);
	CHECK_EQ(fat_root_lfn_parts(fs, "Mixed.Txt"), 1);
	CHECK_EQ(fat_root_entry(fs, "a much longer name with spaces.tar.gz", ent), 0);
	CHECK(memcmp(ent, "AMUCHL~1GZ ", 11) == 0);
	/* Lookups ignore case; the short name finds it too. */
	uint8_t got[16];
	CHECK_EQ(file_get(fs, "MIXED.TXT", got, sizeof got), 3);
	CHECK_EQ(file_get(fs, "AMUCHL~1.GZ", got, sizeof got), 4);
	CHECK_EQ(file_get(fs, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80.txt", got, sizeof got), 5);
	/* Listing gives the long names back, exactly. */
	CHECK(fat_lists(fs, "", "a much longer name with spaces.tar.gz"));
	CHECK(fat_lists(fs, "", "notes.txt"));
	CHECK(fat_lists(fs, "", "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80.txt"));
	/* Thousands alike: every short name unique. */
	CHECK_EQ(fatfs_ops.mkdir(fs, "alike", 0755), 0);
	for (int i = 0; i < 2000; i++) {
		char p[80];
		snprintf(p, sizeof p, "alike/Long File Name Number %04d.text", i);
		CHECK_EQ(file_put(fs, p, (const uint8_t *)p, strlen(p)), 0);
	}
	for (int i = 0; i < 2000; i += 97) {
		char p[80];
		uint8_t b[80];
		snprintf(p, sizeof p, "alike/long file name number %04d.TEXT", i);
		CHECK_EQ(file_get(fs, p, b, sizeof b), (long)strlen(p));
	}
	/* Names FAT cannot hold. */
	CHECK_EQ(file_put(fs, "a:b", (const uint8_t *)"x", 1), -EINVAL);
	CHECK_EQ(file_put(fs, "what?", (const uint8_t *)"x", 1), -EINVAL);
	CHECK_EQ(file_put(fs, "trailing.", (const uint8_t *)"x", 1), -EINVAL);
	CHECK_EQ(file_put(fs, "bad\xff" "utf8", (const uint8_t *)"x", 1), -EINVAL);
	char longname[300];
	memset(longname, 'L', 255);
	longname[255] = 0;
	CHECK_EQ(file_put(fs, longname, (const uint8_t *)"x", 1), 0);
	CHECK_EQ(file_get(fs, longname, got, sizeof got), 1);
	/* Creating a name that differs only in case opens the existing file. */
	CHECK_EQ(file_put(fs, "readme", (const uint8_t *)"zz", 2), 0);
	CHECK_EQ(file_get(fs, "README", got, sizeof got), 2);
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	CHECK_EQ(fsck_clean(img, n), 0);
	if (have_dosfstools()) {
		CHECK_EQ(host_fsck_fat(img, n), 0);
		CHECK(host_mdir_has(img, n, "::/", "a much longer name with spaces.tar.gz"));
		CHECK(host_mdir_has(img, n, "::/alike", "Long File Name Number 1999.text"));
	}
	free(img);
}

/* ---- suite ------------------------------------------------------------------------ */

static struct ufx su;

static int remount(void *arg)
{
	(void)arg;
	int r = vfs_umount("/dos");
	if (r < 0)
		return r;
	ufx_reboot(&su);
	return vfs_mount("/dos", "fatfs", "key=suite", 1);
}

static void test_suite(void)
{
	ufx_new(&su, 131072, HD_POLLED, 41);
	uint64_t sb;
	CHECK_EQ(fatfs_mkfs("key=suite,size=256M", &sb), 0);
	CHECK_EQ(fatfs_mkfs("key=suite,size=256M", &sb), -EEXIST);
	CHECK_EQ(vfs_mount("/dos", "fatfs", "key=suite", 1), 0);
	CHECK_EQ(vfs_mkdir("/dos/work", 0755), 0);
	struct fssuite s = { .root = "/dos/work", .dirs = 1, .rename = 1, .name_max = 255,
	                     .big = 3 * 1024 * 1024 + 123, .remount = remount };
	CHECK_EQ(fssuite_run(&s), 0);
	CHECK_EQ(s.passed, 11);
	CHECK_EQ(vfs_umount("/dos"), 0);
	struct fatfs_stats st;
	CHECK_EQ(fatfs_fsck("key=suite", NULL, NULL, &st), 0);
	CHECK_EQ(st.problems, 0);
	fx_check_live(&su.f);
	ufx_free(&su);
}

/* ---- footprint ---------------------------------------------------------------------- */

static void test_footprint(void)
{
	struct ufx u;
	ufx_new(&u, 131072, HD_POLLED, 42);
	struct edc_fm fm;
	CHECK_EQ(edc_fm_open(edc_default(), 0, &fm), 0);
	uint64_t free0 = edc_fm_count_free(&fm), sb;
	CHECK_EQ(fatfs_mkfs("key=fp,size=4G", &sb), 0);
	uint64_t made = free0 - edc_fm_count_free(&fm);
	CHECK_EQ(vfs_mount("/dos", "fatfs", "key=fp", 1), 0);
	static uint8_t buf[100 * 1024];
	for (int d = 0; d < 10; d++) {
		char p[64];
		snprintf(p, sizeof p, "/dos/d%d", d);
		CHECK_EQ(vfs_mkdir(p, 0755), 0);
		for (int i = 0; i < 10; i++) {
			snprintf(p, sizeof p, "/dos/d%d/file%d", d, i);
			pattern_fill(buf, sizeof buf, (uint32_t)(d * 10 + i));
			CHECK_EQ(vfs_put(p, buf, sizeof buf), 0);
		}
	}
	CHECK_EQ(vfs_sync(), 0);
	uint64_t full = free0 - edc_fm_count_free(&fm);
	for (int d = 0; d < 10; d++)
		for (int i = 0; i < 10; i++) {
			char p[64];
			snprintf(p, sizeof p, "/dos/d%d/file%d", d, i);
			CHECK_EQ(vfs_unlink(p), 0);
		}
	CHECK_EQ(vfs_sync(), 0);
	uint64_t empty = free0 - edc_fm_count_free(&fm);
	CHECK_EQ(vfs_umount("/dos"), 0);
	printf("test_fatfs: a 4 GiB FAT32: made %llu KiB; with 10 MiB of files %llu KiB; "
	       "without them %llu KiB\n", (unsigned long long)made / 2,
	       (unsigned long long)full / 2, (unsigned long long)empty / 2);
	CHECK(full <= 12 * 2048);
	/* The FAT's first chunk in each copy, the root's and the ten
	 * directories' chunks (64 KiB each), and 1 MiB (with the checksum
	 * table's chunks). */
	CHECK(empty <= 2048 + (2 + 1 + 10) * 128);
	ufx_free(&u);
}

/* ---- requests ---------------------------------------------------------------------- */

static void test_requests(void)
{
	struct ufx u;
	ufx_new(&u, 131072, HD_POLLED, 43);
	uint64_t sb;
	CHECK_EQ(fatfs_mkfs("key=rq,size=1G", &sb), 0);
	CHECK_EQ(vfs_mount("/x", "fatfs", "key=rq", 1), 0);
	static uint8_t buf[65536];
	char p[64];
	for (int d = 0; d < 10; d++) {
		snprintf(p, sizeof p, "/x/d%02d", d);
		CHECK_EQ(vfs_mkdir(p, 0755), 0);
	}
	/* 300 files of 10 KB, round-robin over the directories, as exobench. */
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof p, "/x/d%02d/f%05d", i % 10, i);
		pattern_fill(buf, 10240, (uint32_t)i);
		CHECK_EQ(vfs_put(p, buf, 10240), 0);
	}
	CHECK_EQ(vfs_umount("/x"), 0);
	CHECK_EQ(vfs_mount("/x", "fatfs", "key=rq", 1), 0);
	uint64_t r0 = u.f.hd.nread;
	for (int i = 0; i < 300; i++) {
		snprintf(p, sizeof p, "/x/d%02d/f%05d", i % 10, i);
		struct vfile *f;
		CHECK_EQ(vfs_open(p, LIBFS_O_READ, 0, &f), 0);
		CHECK_EQ(vfs_read(f, buf, sizeof buf), 10240);
		vfs_close(f);
	}
	uint64_t reads = u.f.hd.nread - r0;
	/* One request per 128 KiB window of files, plus the FAT and the
	 * directories: well under one per file. */
	CHECK(reads * 10 <= 300 * 4);
	/* A 16 MiB file in 64 KiB writes and an fsync: 64 KiB requests (and
	 * a few for the metadata and its checksums), a flush for each of the
	 * sync's steps that wrote something. */
	uint64_t w0 = u.f.hd.nwrite, f0 = u.f.hd.nflush;
	static uint8_t want[65536];
	memcpy(want, buf, sizeof want);
	struct vfile *f;
	CHECK_EQ(vfs_open("/x/big", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	for (int i = 0; i < 256; i++)
		CHECK_EQ(vfs_write(f, buf, sizeof buf), 65536);
	CHECK_EQ(vfs_fsync(f), 0);
	CHECK_EQ(vfs_close(f), 0);
	uint64_t writes = u.f.hd.nwrite - w0, flushes = u.f.hd.nflush - f0;
	CHECK(writes <= 256 + 24);
	CHECK(flushes <= 4);
	CHECK_EQ(vfs_umount("/x"), 0);
	CHECK_EQ(vfs_mount("/x", "fatfs", "key=rq", 1), 0);
	r0 = u.f.hd.nread;
	CHECK_EQ(vfs_open("/x/big", LIBFS_O_READ, 0, &f), 0);
	for (int i = 0; i < 256; i++)
		CHECK_EQ(vfs_read(f, buf, sizeof buf), 65536);
	CHECK_EQ(vfs_close(f), 0);
	uint64_t bigreads = u.f.hd.nread - r0;
	CHECK(bigreads <= 256 + 32);
	/* Read at random, 4 KiB at a time, every block once: a miss reads the
	 * 64 KiB around it when the cache can hold the whole file (16 MiB of
	 * the host's 32 MiB), so about one request per 64 KiB; with an 8 MiB
	 * cache it cannot, and each read is its own request. */
	uint64_t rnd_reads[2];
	for (int pass = 0; pass < 2; pass++) {
		CHECK_EQ(vfs_umount("/x"), 0);
		CHECK_EQ(vfs_mount("/x", "fatfs", pass ? "key=rq,cache=8" : "key=rq", 1), 0);
		r0 = u.f.hd.nread;
		CHECK_EQ(vfs_open("/x/big", LIBFS_O_READ, 0, &f), 0);
		for (uint32_t i = 0; i < 4096; i++) {
			uint32_t blk = (i * 2654435761u) % 4096;   /* odd: every block once */
			CHECK_EQ(vfs_pread(f, buf, 4096, (uint64_t)blk * 4096), 4096);
			CHECK(memcmp(buf, want + (blk % 16) * 4096, 4096) == 0);
		}
		CHECK_EQ(vfs_close(f), 0);
		rnd_reads[pass] = u.f.hd.nread - r0;
	}
	CHECK(rnd_reads[0] <= 256 + 32);
	CHECK(rnd_reads[1] >= 4096);
	printf("test_fatfs: requests: 300 x 10 KB read back in %llu reads; 16 MiB written in %llu "
	       "writes, %llu flushes, read in %llu reads; read at random in 4 KiB in %llu reads "
	       "(%llu with an 8 MiB cache)\n", (unsigned long long)reads,
	       (unsigned long long)writes, (unsigned long long)flushes, (unsigned long long)bigreads,
	       (unsigned long long)rnd_reads[0], (unsigned long long)rnd_reads[1]);
	CHECK_EQ(vfs_umount("/x"), 0);
	ufx_free(&u);
}

int main(void)
{
	test_type(4096, "", 12);                     /* 2 MiB */
	test_type(65536, "", 16);                    /* 32 MiB */
	test_type(81920, "fat=32", 32);              /* 40 MiB, 512-byte clusters */
	test_type(20480, "fat=16,cluster=512", 16);  /* 10 MiB */
	test_names();
	test_suite();
	test_footprint();
	test_requests();
	printf("test_fatfs: ok\n");
	return 0;
}
