/*
 * kvfs.c - the example library file system of docs/writing-a-libfs.md: a
 * flat set of named values, after Aerie's KVFS (one collection of names,
 * get and put of whole values), built from the libFS kit (libos/kit/kit.h).
 *
 * On disk:
 *   anchor  the kit's anchor exonode, found from the key after a reboot;
 *           it holds the name table of the kit's flat directory (flat.c).
 *   value   an exonode, three to a sector: entry 0 is struct kv_meta, the
 *           bytes a byte store (bytes.c) from entry `first` - 1 or 128,
 *           taking turns, so that a put writes a whole new copy and one
 *           commit switches the value to it.
 *
 * Processes share it (docs/sharing.md): the kit's flat directory keeps the
 * names in an area they share and takes its lock around each operation.
 * Each open is a copy, so a value is seen as of its last put when opened
 * (close-to-open), and a put is whole: it reads which store is current
 * at that moment, since another process may have put since our get.
 *
 * An open value is read whole into memory (a get) and written back whole
 * when it is closed or fsynced (a put).  A put's bytes are durable (the
 * barrier) before the metadata that covers them is written back, so after
 * a crash a value is wholly the old or wholly the new.  The flat directory
 * keeps names honest the same way: a value is durable before its name, and
 * a name is durably gone before its value is freed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/kit/kit.h"
#include "libos/clock.h"
#include "userfs/kvfs/kvfs.h"

#define KV_VAL_LEN 160               /* three to a sector; room for 4 extents */
#define KV_MAX     (256u << 20)      /* a value is held in memory whole */

struct kv_meta {
	uint64_t size, mtime;
	uint32_t first, pad;             /* the byte store's first entry: 1 or 128 */
};

struct kvfile {                      /* allocated by the VFS (file_size) */
	struct kit_name r;               /* its name as opened; r.gen 0: the root */
	int dirty;
	struct kv_meta m;
	uint8_t *data;                   /* the value, m.size bytes */
};

/* Return from the function if e failed. */
#define TRY(e) do { int e_ = (e); if (e_ < 0) return e_; } while (0)

static int resize(struct kvfile *f, uint64_t n)
{
	uint8_t *d = n > KV_MAX ? NULL : realloc(f->data, n ? n : 1);
	if (d == NULL)
		return n > KV_MAX ? -EFBIG : -ENOMEM;
	if (n > f->m.size)
		memset(d + f->m.size, 0, n - f->m.size);
	f->data = d;
	f->m.size = n;
	return 0;
}

static int read_meta(struct kit_flat *fl, const struct kit_name *r, struct kv_meta *m)
{
	int n = kit_err(kit_xn_get(&fl->k, r->sector, r->slot, 0, m, sizeof *m));
	return n < 0 ? n : n != sizeof *m ? -EIO : 0;
}

/* Get: the whole value into memory. */
static int load(struct kit_flat *fl, struct kvfile *f)
{
	struct kit_name *r = &f->r;
	struct kit_bytes b;
	TRY(read_meta(fl, r, &f->m));
	TRY(kit_bytes_open(&fl->k, &b, r->sector, r->slot, (int)f->m.first, f->m.size));
	uint64_t size = f->m.size;
	f->m.size = 0;
	TRY(resize(f, size));
	long n = kit_bytes_read(&fl->k, &b, f->data, size, 0);
	return n < 0 ? (int)n : 0;
}

/* Put: the whole value into the other byte store, durably, then one commit
 * of metadata that switches to it and drops the old one. */
static int store(struct kit_flat *fl, struct kvfile *f)
{
	struct kit_name *r = &f->r;
	struct kv_meta m = f->m, cur;
	struct kit_bytes old, nb;
	if (kit_flat_named(fl, r->sector, r->slot, r->gen) < 0)
		return 0;                    /* unlinked while open: nothing to keep */
	TRY(read_meta(fl, r, &cur));     /* the current store: others may have put */
	m.first = cur.first == 1 ? 128 : 1;
	m.mtime = libos_time_ns();
	/* (The new copy's entries may hold extents a crash left: reused.) */
	int e = kit_bytes_open(&fl->k, &old, r->sector, r->slot, (int)cur.first, 0);
	if (e == 0)
		e = kit_bytes_open(&fl->k, &nb, r->sector, r->slot, (int)m.first, 0);
	long n = e < 0 ? e : kit_bytes_write(&fl->k, &nb, f->data, m.size, 0);
	e = n < 0 ? (int)n : kit_barrier(&fl->k);
	if (e == 0)
		e = kit_err(kit_xn_put(&fl->k, r->sector, r->slot, 0, &m, sizeof m));
	if (e < 0) {
		nb.size = 0;                 /* give the new copy back: the old stays */
		kit_bytes_trim(&fl->k, &nb);
		return e;
	}
	f->m = m;
	f->dirty = 0;
	TRY(kit_bytes_trim(&fl->k, &old));
	return kit_commit(&fl->k, r->sector, r->slot);
}

/* ---- the operations ------------------------------------------------------------ */

static int kv_mount(const char *opts, void **fsp)
{
	struct kit_flat *fl = malloc(sizeof *fl);
	int e = fl ? kit_flat_mount(fl, "kvfs", opts, KV_VAL_LEN) : -ENOMEM;
	if (e < 0)
		free(fl);
	else
		*fsp = fl;
	return e;
}

static void kv_abandon(void *fs)
{
	kit_flat_free(fs);
	free(fs);
}

static int kv_unmount(void *fs)
{
	kit_unmount(fs);
	kv_abandon(fs);
	return 0;
}

static int kv_stat(void *fs, const char *path, struct libfs_stat *st)
{
	struct kv_meta m = { 0 };
	struct kit_flat *fl = fs;
	int i = kit_flat_lookup(fl, path, 0);
	if (i >= 0)
		TRY(read_meta(fl, &fl->v[i], &m));
	else if (i != KIT_ROOT)
		return i;
	kit_flat_stat(fl, i < 0 ? NULL : &fl->v[i], m.size, m.mtime, st);
	return 0;
}

static int kv_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	struct kit_flat *fl = fs;
	struct kvfile *f = *file;
	struct kv_meta m = { 0, libos_time_ns(), 1, 0 };
	int i = kit_flat_open(fl, path, flags, &m, sizeof m);
	if (i < 0 && i != KIT_ROOT)
		return i;
	if (i >= 0)
		f->r = fl->v[i];
	int e = i >= 0 ? load(fl, f) : 0;
	if (e == 0 && (flags & LIBFS_O_TRUNC) && f->m.size > 0) {
		f->dirty = 1;
		e = resize(f, 0);
	}
	if (e < 0)
		free(f->data);
	return e;
}

static void kv_forget(void *fs, void *file)
{
	free(((struct kvfile *)file)->data);
}

static int kv_fsync(void *fs, void *file)
{
	struct kvfile *f = file;
	return f->dirty ? store(fs, f) : 0;
}

static int kv_close(void *fs, void *file)
{
	int e = kv_fsync(fs, file);
	kv_forget(fs, file);
	return e;
}

static long kv_read(void *fs, void *file, void *buf, size_t n, uint64_t off)
{
	struct kvfile *f = file;
	if (off >= f->m.size)
		return 0;
	n = n < f->m.size - off ? n : (size_t)(f->m.size - off);
	memcpy(buf, f->data + off, n);
	return (long)n;
}

static long kv_write(void *fs, void *file, const void *buf, size_t n, uint64_t off)
{
	struct kvfile *f = file;
	if (off + n > f->m.size)
		TRY(resize(f, off + n));
	memcpy(f->data + off, buf, n);
	f->dirty = 1;
	return (long)n;
}

static int kv_truncate(void *fs, void *file, uint64_t len)
{
	struct kvfile *f = file;
	f->dirty = 1;
	return resize(f, len);
}

static int kv_fstat(void *fs, void *file, struct libfs_stat *st)
{
	struct kvfile *f = file;
	kit_flat_stat(fs, f->r.gen ? &f->r : NULL, f->m.size, f->m.mtime, st);
	return 0;
}

int kvfs_mkfs(const char *opts, uint64_t *sb)
{
	struct kit_flat fl;
	int e = kit_flat_mkfs(&fl, "kvfs", opts, KIT_ANCHOR_MAX_LEN);
	*sb = fl.k.anchor;
	return e;
}

const struct libfs_ops kvfs_ops = {
	.name = "kvfs",             .mkfs = kvfs_mkfs,       .name_max = KIT_NAME_MAX,
	.features = LIBFS_F_RENAME | LIBFS_F_ATOMIC,         .file_max = KV_MAX,
	.mount = kv_mount,          .unmount = kv_unmount,   .abandon = kv_abandon,
	.statfs = kit_flat_statfs,  .stat = kv_stat,         .unlink = kit_flat_unlink,
	.rename = kit_flat_rename,  .open = kv_open,         .close = kv_close,
	.read = kv_read,            .write = kv_write,       .fstat = kv_fstat,
	.truncate = kv_truncate,    .fsync = kv_fsync,       .readdir = kit_flat_readdir,
	.forget = kv_forget,        .file_size = sizeof(struct kvfile),
	.enter = kit_flat_enter,    .leave = kit_flat_leave,
};
