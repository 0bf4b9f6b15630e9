/*
 * unixfs.c - exobench unixfs: the full-file-system row of thesis Tables
 * A.1-A.3 (the thesis measured the Ultrix file system there): the same
 * small-file and large-file work as `smallfile` and `largefile`, through
 * the POSIX layer (open, write, read, pread, pwrite, unlink, mkdir, sync)
 * on a unixfs mounted on the benchmark disk.
 *
 *   exobench unixfs [-u UNIT] [-r RUNS] [-x small|large|all] [-n FILES -s BYTES]
 *                   [-d DIRS] [-m MIB] [-k OPS]
 *
 * Small files (default: both thesis experiments, 1,000 x 10 KB and
 * 10,000 x 1 KB): spread evenly over DIRS directories (default 100, as
 * the thesis did to keep directory lookups cheap); the directories are
 * made as part of allocation and removed as part of deallocation.  Each
 * phase ends with sync(), so its work is durable when the clock stops;
 * between phases (not timed) the file system is unmounted and mounted
 * again, so reads start with this program's buffer cache empty.
 *
 * Large file (MIB MiB, default 80): create it (allocation), write it in
 * 64 KB writes then fsync, read it in 64 KB reads, pwrite OPS 4 KB blocks
 * in a random order then fsync, pread OPS blocks in another order, unlink
 * it and sync; remounted (not timed) before each read phase.  The orders
 * are those `largefile` uses for the same run.
 *
 * No control over layout: unixfs places everything itself.  If the unit
 * holds no unixfs for the development secret, one is made first.  The
 * unixfs waits as every library client does: sleeping in ED_OP_POLL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "apps/exobench/bench.h"
#include "libos/exo.h"
#include "libos/files.h"
#include "libos/prof.h"
#include "libos/vfs.h"
#include "userfs/unixfs/unixfs.h"

#define PREFIX "/xb"
#define SEQ_BYTES  (64u * 1024)
#define RAND_BYTES (4u * 1024)

static char opts[64];

static int fail(const char *what, const char *path)
{
	printf("unixfs: %s %s: %s\n", what, path ? path : "", strerror(errno));
	return 1;
}

/* Unmount (writing everything back) and mount again: this program's
 * caches start empty. */
static int remount(void)
{
	int r = vfs_umount(PREFIX);
	if (r == 0)
		r = vfs_mount(PREFIX, "unixfs", opts, 1);
	if (r < 0) {
		errno = -r;
		return fail("remount", PREFIX);
	}
	return 0;
}

/* ---- small files --------------------------------------------------------- */

static void fpath(char *p, size_t n, int ndirs, int i)
{
	snprintf(p, n, PREFIX "/d%02d/f%05d", i % ndirs, i);
}

static int small_phase(int ph, int nfiles, uint32_t bytes, int ndirs, uint8_t *buf, uint64_t tag)
{
	char p[64];
	for (int i = 0; i < nfiles; i++) {
		fpath(p, sizeof p, ndirs, i);
		if (ph == 0) {
			if (i < ndirs) {
				char d[32];
				snprintf(d, sizeof d, PREFIX "/d%02d", i);
				if (mkdir(d, 0755) < 0)
					return fail("mkdir", d);
			}
			stamp_block(buf, tag, (uint64_t)i);
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write(fd, buf, bytes) != (ssize_t)bytes || close(fd) < 0)
				return fail("write", p);
		} else if (ph == 1) {
			int fd = open(p, O_RDONLY);
			if (fd < 0 || read(fd, buf, bytes) != (ssize_t)bytes || close(fd) < 0)
				return fail("read", p);
			if (!stamp_ok(buf, tag, (uint64_t)i)) {
				printf("unixfs: %s read back wrong\n", p);
				return 1;
			}
		} else if (unlink(p) < 0) {
			return fail("unlink", p);
		}
	}
	if (ph == 2)
		for (int d = 0; d < ndirs && d < nfiles; d++) {
			snprintf(p, sizeof p, PREFIX "/d%02d", d);
			if (rmdir(p) < 0)
				return fail("rmdir", p);
		}
	if (ph != 1)
		sync();
	return 0;
}

static const char *const small_phase_name[3] = { "write", "read", "dealloc" };

static int small(int runs, int nfiles, uint32_t bytes, int ndirs)
{
	static uint64_t ns[3][BENCH_MAXRUNS];
	uint8_t *buf = malloc(bytes < 16 ? 16 : bytes);
	if (buf == NULL)
		return 1;
	memset(buf, 0x5a, bytes);
	printf("unixfs: %d files of %u bytes in %d directories, %d run%s\n", nfiles, bytes, ndirs, runs,
	       runs > 1 ? "s" : "");
	char phase[40];
	for (int run = 0; run < runs; run++) {
		for (int ph = 0; ph < 3; ph++) {
			if (remount())
				return 1;
			snprintf(phase, sizeof phase, "%s %uB", small_phase_name[ph], bytes);
			exo_phase(phase, (uint64_t)nfiles);   /* for prof (docs/profiling.md) */
			uint64_t t0 = now();
			if (small_phase(ph, nfiles, bytes, ndirs, buf, 0x5f11e5ull + (uint64_t)run))
				return 1;
			ns[ph][run] = ns_since(t0);
			exo_phase(NULL, 0);
			emit("\"bench\":\"smallfile\",\"dev\":\"%s\",\"unit\":%d,\"files\":%d,\"bytes\":%u,\"dirs\":%d,"
			     "\"org\":\"unixfs\",\"phase\":\"%s\",\"run\":%d,\"ns\":%lu,\"ns_per_file\":%lu",
			     B.dev, B.unit, nfiles, bytes, ndirs, small_phase_name[ph], run, (unsigned long)ns[ph][run],
			     (unsigned long)(ns[ph][run] / (uint64_t)nfiles));
			char a[24];
			printf("  run %d %-8s %s ms/file\n", run + 1, small_phase_name[ph],
			       fmt_ms(a, sizeof a, ns[ph][run] / (uint64_t)nfiles));
		}
	}
	printf("\n%d files of %u bytes, unixfs on %s: ms per file, mean ± sd [min-max]\n", nfiles, bytes, B.dev);
	for (int ph = 0; ph < 3; ph++) {
		struct summary s;
		summarize(ns[ph], runs, &s);
		char a[24], b[24], c[24], d[24];
		uint64_t n = (uint64_t)nfiles;
		printf("  %-8s %s ± %s [%s-%s]\n", small_phase_name[ph], fmt_ms(a, sizeof a, s.mean / n),
		       fmt_ms(b, sizeof b, s.sd / n), fmt_ms(c, sizeof c, s.min / n), fmt_ms(d, sizeof d, s.max / n));
	}
	free(buf);
	return 0;
}

/* ---- the large file -------------------------------------------------------- */

static const char *const large_phase_name[6] = { "alloc", "seqwrite", "seqread", "randwrite", "randread",
	                                         "dealloc" };

static int large_phase(int ph, uint64_t nblocks, uint64_t ops, const uint32_t *order, uint8_t *buf,
                       uint64_t tag, uint64_t rtag, const uint8_t *wrand, uint64_t *moved)
{
	const char *p = PREFIX "/large";
	uint64_t fbytes = nblocks * RAND_BYTES;
	int fd = -1;
	*moved = 0;
	if (ph == 0) {
		fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || close(fd) < 0)
			return fail("create", p);
		sync();
		return 0;
	}
	if (ph == 5) {
		if (unlink(p) < 0)
			return fail("unlink", p);
		sync();
		return 0;
	}
	fd = open(p, ph == 1 ? O_WRONLY : ph == 3 ? O_RDWR : O_RDONLY);
	if (fd < 0)
		return fail("open", p);
	if (ph == 1 || ph == 2) {
		for (uint64_t off = 0; off < fbytes; off += SEQ_BYTES) {
			uint32_t n = fbytes - off < SEQ_BYTES ? (uint32_t)(fbytes - off) : SEQ_BYTES;
			if (ph == 1)
				for (uint32_t o = 0; o < n; o += RAND_BYTES)
					stamp_block(buf + o, tag, (off + o) / RAND_BYTES);
			ssize_t r = ph == 1 ? write(fd, buf, n) : read(fd, buf, n);
			if (r != (ssize_t)n)
				return fail(ph == 1 ? "write" : "read", p);
			if (ph == 2)
				for (uint32_t o = 0; o < n; o += RAND_BYTES) {
					uint64_t k = (off + o) / RAND_BYTES;
					if (!stamp_ok(buf + o, wrand[k] ? rtag : tag, k)) {
						printf("unixfs: block %lu read back wrong\n", (unsigned long)k);
						return 1;
					}
				}
			*moved += n;
		}
	} else {
		for (uint64_t i = 0; i < ops; i++) {
			uint64_t k = order[i];
			if (ph == 3)
				stamp_block(buf, rtag, k);
			ssize_t r = ph == 3 ? pwrite(fd, buf, RAND_BYTES, (off_t)(k * RAND_BYTES))
			                    : pread(fd, buf, RAND_BYTES, (off_t)(k * RAND_BYTES));
			if (r != (ssize_t)RAND_BYTES)
				return fail(ph == 3 ? "pwrite" : "pread", p);
			if (ph == 4 && !stamp_ok(buf, wrand[k] ? rtag : tag, k)) {
				printf("unixfs: block %lu read back wrong\n", (unsigned long)k);
				return 1;
			}
			*moved += RAND_BYTES;
		}
	}
	if ((ph == 1 || ph == 3) && fsync(fd) < 0)
		return fail("fsync", p);
	if (close(fd) < 0)
		return fail("close", p);
	return 0;
}

static int large(int runs, long mib, long kops)
{
	static uint64_t ns[6][BENCH_MAXRUNS];
	uint64_t nblocks = (uint64_t)mib * (1 << 20) / RAND_BYTES;
	uint64_t ops = kops > 0 && (uint64_t)kops < nblocks ? (uint64_t)kops : nblocks;
	uint8_t *buf = malloc(SEQ_BYTES), *wrand = malloc(nblocks);
	uint32_t *order = malloc(nblocks * sizeof *order);
	if (buf == NULL || wrand == NULL || order == NULL)
		return 1;
	printf("unixfs: one file of %ld MiB; random phases: %lu blocks; %d run%s\n", mib, (unsigned long)ops, runs,
	       runs > 1 ? "s" : "");
	for (int run = 0; run < runs; run++) {
		uint64_t tag = 0x1a26e000ull + (uint64_t)run * 2, rtag = tag + 1;
		memset(wrand, 0, nblocks);
		for (int ph = 0; ph < 6; ph++) {
			if ((ph == 2 || ph == 4) && remount())
				return 1;
			if (ph == 3 || ph == 4) {
				/* The same order largefile uses for this run and phase. */
				uint64_t seed = 0x1a26ef11e5eedull + (uint64_t)run * 16 + (uint64_t)ph;
				shuffle(order, (uint32_t)nblocks, &seed);
			}
			uint64_t moved, t0 = now();
			if (large_phase(ph, nblocks, ops, order, buf, tag, rtag, wrand, &moved))
				return 1;
			ns[ph][run] = ns_since(t0);
			if (ph == 3)
				for (uint64_t i = 0; i < ops; i++)
					wrand[order[i]] = 1;
			emit("\"bench\":\"largefile\",\"dev\":\"%s\",\"org\":\"unixfs\",\"phase\":\"%s\",\"run\":%d,"
			     "\"ns\":%lu,\"bytes\":%lu,\"ops\":%lu,\"file_bytes\":%lu",
			     B.dev, large_phase_name[ph], run, (unsigned long)ns[ph][run], (unsigned long)moved,
			     (unsigned long)(ph == 1 || ph == 2 ? (moved + SEQ_BYTES - 1) / SEQ_BYTES : moved / RAND_BYTES),
			     (unsigned long)(nblocks * RAND_BYTES));
			char a[24];
			if (moved > 0)
				printf("  run %d %-9s %s MB/s\n", run + 1, large_phase_name[ph],
				       fmt_milli(a, sizeof a, moved * 1000000 / (ns[ph][run] ? ns[ph][run] : 1)));
			else
				printf("  run %d %-9s %s ms\n", run + 1, large_phase_name[ph], fmt_ms(a, sizeof a, ns[ph][run]));
		}
	}
	free(buf);
	free(wrand);
	free(order);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: exobench unixfs [-u UNIT] [-r RUNS] [-x small|large|all] [-n FILES -s BYTES] "
	                "[-d DIRS] [-m MIB] [-k OPS]\n");
	exit(2);
}

int unixfs_main(int argc, char **argv)
{
	int unit = 0, runs = 5, nfiles = 0, ndirs = 100;
	long bytes = 0, mib = 80, kops = 0;
	const char *which = "all";
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i++];
		if (strcmp(o, "-x") == 0) {
			which = argv[i];
			continue;
		}
		long v = arg_num(argv[i], usage);
		if (strcmp(o, "-u") == 0)
			unit = (int)v;
		else if (strcmp(o, "-r") == 0)
			runs = (int)v;
		else if (strcmp(o, "-n") == 0)
			nfiles = (int)v;
		else if (strcmp(o, "-s") == 0)
			bytes = v;
		else if (strcmp(o, "-d") == 0)
			ndirs = (int)v;
		else if (strcmp(o, "-m") == 0)
			mib = v;
		else if (strcmp(o, "-k") == 0)
			kops = v;
		else
			usage();
	}
	int do_small = strcmp(which, "small") == 0 || strcmp(which, "all") == 0;
	int do_large = strcmp(which, "large") == 0 || strcmp(which, "all") == 0;
	if (runs < 1 || runs > BENCH_MAXRUNS || (!do_small && !do_large) || (nfiles > 0) != (bytes > 0) ||
	    nfiles > 100000 || bytes > 1 << 20 || ndirs < 1 || ndirs > 100 || mib < 1 || mib > 1024)
		usage();
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("unixfs: unit %d: %s\n", unit, err);
		return 1;
	}
	uint64_t sb;
	snprintf(opts, sizeof opts, "unit=%d", unit);
	int r = unixfs_mkfs(opts, &sb);
	if (r < 0 && r != -EEXIST) {
		printf("unixfs: mkfs on unit %d: %s\n", unit, strerror(-r));
		return 1;
	}
	if (r == 0)
		snprintf(opts, sizeof opts, "unit=%d,sb=%lu", unit, (unsigned long)sb);
	r = vfs_mount(PREFIX, "unixfs", opts, 1);
	if (r < 0) {
		printf("unixfs: mount %s on %s: %s\n", opts, PREFIX, strerror(-r));
		return 1;
	}
	emit_meta("unixfs", runs);
	if (do_small) {
		if (nfiles > 0)
			r = small(runs, nfiles, (uint32_t)bytes, ndirs);
		else
			r = small(runs, 1000, 10240, ndirs) || small(runs, 10000, 1024, ndirs);
		if (r)
			return 1;
	}
	if (do_large && large(runs, mib, kops))
		return 1;
	r = vfs_umount(PREFIX);
	if (r < 0) {
		printf("unixfs: unmount: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
