/*
 * devfs.h - /dev/null and /dev/zero as a library file system (devfs.c).
 */
#ifndef LIBOS_DEVFS_H
#define LIBOS_DEVFS_H

#include "libos/libfs.h"

extern const struct libfs_ops devfs_ops;

#endif
