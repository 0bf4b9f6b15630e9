/*
 * fs.c - exobench fs: the file-system rows of thesis Tables A.1-A.3 (the
 * thesis measured the Ultrix file system there), on any library file
 * system linked into exobench, by name: the small-file and large-file
 * work of fswork.h through the POSIX layer, on a file system mounted on
 * the benchmark disk.  The same workload runs on Linux file systems in the
 * Linux comparison (tools/linux/, docs/linux-baseline.md).
 *
 *   exobench fs -t TYPE [-u UNIT] [-o OPTIONS] [-L STACKS] [-r RUNS] [-x small|large|all]
 *               [-n FILES -s BYTES] [-d DIRS] [-m MIB] [-k OPS]
 *   exobench unixfs ...     the same as exobench fs -t unixfs ...
 *
 * -L measures stacks of layers over the file system (docs/stacking.md):
 * STACKS is a comma-separated list of stacks, each the layers from the
 * bottom up joined by '+', with NAME*K for K of the same and "none" for
 * the file system alone - e.g. -L none,null,null*10,crypt.  Each run does
 * the whole workload once on every stack in turn, so the stacks share the
 * boot's conditions (interleaved); records name the stack as their "org"
 * ("null*10/unixfs").  crypt is given a fixed benchmark key; NAME:OPT
 * adds one mount option to a layer (crypt:cipher=chacha20).
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
#define MAXLAYERS 12

static const char *type;
static char opts[256];

/* The mounts of the stack being measured, bottom first; the top is at
 * PREFIX. */
static struct { char prefix[16], type[32], opts[96]; } stk[MAXLAYERS + 1];
static int nstk;

static int stack_down(void)
{
	for (int i = nstk - 1; i >= 0; i--) {
		int r = vfs_umount(stk[i].prefix);
		if (r < 0)
			return r;
	}
	return 0;
}

static int stack_up(void)
{
	for (int i = 0; i < nstk; i++) {
		int r = vfs_mount(stk[i].prefix, stk[i].type, i == 0 ? opts : stk[i].opts, 1);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Parse one stack ("null+trace", "null*10", "none") over the file system
 * into stk; its name for the records into label.  0, or -1. */
static int stack_parse(const char *spec, char *label, size_t lsize)
{
	char names[MAXLAYERS][24], extra[MAXLAYERS][40];
	int n = 0;
	const char *p = spec;
	while (strcmp(spec, "none") != 0 && *p) {
		size_t len = strcspn(p, "+");
		char one[24];
		if (len == 0 || len >= sizeof one)
			return -1;
		memcpy(one, p, len);
		one[len] = 0;
		char *star = strchr(one, '*');
		long k = 1;
		if (star != NULL) {
			*star = 0;
			k = strtol(star + 1, NULL, 10);
		}
		/* NAME:OPTION passes one more mount option: crypt:cipher=chacha8 */
		char *colon = strchr(one, ':');
		if (colon != NULL)
			*colon++ = 0;
		if (k < 1 || n + k > MAXLAYERS || strlen(one) >= sizeof names[0] || libfs_type(one) == NULL)
			return -1;
		while (k-- > 0) {
			snprintf(extra[n], sizeof extra[n], "%s%s", colon ? "," : "", colon ? colon : "");
			strcpy(names[n++], one);
		}
		p += len;
		if (*p == '+')
			p++;
	}
	nstk = n + 1;
	snprintf(stk[0].prefix, sizeof stk[0].prefix, "%s", n ? "/xbase" : PREFIX);
	snprintf(stk[0].type, sizeof stk[0].type, "%s", type);
	for (int i = 1; i <= n; i++) {
		if (i == n)
			snprintf(stk[i].prefix, sizeof stk[i].prefix, "%s", PREFIX);
		else
			snprintf(stk[i].prefix, sizeof stk[i].prefix, "/xl%d", i);
		strcpy(stk[i].type, names[i - 1]);
		int len = snprintf(stk[i].opts, sizeof stk[i].opts, "over=%s%s%.39s", stk[i - 1].prefix,
		                   strcmp(names[i - 1], "crypt") == 0 ? ",key=exobench-stack-secret" : "",
		                   extra[i - 1]);
		if (len < 0 || (size_t)len >= sizeof stk[i].opts)
			return -1;
	}
	if (n == 0)
		snprintf(label, lsize, "%s", type);
	else
		snprintf(label, lsize, "%s/%s", spec, type);
	return 0;
}

static long cold(void)
{
	int r = stack_down();
	if (r == 0)
		r = stack_up();
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
	const char *o = NULL, *stacks = NULL;
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
		else if (strcmp(opt, "-L") == 0)
			stacks = val;
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
	char label[64];
	stack_parse("none", label, sizeof label);
	int r = stack_up();
	if (r < 0) {
		printf("fs: mount -t %s %s on %s: %s%s\n", type, opts, PREFIX, strerror(-r),
		       r == -ENODEV || r == -ENOENT ? " (make one first: mkfs -t TYPE OPTIONS)" : "");
		return 1;
	}
	emit_meta(type, a.runs);
	struct fw_sys sys = {
		.os = "exodisk", .fs = label, .dev = B.dev, .unit = unit, .root = PREFIX,
		.cold = cold, .now_ns = now_ns, .phase = exo_phase,
	};
	if (stacks == NULL) {
		if (fw_run(&sys, &a) != 0)
			return 1;
	} else {
		/* Every stack once per run, in turn. */
		if ((r = stack_down()) < 0) {
			printf("fs: unmount: %s\n", strerror(-r));
			return 1;
		}
		int runs = a.runs;
		a.runs = 1;
		for (int run = 0; run < runs; run++) {
			for (const char *p = stacks; *p; p += *p == ',') {
				char spec[64];
				size_t len = strcspn(p, ",");
				snprintf(spec, sizeof spec, "%.*s", (int)len, p);
				p += len;
				if (stack_parse(spec, label, sizeof label) < 0) {
					printf("fs: -L %s: not a stack of layers this program has\n", spec);
					return 1;
				}
				printf("fs: run %d of %d: %s\n", run + 1, runs, label);
				if ((r = stack_up()) < 0) {
					printf("fs: mounting %s: %s\n", label, strerror(-r));
					return 1;
				}
				if (fw_run(&sys, &a) != 0)
					return 1;
				if (run + 1 < runs || *p)
					stack_down();
			}
		}
	}
	r = stack_down();
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
