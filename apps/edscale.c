/*
 * edscale.c - how the exodisk's costs follow what is stored, not the disk's
 * size (issue 11): the guest side of the scaling experiment of `make bench`
 * (tools/bench/suite.py, tools/bench/scale.py) and of the numbers in
 * docs/exodisk.md section 12.
 *
 *   edscale [-u UNIT] [-n FILES] [-d PER_DIR] [-s BYTES] [-c EVERY] [-m]
 *
 * It prints one machine-readable line (EXOBENCH {...}, JSON) per finding:
 *   what=boot     the time from power-on to this program (rdtime counts from
 *                 the machine's reset), the unit's mount (time, sectors
 *                 read, log records replayed), the sectors the format wrote
 *                 if the unit was blank at this boot, kernel memory for the
 *                 unit, bindings, sectors allocated;
 * and with -n FILES, on a unixfs on the unit (made if there is none):
 *   what=create   every EVERY files, the time per file of the last EVERY
 *                 creations (a file of BYTES, in directories of PER_DIR):
 *                 elapsed (us_per_file), and without the time this program
 *                 slept in system calls (cpu_us_per_file: under ICOUNT=1 an
 *                 exact instruction count, where a sleep's length means
 *                 nothing, since the idle guest's clock jumps); the disk
 *                 requests the whole system queued meanwhile, per 1,000
 *                 files (writes, flushes); and the program's heap;
 *   what=heap     with -m, after each what=create: the heap's census
 *                 (libos/mstats.h): bytes live and idle, the size classes
 *                 holding the most, and the call sites holding the most
 *                 live bytes (addresses in this program: `addr2line -e
 *                 build/bin/edscale` names them);
 *   what=files    after FILES files and a sync: the sectors a checkpoint
 *                 then writes (ED_OP_CHECKPOINT, after one that emptied the
 *                 log before the files), the bindings, kernel memory.
 * A second boot on the same disk (without -n) measures the mount of a unit
 * holding them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libos/edc.h"
#include "libos/exo.h"
#include "libos/libfs.h"
#include "libos/mstats.h"
#include "libos/prof.h"
#include "libos/vfs.h"

static int unit;
static uint64_t hz;
static int census;                  /* -m */

static void emit(const char *fmt, ...)
{
	char line[768];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(line, sizeof line, "EXOBENCH {");
	n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 3)
		n = (int)sizeof line - 3;
	line[n++] = '}';
	line[n++] = '\n';
	fflush(stdout);
	if (write(1, line, (size_t)n) != n)
		fprintf(stderr, "edscale: lost an EXOBENCH line\n");
}

static uint64_t ms(uint64_t ticks)
{
	return hz ? ticks * 1000 / hz : 0;
}

static uint64_t us(uint64_t ticks)
{
	return hz ? ticks * 1000000 / hz : 0;
}

/* The heap's census after `files` files, as one what=heap line: the 8
 * classes and the 8 call sites with the most live bytes. */
static void report_heap(uint64_t files)
{
	struct malloc_census c;
	if (malloc_census(&c) < 0)
		return;
	char cls[256], sit[400];
	int nc = 0, ns = 0;
	int used[MALLOC_CLASSES] = { 0 };
	for (int k = 0; k < 8; k++) {
		int best = -1;
		for (int i = 0; i < c.nclass; i++)
			if (!used[i] && c.cls[i].live + c.cls[i].idle > 0 &&
			    (best < 0 || c.cls[i].live * c.cls[i].size > c.cls[best].live * c.cls[best].size))
				best = i;
		if (best < 0)
			break;
		used[best] = 1;
		nc += snprintf(cls + nc, sizeof cls - (size_t)nc, "%s[%u,%lu,%lu]", k ? "," : "",
		               (unsigned)c.cls[best].size, (unsigned long)c.cls[best].live,
		               (unsigned long)c.cls[best].idle);
	}
	struct malloc_site s[8];
	int n = malloc_site_list(s, 8);
	for (int k = 0; k < n && k < 8; k++)
		ns += snprintf(sit + ns, sizeof sit - (size_t)ns, "%s[\"0x%lx\",%lu,%lu,%lu]", k ? "," : "",
		               (unsigned long)s[k].pc, (unsigned long)s[k].live, (unsigned long)s[k].bytes,
		               (unsigned long)s[k].allocs);
	emit("\"bench\":\"edscale\",\"what\":\"heap\",\"files\":%lu,\"heap_kib\":%lu,\"top_kib\":%lu,"
	     "\"small_live_kib\":%lu,\"small_idle_kib\":%lu,\"large_live_kib\":%lu,\"large_idle_kib\":%lu,"
	     "\"classes\":[%s],\"sites\":[%s]",
	     (unsigned long)files, (unsigned long)(c.heap / 1024), (unsigned long)(c.top / 1024),
	     (unsigned long)(c.small_live / 1024), (unsigned long)(c.small_idle / 1024),
	     (unsigned long)(c.large_live / 1024), (unsigned long)(c.large_idle / 1024),
	     nc ? cls : "", ns ? sit : "");
}

static int usage(FILE *f)
{
	fprintf(f, "usage: edscale [-u UNIT] [-n FILES] [-d PER_DIR] [-s BYTES] [-c EVERY] [-m]\n"
	           "  the exodisk's boot, mount, format and memory costs on UNIT (default 0); with -n,\n"
	           "  FILES files of BYTES (default 1024) in directories of PER_DIR (default 100) on a\n"
	           "  unixfs there, the time per file every EVERY files (default FILES/10), and what a\n"
	           "  checkpoint then writes; -m adds the heap's census (size classes, call sites)\n"
	           "  every EVERY files.  Output: EXOBENCH lines (tools/bench/scale.py reads them)\n");
	return f == stdout ? 0 : 2;
}

static uint64_t number(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0') {
		fprintf(stderr, "edscale: %s: not a number\n", s);
		exit(2);
	}
	return v;
}

static void report_unit(const char *what, const struct ed_unit_info *u)
{
	emit("\"bench\":\"edscale\",\"what\":\"%s\",\"unit\":%d,\"sectors\":%lu,\"boot_ms\":%lu,"
	     "\"mount_us\":%lu,\"mount_sectors\":%lu,\"replayed\":%lu,\"format_sectors\":%lu,"
	     "\"kmem_kib\":%lu,\"bindings\":%lu,\"allocated\":%lu,\"meta_sectors\":%lu,"
	     "\"checkpoints\":%lu,\"ckpt_sectors\":%lu",
	     what, unit, (unsigned long)u->nsectors, (unsigned long)ms(exo_time()),
	     (unsigned long)us(u->mount_ticks), (unsigned long)u->mount_reads,
	     (unsigned long)u->replayed, (unsigned long)u->format_sectors,
	     (unsigned long)(u->kmem_bytes / 1024), (unsigned long)u->bindings,
	     (unsigned long)u->allocated, (unsigned long)u->meta_sectors,
	     (unsigned long)u->checkpoints, (unsigned long)u->ckpt_sectors);
}

static int fail(const char *what, const char *path)
{
	printf("edscale: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

/* A unixfs on the unit, mounted at /s: the one there, or a new one. */
static int unixfs_here(void)
{
	char opts[32];
	snprintf(opts, sizeof opts, "unit=%d", unit);
	if (vfs_mount("/s", "unixfs", opts, 1) == 0)
		return 0;
	const struct libfs_ops *t = libfs_type("unixfs");
	uint64_t sb;
	int r = t != NULL && t->mkfs != NULL ? t->mkfs(opts, &sb) : -ENODEV;
	if (r < 0) {
		printf("edscale: mkfs unixfs %s: %s\n", opts, strerror(-r));
		return 1;
	}
	r = vfs_mount("/s", "unixfs", opts, 1);
	if (r < 0) {
		printf("edscale: mount unixfs %s: %s\n", opts, strerror(-r));
		return 1;
	}
	return 0;
}

/* The start of one file's creation, for tools/memtouch (a QEMU plugin that
 * counts the memory each file touches): an instruction that does nothing
 * (a RISC-V hint for custom use) and that the plugin watches for. */
static inline void mark_unit(void)
{
#ifdef __riscv
	__asm__ volatile("slti x0, x0, 0x6d5");
#endif
}

static int files(struct edc *c, uint64_t n, uint64_t per_dir, uint64_t bytes, uint64_t every)
{
	if (unixfs_here())
		return 1;
	sync();
	int32_t r = edc_checkpoint(c, unit);
	if (r != 0) {
		printf("edscale: checkpoint: %d\n", r);
		return 1;
	}
	char *buf = malloc(bytes ? bytes : 1);
	if (buf == NULL)
		return 1;
	memset(buf, 0x5c, bytes);
	uint64_t t0 = exo_time(), tlast = t0;
	struct exo_counts mine, last_mine, sys_last = *exo_counts_all();
	exo_counts(&last_mine);
	uint8_t *heap0 = sbrk(0);
	char path[64];
	for (uint64_t i = 0; i < n; i++) {
		if (i % per_dir == 0) {
			snprintf(path, sizeof path, "/s/d%lu", (unsigned long)(i / per_dir));
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				return fail("mkdir", path);
		}
		snprintf(path, sizeof path, "/s/d%lu/f%lu", (unsigned long)(i / per_dir), (unsigned long)i);
		mark_unit();
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			return fail("create", path);
		if (bytes > 0 && write(fd, buf, bytes) != (ssize_t)bytes)
			return fail("write", path);
		if (close(fd) < 0)
			return fail("close", path);
		if ((i + 1) % every == 0) {
			uint64_t now = exo_time();
			exo_counts(&mine);
			const struct exo_counts *sys = exo_counts_all();
			uint64_t slept = mine.wait_time - last_mine.wait_time;
			uint64_t busy = now - tlast > slept ? now - tlast - slept : 0;
			emit("\"bench\":\"edscale\",\"what\":\"create\",\"unit\":%d,\"files\":%lu,\"per_dir\":%lu,"
			     "\"bytes\":%lu,\"every\":%lu,\"us_per_file\":%.2f,\"cpu_us_per_file\":%.2f,"
			     "\"writes_per_kfile\":%lu,\"flushes_per_kfile\":%lu,\"heap_kib\":%lu,\"elapsed_ms\":%lu",
			     unit, (unsigned long)(i + 1), (unsigned long)per_dir, (unsigned long)bytes,
			     (unsigned long)every, hz ? (double)(now - tlast) * 1e6 / (double)hz / (double)every : 0.0,
			     hz ? (double)busy * 1e6 / (double)hz / (double)every : 0.0,
			     (unsigned long)((sys->disk_writes - sys_last.disk_writes) * 1000 / every),
			     (unsigned long)((sys->disk_flushes - sys_last.disk_flushes) * 1000 / every),
			     (unsigned long)(((uint8_t *)sbrk(0) - heap0) / 1024), (unsigned long)ms(now - t0));
			if (census)
				report_heap(i + 1);
			tlast = now;
			last_mine = mine;
			sys_last = *sys;
		}
	}
	mark_unit();
	sync();
	uint64_t tsync = exo_time();
	struct ed_unit_info before, after;
	edc_unit_info(c, unit, &before);
	r = edc_checkpoint(c, unit);
	edc_unit_info(c, unit, &after);
	if (r != 0) {
		printf("edscale: checkpoint: %d\n", r);
		return 1;
	}
	struct libfs_statfs st;
	uint64_t nfiles = vfs_statfs("/s", &st) == 0 ? st.files : 0;
	emit("\"bench\":\"edscale\",\"what\":\"files\",\"unit\":%d,\"sectors\":%lu,\"files\":%lu,"
	     "\"per_dir\":%lu,\"bytes\":%lu,\"create_ms\":%lu,\"ckpt_sectors\":%lu,\"ckpt_log_sectors\":%lu,"
	     "\"bindings\":%lu,\"kmem_kib\":%lu,\"statfs_files\":%lu",
	     unit, (unsigned long)after.nsectors, (unsigned long)n, (unsigned long)per_dir,
	     (unsigned long)bytes, (unsigned long)ms(tsync - t0),
	     (unsigned long)(after.ckpt_sectors - before.ckpt_sectors), (unsigned long)before.log_used,
	     (unsigned long)after.bindings, (unsigned long)(after.kmem_bytes / 1024),
	     (unsigned long)nfiles);
	printf("edscale: %lu files, a checkpoint after them wrote %lu sectors\n", (unsigned long)n,
	       (unsigned long)(after.ckpt_sectors - before.ckpt_sectors));
	free(buf);
	return vfs_umount("/s") < 0;
}

int main(int argc, char **argv)
{
	uint64_t n = 0, per_dir = 100, bytes = 1024, every = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
			return usage(stdout);
		if (strcmp(argv[i], "-m") == 0) {
			census = 1;
			continue;
		}
		if (i + 1 >= argc)
			return usage(stderr);
		if (strcmp(argv[i], "-u") == 0)
			unit = (int)number(argv[++i]);
		else if (strcmp(argv[i], "-n") == 0)
			n = number(argv[++i]);
		else if (strcmp(argv[i], "-d") == 0)
			per_dir = number(argv[++i]);
		else if (strcmp(argv[i], "-s") == 0)
			bytes = number(argv[++i]);
		else if (strcmp(argv[i], "-c") == 0)
			every = number(argv[++i]);
		else
			return usage(stderr);
	}
	if (per_dir == 0)
		per_dir = 1;
	if (every == 0)
		every = n >= 10 ? n / 10 : 1;
	hz = exo_kinfo()->timebase_hz;
	if (census)
		malloc_sites(1);
	struct edc *c = edc_default();
	struct ed_unit_info u;
	int64_t r = edc_unit_info(c, unit, &u);
	emit("\"bench\":\"meta\",\"exp\":\"edscale\",\"dev\":\"virtio\",\"unit\":%d,\"runs\":1,"
	     "\"timebase_hz\":%lu", unit, (unsigned long)hz);
	if (r < 0) {
		printf("edscale: no exodisk on unit %d (%s)\n", unit, ed_strerror(r) ? ed_strerror(r) : "?");
		return 1;
	}
	report_unit("boot", &u);
	printf("edscale: unit %d, %lu sectors: booted in %lu ms, mount %lu us reading %lu sectors, "
	       "%lu KiB of kernel memory\n", unit, (unsigned long)u.nsectors, (unsigned long)ms(exo_time()),
	       (unsigned long)us(u.mount_ticks), (unsigned long)u.mount_reads,
	       (unsigned long)(u.kmem_bytes / 1024));
	if (n > 0)
		return files(c, n, per_dir, bytes, every);
	return 0;
}
