/*
 * sys/dirent.h - directory streams for applications.  picolibc's own
 * <sys/dirent.h> refuses to compile (it has no directories); this one,
 * found first because libos/include is on the include path of every guest
 * program, defines the types <dirent.h> needs.  opendir/readdir/closedir
 * are implemented in libos/posix.c over the mount table.
 */
#ifndef LIBOS_SYS_DIRENT_H
#define LIBOS_SYS_DIRENT_H

#include <sys/types.h>

#define DT_UNKNOWN  0
#define DT_DIR      4
#define DT_REG      8

struct dirent {
	ino_t d_ino;
	unsigned char d_type;     /* DT_* */
	char d_name[256];         /* NUL-terminated, at most LIBFS_NAME_MAX bytes */
};

typedef struct libos_dir DIR;

#endif
