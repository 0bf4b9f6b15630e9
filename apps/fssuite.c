/*
 * fssuite.c - run the generic libFS test suite (userfs/fssuite.c) in the
 * guest, on the file system mounted where DIR is.
 *   fssuite DIR
 * What to test is decided by what the file system's type says it supports
 * (struct libfs_ops: features, longest name, largest file); what it lacks is
 * skipped with the reason.  The remount test unmounts and mounts that file
 * system again inside this program.
 * Exit status: the number of tests that failed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "libos/files.h"
#include "libos/vfs.h"
#include "libos/stack/stack.h"
#include "userfs/fssuite.h"

static char prefix[LIBFS_PATH_MAX], type[32], opts[VFS_SPEC_MAX];

static int remount(void *arg)
{
	(void)arg;
	int r = vfs_umount(prefix);
	return r < 0 ? r : vfs_mount(prefix, type, opts, 1);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: fssuite DIR\n");
		return 2;
	}
	char dir[LIBFS_PATH_MAX];
	if (vfs_normalize(argv[1], dir) < 0) {
		fprintf(stderr, "fssuite: %s: bad path\n", argv[1]);
		return 2;
	}
	/* The mount DIR is on: the longest prefix. */
	const char *p, *t, *o;
	int mounted;
	size_t best = 0;
	for (int i = 0; fs_mount_info(i, &p, &t, &o, &mounted) == 0; i++) {
		size_t n = strlen(p);
		int under = n == 1 || (strncmp(dir, p, n) == 0 && (dir[n] == 0 || dir[n] == '/'));
		if (under && n >= best) {
			best = n;
			snprintf(prefix, sizeof prefix, "%s", p);
			snprintf(type, sizeof type, "%s", t);
			snprintf(opts, sizeof opts, "%s", o);
		}
	}
	if (best == 0) {
		fprintf(stderr, "fssuite: %s: not on a mounted file system\n", dir);
		return 2;
	}
	const struct libfs_ops *ops = libfs_type(type);
	if (ops == NULL) {
		fprintf(stderr, "fssuite: %s: unknown file system type\n", type);
		return 2;
	}
	/* A layer offers what the stack below it does (docs/stacking.md). */
	struct libfs_ops eff;
	if (stack_effective(dir, &eff) == 0)
		ops = &eff;
	struct fssuite s = { .root = dir, .remount = remount };
	fssuite_adapt(&s, ops, 4 * 1024 * 1024);
	printf("fssuite: %s on %s at %s\n", dir, type, prefix);
	return fssuite_run(&s);
}
