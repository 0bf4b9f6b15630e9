/*
 * flatfs.c - the second example of docs/writing-a-libfs.md: a flat file
 * system (one directory) whose files are written in place, at any offset,
 * built from the libFS kit (libos/kit/kit.h).  Where kvfs reads a value
 * whole and replaces it whole, flatfs reads and writes the disk directly,
 * as an ordinary file system does.
 *
 * On disk:
 *   anchor  the kit's anchor exonode, holding the kit's flat directory.
 *   file    an exonode, one to a sector: entry 0 is struct fl_meta, the
 *           bytes a byte store (kit_bytes) from entry 1.  Writes go to the
 *           disk as they come; holes and grown gaps read as zeros.
 *
 * Processes share it (docs/sharing.md): the kit's flat directory keeps the
 * names in an area they share and takes its lock around each operation;
 * while others have it mounted, each operation that changed a file ends
 * with an fsync (publish), and the others reload that file's size and
 * extents before their next operation (reload).
 *
 * Durability: data is written at once, but the size that says how much of
 * it is the file's is committed only by fsync (and close), after a barrier
 * - so a crash shows each file as of its last fsync, except for bytes
 * overwritten in place since, which may be old or new.
 *
 * Every open of one file shares one struct flfile (kit_flat_hold), so two
 * descriptors see one size and one list of extents.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/kit/kit.h"
#include "libos/clock.h"
#include "userfs/flatfs/flatfs.h"

#define FL_FILE_LEN 480              /* one to a sector: room for 25 extents */

struct fl_meta {
	uint64_t size, mtime;
};

struct flfile {                      /* one per open file, shared */
	struct kit_open o;               /* first: the kit's (o.gone: unlinked) */
	struct kit_bytes b;
	struct fl_meta m;
};

/* Return from the function if e failed. */
#define TRY(e) do { int e_ = (e); if (e_ < 0) return e_; } while (0)

static int read_meta(struct kit_flat *fl, const struct kit_name *r, struct fl_meta *m)
{
	int n = kit_err(kit_xn_get(&fl->k, r->sector, r->slot, 0, m, sizeof *m));
	return n < 0 ? n : n != sizeof *m ? -EIO : 0;
}

static int fl_reload(struct kit_flat *fl, struct kit_open *o)
{
	struct flfile *f = (struct flfile *)o;
	TRY(read_meta(fl, &o->r, &f->m));
	return kit_bytes_open(&fl->k, &f->b, o->r.sector, o->r.slot, 1, f->m.size);
}

static int fl_stat(void *fs, const char *path, struct libfs_stat *st)
{
	struct kit_flat *fl = fs;
	struct fl_meta m = { 0, 0 };
	int i = kit_flat_lookup(fl, path, 0);
	if (i >= 0)
		TRY(read_meta(fl, &fl->v[i], &m));
	else if (i != KIT_ROOT)
		return i;
	kit_flat_stat(fl, i < 0 ? NULL : &fl->v[i], m.size, m.mtime, st);
	return 0;
}

/* A file's handle is its shared struct flfile; the root's is fl itself. */
static int fl_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	struct kit_flat *fl = fs;
	struct fl_meta m = { 0, libos_time_ns() };
	int i = kit_flat_open(fl, path, flags, &m, sizeof m);
	*file = fs;
	if (i < 0)
		return i == KIT_ROOT ? 0 : i;
	struct flfile *f = kit_flat_hold(fl, &fl->v[i], sizeof *f);
	int e = f ? 0 : -ENOMEM;
	if (e == 0 && f->o.refs == 1)
		e = fl_reload(fl, &f->o);
	if (e == 0 && (flags & LIBFS_O_TRUNC)) {
		f->o.dirty = 1;
		e = kit_bytes_truncate(&fl->k, &f->b, 0);
	}
	if (e < 0 && f)
		kit_flat_drop(fl, f);
	*file = f;
	return e;
}

/* The size after the data: barrier, metadata, then the extents past the
 * size go, and one commit. */
static int fl_fsync(void *fs, void *file)
{
	struct kit_flat *fl = fs;
	struct flfile *f = file;
	if (file == fs || !f->o.dirty || f->o.gone)
		return 0;
	f->m.size = f->b.size;
	TRY(kit_barrier(&fl->k));
	TRY(kit_err(kit_xn_put(&fl->k, f->o.r.sector, f->o.r.slot, 0, &f->m, sizeof f->m)));
	TRY(kit_bytes_trim(&fl->k, &f->b));
	f->o.dirty = 0;
	return kit_commit(&fl->k, f->o.r.sector, f->o.r.slot);
}

static int fl_mount(const char *opts, void **fsp)
{
	struct kit_flat *fl = malloc(sizeof *fl);
	int e = fl ? kit_flat_mount(fl, "flatfs", opts, FL_FILE_LEN) : -ENOMEM;
	if (e < 0)
		free(fl);
	else
		*fsp = fl, fl->reload = fl_reload, fl->publish = fl_fsync;
	return e;
}

static void fl_abandon(void *fs)
{
	kit_flat_free(fs);
	free(fs);
}

static int fl_unmount(void *fs)
{
	fl_abandon(fs);
	return 0;
}

static int fl_close(void *fs, void *file)
{
	int e = fl_fsync(fs, file);
	if (file != fs)
		kit_flat_drop(fs, file);
	return e;
}

static long fl_read(void *fs, void *file, void *buf, size_t n, uint64_t off)
{
	struct flfile *f = file;
	return f->o.gone ? -EIO : kit_bytes_read(fs, &f->b, buf, n, off);
}

/* Writes and truncates change the bytes now and the size at fsync. */
static long fl_write(void *fs, void *file, const void *buf, size_t n, uint64_t off)
{
	struct flfile *f = file;
	f->o.dirty = 1;
	f->m.mtime = libos_time_ns();
	return f->o.gone ? -EIO : kit_bytes_write(fs, &f->b, buf, n, off);
}

static int fl_truncate(void *fs, void *file, uint64_t len)
{
	struct flfile *f = file;
	f->o.dirty = 1;
	f->m.mtime = libos_time_ns();
	return f->o.gone ? -EIO : kit_bytes_truncate(fs, &f->b, len);
}

static int fl_fstat(void *fs, void *file, struct libfs_stat *st)
{
	struct flfile *f = file;
	int root = file == fs;
	kit_flat_stat(fs, root ? NULL : &f->o.r, root ? 0 : f->b.size, root ? 0 : f->m.mtime, st);
	return 0;
}

int flatfs_mkfs(const char *opts, uint64_t *sb)
{
	struct kit_flat fl;
	int e = kit_flat_mkfs(&fl, "flatfs", opts, KIT_ANCHOR_MAX_LEN);
	*sb = fl.k.anchor;
	return e;
}

const struct libfs_ops flatfs_ops = {
	.name = "flatfs",           .mkfs = flatfs_mkfs,     .name_max = KIT_NAME_MAX,
	.features = LIBFS_F_RENAME,
	.mount = fl_mount,          .unmount = fl_unmount,   .abandon = fl_abandon,
	.statfs = kit_flat_statfs,  .stat = fl_stat,         .unlink = kit_flat_unlink,
	.rename = kit_flat_rename,  .open = fl_open,         .close = fl_close,
	.read = fl_read,            .write = fl_write,       .fstat = fl_fstat,
	.truncate = fl_truncate,    .fsync = fl_fsync,       .readdir = kit_flat_readdir,
	.enter = kit_flat_enter,    .leave = kit_flat_leave,
};
