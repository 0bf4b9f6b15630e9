/*
 * flatfs.h - a flat file system (one directory) whose files are written in
 * place at any offset: the second example of docs/writing-a-libfs.md, built
 * from the libFS kit.  Read flatfs.c with it.
 *
 * Options: unit=N, key=TEXT (or keyhex=HEX), sb=SECTOR, wait=MS (the
 * kit's, libos/kit/kit.h); mkfs also takes slots=N (names the table holds
 * at first, default 64; it grows).
 */
#ifndef USERFS_FLATFS_H
#define USERFS_FLATFS_H

#include <stdint.h>
#include "libos/libfs.h"

extern const struct libfs_ops flatfs_ops;

/* Make an empty flatfs; its anchor's sector in *sb.  0 or a negative errno. */
int flatfs_mkfs(const char *opts, uint64_t *sb);

#endif
