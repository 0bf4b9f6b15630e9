/*
 * open.c - open() for the POSIX layer.  Files belong to library file
 * systems; with none mounted there is nothing to open.
 */
#include <errno.h>
#include <fcntl.h>

int open(const char *path, int flags, ...)
{
	(void)path;
	(void)flags;
	errno = ENOENT;
	return -1;
}
