/*
 * test_fat_powercut.c - fatfs through the kit's power-cut harness
 * (powercut.h): a workload like a guest's - directories made, files
 * created, appended to, renamed, removed and cut short, a sync at the end
 * of each round - with the power failing after each of its disk requests
 * (every 4th in make test; FAT_PC_STRIDE=1 for all), on a disk whose free
 * sectors hold 0xEE garbage.  After each cut and reboot:
 *
 *   - fatfs's fsck finds nothing it cannot repair (lost clusters, a chain
 *     longer than its size, orphaned long-name parts, two names on one
 *     chain after a rename: what fsck.fat repairs);
 *   - for every 8th cut, the volume exported as a plain image is repaired
 *     by fsck.fat -a and then fsck.fat -n finds nothing (dosfstools);
 *   - after fsck -r, fsck finds nothing;
 *   - every file acknowledged by a sync and not touched since is there,
 *     exactly; a file the unfinished round touched is as before or as
 *     after it; no file holds a byte of 0xEE (the virtual volume never
 *     maps a chunk it did not write; a FAT cluster never shows another
 *     file's bytes past an end).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fatfs.h"
#include "tests/host/userfs/fatfix.h"
#include "tests/host/userfs/powercut.h"

#define ROUNDS 6
#define KEY    "key=pc"

/* Round r's new files: d<r>/f<k>. */
static size_t new_size(int r, int k)
{
	return (size_t)(r * 1000 + k * 3000) % 20000 + 1;
}

/* What a file holds after `rounds` rounds: its size and the seeds of its
 * pieces (the first piece, maybe an append); size 0 and absent: none. */
struct fstate {
	int present;
	size_t size;
	uint32_t seed;           /* first piece, new_size(r, k) bytes             */
	size_t first;
	uint32_t app_seed;       /* appended piece, or 0                          */
};

static void model(int rounds, int r, int k, struct fstate *f, char *path, size_t cap)
{
	/* File k of round r: made in round r, changed in round r+1. */
	memset(f, 0, sizeof *f);
	snprintf(path, cap, "/dos/d%d/f%d", r, k);
	if (rounds <= r)
		return;
	f->present = 1;
	f->seed = (uint32_t)(r * 10 + k + 1);
	f->first = f->size = new_size(r, k);
	if (rounds <= r + 1)
		return;
	if (k == 0) {
		f->app_seed = (uint32_t)(1000 + r);
		f->size += 1500;
	} else if (k == 1) {
		snprintf(path, cap, "/dos/d%d/Renamed file from round %d.data", r, r);
	} else if (k == 2) {
		f->present = 0;
	} else if (k == 3) {
		f->size = f->first < 100 ? f->first : 100;
	}
}

static int prep(struct pcut *pc)
{
	uint64_t sb;
	return fatfs_mkfs(KEY ",size=8M,fat=16,cluster=1024", &sb);
}

static int work(struct pcut *pc)
{
	int e = vfs_mount("/dos", "fatfs", KEY ",cache=2", 1);
	static uint8_t buf[25000];
	for (int r = 0; e == 0 && r < ROUNDS; r++) {
		char p[96], q[96];
		snprintf(p, sizeof p, "/dos/d%d", r);
		e = vfs_mkdir(p, 0755);
		for (int k = 0; e == 0 && k < 4; k++) {
			snprintf(p, sizeof p, "/dos/d%d/f%d", r, k);
			pattern_fill(buf, new_size(r, k), (uint32_t)(r * 10 + k + 1));
			e = (int)vfs_put(p, buf, new_size(r, k));
		}
		if (e == 0 && r > 0) {
			struct vfile *f;
			snprintf(p, sizeof p, "/dos/d%d/f0", r - 1);
			pattern_fill(buf, 1500, (uint32_t)(1000 + r - 1));
			e = vfs_open(p, LIBFS_O_WRITE | VFS_O_APPEND, 0, &f);
			if (e == 0) {
				long w = vfs_write(f, buf, 1500);
				e = vfs_close(f);
				if (w != 1500)
					e = w < 0 ? (int)w : -EIO;
			}
			snprintf(p, sizeof p, "/dos/d%d/f1", r - 1);
			snprintf(q, sizeof q, "/dos/d%d/Renamed file from round %d.data", r - 1, r - 1);
			if (e == 0)
				e = vfs_rename(p, q);
			snprintf(p, sizeof p, "/dos/d%d/f2", r - 1);
			if (e == 0)
				e = vfs_unlink(p);
			snprintf(p, sizeof p, "/dos/d%d/f3", r - 1);
			if (e == 0 && (e = vfs_open(p, LIBFS_O_WRITE, 0, &f)) == 0) {
				e = vfs_ftruncate(f, 100);
				int c = vfs_close(f);
				if (e == 0)
					e = c;
			}
		}
		if (e == 0)
			e = vfs_sync();
		if (e == 0)
			pc_ack(pc, (uint64_t)r + 1);
	}
	if (e == 0)
		e = vfs_umount("/dos");
	return e;
}

/* The file at path holds st's bytes (or, with `either`, its bytes up to
 * the size it had before the round).  1 if so. */
static int holds(void *unused, const char *path, const struct fstate *st, long got,
                 const uint8_t *buf)
{
	(void)unused;
	(void)path;
	static uint8_t want[25000];
	if ((size_t)got != st->size)
		return 0;
	pattern_fill(want, st->first, st->seed);
	if (st->app_seed)
		pattern_fill(want + st->first, 1500, st->app_seed);
	return memcmp(want, buf, st->size) == 0;
}

static int garbage(const uint8_t *b, long n)
{
	for (long i = 0; i < n; i++)
		if (b[i] == PC_GARBAGE)
			return 1;
	return 0;
}

/* The volume as a plain image, repaired by fsck.fat -a, then checked by
 * fsck.fat -n. */
static int dosfstools_repairs(void)
{
	struct fatfs_vol *v;
	if (fatfs_vol_open(KEY, 0, 0, 0, &v) < 0)
		return 0;
	uint64_t n = fatfs_vol_size(v);
	uint8_t *img = malloc(n * ED_SECTOR);
	int ok = img && fatfs_vol_read(v, 0, img, n) == 0;
	fatfs_vol_close(v);
	if (ok) {
		const char *p = img_file(img, n);
		char cmd[256];
		snprintf(cmd, sizeof cmd, "fsck.fat -a %s > /dev/null 2>&1; fsck.fat -n %s > %s.out 2>&1",
		         p, p, p);
		ok = system(cmd) == 0;
		if (!ok) {
			snprintf(cmd, sizeof cmd, "sed 's/^/  fsck.fat after -a: /' %s.out", p);
			if (system(cmd) != 0)
				ok = 0;
		}
		snprintf(cmd, sizeof cmd, "%s.out", p);
		unlink(cmd);
		unlink(p);
	}
	free(img);
	return ok;
}

static void say(void *arg, const char *what)
{
	if (arg)
		printf("  fsck: %s\n", what);
}

static int check(struct pcut *pc)
{
	struct fatfs_stats st;
	int e = fatfs_fsck(KEY, say, NULL, &st);
	if (e < 0 || st.problems != st.repairable) {
		fprintf(stderr, "fat powercut: fsck: %d, %llu problems, %llu repairable\n", e,
		        (unsigned long long)st.problems, (unsigned long long)st.repairable);
		fatfs_fsck(KEY, say, (void *)1, &st);
		return 1;
	}
	if (have_dosfstools() && pc->runs % 8 == 0 && !dosfstools_repairs())
		return 1;
	if (fatfs_fsck(KEY ",repair", NULL, NULL, &st) < 0 ||
	    fatfs_fsck(KEY, say, (void *)1, &st) < 0 || st.problems != 0) {
		fprintf(stderr, "fat powercut: problems left after the repair\n");
		return 1;
	}
	if (vfs_mount("/dos", "fatfs", KEY, 1) < 0)
		return 1;
	int acked = (int)pc->acked, bad = 0;
	static uint8_t buf[25001];
	for (int r = 0; r < ROUNDS && !bad; r++)
		for (int k = 0; k < 4 && !bad; k++) {
			struct fstate a, b;
			char pa[96], pb[96];
			model(acked, r, k, &a, pa, sizeof pa);
			model(acked + 1 > ROUNDS ? ROUNDS : acked + 1, r, k, &b, pb, sizeof pb);
			struct vfile *f;
			long ga = -1, gb = -1;
			if (vfs_open(pa, LIBFS_O_READ, 0, &f) == 0) {
				ga = vfs_read(f, buf, sizeof buf);
				vfs_close(f);
				bad |= garbage(buf, ga);
			}
			int oka = a.present ? ga >= 0 && holds(NULL, pa, &a, ga, buf) : ga < 0;
			if (strcmp(pa, pb) != 0 && vfs_open(pb, LIBFS_O_READ, 0, &f) == 0) {
				gb = vfs_read(f, buf, sizeof buf);
				vfs_close(f);
				bad |= garbage(buf, gb);
			} else if (strcmp(pa, pb) == 0) {
				gb = ga;
			}
			int okb = b.present ? gb >= 0 && holds(NULL, pb, &b, gb, buf) : gb < 0;
			if (strcmp(pa, pb) != 0) {
				/* A rename: the data under one name at least; the other
				 * gone, or cut to nothing by the repair of two names on
				 * one chain. */
				struct fstate other = a;
				oka = ga >= 0 && holds(NULL, pa, &a, ga, buf);
				okb = gb >= 0 && holds(NULL, pb, &other, gb, buf);
				int ok = (oka || okb) && (oka || ga <= 0) && (okb || gb <= 0);
				if (!ok)
					fprintf(stderr, "fat powercut: %s (%ld) / %s (%ld) after %d rounds\n", pa,
					        ga, pb, gb, acked);
				bad |= !ok;
			} else if (!oka && !okb) {
				if (ga >= 0) {
					/* Read again for the message: which bytes? */
				}
				fprintf(stderr, "fat powercut: %s: %ld bytes after %d rounds acknowledged "
				        "(%zu or %zu expected)\n", pa, ga, acked, a.present ? a.size : 0,
				        b.present ? b.size : 0);
				bad = 1;
			}
		}
	vfs_umount("/dos");
	return bad;
}

int main(void)
{
	struct pcut pc = { .name = "fatfs", .nsectors = 16384, .seed = 12, .prepare = prep,
	                   .work = work, .check = check };
	const char *st = getenv("FAT_PC_STRIDE");
	CHECK_EQ(pc_run(&pc, 0, -1, st ? atoll(st) : 4), 0);
	printf("test_fat_powercut: %llu requests, power cut at %llu of them\n",
	       (unsigned long long)pc.requests, (unsigned long long)pc.runs - 1);
	pc_free(&pc);
	printf("test_fat_powercut: ok\n");
	return 0;
}
