/*
 * devfs.c - /dev: the null and zero devices as a tiny library file system,
 * so `PROGRAM > /dev/null` works as it does everywhere else.
 *
 *   /dev/null   reads end at once; writes vanish
 *   /dev/zero   reads give zero bytes; writes vanish
 *
 * They are libOS objects, not kernel ones: nothing about them needs
 * protection.  Mounted at /dev in every program by libos_fs_init (lazily,
 * so it costs nothing until used); the type name is "dev".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/devfs.h"
#include "libos/exo.h"

static const char *const names[] = { "null", "zero" };
#define NDEV 2

/* A handle: which device (0, 1), or NDEV for the directory. */
struct dfile {
	int dev;
};

static int lookup(const char *path)
{
	if (path[0] == 0)
		return NDEV;
	for (int i = 0; i < NDEV; i++)
		if (strcmp(path, names[i]) == 0)
			return i;
	return -1;
}

static void fill(int dev, struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	st->ino = (uint64_t)dev + 1;
	st->type = dev == NDEV ? LIBFS_T_DIR : LIBFS_T_REG;
	st->perm = dev == NDEV ? 0555 : 0666;
	st->nlink = dev == NDEV ? 2 : 1;
	st->persist = LIBFS_P_MEMORY;
	st->mtime = st->ctime = exo_kinfo()->wall_at_boot;
}

static int d_mount(const char *opts, void **fs) { (void)opts; *fs = (void *)1; return 0; }
static int d_unmount(void *fs) { (void)fs; return 0; }
static int d_sync(void *fs) { (void)fs; return 0; }

static int d_statfs(void *fs, struct libfs_statfs *st)
{
	(void)fs;
	memset(st, 0, sizeof *st);
	strcpy(st->type, "dev");
	st->bsize = 512;
	st->files = NDEV;
	return 0;
}

static int d_stat(void *fs, const char *path, struct libfs_stat *st)
{
	(void)fs;
	int d = lookup(path);
	if (d < 0)
		return -ENOENT;
	fill(d, st);
	return 0;
}

static int d_no(void *fs, const char *path) { (void)fs; (void)path; return -EPERM; }

static int d_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	(void)fs;
	(void)perm;
	int d = lookup(path);
	if (d < 0)
		return (flags & LIBFS_O_CREAT) ? -EPERM : -ENOENT;
	if (d == NDEV && (flags & LIBFS_O_WRITE))
		return -EISDIR;
	if (d != NDEV && (flags & LIBFS_O_DIR))
		return -ENOTDIR;
	struct dfile *f = malloc(sizeof *f);
	if (f == NULL)
		return -ENOMEM;
	f->dev = d;
	*file = f;
	return 0;
}

static int d_close(void *fs, void *file) { (void)fs; free(file); return 0; }

static long d_read(void *fs, void *file, void *buf, size_t n, uint64_t off)
{
	(void)fs;
	(void)off;
	struct dfile *f = file;
	if (f->dev == NDEV)
		return -EISDIR;
	if (f->dev == 0)
		return 0;
	memset(buf, 0, n);
	return (long)n;
}

static long d_write(void *fs, void *file, const void *buf, size_t n, uint64_t off)
{
	(void)fs;
	(void)buf;
	(void)off;
	return ((struct dfile *)file)->dev == NDEV ? -EISDIR : (long)n;
}

static int d_fstat(void *fs, void *file, struct libfs_stat *st)
{
	(void)fs;
	fill(((struct dfile *)file)->dev, st);
	return 0;
}

static int d_truncate(void *fs, void *file, uint64_t len) { (void)fs; (void)file; (void)len; return 0; }

static int d_readdir(void *fs, void *dir, uint64_t *cookie, struct libfs_dirent *de)
{
	(void)fs;
	if (((struct dfile *)dir)->dev != NDEV)
		return -ENOTDIR;
	if (*cookie >= NDEV)
		return 0;
	memset(de, 0, sizeof *de);
	strcpy(de->name, names[*cookie]);
	de->type = LIBFS_T_REG;
	de->ino = *cookie + 1;
	(*cookie)++;
	return 1;
}

const struct libfs_ops devfs_ops = {
	.name = "dev",
	.features = 0,                           /* one flat directory, fixed names */
	.name_max = 16,
	.mount = d_mount,
	.unmount = d_unmount,
	.sync = d_sync,
	.statfs = d_statfs,
	.stat = d_stat,
	.unlink = d_no,
	.open = d_open,
	.close = d_close,
	.read = d_read,
	.write = d_write,
	.fstat = d_fstat,
	.truncate = d_truncate,
	.readdir = d_readdir,
};
