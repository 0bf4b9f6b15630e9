/*
 * flat.c - the directory of a flat file system: one table of names, each
 * naming a file that is one exonode, and the operations that touch only
 * names (statfs, readdir, unlink, rename, lookup and create for open).
 * kvfs and flatfs are built on it; a file system with directories, or with
 * a directory format of its own (FAT's, a log's), keeps its own instead.
 *
 * A file system using it starts its state with struct kit_flat, so that
 * kit_flat_statfs, _readdir, _unlink and _rename can go straight into its
 * struct libfs_ops.  Its open files may share their state through
 * kit_flat_hold (one struct per file, however often it is open), and the
 * kit marks that state `gone` when the file's name is removed: the file is
 * freed then, and its exonode may soon be another file's.
 *
 * On disk the table is a byte store (bytes.c) on the anchor exonode, from
 * entry 2, of 64-byte records (struct kit_name); its size in bytes is the
 * anchor's data entry 1.  An empty name is a free record.  It doubles
 * when full (so its extents stay few: the anchor has room for only a
 * handful): the byte store writes the new records as zeros, a barrier,
 * then the anchor records the new size - so the table never holds
 * anything but records.  mkfs's slots=N sets its first size.
 * A file is an exonode from the pool (kit_alloc_xn); its entry 0 is the
 * file system's metadata, the rest its own.
 *
 * In memory the table is read whole at mount, into an area every process
 * that mounts the file system shares (docs/sharing.md): the first to mount
 * reads it, the others find it there.  Every operation holds the area's
 * lock (kit_flat_enter, _leave); a process that comes back to the file
 * system after others changed it marks its open files whose names went as
 * gone and reloads the others (fl->reload); and one that finds the lock
 * left by a process that died holding it reads the table again from the
 * disk, which is what it would find after a crash.  A change writes the
 * record's sector, then a barrier, so it is durable when the call returns.
 * A record is a pointer: a new file's exonode is written back before its
 * name is, and a file is freed only after its name is durably gone.  A
 * crash can leave a file no name points to (space lost), never a name
 * pointing to nothing.
 *
 * Renaming is atomic, also over an existing name: the target's record is
 * rewritten to name the renamed file, with a note of the record it came
 * from (`from`, the record's index + 1); then the old record is erased;
 * then the replaced file is freed.  After a crash between the first two
 * writes two records name one file, and the note says which one is stale:
 * a mount erases it.  So `to` always names either file, and never do two
 * names stay for one file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/kit/kit.h"
#include "libos/clock.h"

#define GROW     64
#define SIZE_ENT 1      /* the anchor's entry holding the table's size */
#define FIRST    2      /* its first extent entry */

/* The table becomes n records: zeros on disk, then its size in the anchor.
 * In memory it is the shared area's (mkfs: the process's own). */
static int resize(struct kit_flat *fl, uint32_t n)
{
	struct kit *k = &fl->k;
	struct kit_name *v = fl->v;
	if (fl->s != NULL && n > KIT_FLAT_MAX_NAMES)
		return -ENOSPC;
	if (fl->s != NULL && share_grow(&fl->sh, sizeof *fl->s + (size_t)n * sizeof *v) < 0)
		return -ENOMEM;
	if (fl->s == NULL && (v = realloc(fl->v, (size_t)n * sizeof *v)) == NULL)
		return -ENOMEM;
	memset(v + fl->n, 0, (size_t)(n - fl->n) * sizeof *v);
	fl->v = v;
	int e = kit_bytes_truncate(k, &fl->table, (uint64_t)n * sizeof *v);
	if (e == 0)
		e = kit_barrier(k);
	if (e == 0)
		e = kit_err(kit_xn_put(k, k->anchor, 0, SIZE_ENT, &fl->table.size, 8));
	if (e == 0)
		e = kit_commit(k, k->anchor, 0);
	if (e == 0)
		fl->n = n;
	return e;
}

/* Write record i's sector, then the barrier.  (Through a copy: the disk
 * does no I/O to or from shared pages.) */
static int put(struct kit_flat *fl, int i)
{
	int first = i / 8 * 8;
	struct kit_name sector[ED_SECTOR / sizeof(struct kit_name)];
	memcpy(sector, &fl->v[first], sizeof sector);
	long n = kit_bytes_write(&fl->k, &fl->table, sector, ED_SECTOR,
	                         (uint64_t)first * sizeof *fl->v);
	return n < 0 ? (int)n : kit_barrier(&fl->k);
}

/* Rename record i, or erase it (name ""), durably. */
static int set(struct kit_flat *fl, int i, const char *name)
{
	struct kit_name old = fl->v[i];
	if (name[0] == 0)
		memset(&fl->v[i], 0, sizeof old);
	else
		strcpy(fl->v[i].name, name);
	int e = put(fl, i);
	if (e < 0)
		fl->v[i] = old;
	return e;
}

void *kit_flat_hold(struct kit_flat *fl, const struct kit_name *r, size_t size)
{
	struct kit_open *o = fl->open;
	while (o != NULL && !(o->r.sector == r->sector && o->r.slot == r->slot && o->r.gen == r->gen))
		o = o->next;
	if (o == NULL && (o = calloc(1, size)) != NULL) {
		o->r = *r;
		o->next = fl->open;
		fl->open = o;
	}
	if (o != NULL)
		o->refs++;
	return o;
}

int kit_flat_drop(struct kit_flat *fl, void *state)
{
	struct kit_open *o = state, **pp = &fl->open;
	if (--o->refs > 0)
		return 0;
	while (*pp != o)
		pp = &(*pp)->next;
	*pp = o->next;
	free(o);
	return 1;
}

/* An open file whose name goes is freed: its state must touch nothing. */
static void gone(struct kit_flat *fl, const struct kit_name *r)
{
	for (struct kit_open *o = fl->open; o != NULL; o = o->next)
		if (o->r.sector == r->sector && o->r.slot == r->slot && o->r.gen == r->gen)
			o->gone = 1;
}

int kit_flat_mkfs(struct kit_flat *fl, const char *type, const char *opts, uint32_t anchor_len)
{
	uint64_t slots;
	memset(fl, 0, sizeof *fl);
	int e = kit_opt_num(opts, "slots", GROW, &slots);
	if (e == 0 && (slots == 0 || slots > 65536))
		e = -EINVAL;
	if (e == 0)
		e = kit_mkfs(&fl->k, type, opts, anchor_len);
	if (e < 0)
		return e;
	kit_bytes_init(&fl->table, fl->k.anchor, 0, FIRST);
	e = resize(fl, (uint32_t)(slots + GROW - 1) / GROW * GROW);
	kit_flat_free(fl);
	return e;
}

/* Read the table from the disk into the shared area. */
static int load(struct kit_flat *fl)
{
	uint64_t size = 0;
	static uint8_t buf[GROW * sizeof(struct kit_name)];
	int e = kit_err(kit_xn_get(&fl->k, fl->k.anchor, 0, SIZE_ENT, &size, sizeof size));
	if (e >= 0 && (e != sizeof size || size % sizeof buf != 0))
		e = -EIO;
	if (e >= 0 && size / sizeof *fl->v > KIT_FLAT_MAX_NAMES)
		e = -EFBIG;                           /* too many names to share */
	if (e >= 0)
		e = kit_bytes_open(&fl->k, &fl->table, fl->k.anchor, 0, FIRST, size);
	if (e == 0)
		e = share_grow(&fl->sh, sizeof *fl->s + size);
	for (uint64_t off = 0; e == 0 && off < size; off += sizeof buf) {
		if (kit_bytes_read(&fl->k, &fl->table, buf, sizeof buf, off) != (long)sizeof buf)
			e = -EIO;
		memcpy((uint8_t *)fl->v + off, buf, sizeof buf);
	}
	fl->n = e == 0 ? (uint32_t)(size / sizeof *fl->v) : 0;
	for (uint32_t i = 0; e == 0 && i < fl->n; i++)
		fl->v[i].name[KIT_NAME_MAX] = 0;      /* whatever the disk says */
	/* A rename a crash interrupted: finish it. */
	for (uint32_t j = 0; e == 0 && j < fl->n; j++) {
		uint32_t i = fl->v[j].from - 1;
		if (fl->v[j].from != 0 && i < fl->n && i != j && fl->v[i].name[0] &&
		    fl->v[i].sector == fl->v[j].sector && fl->v[i].slot == fl->v[j].slot)
			e = set(fl, (int)i, "");
	}
	return e;
}

int kit_flat_mount(struct kit_flat *fl, const char *type, const char *opts, uint32_t file_len)
{
	memset(fl, 0, sizeof *fl);
	fl->pool.len = file_len;
	int e = kit_open(&fl->k, type, opts);
	if (e == 0)
		e = kit_anchor_find(&fl->k, opts);
	if (e == 0)
		e = kit_share(&fl->k, &fl->sh, sizeof *fl->s + GROW * sizeof *fl->v);
	if (e < 0)
		return e;
	fl->s = (struct kit_flat_area *)fl->sh.a;
	fl->v = fl->s->v;
	if ((e = kit_flat_enter(fl, 0)) == 0)
		kit_flat_leave(fl);
	else
		kit_flat_free(fl);
	return e;
}

int kit_flat_enter(void *fs, int change)
{
	struct kit_flat *fl = fs;
	struct kit_flat_area *s = fl->s;
	int r = share_enter(&fl->sh), e = 0;
	if (r < 0)
		return r;
	fl->table = s->table;
	fl->n = s->n;
	if (r == SHARE_DEAD || !s->h.ready) {
		/* The first process here, or the last holder died: what it left
		 * in memory may be half changed; the disk says what is true. */
		s->h.ready = 0;
		if ((e = load(fl)) == 0)
			s->h.ready = 1;
		share_touch(&fl->sh);
		r = SHARE_CHANGED;
	}
	for (struct kit_open *o = fl->open; r == SHARE_CHANGED && e == 0 && o != NULL; o = o->next)
		if (!o->gone && kit_flat_named(fl, o->r.sector, o->r.slot, o->r.gen) < 0)
			o->gone = 1;
		else if (!o->gone && fl->reload != NULL)
			e = fl->reload(fl, o);
	if (change)
		share_touch(&fl->sh);
	if (e < 0)
		kit_flat_leave(fl);
	return e;
}

void kit_flat_leave(void *fs)
{
	struct kit_flat *fl = fs;
	/* What this process changed in an open file others must see. */
	for (struct kit_open *o = fl->open; o != NULL && share_sharers(&fl->sh) > 1; o = o->next)
		if (o->dirty && !o->gone && fl->publish != NULL)
			fl->publish(fl, o);
	fl->s->table = fl->table;
	fl->s->n = fl->n;
	share_leave(&fl->sh);
}

void kit_flat_free(struct kit_flat *fl)
{
	while (fl->open != NULL) {
		struct kit_open *o = fl->open;
		fl->open = o->next;
		free(o);
	}
	if (fl->s == NULL)
		free(fl->v);
	share_detach(&fl->sh);
	fl->s = NULL;
	fl->v = NULL;
	fl->n = 0;
}

int kit_flat_lookup(struct kit_flat *fl, const char *path, int flags)
{
	if (path[0] == 0)
		return flags & LIBFS_O_WRITE ? -EISDIR : KIT_ROOT;
	if (strchr(path, '/'))
		return -ENOENT;           /* flat: there is no directory to look in */
	if (strlen(path) > KIT_NAME_MAX)
		return -ENAMETOOLONG;
	int i = (int)fl->n - 1;
	while (i >= 0 && strcmp(fl->v[i].name, path) != 0)
		i--;
	if (flags & LIBFS_O_DIR)
		return i >= 0 ? -ENOTDIR : -ENOENT;
	if (i >= 0)
		return (flags & LIBFS_O_CREAT) && (flags & LIBFS_O_EXCL) ? -EEXIST : i;
	return flags & LIBFS_O_CREAT ? KIT_NEW : -ENOENT;
}

int kit_flat_open(struct kit_flat *fl, const char *path, int flags, const void *meta,
                  uint32_t len)
{
	struct kit *k = &fl->k;
	int i = kit_flat_lookup(fl, path, flags);
	if (i != KIT_NEW)
		return i;
	/* A new file: its exonode, durable, then its name. */
	uint32_t r = 0;
	while (r < fl->n && fl->v[r].name[0])
		r++;
	uint32_t twice = fl->s != NULL && fl->n * 2 > KIT_FLAT_MAX_NAMES ? KIT_FLAT_MAX_NAMES : fl->n * 2;
	int e = r < fl->n ? 0 : twice > fl->n ? resize(fl, twice) : -ENOSPC;
	uint64_t s;
	uint16_t slot;
	if (e == 0)
		e = kit_alloc_xn(k, &fl->pool, k->anchor, &s, &slot);
	if (e < 0)
		return e;
	e = kit_err(kit_xn_put(k, s, slot, 0, meta, len));
	if (e == 0)
		e = kit_commit(k, s, slot);
	if (e == 0) {
		struct kit_name *n = &fl->v[r];
		strcpy(n->name, path);
		n->sector = s;
		n->slot = slot;
		n->gen = (uint32_t)libos_time_ns() | 1;
		if ((e = put(fl, (int)r)) == 0)
			return (int)r;
		memset(n, 0, sizeof *n);
	}
	kit_xn_free(k, s, slot);
	kit_commit(k, s, slot);
	return e;
}

void kit_flat_stat(struct kit_flat *fl, const struct kit_name *r, uint64_t size, uint64_t mtime,
                   struct libfs_stat *st)
{
	memset(st, 0, sizeof *st);
	st->type = r == NULL ? LIBFS_T_DIR : LIBFS_T_REG;
	st->nlink = r == NULL ? 2 : 1;
	st->perm = r == NULL ? 0755 : 0644;
	st->ino = r == NULL ? fl->k.anchor * 8 : r->sector * 8 + r->slot;
	st->size = size;
	st->blocks = 1 + (size + ED_SECTOR - 1) / ED_SECTOR;
	st->mtime = st->ctime = mtime;
}

int kit_flat_statfs(void *fs, struct libfs_statfs *st)
{
	struct kit_flat *fl = fs;
	kit_statfs(&fl->k, st);
	for (uint32_t i = 0; i < fl->n; i++)
		st->files += fl->v[i].name[0] != 0;
	st->ffree = fl->n - st->files;
	return 0;
}

int kit_flat_readdir(void *fs, void *dir, uint64_t *cookie, struct libfs_dirent *de)
{
	struct kit_flat *fl = fs;
	while (*cookie < fl->n && fl->v[*cookie].name[0] == 0)
		(*cookie)++;
	if (*cookie >= fl->n)
		return 0;
	const struct kit_name *r = &fl->v[(*cookie)++];
	de->ino = r->sector * 8 + r->slot;
	de->type = LIBFS_T_REG;
	strcpy(de->name, r->name);
	return 1;
}

int kit_flat_unlink(void *fs, const char *path)
{
	struct kit_flat *fl = fs;
	int i = kit_flat_lookup(fl, path, 0);
	if (i < 0)
		return i == KIT_ROOT ? -EISDIR : i;
	struct kit_name old = fl->v[i];
	int e = set(fl, i, "");                   /* the name goes, durably; then the file */
	if (e == 0)
		gone(fl, &old);
	if (e == 0)
		e = kit_err(kit_xn_free(&fl->k, old.sector, old.slot));
	return e < 0 ? e : kit_commit(&fl->k, old.sector, old.slot);
}

int kit_flat_rename(void *fs, const char *from, const char *to)
{
	struct kit_flat *fl = fs;
	int i = kit_flat_lookup(fl, from, 0);
	int j = kit_flat_lookup(fl, to, LIBFS_O_CREAT);
	if (i == KIT_ROOT || j == KIT_ROOT)
		return -EBUSY;                        /* the root is the mount point */
	if (i < 0 || (j < 0 && j != KIT_NEW))
		return i < 0 ? i : j;
	if (i == j)
		return 0;
	if (j == KIT_NEW)
		return set(fl, i, to);                /* one record: atomic */
	/* Replacing: `to` names the file, noting where it came from; then the
	 * old name goes; then the replaced file (see the top of the file). */
	struct kit_name old = fl->v[j];
	fl->v[j] = fl->v[i];
	strcpy(fl->v[j].name, to);
	fl->v[j].from = (uint32_t)i + 1;
	int e = put(fl, j);
	if (e < 0) {
		fl->v[j] = old;
		return e;
	}
	if ((e = set(fl, i, "")) < 0)
		return e;
	gone(fl, &old);
	e = kit_err(kit_xn_free(&fl->k, old.sector, old.slot));
	return e < 0 ? e : kit_commit(&fl->k, old.sector, old.slot);
}

int kit_flat_named(struct kit_flat *fl, uint64_t sector, uint16_t slot, uint32_t gen)
{
	for (uint32_t i = 0; i < fl->n; i++)
		if (fl->v[i].name[0] && fl->v[i].sector == sector && fl->v[i].slot == slot &&
		    fl->v[i].gen == gen)
			return (int)i;
	return -1;
}
