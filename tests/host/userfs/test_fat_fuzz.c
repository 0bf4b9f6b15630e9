/*
 * test_fat_fuzz.c - fatfs against damaged FAT images, in memory:
 *
 *   damage   each kind of damage by hand on a good image - two chains
 *            cross-linked, a chain looping, a FAT entry pointing past the
 *            volume, bad boot sector fields, long names with a wrong
 *            checksum: the mount refuses with a message or the volume turns
 *            read-only with one when the damage is met; fsck finds it (and
 *            fsck.fat agrees that something is wrong); fsck -r repairs it,
 *            and then fsck and fsck.fat -n find nothing
 *   fuzz     random bytes of the boot sector, the FATs and the directories
 *            changed in images of each type, each image then mounted,
 *            walked, read, written, checked, repaired and checked again:
 *            no crash (the host tests run under AddressSanitizer), no hang,
 *            and nothing the repair mode fixes is left after it.  180
 *            images in make test; FAT_FUZZ=N for more.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fatfs.h"
#include "tests/host/userfs/fatfix.h"

static uint8_t *good_image(uint64_t n, const char *opts)
{
	uint8_t *img = calloc(n, ED_SECTOR);
	CHECK(img != NULL);
	CHECK_EQ(fatfs_mkfs_image(img, n, opts), 0);
	void *fs;
	CHECK_EQ(fatfs_mount_image(img, n, "", &fs), 0);
	static uint8_t buf[20000];
	CHECK_EQ(fatfs_ops.mkdir(fs, "A Directory", 0755), 0);
	CHECK_EQ(fatfs_ops.mkdir(fs, "A Directory/deeper", 0755), 0);
	for (int i = 0; i < 30; i++) {
		char p[80];
		snprintf(p, sizeof p, i % 3 == 0 ? "A Directory/file with a long name %d" :
		         i % 3 == 1 ? "A Directory/deeper/f%d.dat" : "top%d", i);
		pattern_fill(buf, (size_t)(i * 613) % sizeof buf, (uint32_t)i);
		CHECK_EQ(file_put(fs, p, buf, (size_t)(i * 613) % sizeof buf), 0);
	}
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	CHECK_EQ(fsck_clean(img, n), 0);
	return img;
}

/* The clusters of a file, in order (at most max). */
static int clusters_of(uint8_t *img, uint64_t n, const char *path, uint32_t *c, int max)
{
	void *p;
	CHECK_EQ(fatfs_mount_image(img, n, "ro", &p), 0);
	struct fatfs *fs = p;
	struct fdir *d;
	int i;
	const char *last;
	CHECK_EQ(fat_walk(fs, path, &d, &i, &last), 0);
	CHECK(i >= 0);
	uint8_t ent[32];
	CHECK_EQ(fat_dir_read(fs, d, i, ent), 0);
	fat_dir_put(fs, d);
	int k = 0;
	for (uint32_t x = dir_first(ent); x >= 2 && x < fs->eoc && k < max;) {
		c[k++] = x;
		CHECK_EQ(fat_get(fs, x, &x), 0);
	}
	fatfs_ops.unmount(fs);
	return k;
}

/* Set FAT entry c to v in every copy, directly in the image. */
static void poke_fat(uint8_t *img, uint64_t n, uint32_t c, uint32_t v)
{
	void *p;
	CHECK_EQ(fatfs_mount_image(img, n, "", &p), 0);
	struct fatfs *fs = p;
	CHECK_EQ(fat_set(fs, c, v, CL_FAT), 0);
	CHECK_EQ(vvol_sync(&fs->vol, VV_ALL), 0);
	fs->ro = 1;                   /* nothing else is written at unmount */
	fatfs_ops.unmount(fs);
}

static long problems(uint8_t *img, uint64_t n, int repair, struct fatfs_stats *st)
{
	int e = fatfs_fsck_image(img, n, repair, NULL, NULL, st);
	return e < 0 ? e : (long)st->problems;
}

/* The damaged image: fsck finds it (and fsck.fat too, by its exit status
 * when `error` - fsck.fat only warns about a long name with a bad
 * checksum), the repair leaves it clean by both. */
static void found_and_repaired(uint8_t *img, uint64_t n, const char *what, int error)
{
	struct fatfs_stats st;
	CHECK(problems(img, n, 0, &st) > 0);
	if (error && have_dosfstools())
		CHECK(host_fsck_fat_as(img, n, 0) != 0 || (printf("  (fsck.fat -n missed: %s)\n", what), 0));
	CHECK(problems(img, n, 1, &st) > 0);
	CHECK_EQ(st.repaired, st.repairable);
	if (problems(img, n, 0, &st) != 0)
		fprintf(stderr, "test_fat_fuzz: %s: left after the repair\n", what);
	CHECK_EQ(st.problems, 0);
	if (have_dosfstools())
		CHECK_EQ(host_fsck_fat(img, n), 0);
}

/* Reading every file of a damaged volume: some fail with EIO, nothing
 * crashes, and the mount turns read-only. */
static void read_all(uint8_t *img, uint64_t n, int *eio, int *rofs)
{
	void *fs;
	*eio = *rofs = 0;
	if (fatfs_mount_image(img, n, "", &fs) < 0)
		return;
	static uint8_t buf[20000];
	for (int i = 0; i < 30; i++) {
		char p[80];
		snprintf(p, sizeof p, i % 3 == 0 ? "A Directory/file with a long name %d" :
		         i % 3 == 1 ? "A Directory/deeper/f%d.dat" : "top%d", i);
		*eio += file_get(fs, p, buf, sizeof buf) == -EIO;
	}
	*rofs = file_put(fs, "new file", buf, 100) == -EROFS;
	fatfs_ops.unmount(fs);
}

static void test_damage(void)
{
	const uint64_t n = 32768;             /* 16 MiB, FAT16, 2 KiB clusters */
	uint8_t *good = good_image(n, "fat=16");
	uint8_t *img = malloc(n * ED_SECTOR);
	uint32_t a[16], b[16];
	int eio, rofs;

	/* Cross-linked: a's last cluster leads into b's chain. */
	memcpy(img, good, n * ED_SECTOR);
	int na = clusters_of(img, n, "A Directory/file with a long name 27", a, 16);
	int nb = clusters_of(img, n, "top29", b, 16);
	CHECK(na >= 2 && nb >= 3);
	poke_fat(img, n, a[na - 1], b[1]);
	read_all(img, n, &eio, &rofs);
	CHECK(eio == 0 && rofs);             /* the longer chain is seen, the mount turns ro */
	found_and_repaired(img, n, "cross-linked chains", 1);

	/* A loop: b's last cluster leads back to its first. */
	memcpy(img, good, n * ED_SECTOR);
	poke_fat(img, n, b[nb - 1], b[0]);
	read_all(img, n, &eio, &rofs);
	CHECK(rofs);                         /* what the size covers still reads */
	found_and_repaired(img, n, "a loop", 1);

	/* Past the end of the volume. */
	memcpy(img, good, n * ED_SECTOR);
	poke_fat(img, n, b[1], 0xFFF0);
	read_all(img, n, &eio, &rofs);
	CHECK(eio >= 1 && rofs);
	found_and_repaired(img, n, "a chain past the volume", 1);

	/* A chain into a free cluster. */
	memcpy(img, good, n * ED_SECTOR);
	poke_fat(img, n, b[1], 0);
	found_and_repaired(img, n, "a free cluster in a chain", 1);

	/* A long name whose checksum is not its short entry's: an orphan, so
	 * the short name is listed instead. */
	memcpy(img, good, n * ED_SECTOR);
	{
		void *p;
		CHECK_EQ(fatfs_mount_image(img, n, "", &p), 0);
		struct fatfs *fs = p;
		struct fdir *d;
		int i;
		const char *last;
		CHECK_EQ(fat_walk(fs, "A Directory/file with a long name 3", &d, &i, &last), 0);
		CHECK(i >= 0 && d->e[i].nlfn >= 2);
		int e;
		uint8_t *x = fat_dir_entry(fs, d, d->e[i].slot - 1, &e);
		CHECK(x != NULL);
		x[LDIR_CHKSUM] ^= 0x5A;
		fat_dir_done(fs, d, d->e[i].slot - 1, 1);
		fat_dir_put(fs, d);
		CHECK_EQ(fatfs_ops.unmount(fs), 0);
		CHECK_EQ(fatfs_mount_image(img, n, "", &p), 0);
		struct libfs_stat st;
		CHECK_EQ(fatfs_ops.stat(p, "A Directory/file with a long name 3", &st), -ENOENT);
		CHECK_EQ(fatfs_ops.stat(p, "A Directory/FILEWI~2", &st), 0);
		CHECK(!fat_lists(p, "A Directory", "file with a long name 3"));
		CHECK_EQ(fatfs_ops.unmount(p), 0);
	}
	found_and_repaired(img, n, "a long name with a bad checksum", 0);

	/* Boot sector fields: the mount says no, with a reason; so does fsck. */
	static const struct { int off, len; uint32_t v; } bad[] = {
		{ BPB_BYTSPERSEC, 2, 1024 }, { BPB_BYTSPERSEC, 2, 0 }, { BPB_SECPERCLUS, 1, 3 },
		{ BPB_SECPERCLUS, 1, 0 }, { BPB_RSVDSECCNT, 2, 0 }, { BPB_NUMFATS, 1, 0 },
		{ BPB_TOTSEC16, 2, 0 }, { BPB_FATSZ16, 2, 1 }, { BPB_MEDIA, 1, 0x12 },
		{ BPB_ROOTENTCNT, 2, 0 }, { BPB_TOTSEC32, 4, 0x7FFFFFFF },
	};
	for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		memcpy(img, good, n * ED_SECTOR);
		if (bad[k].off == BPB_TOTSEC32)
			put16(img + BPB_TOTSEC16, 0);
		if (bad[k].len == 1)
			img[bad[k].off] = (uint8_t)bad[k].v;
		else if (bad[k].len == 2)
			put16(img + bad[k].off, bad[k].v);
		else
			put32(img + bad[k].off, bad[k].v);
		void *fs;
		CHECK_EQ(fatfs_mount_image(img, n, "", &fs), -EINVAL);
		struct fatfs_stats st;
		CHECK_EQ(fatfs_fsck_image(img, n, 0, NULL, NULL, &st), -EINVAL);
	}
	free(img);
	free(good);
}

/* ---- fuzz -------------------------------------------------------------------------------- */

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Everything a program might do on it, errors allowed, crashes not. */
static void exercise(void *fs)
{
	static uint8_t buf[30000];
	const char *dirs[] = { "", "A Directory", "A Directory/deeper" };
	for (int k = 0; k < 3; k++) {
		void *d;
		if (fatfs_ops.open(fs, dirs[k], LIBFS_O_READ | LIBFS_O_DIR, 0, &d) < 0)
			continue;
		uint64_t cookie = 0;
		struct libfs_dirent de;
		int count = 0;
		while (fatfs_ops.readdir(fs, d, &cookie, &de) == 1 && count++ < 1000) {
			char p[600];
			snprintf(p, sizeof p, "%s%s%s", dirs[k], dirs[k][0] ? "/" : "", de.name);
			struct libfs_stat st;
			if (fatfs_ops.stat(fs, p, &st) == 0 && st.type == LIBFS_T_REG)
				file_get(fs, p, buf, sizeof buf);
		}
		fatfs_ops.close(fs, d);
	}
	file_put(fs, "A Directory/written after damage", buf, 5000);
	fatfs_ops.unlink(fs, "top2");
	fatfs_ops.rename(fs, "top5", "A Directory/deeper/renamed");
	fatfs_ops.mkdir(fs, "made after damage", 0755);
	fatfs_ops.sync(fs);
}

static void fuzz(uint64_t n, const char *opts, int iters, uint64_t seed)
{
	uint8_t *good = good_image(n, opts);
	uint8_t *img = malloc(n * ED_SECTOR);
	void *p;
	CHECK_EQ(fatfs_mount_image(good, n, "ro", &p), 0);
	struct fatfs *g = p;
	uint64_t meta = g->datasec, root = g->type == 32 ? fat_clus_lba(g, g->rootclus) : 0;
	uint32_t spc = g->spc;
	fatfs_ops.unmount(g);
	uint64_t x = seed;
	int mounted = 0, clean = 0;
	for (int it = 0; it < iters; it++) {
		memcpy(img, good, n * ED_SECTOR);
		int changes = 1 + (int)(rnd(&x) % 8);
		for (int c = 0; c < changes; c++) {
			uint64_t where = rnd(&x) % 4;
			uint64_t s;
			if (where == 0)
				s = 0;                               /* the boot sector */
			else if (where == 1 && root)
				s = root + rnd(&x) % spc;            /* the FAT32 root */
			else if (where == 2)
				s = meta + rnd(&x) % (64 * spc);     /* directories and data */
			else
				s = rnd(&x) % meta;                  /* FATs, FAT12/16 root */
			uint64_t off = s * ED_SECTOR + rnd(&x) % ED_SECTOR;
			if (rnd(&x) % 2)
				img[off] = (uint8_t)rnd(&x);
			else
				img[off] ^= (uint8_t)(1u << (rnd(&x) % 8));
		}
		struct fatfs_stats st;
		void *fs;
		if (fatfs_mount_image(img, n, "", &fs) == 0) {
			mounted++;
			exercise(fs);
			fatfs_ops.unmount(fs);
		}
		if (fatfs_fsck_image(img, n, 0, NULL, NULL, &st) < 0)
			continue;
		if (fatfs_fsck_image(img, n, 1, NULL, NULL, &st) < 0)
			continue;
		int e = fatfs_fsck_image(img, n, 0, NULL, NULL, &st);
		if (e == 0 && st.repairable != 0) {
			fprintf(stderr, "test_fat_fuzz: image %d (seed %llu): the repair left %llu problems\n",
			        it, (unsigned long long)seed, (unsigned long long)st.repairable);
			fatfs_fsck_image(img, n, 0, fix_say, NULL, &st);
		}
		CHECK(e == 0 && st.repairable == 0);
		clean += st.problems == 0;
	}
	printf("test_fat_fuzz: FAT%s: %d damaged images, %d mounted, %d clean after the repair\n",
	       opts[4] ? opts + 4 : "?", iters, mounted, clean);
	free(img);
	free(good);
}

int main(void)
{
	test_damage();
	const char *env = getenv("FAT_FUZZ");
	int iters = env ? atoi(env) : 60;
	fuzz(8192, "fat=12", iters, 1);
	fuzz(32768, "fat=16", iters, 2);
	fuzz(81920, "fat=32", iters, 3);
	printf("test_fat_fuzz: ok\n");
	return 0;
}
