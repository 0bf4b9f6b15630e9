/*
 * lxbench.c - the Linux side of the comparison (docs/linux-baseline.md): a
 * static riscv64 Linux program, run by the guest's /init (tools/linux/init)
 * under Debian's kernel, that does the work `exobench` does on our side and
 * prints the same EXOBENCH lines.
 *
 *   lxbench -t FS [-M DIR] [-r RUNS] [-x small|large|all] [-n FILES -s BYTES]
 *           [-d DIRS] [-m MIB] [-k OPS]
 *       the file-system workload (apps/exobench/fswork.c: the same source
 *       `exobench fs` runs) on the file system FS mounted at DIR (/mnt);
 *       before every phase, not timed: sync() and drop_caches = 3 (page
 *       cache, dentries and inodes), so the phase starts cold
 *   lxbench -t FS [-M DIR] -F FILES [-P PER_DIR] [-E EVERY]
 *       many files (issue 11), as `edscale -n FILES -d PER_DIR -c EVERY`
 *       does on our side (apps/edscale.c): FILES files of 1 KiB in
 *       directories of PER_DIR (default 100), never a sync until the end;
 *       a what=create line every EVERY files (default FILES/10) with the
 *       elapsed and CPU time per file of the window, the disk's writes and
 *       flushes per 1,000 files, and the kernel's memory (slabs: dentries
 *       and inodes; page cache)
 *   lxbench -t raw [-D DEV] (the same options)
 *       the raw device DEV (/dev/vda) with O_DIRECT, as our raw path
 *       (`exobench smallfile/largefile -o raw -c`): small files at the
 *       sectors the exobench organizations use (apps/exobench/layout.h),
 *       each written or read in one request, the write phase ended by a
 *       device flush (fsync of the device); the large file at the sectors
 *       largefile uses, 64 KB sequential and 4 KB random requests in the
 *       same orders, each writing phase ended by a flush.  Nothing to
 *       allocate or deallocate: those phases take no time, as ours.
 *
 * Times come from CLOCK_MONOTONIC, which on riscv64 Linux reads the same
 * 10 MHz time counter exobench reads with rdtime.
 *
 * Build: riscv64-linux-gnu-gcc -static -O2 -D_GNU_SOURCE -I. tools/linux/lxbench.c
 *        apps/exobench/common.c apps/exobench/fswork.c   (tools/linux/linux.mk)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "apps/exobench/common.h"
#include "apps/exobench/fswork.h"
#include "apps/exobench/layout.h"
#include "kernel/uapi/exodisk.h"

#define SEQ_BYTES  (64u * 1024)
#define RAND_BYTES (4u * 1024)
#define SECT       512u
/* Where the raw runs' areas start: past what a partition table or our
 * exodisk's own metadata would take, like the exobench areas. */
#define RAW_START  8192u

static const char *fs_type, *mnt = "/mnt", *devpath = "/dev/vda";

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Everything durable, then the page cache, dentries and inodes dropped. */
static long cold(void)
{
	sync();
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0)
		return -errno;
	long r = write(fd, "3\n", 2) == 2 ? 0 : -errno;
	close(fd);
	return r;
}

static void die(const char *what)
{
	printf("lxbench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The mount's options, as /proc/mounts shows them. */
static void mount_opts(char *out, size_t n)
{
	snprintf(out, n, "?");
	FILE *f = fopen("/proc/mounts", "r");
	char dev[256], dir[256], type[64], opts[512];
	while (f != NULL && fscanf(f, "%255s %255s %63s %511s %*d %*d", dev, dir, type, opts) == 4)
		if (strcmp(dir, mnt) == 0)
			snprintf(out, n, "%s", opts);
	if (f != NULL)
		fclose(f);
}

/* The first line of a sysfs file, without its newline ("?" if unreadable). */
static void sysfs(const char *path, char *out, size_t n)
{
	snprintf(out, n, "?");
	FILE *f = fopen(path, "r");
	if (f != NULL && fgets(out, (int)n, f) != NULL)
		out[strcspn(out, "\n")] = 0;
	if (f != NULL)
		fclose(f);
}

static void meta(const struct fw_args *a)
{
	struct utsname u;
	struct timespec res;
	char opts[512] = "", sched[128], wcache[64];
	uname(&u);
	clock_getres(CLOCK_MONOTONIC, &res);
	if (strcmp(fs_type, "raw") != 0)
		mount_opts(opts, sizeof opts);
	sysfs("/sys/block/vda/queue/scheduler", sched, sizeof sched);
	sysfs("/sys/block/vda/queue/write_cache", wcache, sizeof wcache);
	emit("\"bench\":\"meta\",\"exp\":\"linux\",\"os\":\"linux\",\"fs\":\"%s\",\"kernel\":\"%s\",\"dev\":\"virtio-blk\","
	     "\"unit\":0,\"runs\":%d,\"resolution_ns\":%ld,\"mount_options\":\"%s\",\"scheduler\":\"%s\","
	     "\"write_cache\":\"%s\"",
	     fs_type, u.release, a->runs, (long)res.tv_nsec, opts, sched, wcache);
}

/* ---- the raw device ------------------------------------------------------------ */

static int dev;
static uint8_t *buf;

static void xfer(int write, uint64_t sector, uint32_t bytes)
{
	ssize_t r = write ? pwrite(dev, buf, bytes, (off_t)(sector * SECT)) : pread(dev, buf, bytes, (off_t)(sector * SECT));
	if (r != (ssize_t)bytes)
		die(write ? "pwrite" : "pread");
}

static void flush(void)
{
	if (fsync(dev) < 0)
		die("fsync (device flush)");
}

static void raw_small(int runs, int nfiles, uint32_t bytes)
{
	static const char *const name[3] = { "write", "read", "dealloc" };
	struct layout L = { .start = RAW_START, .nfiles = nfiles, .fsect = (bytes + SECT - 1) / SECT };
	L.group = (int)((ED_SECTOR - ED_XNBLK_HDR_BYTES) / (ED_XN_HDR_BYTES + ED_XN_EXTENT_BYTES));
	uint32_t n = L.fsect * SECT;
	printf("raw: %d files of %u bytes (%u sectors, a sector skipped every %d files) from sector %u\n", nfiles,
	       bytes, L.fsect, L.group, RAW_START);
	for (int run = 0; run < runs; run++)
		for (int ph = 0; ph < 3; ph++) {
			if (cold() < 0)
				die("drop_caches");
			uint64_t tag = 0x5f11e5ull + (uint64_t)run, t0 = now_ns();
			for (int i = 0; i < nfiles && ph < 2; i++) {
				if (ph == 0)
					stamp_block(buf, tag, (uint64_t)i);
				xfer(ph == 0, lay_data(&L, i), n);
				if (ph == 1 && !stamp_ok(buf, tag, (uint64_t)i)) {
					printf("raw: file %d read back wrong\n", i);
					exit(1);
				}
			}
			if (ph == 0)
				flush();
			uint64_t ns = now_ns() - t0;
			emit("\"bench\":\"smallfile\",\"os\":\"linux\",\"dev\":\"virtio-blk\",\"unit\":0,\"files\":%d,"
			     "\"bytes\":%u,\"org\":\"raw\",\"phase\":\"%s\",\"run\":%d,\"ns\":%lu,\"ns_per_file\":%lu,\"cold\":1,"
			     "\"cache_left\":0", nfiles, bytes, name[ph], run, (unsigned long)ns,
			     (unsigned long)(ns / (uint64_t)nfiles));
			char a[24];
			printf("  run %d %-8s %s ms/file\n", run + 1, name[ph], fmt_ms(a, sizeof a, ns / (uint64_t)nfiles));
		}
}

static void raw_large(int runs, long mib, long kops)
{
	static const char *const name[6] = { "alloc", "seqwrite", "seqread", "randwrite", "randread", "dealloc" };
	uint64_t nblocks = (uint64_t)mib * (1 << 20) / RAND_BYTES, data = RAW_START + 1;
	uint64_t ops = kops > 0 && (uint64_t)kops < nblocks ? (uint64_t)kops : nblocks;
	uint32_t *order = malloc(nblocks * sizeof *order);
	uint8_t *wrand = malloc(nblocks);
	if (order == NULL || wrand == NULL)
		die("malloc");
	printf("raw: one file of %ld MiB from sector %lu; random phases: %lu blocks\n", mib, (unsigned long)data,
	       (unsigned long)ops);
	for (int run = 0; run < runs; run++) {
		uint64_t tag = 0x1a26e000ull + (uint64_t)run * 2, rtag = tag + 1;
		memset(wrand, 0, nblocks);
		for (int ph = 0; ph < 6; ph++) {
			if (ph == 3 || ph == 4) {
				uint64_t seed = large_order_seed(run, ph);
				shuffle(order, (uint32_t)nblocks, &seed);
			}
			if (cold() < 0)
				die("drop_caches");
			uint64_t moved = 0, nops = 0, t0 = now_ns();
			if (ph == 1 || ph == 2) {
				for (uint64_t off = 0; off < nblocks * RAND_BYTES; off += SEQ_BYTES, nops++) {
					uint32_t n = nblocks * RAND_BYTES - off < SEQ_BYTES ? (uint32_t)(nblocks * RAND_BYTES - off)
					                                                  : SEQ_BYTES;
					for (uint32_t o = 0; ph == 1 && o < n; o += RAND_BYTES)
						stamp_block(buf + o, tag, (off + o) / RAND_BYTES);
					xfer(ph == 1, data + off / SECT, n);
					for (uint32_t o = 0; ph == 2 && o < n; o += RAND_BYTES) {
						uint64_t k = (off + o) / RAND_BYTES;
						if (!stamp_ok(buf + o, wrand[k] ? rtag : tag, k)) {
							printf("raw: block %lu read back wrong\n", (unsigned long)k);
							exit(1);
						}
					}
					moved += n;
				}
			} else if (ph == 3 || ph == 4) {
				for (uint64_t i = 0; i < ops; i++, nops++) {
					uint64_t k = order[i];
					if (ph == 3)
						stamp_block(buf, rtag, k);
					xfer(ph == 3, data + k * (RAND_BYTES / SECT), RAND_BYTES);
					if (ph == 4 && !stamp_ok(buf, wrand[k] ? rtag : tag, k)) {
						printf("raw: block %lu read back wrong\n", (unsigned long)k);
						exit(1);
					}
					moved += RAND_BYTES;
				}
			}
			if (ph == 1 || ph == 3)
				flush();
			uint64_t ns = now_ns() - t0;
			if (ph == 3)
				for (uint64_t i = 0; i < ops; i++)
					wrand[order[i]] = 1;
			emit("\"bench\":\"largefile\",\"os\":\"linux\",\"dev\":\"virtio-blk\",\"org\":\"raw\",\"phase\":\"%s\","
			     "\"run\":%d,\"ns\":%lu,\"bytes\":%lu,\"ops\":%lu,\"file_bytes\":%lu,\"cold\":1,\"cache_left\":0",
			     name[ph], run, (unsigned long)ns, (unsigned long)moved, (unsigned long)nops,
			     (unsigned long)(nblocks * RAND_BYTES));
			char a[24];
			if (moved > 0)
				printf("  run %d %-9s %s MB/s\n", run + 1, name[ph], fmt_milli(a, sizeof a, moved * 1000000 / (ns ? ns : 1)));
		}
	}
	free(order);
	free(wrand);
}

/* ---- many files ------------------------------------------------------------------- */

/* The disk's write and flush requests so far (/sys/block/vda/stat: the
 * 5th field and, since Linux 5.5, the 16th). */
static void disk_counts(uint64_t *writes, uint64_t *flushes)
{
	unsigned long long f[17] = { 0 };
	FILE *fp = fopen("/sys/block/vda/stat", "r");
	int n = 0;
	while (fp != NULL && n < 17 && fscanf(fp, "%llu", &f[n]) == 1)
		n++;
	if (fp != NULL)
		fclose(fp);
	*writes = f[4];
	*flushes = n >= 16 ? f[15] : 0;
}

/* A line of /proc/meminfo, in KiB (0 if missing). */
static uint64_t meminfo(const char *key)
{
	char line[128];
	unsigned long long v = 0;
	size_t k = strlen(key);
	FILE *fp = fopen("/proc/meminfo", "r");
	while (fp != NULL && fgets(line, sizeof line, fp) != NULL)
		if (strncmp(line, key, k) == 0 && line[k] == ':') {
			sscanf(line + k + 1, "%llu", &v);
			break;
		}
	if (fp != NULL)
		fclose(fp);
	return v;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int many_files(long n, long per_dir, long every)
{
	char buf[1024], path[256];
	memset(buf, 0x5c, sizeof buf);
	if (cold() < 0)
		die("drop_caches");
	uint64_t t0 = now_ns(), tlast = t0, clast = cpu_ns(), w0, f0;
	disk_counts(&w0, &f0);
	for (long i = 0; i < n; i++) {
		if (i % per_dir == 0) {
			snprintf(path, sizeof path, "%s/d%ld", mnt, i / per_dir);
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				die(path);
		}
		snprintf(path, sizeof path, "%s/d%ld/f%ld", mnt, i / per_dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die(path);
		if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
			die("write");
		if (close(fd) < 0)
			die("close");
		if ((i + 1) % every == 0) {
			uint64_t now = now_ns(), c = cpu_ns(), w, f;
			disk_counts(&w, &f);
			emit("\"bench\":\"edscale\",\"os\":\"linux\",\"fs\":\"%s\",\"what\":\"create\",\"files\":%ld,"
			     "\"per_dir\":%ld,\"bytes\":%zu,\"every\":%ld,\"us_per_file\":%.2f,\"cpu_us_per_file\":%.2f,"
			     "\"writes_per_kfile\":%lu,\"flushes_per_kfile\":%lu,\"slab_kib\":%lu,\"cached_kib\":%lu,"
			     "\"used_kib\":%lu,\"elapsed_ms\":%lu",
			     fs_type, i + 1, per_dir, sizeof buf, every, (double)(now - tlast) / 1e3 / (double)every,
			     (double)(c - clast) / 1e3 / (double)every, (unsigned long)((w - w0) * 1000 / (uint64_t)every),
			     (unsigned long)((f - f0) * 1000 / (uint64_t)every), (unsigned long)meminfo("Slab"),
			     (unsigned long)meminfo("Cached"),
			     (unsigned long)(meminfo("MemTotal") - meminfo("MemFree")),
			     (unsigned long)((now - t0) / 1000000));
			tlast = now;
			clast = c;
			w0 = w;
			f0 = f;
		}
	}
	uint64_t ts = now_ns();
	sync();
	emit("\"bench\":\"edscale\",\"os\":\"linux\",\"fs\":\"%s\",\"what\":\"files\",\"files\":%ld,"
	     "\"per_dir\":%ld,\"bytes\":%zu,\"create_ms\":%lu,\"sync_ms\":%lu",
	     fs_type, n, per_dir, sizeof buf, (unsigned long)((ts - t0) / 1000000),
	     (unsigned long)((now_ns() - ts) / 1000000));
	printf("lxbench: %ld files in %s\n", n, mnt);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: lxbench -t FS|raw [-M DIR] [-D DEV] " FW_OPTIONS "\n"
	                "       lxbench -t FS [-M DIR] -F FILES [-P PER_DIR] [-E EVERY]\n");
	exit(2);
}

static long count(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == 0 || *end != 0 || v <= 0)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct fw_args a;
	fw_defaults(&a);
	long many = 0, per_dir = 100, every = 0;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "-t") == 0)
			fs_type = argv[i + 1];
		else if (strcmp(argv[i], "-M") == 0)
			mnt = argv[i + 1];
		else if (strcmp(argv[i], "-D") == 0)
			devpath = argv[i + 1];
		else if (strcmp(argv[i], "-F") == 0)
			many = count(argv[i + 1]);
		else if (strcmp(argv[i], "-P") == 0)
			per_dir = count(argv[i + 1]);
		else if (strcmp(argv[i], "-E") == 0)
			every = count(argv[i + 1]);
		else if (fw_option(&a, argv[i], argv[i + 1]) != 1)
			usage();
	}
	if (fs_type == NULL || fw_check(&a) != 0)
		usage();
	meta(&a);
	if (many > 0) {
		if (strcmp(fs_type, "raw") == 0)
			usage();
		return many_files(many, per_dir, every ? every : (many >= 10 ? many / 10 : 1));
	}
	if (strcmp(fs_type, "raw") != 0) {
		struct fw_sys sys = {
			.os = "linux", .fs = fs_type, .dev = "virtio-blk", .unit = 0, .root = mnt,
			.cold = cold, .now_ns = now_ns,
		};
		return fw_run(&sys, &a);
	}
	dev = open(devpath, O_RDWR | O_DIRECT);
	if (dev < 0)
		die(devpath);
	size_t most = SEQ_BYTES;
	for (int i = 0; i < a.nsizes; i++)
		most = (size_t)a.bytes[i] + SECT > most ? (size_t)a.bytes[i] + SECT : most;
	if (posix_memalign((void **)&buf, 4096, most) != 0)
		die("posix_memalign");
	int do_small = strcmp(a.which, "small") == 0 || strcmp(a.which, "all") == 0;
	int do_large = strcmp(a.which, "large") == 0 || strcmp(a.which, "all") == 0;
	for (int i = 0; do_small && i < a.nsizes; i++)
		raw_small(a.runs, a.nfiles[i], (uint32_t)a.bytes[i]);
	if (do_large)
		raw_large(a.runs, a.mib, a.kops);
	close(dev);
	return 0;
}
