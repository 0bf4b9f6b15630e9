/*
 * kvfs.h - a deliberately small library file system: a flat set of named
 * values, each one exonode with one extent, in the spirit of Aerie's KVFS.
 * It is the example that docs/writing-a-libfs.md builds step by step; read
 * kvfs.c with it.
 *
 * Options: unit=N, key=TEXT (or keyhex=HEX), sb=SECTOR, as for unixfs;
 * mkfs also takes slots=N (how many names the index holds, default 512).
 */
#ifndef USERFS_KVFS_H
#define USERFS_KVFS_H

#include <stdint.h>
#include "libos/libfs.h"

extern const struct libfs_ops kvfs_ops;

/* Make an empty kvfs; its superblock sector in *sb.  0 or a negative errno. */
int kvfs_mkfs(const char *opts, uint64_t *sb);

#endif
