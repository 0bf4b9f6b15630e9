/*
 * test_fat_csum.c - fatfs's metadata checksums (userfs/fatfs/csum.c) on
 * the host, over the exodisk:
 *
 *   clean      a volume made, filled and unmounted checks clean, and the
 *              boot sector's sector count stops before the checksums
 *   bit flips  one bit flipped behind fatfs's back in a directory sector,
 *              a FAT sector (both copies' and the FSInfo sector's too) or
 *              a checksum table sector: the read that meets it is -EIO,
 *              the volume turns read-only, fsck reports it, fsck -r
 *              makes the checksums again and the volume checks clean
 *   crash      a process that dies with the volume mounted (never
 *              unmounted) and a power cut after a sync: the next mount
 *              makes every checksum again and nothing is reported
 *   cut early  a sync cut after its first step, which wrote the slots of
 *              FAT sectors that were to be written first into a chunk of
 *              the virtual volume never written: the next mount clears
 *              those slots (the sectors read as zeros), so the FAT grows
 *              there again without a false alarm, and fsck finds no slot
 *              set for a sector never written
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/crc32c.h"
#include "userfs/fatfs/fatfs.h"
#include "userfs/fatfs/format.h"
#include "tests/host/userfs/fatfix.h"

static uint8_t small[3000], big[200000], back[200000];

static void say_nothing(void *arg, const char *what)
{
	(void)arg;
	printf("  fsck: %s\n", what);
}

static uint64_t problems(const char *opts)
{
	struct fatfs_stats st;
	CHECK_EQ(fatfs_fsck(opts, say_nothing, NULL, &st), 0);
	return st.problems;
}

/* A volume with a directory, a small file in it and a large file. */
static void make(const char *opts)
{
	uint64_t sb;
	CHECK_EQ(fatfs_mkfs(opts, &sb), 0);
	void *fs;
	CHECK_EQ(fatfs_ops.mount("key=ck", &fs), 0);
	CHECK_EQ(fatfs_ops.mkdir(fs, "dir", 0755), 0);
	pattern_fill(small, sizeof small, 1);
	pattern_fill(big, sizeof big, 2);
	CHECK_EQ(file_put(fs, "dir/small.txt", small, sizeof small), 0);
	CHECK_EQ(file_put(fs, "big.bin", big, sizeof big), 0);
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
}

/* Where things are: the first sector of dir's first cluster, the FAT
 * sector (copy `copy`) holding big.bin's second cluster's entry. */
static void where(uint64_t *dirsec, uint64_t *fatsec, unsigned *fatbyte, int copy)
{
	void *p;
	CHECK_EQ(fatfs_ops.mount("key=ck,ro", &p), 0);
	struct fatfs *fs = p;
	uint8_t ent[DIRENT];
	int i = fat_dir_find(fs, fs->root, "dir");
	CHECK(i >= 0);
	CHECK_EQ(fat_dir_read(fs, fs->root, i, ent), 0);
	uint32_t c = le16(ent + DIR_FSTCLUSLO) | (uint32_t)le16(ent + DIR_FSTCLUSHI) << 16;
	*dirsec = fat_clus_lba(fs, c);
	i = fat_dir_find(fs, fs->root, "big.bin");
	CHECK(i >= 0);
	CHECK_EQ(fat_dir_read(fs, fs->root, i, ent), 0);
	c = le16(ent + DIR_FSTCLUSLO) | (uint32_t)le16(ent + DIR_FSTCLUSHI) << 16;
	uint64_t byte = fs->type == 32 ? 4ull * (c + 1) : fs->type == 16 ? 2ull * (c + 1) :
	                (c + 1) + (c + 1) / 2;
	*fatsec = fs->rsvd + (uint64_t)copy * fs->fatsz + byte / ED_SECTOR;
	*fatbyte = (unsigned)(byte % ED_SECTOR);
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
}

/* Flip one bit of volume sector lba, as a disk might, past fatfs. */
static void flip(uint64_t lba, unsigned byte, unsigned bit)
{
	struct fatfs_vol *v;
	uint8_t s[ED_SECTOR];
	CHECK_EQ(fatfs_vol_open("key=ck", 0, 0, 0, &v), 0);
	CHECK_EQ(fatfs_vol_read(v, lba, s, 1), 0);
	s[byte] ^= (uint8_t)(1u << bit);
	CHECK_EQ(fatfs_vol_write(v, lba, s, 1), 0);
	CHECK_EQ(fatfs_vol_close(v), 0);
}

/* The damage is met (-EIO, read-only, counted), reported by fsck, and
 * gone after fsck -r. */
static void met(int (*reach)(void *fs), int again)
{
	void *p;
	/* Met at the mount itself when the damage is in what a mount reads
	 * (FAT32: the root directory's chain shares the first FAT sector). */
	int e = fatfs_ops.mount("key=ck", &p);
	if (e == 0) {
		struct fatfs *fs = p;
		CHECK_EQ(reach(fs), -EIO);
		CHECK(fs->ro && fs->st.ck_bad == 1);
		CHECK_EQ(fatfs_ops.unmount(fs), 0);
	} else {
		CHECK_EQ(e, -EIO);
	}
	/* Met again at the next mount: nothing was laundered. */
	if (again && (e = fatfs_ops.mount("key=ck", &p)) == 0) {
		CHECK_EQ(reach(p), -EIO);
		CHECK_EQ(fatfs_ops.unmount(p), 0);
	} else if (again) {
		CHECK_EQ(e, -EIO);
	}
	CHECK(problems("key=ck") >= 1);
	CHECK(problems("key=ck,repair") >= 1);
	CHECK_EQ(problems("key=ck"), 0);
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	CHECK_EQ(fatfs_ops.unmount(p), 0);
}

static int read_small(void *fs)
{
	long r = file_get(fs, "dir/small.txt", back, sizeof back);
	return r < 0 ? (int)r : 0;
}

static int read_big(void *fs)
{
	long r = file_get(fs, "big.bin", back, sizeof back);
	return r < 0 ? (int)r : r == (long)sizeof big && memcmp(back, big, sizeof big) == 0 ? 0 : -EBADMSG;
}

static int remove_big(void *fs)
{
	int e = fatfs_ops.unlink(fs, "big.bin");
	return e < 0 ? e : fatfs_ops.sync(fs);
}

static void test_type(const char *mkfs_opts)
{
	struct ufx u;
	ufx_new(&u, 2u << 20, HD_POLLED, 7);     /* 1 GiB */
	make(mkfs_opts);
	CHECK_EQ(problems("key=ck"), 0);

	/* The FAT stops before the checksums: the image a reader sees is plain. */
	void *p;
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	struct fatfs *fs = p;
	CHECK(fs->ck_area == fs->totsec && fs->ck_trust && fs->totsec < fs->vol.d.nsectors);
	CHECK_EQ(read_big(fs), 0);
	CHECK_EQ(read_small(fs), 0);
	CHECK_EQ(fs->st.ck_bad, 0);
	CHECK(fs->st.ck_checked > 0);
	uint64_t tot0 = fs->totsec;
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	uint64_t tot = tot0;
	struct fatfs_vol *v;
	CHECK_EQ(fatfs_vol_open("key=ck", 0, 0, 0, &v), 0);
	CHECK_EQ(fatfs_vol_size(v), tot);
	CHECK_EQ(fatfs_vol_close(v), 0);

	uint64_t dirsec, fat1, fat2;
	unsigned b1, b2;
	where(&dirsec, &fat1, &b1, 0);
	where(&dirsec, &fat2, &b2, 1);

	/* A directory sector: a bit of small.txt's short name (slot 3:
	 * ".", "..", a long-name part, then the short entry). */
	flip(dirsec, 3 * DIRENT + 1, 1);
	met(read_small, 1);
	/* A FAT sector: one bit of the link from big.bin's second cluster. */
	flip(fat1, b1, 0);
	met(read_big, 1);
	where(&dirsec, &fat1, &b1, 0);
	flip(fat1, (b1 + 40) % ED_SECTOR, 3);
	met(read_big, 1);
	/* The second copy: met when the chain is freed (both copies written);
	 * the name is gone by then (durably), the chain is left lost. */
	where(&dirsec, &fat2, &b2, 1);
	flip(fat2, b2, 5);
	met(remove_big, 0);
	void *p2;
	CHECK_EQ(fatfs_ops.mount("key=ck", &p2), 0);
	CHECK_EQ(file_put(p2, "big.bin", big, sizeof big), 0);
	CHECK_EQ(fatfs_ops.unmount(p2), 0);
	/* The checksum table itself: the sector holding dir's first sector's slot. */
	CHECK_EQ(fatfs_ops.mount("key=ck,ro", &p), 0);
	fs = p;
	uint64_t table = fs->ck_area + 1 + dirsec / 62;
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	flip(table, 17, 6);
	met(read_small, 1);

	/* Crashes: a process dies with the volume mounted read-write; then the
	 * power fails after a sync with more written. */
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	CHECK_EQ(fatfs_ops.mkdir(p, "dir/more", 0755), 0);
	CHECK_EQ(file_put(p, "dir/more/x", small, 100), 0);
	CHECK_EQ(fatfs_ops.sync(p), 0);
	fatfs_ops.abandon(p);
	ufx_stop(&u);
	ufx_start(&u);
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	fs = p;
	CHECK_EQ(fs->st.ck_rebuilds, 1);
	CHECK_EQ(read_small(fs), 0);
	CHECK_EQ(file_get(fs, "dir/more/x", back, sizeof back), 100);
	CHECK_EQ(file_put(fs, "dir/more/y", small, 2000), 0);
	CHECK_EQ(fatfs_ops.sync(fs), 0);
	CHECK_EQ(file_put(fs, "dir/more/z", small, 2000), 0);
	fatfs_ops.abandon(fs);
	ufx_crash(&u);
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	fs = p;
	CHECK_EQ(fs->st.ck_rebuilds, 1);
	CHECK_EQ(file_get(fs, "dir/more/y", back, sizeof back), 2000);
	CHECK_EQ(read_big(fs), 0);
	CHECK_EQ(fs->st.ck_bad, 0);
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	CHECK_EQ(problems("key=ck"), 0);
	ufx_free(&u);
}


/* A new 1 GiB disk (seed), a volume made on it with mkfs_opts, mounted. */
static void *fresh(struct ufx *u, uint64_t seed, const char *mkfs_opts)
{
	ufx_new(u, 2u << 20, HD_POLLED, seed);
	uint64_t sb;
	CHECK_EQ(fatfs_mkfs(mkfs_opts, &sb), 0);
	void *p;
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	return p;
}

/* A file that reaches the volume's last clusters, deleted: the chunk it
 * shares with the checksum area (which starts right after the last
 * cluster) must not be given back, or the area reads as zeros. */
static void test_full_then_delete(const char *mkfs_opts)
{
	struct ufx u;
	void *p = fresh(&u, 9, mkfs_opts);
	void *f = NULL;
	CHECK_EQ(fatfs_ops.open(p, "fill.bin", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	pattern_fill(big, sizeof big, 3);
	uint64_t off = 0;
	for (;;) {
		long n = fatfs_ops.write(p, f, big, sizeof big, off);
		if (n <= 0)
			break;
		off += (uint64_t)n;
	}
	CHECK_EQ(fatfs_ops.close(p, f), 0);
	CHECK_EQ(fatfs_ops.unlink(p, "fill.bin"), 0);
	CHECK_EQ(fatfs_ops.unmount(p), 0);
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	struct fatfs *fs = p;
	CHECK(fs->ck_area == fs->totsec && fs->ck_trust);
	CHECK_EQ(fatfs_ops.unmount(p), 0);
	CHECK_EQ(problems("key=ck"), 0);
	ufx_free(&u);
}

/* A sync cut right after its first step (sync.c): the checksum table,
 * with the slots of every metadata sector the sync was to write, is
 * durable; the FAT sectors themselves are not.  A FAT sector that is the
 * first ever written in its chunk then reads as zeros (the chunk is not
 * mapped), and its slot must not survive the next mount's remaking of the
 * checksums (before: it did, and the FAT growing there again later met
 * "its contents do not match their checksum" - test_share_stress seed
 * 2105, where a process died there). */
static void test_cut_before_fat(const char *mkfs_opts)
{
	struct ufx u;
	void *p = fresh(&u, 11, mkfs_opts);
	struct fatfs *fs = p;
	/* The first FAT sector (either copy) in a chunk never written, and a
	 * file long enough that its chain's entries reach it. */
	uint32_t per = fs->type == 32 ? ED_SECTOR / 4 : fs->type == 16 ? ED_SECTOR / 2 : ED_SECTOR * 2 / 3;
	uint64_t s = fs->fatsz, lba = 0, phys;
	for (uint32_t c = 0; c < fs->nfats; c++)
		for (uint64_t k = 0; k < s; k++)
			if (vvol_mapped(&fs->vol, fs->rsvd + (uint64_t)c * fs->fatsz + k, &phys) == 0) {
				s = k;
				lba = fs->rsvd + (uint64_t)c * fs->fatsz + k;
			}
	CHECK(s < fs->fatsz);
	size_t n = (size_t)((s + 1) * per) * fs->csize;
	CHECK(n <= (4u << 20));
	uint8_t *data = malloc(n), *got = malloc(n);
	CHECK(data != NULL && got != NULL);
	pattern_fill(data, n, 5);
	CHECK_EQ(file_put(fs, "long.bin", data, n), 0);
	CHECK(vvol_dirty_sectors(&fs->vol, 1u << CL_FAT) > 0);
	/* The sync's first step, then the power fails. */
	CHECK_EQ(fat_ck_update(fs, 1u << CL_DATA | 1u << CL_FAT | 1u << CL_DIR | 1u << CL_FREE), 0);
	CHECK_EQ(vvol_sync(&fs->vol, 1u << CL_DATA), 0);
	fatfs_ops.abandon(fs);
	ufx_crash(&u);
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	fs = p;
	CHECK_EQ(fs->st.ck_rebuilds, 1);
	CHECK_EQ(vvol_mapped(&fs->vol, lba, &phys), 0);
	CHECK_EQ(file_get(fs, "long.bin", got, n), -ENOENT);
	/* The FAT grows over the same sectors again. */
	CHECK_EQ(file_put(fs, "long.bin", data, n), 0);
	CHECK_EQ(fatfs_ops.sync(fs), 0);
	CHECK_EQ(fs->st.ck_bad, 0);
	CHECK_EQ(fatfs_ops.unmount(fs), 0);
	CHECK_EQ(fatfs_ops.mount("key=ck", &p), 0);
	CHECK_EQ(file_get(p, "long.bin", got, n), (long)n);
	CHECK(memcmp(got, data, n) == 0);
	CHECK_EQ(((struct fatfs *)p)->st.ck_bad, 0);
	/* fsck reports such a slot on a volume closed cleanly (set here
	 * behind fatfs's back), and its repair clears it. */
	fs = p;
	for (lba = fs->rsvd; vvol_mapped(&fs->vol, lba, &phys) == 1; lba++)
		CHECK(lba < fs->datasec);
	uint64_t tl = fs->ck_area + 1 + lba / 62;
	CHECK_EQ(fatfs_ops.unmount(p), 0);
	CHECK_EQ(problems("key=ck"), 0);
	struct fatfs_vol *v;
	uint8_t t[ED_SECTOR];
	CHECK_EQ(fatfs_vol_open("key=ck", 0, 0, 0, &v), 0);
	CHECK_EQ(fatfs_vol_read(v, tl, t, 1), 0);
	put32(t + 8 * (lba % 62), 0x12345678);
	put32(t + 8 * (lba % 62) + 4, 0x54455343);             /* "CSET" */
	put32(t + 496, (uint32_t)(lba / 62 * 62));
	put32(t + 500, 0);
	put32(t + 508, crc32c(0, t, 508));
	CHECK_EQ(fatfs_vol_write(v, tl, t, 1), 0);
	CHECK_EQ(fatfs_vol_close(v), 0);
	CHECK_EQ(problems("key=ck"), 1);
	CHECK_EQ(problems("key=ck,repair"), 1);
	CHECK_EQ(problems("key=ck"), 0);
	free(data);
	free(got);
	ufx_free(&u);
}

int main(void)
{
	test_cut_before_fat("key=ck");                /* FAT32, the FAT's second copy */
	test_type("key=ck,size=64M");                 /* FAT16 */
	test_type("key=ck,size=600M");                /* FAT32 */
	test_type("key=ck,size=8M,fat=12");           /* FAT12 */
	test_full_then_delete("key=ck,size=8M,fat=12");
	test_full_then_delete("key=ck,size=33M");
	printf("test_fat_csum: ok\n");
	return 0;
}
