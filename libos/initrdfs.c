/*
 * initrdfs.c - the initrd as a read-only library file system, so the
 * programs the kernel runs are files people can see: `ls /bin`, `ls -l /bin`,
 * `hexdump /bin/true`, and the shell's completion of program names.
 *
 * The kernel maps the initrd read-only into a process that asks
 * (SYS_initrd_map, kernel/initrd.c); after that this libFS reads it as
 * memory, with no system call.  The image is a flat list of names such as
 * "bin/ls" (kernel/uapi/initrd.h); directories are implied by the names.
 * Mount option dir=D shows the part under D/ (the default mount table puts
 * dir=bin at /bin: libos/posix.c).  Every change fails with EROFS: to change
 * the programs, rebuild the initrd (README, "Adding an application").
 *
 * Guest only (it needs the kernel's mapping); registered at program start
 * by libos_fs_init under the type name "initrd".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/libfs.h"
#include "libos/initrdfs.h"
#include "libos/exo.h"
#include "kernel/uapi/initrd.h"

struct irfs {
	const uint8_t *image;
	const struct initrd_header *h;
	const struct initrd_entry *e;
	char dir[INITRD_NAME_MAX];      /* the part shown, "" for all of it */
	size_t dlen;
};

struct irfile {
	int entry;                       /* the file's entry, or -1 for a directory */
	char name[INITRD_NAME_MAX];      /* the full name in the image ("bin", "bin/ls") */
};

/* The entry's name, NUL-terminated within its field or "" if not. */
static const char *ename(const struct irfs *fs, uint32_t i)
{
	const char *n = fs->e[i].name;
	return strnlen(n, INITRD_NAME_MAX) < INITRD_NAME_MAX ? n : "";
}

/* The full image name of path (relative to the mount) into out. */
static int full_name(const struct irfs *fs, const char *path, char *out)
{
	size_t plen = strlen(path);
	if (fs->dlen + 1 + plen + 1 > INITRD_NAME_MAX)
		return -ENOENT;          /* longer than any name in the image */
	if (fs->dlen == 0)
		memcpy(out, path, plen + 1);
	else if (plen == 0)
		memcpy(out, fs->dir, fs->dlen + 1);
	else {
		memcpy(out, fs->dir, fs->dlen);
		out[fs->dlen] = '/';
		memcpy(out + fs->dlen + 1, path, plen + 1);
	}
	return 0;
}

/* Does some entry's name start with prefix followed by '/'?  ("" always.) */
static int is_dir(const struct irfs *fs, const char *name)
{
	size_t n = strlen(name);
	if (n == 0)
		return 1;
	for (uint32_t i = 0; i < fs->h->count; i++) {
		const char *en = ename(fs, i);
		if (strncmp(en, name, n) == 0 && en[n] == '/')
			return 1;
	}
	return 0;
}

static int find(const struct irfs *fs, const char *name)
{
	for (uint32_t i = 0; i < fs->h->count; i++)
		if (strcmp(ename(fs, i), name) == 0)
			return (int)i;
	return -1;
}

/* Inode numbers: 1 for the directories (they are not stored), files by entry. */
static void fill_stat(const struct irfs *fs, int entry, struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	uint64_t t = exo_kinfo()->wall_at_boot;      /* it came with this boot */
	st->mtime = st->ctime = t;
	st->persist = LIBFS_P_MEMORY;
	if (entry < 0) {
		st->ino = 1;
		st->type = LIBFS_T_DIR;
		st->perm = 0555;
		st->nlink = 2;
		return;
	}
	st->ino = (uint64_t)entry + 2;
	st->type = LIBFS_T_REG;
	st->perm = 0555;
	st->nlink = 1;
	st->size = fs->e[entry].size;
	st->blocks = (st->size + 511) / 512;
}

static int ir_mount(const char *opts, void **out)
{
	const uint8_t *image = exo_initrd();
	if (image == NULL)
		return -ENODEV;
	const struct initrd_header *h = (const struct initrd_header *)image;
	if (memcmp(h->magic, INITRD_MAGIC, 8) != 0)
		return -EIO;
	struct irfs *fs = calloc(1, sizeof *fs);
	if (fs == NULL)
		return -ENOMEM;
	fs->image = image;
	fs->h = h;
	fs->e = (const struct initrd_entry *)(image + sizeof *h);
	if (libfs_opt(opts, "dir", fs->dir, sizeof fs->dir) < 0) {
		free(fs);
		return -EINVAL;
	}
	/* "dir=/bin/" and "dir=bin" mean the same. */
	char *d = fs->dir;
	while (*d == '/')
		memmove(d, d + 1, strlen(d));
	fs->dlen = strlen(d);
	while (fs->dlen > 0 && d[fs->dlen - 1] == '/')
		d[--fs->dlen] = 0;
	*out = fs;
	return 0;
}

static int ir_unmount(void *fs) { free(fs); return 0; }
static int ir_sync(void *fs) { (void)fs; return 0; }

static int ir_statfs(void *vfs, struct libfs_statfs *st)
{
	struct irfs *fs = vfs;
	memset(st, 0, sizeof *st);
	strcpy(st->type, "initrd");
	st->bsize = 512;
	for (uint32_t i = 0; i < fs->h->count; i++) {
		const char *n = ename(fs, i);
		if (fs->dlen == 0 || (strncmp(n, fs->dir, fs->dlen) == 0 && n[fs->dlen] == '/')) {
			st->blocks += (fs->e[i].size + 511) / 512;
			st->files++;
		}
	}
	return 0;
}

static int ir_stat(void *vfs, const char *path, struct libfs_stat *st)
{
	struct irfs *fs = vfs;
	char name[INITRD_NAME_MAX];
	if (full_name(fs, path, name) < 0)
		return -ENOENT;
	int i = find(fs, name);
	if (i < 0 && !is_dir(fs, name))
		return -ENOENT;
	fill_stat(fs, i, st);
	return 0;
}

static int ir_rofs(void *fs, const char *path) { (void)fs; (void)path; return -EROFS; }
static int ir_mkdir(void *fs, const char *p, uint32_t perm) { (void)fs; (void)p; (void)perm; return -EROFS; }

static int ir_open(void *vfs, const char *path, int flags, uint32_t perm, void **file)
{
	(void)perm;
	struct irfs *fs = vfs;
	char name[INITRD_NAME_MAX];
	if (full_name(fs, path, name) < 0)
		return (flags & LIBFS_O_CREAT) ? -EROFS : -ENOENT;
	int i = find(fs, name);
	int dir = i < 0 && is_dir(fs, name);
	if (i < 0 && !dir)
		return (flags & LIBFS_O_CREAT) ? -EROFS : -ENOENT;
	if (flags & (LIBFS_O_WRITE | LIBFS_O_TRUNC))
		return dir ? -EISDIR : -EROFS;
	if ((flags & LIBFS_O_DIR) && !dir)
		return -ENOTDIR;
	struct irfile *f = calloc(1, sizeof *f);
	if (f == NULL)
		return -ENOMEM;
	f->entry = dir ? -1 : i;
	strcpy(f->name, name);
	*file = f;
	return 0;
}

static int ir_close(void *fs, void *file) { (void)fs; free(file); return 0; }

static long ir_read(void *vfs, void *file, void *buf, size_t n, uint64_t off)
{
	struct irfs *fs = vfs;
	struct irfile *f = file;
	if (f->entry < 0)
		return -EISDIR;
	const struct initrd_entry *e = &fs->e[f->entry];
	if (off >= e->size)
		return 0;
	if (n > e->size - off)
		n = (size_t)(e->size - off);
	memcpy(buf, fs->image + e->offset + off, n);
	return (long)n;
}

static long ir_write(void *fs, void *file, const void *buf, size_t n, uint64_t off)
{
	(void)fs; (void)file; (void)buf; (void)n; (void)off;
	return -EROFS;
}

static int ir_fstat(void *vfs, void *file, struct libfs_stat *st)
{
	fill_stat(vfs, ((struct irfile *)file)->entry, st);
	return 0;
}

static int ir_truncate(void *fs, void *file, uint64_t len) { (void)fs; (void)file; (void)len; return -EROFS; }

/* The next name directly below the directory, from entry *cookie on.  A
 * subdirectory shows once: at the first entry whose name passes through it. */
static int ir_readdir(void *vfs, void *file, uint64_t *cookie, struct libfs_dirent *de)
{
	struct irfs *fs = vfs;
	struct irfile *d = file;
	if (d->entry >= 0)
		return -ENOTDIR;
	size_t dl = strlen(d->name);
	for (uint32_t i = (uint32_t)*cookie; i < fs->h->count; i++) {
		const char *n = ename(fs, i);
		if (dl > 0 && (strncmp(n, d->name, dl) != 0 || n[dl] != '/'))
			continue;
		const char *rest = n + (dl > 0 ? dl + 1 : 0);
		const char *slash = strchr(rest, '/');
		size_t clen = slash ? (size_t)(slash - rest) : strlen(rest);
		if (clen == 0)
			continue;
		if (slash) {
			/* Shown already by an earlier entry? */
			int seen = 0;
			for (uint32_t j = 0; j < i && !seen; j++) {
				const char *m = ename(fs, j);
				seen = strncmp(m, n, (size_t)(rest - n) + clen) == 0 &&
				       m[(rest - n) + clen] == '/';
			}
			if (seen)
				continue;
		}
		memset(de, 0, sizeof *de);
		memcpy(de->name, rest, clen);
		de->type = slash ? LIBFS_T_DIR : LIBFS_T_REG;
		de->ino = slash ? 1 : (uint64_t)i + 2;
		*cookie = i + 1;
		return 1;
	}
	*cookie = fs->h->count;
	return 0;
}

const struct libfs_ops initrdfs_ops = {
	.name = "initrd",
	.features = LIBFS_F_DIRS,                /* directories (read-only); no rename */
	.name_max = INITRD_NAME_MAX - 1,
	.mount = ir_mount,
	.unmount = ir_unmount,
	.sync = ir_sync,
	.statfs = ir_statfs,
	.stat = ir_stat,
	.unlink = ir_rofs,
	.mkdir = ir_mkdir,
	.rmdir = ir_rofs,
	.open = ir_open,
	.close = ir_close,
	.read = ir_read,
	.write = ir_write,
	.fstat = ir_fstat,
	.truncate = ir_truncate,
	.readdir = ir_readdir,
};
