/*
 * initrdfs.h - the initrd as a read-only library file system (initrdfs.c):
 * the programs as files under /bin.  Guest only.
 */
#ifndef LIBOS_INITRDFS_H
#define LIBOS_INITRDFS_H

#include "libos/libfs.h"

extern const struct libfs_ops initrdfs_ops;

#endif
