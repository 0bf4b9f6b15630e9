/*
 * fs.c - exobench fs: the file-system rows of thesis Tables A.1-A.3 (the
 * thesis measured the Ultrix file system there), on any library file
 * system linked into exobench, by name: the small-file and large-file
 * work of fswork.h through the POSIX layer, on a file system mounted on
 * the benchmark disk.  The same workload runs on Linux file systems in the
 * Linux comparison (tools/linux/, docs/linux-baseline.md).
 *
 *   exobench fs -t TYPE [-u UNIT] [-o OPTIONS] [-r RUNS] [-x small|large|all]
 *               [-n FILES -s BYTES] [-d DIRS] [-m MIB] [-k OPS]
 *   exobench unixfs ...     the same as exobench fs -t unixfs ...
 *
 * TYPE is a libFS name (libfs_type: unixfs, kvfs, ...); OPTIONS its mount
 * options (default unit=UNIT).  If the unit holds no such file system for
 * the development secret, one is made first with the libFS's own mkfs
 * (struct libfs_ops); one without a mkfs must have been made already.
 *
 * Every phase starts cold: the file system is unmounted (which makes
 * everything durable) and mounted again, so the program's own caches are
 * empty, and the exodisk cache is emptied of the unit's entries
 * (ED_OP_DROP_CACHE), so no cache above the device holds the files' data
 * or metadata - as Linux's side drops its page, dentry and inode caches.
 * No control over layout: the file system places everything itself.  It
 * waits as every library client does: sleeping in ED_OP_POLL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/exobench/fswork.h"
#include "libos/exo.h"
#include "libos/prof.h"
#include "libos/vfs.h"

#define PREFIX "/xb"

static const char *type;
static char opts[256];

static long cold(void)
{
	int r = vfs_umount(PREFIX);
	if (r == 0)
		r = vfs_mount(PREFIX, type, opts, 1);
	if (r < 0)
		return r;
	int64_t left = bench_cold();
	return left < 0 ? -edc_errno(left) : (long)left;
}

static uint64_t now_ns(void)
{
	return exo_time_to_ns(exo_time());
}

static void usage(void)
{
	fprintf(stderr, "usage: exobench fs -t TYPE [-u UNIT] [-o OPTIONS] " FW_OPTIONS "\n");
	exit(2);
}

static int run(int argc, char **argv, const char *fixed_type)
{
	int unit = 0;
	const char *o = NULL;
	struct fw_args a;
	fw_defaults(&a);
	type = fixed_type;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		const char *opt = argv[i], *val = argv[i + 1];
		if (strcmp(opt, "-t") == 0 && fixed_type == NULL)
			type = val;
		else if (strcmp(opt, "-u") == 0)
			unit = (int)arg_num(val, usage);
		else if (strcmp(opt, "-o") == 0)
			o = val;
		else if (fw_option(&a, opt, val) != 1)
			usage();
	}
	if (type == NULL || fw_check(&a) != 0)
		usage();
	const struct libfs_ops *ops = libfs_type(type);
	if (ops == NULL) {
		printf("fs: %s: no such library file system in this program\n", type);
		return 1;
	}
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("fs: unit %d: %s\n", unit, err);
		return 1;
	}
	if (o != NULL)
		snprintf(opts, sizeof opts, "%s", o);
	else
		snprintf(opts, sizeof opts, "unit=%d", unit);
	if (ops->mkfs != NULL) {
		uint64_t sb;
		int r = ops->mkfs(opts, &sb);
		if (r < 0 && r != -EEXIST) {
			printf("fs: mkfs -t %s %s: %s\n", type, opts, strerror(-r));
			return 1;
		}
	}
	int r = vfs_mount(PREFIX, type, opts, 1);
	if (r < 0) {
		printf("fs: mount -t %s %s on %s: %s%s\n", type, opts, PREFIX, strerror(-r),
		       r == -ENODEV || r == -ENOENT ? " (make one first: mkfs -t TYPE OPTIONS)" : "");
		return 1;
	}
	emit_meta(type, a.runs);
	struct fw_sys sys = {
		.os = "exodisk", .fs = type, .dev = B.dev, .unit = unit, .root = PREFIX,
		.cold = cold, .now_ns = now_ns, .phase = exo_phase,
	};
	if (fw_run(&sys, &a) != 0)
		return 1;
	r = vfs_umount(PREFIX);
	if (r < 0) {
		printf("fs: unmount: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}

int fs_main(int argc, char **argv)
{
	return run(argc, argv, NULL);
}

int unixfs_main(int argc, char **argv)
{
	return run(argc, argv, "unixfs");
}
