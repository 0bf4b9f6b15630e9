/*
 * fsbench.c - unixfs against the layers below it, in one run on one disk:
 *
 *   unixfs    small files: create+write, read, delete N files of S bytes
 *             (per-file latency; the application cache is emptied by an
 *             unmount between phases), and a large file: sequential write
 *             and read, random 4 KiB reads, random 4 KiB durable writes;
 *   exonode   the same large-file work straight through the exodisk client
 *             on one exonode's extent (no file system);
 *   raw       the same on the same sectors through the benchmark-only raw
 *             path (no protection at all; needs the boot option rawio=1).
 *
 *   fsbench [-n FILES] [-s BYTES] [-m MIB] [-r OPS] DIR
 *
 * "Durable" means the write and a device flush after it have completed
 * (unixfs: a write-through file; exonode: write, then edc_flush; raw: write,
 * then RAW_FLUSH).  Times come from the RISC-V time CSR.  The results are
 * one line each, easy to collect: "fsbench: LAYER TEST ... = VALUE UNIT".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libos/capkey.h"
#include "libos/edc.h"
#include "libos/exo.h"
#include "libos/files.h"
#include "libos/prof.h"
#include "libos/vfs.h"
#include "apps/rawlib.h"

static long nfiles = 1000, fsize = 10240, mib = 64, rops = 1000;
static const char *dir;
static uint64_t seed = 12345;
static char prefix[LIBFS_PATH_MAX], type[32], opts[VFS_SPEC_MAX];

static uint64_t now(void) { return exo_time(); }
static double ms(uint64_t t) { return (double)exo_time_to_ns(t) / 1e6; }
static double mbps(uint64_t bytes, uint64_t t) { return (double)bytes / 1e6 / (ms(t) / 1e3); }

static void die(const char *what)
{
	fprintf(stderr, "fsbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Empty this program's caches: unmount and mount the file system again. */
static void remount(void)
{
	if (vfs_umount(prefix) < 0 || vfs_mount(prefix, type, opts, 1) < 0)
		die("remount");
}

static void find_mount(void)
{
	char abs[LIBFS_PATH_MAX];
	if (vfs_normalize(dir, abs) < 0)
		die(dir);
	const char *p, *t, *o;
	int mounted;
	size_t best = 0;
	for (int i = 0; fs_mount_info(i, &p, &t, &o, &mounted) == 0; i++) {
		size_t n = strlen(p);
		if ((n == 1 || (strncmp(abs, p, n) == 0 && (abs[n] == 0 || abs[n] == '/'))) && n >= best) {
			best = n;
			snprintf(prefix, sizeof prefix, "%s", p);
			snprintf(type, sizeof type, "%s", t);
			snprintf(opts, sizeof opts, "%s", o);
		}
	}
	if (best == 0) {
		errno = ENOENT;
		die(dir);
	}
}

static void small_files(void)
{
	char *buf = malloc((size_t)fsize), path[300];
	memset(buf, 'x', (size_t)fsize);
	snprintf(path, sizeof path, "%s/small", dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die(path);
	remount();
	exo_phase("small create+write", (uint64_t)nfiles);   /* for prof (docs/profiling.md) */
	uint64_t t0 = now();
	for (long i = 0; i < nfiles; i++) {
		snprintf(path, sizeof path, "%s/small/f%ld", dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, buf, (size_t)fsize) != fsize || close(fd) < 0)
			die(path);
	}
	sync();                   /* everything durable: counted */
	uint64_t t1 = now();
	exo_phase(NULL, 0);
	remount();
	exo_phase("small read", (uint64_t)nfiles);
	uint64_t t2 = now();
	for (long i = 0; i < nfiles; i++) {
		snprintf(path, sizeof path, "%s/small/f%ld", dir, i);
		int fd = open(path, O_RDONLY);
		if (fd < 0 || read(fd, buf, (size_t)fsize) != fsize || close(fd) < 0)
			die(path);
	}
	exo_phase("small delete", (uint64_t)nfiles);
	uint64_t t3 = now();
	for (long i = 0; i < nfiles; i++) {
		snprintf(path, sizeof path, "%s/small/f%ld", dir, i);
		if (unlink(path) < 0)
			die(path);
	}
	sync();
	uint64_t t4 = now();
	exo_phase(NULL, 0);
	printf("fsbench: unixfs small create+write %ld x %ld B = %.3f ms/file\n", nfiles, fsize,
	       ms(t1 - t0) / (double)nfiles);
	printf("fsbench: unixfs small read %ld x %ld B = %.3f ms/file\n", nfiles, fsize,
	       ms(t3 - t2) / (double)nfiles);
	printf("fsbench: unixfs small delete %ld x %ld B = %.3f ms/file\n", nfiles, fsize,
	       ms(t4 - t3) / (double)nfiles);
	free(buf);
}

static int u_write(void *c, uint64_t off, void *b, size_t n);
static int fd_big = -1;
static int u_through;        /* the file is write-through now */

/* The same large-file work over three layers, through these. */
struct layer {
	const char *name;
	int (*write)(void *ctx, uint64_t off, void *buf, size_t n);   /* 0 or <0 */
	int (*read)(void *ctx, uint64_t off, void *buf, size_t n);
	int (*flush)(void *ctx);      /* after each random write (and the sequential ones) */
	void (*cold)(void);           /* empty caches before reading (NULL: none) */
	void *ctx;
};

static void large(const struct layer *l)
{
	uint64_t bytes = (uint64_t)mib << 20;
	uint8_t *buf = malloc(1 << 20);
	memset(buf, 0x5a, 1 << 20);
	char phase[40];
	snprintf(phase, sizeof phase, "%s large", l->name);
	exo_phase(phase, 0);
	uint64_t t0 = now();
	for (uint64_t off = 0; off < bytes; off += 1 << 20)
		if (l->write(l->ctx, off, buf, 1 << 20) < 0)
			die("sequential write");
	if (l->flush(l->ctx) < 0)
		die("flush");
	uint64_t t1 = now();
	if (l->cold)
		l->cold();
	uint64_t t2 = now();
	for (uint64_t off = 0; off < bytes; off += 1 << 20)
		if (l->read(l->ctx, off, buf, 1 << 20) < 0)
			die("sequential read");
	uint64_t t3_seq = now();
	uint64_t blocks = bytes / 4096, s = seed;
	uint64_t t3;
	if (l->cold)
		l->cold();
	t3 = now();
	for (long i = 0; i < rops; i++)
		if (l->read(l->ctx, (rnd_next(&s) % blocks) * 4096, buf, 4096) < 0)
			die("random read");
	uint64_t t4 = now();
	if (l->write == u_write) {
		if (fs_persist(fd_big, LIBFS_P_WRITETHROUGH) < 0)
			die("write-through");
		u_through = 1;
	}
	for (long i = 0; i < rops; i++) {
		if (l->write(l->ctx, (rnd_next(&s) % blocks) * 4096, buf, 4096) < 0 || l->flush(l->ctx) < 0)
			die("random write");
	}
	uint64_t t5 = now();
	exo_phase(NULL, 0);
	printf("fsbench: %s large sequential write %ld MiB = %.2f MB/s\n", l->name, mib, mbps(bytes, t1 - t0));
	printf("fsbench: %s large sequential read %ld MiB = %.2f MB/s\n", l->name, mib,
	       mbps(bytes, t3_seq - t2));
	printf("fsbench: %s large random read 4 KiB x %ld = %.3f ms/op\n", l->name, rops,
	       ms(t4 - t3) / (double)rops);
	printf("fsbench: %s large random durable write 4 KiB x %ld = %.3f ms/op\n", l->name, rops,
	       ms(t5 - t4) / (double)rops);
	free(buf);
}

/* ---- unixfs ---------------------------------------------------------------------- */

static int u_write(void *c, uint64_t off, void *b, size_t n)
{
	return pwrite(fd_big, b, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static int u_read(void *c, uint64_t off, void *b, size_t n)
{
	/* The file may have been reopened by a remount. */
	return pread(fd_big, b, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static char bigpath[300];

/* fsync, except when each write is already durable. */
static int u_flush(void *c)
{
	return u_through ? 0 : fsync(fd_big);
}

/* Empty the caches: close, remount, reopen. */
static void u_cold(void)
{
	close(fd_big);
	remount();
	fd_big = open(bigpath, O_RDWR);
	if (fd_big < 0)
		die(bigpath);
}

/* ---- one exonode, no file system ------------------------------------------------ */

struct xn {
	struct edc *c;
	struct ed_protector p;
	uint64_t start;
};

static int x_write(void *ctx, uint64_t off, void *b, size_t n)
{
	struct xn *x = ctx;
	return edc_write(x->c, &x->p, x->start + off / 512, b, n) < 0 ? -1 : 0;
}

static int x_read(void *ctx, uint64_t off, void *b, size_t n)
{
	struct xn *x = ctx;
	return edc_read(x->c, &x->p, x->start + off / 512, b, n) < 0 ? -1 : 0;
}

static int x_flush(void *ctx)
{
	struct xn *x = ctx;
	return edc_flush(x->c, x->p.unit) < 0 ? -1 : 0;
}

/* ---- the raw path ------------------------------------------------------------------ */

static int raw_io1(int op, struct xn *x, uint64_t off, void *b, size_t n)
{
	volatile int32_t word;
	struct raw_req q;
	raw_req_make(&q, op, x->p.unit, op == RAW_FLUSH ? 0 : x->start + off / 512, b,
	             op == RAW_FLUSH ? 0 : (uint32_t)n, &word);
	if (raw_submit(&q, 1) != 1)
		return -1;
	while (word == RAW_PENDING)
		raw_wait(0);
	return word < 0 ? -1 : 0;
}

static int r_write(void *ctx, uint64_t off, void *b, size_t n) { return raw_io1(RAW_WRITE, ctx, off, b, n); }
static int r_read(void *ctx, uint64_t off, void *b, size_t n) { return raw_io1(RAW_READ, ctx, off, b, n); }
static int r_flush(void *ctx) { return raw_io1(RAW_FLUSH, ctx, 0, NULL, 0); }

int main(int argc, char **argv)
{
	int i = 1;
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		long v = atol(argv[i + 1]);
		switch (argv[i][1]) {
		case 'n': nfiles = v; break;
		case 's': fsize = v; break;
		case 'm': mib = v; break;
		case 'r': rops = v; break;
		default: i = argc; break;
		}
	}
	if (i != argc - 1 || nfiles <= 0 || fsize <= 0 || mib <= 0 || rops <= 0) {
		fprintf(stderr, "usage: fsbench [-n FILES] [-s BYTES] [-m MIB] [-r OPS] DIR\n");
		return 2;
	}
	dir = argv[i];
	find_mount();
	printf("fsbench: on %s (%s at %s), disk unit 0, %s\n", dir, type, prefix,
	       raw_enabled() ? "raw path enabled" : "raw path disabled (boot with rawio=1)");

	small_files();

	/* Sequential writes are write-back with an fsync at the end; the file
	 * turns write-through (each write durable on return) just before the
	 * random writes: see large(), u_flush. */
	snprintf(bigpath, sizeof bigpath, "%s/large", dir);
	fd_big = open(bigpath, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd_big < 0)
		die(bigpath);
	struct layer ul = { "unixfs", u_write, u_read, u_flush, u_cold, NULL };
	large(&ul);
	close(fd_big);
	unlink(bigpath);
	vfs_release_idle();

	/* One exonode holding one extent of the same size. */
	struct xn x = { .c = edc_default() };
	struct edc_fm fm;
	struct capkey k;
	capkey_derive(&k, "fsbench", "bench", 5);
	if (x.c == NULL || edc_fm_open(x.c, 0, &fm) != 0) {
		fprintf(stderr, "fsbench: no exodisk\n");
		return 1;
	}
	uint64_t nsect = (uint64_t)mib << 11;
	uint64_t blk = edc_fm_find(&fm, 0, 1, 8);
	x.start = edc_fm_find(&fm, blk + 8, nsect, 8);
	struct ed_cap rc = capkey_cap(&k, 'r', blk, 0), wc = capkey_cap(&k, 'w', blk, 0);
	x.p = edc_prot_xn(0, blk, 0, &rc, &wc);
	x.p.length = 128;
	if (x.start == UINT64_MAX || edc_xn_alloc(x.c, &x.p) != 0 ||
	    edc_xn_add_extent(x.c, &x.p, 1, x.start, nsect * 512) < 0 || edc_xn_write_sync(x.c, &x.p) < 0) {
		fprintf(stderr, "fsbench: cannot set up the exonode\n");
		return 1;
	}
	struct layer xl = { "exonode", x_write, x_read, x_flush, NULL, &x };
	large(&xl);
	if (raw_enabled()) {
		/* The same sectors: they are ours, so the raw path harms nobody. */
		struct layer rl = { "raw", r_write, r_read, r_flush, NULL, &x };
		large(&rl);
	}
	edc_xn_remove(x.c, &x.p, 1);
	edc_xn_dealloc(x.c, &x.p);
	edc_xn_write_sync(x.c, &x.p);
	return 0;
}
