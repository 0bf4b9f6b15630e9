/*
 * fssuite.h - the generic test suite any library file system can be run
 * against, through the mount table (libos/vfs.h): the same source runs on
 * the host (tests/host/userfs/test_fssuite.c) and in the guest (the
 * fssuite program).  docs/writing-a-libfs.md ends by running it on kvfs.
 *
 * The suite works under a directory of a mounted file system and checks
 * what POSIX promises for the operations the libFS says it supports:
 * contents at every size and offset, holes reading as zeros, truncation,
 * appends, many files, listings, errors (missing and existing names, bad
 * descriptors, names too long), and - given a way to unmount and mount
 * again - that everything is still there afterwards.
 */
#ifndef USERFS_FSSUITE_H
#define USERFS_FSSUITE_H

#include <stdint.h>

struct fssuite {
	const char *root;           /* a directory on the file system under test */
	int dirs;                   /* supports mkdir/rmdir and nested paths      */
	int rename;                 /* supports rename                            */
	int name_max;               /* longest name it accepts                    */
	uint64_t big;               /* size of the large-file test (0: skip)      */
	/* Unmount and mount again (NULL: skip those checks); 0 on success. */
	int (*remount)(void *arg);
	void *arg;
	int verbose;
	/* results */
	int passed, failed;
};

/* Run every test; returns the number that failed.  Prints one line per
 * test ("PASS name" / "FAIL name: why"). */
int fssuite_run(struct fssuite *s);

#endif
