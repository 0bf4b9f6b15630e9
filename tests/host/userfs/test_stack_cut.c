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

static int mount_all(void)
{
	int r = vfs_mount("/u", "unixfs", "key=cut", 1);
	return r < 0 ? r : vfs_mount("/z", "compress", "over=/u", 1);
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

static int table_prepare(struct pcut *pc)
{
	uint64_t sb;
	int r = unixfs_ops.mkfs("key=cut", &sb);
	if (r == 0)
		r = mount_all();
	if (r == 0)
		r = put_file("/z/f", 0, NB);
	if (r == 0)
		r = put_file("/z/g", 0, NG);
	if (r == 0)
		r = vfs_umount("/z");
	return r < 0 ? r : vfs_umount("/u");
}

static long rewrite(struct vfile *f, int v, int from, int to)
{
	fill(buf, v, from, to);
	long n = (long)(to - from) * ZB;
	long w = vfs_pwrite(f, buf, (size_t)n, (uint64_t)from * ZB);
	return w == n ? 0 : w < 0 ? w : -EIO;
}

/* State 1: all of f rewritten (v1: the table fills and the layer syncs in
 * the middle of the second call), then [R_LO, R_HI) again (v2) and all of g
 * (v2); both fsynced.  State 2: all of f rewritten again (v3), fsynced. */
static int table_work(struct pcut *pc)
{
	struct vfile *f, *g;
	int r = mount_all();
	if (r == 0)
		r = vfs_open("/z/f", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f);
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
	return vfs_umount("/z") < 0 || vfs_umount("/u") < 0 ? -EIO : 0;
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
	static uint8_t got[ZB], want[ZB];
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
		long n = vfs_pread(f, got, ZB, (uint64_t)b * ZB);
		int v = -1;
		for (int k = 0; n == ZB && k <= 3 && v < 0; k++) {
			block_of(want, k, b);
			if (memcmp(got, want, ZB) == 0)
				v = k;
		}
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
	if (vfs_umount("/z") < 0 || vfs_umount("/u") < 0)
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
	CHECK_EQ(vfs_umount("/z"), 0);
	CHECK_EQ(vfs_umount("/u"), 0);
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
	uint64_t sb;
	struct vfile *f;
	int r = unixfs_ops.mkfs("key=cut", &sb);
	if (r == 0)
		r = mount_all();
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
	if (w != 4 * ZB || r < 0)
		return -EIO;
	r = vfs_umount("/z");
	return r < 0 ? r : vfs_umount("/u");
}

static int sparse_work(struct pcut *pc)
{
	struct vfile *f;
	int r = mount_all();
	if (r == 0)
		r = vfs_open("/z/s", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f);
	if (r < 0)
		return r;
	if ((r = vfs_ftruncate(f, ZB + 100)) < 0 || (r = vfs_fsync(f)) < 0)
		return r;
	pc_ack(pc, 1);
	fill(buf, 2, SL, SL + 1);
	if ((r = vfs_ftruncate(f, (uint64_t)SN * ZB)) < 0 ||
	    vfs_pwrite(f, buf, ZB, (uint64_t)SL * ZB) != ZB || (r = vfs_fsync(f)) < 0)
		return r < 0 ? r : -EIO;
	pc_ack(pc, 2);
	vfs_close(f);
	return vfs_umount("/z") < 0 || vfs_umount("/u") < 0 ? -EIO : 0;
}

static int sparse_check(struct pcut *pc)
{
	struct vfile *f;
	struct libfs_stat st;
	static uint8_t got[ZB], want[ZB], zero[ZB];
	if (mount_all() < 0 || vfs_open("/z/s", LIBFS_O_READ, 0, &f) < 0 || vfs_fstat(f, &st) < 0)
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
	if (vfs_umount("/z") < 0 || vfs_umount("/u") < 0)
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
	uint64_t sb;
	struct vfile *f;
	int r = unixfs_ops.mkfs("key=cut", &sb);
	if (r == 0)
		r = mount_all();
	if (r == 0)
		r = put_file("/z/c", 1, CN);
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
	int r = mount_all();
	if (r == 0)
		r = vfs_open("/z/c", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f);
	if (r < 0)
		return r;
	fill(buf, 2, CW, CW + 1);
	if (vfs_pwrite(f, buf, ZB, (uint64_t)CW * ZB) != ZB || (r = vfs_fsync(f)) < 0)
		return r < 0 ? r : -EIO;
	pc_ack(pc, 1);
	vfs_close(f);
	return vfs_umount("/z") < 0 || vfs_umount("/u") < 0 ? -EIO : 0;
}

static int regrow_check(struct pcut *pc)
{
	struct vfile *f;
	struct libfs_stat st;
	static uint8_t got[ZB], want[ZB];
	if (mount_all() < 0 || vfs_open("/z/c", LIBFS_O_READ, 0, &f) < 0 || vfs_fstat(f, &st) < 0)
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
	if (vfs_umount("/z") < 0 || vfs_umount("/u") < 0)
		bad = 1;
	return bad;
}

/* Two compress mounts of one directory in one program, writing the same
 * file: blocks [0, 16) rewritten through /z, then [8, 24) through /z2,
 * then an fsync through /z2.  The mounts share their table of rewritten
 * blocks (per file system below), so /z2's rewrite of blocks 8-15 goes
 * over /z's version, never over the durable one. */
#define TN 32

static int two_mount(void)
{
	int r = mount_all();
	return r < 0 ? r : vfs_mount("/z2", "compress", "over=/u", 1);
}

static int two_prepare(struct pcut *pc)
{
	uint64_t sb;
	int r = unixfs_ops.mkfs("key=cut", &sb);
	if (r == 0)
		r = mount_all();
	if (r == 0)
		r = put_file("/z/t", 0, TN);
	if (r == 0)
		r = vfs_umount("/z");
	return r < 0 ? r : vfs_umount("/u");
}

static int two_work(struct pcut *pc)
{
	struct vfile *f, *g;
	int r = two_mount();
	if (r == 0)
		r = vfs_open("/z/t", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f);
	if (r == 0)
		r = vfs_open("/z2/t", LIBFS_O_READ | LIBFS_O_WRITE, 0, &g);
	if (r < 0)
		return r;
	if ((r = (int)rewrite(f, 1, 0, 16)) < 0 || (r = (int)rewrite(g, 2, 8, 24)) < 0 ||
	    (r = vfs_fsync(g)) < 0)
		return r;
	pc_ack(pc, 1);
	vfs_close(f);
	vfs_close(g);
	return vfs_umount("/z2") < 0 || vfs_umount("/z") < 0 || vfs_umount("/u") < 0 ? -EIO : 0;
}

static int two_check(struct pcut *pc)
{
	struct vfile *f;
	static uint8_t got[ZB], want[ZB];
	if (mount_all() < 0 || vfs_open("/z/t", LIBFS_O_READ, 0, &f) < 0)
		return 1;
	int bad = 0;
	for (int b = 0; b < TN && !bad; b++) {
		long n = vfs_pread(f, got, ZB, (uint64_t)b * ZB);
		int v = -1;
		for (int k = 0; n == ZB && k <= 2 && v < 0; k++) {
			block_of(want, k, b);
			if (memcmp(got, want, ZB) == 0)
				v = k;
		}
		int last = b < 8 ? 1 : b < 24 ? 2 : 0;        /* after the fsync */
		if (pc->acked == 1)
			bad = v != last;
		else
			bad = !(v == 0 || (v == 1 && b < 16) || (v == 2 && b >= 8 && b < 24));
		if (bad)
			fprintf(stderr, "/z/t: block %d: read %ld, version %d (acked %llu)\n", b, n, v,
			        (unsigned long long)pc->acked);
	}
	vfs_close(f);
	if (vfs_umount("/z") < 0 || vfs_umount("/u") < 0)
		bad = 1;
	return bad;
}

int main(int argc, char **argv)
{
	sparse_truncate();
	struct pcut pc = { .name = "compress-table-full", .nsectors = 32768, .seed = 5,
	                   .prepare = table_prepare, .work = table_work, .check = table_check,
	                   .verbose = 1 };
	int failed = pc_run(&pc, 0, -1, argc > 1 ? atoi(argv[1]) : 1);
	CHECK_EQ(failed, 0);
	CHECK(pc.requests > 20);
	pc_free(&pc);
	pc = (struct pcut){ .name = "compress-sparse-truncate", .nsectors = 32768, .seed = 6,
	                    .prepare = sparse_prepare, .work = sparse_work, .check = sparse_check,
	                    .verbose = 1 };
	CHECK_EQ(pc_run(&pc, 0, -1, 1), 0);
	CHECK(pc.requests > 10);
	pc_free(&pc);
	pc = (struct pcut){ .name = "compress-regrow", .nsectors = 32768, .seed = 7,
	                    .prepare = regrow_prepare, .work = regrow_work, .check = regrow_check,
	                    .verbose = 1 };
	CHECK_EQ(pc_run(&pc, 0, -1, 1), 0);
	CHECK(pc.requests > 5);
	pc_free(&pc);
	pc = (struct pcut){ .name = "compress-two-mounts", .nsectors = 32768, .seed = 8,
	                    .prepare = two_prepare, .work = two_work, .check = two_check,
	                    .verbose = 1 };
	CHECK_EQ(pc_run(&pc, 0, -1, 1), 0);
	CHECK(pc.requests > 5);
	pc_free(&pc);
	printf("test_stack_cut: ok\n");
	return 0;
}
