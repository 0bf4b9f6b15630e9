/*
 * test_holes.c - what holes cost in unixfs, counted, not timed.
 *
 * A file is filled hole by hole, backwards, so that every new extent
 * goes to the front of the file and needs a position-table line: the
 * case where map.c used to look at every extent of the file for each
 * new one (the extent last in list order, whether an entry is free, the
 * list's table).  map.c counts the extents, entry words and table lines
 * it looks at (ufs_map_steps); the work per filled hole must not grow
 * with the file: the same bound holds at 1,000 and at 10,000 holes.
 * Then the file is cut short in the middle - the extents that go are
 * scattered among those that stay in every list, so they go in many
 * ranges - read back across a remount, checked by fsck, and deleted, each
 * list's extents in few requests.
 */
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"

#define OPTS "unit=0,key=test-secret"

extern uint64_t ufs_map_steps;

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

static void fsck_clean(struct ufs_fsck_stats *st)
{
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, st), 0);
	CHECK_EQ(st->problems, 0);
}

/* Block b of the file holds b + 1 in every word (0: a hole). */
static void block_of(uint64_t b, uint64_t *w)
{
	for (int i = 0; i < 512; i++)
		w[i] = b + 1;
}

/* Blocks [0, nblk) of /f: those with (b % 3 != 2 && b < upto) written. */
static void check_file(uint64_t nblk, uint64_t upto)
{
	struct vfile *f;
	CHECK_EQ(vfs_open("/f", LIBFS_O_READ, 0, &f), 0);
	static uint64_t got[512], want[512];
	for (uint64_t b = 0; b < nblk; b++) {
		CHECK_EQ(vfs_pread(f, got, 4096, b * 4096), 4096);
		if (b % 3 != 2 && b < upto)
			block_of(b, want);
		else
			memset(want, 0, sizeof want);
		if (memcmp(got, want, 4096) != 0) {
			fprintf(stderr, "test_holes: block %llu reads %llu, not %llu\n",
			        (unsigned long long)b, (unsigned long long)got[0],
			        (unsigned long long)want[0]);
			exit(1);
		}
	}
	CHECK_EQ(vfs_close(f), 0);
}

/* Fill `holes` holes of /f, two in each third of 3 * holes / 2 blocks,
 * last first; returns map.c's steps per hole filled. */
static double fill(int holes, int checks)
{
	int pairs = holes / 2;
	uint64_t nblk = (uint64_t)pairs * 3;
	struct ufx u;
	ufx_new(&u, nblk * 8 + 32768, HD_SYNC, 7);
	ufx_mkfs(&u, OPTS);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
	struct vfile *f;
	CHECK_EQ(vfs_open("/f", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, nblk * 4096), 0);         /* one hole */
	CHECK_EQ(vfs_fsync(f), 0);
	static uint64_t w[512];
	uint64_t s0 = ufs_map_steps, r0 = u.p.edc.nrequests;
	for (int k = pairs - 1; k >= 0; k--)
		for (int j = 0; j < 2; j++) {
			/* Each block its own fill: the first makes the pair's
			 * extent (with a table line), the second lengthens it. */
			uint64_t b = (uint64_t)k * 3 + (uint64_t)j;
			block_of(b, w);
			CHECK_EQ(vfs_pwrite(f, w, 4096, b * 4096), 4096);
			CHECK_EQ(vfs_fsync(f), 0);
		}
	double steps = (double)(ufs_map_steps - s0) / holes;
	double reqs = (double)(u.p.edc.nrequests - r0) / holes;
	CHECK_EQ(vfs_close(f), 0);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/f", &st), 0);
	CHECK(st.blocks >= (uint64_t)holes * 8 && st.blocks < (uint64_t)holes * 8 + (uint64_t)holes / 4);   /* and map nodes */
	CHECK_EQ(vfs_umount("/"), 0);
	struct ufs_fsck_stats fst;
	fsck_clean(&fst);
	printf("test_holes: %d holes filled backwards: %d extents, %.1f map steps and %.1f exodisk "
	       "requests per hole\n", holes, (int)fst.extents, steps, reqs);
	CHECK(fst.extents >= (uint64_t)pairs && fst.extents < (uint64_t)pairs + 100);
	if (checks) {
		ufx_reboot(&u);
		CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
		check_file(nblk, nblk);
		/* Cut in the middle of a block: what is past it goes, however
		 * its extents lie in the lists. */
		uint64_t cut = nblk / 2 / 3 * 3 + 1;
		CHECK_EQ(vfs_open("/f", LIBFS_O_WRITE, 0, &f), 0);
		s0 = ufs_map_steps;
		r0 = u.p.edc.nrequests;
		CHECK_EQ(vfs_ftruncate(f, cut * 4096 - 100), 0);
		CHECK_EQ(vfs_close(f), 0);
		CHECK_EQ(vfs_sync(), 0);
		printf("test_holes: cutting it in half: %llu map steps, %llu exodisk requests\n",
		       (unsigned long long)(ufs_map_steps - s0),
		       (unsigned long long)(u.p.edc.nrequests - r0));
		CHECK_EQ(vfs_umount("/"), 0);
		fsck_clean(&fst);
		ufx_reboot(&u);
		CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
		CHECK_EQ(vfs_stat("/f", &st), 0);
		CHECK_EQ(st.size, cut * 4096 - 100);
		check_file(cut - 1, cut);
		/* Delete: each list's extents in a request or a few. */
		r0 = u.p.edc.nrequests;
		CHECK_EQ(vfs_unlink("/f"), 0);
		CHECK_EQ(vfs_sync(), 0);
		uint64_t dreq = u.p.edc.nrequests - r0;
		printf("test_holes: deleting it (%d extents): %llu exodisk requests\n",
		       (int)fst.extents, (unsigned long long)dreq);
		CHECK(dreq < fst.extents / 4);          /* one request per extent before */
		CHECK_EQ(vfs_umount("/"), 0);
		fsck_clean(&fst);
		CHECK_EQ(fst.mapnodes, 0);
		CHECK_EQ(fst.extents, 0);
	}
	ufx_free(&u);
	return steps;
}

int main(void)
{
	double small = fill(1000, 0);
	double large = fill(10000, 1);
	/* Work per hole stays the same as the file grows tenfold (it was
	 * proportional to the extents already there: ~n per hole). */
	CHECK(large < 200);
	CHECK(large < 1.5 * small);
	printf("test_holes: ok\n");
	return 0;
}
