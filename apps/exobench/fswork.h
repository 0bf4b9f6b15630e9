/*
 * fswork.h - the file-system workload: thesis Tables A.1-A.3's small-file
 * and large-file work through POSIX calls (open, write, read, pread,
 * pwrite, unlink, mkdir, rmdir, sync, fsync) on a mounted file system.
 *
 * One implementation for both sides of the Linux comparison: `exobench fs`
 * runs it on a library file system of ours (apps/exobench/fs.c) and
 * tools/linux/lxbench.c on a Linux file system, so both do exactly the same
 * calls, in the same order, with the same sizes, names and random orders.
 * Portable C11 + POSIX; what differs between the two systems comes in
 * struct fw_sys.
 *
 * Small files (default: 1,000 x 10 KB, then 10,000 x 1 KB): file i is
 * ROOT/dNN/fIIIII with NN = i mod DIRS; the directories are made during
 * allocation (as each is first needed) and removed during deallocation.
 * Phases: write (create, one write, close), read (open, one read, close;
 * every file checked), dealloc (unlink, then rmdir).  Write and dealloc
 * end with sync(), so their work is durable when the clock stops.
 *
 * Large file (default 80 MiB): alloc (create it empty, sync), seqwrite
 * (64 KB writes, fsync), seqread (64 KB reads), randwrite (OPS 4 KB
 * pwrites in a random order, fsync), randread (OPS 4 KB preads in another
 * order), dealloc (unlink, sync).  Every block read is checked.
 *
 * Before every phase, not timed, sys->cold() makes everything durable and
 * empties every cache between the program and the disk, so each phase
 * starts cold.
 */
#ifndef APPS_EXOBENCH_FSWORK_H
#define APPS_EXOBENCH_FSWORK_H

#include <stdint.h>

/* What one system supplies. */
struct fw_sys {
	const char *os;           /* "exodisk" or "linux" (a key of every record) */
	const char *fs;           /* the file system: "unixfs", "ext4", ...       */
	const char *dev;          /* the device: "virtio-blk", ...                */
	int unit;
	const char *root;         /* where it is mounted, e.g. "/xb", "/mnt"      */
	/* Make everything durable and empty every cache below the program;
	 * returns 0, or a count of cache entries it could not empty (recorded
	 * as "cache_left"), or -errno. */
	long (*cold)(void);
	uint64_t (*now_ns)(void); /* a monotonic clock in nanoseconds            */
	/* Optional: told as each timed phase starts (its name and how many
	 * units of work it does) and ends (NULL), as exodisk's profiler wants
	 * (libos/prof.h, docs/profiling.md); the untimed cold step is outside. */
	void (*phase)(const char *name, uint64_t units);
};

/* The options both sides take (parsed by fw_option):
 *   -r RUNS  -x small|large|all  -n FILES[,FILES...] -s BYTES[,BYTES...]
 *   -d DIRS  -m MIB  -k OPS
 * -n and -s give the small-file experiments as lists of the same length
 * (default 1000,10000 and 10240,1024: the thesis's two). */
#define FW_MAXSIZES 4
struct fw_args {
	int runs;
	const char *which;
	int nsizes;
	int nfiles[FW_MAXSIZES];
	long bytes[FW_MAXSIZES];
	int nbytes;               /* entries given with -s (checked against -n) */
	int ndirs;
	long mib;
	long kops;                /* 0: every block of the file */
};

#define FW_OPTIONS "[-r RUNS] [-x small|large|all] [-n FILES,... -s BYTES,...] [-d DIRS] [-m MIB] [-k OPS]"

void fw_defaults(struct fw_args *a);
/* opt is one of the options above and val its value: 1 if taken, 0 if
 * opt is not one of them, -1 if val is not a valid value. */
int fw_option(struct fw_args *a, const char *opt, const char *val);
/* 0 if the options make sense together, else -1. */
int fw_check(const struct fw_args *a);

/* Run the workload; 0, or 1 after printing what went wrong. */
int fw_run(const struct fw_sys *sys, const struct fw_args *a);

#endif
