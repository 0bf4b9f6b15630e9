/*
 * kvfs.h - a deliberately small library file system: a flat set of named
 * values, each one exonode, read whole and replaced whole, in the spirit of
 * Aerie's KVFS.  It is the example docs/writing-a-libfs.md builds from the
 * libFS kit; read kvfs.c with it.
 *
 * Options: unit=N, key=TEXT (or keyhex=HEX), sb=SECTOR, wait=MS (the
 * kit's, libos/kit/kit.h); mkfs also takes slots=N (names the table holds
 * at first, default 64; it grows).
 */
#ifndef USERFS_KVFS_H
#define USERFS_KVFS_H

#include <stdint.h>
#include "libos/libfs.h"

extern const struct libfs_ops kvfs_ops;

/* Make an empty kvfs; its anchor's sector in *sb.  0 or a negative errno. */
int kvfs_mkfs(const char *opts, uint64_t *sb);

#endif
