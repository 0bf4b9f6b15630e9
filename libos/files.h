/*
 * files.h - what programs can do with files beyond POSIX: choose a file's
 * persistence model, ask a file system how full it is, and change the mount
 * table (which children inherit through the environment).
 *
 * The POSIX calls themselves (open, read, stat, opendir, ...) are declared
 * by picolibc's headers and implemented in posix.c and fd.c.  Functions here
 * follow the POSIX convention: 0 or a count on success, -1 with errno set on
 * failure.
 */
#ifndef LIBOS_FILES_H
#define LIBOS_FILES_H

#include "libos/libfs.h"

/* Choose the persistence model of an open file: LIBFS_P_WRITEBACK,
 * LIBFS_P_WRITETHROUGH or LIBFS_P_MEMORY (thesis section 5.4.3). */
int fs_persist(int fd, int model);
/* Statistics of the file system holding path. */
int fs_statfs(const char *path, struct libfs_statfs *st);
/* The libFS-level stat (persistence model and exact sizes included). */
int fs_stat(const char *path, struct libfs_stat *st);

/* Mount TYPE with OPTS at PREFIX now (so errors show), and record the new
 * table in this program's environment for the children it starts. */
int fs_mount(const char *prefix, const char *type, const char *opts);
int fs_umount(const char *prefix);
/* Make every mounted file system durable and unmount the idle ones, so a
 * child process can mount them (unixfs allows one process at a time). */
int fs_release(void);
/* The i-th mount of the table (see vfs_mount_info); -1 past the end. */
int fs_mount_info(int i, const char **prefix, const char **type, const char **opts,
                  int *mounted);

/* Called by libos_start: read the mount table, working directory and
 * redirections from the environment; and at exit: unmount everything. */
void libos_fs_init(void);
void libos_fs_exit(void);
/* Set by libos_fs_exit when closing a file or writing files back failed:
 * _exit then turns a status of 0 into 1, so the parent sees the loss and
 * not only the message (issue 17, F3). */
extern int libos_exit_failed;
/* argv[0], for messages libos prints on the program's behalf. */
extern const char *libos_prog_name;

#endif
