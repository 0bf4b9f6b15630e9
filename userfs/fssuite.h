/*
 * fssuite.h - the generic test suite any library file system can be run
 * against, through the mount table (libos/vfs.h): the same source runs on
 * the host (tests/host/userfs/test_fssuite.c) and in the guest (the
 * fssuite program).  docs/writing-a-libfs.md runs it on kvfs and flatfs.
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

struct libfs_ops;

struct fssuite {
	const char *root;           /* a directory on the file system under test */
	const char *type;           /* its type's name, for messages (or NULL)   */
	int dirs;                   /* supports mkdir/rmdir and nested paths      */
	int rename;                 /* supports rename                            */
	int name_max;               /* longest name it accepts                    */
	int atomic;                 /* each open is a copy, written whole at close
	                               (LIBFS_F_ATOMIC): two opens do not share   */
	uint64_t big;               /* size of the large-file test (0: skip)      */
	/* Unmount and mount again (NULL: skip those checks); 0 on success. */
	int (*remount)(void *arg);
	void *arg;
	int verbose;
	/* results */
	int passed, failed;
};

/* Set type, dirs, rename and name_max from what the libFS states
 * (struct libfs_ops: features and limits), and big to the smaller of
 * `big` and its largest file: the suite adapts to the file system, never to
 * its name. */
void fssuite_adapt(struct fssuite *s, const struct libfs_ops *ops, uint64_t big);

/* Run every test; returns the number that failed.  Prints one line per
 * test ("PASS name", "FAIL name: why", "SKIP name: why"). */
int fssuite_run(struct fssuite *s);

#endif
