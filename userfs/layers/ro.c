/*
 * ro.c - a read-only view of another mount, and the tutorial layer of
 * docs/stacking.md: everything that would change the file system below is
 * refused with -EROFS, everything else passes down untouched.
 *
 *   mount /view ro over=/data
 *
 * The mount table already refuses write, truncate and the like on a file
 * opened for reading only, so refusing to open for writing, and the five
 * operations on names that change something, is all it takes.
 */
#include "libos/stack/stack.h"

static int ro_mount(const char *opts, void **fs)
{
	return stack_mount(opts, sizeof(struct stack_mount), fs);
}

static int ro_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	if (flags & (LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC))
		return -EROFS;
	return stack_open(fs, path, flags, perm, file);
}

static int ro_name(void *fs, const char *path)
{
	return -EROFS;
}

static int ro_mkdir(void *fs, const char *path, uint32_t perm)
{
	return -EROFS;
}

static int ro_rename(void *fs, const char *from, const char *to)
{
	return -EROFS;
}

STACK_LAYER_BEGIN
const struct libfs_ops ro_ops = {
	STACK_BYPASS,
	.name = "ro",
	.mount = ro_mount,
	.open = ro_open,
	.unlink = ro_name,
	.rmdir = ro_name,
	.mkdir = ro_mkdir,
	.rename = ro_rename,
};
STACK_LAYER_END
