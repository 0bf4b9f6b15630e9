/*
 * kvfs.c - the example library file system of docs/writing-a-libfs.md: a
 * flat set of named values over the exodisk, after Aerie's KVFS (a single
 * collection of names, each value one object holding one extent, get and
 * put of whole values).
 *
 * On disk:
 *   superblock  an exonode (slot 0 of a one-sector block) whose data entry
 *               0 is struct kv_super and whose extent entry 1 is the index;
 *               mkfs puts it at the first free sector, a mount finds it as
 *               unixfs does (the first exonode that opens with the key).
 *   index       an array of 64-byte records {name, where the value's
 *               exonode is, generation, checksum}.  A record counts only if
 *               its checksum (keyed by the owner's key and this file
 *               system's id) is right, so the index needs no initialising
 *               and a torn or stale sector reads as free records.
 *   value       an exonode: data entry 0 is struct kv_meta (size, and which
 *               entry holds the extent), extent entry 1 or 2 the bytes.
 *   lock        as unixfs: an exonode allocated at super+1 while mounted.
 *
 * An open value is read whole into memory and written back whole when it
 * is closed (or fsynced), like Aerie's get and put; a put goes to a new
 * extent, so it replaces the value atomically.  The order of writes keeps
 * every durable pointer honest: a value's exonode is written back before
 * the index names it; new bytes go to the disk, then a flush, then the
 * metadata that covers them; a name is erased, then a flush, then the
 * exonode is freed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "libos/edc.h"
#include "libos/capkey.h"
#include "libos/clock.h"
#include "kernel/exodisk/siphash.h"
#include "userfs/kvfs/kvfs.h"

#define KV_MAGIC     0x315346564bull   /* "KVFS1" */
#define KV_NAME_MAX  39
#define KV_SUPER_LEN 160
#define KV_VAL_LEN   152               /* header, metadata, two extents */
#define KV_VPB       3                 /* value exonodes per block      */
#define KV_REC       64

struct kv_super {
	uint64_t magic;
	uint64_t fsid;
	uint32_t nslots;          /* index records */
	uint32_t pad;
	uint64_t index;           /* first sector of the index extent */
	uint64_t reserved;        /* zero */
};

struct kv_rec {
	char     name[KV_NAME_MAX + 1];   /* NUL-terminated; "" = free */
	uint32_t gen;
	uint32_t slot;
	uint64_t sector;          /* the value's exonode */
	uint64_t sum;             /* siphash of the above, keyed */
};
_Static_assert(sizeof(struct kv_rec) == KV_REC, "index record size");

struct kv_meta {
	uint64_t magic;
	uint32_t gen;
	uint32_t ent;             /* entry holding the extent, 0: none */
	uint64_t size, start, nsect, mtime;
};

struct kv {
	struct edc *c;
	int unit;
	struct capkey key;
	struct edc_fm fm;
	uint64_t sbsec;
	struct kv_super sb;
	struct kv_rec *index;
	uint64_t blk_hint;        /* a block of values that may have a free slot */
	struct kvfile *files;
};

struct kvfile {
	struct kvfile *next;
	int rec;                  /* index record; -1 for the root directory */
	struct kv_meta m;
	uint8_t *data;
	size_t cap;
	int dirty;
};

/* ---- the exodisk, with the one retry every call needs ---------------------- */

static struct ed_protector prot(struct kv *kv, uint64_t sector, uint32_t slot)
{
	struct ed_cap rc = capkey_cap(&kv->key, 'r', sector, slot);
	struct ed_cap wc = capkey_cap(&kv->key, 'w', sector, slot);
	return edc_prot_xn(kv->unit, sector, (uint16_t)slot, &rc, &wc);
}

/* The exodisk cache may have dropped the exonode: read it back in once. */
static int again(struct kv *kv, int64_t r, const struct ed_protector *p, int *tries)
{
	return r == ED_E_NOTCACHED && (*tries)++ == 0 && edc_xn_read_sync(kv->c, p) == 0;
}

/* r = call, read the exonode named by p in and call again if it was not
 * cached. */
#define RETRY(kv, p, r, call) do { int t_ = 0; \
	do (r) = (call); while (again((kv), (r), &(p), &t_)); } while (0)

static int err(int64_t r)
{
	return r >= 0 ? 0 : -edc_errno(r);
}

/* Make every completed write durable (libos/edc.h: edc_flush). */
static int kv_flush(struct kv *kv)
{
	return err(edc_flush(kv->c, kv->unit));
}

static int commit(struct kv *kv, struct ed_protector *p)
{
	int64_t r;
	RETRY(kv, *p, r, edc_xn_write_sync(kv->c, p));
	return r == ED_E_CLEAN ? 0 : err(r);
}

/* ---- the index ------------------------------------------------------------- */

static uint64_t rec_sum(struct kv *kv, const struct kv_rec *r)
{
	struct siphash s;
	sip_init(&s, kv->key.k, false);
	sip_update64(&s, kv->sb.fsid);
	sip_update(&s, r, offsetof(struct kv_rec, sum));
	return sip_final64(&s);
}

static int rec_live(struct kv *kv, const struct kv_rec *r)
{
	return r->name[0] != 0 && memchr(r->name, 0, sizeof r->name) != NULL &&
	       r->sum == rec_sum(kv, r);
}

static int find(struct kv *kv, const char *name)
{
	for (uint32_t i = 0; i < kv->sb.nslots; i++)
		if (rec_live(kv, &kv->index[i]) && strcmp(kv->index[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Write the sector holding record i. */
static int put_rec(struct kv *kv, int i)
{
	struct kv_rec *r = &kv->index[i];
	if (r->name[0])
		r->sum = rec_sum(kv, r);
	else
		memset(r, 0, sizeof *r);
	uint32_t first = (uint32_t)i / (ED_SECTOR / KV_REC) * (ED_SECTOR / KV_REC);
	struct ed_protector p = prot(kv, kv->sbsec, 0);
	int64_t w;
	RETRY(kv, p, w, edc_write(kv->c, &p, kv->sb.index + first / (ED_SECTOR / KV_REC),
	                          &kv->index[first], ED_SECTOR));
	return err(w);
}

static int name_ok(const char *name)
{
	if (name[0] == 0 || strchr(name, '/'))
		return -ENOENT;      /* kvfs is flat: no directories to look in */
	return strlen(name) > KV_NAME_MAX ? -ENAMETOOLONG : 0;
}

/* ---- values ------------------------------------------------------------------ */

static int read_meta(struct kv *kv, int i, struct kv_meta *m)
{
	struct ed_protector p = prot(kv, kv->index[i].sector, kv->index[i].slot);
	int64_t r;
	RETRY(kv, p, r, edc_xn_read_data(kv->c, &p, 0, m, sizeof *m));
	if (r < 0)
		return r == ED_E_NOMEM ? -ENOMEM : -EIO;
	if (r != sizeof *m || m->magic != KV_MAGIC || m->gen != kv->index[i].gen ||
	    (m->ent != 0 && m->ent != 1 && m->ent != 2) || m->size > m->nsect * ED_SECTOR)
		return -EIO;
	return 0;
}

static int grow(struct kvfile *f, size_t n)
{
	if (n <= f->cap)
		return 0;
	size_t cap = f->cap ? f->cap : 4096;
	while (cap < n)
		cap *= 2;
	uint8_t *d = realloc(f->data, cap);
	if (d == NULL)
		return -ENOMEM;
	memset(d + f->cap, 0, cap - f->cap);
	f->data = d;
	f->cap = cap;
	return 0;
}

/* Read a whole value into memory ("get"). */
static int load(struct kv *kv, struct kvfile *f)
{
	int e = read_meta(kv, f->rec, &f->m);
	if (e == 0)
		e = grow(f, f->m.nsect * ED_SECTOR);
	if (e < 0 || f->m.size == 0)
		return e;
	const struct kv_rec *r = &kv->index[f->rec];
	struct ed_protector p = prot(kv, r->sector, r->slot);
	uint64_t bytes = (f->m.size + ED_SECTOR - 1) / ED_SECTOR * ED_SECTOR;
	int64_t x;
	RETRY(kv, p, x, edc_read(kv->c, &p, f->m.start, f->data, bytes));
	return err(x);
}

/* Write a whole value back ("put").  The bytes always go to a new extent
 * (entries 1 and 2 take turns), made durable before one commit switches the
 * metadata to it and drops the old one: after a crash a value is wholly the
 * old one or wholly the new, never a mixture. */
static int store(struct kv *kv, struct kvfile *f)
{
	const struct kv_rec *r = &kv->index[f->rec];
	struct ed_protector p = prot(kv, r->sector, r->slot);
	struct kv_meta m = f->m;
	uint64_t need = (m.size + 4095) / 4096 * 8;
	int64_t x = 0;
	m.ent = 0;
	m.start = m.nsect = 0;
	if (need > 0) {
		m.ent = f->m.ent == 1 ? 2 : 1;
		m.nsect = need;
		uint64_t goal = f->m.nsect ? f->m.start : r->sector;
		/* The free map is live, but another process may take the run
		 * between our look and our request: then look again. */
		for (int tries = 0; tries < 8; tries++) {
			m.start = edc_fm_find(&kv->fm, goal, need, 8);
			if (m.start == UINT64_MAX)
				return -ENOSPC;
			RETRY(kv, p, x, edc_xn_add_extent(kv->c, &p, (int)m.ent, m.start,
			                                  need * ED_SECTOR));
			if (x != ED_E_ALLOCATED)
				break;
		}
		if (x < 0)
			return x == ED_E_ALLOCATED ? -ENOSPC : err(x);
	}
	int e = grow(f, need * ED_SECTOR);
	uint64_t bytes = (m.size + ED_SECTOR - 1) / ED_SECTOR * ED_SECTOR;
	if (e == 0 && bytes > 0) {
		RETRY(kv, p, x, edc_write(kv->c, &p, m.start, f->data, bytes));
		e = err(x);
	}
	/* The bytes are durable before the metadata that covers them. */
	if (e == 0)
		e = kv_flush(kv);
	if (e == 0) {
		m.mtime = libos_time_ns();
		RETRY(kv, p, x, edc_xn_add_data(kv->c, &p, 0, &m, sizeof m));
		e = err(x);
	}
	if (e == 0 && f->m.ent != 0) {
		RETRY(kv, p, x, edc_xn_remove(kv->c, &p, (int)f->m.ent));
		e = err(x);
	}
	if (e == 0)
		e = commit(kv, &p);
	if (e < 0) {
		/* Give back the new extent; the old value stays as it was. */
		if (m.ent != 0)
			RETRY(kv, p, x, edc_xn_remove(kv->c, &p, (int)m.ent));
		return e;
	}
	f->m = m;
	f->dirty = 0;
	return 0;
}

/* Allocate a value exonode at (b, slot) with empty metadata and write it
 * back.  0, or an exodisk code. */
static int64_t make_value(struct kv *kv, uint64_t b, uint32_t slot, uint32_t gen)
{
	struct kv_meta m = { KV_MAGIC, gen, 0, 0, 0, 0, libos_time_ns() };
	struct ed_protector p = prot(kv, b, slot);
	p.length = KV_VAL_LEN;
	int64_t r;
	RETRY(kv, p, r, edc_xn_alloc(kv->c, &p));
	if (r == 0)
		r = edc_xn_add_data(kv->c, &p, 0, &m, sizeof m);
	if (r >= 0)
		r = edc_xn_write_sync(kv->c, &p);
	return r < 0 ? r : 0;
}

/* A new value: in a free slot of the last block used, else in a new block. */
static int create(struct kv *kv, uint64_t *sector, uint32_t *slot, uint32_t gen)
{
	for (uint32_t s = 0; kv->blk_hint != 0 && s < KV_VPB; s++) {
		int64_t r = make_value(kv, kv->blk_hint, s, gen);
		if (r == 0) {
			*sector = kv->blk_hint;
			*slot = s;
			return 0;
		}
		if (r != ED_E_SLOT)
			break;            /* not a block of values any more */
	}
	kv->blk_hint = 0;
	uint64_t goal = kv->sbsec + 2;
	for (int tries = 0; tries < 8; tries++) {
		uint64_t b = edc_fm_find(&kv->fm, goal, 1, 1);
		if (b == UINT64_MAX)
			return -ENOSPC;
		int64_t r = make_value(kv, b, 0, gen);
		if (r == 0) {
			kv->blk_hint = *sector = b;
			*slot = 0;
			return 0;
		}
		/* Taken meanwhile: an extent, or another's exonode block. */
		if (r != ED_E_ALLOCATED && r != ED_E_NOTCACHED && r != ED_E_SLOT &&
		    r != ED_E_KIND && r != ED_E_XNSIZE)
			return err(r);
		goal = b + 1;
	}
	return -ENOSPC;
}

/* ---- the operations ----------------------------------------------------------- */

static int kv_setup(struct kv *kv, const char *opts)
{
	char v[32];
	memset(kv, 0, sizeof *kv);
	kv->c = edc_default();
	if (kv->c == NULL)
		return -ENODEV;
	kv->unit = libfs_opt(opts, "unit", v, sizeof v) == 1 ? atoi(v) : 0;
	if (capkey_from_opts(&kv->key, "kvfs", opts) < 0)
		return -EINVAL;
	return edc_fm_open(kv->c, kv->unit, &kv->fm) == 0 ? 0 : -ENODEV;
}

static int read_super(struct kv *kv, uint64_t s)
{
	struct ed_protector p = prot(kv, s, 0);
	int64_t r;
	RETRY(kv, p, r, edc_xn_read_data(kv->c, &p, 0, &kv->sb, sizeof kv->sb));
	if (r == ED_E_CAP)
		return -EACCES;
	if (r != sizeof kv->sb || kv->sb.magic != KV_MAGIC || kv->sb.nslots == 0 ||
	    kv->sb.nslots % (ED_SECTOR / KV_REC) != 0 || kv->sb.nslots > 65536)
		return -ENODEV;
	kv->sbsec = s;
	return 0;
}

static int kv_mount(const char *opts, void **fsp)
{
	struct kv *kv = malloc(sizeof *kv);
	if (kv == NULL)
		return -ENOMEM;
	int e = kv_setup(kv, opts);
	char v[32];
	if (e == 0 && libfs_opt(opts, "sb", v, sizeof v) == 1) {
		e = read_super(kv, strtoull(v, NULL, 0));
	} else if (e == 0) {
		e = -ENODEV;
		for (uint64_t s = 0; s < kv->fm.nsectors && e != 0; s += 8)
			if (edc_fm_test(&kv->fm, s) && read_super(kv, s) == 0)
				e = 0;
	}
	if (e < 0) {
		free(kv);
		return e;
	}
	/* One process at a time (see unixfs's super.c). */
	struct ed_protector lk = prot(kv, kv->sbsec + 1, 0);
	lk.length = 64;
	int64_t r = edc_xn_alloc(kv->c, &lk);
	e = r == 0 ? 0 : r == ED_E_SLOT || r == ED_E_ALLOCATED ? -EBUSY : err(r);
	size_t bytes = (size_t)kv->sb.nslots * KV_REC;
	if (e == 0 && (kv->index = malloc(bytes)) == NULL)
		e = -ENOMEM;
	if (e == 0) {
		struct ed_protector p = prot(kv, kv->sbsec, 0);
		RETRY(kv, p, r, edc_read(kv->c, &p, kv->sb.index, kv->index, bytes));
		if ((e = err(r)) < 0)
			free(kv->index);
	}
	if (e < 0) {
		if (e != -EBUSY)
			edc_xn_dealloc(kv->c, &lk);
		free(kv);
		return e;
	}
	*fsp = kv;
	return 0;
}

static void kv_abandon(void *fsp)
{
	struct kv *kv = fsp;
	while (kv->files) {
		struct kvfile *f = kv->files;
		kv->files = f->next;
		free(f->data);
		free(f);
	}
	free(kv->index);
	free(kv);
}

static int kv_sync(void *fsp)
{
	struct kv *kv = fsp;
	int first = 0;
	for (struct kvfile *f = kv->files; f; f = f->next)
		if (f->dirty) {
			int e = store(kv, f);
			if (e < 0 && first == 0)
				first = e;
		}
	return first;
}

static int kv_unmount(void *fsp)
{
	struct kv *kv = fsp;
	int e = kv_sync(kv);
	struct ed_protector lk = prot(kv, kv->sbsec + 1, 0);
	edc_xn_dealloc(kv->c, &lk);
	kv_abandon(kv);
	return e;
}

static int kv_statfs(void *fsp, struct libfs_statfs *st)
{
	struct kv *kv = fsp;
	strcpy(st->type, "kvfs");
	st->bsize = 4096;
	st->blocks = kv->fm.nsectors / 8;
	st->bfree = edc_fm_count_free(&kv->fm) / 8;
	for (uint32_t i = 0; i < kv->sb.nslots; i++) {
		if (rec_live(kv, &kv->index[i]))
			st->files++;
		else
			st->ffree++;
	}
	return 0;
}

static void fill_stat(struct kv *kv, int rec, const struct kv_meta *m, struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	if (rec < 0) {
		st->type = LIBFS_T_DIR;
		st->ino = kv->sbsec * 8;
		st->nlink = 2;
		st->perm = 0755;
		return;
	}
	st->type = LIBFS_T_REG;
	st->ino = kv->index[rec].sector * 8 + kv->index[rec].slot;
	st->nlink = 1;
	st->perm = 0644;
	st->size = m->size;
	st->blocks = 1 + m->nsect;
	st->mtime = st->ctime = m->mtime;
}

static int kv_stat(void *fsp, const char *path, struct libfs_stat *st)
{
	struct kv *kv = fsp;
	if (path[0] == 0) {
		fill_stat(kv, -1, NULL, st);
		return 0;
	}
	int e = name_ok(path);
	if (e < 0)
		return e;
	int i = find(kv, path);
	if (i < 0)
		return -ENOENT;
	struct kv_meta m;
	if ((e = read_meta(kv, i, &m)) < 0)
		return e;
	fill_stat(kv, i, &m, st);
	return 0;
}

static int kv_open(void *fsp, const char *path, int flags, uint32_t perm, void **file)
{
	struct kv *kv = fsp;
	struct kvfile *f = calloc(1, sizeof *f);
	if (f == NULL)
		return -ENOMEM;
	int e = 0;
	f->rec = -1;
	if (path[0] == 0) {
		if (flags & LIBFS_O_WRITE)
			e = -EISDIR;
	} else if ((flags & LIBFS_O_DIR) != 0) {
		/* There is one directory: the root. */
		e = name_ok(path);
		if (e == 0)
			e = find(kv, path) >= 0 ? -ENOTDIR : -ENOENT;
	} else if ((e = name_ok(path)) == 0) {
		f->rec = find(kv, path);
		if (f->rec >= 0 && (flags & LIBFS_O_CREAT) && (flags & LIBFS_O_EXCL)) {
			e = -EEXIST;
		} else if (f->rec < 0 && !(flags & LIBFS_O_CREAT)) {
			e = -ENOENT;
		} else if (f->rec < 0) {
			/* A free record, a new value, then the name. */
			uint32_t i = 0;
			while (i < kv->sb.nslots && rec_live(kv, &kv->index[i]))
				i++;
			if (i == kv->sb.nslots) {
				e = -ENOSPC;
			} else {
				struct kv_rec *r = &kv->index[i];
				memset(r, 0, sizeof *r);
				r->gen = (uint32_t)libos_time_ns() | 1;
				e = create(kv, &r->sector, &r->slot, r->gen);
				if (e == 0) {
					strcpy(r->name, path);
					e = put_rec(kv, (int)i);
				}
				if (e < 0)
					memset(r, 0, sizeof *r);
				f->rec = (int)i;
			}
		}
		if (e == 0)
			e = load(kv, f);
		if (e == 0 && (flags & LIBFS_O_TRUNC) && f->m.size > 0) {
			f->m.size = 0;
			f->dirty = 1;
		}
	}
	if (e < 0) {
		free(f->data);
		free(f);
		return e;
	}
	f->next = kv->files;
	kv->files = f;
	*file = f;
	return 0;
}

static int kv_close(void *fsp, void *file)
{
	struct kv *kv = fsp;
	struct kvfile *f = file, **pp = &kv->files;
	int e = f->dirty ? store(kv, f) : 0;
	while (*pp != f)
		pp = &(*pp)->next;
	*pp = f->next;
	free(f->data);
	free(f);
	return e;
}

static long kv_read(void *fsp, void *file, void *buf, size_t n, uint64_t off)
{
	struct kvfile *f = file;
	if (f->rec < 0)
		return -EISDIR;
	if (off >= f->m.size)
		return 0;
	if (n > f->m.size - off)
		n = (size_t)(f->m.size - off);
	memcpy(buf, f->data + off, n);
	return (long)n;
}

static long kv_write(void *fsp, void *file, const void *buf, size_t n, uint64_t off)
{
	struct kvfile *f = file;
	if (off + n > (uint64_t)256 * 1024 * 1024)
		return -EFBIG;        /* a value is held in memory whole */
	int e = grow(f, off + n);
	if (e < 0)
		return e;
	if (off > f->m.size)
		memset(f->data + f->m.size, 0, off - f->m.size);
	memcpy(f->data + off, buf, n);
	if (off + n > f->m.size)
		f->m.size = off + n;
	f->dirty = 1;
	return (long)n;
}

static int kv_fstat(void *fsp, void *file, struct libfs_stat *st)
{
	struct kvfile *f = file;
	fill_stat(fsp, f->rec, &f->m, st);
	return 0;
}

static int kv_truncate(void *fsp, void *file, uint64_t len)
{
	struct kvfile *f = file;
	if (len > (uint64_t)256 * 1024 * 1024)
		return -EFBIG;
	int e = grow(f, len);
	if (e < 0)
		return e;
	if (len > f->m.size)
		memset(f->data + f->m.size, 0, len - f->m.size);
	else
		memset(f->data + len, 0, f->m.size - len);
	f->m.size = len;
	f->dirty = 1;
	return 0;
}

static int kv_fsync(void *fsp, void *file)
{
	struct kvfile *f = file;
	return f->dirty ? store(fsp, f) : 0;
}

static int kv_readdir(void *fsp, void *dir, uint64_t *cookie, struct libfs_dirent *de)
{
	struct kv *kv = fsp;
	for (; *cookie < kv->sb.nslots; (*cookie)++) {
		const struct kv_rec *r = &kv->index[*cookie];
		if (rec_live(kv, r)) {
			de->ino = r->sector * 8 + r->slot;
			de->type = LIBFS_T_REG;
			strcpy(de->name, r->name);
			(*cookie)++;
			return 1;
		}
	}
	return 0;
}

static int kv_unlink(void *fsp, const char *path)
{
	struct kv *kv = fsp;
	int e = name_ok(path);
	int i = e == 0 ? find(kv, path) : -1;
	if (e < 0 || i < 0)
		return e < 0 ? e : path[0] ? -ENOENT : -EISDIR;
	struct kv_rec old = kv->index[i];
	/* The name goes first, durably; then the value. */
	memset(&kv->index[i], 0, sizeof old);
	e = put_rec(kv, i);
	if (e == 0)
		e = kv_flush(kv);
	if (e < 0) {
		kv->index[i] = old;
		return e;
	}
	struct ed_protector p = prot(kv, old.sector, old.slot);
	int64_t r;
	RETRY(kv, p, r, edc_xn_dealloc(kv->c, &p));
	e = err(r);
	if (e == 0)
		e = commit(kv, &p);
	return e;
}

static int kv_rename(void *fsp, const char *from, const char *to)
{
	struct kv *kv = fsp;
	int e = name_ok(from);
	if (e == 0)
		e = name_ok(to);
	if (e < 0)
		return e;
	int i = find(kv, from);
	if (i < 0)
		return -ENOENT;
	if (strcmp(from, to) == 0)
		return 0;
	/* Replacing: the old value goes first.  A crash between the two
	 * writes loses `to` and keeps `from`: never two names for one value. */
	if (find(kv, to) >= 0 && (e = kv_unlink(kv, to)) < 0)
		return e;
	struct kv_rec old = kv->index[i];
	strcpy(kv->index[i].name, to);
	e = put_rec(kv, i);
	if (e < 0)
		kv->index[i] = old;
	return e;
}

int kvfs_mkfs(const char *opts, uint64_t *sbp)
{
	struct kv kv;
	int e = kv_setup(&kv, opts);
	if (e < 0)
		return e;
	char v[32];
	uint32_t nslots = libfs_opt(opts, "slots", v, sizeof v) == 1 ? (uint32_t)atoi(v) : 512;
	nslots = (nslots + 7) / 8 * 8;
	if (nslots == 0 || nslots > 65536)
		return -EINVAL;
	uint64_t s = edc_fm_find(&kv.fm, 0, 2, 8);         /* superblock and lock */
	uint64_t nsect = nslots / (ED_SECTOR / KV_REC);
	uint64_t ix = s == UINT64_MAX ? s : edc_fm_find(&kv.fm, s + 2, nsect, 8);
	if (ix == UINT64_MAX)
		return -ENOSPC;
	kv.sbsec = s;
	kv.sb = (struct kv_super){ KV_MAGIC, libos_time_ns() ^ (s << 20), nslots, 0, ix, 0 };
	struct ed_protector p = prot(&kv, s, 0);
	p.length = KV_SUPER_LEN;
	int64_t r = edc_xn_alloc(kv.c, &p);
	if (r == 0)
		r = edc_xn_add_extent(kv.c, &p, 1, ix, nsect * ED_SECTOR);
	if (r >= 0)
		r = edc_xn_add_data(kv.c, &p, 0, &kv.sb, sizeof kv.sb);
	/* The index needs no zeroing: records are checked by their sums, and
	 * the new fsid makes an old index's records wrong. */
	if (r >= 0)
		r = edc_xn_write_sync(kv.c, &p);
	if (r < 0)
		return err(r);
	*sbp = s;
	return 0;
}

const struct libfs_ops kvfs_ops = {
	.name = "kvfs",
	.mount = kv_mount,
	.unmount = kv_unmount,
	.sync = kv_sync,
	.statfs = kv_statfs,
	.stat = kv_stat,
	.unlink = kv_unlink,
	.rename = kv_rename,
	.open = kv_open,
	.close = kv_close,
	.read = kv_read,
	.write = kv_write,
	.fstat = kv_fstat,
	.truncate = kv_truncate,
	.fsync = kv_fsync,
	.readdir = kv_readdir,
	.abandon = kv_abandon,
};
