/*
 * fswork.c - the file-system workload both sides of the Linux comparison
 * run (fswork.h): exobench on a library file system of ours, lxbench on a
 * Linux file system.  Only POSIX calls and common.c: nothing here knows
 * which system it runs on.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "apps/exobench/common.h"
#include "apps/exobench/fswork.h"

#define SEQ_BYTES  (64u * 1024)
#define RAND_BYTES (4u * 1024)

static const struct fw_sys *S;

static int fail(const char *what, const char *path)
{
	printf("%s: %s %s: %s\n", S->fs, what, path ? path : "", strerror(errno));
	return 1;
}

/* Before every phase, not timed.  Returns -1 on failure, else the cache
 * entries the system could not empty. */
static long cold(void)
{
	long r = S->cold();
	if (r < 0) {
		errno = (int)-r;
		fail("emptying the caches before a phase:", S->root);
		return -1;
	}
	return r;
}

/* A timed phase starts (name) or ends (NULL), for a profiler. */
static void mark(const char *name, uint64_t units)
{
	if (S->phase != NULL)
		S->phase(name, units);
}

/* ---- options -------------------------------------------------------------- */

void fw_defaults(struct fw_args *a)
{
	memset(a, 0, sizeof *a);
	a->runs = 5;
	a->which = "all";
	a->nsizes = a->nbytes = 2;
	a->nfiles[0] = 1000;
	a->bytes[0] = 10240;
	a->nfiles[1] = 10000;
	a->bytes[1] = 1024;
	a->ndirs = 100;
	a->mib = 80;
}

int fw_option(struct fw_args *a, const char *opt, const char *val)
{
	long v = 0;
	if (strcmp(opt, "-x") == 0) {
		a->which = val;
		return strcmp(val, "small") == 0 || strcmp(val, "large") == 0 || strcmp(val, "all") == 0 ? 1 : -1;
	}
	if (strcmp(opt, "-n") == 0 || strcmp(opt, "-s") == 0) {
		long v[FW_MAXSIZES];
		int n = num_list(val, v, FW_MAXSIZES);
		if (n < 1)
			return -1;
		for (int i = 0; i < n; i++) {
			if (opt[1] == 'n')
				a->nfiles[i] = v[i] > 1000000 ? -1 : (int)v[i];
			else
				a->bytes[i] = v[i];
		}
		if (opt[1] == 'n')
			a->nsizes = n;
		else
			a->nbytes = n;
		return 1;
	}
	static const char *const num[] = { "-r", "-d", "-m", "-k" };
	for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
		if (strcmp(opt, num[i]) == 0) {
			if (parse_num(val, &v) != 0)
				return -1;
			switch (opt[1]) {
			case 'r': a->runs = (int)v; break;
			case 'd': a->ndirs = (int)v; break;
			case 'm': a->mib = v; break;
			default: a->kops = v; break;
			}
			return 1;
		}
	return 0;
}

int fw_check(const struct fw_args *a)
{
	if (a->runs < 1 || a->runs > BENCH_MAXRUNS || a->nsizes != a->nbytes || a->ndirs < 1 || a->ndirs > 100 ||
	    a->mib < 1 || a->mib > 1024 || a->kops < 0)
		return -1;
	for (int i = 0; i < a->nsizes; i++)
		if (a->nfiles[i] < 1 || a->nfiles[i] > 100000 || a->bytes[i] < 16 || a->bytes[i] > 1 << 20)
			return -1;
	return 0;
}

/* ---- small files ------------------------------------------------------------ */

static const char *const small_phase_name[3] = { "write", "read", "dealloc" };

static void fpath(char *p, size_t n, int ndirs, int i)
{
	snprintf(p, n, "%s/d%02d/f%05d", S->root, i % ndirs, i);
}

static int small_phase(int ph, int nfiles, uint32_t bytes, int ndirs, uint8_t *buf, uint64_t tag)
{
	char p[160];
	for (int i = 0; i < nfiles; i++) {
		fpath(p, sizeof p, ndirs, i);
		if (ph == 0) {
			if (i < ndirs) {
				char d[160];
				snprintf(d, sizeof d, "%s/d%02d", S->root, i);
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
				printf("%s: %s read back wrong\n", S->fs, p);
				return 1;
			}
		} else if (unlink(p) < 0) {
			return fail("unlink", p);
		}
	}
	if (ph == 2)
		for (int d = 0; d < ndirs && d < nfiles; d++) {
			snprintf(p, sizeof p, "%s/d%02d", S->root, d);
			if (rmdir(p) < 0)
				return fail("rmdir", p);
		}
	if (ph != 1)
		sync();
	return 0;
}

static int small(int runs, int nfiles, uint32_t bytes, int ndirs)
{
	static uint64_t ns[3][BENCH_MAXRUNS];
	uint8_t *buf = malloc(bytes);
	if (buf == NULL)
		return 1;
	memset(buf, 0x5a, bytes);
	printf("%s: %d files of %u bytes in %d directories, %d run%s, every phase cold\n", S->fs, nfiles, bytes,
	       ndirs, runs, runs > 1 ? "s" : "");
	for (int run = 0; run < runs; run++) {
		for (int ph = 0; ph < 3; ph++) {
			long left = cold();
			if (left < 0)
				return 1;
			char name[40];
			snprintf(name, sizeof name, "%s %uB", small_phase_name[ph], bytes);
			mark(name, (uint64_t)nfiles);
			uint64_t t0 = S->now_ns();
			if (small_phase(ph, nfiles, bytes, ndirs, buf, 0x5f11e5ull + (uint64_t)run))
				return 1;
			ns[ph][run] = S->now_ns() - t0;
			mark(NULL, 0);
			emit("\"bench\":\"smallfile\",\"os\":\"%s\",\"dev\":\"%s\",\"unit\":%d,\"files\":%d,\"bytes\":%u,"
			     "\"dirs\":%d,\"org\":\"%s\",\"phase\":\"%s\",\"run\":%d,\"ns\":%lu,\"ns_per_file\":%lu,"
			     "\"cold\":1,\"cache_left\":%ld",
			     S->os, S->dev, S->unit, nfiles, bytes, ndirs, S->fs, small_phase_name[ph], run,
			     (unsigned long)ns[ph][run], (unsigned long)(ns[ph][run] / (uint64_t)nfiles), left);
			char a[24];
			printf("  run %d %-8s %s ms/file\n", run + 1, small_phase_name[ph],
			       fmt_ms(a, sizeof a, ns[ph][run] / (uint64_t)nfiles));
		}
	}
	printf("\n%d files of %u bytes, %s on %s: ms per file, mean ± sd [min-max]\n", nfiles, bytes, S->fs,
	       S->dev);
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

/* ---- the large file ------------------------------------------------------------ */

static const char *const large_phase_name[6] = { "alloc", "seqwrite", "seqread", "randwrite", "randread",
	                                         "dealloc" };

static int large_phase(int ph, uint64_t nblocks, uint64_t ops, const uint32_t *order, uint8_t *buf,
                       uint64_t tag, uint64_t rtag, const uint8_t *wrand, uint64_t *moved)
{
	char p[160];
	snprintf(p, sizeof p, "%s/large", S->root);
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
						printf("%s: block %lu read back wrong\n", S->fs, (unsigned long)k);
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
				printf("%s: block %lu read back wrong\n", S->fs, (unsigned long)k);
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
	printf("%s: one file of %ld MiB; random phases: %lu blocks; %d run%s, every phase cold\n", S->fs, mib,
	       (unsigned long)ops, runs, runs > 1 ? "s" : "");
	for (int run = 0; run < runs; run++) {
		uint64_t tag = 0x1a26e000ull + (uint64_t)run * 2, rtag = tag + 1;
		memset(wrand, 0, nblocks);
		for (int ph = 0; ph < 6; ph++) {
			if (ph == 3 || ph == 4) {
				/* The same order largefile uses for this run and phase. */
				uint64_t seed = large_order_seed(run, ph);
				shuffle(order, (uint32_t)nblocks, &seed);
			}
			long left = cold();
			if (left < 0)
				return 1;
			char name[40];
			snprintf(name, sizeof name, "large %s", large_phase_name[ph]);
			mark(name, ph == 3 || ph == 4 ? ops : ph == 1 || ph == 2 ? nblocks : 1);
			uint64_t moved, t0 = S->now_ns();
			if (large_phase(ph, nblocks, ops, order, buf, tag, rtag, wrand, &moved))
				return 1;
			ns[ph][run] = S->now_ns() - t0;
			mark(NULL, 0);
			if (ph == 3)
				for (uint64_t i = 0; i < ops; i++)
					wrand[order[i]] = 1;
			emit("\"bench\":\"largefile\",\"os\":\"%s\",\"dev\":\"%s\",\"org\":\"%s\",\"phase\":\"%s\",\"run\":%d,"
			     "\"ns\":%lu,\"bytes\":%lu,\"ops\":%lu,\"file_bytes\":%lu,\"cold\":1,\"cache_left\":%ld",
			     S->os, S->dev, S->fs, large_phase_name[ph], run, (unsigned long)ns[ph][run],
			     (unsigned long)moved,
			     (unsigned long)(ph == 1 || ph == 2 ? (moved + SEQ_BYTES - 1) / SEQ_BYTES : moved / RAND_BYTES),
			     (unsigned long)(nblocks * RAND_BYTES), left);
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

int fw_run(const struct fw_sys *sys, const struct fw_args *a)
{
	S = sys;
	int do_small = strcmp(a->which, "small") == 0 || strcmp(a->which, "all") == 0;
	int do_large = strcmp(a->which, "large") == 0 || strcmp(a->which, "all") == 0;
	for (int i = 0; do_small && i < a->nsizes; i++)
		if (small(a->runs, a->nfiles[i], (uint32_t)a->bytes[i], a->ndirs))
			return 1;
	if (do_large && large(a->runs, a->mib, a->kops))
		return 1;
	return 0;
}
