/*
 * test_lfs.c - lfs (userfs/lfs) on the host, beyond the generic suite and
 * power-cut workload every libFS gets (test_fssuite):
 *
 *   many       2,000 small files in 20 directories, with 64 KiB segments and
 *              a checkpoint every 256 KiB of log: read back before and after
 *              a reboot; fsck recounts every segment's live bytes
 *   roll       commits after the last checkpoint, then the power fails:
 *              the mount rolls forward through them (and not through the
 *              unsynced tail), fsck clean
 *   cleaner    a disk 80% full, random files rewritten for ten times the
 *              free space: the cleaner keeps it going; every file as last
 *              written, after a reboot too; write cost reported
 *   full       writing until -ENOSPC: what was written before stays, and
 *              deleting makes room again
 *   damage     a torn newer checkpoint copy (the older is used), both
 *              copies gone (a clear error), a corrupted summary in the
 *              roll-forward region (read-only before it: its commit is
 *              intact), a corrupted inode
 *              map block (-EIO and read-only, never a crash)
 *   tailbad    a PS written after the last checkpoint damaged (its blocks,
 *              its header; in mid-segment, at a segment's end) with synced
 *              commits after it: read-only, reported, as of the commit
 *              before it, fsck says so; the newest commit damaged: the log
 *              ends before it, as after a torn write
 *   proof      a checkpoint record written in one flush with its commit and
 *              table blocks: with either damaged, the older record is used
 *              and roll-forward gives the same files
 *   sums       a damaged directory block and indirect block: -EIO and a
 *              read-only mount, the rest still readable, fsck reports them
 *   share      a file lent through proxies: read by another process with
 *              the token alone, followed as it is rewritten and cleaned,
 *              read-only, refused with a wrong capability, gone when
 *              unshared, deleted, or when its owner exits
 *   powercut   the generic power-cut workload with tiny segments, frequent
 *              checkpoints and a volume small enough to need the cleaner
 *              (every request with LFS_PC_ALL=1)
 *   groupcut   hundreds of files created between syncs, so that commits
 *              are made because much is pending (written, not flushed on
 *              their own), cut at every request or 200 of them: every
 *              synced file survives, and what survives is a prefix of the
 *              creations (the one in flight may be empty), fsck clean
 *   cpcost     a checkpoint's bytes follow what changed, not the volume:
 *              the same change on volumes of 1,000 and 64,000 segments
 *              checkpoints the same number of usage table blocks
 *   cleancut   long-lived files among short-lived ones, rewritten, synced
 *              and cleaned on demand, cut at every request (LFS_PC_ALL=1)
 *              or 200 of them: every acknowledged version survives, the
 *              long-lived files the cleaner moved are intact, fsck clean
 *   autocut    files of a volume three fifths full overwritten with
 *              autoclean on (rounds inside the writes, their checkpoints
 *              not waited for), synced every third step, cut at every
 *              request or 200: every file holds its acknowledged version
 *              or a later one, fsck clean; between operations no segment
 *              a pending round empties is reusable yet
 *   imin       a checkpoint record carries the inode map entries changed
 *              since their blocks were written, instead of the blocks:
 *              there after a crash, blocks again past what it carries,
 *              version 2 records still mount
 *   acbound    autoclean cleans a bounded number of rounds per operation,
 *              and gives back the empty segments it kept mapped
 *   nomem      no memory for a block of the usage table (the allocation
 *              made to fail), when a change needs it and when a checkpoint
 *              does: read-only with -ENOMEM, no table block or segment of
 *              it marked for a checkpoint, never a crash; after a remount
 *              everything committed before is there, fsck clean
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"
#include "tests/host/userfs/fscut.h"

static struct ufx u;

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		b[i] = (uint8_t)(seed >> 56);
	}
}

static void put(const char *path, size_t n, uint64_t seed)
{
	static uint8_t b[1 << 17];
	struct vfile *f;
	fill(b, n, seed);
	CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f), 0);
	CHECK_EQ(vfs_pwrite(f, b, n, 0), (long)n);
	CHECK_EQ(vfs_close(f), 0);
}

/* 1 if path holds exactly n bytes of seed's sequence. */
static int same(const char *path, size_t n, uint64_t seed)
{
	static uint8_t b[1 << 17], g[(1 << 17) + 1];
	struct vfile *f;
	int e = vfs_open(path, LIBFS_O_READ, 0, &f);
	if (e != 0)
		return 0;
	long r = vfs_pread(f, g, sizeof g, 0);
	vfs_close(f);
	fill(b, n, seed);
	if (getenv("LFS_DBG") && (r != (long)n || memcmp(b, g, n) != 0)) {
		size_t k = 0;
		while (r > 0 && k < (size_t)r && k < n && b[k] == g[k])
			k++;
		fprintf(stderr, "%s: read %ld of %zu, first difference at %zu\n", path, r, n, k);
	}
	return r == (long)n && memcmp(b, g, n) == 0;
}

/* A fresh lfs (options o) on a disk of nsectors, mounted at /l. */
static void lfs_new(const char *o, uint64_t nsectors, uint64_t seed)
{
	ufx_new(&u, nsectors, HD_POLLED, seed);
	uint64_t sb;
	CHECK_EQ(lfs_mkfs(o, &sb), 0);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
}

/* The same with files /l/f0.. of size bytes each (file i: seed i),
 * then unmounted (a checkpoint). */
static void lfs_filled(const char *o, uint64_t nsectors, uint64_t seed, int nfiles, size_t size)
{
	lfs_new(o, nsectors, seed);
	char p[64];
	for (int i = 0; i < nfiles; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		put(p, size, (uint64_t)i);
	}
	CHECK_EQ(vfs_umount("/l"), 0);
}

static void fsck_clean(const char *opts)
{
	struct libfs_fsck ck = { 0 };
	CHECK_EQ(lfs_fsck(opts, &ck), 0);
	printf("  fsck: %s: %llu problems\n", ck.summary, (unsigned long long)ck.problems);
	CHECK_EQ(ck.problems, 0);
}

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

static uint64_t fsck_problems(const char *opts)
{
	struct libfs_fsck ck = { .report = say };
	int r = lfs_fsck(opts, &ck);
	return r < 0 ? 1000000 : ck.problems;
}

/* A power-cut check's end: unmount /l and fsck the image; what failed
 * (0, 1 or 2). */
static int umount_fsck(const char *opts)
{
	int bad = vfs_umount("/l") < 0;   /* (first: fsck reads the image as left) */
	return bad + (fsck_problems(opts) != 0);
}

/* The rounds a mount's cleaning left unwaited for (lfs_cp_settle). */
static uint64_t held_rounds(struct lfs *fs)
{
	struct lfs_stats st;
	lfs_get_stats(fs, &st, NULL);
	return st.cp_held;
}

static void t_many(void)
{
	const char *o = getenv("LFS_O") ? getenv("LFS_O") : "key=m,seg=64,cpkib=256";
	lfs_new(o, 65536, 1);
	char p[64];
	for (int d = 0; d < 20; d++) {
		snprintf(p, sizeof p, "/l/d%d", d);
		CHECK_EQ(vfs_mkdir(p, 0755), 0);
	}
	for (int i = 0; i < 2000; i++) {
		snprintf(p, sizeof p, "/l/d%d/f%d", i % 20, i);
		put(p, 1000 + (size_t)(i % 7) * 300, (uint64_t)i);
	}
	CHECK_EQ(vfs_sync(), 0);
	for (int i = 0; i < 2000; i += 7) {
		snprintf(p, sizeof p, "/l/d%d/f%d", i % 20, i);
		CHECK(same(p, 1000 + (size_t)(i % 7) * 300, (uint64_t)i));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_reboot(&u);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 0; i < 2000; i++) {
		snprintf(p, sizeof p, "/l/d%d/f%d", i % 20, i);
		CHECK(same(p, 1000 + (size_t)(i % 7) * 300, (uint64_t)i));
	}
	/* Delete half, rename some across directories. */
	for (int i = 0; i < 2000; i += 2) {
		snprintf(p, sizeof p, "/l/d%d/f%d", i % 20, i);
		CHECK_EQ(vfs_unlink(p), 0);
	}
	for (int i = 1; i < 200; i += 2) {
		char q[64];
		snprintf(p, sizeof p, "/l/d%d/f%d", i % 20, i);
		snprintf(q, sizeof q, "/l/d%d/r%d", (i + 1) % 20, i);
		CHECK_EQ(vfs_rename(p, q), 0);
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_reboot(&u);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 1; i < 2000; i += 2) {
		if (i < 200)
			snprintf(p, sizeof p, "/l/d%d/r%d", (i + 1) % 20, i);
		else
			snprintf(p, sizeof p, "/l/d%d/f%d", i % 20, i);
		CHECK(same(p, 1000 + (size_t)(i % 7) * 300, (uint64_t)i));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_free(&u);
	printf("many: ok\n");
}

static void t_roll(void)
{
	const char *o = "key=r,seg=64";
	lfs_new(o, 32768, 2);
	char p[64];
	/* 40 commits after the last checkpoint, spanning several segments. */
	for (int i = 0; i < 40; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		put(p, 9000, (uint64_t)i + 100);
		CHECK_EQ(vfs_sync(), 0);
	}
	CHECK_EQ(vfs_rename("/l/f0", "/l/g0"), 0);
	CHECK_EQ(vfs_unlink("/l/f1"), 0);
	CHECK_EQ(vfs_sync(), 0);
	put("/l/unsynced", 5000, 7);
	vfs_abandon();
	ufx_crash(&u);
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	struct lfs_stats st;
	lfs_get_stats(fs, &st, NULL);
	printf("  roll-forward: %llu partial segments, %llu commits, %llu sectors read\n",
	       (unsigned long long)st.roll_ps, (unsigned long long)st.roll_groups,
	       (unsigned long long)st.roll_sect);
	CHECK(st.roll_groups >= 41);
	CHECK_EQ(lfs_unmount(fs), 0);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK(same("/l/g0", 9000, 100));
	struct libfs_stat sst;
	CHECK_EQ(vfs_stat("/l/f1", &sst), -ENOENT);
	CHECK_EQ(vfs_stat("/l/unsynced", &sst), -ENOENT);
	for (int i = 2; i < 40; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		CHECK(same(p, 9000, (uint64_t)i + 100));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_free(&u);
	printf("roll: ok\n");
}

static void t_cleaner(void)
{
	/* 16 MiB disk, 64 KiB segments; files of 16 KiB filling 80%. */
	const char *o = "key=c,seg=64";
	lfs_new(o, 32768, 3);
	struct libfs_statfs sf;
	CHECK_EQ(vfs_statfs("/l", &sf), 0);
	uint64_t total = sf.bfree * sf.bsize;
	int nfiles = (int)(total * 8 / 10 / 16384);
	static uint32_t ver[2048];
	CHECK(nfiles < 2048);
	char p[64];
	for (int i = 0; i < nfiles; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		put(p, 16384, (uint64_t)i << 20);
	}
	CHECK_EQ(vfs_sync(), 0);
	uint64_t rs = 99;
	uint64_t rewrites = 10 * (total - (uint64_t)nfiles * 16384) / 16384;
	for (uint64_t k = 0; k < rewrites; k++) {
		rs = rs * 6364136223846793005ull + 1;
		int i = (int)((rs >> 33) % (uint64_t)nfiles);
		ver[i]++;
		snprintf(p, sizeof p, "/l/f%d", i);
		put(p, 16384, ((uint64_t)i << 20) + ver[i]);
		if (k % 64 == 0)
			CHECK_EQ(vfs_sync(), 0);
	}
	CHECK_EQ(vfs_sync(), 0);
	for (int i = 0; i < nfiles; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		CHECK(same(p, 16384, ((uint64_t)i << 20) + ver[i]));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	struct lfs_stats st;
	struct lfs_usage us;
	lfs_get_stats(fs, &st, &us);
	printf("  cleaner: %d files, %llu rewrites, %llu MiB read by the cleaner, write cost %.2f, "
	       "%llu of %llu segments in use\n", nfiles, (unsigned long long)rewrites,
	       (unsigned long long)(st.clean_read >> 20),
	       (double)(st.new_bytes + st.clean_read + st.clean_moved) / (double)st.new_bytes,
	       (unsigned long long)us.inuse, (unsigned long long)us.mapped);
	CHECK(st.clean_read > 0);
	CHECK(lfs_clean_now(fs, 0) >= 0);
	CHECK_EQ(lfs_unmount(fs), 0);
	ufx_reboot(&u);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 0; i < nfiles; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		CHECK(same(p, 16384, ((uint64_t)i << 20) + ver[i]));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_free(&u);
	printf("cleaner: ok\n");
}

static void t_full(void)
{
	const char *o = "key=f,seg=64";
	lfs_new(o, 16384, 4);
	char p[64];
	int n = 0;
	static uint8_t b[65536];
	for (;; n++) {
		snprintf(p, sizeof p, "/l/f%d", n);
		struct vfile *f;
		int r = vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f);
		if (r == -ENOSPC)
			break;
		CHECK_EQ(r, 0);
		fill(b, sizeof b, (uint64_t)n);
		long w = vfs_pwrite(f, b, sizeof b, 0);
		CHECK_EQ(vfs_close(f), 0);
		if (w == -ENOSPC) {
			CHECK_EQ(vfs_unlink(p), 0);
			break;
		}
		CHECK_EQ(w, (long)sizeof b);
		CHECK(n < 1000);
	}
	printf("  full after %d files of 64 KiB on an 8 MiB disk\n", n);
	CHECK(n > 50);
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_reboot(&u);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 0; i < n; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		CHECK(same(p, sizeof b, (uint64_t)i));
	}
	for (int i = 0; i < n; i += 2) {
		snprintf(p, sizeof p, "/l/f%d", i);
		CHECK_EQ(vfs_unlink(p), 0);
	}
	for (int i = 0; i < n / 3; i++) {
		snprintf(p, sizeof p, "/l/g%d", i);
		put(p, sizeof b, (uint64_t)i + 5000);
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 0; i < n / 3; i++) {
		snprintf(p, sizeof p, "/l/g%d", i);
		CHECK(same(p, sizeof b, (uint64_t)i + 5000));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_free(&u);
	printf("full: ok\n");
}

/* The disk sector of log address lba. */
static uint64_t phys(struct lfs *fs, uint64_t lba)
{
	uint64_t ph;
	CHECK_EQ(vvol_mapped(&fs->v, lba, &ph), 1);
	return ph;
}

static void smash(uint64_t sector, size_t off)
{
	uint8_t *s = u.f.hd.medium + sector * BLK_SECTOR_SIZE;
	s[off] ^= 0x5a;
}

static void t_damage(void)
{
	const char *o = "key=d,seg=64";
	lfs_filled(o, 32768, 5, 300, 3000);
	char p[64];
	/* The newer checkpoint copy torn: the older one, then roll-forward. */
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	uint64_t newer = fs->sb.cp_disk[fs->cpseq & 1];
	CHECK_EQ(lfs_unmount(fs), 0);      /* another checkpoint: the other copy */
	CHECK_EQ(lfs_mount(o, &fs), 0);
	newer = fs->sb.cp_disk[fs->cpseq & 1];
	uint64_t older = fs->sb.cp_disk[(fs->cpseq & 1) ^ 1];
	lfs_close_fs(fs);
	ufx_reboot(&u);
	smash(newer, 100);
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 0; i < 300; i += 10) {
		snprintf(p, sizeof p, "/l/f%d", i);
		CHECK(same(p, 3000, (uint64_t)i));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	/* Both copies gone: a clear error, not a crash. */
	CHECK_EQ(lfs_mount(o, &fs), 0);
	newer = fs->sb.cp_disk[fs->cpseq & 1];
	older = fs->sb.cp_disk[(fs->cpseq & 1) ^ 1];
	lfs_close_fs(fs);
	ufx_reboot(&u);
	uint8_t save[2][BLK_SECTOR_SIZE];
	memcpy(save[0], u.f.hd.medium + newer * BLK_SECTOR_SIZE, BLK_SECTOR_SIZE);
	memcpy(save[1], u.f.hd.medium + older * BLK_SECTOR_SIZE, BLK_SECTOR_SIZE);
	smash(newer, 8);
	smash(older, 8);
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), -EIO);
	struct libfs_fsck ck = { 0 };
	CHECK_EQ(lfs_fsck(o, &ck), -EIO);
	memcpy(u.f.hd.medium + newer * BLK_SECTOR_SIZE, save[0], BLK_SECTOR_SIZE);
	memcpy(u.f.hd.medium + older * BLK_SECTOR_SIZE, save[1], BLK_SECTOR_SIZE);
	ufx_reboot(&u);
	fsck_clean(o);
	/* A summary in the roll-forward region, not the newest commit's. */
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	put("/l/a", 3000, 1001);
	CHECK_EQ(vfs_sync(), 0);
	put("/l/b", 3000, 1002);
	CHECK_EQ(vfs_sync(), 0);
	vfs_abandon();
	ufx_crash(&u);
	CHECK_EQ(lfs_mount(o, &fs), 0);    /* rolls forward, checkpoints at unmount */
	struct lnode *n;
	CHECK_EQ(lfs_walk(fs, "b", &n), 0);
	uint64_t bdata = n->d.direct[0];
	lfs_put(fs, n);
	uint64_t at = phys(fs, LFS_PTR_LBA(bdata));
	lfs_close_fs(fs);                  /* no checkpoint: b stays in the roll-forward */
	ufx_reboot(&u);
	/* The header of the PS holding b's data is the nearest one before it.
	 * That PS is not b's commit (its own PS, after a flush), which is
	 * intact: so the log did not merely end there, and the mount is
	 * read-only as of a, fsck says why (more in tailbad). */
	uint64_t h = at;
	while (memcmp(u.f.hd.medium + h * BLK_SECTOR_SIZE, "LFSP", 4) != 0)
		h--;
	uint8_t keep[BLK_SECTOR_SIZE];
	memcpy(keep, u.f.hd.medium + h * BLK_SECTOR_SIZE, BLK_SECTOR_SIZE);
	smash(h, 40);
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK(same("/l/a", 3000, 1001));
	struct libfs_stat sst;
	CHECK_EQ(vfs_stat("/l/b", &sst), -ENOENT);
	CHECK_EQ(vfs_umount("/l"), 0);
	CHECK(fsck_problems(o) > 0);
	memcpy(u.f.hd.medium + h * BLK_SECTOR_SIZE, keep, BLK_SECTOR_SIZE);
	ufx_reboot(&u);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK(same("/l/b", 3000, 1002));
	CHECK_EQ(vfs_umount("/l"), 0);     /* a checkpoint: no roll-forward below */
	/* An inode map block: -EIO and read-only, the rest still readable. */
	CHECK_EQ(lfs_mount(o, &fs), 0);
	uint64_t im = phys(fs, LFS_PTR_LBA(fs->imaddr[0]));
	lfs_close_fs(fs);
	ufx_reboot(&u);
	smash(im, 700);
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK_EQ(vfs_stat("/l/f3", &sst), -EIO);
	struct vfile *f;
	CHECK(vfs_open("/l/new", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f) < 0);
	CHECK_EQ(vfs_umount("/l"), 0);
	CHECK(fsck_problems(o) > 0);
	ufx_free(&u);
	printf("damage: ok\n");
}

/* Damage to a PS written after the last checkpoint, with valid commits
 * after it, is not a torn tail: the mount says so and is read-only as of
 * the commit before it, instead of silently dropping the synced files
 * written after it.  Damage to the newest commit is a torn tail as far as
 * the disk can say (docs/lfs.md, "Damage"): the log ends before it. */
enum { TB_N = 24, TB_PS = 256 };
static struct tb_ps { uint64_t lba, phys, seq; uint32_t nsect, ntrail; int commit; } tb_ps[TB_PS];
static int tb_nps;
static uint64_t tb_seq[TB_N];           /* the seq of each file's commit */

/* Mount (options o) after sectors were damaged: read-only, the damage
 * reported, files /l/s0 .. s(good-1) as synced and none after. */
static void tb_check(const char *o, int good)
{
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK(fs->rdonly);
	CHECK(fs->logbad.seq != 0 && fs->logbad.later_seq > fs->logbad.seq);
	struct lfs_stats st;
	lfs_get_stats(fs, &st, NULL);
	printf("    found: damaged at partial segment %llu, a commit at %llu; %llu commits applied, "
	       "%llu sectors read past the end\n", (unsigned long long)fs->logbad.seq,
	       (unsigned long long)fs->logbad.later_seq, (unsigned long long)st.roll_groups,
	       (unsigned long long)st.tail_sect);
	lfs_close_fs(fs);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	char p[64];
	struct libfs_stat sst;
	for (int i = 0; i < TB_N; i++) {
		snprintf(p, sizeof p, "/l/s%d", i);
		if (i < good)
			CHECK(same(p, 9000, 500 + (uint64_t)i));
		else
			CHECK_EQ(vfs_stat(p, &sst), -ENOENT);
	}
	struct vfile *f;
	CHECK(vfs_open("/l/new", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f) < 0);
	CHECK_EQ(vfs_umount("/l"), 0);
	CHECK(fsck_problems(o) > 0);
}

static void t_tailbad(void)
{
	const char *o = "key=t,seg=64";
	lfs_filled(o, 32768, 9, 50, 3000);            /* ends with a checkpoint */
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	char p[64];
	for (int i = 0; i < TB_N; i++) {
		snprintf(p, sizeof p, "/l/s%d", i);
		put(p, 9000, 500 + (uint64_t)i);
		CHECK_EQ(vfs_sync(), 0);
	}
	vfs_abandon();
	ufx_crash(&u);
	/* The log after the checkpoint, PS by PS, from the checkpoint's head;
	 * and which commit made each file durable (the first after its data). */
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	struct lfs_cp cp;
	uint64_t *ptrs;
	CHECK_EQ(lfs_cp_read(fs, (int)(fs->cpseq & 1), &cp, &ptrs), 0);
	free(ptrs);
	uint64_t segs = fs->sb.seg_sect, lba = cp.head_lba;
	for (tb_nps = 0; tb_nps < TB_PS; tb_nps++) {
		struct lfs_pshdr h;
		uint64_t ph;
		if (vvol_mapped(&fs->v, lba, &ph) != 1)
			break;
		memcpy(&h, u.f.hd.medium + ph * BLK_SECTOR_SIZE, sizeof h);
		if (h.magic != LFS_PS_MAGIC || h.lba != lba ||
		    (tb_nps > 0 && h.seq != tb_ps[tb_nps - 1].seq + 1))
			break;
		tb_ps[tb_nps] = (struct tb_ps){ lba, ph, h.seq, h.nsect, h.ntrail,
		                                 (h.flags & LFS_PS_COMMIT) != 0 };
		lba += h.nsect;
		if (lba % segs + LFS_PS_MIN > segs)
			lba = h.next_seg * segs;
	}
	CHECK(tb_nps > 20 && tb_nps < TB_PS);
	for (int i = 0; i < TB_N; i++) {
		struct lnode *n;
		snprintf(p, sizeof p, "s%d", i);
		CHECK_EQ(lfs_walk(fs, p, &n), 0);
		uint64_t d = LFS_PTR_LBA(n->d.direct[0]);
		lfs_put(fs, n);
		int k = 0;
		while (k < tb_nps && !(tb_ps[k].lba <= d && d < tb_ps[k].lba + tb_ps[k].nsect))
			k++;
		while (k < tb_nps && !tb_ps[k].commit)
			k++;
		CHECK(k < tb_nps);
		tb_seq[i] = tb_ps[k].seq;
	}
	lfs_close_fs(fs);                      /* no checkpoint: all in the roll-forward */
	ufx_reboot(&u);
	size_t bytes = (size_t)u.f.hd.nsectors * BLK_SECTOR_SIZE;
	uint8_t *image = malloc(bytes);
	CHECK(image != NULL);
	memcpy(image, u.f.hd.medium, bytes);
	/* Which PSs: a commit in the middle, a PS that is not a commit, and
	 * the last PS of a segment that is not its first - the commits after
	 * it are in the next segment, found through the bad header's next
	 * segment or, the header itself bad, the one before it names. */
	int mid = -1, plain = -1, end = -1;
	for (int k = tb_nps / 3; k + 2 < tb_nps; k++) {
		if (mid < 0 && tb_ps[k].commit)
			mid = k;
		if (plain < 0 && !tb_ps[k].commit && tb_ps[k].ntrail > 0)
			plain = k;
		if (end < 0 && tb_ps[k + 1].lba % segs == 0 && tb_ps[k].lba % segs != 0)
			end = k;
	}
	CHECK(mid > 0 && plain > 0 && end > 0);
	/* (A commit's every sector is summed; another PS's header and
	 * trailer only - its file data is not, nor in any PS once it is
	 * applied: a damaged data sector reads back as it is.  A filler PS
	 * is its header alone.) */
	const struct { int ps; int sector; } cases[] = {
		{ mid, 1 }, { mid, 0 }, { plain, -1 }, { plain, 0 }, { end, tb_ps[end].commit ? 1 : -1 },
		{ end, 0 } };
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const struct tb_ps *ps = &tb_ps[cases[c].ps];
		if (cases[c].sector < 0 && ps->ntrail == 0)
			continue;
		uint32_t sec = cases[c].sector >= 0 ? (uint32_t)cases[c].sector : ps->nsect - 1;
		int good = 0;
		while (good < TB_N && tb_seq[good] < ps->seq)
			good++;
		printf("  partial segment %llu (%s, segment %llu, sectors %llu..%llu), its sector %u: "
		       "%d files before it\n", (unsigned long long)ps->seq, ps->commit ? "commit" : "no commit",
		       (unsigned long long)(ps->lba / segs), (unsigned long long)(ps->lba % segs),
		       (unsigned long long)(ps->lba % segs + ps->nsect - 1), sec, good);
		smash(ps->phys + sec, 40);
		ufx_reboot(&u);
		tb_check(o, good);
		memcpy(u.f.hd.medium, image, bytes);
		ufx_reboot(&u);
	}
	/* The newest commit: as a torn write, the log ends before it. */
	CHECK(tb_ps[tb_nps - 1].commit && tb_ps[tb_nps - 1].seq == tb_seq[TB_N - 1]);
	smash(tb_ps[tb_nps - 1].phys + 1, 40);
	ufx_reboot(&u);
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK(!fs->rdonly && fs->logbad.seq == 0);
	lfs_close_fs(fs);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	snprintf(p, sizeof p, "/l/s%d", TB_N - 2);
	CHECK(same(p, 9000, 500 + TB_N - 2));
	struct libfs_stat sst;
	snprintf(p, sizeof p, "/l/s%d", TB_N - 1);
	CHECK_EQ(vfs_stat(p, &sst), -ENOENT);
	CHECK_EQ(vfs_umount("/l"), 0);
	free(image);
	ufx_free(&u);
	printf("tailbad: ok\n");
}

/* A checkpoint record goes to the disk in the same flush as the commit and
 * table blocks written after the flush before it, and says how they sum
 * (record version 4, proof_lba and proof_hash): a mount that finds them
 * damaged or missing - as a power cut in that flush may leave them -
 * does not believe the record, takes the older copy, and rolls forward to
 * the same files.  Undamaged, the newer record is used. */
static void t_proof(void)
{
	const char *o = "key=p,seg=64";
	lfs_filled(o, 32768, 11, 40, 5000);            /* ends with a checkpoint */
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	char p[64];
	for (int i = 0; i < 10; i++) {
		snprintf(p, sizeof p, "/l/n%d", i);
		put(p, 7000, 900 + (uint64_t)i);
	}
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(vfs_umount("/l"), 0);                 /* a checkpoint, with a proof */
	ufx_reboot(&u);
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK(fs->st.cp_unproved == 0 && fs->st.proof_sect > 0);
	uint64_t seq = fs->cpseq;
	struct lfs_cp cp;
	uint64_t *ptrs;
	CHECK_EQ(lfs_cp_read(fs, (int)(seq & 1), &cp, &ptrs), 0);
	free(ptrs);
	CHECK(cp.version == LFS_CP_VERSION && cp.proof_lba != 0 && cp.proof_lba < cp.head_lba);
	/* No memory to check the proof: the mount says so and mounts nothing,
	 * rather than taking the older record or calling both invalid. */
	lfs_close_fs(fs);
	ufx_reboot(&u);
	lfs_debug_proof_nomem = 1;
	CHECK_EQ(lfs_mount(o, &fs), -ENOMEM);
	lfs_debug_proof_nomem = 0;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK(fs->cpseq == seq && fs->st.cp_unproved == 0);
	/* Its first sector (the first PS's header), and its last one. */
	uint64_t first, last;
	CHECK_EQ(vvol_mapped(&fs->v, cp.proof_lba, &first), 1);
	CHECK_EQ(vvol_mapped(&fs->v, cp.head_lba - 1, &last), 1);
	lfs_close_fs(fs);
	ufx_reboot(&u);
	size_t bytes = (size_t)u.f.hd.nsectors * BLK_SECTOR_SIZE;
	uint8_t *image = malloc(bytes);
	CHECK(image != NULL);
	memcpy(image, u.f.hd.medium, bytes);
	const uint64_t where[] = { first, last };
	for (int c = 0; c < 2; c++) {
		smash(where[c], c ? 300 : 40);
		ufx_reboot(&u);
		CHECK_EQ(lfs_mount(o, &fs), 0);
		printf("  the proof's %s sector damaged: record %llu not believed, %llu used\n",
		       c ? "last" : "first", (unsigned long long)seq, (unsigned long long)fs->cpseq);
		CHECK(fs->st.cp_unproved == 1 && fs->cpseq == seq - 1 && !fs->rdonly && fs->logbad.seq == 0);
		lfs_close_fs(fs);
		fsck_clean(o);
		CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
		for (int i = 0; i < 40; i++) {
			snprintf(p, sizeof p, "/l/f%d", i);
			CHECK(same(p, 5000, (uint64_t)i));
		}
		for (int i = 0; i < 10; i++) {
			snprintf(p, sizeof p, "/l/n%d", i);
			CHECK(same(p, 7000, 900 + (uint64_t)i));
		}
		CHECK_EQ(vfs_umount("/l"), 0);
		memcpy(u.f.hd.medium, image, bytes);
		ufx_reboot(&u);
	}
	free(image);
	ufx_free(&u);
	printf("proof: ok\n");
}

/* Directory and indirect blocks carry sums: a damaged one is -EIO and a
 * read-only mount with a message, never a wrong name or another file's
 * bytes; fsck finds it. */
static void t_sums(void)
{
	const char *o = "key=s,seg=64";
	lfs_new(o, 32768, 7);
	CHECK_EQ(vfs_mkdir("/l/d", 0755), 0);
	put("/l/d/x", 100, 1);
	put("/l/big", 100000, 2);
	CHECK_EQ(vfs_umount("/l"), 0);
	struct lfs *fs;
	struct lnode *n;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK_EQ(lfs_walk(fs, "d", &n), 0);
	uint64_t dsec = phys(fs, LFS_PTR_LBA(n->d.direct[0]));
	lfs_put(fs, n);
	CHECK_EQ(lfs_walk(fs, "big", &n), 0);
	uint64_t isec = phys(fs, LFS_PTR_LBA(n->d.ind));
	lfs_put(fs, n);
	lfs_close_fs(fs);
	ufx_reboot(&u);
	uint8_t save[BLK_SECTOR_SIZE];
	memcpy(save, u.f.hd.medium + dsec * BLK_SECTOR_SIZE, BLK_SECTOR_SIZE);
	smash(dsec, 20);                   /* inside x's name */
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/l/d/x", &st), -EIO);
	CHECK(same("/l/big", 100000, 2));
	CHECK_EQ(vfs_umount("/l"), 0);
	CHECK(fsck_problems(o) > 0);
	memcpy(u.f.hd.medium + dsec * BLK_SECTOR_SIZE, save, BLK_SECTOR_SIZE);
	smash(isec, 8);                    /* the pointer to block 9 */
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK(same("/l/d/x", 100, 1));
	struct vfile *f;
	static uint8_t b[100000];
	CHECK_EQ(vfs_open("/l/big", LIBFS_O_READ, 0, &f), 0);
	CHECK_EQ(vfs_pread(f, b, 8 * 4096, 0), 8 * 4096);
	CHECK_EQ(vfs_pread(f, b, 4096, 9 * 4096), -EIO);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_umount("/l"), 0);
	CHECK(fsck_problems(o) > 0);
	ufx_free(&u);
	printf("sums: ok\n");
}

/* ---- the cleaner under power cuts ---------------------------------------------- */

#define CP_STEPS 48
#define CP_OPTS  "key=pcc,seg=64,segs=24,cpkib=128,autoclean=0,pool=1"

static size_t ver_size(int j, int v)
{
	return 2000 + (size_t)((v * 977 + j * 131) % 6000);
}

/* The version churn file j holds once steps [0, n) are done. */
static int ver_at(int j, int n)
{
	int v = 0;
	for (int k = 1; k < n; k++)
		if (k % 4 == j)
			v = k;
	return v;
}

static int lput(struct lfs *fs, const char *path, size_t n, uint64_t seed)
{
	static uint8_t b[65536];
	struct lfile lf = { 0 };
	void *h = &lf;
	fill(b, n, seed);
	int e = lfs_ops.open(fs, path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &h);
	if (e < 0)
		return e;
	long w = lfs_ops.write(fs, h, b, n, 0);
	lfs_ops.close(fs, h);
	return w == (long)n ? 0 : -EIO;
}

static int cc_prepare(struct pcut *pc)
{
	uint64_t sb;
	return lfs_mkfs(CP_OPTS, &sb);
}

/* Rounds whose checkpoint the work did not wait for (the cut points must
 * fall inside them). */
static uint64_t cc_held;

static int cc_work(struct pcut *pc)
{
	struct lfs *fs;
	char p[32];
	if (lfs_mount(CP_OPTS, &fs) < 0)
		return -1;
	int e = 0;
	/* Step 0: long-lived files among the first versions of short-lived
	 * ones, so the cleaner has live blocks to move. */
	for (int i = 0; i < 12 && e == 0; i++) {
		snprintf(p, sizeof p, i % 3 ? "s%d" : "c%d", i % 3 ? i : i / 3);
		e = lput(fs, p, i % 3 ? 6000 : ver_size(i / 3, 0), i % 3 ? 500 + (uint64_t)i :
		         (uint64_t)(i / 3) * 100000);
	}
	if (e == 0 && (e = lfs_ops.sync(fs)) == 0)
		pc_ack(pc, 1);
	for (int k = 1; k < CP_STEPS && e == 0; k++) {
		int j = k % 4;
		snprintf(p, sizeof p, "c%d", j);
		e = lput(fs, p, ver_size(j, k), (uint64_t)j * 100000 + (uint64_t)k);
		if (e == 0)
			e = lfs_ops.sync(fs);
		if (e == 0)
			pc_ack(pc, (uint64_t)k + 1);
		if (e == 0 && k % 6 == 0)
			e = lfs_clean_now(fs, 3) < 0 ? -1 : 0;
	}
	if (pc->cut < 0)
		cc_held = held_rounds(fs);   /* (the uncut run's) */
	if (e == 0)
		return lfs_unmount(fs);
	lfs_close_fs(fs);
	return e;
}

static int cc_check(struct pcut *pc)
{
	int bad = 0;
	char p[32];
	if (vfs_mount("/l", "lfs", CP_OPTS, 1) < 0) {
		fprintf(stderr, "cleaner power cut: no mount\n");
		return 1;
	}
	uint64_t n = pc->acked;
	for (int i = 1; i < 12 && n >= 1; i++) {
		if (i % 3 == 0)
			continue;
		snprintf(p, sizeof p, "/l/s%d", i);
		bad += !same(p, 6000, 500 + (uint64_t)i);
	}
	for (int j = 0; j < 4 && n >= 1; j++) {
		snprintf(p, sizeof p, "/l/c%d", j);
		int a = ver_at(j, (int)n), b = ver_at(j, (int)n + 1);
		/* The step in flight may have truncated it and no more. */
		int fresh = a != b && same(p, 0, 0);
		if (!fresh && !same(p, ver_size(j, a), (uint64_t)j * 100000 + (uint64_t)a) &&
		    !same(p, ver_size(j, b), (uint64_t)j * 100000 + (uint64_t)b)) {
			fprintf(stderr, "cleaner power cut: %s is neither version %d nor %d\n", p, a, b);
			bad++;
		}
	}
	return bad + umount_fsck(CP_OPTS);
}

static void t_cleancut(void)
{
	struct pcut pc = { .name = "lfs-cleaner", .nsectors = 16384, .seed = 5, .prepare = cc_prepare,
	                   .work = cc_work, .check = cc_check, .quiet = 0 };
	int failed = pc_run_spread(&pc, getenv("LFS_PC_ALL") ? 100000 : 200);
	printf("cleaner power cuts: %llu requests, %llu cuts, %d failed; %llu rounds not waited for\n",
	       (unsigned long long)pc.requests, (unsigned long long)pc.runs - 1, failed,
	       (unsigned long long)cc_held);
	CHECK_EQ(failed, 0);
	CHECK(cc_held > 0);
	pc_free(&pc);
}

/* ---- the background cleaner under power cuts ------------------------------------ */

/* A volume three fifths full (at two-thirds, this small a volume runs
 * out of room the cleaner can use: ENOSPC), files overwritten whole again and again
 * with autoclean on, so that the cleaner runs inside the writes and its
 * rounds' checkpoints are not waited for (their COMMIT PS held back while
 * the program writes on); a sync every third step. */
#define AC_OPTS  "key=pca,seg=64,segs=28,cpkib=256,pool=4"
#define AC_FILES 17
#define AC_SIZE  60000
#define AC_STEPS 90

static uint64_t ac_held, ac_acked, ac_early;

/* While a round's checkpoint is on its way, none of the segments it
 * empties may be reusable yet (rule 3: not before its record's flush). */
static void ac_no_early_reuse(struct lfs *fs)
{
	for (uint32_t i = 0; fs->cp_pending && i < fs->ncpw; i++)
		if (lfs_seg_reusable(fs, fs->cpw[i]))
			ac_early++;
}

static uint64_t ac_seed(int step)
{
	return 7000 + (uint64_t)step;
}

static int ac_prepare(struct pcut *pc)
{
	uint64_t sb;
	return lfs_mkfs(AC_OPTS, &sb);
}

/* Step k (from 1) writes file k % AC_FILES with seed ac_seed(k); step 0
 * is every file's first version, ac_seed(-j - 1) for file j. */
static int ac_work(struct pcut *pc)
{
	struct lfs *fs;
	char p[32];
	if (lfs_mount(AC_OPTS, &fs) < 0)
		return -1;
	int e = 0;
	for (int j = 0; j < AC_FILES && e == 0; j++) {
		snprintf(p, sizeof p, "f%d", j);
		e = lput(fs, p, AC_SIZE, ac_seed(-j - 1));
	}
	if (e == 0 && (e = lfs_ops.sync(fs)) == 0)
		pc_ack(pc, 1);
	for (int k = 1; k <= AC_STEPS && e == 0; k++) {
		snprintf(p, sizeof p, "f%d", k % AC_FILES);
		e = lput(fs, p, AC_SIZE, ac_seed(k));
		ac_no_early_reuse(fs);
		if (e == 0 && k % 3 == 0 && (e = lfs_ops.sync(fs)) == 0)
			pc_ack(pc, (uint64_t)k + 1);
	}
	if (pc->cut < 0) {                /* (the uncut run: it must get to the end) */
		ac_held = held_rounds(fs);
		ac_acked = e == 0 ? pc->acked : 0;
	}
	if (e == 0)
		return lfs_unmount(fs);
	lfs_close_fs(fs);
	return e;
}

/* File j after steps [0, n): the seed of its last version, or 0. */
static uint64_t ac_version(int j, int n)
{
	uint64_t v = n >= 1 ? ac_seed(-j - 1) : 0;
	for (int k = 1; k < n && k <= AC_STEPS; k++)
		if (k % AC_FILES == j)
			v = ac_seed(k);
	return v;
}

static int ac_check(struct pcut *pc)
{
	int bad = 0;
	char p[32];
	if (vfs_mount("/l", "lfs", AC_OPTS, 1) < 0) {
		fprintf(stderr, "autoclean power cut: no mount\n");
		return 1;
	}
	int n = (int)pc->acked;
	for (int j = 0; j < AC_FILES && n >= 1; j++) {
		snprintf(p, sizeof p, "/l/f%d", j);
		/* The acknowledged version or a later one (a round's commit may
		 * have taken later steps along), or a later one's truncation. */
		int ok = same(p, AC_SIZE, ac_version(j, n));
		for (int k = n; !ok && k <= AC_STEPS; k++)
			if (k % AC_FILES == j)
				ok = same(p, AC_SIZE, ac_seed(k)) || same(p, 0, 0);
		if (!ok) {
			fprintf(stderr, "autoclean power cut: %s is not a version from step %d on\n", p, n);
			bad++;
		}
	}
	return bad + umount_fsck(AC_OPTS);
}

static void t_autocut(void)
{
	struct pcut pc = { .name = "lfs-autoclean", .nsectors = 16384, .seed = 11, .prepare = ac_prepare,
	                   .work = ac_work, .check = ac_check, .quiet = 0 };
	int failed = pc_run_spread(&pc, getenv("LFS_PC_ALL") ? 100000 : 200);
	printf("autoclean power cuts: %llu requests, %llu cuts, %d failed; %llu rounds not waited for\n",
	       (unsigned long long)pc.requests, (unsigned long long)pc.runs - 1, failed,
	       (unsigned long long)ac_held);
	CHECK_EQ(failed, 0);
	CHECK(ac_held > 0);
	CHECK_EQ(ac_acked, AC_STEPS + 1);
	CHECK_EQ(ac_early, 0);
	pc_free(&pc);
}

/* ---- sharing one file through proxies ------------------------------------------- */

static void t_share(void)
{
	const char *o = "key=sh,seg=64";
	ufx_new(&u, 32768, HD_POLLED, 6);
	uint64_t sb;
	CHECK_EQ(lfs_mkfs(o, &sb), 0);
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	/* Files around it, so its blocks are spread over segments. */
	char p[32];
	for (int i = 0; i < 40; i++) {
		snprintf(p, sizeof p, "x%d", i);
		CHECK_EQ(lput(fs, p, 7000, (uint64_t)i), 0);
		if (i == 20)
			CHECK_EQ(lput(fs, "f", 8000, 42), 0);
	}
	CHECK_EQ(lfs_ops.sync(fs), 0);
	struct lfs_token t, t2;
	CHECK_EQ(lfs_share(fs, "f", &t), 0);
	char txt[96];
	lfs_token_str(&t, txt);
	CHECK_EQ(lfs_token_parse(txt, &t2), 0);
	CHECK(t2.id == t.id && t2.sector == t.sector && memcmp(&t2.rc, &t.rc, sizeof t.rc) == 0);
	/* Another program: the exodisk and the token, nothing else. */
	struct edc_host reader;
	edc_host_init(&reader, &u.f.h, u.f.ed);
	static uint8_t got[65536], want[65536];
	uint64_t size, gen;
	CHECK_EQ(lfs_share_read(&reader.edc, &t2, got, sizeof got, &size, &gen), 0);
	fill(want, 8000, 42);
	CHECK(size == 8000 && gen == 1 && memcmp(got, want, 8000) == 0);
	/* It follows the file: rewritten longer, then moved by the cleaner. */
	CHECK_EQ(lput(fs, "f", 30000, 43), 0);
	CHECK_EQ(lfs_ops.sync(fs), 0);
	CHECK_EQ(lfs_share_read(&reader.edc, &t2, got, sizeof got, &size, &gen), 0);
	fill(want, 30000, 43);
	CHECK(size == 30000 && gen == 2 && memcmp(got, want, 30000) == 0);
	for (int i = 0; i < 40; i += 2) {
		snprintf(p, sizeof p, "x%d", i);
		CHECK_EQ(lfs_ops.unlink(fs, p), 0);
	}
	struct lfs_stats st0, st1;
	lfs_get_stats(fs, &st0, NULL);
	CHECK(lfs_clean_now(fs, 0) >= 0);
	lfs_get_stats(fs, &st1, NULL);
	CHECK(st1.clean_read > st0.clean_read);
	CHECK_EQ(lfs_share_read(&reader.edc, &t2, got, sizeof got, &size, &gen), 0);
	CHECK(size == 30000 && memcmp(got, want, 30000) == 0);
	printf("  share: generation %llu after the cleaner\n", (unsigned long long)gen);
	/* Read-only, and only with the share's capability. */
	struct ed_protector px = edc_prot_extent(0, t.id, &t.rc, &t.rc);
	px.kind = ED_PK_PROXY;
	CHECK_EQ(edc_write(&reader.edc, &px, t.sector, got, 512), ED_E_CAP);
	struct lfs_token bad = t2;
	bad.rc.w[0] ^= 1;
	CHECK_EQ(lfs_share_read(&reader.edc, &bad, got, sizeof got, &size, &gen), -ENOENT);
	/* Unshared: gone.  Shared again, then the owner dies: gone too. */
	CHECK_EQ(lfs_unshare(fs, &t), 0);
	CHECK_EQ(lfs_share_read(&reader.edc, &t2, got, sizeof got, &size, &gen), -ENOENT);
	CHECK_EQ(lfs_share(fs, "f", &t), 0);
	CHECK_EQ(lfs_share_read(&reader.edc, &t, got, sizeof got, &size, &gen), 0);
	/* Deleting the file ends the share at the next commit. */
	CHECK_EQ(lfs_ops.unlink(fs, "f"), 0);
	CHECK_EQ(lfs_ops.sync(fs), 0);
	CHECK_EQ(lfs_share_read(&reader.edc, &t, got, sizeof got, &size, &gen), -ENOENT);
	CHECK_EQ(lput(fs, "g", 5000, 44), 0);
	CHECK_EQ(lfs_share(fs, "g", &t), 0);
	CHECK_EQ(lfs_share_read(&reader.edc, &t, got, sizeof got, &size, &gen), 0);
	ufx_stop(&u);                      /* the owner exits without unmounting */
	CHECK_EQ(lfs_share_read(&reader.edc, &t, got, sizeof got, &size, &gen), -ENOENT);
	lfs_ops.abandon(fs);
	edc_host_exit(&reader);
	ufx_start(&u);
	fsck_clean(o);
	ufx_free(&u);
	printf("share: ok\n");
}

static void t_powercut(void)
{
	const char *all = getenv("LFS_PC_ALL");
	struct fscut c = { .ops = &lfs_ops,
	                   .opts = "key=cut,seg=64,segs=10,cpkib=64,cleanlo=3,cleanhi=4,pool=1" };
	CHECK_EQ(fscut_run(&c, 63, all ? 100000 : 250, 77), 0);
}

/* ---- commits made because much is pending, under power cuts ------------------ */

#define GC_FILES 480
#define GC_SYNC  160
#define GC_OPTS  "key=pgc,seg=64,segs=96,cpkib=1024,autoclean=0"
static uint64_t gc_commits;

static int gc_prepare(struct pcut *pc)
{
	uint64_t sb;
	struct lfs *fs;
	int e = lfs_mkfs(GC_OPTS, &sb);
	if (e == 0 && (e = lfs_mount(GC_OPTS, &fs)) == 0) {
		for (int d = 0; d < 4 && e == 0; d++) {
			char p[16];
			snprintf(p, sizeof p, "d%d", d);
			e = lfs_ops.mkdir(fs, p, 0755);
		}
		int u = lfs_unmount(fs);
		e = e ? e : u;
	}
	return e;
}

static void gc_path(char *p, size_t n, int i, int vfs)
{
	snprintf(p, n, "%sd%d/f%d", vfs ? "/l/" : "", i % 4, i);
}

static size_t gc_size(int i)
{
	return 3000 + (size_t)(i * 389 % 6000);
}

static int gc_work(struct pcut *pc)
{
	struct lfs *fs;
	char p[32];
	if (lfs_mount(GC_OPTS, &fs) < 0)
		return -1;
	int e = 0;
	for (int i = 0; i < GC_FILES && e == 0; i++) {
		gc_path(p, sizeof p, i, 0);
		e = lput(fs, p, gc_size(i), 7000 + (uint64_t)i);
		if (e == 0 && (i + 1) % GC_SYNC == 0 && (e = lfs_ops.sync(fs)) == 0)
			pc_ack(pc, (uint64_t)i + 1);
	}
	struct lfs_stats st;
	lfs_get_stats(fs, &st, NULL);
	if (st.commits > gc_commits)
		gc_commits = st.commits;
	if (e == 0)
		return lfs_unmount(fs);
	lfs_close_fs(fs);
	return e;
}

static int gc_check(struct pcut *pc)
{
	int bad = 0;
	char p[32];
	if (vfs_mount("/l", "lfs", GC_OPTS, 1) < 0) {
		fprintf(stderr, "group power cut: no mount\n");
		return 1;
	}
	/* The first file missing; everything before it there, nothing after. */
	int m = 0;
	struct libfs_stat st;
	for (; m < GC_FILES; m++) {
		gc_path(p, sizeof p, m, 1);
		if (vfs_stat(p, &st) < 0)
			break;
	}
	if ((uint64_t)m < pc->acked) {
		fprintf(stderr, "group power cut: %d files, %llu were synced\n", m,
		        (unsigned long long)pc->acked);
		bad++;
	}
	for (int i = 0; i < m; i++) {
		gc_path(p, sizeof p, i, 1);
		/* The last one may have been committed between its creation and
		 * its write. */
		if (!same(p, gc_size(i), 7000 + (uint64_t)i) && !(i == m - 1 && same(p, 0, 0))) {
			fprintf(stderr, "group power cut: %s is wrong (%d files there)\n", p, m);
			bad++;
		}
	}
	for (int i = m + 1; i < GC_FILES; i++) {
		gc_path(p, sizeof p, i, 1);
		if (vfs_stat(p, &st) == 0) {
			fprintf(stderr, "group power cut: %s is there, %s is not\n", p, "an earlier file");
			bad++;
			break;
		}
	}
	return bad + umount_fsck(GC_OPTS);
}

static void t_groupcut(void)
{
	struct pcut pc = { .name = "lfs-groups", .nsectors = 16384, .seed = 9, .prepare = gc_prepare,
	                   .work = gc_work, .check = gc_check, .quiet = 0 };
	int failed = pc_run_spread(&pc, getenv("LFS_PC_ALL") ? 100000 : 100);
	printf("group power cuts: %llu requests, %llu cuts, %d failed; %llu commits in the uncut run "
	       "(%d syncs)\n", (unsigned long long)pc.requests, (unsigned long long)pc.runs - 1, failed,
	       (unsigned long long)gc_commits, GC_FILES / GC_SYNC);
	CHECK_EQ(failed, 0);
	/* Commits of its own between the syncs, or the test tests nothing. */
	CHECK(gc_commits > (uint64_t)(GC_FILES / GC_SYNC) + 2);
	pc_free(&pc);
}

/* One checkpoint after the same 40 files, on a volume with room for segs
 * segments: its bytes and the usage table blocks among them. */
static void cp_once(uint64_t segs, uint64_t *bytes, uint64_t *sutblk, uint64_t *nsutblk)
{
	char o[96];
	snprintf(o, sizeof o, "key=cc,seg=64,segs=%llu,cp=1024", (unsigned long long)segs);
	ufx_new(&u, 65536, HD_POLLED, 5);
	uint64_t sb;
	CHECK_EQ(lfs_mkfs(o, &sb), 0);
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK_EQ(lfs_checkpoint_now(fs), 0);
	struct lfs_stats a, b;
	lfs_get_stats(fs, &a, NULL);
	for (int i = 0; i < 40; i++) {
		char p[32];
		snprintf(p, sizeof p, "f%d", i);
		CHECK_EQ(lput(fs, p, 100, (uint64_t)i), 0);
	}
	CHECK_EQ(lfs_checkpoint_now(fs), 0);
	lfs_get_stats(fs, &b, NULL);
	*bytes = b.cp_bytes - a.cp_bytes;
	*sutblk = b.cp_sut_blocks - a.cp_sut_blocks;
	*nsutblk = fs->nsutblk;
	CHECK_EQ(lfs_unmount(fs), 0);
	fsck_clean(o);
	ufx_free(&u);
}

static void t_cpcost(void)
{
	uint64_t b1, s1, n1, b2, s2, n2;
	cp_once(1000, &b1, &s1, &n1);
	cp_once(64000, &b2, &s2, &n2);
	printf("  checkpoint after 40 creates: %llu segments: %llu bytes, %llu of %llu table blocks; "
	       "%llu segments: %llu bytes, %llu of %llu table blocks\n",
	       1000ull, (unsigned long long)b1, (unsigned long long)s1, (unsigned long long)n1,
	       64000ull, (unsigned long long)b2, (unsigned long long)s2, (unsigned long long)n2);
	CHECK(n2 > 60 * n1 / 2);
	CHECK_EQ(s1, s2);
	/* The record's block pointers are all it adds: 8 bytes per table block. */
	CHECK(b2 <= b1 + (n2 - n1) * 8 + LFS_SECT);
	printf("cpcost: ok\n");
}

/* Mount after a crash: nfiles files of fbytes on a volume of 64,000
 * segments (a disk of nsect sectors), a checkpoint, then 20 synced
 * creates, and the power fails; what the mount reads. */
static void mount_once(int nfiles, size_t fbytes, uint64_t nsect, struct lfs_stats *st)
{
	const char *o = "key=mc,seg=64,segs=64000,cp=1024";
	lfs_new(o, nsect, 6);
	char p[64];
	for (int i = 0; i < nfiles; i++) {
		snprintf(p, sizeof p, "/l/a%d", i);
		put(p, fbytes, (uint64_t)i);
	}
	CHECK_EQ(vfs_umount("/l"), 0);           /* a checkpoint */
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof p, "/l/b%d", i);
		put(p, 3000, (uint64_t)i + 7);
		CHECK_EQ(vfs_sync(), 0);
	}
	vfs_abandon();
	ufx_crash(&u);
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	lfs_get_stats(fs, st, NULL);
	CHECK(st->roll_groups >= 20);
	struct lfs_usage us;
	lfs_get_stats(fs, NULL, &us);
	printf("  %d files of %zu bytes: %llu segments in use; the mount read %llu times, %llu "
	       "sectors (%llu past the log's end), %llu table blocks, %llu checkpoint record "
	       "sectors; %llu KiB of usage table in memory\n", nfiles, fbytes,
	       (unsigned long long)us.inuse, (unsigned long long)st->rd_reqs,
	       (unsigned long long)st->rd_sect, (unsigned long long)st->tail_sect,
	       (unsigned long long)st->sut_reads, (unsigned long long)st->cp_rd_sect,
	       (unsigned long long)st->sut_mem / 1024);
	/* Memory for the usage table follows the segments used (the report
	 * above read all of it), not the volume's 64,000. */
	struct lfs_stats now;
	lfs_get_stats(fs, &now, NULL);
	CHECK(now.sut_mem <= (us.inuse / LFS_PER_BLK + 3) * LFS_PER_BLK * sizeof(struct lfs_seg));
	CHECK_EQ(lfs_unmount(fs), 0);
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	snprintf(p, sizeof p, "/l/a%d", nfiles - 1);
	CHECK(same(p, fbytes, (uint64_t)nfiles - 1));
	CHECK(same("/l/b19", 3000, 26));
	CHECK_EQ(vfs_umount("/l"), 0);
	ufx_free(&u);
}

static void t_mountcost(void)
{
	struct lfs_stats a, b;
	mount_once(100, 20000, 65536, &a);            /* 32 MiB disk, ~2 MiB of files  */
	mount_once(1700, 65536, 262144, &b);          /* 128 MiB disk, ~110 MiB        */
	/* The file system's size costs nothing: the same reads, give or take
	 * one (the table blocks the log's segments need). */
	CHECK(b.rd_reqs <= a.rd_reqs + 2);
	CHECK(b.sut_reads <= a.sut_reads + 1);
	/* The checkpoint record: what it holds, not the copy's 1,024 sectors. */
	CHECK(a.cp_rd_sect <= 4 && b.cp_rd_sect <= 4);
	printf("mountcost: ok\n");
}

/* Is every segment and table block marked for the next checkpoint one
 * whose entries are in memory? */
static int marks_loaded(const struct lfs *fs)
{
	for (uint32_t i = 0; i < fs->nsutchg; i++)
		if (!fs->sutload[fs->sutchg[i]] || fs->sutb[fs->sutchg[i]] == NULL)
			return 0;
	for (uint32_t i = 0; i < fs->ncpl; i++)
		if (!fs->sutload[fs->cpl[i] / LFS_PER_BLK])
			return 0;
	for (uint32_t i = 0; i < fs->nschg; i++)
		if (!fs->sutload[fs->schg[i] / LFS_PER_BLK])
			return 0;
	return 1;
}

static void t_nomem(void)
{
	/* 300 files of 64 KiB take the log past segment 255: the usage table's
	 * second block.  A mount reads only the blocks it needs. */
	const char *o = "key=nm,seg=64,segs=2000,cp=64";
	lfs_filled(o, 65536, 8, 300, 65536);
	/* A change that needs the first block (f0's segments are in it). */
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK(!fs->sutload[0]);
	lfs_debug_sut_nomem = 1;
	lfs_ops.unlink(fs, "f0");
	CHECK(lfs_debug_sut_nomem > 1);          /* the allocation was tried */
	CHECK(fs->rdonly && fs->err == -ENOMEM);
	CHECK(!fs->sutload[0] && marks_loaded(fs));
	CHECK_EQ(lfs_ops.sync(fs), -ENOMEM);
	CHECK_EQ(lfs_ops.unlink(fs, "f1"), -EROFS);
	CHECK_EQ(lfs_unmount(fs), -ENOMEM);
	lfs_debug_sut_nomem = 0;
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK(same("/l/f0", 65536, 0));          /* the unlink was never committed */
	CHECK(same("/l/f299", 65536, 299));
	CHECK_EQ(vfs_umount("/l"), 0);
	fsck_clean(o);
	/* A checkpoint that must write the block without having read it (as
	 * after the cleaner moved the block's old copy). */
	CHECK_EQ(lfs_mount(o, &fs), 0);
	CHECK(!fs->sutload[0] && fs->sutaddr[0] != 0);
	fs->sutdirty[0] = 1;
	fs->sutchg[fs->nsutchg++] = 0;
	lfs_debug_sut_nomem = 1;
	CHECK_EQ(lfs_checkpoint(fs, 0), -ENOMEM);
	CHECK(lfs_debug_sut_nomem > 1);
	CHECK(fs->rdonly && fs->err == -ENOMEM);
	CHECK_EQ(lfs_unmount(fs), -ENOMEM);
	lfs_debug_sut_nomem = 0;
	fsck_clean(o);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK(same("/l/f0", 65536, 0));
	CHECK(same("/l/f150", 65536, 150));
	put("/l/new", 5000, 7);                  /* writable again */
	CHECK_EQ(vfs_umount("/l"), 0);
	fsck_clean(o);
	ufx_free(&u);
	printf("nomem: ok\n");
}

/* The record's inode map entries: rewriting 20 files and checkpointing
 * writes no map block - the record carries their entries - and after a
 * crash right after it they are there (not by roll-forward: nothing
 * followed the checkpoint); past what a record carries the blocks go to
 * the log; a version 2 record (no entries) mounts, one of version 2
 * claiming entries is refused. */
static void rec_edit(uint64_t sector, uint16_t version, uint32_t nimin)
{
	struct lfs *fs;
	CHECK_EQ(lfs_mount("key=im,seg=64,ro", &fs), 0);
	uint8_t *rec = u.f.hd.medium + sector * BLK_SECTOR_SIZE;
	struct lfs_cp c;
	memcpy(&c, rec, sizeof c);
	c.version = version;
	c.nimin = nimin;
	c.mac = 0;
	memcpy(rec, &c, sizeof c);
	c.mac = lfs_mac(fs, rec, c.nbytes);
	memcpy(rec, &c, sizeof c);
	lfs_close_fs(fs);
	ufx_reboot(&u);
}

static void t_imin(void)
{
	const char *o = "key=im,seg=64";
	lfs_filled(o, 32768, 9, 600, 1000);
	struct lfs *fs;
	struct lfs_stats a, b;
	char p[64];
	CHECK_EQ(lfs_mount(o, &fs), 0);
	lfs_get_stats(fs, &a, NULL);
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof p, "f%d", i * 30);
		CHECK_EQ(lput(fs, p, 2000, 7000 + (uint64_t)i), 0);
	}
	CHECK_EQ(lfs_checkpoint_now(fs), 0);
	lfs_get_stats(fs, &b, NULL);
	CHECK_EQ(b.cp_imap_blocks, a.cp_imap_blocks);
	struct lfs_cp cp;
	uint64_t *ptrs;
	CHECK_EQ(lfs_cp_read(fs, (int)(fs->cpseq & 1), &cp, &ptrs), 0);
	free(ptrs);
	CHECK(cp.version == LFS_CP_VERSION && cp.nimin >= 20);
	lfs_close_fs(fs);                  /* the power fails */
	ufx_crash(&u);
	CHECK_EQ(lfs_mount(o, &fs), 0);
	lfs_get_stats(fs, &b, NULL);
	CHECK_EQ(b.roll_groups, 0);
	CHECK(fs->nimin > 0);              /* waiting for their blocks to be read */
	CHECK_EQ(lfs_unmount(fs), 0);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	for (int i = 0; i < 600; i++) {
		snprintf(p, sizeof p, "/l/f%d", i);
		CHECK(same(p, i % 30 == 0 && i < 600 ? 2000 : 1000,
		           i % 30 == 0 ? 7000 + (uint64_t)(i / 30) : (uint64_t)i));
	}
	CHECK_EQ(vfs_umount("/l"), 0);
	fsck_clean(o);
	/* All 600 rewritten: more than a record carries; every block to the log. */
	CHECK_EQ(lfs_mount(o, &fs), 0);
	lfs_get_stats(fs, &a, NULL);
	for (int i = 0; i < 600; i++) {
		snprintf(p, sizeof p, "f%d", i);
		CHECK_EQ(lput(fs, p, 1500, 9000 + (uint64_t)i), 0);
	}
	CHECK_EQ(lfs_checkpoint_now(fs), 0);
	lfs_get_stats(fs, &b, NULL);
	CHECK(b.cp_imap_blocks - a.cp_imap_blocks >= 3);
	CHECK_EQ(lfs_cp_read(fs, (int)(fs->cpseq & 1), &cp, &ptrs), 0);
	free(ptrs);
	CHECK_EQ(cp.nimin, 0);
	uint64_t newer = fs->sb.cp_disk[fs->cpseq & 1], older = fs->sb.cp_disk[(fs->cpseq & 1) ^ 1];
	lfs_close_fs(fs);
	ufx_reboot(&u);
	/* That record as an older build wrote it: it mounts. */
	rec_edit(newer, LFS_VERSION, 0);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), 0);
	CHECK(same("/l/f599", 1500, 9599));
	CHECK_EQ(vfs_umount("/l"), 0);
	fsck_clean(o);
	/* Version 2 with entries: neither copy is believed. */
	CHECK_EQ(lfs_mount(o, &fs), 0);
	newer = fs->sb.cp_disk[fs->cpseq & 1];
	older = fs->sb.cp_disk[(fs->cpseq & 1) ^ 1];
	lfs_close_fs(fs);
	ufx_reboot(&u);
	rec_edit(newer, LFS_VERSION, 1);
	rec_edit(older, LFS_VERSION, 1);
	CHECK_EQ(vfs_mount("/l", "lfs", o, 1), -EIO);
	ufx_free(&u);
	printf("imin: ok\n");
}

/* The review's two: autoclean runs at most AC_ROUNDS rounds in one
 * operation however far the high mark is (here out of reach: a volume
 * larger than its disk), the rest at the next ones; and the empty
 * segments it kept mapped go back once it is not needed. */
static void t_acbound(void)
{
	const char *o = "key=ab,seg=64,segs=8000,cleanlo=1000,cleanhi=2000";
	int nf = 1300;                     /* 20 MiB of a 32 MiB disk */
	lfs_filled(o, 65536, 10, nf, 16384);
	char p[64];
	struct lfs *fs;
	CHECK_EQ(lfs_mount(o, &fs), 0);
	/* Every other file gone: room to clean, and the marks far away. */
	for (int i = 0; i + 1 < nf; i += 2) {
		snprintf(p, sizeof p, "f%d", i);
		CHECK_EQ(lfs_ops.unlink(fs, p), 0);
	}
	CHECK_EQ(lfs_checkpoint_now(fs), 0);
	struct lfs_stats a, b;
	uint64_t most = 0, total = 0;
	uint32_t kept = 0;
	for (int i = 0; i < 200; i++) {
		lfs_get_stats(fs, &a, NULL);
		snprintf(p, sizeof p, "g%d", i % 20);
		CHECK_EQ(lput(fs, p, 16384, (uint64_t)i), 0);
		lfs_get_stats(fs, &b, NULL);
		uint64_t r = b.clean_rounds - a.clean_rounds;
		most = r > most ? r : most;
		total += r;
		kept = fs->clean_keep > kept ? fs->clean_keep : kept;
	}
	printf("  autoclean: %llu rounds over 200 writes, at most %llu in one\n",
	       (unsigned long long)total, (unsigned long long)most);
	CHECK(total > 4 && most <= 2 * 2);    /* (lput is two operations: open, write) */
	/* It kept segments mapped while it cleaned, and not for long after:
	 * once it is not needed (the other files gone too: the high mark is
	 * one round above the low one, so until then it went on cleaning a
	 * round at a time), 16 segments' worth of writes without cleaning,
	 * then the next checkpoint gives them back. */
	CHECK(kept > 0);
	for (int i = 1; i < nf; i += 2) {
		snprintf(p, sizeof p, "f%d", i);
		CHECK_EQ(lfs_ops.unlink(fs, p), 0);
	}
	CHECK_EQ(lfs_checkpoint_now(fs), 0);
	for (int i = 0; i < 80; i++) {
		snprintf(p, sizeof p, "g%d", i % 20);
		CHECK_EQ(lput(fs, p, 16384, (uint64_t)(200 + i)), 0);
	}
	CHECK_EQ(fs->clean_keep, 0);
	CHECK_EQ(lfs_checkpoint_now(fs), 0);
	CHECK(fs->pool.n <= fs->pool_target);
	CHECK_EQ(lfs_unmount(fs), 0);
	fsck_clean(o);
	ufx_free(&u);
	printf("acbound: ok\n");
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	lfs_debug_sets = 1;             /* every checkpoint checks seg.c's sets */
	if (!only || !strcmp(only, "many"))
		t_many();
	if (!only || !strcmp(only, "roll"))
		t_roll();
	if (!only || !strcmp(only, "cleaner"))
		t_cleaner();
	if (!only || !strcmp(only, "full"))
		t_full();
	if (!only || !strcmp(only, "damage"))
		t_damage();
	if (!only || !strcmp(only, "tailbad"))
		t_tailbad();
	if (!only || !strcmp(only, "proof"))
		t_proof();
	if (!only || !strcmp(only, "sums"))
		t_sums();
	if (!only || !strcmp(only, "share"))
		t_share();
	if (!only || !strcmp(only, "powercut"))
		t_powercut();
	if (!only || !strcmp(only, "groupcut"))
		t_groupcut();
	if (!only || !strcmp(only, "cpcost"))
		t_cpcost();
	if (!only || !strcmp(only, "mountcost"))
		t_mountcost();
	if (!only || !strcmp(only, "cleancut"))
		t_cleancut();
	if (!only || !strcmp(only, "autocut"))
		t_autocut();
	if (!only || !strcmp(only, "nomem"))
		t_nomem();
	if (!only || !strcmp(only, "imin"))
		t_imin();
	if (!only || !strcmp(only, "acbound"))
		t_acbound();
	printf("test_lfs: ok\n");
	return 0;
}
