/*
 * lfsclean.c - exobench lfsclean: lfs's cleaner under load, as Sprite LFS
 * measured it (Rosenblum and Ousterhout, the write cost against the disk's
 * utilization), and issue 13's throughput-over-time target.
 *
 *   exobench lfsclean [-u UNIT] [-U PCT,...] [-S SEGS] [-k SEGKIB] [-f FILEKIB]
 *                     [-x TIMES] [-i INTERVALS] [-H HOT] [-r SEED]
 *
 * For each utilization PCT (default 20,40,60,80,90), in one boot: a fresh
 * lfs whose volume has room for SEGS segments of SEGKIB (default 256 of
 * 128 KiB: 32 MiB; the exodisk's disk is much larger, so the volume, not
 * the disk, is what fills) is filled with files of FILEKIB (16 KiB) until
 * PCT% of the volume is live data; then files chosen uniformly at random
 * are overwritten whole until TIMES (10) times the free space has been
 * written, syncing at the end of each of INTERVALS (20) equal parts.
 * With -H HOT (Sprite LFS's "hot-and-cold"), HOT% of the overwrites go to
 * a tenth of the files and the rest to the other nine tenths, each
 * uniformly.  -r picks another sequence of files to overwrite (0: the
 * default one).  The
 * cleaner runs as lfs runs it by itself (in the writing process, when
 * fewer than cleanlo segments are writable).
 *
 * Records (EXOBENCH lines, "bench":"lfsclean"):
 *   "phase":"fill"      writing the files into the empty file system (and
 *                       a sync): its MB/s is the empty-disk figure
 *   "phase":"interval"  one part of the overwriting: its MB/s, and the
 *                       write cost so far
 *   "phase":"overwrite" all of it: MB/s, the write cost of the overwriting
 *                       alone (Sprite LFS's: bytes the log wrote, new and
 *                       the cleaner's, plus the bytes the cleaner read, per
 *                       new byte), segments cleaned and their
 *                       utilization when chosen (u_cleaned), and the
 *                       slowest interval against the empty-disk figure
 * tools/bench/lfsclean.py runs it, and draws the table and the plot.
 * Every file's contents are checked at the end.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "userfs/lfs/lfs.h"

#define MAXU 16

static void usage(void)
{
	fprintf(stderr, "usage: exobench lfsclean [-u UNIT] [-U PCT,...] [-S SEGS] [-k SEGKIB] "
	                "[-f FILEKIB] [-x TIMES] [-i INTERVALS] [-H HOT] [-r SEED]\n");
	exit(2);
}

static long hot;                  /* -H: % of overwrites to a tenth of the files */
static long seed0;                /* -r: another sequence of overwrites         */
static uint8_t *buf;
static void *handle;              /* an open file's state (lfs_ops.file_size) */
static uint32_t *ver;             /* each file's version: its contents' seed */

static void fill_buf(size_t n, uint32_t file, uint32_t v)
{
	uint64_t s = ((uint64_t)file << 32 | v) * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < n; i += 8) {
		uint64_t x = rnd(&s);
		memcpy(buf + i, &x, 8);
	}
}

static int put(struct lfs *fs, uint32_t file, size_t n)
{
	char path[32];
	snprintf(path, sizeof path, "f%u", file);
	void *h = handle;
	int e = lfs_ops.open(fs, path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &h);
	if (e < 0)
		return e;
	fill_buf(n, file, ver[file]);
	long w = lfs_ops.write(fs, h, buf, n, 0);
	int c = lfs_ops.close(fs, h);
	if (w < 0)
		return (int)w;
	return w != (long)n ? -EIO : c;
}

static int check(struct lfs *fs, uint32_t file, size_t n, uint8_t *tmp)
{
	char path[32];
	snprintf(path, sizeof path, "f%u", file);
	void *h = handle;
	int e = lfs_ops.open(fs, path, LIBFS_O_READ, 0, &h);
	if (e < 0)
		return e;
	long r = lfs_ops.read(fs, h, tmp, n, 0);
	lfs_ops.close(fs, h);
	fill_buf(n, file, ver[file]);
	return r == (long)n && memcmp(tmp, buf, n) == 0 ? 0 : -EIO;
}

static double cost(const struct lfs_stats *a, const struct lfs_stats *b)
{
	uint64_t nw = b->new_bytes - a->new_bytes;
	uint64_t more = (b->clean_read - a->clean_read) + (b->clean_moved - a->clean_moved);
	return nw ? (double)(nw + more) / (double)nw : 1.0;
}

static double mbps(uint64_t bytes, uint64_t ns)
{
	return ns ? (double)bytes / ((double)ns / 1e9) / 1e6 : 0;
}

/* One utilization; 0 or -1. */
static int one(int unit, long pct, long segs, long segkib, long filekib, long times, long nint)
{
	char opts[160];
	snprintf(opts, sizeof opts, "unit=%d,key=lfsclean-bench-%ld,seg=%ld,segs=%ld", unit, pct, segkib,
	         segs);
	uint64_t sb;
	int e = lfs_mkfs(opts, &sb);
	if (e < 0) {
		fprintf(stderr, "exobench lfsclean: mkfs %s: %s\n", opts, strerror(-e));
		return -1;
	}
	struct lfs *fs;
	if ((e = lfs_mount(opts, &fs)) < 0) {
		fprintf(stderr, "exobench lfsclean: mount: %s\n", strerror(-e));
		return -1;
	}
	size_t fbytes = (size_t)filekib * 1024;
	/* The volume's room: segment 0 is never used. */
	uint64_t room = (uint64_t)(segs - 1) * (uint64_t)segkib * 1024;
	uint32_t nfiles = (uint32_t)(room * (uint64_t)pct / 100 / fbytes);
	uint64_t freeb = room - (uint64_t)nfiles * fbytes;
	uint64_t total = freeb * (uint64_t)times;
	uint64_t per = total / (uint64_t)nint;
	ver = calloc(nfiles ? nfiles : 1, sizeof *ver);
	uint8_t *tmp = malloc(fbytes);
	if (ver == NULL || tmp == NULL) {
		fprintf(stderr, "exobench lfsclean: out of memory\n");
		return -1;
	}
	printf("lfsclean: %s%ld%% of %ld segments of %ld KiB: %u files of %ld KiB, then %llu MiB of "
	       "overwrites (%ldx the free space) in %ld parts\n", hot ? "hot-and-cold, " : "", pct, segs, segkib, nfiles, filekib,
	       (unsigned long long)(total >> 20), times, nint);
	struct lfs_stats s0, s1, s2;
	lfs_get_stats(fs, &s0, NULL);
	uint64_t t0 = now();
	for (uint32_t f = 0; f < nfiles && e == 0; f++)
		e = put(fs, f, fbytes);
	if (e == 0)
		e = lfs_ops.sync(fs);
	uint64_t fill_ns = ns_since(t0);
	if (e < 0) {
		fprintf(stderr, "exobench lfsclean: filling: %s\n", strerror(-e));
		lfs_unmount(fs);
		return -1;
	}
	double fill = mbps((uint64_t)nfiles * fbytes, fill_ns);
	emit("\"bench\":\"lfsclean\",\"util\":%ld,\"hot\":%ld,\"phase\":\"fill\",\"files\":%u,\"file_bytes\":%zu,"
	     "\"seg_bytes\":%ld,\"segs\":%ld,\"bytes\":%llu,\"ns\":%llu,\"mbps\":%.3f",
	     pct, hot, nfiles, fbytes, segkib * 1024, segs, (unsigned long long)nfiles * fbytes,
	     (unsigned long long)fill_ns, fill);
	lfs_get_stats(fs, &s1, NULL);
	uint64_t seed = 0x1fc1ea7ull + (uint64_t)pct + ((uint64_t)seed0 << 32), done = 0, all_ns = 0;
	double worst = 0;
	for (long k = 0; k < nint && e == 0 && nfiles > 0; k++) {
		uint64_t t = now(), wrote = 0;
		while (wrote < per && e == 0) {
			uint32_t f = (uint32_t)(rnd(&seed) % nfiles);
			uint32_t nhot = nfiles / 10;
			if (hot > 0 && nhot > 0 && nhot < nfiles)
				f = (long)(rnd(&seed) % 100) < hot ? (uint32_t)(rnd(&seed) % nhot)
				                                   : nhot + (uint32_t)(rnd(&seed) % (nfiles - nhot));
			ver[f]++;
			e = put(fs, f, fbytes);
			wrote += fbytes;
		}
		if (e == 0)
			e = lfs_ops.sync(fs);
		uint64_t ns = ns_since(t);
		all_ns += ns;
		done += wrote;
		struct lfs_stats sp = s2;
		lfs_get_stats(fs, &s2, NULL);
		if (k == 0)
			sp = s1;
		double m = mbps(wrote, ns);
		if (k == 0 || m < worst)
			worst = m;
		emit("\"bench\":\"lfsclean\",\"util\":%ld,\"hot\":%ld,\"phase\":\"interval\",\"i\":%ld,\"bytes\":%llu,"
		     "\"ns\":%llu,\"at_bytes\":%llu,\"at_ns\":%llu,\"mbps\":%.3f,\"wcost\":%.3f,\"cleaned\":%llu,"
		     "\"part\":{\"wcost\":%.3f,\"cleaned\":%llu,\"rounds\":%llu,\"checkpoints\":%llu,"
		     "\"cp_bytes\":%llu,\"new\":%llu,\"clean_read\":%llu,\"clean_moved\":%llu,"
		     "\"clean_live\":%llu,\"flushes\":%llu,\"imap_blocks\":%llu,\"mapped\":%llu,\"released\":%llu}",
		     pct, hot, k, (unsigned long long)wrote, (unsigned long long)ns, (unsigned long long)done,
		     (unsigned long long)all_ns, m, cost(&s1, &s2),
		     (unsigned long long)(s2.segs_cleaned - s1.segs_cleaned), cost(&sp, &s2),
		     (unsigned long long)(s2.segs_cleaned - sp.segs_cleaned),
		     (unsigned long long)(s2.clean_rounds - sp.clean_rounds),
		     (unsigned long long)(s2.checkpoints - sp.checkpoints),
		     (unsigned long long)(s2.cp_bytes - sp.cp_bytes),
		     (unsigned long long)(s2.new_bytes - sp.new_bytes),
		     (unsigned long long)(s2.clean_read - sp.clean_read),
		     (unsigned long long)(s2.clean_moved - sp.clean_moved),
		     (unsigned long long)(s2.clean_live - sp.clean_live),
		     (unsigned long long)(s2.flushes - sp.flushes),
		     (unsigned long long)(s2.cp_imap_blocks - sp.cp_imap_blocks),
		     (unsigned long long)(s2.segs_mapped - sp.segs_mapped),
		     (unsigned long long)(s2.segs_released - sp.segs_released));
	}
	if (e < 0) {
		fprintf(stderr, "exobench lfsclean: overwriting at %ld%%: %s\n", pct, strerror(-e));
		lfs_unmount(fs);
		return -1;
	}
	lfs_get_stats(fs, &s2, NULL);
	double ow = mbps(done, all_ns), wc = cost(&s1, &s2);
	/* The utilization of the segments cleaned, when chosen: what Sprite
	 * LFS's 2/(1-u) takes (the write cost adds the summaries, inodes and
	 * checkpoints the moves cost). */
	uint64_t crd = s2.clean_read - s1.clean_read;
	double ucl = crd ? (double)(s2.clean_live - s1.clean_live) / (double)crd : 0;
	emit("\"bench\":\"lfsclean\",\"util\":%ld,\"hot\":%ld,\"phase\":\"overwrite\",\"bytes\":%llu,\"ns\":%llu,"
	     "\"mbps\":%.3f,\"wcost\":%.3f,\"cleaned\":%llu,\"clean_read\":%llu,\"clean_moved\":%llu,"
	     "\"new\":%llu,\"u_cleaned\":%.3f,\"worst_mbps\":%.3f,\"worst_vs_fill\":%.3f",
	     pct, hot, (unsigned long long)done, (unsigned long long)all_ns, ow, wc,
	     (unsigned long long)(s2.segs_cleaned - s1.segs_cleaned),
	     (unsigned long long)(s2.clean_read - s1.clean_read),
	     (unsigned long long)(s2.clean_moved - s1.clean_moved),
	     (unsigned long long)(s2.new_bytes - s1.new_bytes), ucl, worst, fill > 0 ? worst / fill : 0);
	printf("  %ld%%: fill %.2f MB/s; overwrite %.2f MB/s, slowest part %.2f MB/s (%.0f%% of the "
	       "fill); write cost %.2f, %llu segments cleaned at u %.2f\n", pct, fill, ow, worst,
	       fill > 0 ? 100 * worst / fill : 0, wc, (unsigned long long)(s2.segs_cleaned - s1.segs_cleaned), ucl);
	/* Every file as last written. */
	for (uint32_t f = 0; f < nfiles && e == 0; f++)
		if ((e = check(fs, f, fbytes, tmp)) < 0)
			fprintf(stderr, "exobench lfsclean: file f%u at %ld%% reads back wrong: %s\n", f, pct,
			        strerror(-e));
	(void)s0;
	int u = lfs_unmount(fs);
	free(ver);
	free(tmp);
	return e < 0 || u < 0 ? -1 : 0;
}

int lfsclean_main(int argc, char **argv)
{
	long unit = 0, segs = 256, segkib = 128, filekib = 16, times = 10, nint = 20;
	long pcts[MAXU] = { 20, 40, 60, 80, 90 };
	int npct = 5;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i], *v = argv[i + 1];
		if (!strcmp(o, "-u"))
			unit = arg_num(v, usage);
		else if (!strcmp(o, "-U")) {
			npct = num_list(v, pcts, MAXU);
			if (npct <= 0)
				usage();
		} else if (!strcmp(o, "-S"))
			segs = arg_num(v, usage);
		else if (!strcmp(o, "-k"))
			segkib = arg_num(v, usage);
		else if (!strcmp(o, "-f"))
			filekib = arg_num(v, usage);
		else if (!strcmp(o, "-x"))
			times = arg_num(v, usage);
		else if (!strcmp(o, "-i"))
			nint = arg_num(v, usage);
		else if (!strcmp(o, "-H"))
			hot = arg_num(v, usage);
		else if (!strcmp(o, "-r"))
			seed0 = arg_num(v, usage);
		else
			usage();
	}
	for (int i = 0; i < npct; i++)
		if (pcts[i] < 1 || pcts[i] > 95)
			usage();
	if (segs < 32 || hot > 100 || filekib < 1 || filekib > 1024 || times < 1 || nint < 1 || nint > 1000)
		usage();
	const char *m = bench_open((int)unit);
	if (m != NULL) {
		fprintf(stderr, "exobench lfsclean: %s\n", m);
		return 1;
	}
	buf = malloc((size_t)filekib * 1024);
	handle = calloc(1, lfs_ops.file_size ? lfs_ops.file_size : 1);
	if (buf == NULL || handle == NULL)
		return 1;
	emit_meta("lfsclean", 1);
	int bad = 0;
	for (int i = 0; i < npct; i++)
		bad |= one((int)unit, pcts[i], segs, segkib, filekib, times, nint) < 0;
	free(buf);
	free(handle);
	return bad;
}
