/*
 * test_stack_cut.c - power cuts under the compress layer (userfs/layers/
 * compress.c) over unixfs, on the kit's harness (powercut.h): the power
 * fails at every disk request of a workload, the machine reboots, and every
 * block of every file must read back whole as a version the workload wrote
 * and may have left there (docs/stacking.md, "Power cuts").
 *
 * The workload is built to fill compress's table of rewritten blocks (384
 * places: ZTRACKED) inside one write call, so that the layer has to sync
 * the file system below in the middle of a write and then go on: two
 * pwrites rewrite all 448 blocks of a file that was durable (the first
 * takes 8, so the second's batches of 16 straddle the 384th block), then
 * blocks on both sides of where the table filled are rewritten again
 * before any fsync.  A rewrite that took a block's newest version for
 * durable when it was not (the table emptied in the middle of a batch,
 * while the batch's new versions were not yet written: the bug b74ffea
 * fixed) would go over the block's only durable version, and a cut there
 * loses it; with that bug put back, cuts here fail.
 *
 * The other workloads: a large sparse file cut short (compress's holes:
 * most of its blocks never written; also what that costs below, uncut), a
 * file growing after a truncation a first cut stopped half done, and two
 * compress mounts of one directory writing one file.
 */
#include <errno.h>
#include <string.h>
#include "libos/stack/stack.h"
#include "tests/host/userfs/powercut.h"
#include "userfs/fatfs/fatfs.h"

#define ZB    4096
#define NB    448                 /* blocks of /z/f: more than the 384 places  */
#define NG    20                  /* blocks of /z/g, rewritten between           */
#define SKEW  264                 /* step 1's second call starts here           */
#define R_LO  368                 /* step 2 rewrites [R_LO, R_HI) of /z/f again  */
#define R_HI  400

static uint8_t buf[NB * ZB];

/* Block b of version v: compressible text for some blocks, bytes that do
 * not compress for others, and a length of text that changes with the
 * version, so rewrites sometimes fit their room and sometimes do not. */
static void block_of(uint8_t *p, int v, int b)
{
	uint64_t s = (uint64_t)v * 1000003u + (uint64_t)b * 7919u + 1;
	if ((b + v) % 3 == 0) {
		for (int i = 0; i < ZB; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			p[i] = (uint8_t)(s >> 56);
		}
		return;
	}
	int words = 40 + (v * 37 + b * 11) % 400;
	for (int i = 0; i < ZB; i++)
		p[i] = i < words * 8 ? (uint8_t)("version block word  "[(i + v + b) % 20]) : (uint8_t)(v + b);
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)b;
	p[2] = (uint8_t)(b >> 8);
}

static void fill(uint8_t *p, int v, int from, int to)
{
	for (int b = from; b < to; b++)
		block_of(p + (size_t)(b - from) * ZB, v, b);
}

/* Which version (0..maxv) block b of f reads as: -1 for none of them or
 * an error (in *n, what the read returned). */
static int version_of(struct vfile *f, int b, int maxv, long *n)
{
	static uint8_t got[ZB], want[ZB];
	*n = vfs_pread(f, got, ZB, (uint64_t)b * ZB);
	for (int k = 0; *n == ZB && k <= maxv; k++) {
		block_of(want, k, b);
		if (memcmp(got, want, ZB) == 0)
			return k;
	}
	return -1;
}

/* A file system of type t at `below`, compress at /z over it. */
static int mount_with(const char *below, const char *t)
{
	char over[40];
	snprintf(over, sizeof over, "over=%s", below);
	int r = vfs_mount(below, t, "key=cut", 1);
	return r < 0 ? r : vfs_mount("/z", "compress", over, 1);
}

/* The layer at /z, then the file system at `below`. */
static int umount_with(const char *below)
{
	return vfs_umount("/z") < 0 || vfs_umount(below) < 0 ? -EIO : 0;
}

static int mount_all(void)
{
	return mount_with("/u", "unixfs");
}

static int umount_all(void)
{
	return umount_with("/u");
}

static int put_file(const char *p, int v, int nb)
{
	struct vfile *f;
	int r = vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f);
	if (r < 0)
		return r;
	fill(buf, v, 0, nb);
	long w = vfs_pwrite(f, buf, (size_t)nb * ZB, 0);
	r = vfs_fsync(f);
	int e = vfs_close(f);
	return w != (long)nb * ZB ? (w < 0 ? (int)w : -EIO) : r < 0 ? r : e;
}

/* Mounted by mnt, path opened to read and write. */
static int mount_open(int (*mnt)(void), const char *path, struct vfile **f)
{
	int r = mnt();
	return r < 0 ? r : vfs_open(path, LIBFS_O_READ | LIBFS_O_WRITE, 0, f);
}

/* After the reboot: mounted, path opened to read, its size in *st. */
static int check_open(const char *path, struct vfile **f, struct libfs_stat *st)
{
	int r = mount_all();
	if (r == 0)
		r = vfs_open(path, LIBFS_O_READ, 0, f);
	return r < 0 ? r : vfs_fstat(*f, st);
}

/* The workload's last state `step` acknowledged: f closed, all unmounted. */
static int finish(struct pcut *pc, uint64_t step, struct vfile *f)
{
	pc_ack(pc, step);
	vfs_close(f);
	return umount_all();
}

/* A new file system of type t (made with mkopts), mounted with its
 * layer by mnt, holding version v of nb blocks at path (none: NULL). */
static int made(const struct libfs_ops *t, const char *mkopts, int (*mnt)(void), const char *path,
                int v, int nb)
{
	uint64_t sb;
	int r = t->mkfs(mkopts, &sb);
	if (r == 0)
		r = mnt();
	return r == 0 && path != NULL ? put_file(path, v, nb) : r;
}

static int table_prepare(struct pcut *pc)
{
	int r = made(&unixfs_ops, "key=cut", mount_all, "/z/f", 0, NB);
	if (r == 0)
		r = put_file("/z/g", 0, NG);
	return r < 0 ? r : umount_all();
}

static long rewrite(struct vfile *f, int v, int from, int to)
{
	fill(buf, v, from, to);
	long n = (long)(to - from) * ZB;
	long w = vfs_pwrite(f, buf, (size_t)n, (uint64_t)from * ZB);
	return w == n ? 0 : w < 0 ? w : -EIO;
}

/* The same in calls of 4 blocks each: more requests, more places to cut. */
static long rewrite_steps(struct vfile *f, int v, int from, int to)
{
	long r = 0;
	for (int b = from; b < to && r == 0; b += 4)
		r = rewrite(f, v, b, b + 4 < to ? b + 4 : to);
	return r;
}

/* State 1: all of f rewritten (v1: the table fills and the layer syncs in
 * the middle of the second call), then [R_LO, R_HI) again (v2) and all of g
 * (v2); both fsynced.  State 2: all of f rewritten again (v3), fsynced. */
static int table_work(struct pcut *pc)
{
	struct vfile *f, *g;
	int r = mount_open(mount_all, "/z/f", &f);
	if (r == 0)
		r = vfs_open("/z/g", LIBFS_O_READ | LIBFS_O_WRITE, 0, &g);
	if (r < 0)
		return r;
	if ((r = (int)rewrite(f, 1, 0, SKEW)) < 0 || (r = (int)rewrite(f, 1, SKEW, NB)) < 0 ||
	    (r = (int)rewrite(f, 2, R_LO, R_HI)) < 0 ||
	    (r = (int)rewrite(g, 2, 0, NG)) < 0 || (r = vfs_fsync(f)) < 0 || (r = vfs_fsync(g)) < 0)
		return r;
	pc_ack(pc, 1);
	if ((r = (int)rewrite(f, 3, 0, NB)) < 0 || (r = vfs_fsync(f)) < 0)
		return r;
	pc_ack(pc, 2);
	vfs_close(f);
	vfs_close(g);
	return umount_all();
}

/* The versions block b of a file may be: those of the last acknowledged
 * state, or of any step after it (they were in flight). */
static int allowed(int isf, int b, uint64_t acked, int v)
{
	int in2 = !isf || (b >= R_LO && b < R_HI);      /* step 2 rewrote it */
	switch (acked) {
	case 0:
		return v == 0 || (isf && v == 1) || (in2 && v == 2);
	case 1:
		return (in2 ? v == 2 : v == 1) || (isf && v == 3);
	default:
		return isf ? v == 3 : v == 2;
	}
}

static int check_file(struct pcut *pc, const char *p, int isf, int nb)
{
	struct vfile *f;
	struct libfs_stat st;
	int r = vfs_open(p, LIBFS_O_READ, 0, &f);
	if (r == 0)
		r = vfs_fstat(f, &st);
	if (r < 0 || st.size != (uint64_t)nb * ZB) {
		fprintf(stderr, "%s: open or size: %d, %llu (acked %llu)\n", p, r,
		        (unsigned long long)st.size, (unsigned long long)pc->acked);
		return 1;
	}
	int bad = 0;
	for (int b = 0; b < nb && !bad; b++) {
		long n;
		int v = version_of(f, b, 3, &n);
		if (v < 0 || !allowed(isf, b, pc->acked, v)) {
			fprintf(stderr, "%s: block %d: read %ld, version %d (acked %llu)\n", p, b, n, v,
			        (unsigned long long)pc->acked);
			bad = 1;
		}
	}
	vfs_close(f);
	return bad;
}

static int table_check(struct pcut *pc)
{
	if (mount_all() < 0)
		return 1;
	int bad = check_file(pc, "/z/f", 1, NB) + check_file(pc, "/z/g", 0, NG);
	if (umount_all() < 0)
		bad++;
	return bad;
}

/* ---- truncating a sparse file ------------------------------------------------ */

/* A file of 64 MiB with three blocks written (at 0, 32 MiB and the end)
 * cut to 4 KiB + 100: what it costs below is the index pages holding the
 * blocks that were written, not one hole version for every block past
 * the new end. */
static void sparse_truncate(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_POLLED, 3);
	uint64_t sb;
	CHECK_EQ(unixfs_ops.mkfs("key=cut", &sb), 0);
	CHECK_EQ(mount_all(), 0);
	struct vfile *f;
	const uint64_t big = 64ull << 20;
	CHECK_EQ(vfs_open("/z/s", LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	fill(buf, 1, 0, 1);
	CHECK_EQ(vfs_pwrite(f, buf, ZB, 0), ZB);
	CHECK_EQ(vfs_pwrite(f, buf, ZB, big / 2), ZB);
	CHECK_EQ(vfs_pwrite(f, buf, ZB, big - ZB), ZB);
	CHECK_EQ(vfs_fsync(f), 0);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/u/s", &st), 0);
	uint64_t before = st.size;
	CHECK_EQ(vfs_ftruncate(f, ZB + 100), 0);
	CHECK_EQ(vfs_fsync(f), 0);
	CHECK_EQ(vfs_stat("/u/s", &st), 0);
	/* Nothing new below: no index page made, no block stored again but
	 * the new last one (a block already stored, in its own other slot). */
	printf("sparse truncate: %llu bytes below before, %llu after\n", (unsigned long long)before,
	       (unsigned long long)st.size);
	CHECK(st.size <= before + ZB);
	CHECK_EQ(vfs_fstat(f, &st), 0);
	CHECK_EQ(st.size, ZB + 100);
	static uint8_t got[2 * ZB];
	CHECK_EQ(vfs_pread(f, got, sizeof got, 0), ZB + 100);
	CHECK(memcmp(got, buf, ZB) == 0);
	for (int i = 0; i < 100; i++)
		CHECK_EQ(got[ZB + i], 0);
	/* Longer again: the blocks once written past the cut read as zeros. */
	CHECK_EQ(vfs_ftruncate(f, big), 0);
	CHECK_EQ(vfs_pread(f, got, ZB, big / 2), ZB);
	for (int i = 0; i < ZB; i++)
		CHECK_EQ(got[i], 0);
	CHECK_EQ(vfs_pread(f, got, ZB, big - ZB), ZB);
	for (int i = 0; i < ZB; i++)
		CHECK_EQ(got[i], 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(umount_all(), 0);
	ufx_free(&u);
}

/* The same cut short under power cuts: a file of SN blocks with blocks 0
 * and the SW[] written is cut to 4 KiB + 100 (state 1), then made long
 * again and block SL written (state 2).  Whatever a cut leaves, the
 * blocks once past the cut read as their old bytes only while the
 * truncation is not acknowledged, and as zeros once it is, even after the
 * file grew again. */
#define SN 800
#define SL 700
static const int SW[] = { 300, 600 };

static int sparse_prepare(struct pcut *pc)
{
	struct vfile *f;
	int r = made(&unixfs_ops, "key=cut", mount_all, NULL, 0, 0);
	if (r == 0)
		r = vfs_open("/z/s", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f);
	if (r < 0)
		return r;
	const int at[4] = { 0, SW[0], SW[1], SN - 1 };
	long w = 0;
	for (int i = 0; i < 4; i++) {
		fill(buf, 1, at[i], at[i] + 1);
		w += vfs_pwrite(f, buf, ZB, (uint64_t)at[i] * ZB);
	}
	r = vfs_fsync(f);
	vfs_close(f);
	return w != 4 * ZB || r < 0 ? -EIO : umount_all();
}

static int sparse_work(struct pcut *pc)
{
	struct vfile *f;
	int r = mount_open(mount_all, "/z/s", &f);
	if (r < 0)
		return r;
	if ((r = vfs_ftruncate(f, ZB + 100)) < 0 || (r = vfs_fsync(f)) < 0)
		return r;
	pc_ack(pc, 1);
	fill(buf, 2, SL, SL + 1);
	if ((r = vfs_ftruncate(f, (uint64_t)SN * ZB)) < 0 ||
	    vfs_pwrite(f, buf, ZB, (uint64_t)SL * ZB) != ZB || (r = vfs_fsync(f)) < 0)
		return r < 0 ? r : -EIO;
	return finish(pc, 2, f);
}

static int sparse_check(struct pcut *pc)
{
	struct vfile *f;
	struct libfs_stat st;
	static uint8_t got[ZB], want[ZB], zero[ZB];
	if (check_open("/z/s", &f, &st) < 0)
		return 1;
	uint64_t a = pc->acked, n = st.size;
	int bad = !(n == (uint64_t)SN * ZB || (n == ZB + 100 && a < 2));
	for (uint64_t b = 0; !bad && b * ZB < n; b++) {
		long len = vfs_pread(f, got, ZB, b * ZB);
		int old = b == 0 || b == SN - 1 || b == (uint64_t)SW[0] || b == (uint64_t)SW[1];
		int v1 = 0, v2 = 0, z;
		block_of(want, 1, (int)b);
		v1 = len == ZB && memcmp(got, want, ZB) == 0;
		block_of(want, 2, (int)b);
		v2 = len == ZB && memcmp(got, want, ZB) == 0;
		z = len > 0 && memcmp(got, zero, (size_t)len) == 0;
		if (b == 0)
			bad = !v1;
		else if (len != (long)(n - b * ZB < ZB ? n - b * ZB : ZB))
			bad = 1;
		else if (old)
			bad = !(z || (v1 && a == 0));           /* old bytes: not once cut */
		else if (b == SL)
			bad = !(z || (v2 && a >= 1)) || (a == 2 && !v2);
		else
			bad = !z;
		if (bad)
			fprintf(stderr, "/z/s: size %llu, block %llu: read %ld, v1 %d v2 %d zeros %d "
			        "(acked %llu)\n", (unsigned long long)n, (unsigned long long)b, len, v1, v2, z,
			        (unsigned long long)a);
	}
	vfs_close(f);
	if (umount_all() < 0)
		bad = 1;
	return bad;
}

/* A truncation a first cut stopped half done, then a second cut while the
 * file grows again.  The state after the first cut is made by hand: a
 * durable file of CN blocks whose header says CL bytes (the truncation's
 * size, durable) while every block past it still holds its bytes (its
 * holes, and the zeros past CL in the last block, lost).  Then the file
 * grows (a block written at CW) and is fsynced: the bytes the truncation
 * cut off must never come back, whichever requests the second cut keeps. */
#define CN 24
#define CL (5 * ZB + 100)
#define CW 20

static int regrow_prepare(struct pcut *pc)
{
	struct vfile *f;
	int r = made(&unixfs_ops, "key=cut", mount_all, "/z/c", 1, CN);
	if (r == 0)
		r = vfs_umount("/z");
	if (r == 0)
		r = vfs_open("/u/c", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f);
	if (r < 0)
		return r;
	uint8_t size[8];
	stack_put_le64(size, CL);
	if (vfs_pwrite(f, size, 8, 8) != 8 || vfs_fsync(f) < 0)
		r = -EIO;
	vfs_close(f);
	return r < 0 ? r : vfs_umount("/u");
}

static int regrow_work(struct pcut *pc)
{
	struct vfile *f;
	int r = mount_open(mount_all, "/z/c", &f);
	if (r < 0)
		return r;
	fill(buf, 2, CW, CW + 1);
	if (vfs_pwrite(f, buf, ZB, (uint64_t)CW * ZB) != ZB || (r = vfs_fsync(f)) < 0)
		return r < 0 ? r : -EIO;
	return finish(pc, 1, f);
}

static int regrow_check(struct pcut *pc)
{
	struct vfile *f;
	struct libfs_stat st;
	static uint8_t got[ZB], want[ZB];
	if (check_open("/z/c", &f, &st) < 0)
		return 1;
	uint64_t n = st.size;
	int bad = !(n == (uint64_t)(CW + 1) * ZB || (n == CL && pc->acked == 0));
	for (uint64_t b = 0; !bad && b * ZB < n; b++) {
		long len = vfs_pread(f, got, ZB, b * ZB);
		long should = (long)(n - b * ZB < ZB ? n - b * ZB : ZB);
		block_of(want, b == CW ? 2 : 1, (int)b);
		size_t keep = b * ZB < CL ? (size_t)(CL - b * ZB < ZB ? CL - b * ZB : ZB) : 0;
		bad = len != should || memcmp(got, want, keep) != 0;
		for (long i = (long)keep; !bad && i < len; i++)
			bad = got[i] != (b == CW ? want[i] : 0);
		if (bad && b == CW && pc->acked == 0) {       /* in flight: zeros will do */
			bad = 0;
			for (long i = 0; !bad && i < len; i++)
				bad = got[i] != 0;
		}
		if (bad)
			fprintf(stderr, "/z/c: size %llu, block %llu wrong (read %ld, acked %llu)\n",
			        (unsigned long long)n, (unsigned long long)b, len,
			        (unsigned long long)pc->acked);
	}
	vfs_close(f);
	if (umount_all() < 0)
		bad = 1;
	return bad;
}

/* Two compress mounts of one directory in one program, writing the same
 * file: the last block rewritten through /z2 (so each mount has begun
 * rewriting: see compress.c, settle), blocks [0, 16) through /z, then
 * [8, 24) through /z2, then an fsync through /z2.  The mounts share their
 * table of rewritten blocks (per file system below), so /z2's rewrite of
 * blocks 8-15 goes over /z's version, never over the durable one. */
#define TN 32

static int two_mount(void)
{
	int r = mount_all();
	return r < 0 ? r : vfs_mount("/z2", "compress", "over=/u", 1);
}

static int two_prepare(struct pcut *pc)
{
	int r = made(&unixfs_ops, "key=cut", mount_all, "/z/t", 0, TN);
	return r < 0 ? r : umount_all();
}

static int two_work(struct pcut *pc)
{
	struct vfile *f, *g;
	int r = mount_open(two_mount, "/z/t", &f);
	if (r == 0)
		r = vfs_open("/z2/t", LIBFS_O_READ | LIBFS_O_WRITE, 0, &g);
	if (r < 0)
		return r;
	if ((r = (int)rewrite(g, 1, TN - 1, TN)) < 0 || (r = (int)rewrite(f, 1, 0, 16)) < 0 ||
	    (r = (int)rewrite(g, 2, 8, 24)) < 0 || (r = vfs_fsync(g)) < 0)
		return r;
	pc_ack(pc, 1);
	vfs_close(f);
	vfs_close(g);
	return vfs_umount("/z2") < 0 || vfs_umount("/z") < 0 || vfs_umount("/u") < 0 ? -EIO : 0;
}

static int two_check(struct pcut *pc)
{
	struct vfile *f;
	if (mount_all() < 0 || vfs_open("/z/t", LIBFS_O_READ, 0, &f) < 0)
		return 1;
	int bad = 0;
	for (int b = 0; b < TN && !bad; b++) {
		long n;
		int v = version_of(f, b, 2, &n);
		int last = b < 8 || b == TN - 1 ? 1 : b < 24 ? 2 : 0;     /* after the fsync */
		if (pc->acked == 1)
			bad = v != last;
		else
			bad = !(v == 0 || (v == 1 && (b < 16 || b == TN - 1)) || (v == 2 && b >= 8 && b < 24));
		if (bad)
			fprintf(stderr, "/z/t: block %d: read %ld, version %d (acked %llu)\n", b, n, v,
			        (unsigned long long)pc->acked);
	}
	vfs_close(f);
	if (umount_all() < 0)
		bad = 1;
	return bad;
}

/* ---- a program killed with rewrites not yet durable ----------------------------- */

/* Program A rewrites every block of a durable file through the layer and
 * dies (a fault: no unmount, no sync); its unixfs has a small cache, so
 * most of what it wrote is on the disk by then, in the disk's volatile
 * cache, not flushed.  Program B mounts the same file system, rewrites the
 * last KB blocks and fsyncs.  B reads A's versions as the blocks' newest:
 * if it took them for durable it would write its own over the one version
 * that is, and a cut before B's flush could leave a block with no whole
 * version (or an older one than was acknowledged).  The layer is compress
 * or crypt (pc->arg): both keep two versions of a block and must know
 * which one is durable. */
#define KN 48                      /* blocks of /z/k                 */
#define KB 40                      /* B rewrites the last KB of them */

static const char *klayer(struct pcut *pc)
{
	return pc->arg;
}

static int kmount(struct pcut *pc, const char *uopts)
{
	int r = vfs_mount("/u", "unixfs", uopts, 1);
	if (r < 0)
		return r;
	if (strcmp(klayer(pc), "crypt") == 0)
		return vfs_mount("/z", "crypt", "over=/u,key=cut-0123456789abcdef", 1);
	return vfs_mount("/z", "compress", "over=/u", 1);
}

static struct pcut *kpc;           /* the run, for these two: */

static int kmount_made(void)
{
	return kmount(kpc, "key=cut");
}

/* A small cache: most of what a program writes goes to the disk before
 * any sync. */
static int kmount_small(void)
{
	return kmount(kpc, "key=cut,cache=16");
}

/* v0, then v1 over it: both of a block's places hold a durable version. */
static int kill_prepare(struct pcut *pc)
{
	struct vfile *f;
	kpc = pc;
	int r = made(&unixfs_ops, "key=cut", kmount_made, "/z/k", 0, KN);
	if (r == 0)
		r = vfs_open("/z/k", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f);
	if (r < 0)
		return r;
	if ((r = (int)rewrite(f, 1, 0, KN)) == 0)
		r = vfs_fsync(f);
	vfs_close(f);
	return r < 0 ? r : umount_all();
}

static int kill_work(struct pcut *pc)
{
	struct vfile *f;
	kpc = pc;
	int r = mount_open(kmount_small, "/z/k", &f);
	if (r < 0)
		return r;
	if ((r = (int)rewrite(f, 2, 0, KN)) < 0)
		return r;
	/* A dies; B starts. */
	vfs_abandon();
	ufx_stop(&pc->u);
	ufx_start(&pc->u);
	r = mount_open(kmount_small, "/z/k", &f);
	if (r < 0)
		return r;
	/* In calls of a few blocks each: many requests before the flush. */
	if ((r = (int)rewrite_steps(f, 3, KN - KB, KN)) < 0 || (r = vfs_fsync(f)) < 0)
		return r;
	return finish(pc, 1, f);
}

/* crypt's nonces never repeat under a key (docs/stacking.md): not across
 * the two programs either, whatever A's death left below.  The one file
 * in /u besides .crypt: per block, two slots of 4,132 bytes after a
 * 32-byte header, each starting with its 12-byte nonce (all zero: never
 * written). */
#define CHDR_ 32
#define CPAIR (2 * 4132)
static int nonces_unique(void)
{
	static uint8_t raw[CHDR_ + KN * CPAIR];
	static const uint8_t none[12];
	struct vfile *d, *f;
	struct libfs_dirent de;
	char p[300] = "";
	if (vfs_open("/u", LIBFS_O_READ | LIBFS_O_DIR, 0, &d) < 0)
		return 0;
	while (vfs_readdir(d, &de) == 1)
		if (de.name[0] != '.')
			snprintf(p, sizeof p, "/u/%s", de.name);
	vfs_close(d);
	if (p[0] == 0 || vfs_open(p, LIBFS_O_READ, 0, &f) < 0)
		return 0;
	long n = vfs_pread(f, raw, sizeof raw, 0);
	vfs_close(f);
	int ok = n > CHDR_;
	for (long i = CHDR_; ok && i + 12 <= n; i += CPAIR / 2)
		for (long j = CHDR_; ok && j < i; j += CPAIR / 2)
			if (memcmp(raw + i, none, 12) != 0 && memcmp(raw + i, raw + j, 12) == 0) {
				fprintf(stderr, "crypt: the nonce at %ld below is also at %ld\n", i, j);
				ok = 0;
			}
	return ok;
}

static int kill_check(struct pcut *pc)
{
	struct vfile *f;
	struct libfs_fsck ck = { 0 };
	if (kmount(pc, "key=cut") < 0 || vfs_open("/z/k", LIBFS_O_READ, 0, &f) < 0)
		return 1;
	int bad = 0;
	for (int b = 0; b < KN && !bad; b++) {
		long n;
		int v = version_of(f, b, 3, &n);
		if (pc->acked == 1 && b >= KN - KB)
			bad = v != 3;
		else
			bad = !(v == 1 || v == 2 || (v == 3 && b >= KN - KB));
		if (bad)
			fprintf(stderr, "%s /z/k: block %d: read %ld, version %d (acked %llu)\n",
			        klayer(pc), b, n, v, (unsigned long long)pc->acked);
	}
	vfs_close(f);
	if (vfs_umount("/z") < 0 || (strcmp(klayer(pc), "crypt") == 0 && !nonces_unique()) ||
	    vfs_umount("/u") < 0)
		bad = 1;
	if (unixfs_ops.fsck("key=cut", &ck) < 0 || ck.problems != 0) {
		fprintf(stderr, "%s: fsck of the unixfs below: %llu problems\n", klayer(pc),
		        (unsigned long long)ck.problems);
		bad = 1;
	}
	return bad;
}

/* ---- a rename directly below, on fatfs -------------------------------------------- */

/* fatfs numbers a file by where its name is.  Every block of a durable
 * file is rewritten through compress (v1, the table holds them), the file
 * closed and renamed directly below, opened under its new name and
 * rewritten again (v2), then fsynced.  Had the table kept v1's blocks
 * under the old number, v2 would take v1 for durable and go over v0, the
 * one durable version: a cut before the fsync's flush would lose both. */
#define FN 24

static int fmount(void)
{
	return mount_with("/f", "fatfs");
}

static int fumount(void)
{
	return umount_with("/f");
}

static int fren_prepare(struct pcut *pc)
{
	int r = made(&fatfs_ops, "key=cut,size=8M", fmount, "/z/a", 0, FN);
	return r < 0 ? r : fumount();
}

static int fren_work(struct pcut *pc)
{
	struct vfile *f;
	int r = mount_open(fmount, "/z/a", &f);
	if (r < 0)
		return r;
	if ((r = (int)rewrite_steps(f, 1, 0, FN)) < 0 || (r = vfs_close(f)) < 0 || (r = vfs_rename("/f/a", "/f/b")) < 0 ||
	    (r = vfs_open("/z/b", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f)) < 0)
		return r;
	if ((r = (int)rewrite_steps(f, 2, 0, FN)) < 0 || (r = vfs_fsync(f)) < 0)
		return r;
	pc_ack(pc, 1);
	vfs_close(f);
	return fumount();
}

static void fsck_says(void *arg, const char *what)
{
	if (arg)
		fprintf(stderr, "  fsck: %s\n", what);
}

/* fatfs after a cut (docs/fatfs.md): its fsck finds only what it can
 * repair (lost clusters, a chain longer than its file), and after the
 * repair nothing; then every block is a version the workload wrote (the
 * file under either name while the fsync is not acknowledged), and v2
 * under the new name once it is. */
static int fren_check(struct pcut *pc)
{
	struct vfile *f;
	struct fatfs_stats st;
	int e = fatfs_fsck("key=cut", fsck_says, NULL, &st);
	if (e < 0 || st.problems != st.repairable) {
		fprintf(stderr, "fatfs rename: fsck: %d, %llu problems, %llu repairable\n", e,
		        (unsigned long long)st.problems, (unsigned long long)st.repairable);
		fatfs_fsck("key=cut", fsck_says, (void *)1, &st);
		return 1;
	}
	if (fatfs_fsck("key=cut,repair", NULL, NULL, &st) < 0 ||
	    fatfs_fsck("key=cut", fsck_says, (void *)1, &st) < 0 || st.problems != 0) {
		fprintf(stderr, "fatfs rename: problems left after the repair\n");
		return 1;
	}
	if (fmount() < 0)
		return 1;
	/* A rename a cut stopped may leave both names, which fsck's repair
	 * settles by keeping the chain with one of them (the other empty). */
	const char *p = NULL;
	struct libfs_stat zs;
	for (int i = 0; i < 2 && p == NULL; i++) {
		const char *name = i == 0 ? "/z/b" : "/z/a";
		if ((i == 1 && pc->acked == 1) || vfs_open(name, LIBFS_O_READ, 0, &f) < 0)
			continue;
		if (vfs_fstat(f, &zs) == 0 && zs.size == (uint64_t)FN * ZB)
			p = name;
		else
			vfs_close(f);
	}
	int bad = p == NULL;
	for (int b = 0; b < FN && !bad; b++) {
		long n;
		int v = version_of(f, b, 2, &n);
		bad = pc->acked == 1 ? v != 2 : v < 0;
		if (bad)
			fprintf(stderr, "%s: block %d: read %ld, version %d (acked %llu)\n", p, b, n, v,
			        (unsigned long long)pc->acked);
	}
	if (p == NULL)
		fprintf(stderr, "fatfs rename: no file (acked %llu)\n", (unsigned long long)pc->acked);
	else
		vfs_close(f);
	return fumount() < 0 || bad;
}

/* One workload, cut at every request (every stride-th): all must recover,
 * and the workload must make at least min requests (or it tests little). */
static void cut_case(const char *name, uint64_t seed, int (*prepare)(struct pcut *),
                     int (*work)(struct pcut *), int (*check)(struct pcut *), void *arg,
                     uint64_t min, int64_t stride)
{
	struct pcut pc = { .name = name, .nsectors = 32768, .seed = seed, .prepare = prepare,
	                   .work = work, .check = check, .arg = arg, .verbose = 1 };
	CHECK_EQ(pc_run(&pc, 0, -1, stride), 0);
	CHECK(pc.requests > min);
	pc_free(&pc);
}

int main(int argc, char **argv)
{
	sparse_truncate();
	cut_case("compress-table-full", 5, table_prepare, table_work, table_check, NULL, 20,
	         argc > 1 ? atoi(argv[1]) : 1);
	cut_case("compress-sparse-truncate", 6, sparse_prepare, sparse_work, sparse_check, NULL, 10, 1);
	cut_case("compress-regrow", 7, regrow_prepare, regrow_work, regrow_check, NULL, 5, 1);
	cut_case("compress-two-mounts", 8, two_prepare, two_work, two_check, NULL, 5, 1);
	cut_case("compress-killed", 9, kill_prepare, kill_work, kill_check, (void *)"compress", 20, 1);
	cut_case("compress-fatfs-rename", 11, fren_prepare, fren_work, fren_check, NULL, 10, 1);
	cut_case("crypt-killed", 10, kill_prepare, kill_work, kill_check, (void *)"crypt", 20, 1);
	printf("test_stack_cut: ok\n");
	return 0;
}
