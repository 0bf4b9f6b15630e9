/*
 * unixfs.h - the Unix-like library file system on exonodes (thesis section
 * 4.1): what programs and tools outside userfs/unixfs/ use.  It is mounted
 * like any libFS through unixfs_ops (libfs.h); mkfs and fsck are here.
 *
 * Options (mount, mkfs and fsck take the same string):
 *   unit=N        disk unit (default 0)
 *   key=TEXT      the owner's secret, or keyhex=HEX (default: the public
 *                 development secret, see libos/capkey.h)
 *   sb=SECTOR     where the superblock is (default: found by looking)
 *   cache=N       buffer-cache blocks of 4 KiB (default 32768, 128 MiB:
 *                 enough to hold a large file a program reads in a random
 *                 order; memory is taken as blocks are first used)
 *   wait=MS       how long a mount waits for another process's mount of
 *                 the same file system to end (default 5000)
 *   dirty=KB      small files' bytes held in memory before they are written
 *                 out ahead of a sync (default 8192)
 *   label=TEXT    mkfs: a name kept in the superblock
 *   force         mkfs: make one even if the owner already has one here
 *
 * The exodisk client a mount uses is edc_default() at the time of the
 * mount (libos/edc.h).
 */
#ifndef USERFS_UNIXFS_H
#define USERFS_UNIXFS_H

#include <stdint.h>
#include "libos/libfs.h"
#include "libos/edc.h"

extern const struct libfs_ops unixfs_ops;

/* Make an empty unixfs.  Returns 0 and its superblock sector in *sb, or a
 * negative errno (-EEXIST if the key already opens a unixfs on the unit). */
int unixfs_mkfs(const char *opts, uint64_t *sb);

/* fsck: check a unixfs, mounted read-only for the purpose.  report() is
 * called for every problem (and, if verbose, for notes).  Returns the
 * number of problems found, or a negative errno if it could not look. */
struct ufs_fsck_stats {
	uint64_t files, dirs, bytes, extents, mapnodes, sectors;
	uint64_t sparse, hole_bytes;   /* large files with holes; bytes the holes span */
	uint32_t version;              /* the superblock's format version             */
	uint64_t names;                /* records reached, plus the root              */
	uint64_t sb_files;             /* the superblock's count of them (0: none)    */
	uint64_t problems;
};
typedef void (*ufs_report_fn)(void *arg, const char *path, const char *what);
int unixfs_fsck(const char *opts, ufs_report_fn report, void *arg, struct ufs_fsck_stats *st);

/* Statistics of a mounted unixfs, for benchmarks and tests. */
struct ufs_counters {
	uint64_t syncs, barriers, writebacks, data_writes, data_bytes, data_reads, read_bytes;
	uint64_t cache_hits, cache_misses, direct_reads;
	uint64_t ahead_dirs, ahead_used;   /* directories read ahead; loaded from it */
	uint64_t ahead_stream;    /* windows a large file read in order was read ahead by */
	uint64_t damage;          /* damaged metadata found (see unixfs_damage)  */
	uint64_t objects;         /* files and directories in memory now         */
	uint64_t pool_bytes;      /* memory the names and objects' pool holds    */
};
void unixfs_counters(void *fs, struct ufs_counters *out);
/* The last damage a mounted unixfs found ("unixfs: file id ID, sector S:
 * what"), or NULL: an operation that met it failed with EIO. */
const char *unixfs_damage(void *fs);

#endif
