/*
 * dir.c - directories.  A directory is a file (so it may be immediate, and
 * is cached and written like any other) of 256-byte chunks, each tiled by
 * records: a 16-byte header (inode number, generation, record length, name
 * length, type) and the name.  A free record has inode number 0.  Adding a
 * name takes a free record or the slack after a live one; removing one
 * gives its space to the record before it.  A chunk is never split across
 * sectors, so each change is one sector write on disk.
 *
 * Every record read is checked; a malformed one makes the operation fail
 * with -EIO and changes nothing.
 *
 * Names of memory-only files are never written here: the directory keeps
 * them in memory (uinode.memnames) and lookups consult both.
 *
 * A large directory gets, the first time a name is looked up in it, an
 * in-memory index from a hash of each name to its record's offset, kept up
 * to date by add and remove, so a lookup reads one chunk instead of all of
 * them.  Adding starts looking for room at a remembered chunk (the last one
 * added to, or the earliest one a name was removed from), so filling a
 * directory does not rescan it each time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define MEMCOOKIE (1ull << 63)
#define INDEX_MIN (4 * UFS_DIRCHUNK)   /* smaller directories are just scanned */

struct udirindex {
	uint32_t n, cap;
	struct { uint32_t h; uint64_t off; } *e;
};

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

void ufs_dir_forget_index(struct uinode *dir)
{
	if (dir->dx) {
		free(dir->dx->e);
		free(dir->dx);
		dir->dx = NULL;
	}
}

static void index_add(struct uinode *dir, const char *name, size_t n, uint64_t off)
{
	struct udirindex *x = dir->dx;
	if (x == NULL)
		return;
	if (x->n == x->cap) {
		uint32_t cap = x->cap ? x->cap * 2 : 64;
		void *e = realloc(x->e, cap * sizeof *x->e);
		if (e == NULL) {
			ufs_dir_forget_index(dir);   /* lookups scan again */
			return;
		}
		x->e = e;
		x->cap = cap;
	}
	x->e[x->n].h = name_hash(name, n);
	x->e[x->n++].off = off;
}

static void index_remove(struct uinode *dir, uint64_t off)
{
	struct udirindex *x = dir->dx;
	for (uint32_t i = 0; x && i < x->n; i++)
		if (x->e[i].off == off) {
			x->e[i] = x->e[--x->n];
			return;
		}
}

static uint32_t recsize(uint32_t namelen)
{
	return (UFS_DIRENT_HDR + namelen + 7) & ~7u;
}

/* Check one record at offset off of chunk c. */
static int rec_ok(const uint8_t *c, uint32_t off)
{
	const struct ufs_dirent *r = (const void *)(c + off);
	if (r->reclen < UFS_DIRENT_HDR || r->reclen % 8 != 0 || off + r->reclen > UFS_DIRCHUNK)
		return 0;
	if (r->ino == 0)
		return 1;
	if (r->namelen == 0 || recsize(r->namelen) > r->reclen ||
	    (r->type != UFS_T_REG && r->type != UFS_T_DIR))
		return 0;
	const char *name = (const char *)(r + 1);
	for (uint32_t i = 0; i < r->namelen; i++)
		if (name[i] == '/' || name[i] == 0)
			return 0;
	if ((r->namelen == 1 && name[0] == '.') ||
	    (r->namelen == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	return 1;
}

static int read_chunk(struct ufs *fs, struct uinode *dir, uint64_t off, uint8_t *c)
{
	long n = ufs_read(fs, dir, c, UFS_DIRCHUNK, off);
	if (n < 0)
		return (int)n;
	if (n != UFS_DIRCHUNK)
		return -EIO;
	/* The records must tile the chunk. */
	for (uint32_t o = 0; o < UFS_DIRCHUNK; o += ((struct ufs_dirent *)(c + o))->reclen)
		if (!rec_ok(c, o))
			return -EIO;
	return 0;
}

static int write_chunk(struct ufs *fs, struct uinode *dir, uint64_t off, const uint8_t *c)
{
	long n = ufs_write(fs, dir, c, UFS_DIRCHUNK, off);
	return n < 0 ? (int)n : 0;
}

static void fill_de(const uint8_t *c, uint32_t o, uint64_t base, struct udirent *de)
{
	const struct ufs_dirent *r = (const void *)(c + o);
	de->ino = r->ino;
	de->gen = r->gen;
	de->type = r->type;
	de->off = base + o;
	memcpy(de->name, r + 1, r->namelen);
	de->name[r->namelen] = 0;
}

static struct umemname *memname(struct uinode *dir, const char *name)
{
	for (struct umemname *m = dir->memnames; m; m = m->next)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

int ufs_dir_lookup(struct ufs *fs, struct uinode *dir, const char *name, struct udirent *de)
{
	size_t len = strlen(name);
	if (len > UFS_NAME_MAX)
		return -ENAMETOOLONG;
	struct umemname *m = memname(dir, name);
	if (m != NULL) {
		struct uinode *ip = ufs_ifind(fs, m->ino);
		de->ino = m->ino;
		de->gen = ip ? ip->d.gen : 0;
		de->type = UFS_T_REG;
		de->off = UINT64_MAX;
		strcpy(de->name, name);
		return 0;
	}
	if (dir->dx != NULL) {
		uint32_t h = name_hash(name, len);
		for (uint32_t i = 0; i < dir->dx->n; i++)
			if (dir->dx->e[i].h == h && ufs_dir_at(fs, dir, dir->dx->e[i].off, de) == 0 &&
			    strcmp(de->name, name) == 0)
				return 0;
		return -ENOENT;
	}
	/* Scan, building the index on the way if the directory is large. */
	if (dir->d.size >= INDEX_MIN && (dir->dx = calloc(1, sizeof *dir->dx)) == NULL)
		return -ENOMEM;
	uint8_t c[UFS_DIRCHUNK];
	int found = 0;
	for (uint64_t off = 0; off < dir->d.size; off += UFS_DIRCHUNK) {
		int err = read_chunk(fs, dir, off, c);
		if (err < 0) {
			ufs_dir_forget_index(dir);
			return err;
		}
		for (uint32_t o = 0; o < UFS_DIRCHUNK; o += ((struct ufs_dirent *)(c + o))->reclen) {
			const struct ufs_dirent *r = (const void *)(c + o);
			if (r->ino == 0)
				continue;
			index_add(dir, (const char *)(r + 1), r->namelen, off + o);
			if (!found && r->namelen == len && memcmp(r + 1, name, len) == 0) {
				fill_de(c, o, off, de);
				found = 1;
				if (dir->dx == NULL)
					return 0;
			}
		}
	}
	return found ? 0 : -ENOENT;
}

static void put_rec(uint8_t *c, uint32_t o, uint32_t reclen, const char *name, struct uinode *ip)
{
	struct ufs_dirent *r = (void *)(c + o);
	size_t len = strlen(name);
	memset(c + o, 0, reclen);
	r->ino = ip->ino;
	r->gen = ip->d.gen;
	r->reclen = (uint16_t)reclen;
	r->namelen = (uint8_t)len;
	r->type = ip->d.type;
	memcpy(r + 1, name, len);
}

int ufs_dir_add(struct ufs *fs, struct uinode *dir, const char *name, struct uinode *ip,
                uint64_t *offp)
{
	uint64_t dummy;
	if (offp == NULL)
		offp = &dummy;
	size_t len = strlen(name);
	if (len == 0)
		return -ENOENT;
	if (len > UFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (ip->persist == LIBFS_P_MEMORY) {
		struct umemname *m = calloc(1, sizeof *m);
		if (m == NULL)
			return -ENOMEM;
		m->ino = ip->ino;
		strcpy(m->name, name);
		m->next = dir->memnames;
		dir->memnames = m;
		*offp = UINT64_MAX;
		return 0;
	}
	uint32_t need = recsize((uint32_t)len);
	uint8_t c[UFS_DIRCHUNK];
	uint64_t start = dir->addhint < dir->d.size ? dir->addhint : 0;
	for (uint64_t off = start; off < dir->d.size; off += UFS_DIRCHUNK) {
		int err = read_chunk(fs, dir, off, c);
		if (err < 0)
			return err;
		for (uint32_t o = 0; o < UFS_DIRCHUNK; o += ((struct ufs_dirent *)(c + o))->reclen) {
			struct ufs_dirent *r = (void *)(c + o);
			uint32_t used = r->ino ? recsize(r->namelen) : 0;
			if (r->reclen - used < need)
				continue;
			uint32_t total = r->reclen;
			if (used > 0) {
				r->reclen = (uint16_t)used;
				put_rec(c, o + used, total - used, name, ip);
				*offp = off + o + used;
			} else {
				put_rec(c, o, total, name, ip);
				*offp = off + o;
			}
			err = write_chunk(fs, dir, off, c);
			if (err == 0) {
				index_add(dir, name, len, *offp);
				dir->addhint = off;
			}
			return err;
		}
	}
	/* No room: a new chunk at the end. */
	memset(c, 0, sizeof c);
	put_rec(c, 0, UFS_DIRCHUNK, name, ip);
	*offp = dir->d.size;
	int err = write_chunk(fs, dir, dir->d.size, c);
	if (err == 0) {
		index_add(dir, name, len, *offp);
		dir->addhint = *offp;
	}
	return err;
}

int ufs_dir_at(struct ufs *fs, struct uinode *dir, uint64_t off, struct udirent *de)
{
	if (off % 8 != 0 || off >= dir->d.size)
		return -ENOENT;
	uint8_t c[UFS_DIRCHUNK];
	uint64_t base = off / UFS_DIRCHUNK * UFS_DIRCHUNK;
	int err = read_chunk(fs, dir, base, c);
	if (err < 0)
		return err;
	for (uint32_t o = 0; o < UFS_DIRCHUNK; o += ((struct ufs_dirent *)(c + o))->reclen)
		if (base + o == off && ((struct ufs_dirent *)(c + o))->ino != 0) {
			fill_de(c, o, base, de);
			return 0;
		}
	return -ENOENT;
}

int ufs_dir_remove(struct ufs *fs, struct uinode *dir, const char *name)
{
	size_t len = strlen(name);
	for (struct umemname **mp = &dir->memnames; *mp; mp = &(*mp)->next)
		if (strcmp((*mp)->name, name) == 0) {
			struct umemname *m = *mp;
			*mp = m->next;
			free(m);
			return 0;
		}
	/* The record's chunk, found by a lookup (the index, if there is one). */
	struct udirent de;
	int err = ufs_dir_lookup(fs, dir, name, &de);
	if (err < 0)
		return err;
	uint8_t c[UFS_DIRCHUNK];
	uint64_t base = de.off / UFS_DIRCHUNK * UFS_DIRCHUNK;
	for (uint64_t off = base; off < base + UFS_DIRCHUNK; off += UFS_DIRCHUNK) {
		err = read_chunk(fs, dir, off, c);
		if (err < 0)
			return err;
		uint32_t prev = UINT32_MAX;
		for (uint32_t o = 0; o < UFS_DIRCHUNK; o += ((struct ufs_dirent *)(c + o))->reclen) {
			struct ufs_dirent *r = (void *)(c + o);
			if (r->ino != 0 && r->namelen == len && memcmp(r + 1, name, len) == 0) {
				if (prev == UINT32_MAX) {
					uint16_t reclen = r->reclen;
					memset(r, 0, reclen);
					r->reclen = reclen;
				} else {
					struct ufs_dirent *p = (void *)(c + prev);
					uint16_t reclen = r->reclen;
					memset(r, 0, reclen);
					p->reclen = (uint16_t)(p->reclen + reclen);
				}
				err = write_chunk(fs, dir, off, c);
				if (err == 0) {
					index_remove(dir, off + o);
					if (off < dir->addhint)
						dir->addhint = off;
				}
				return err;
			}
			prev = o;
		}
	}
	return -ENOENT;
}

int ufs_dir_next(struct ufs *fs, struct uinode *dir, uint64_t *cookie, struct udirent *de)
{
	uint8_t c[UFS_DIRCHUNK];
	while (!(*cookie & MEMCOOKIE) && *cookie < dir->d.size) {
		uint64_t off = *cookie / UFS_DIRCHUNK * UFS_DIRCHUNK;
		int err = read_chunk(fs, dir, off, c);
		if (err < 0)
			return err;
		/* Find the record at or after the cookie. */
		uint32_t o = 0;
		while (o < UFS_DIRCHUNK && off + o < *cookie)
			o += ((struct ufs_dirent *)(c + o))->reclen;
		for (; o < UFS_DIRCHUNK; o += ((struct ufs_dirent *)(c + o))->reclen) {
			const struct ufs_dirent *r = (const void *)(c + o);
			if (r->ino != 0) {
				fill_de(c, o, off, de);
				*cookie = off + o + r->reclen;
				return 1;
			}
		}
		*cookie = off + UFS_DIRCHUNK;
	}
	/* Then the memory-only names. */
	uint64_t i = *cookie & MEMCOOKIE ? *cookie & ~MEMCOOKIE : 0;
	struct umemname *m = dir->memnames;
	for (uint64_t k = 0; m && k < i; k++)
		m = m->next;
	if (m == NULL) {
		*cookie = MEMCOOKIE | i;
		return 0;
	}
	de->ino = m->ino;
	struct uinode *ip = ufs_ifind(fs, m->ino);
	de->gen = ip ? ip->d.gen : 0;
	de->type = UFS_T_REG;
	de->off = UINT64_MAX;
	strcpy(de->name, m->name);
	*cookie = MEMCOOKIE | (i + 1);
	return 1;
}

int ufs_dir_empty(struct ufs *fs, struct uinode *dir)
{
	uint64_t cookie = 0;
	struct udirent de;
	int r = ufs_dir_next(fs, dir, &cookie, &de);
	if (r < 0)
		return r;
	return r == 0;
}

/* The next component of *p into name; 0 at the end, 1 for a component. */
static int component(const char **p, char *name)
{
	const char *s = *p;
	while (*s == '/')
		s++;
	if (*s == 0)
		return 0;
	const char *e = s;
	while (*e && *e != '/')
		e++;
	size_t n = (size_t)(e - s);
	if (n > UFS_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, s, n);
	name[n] = 0;
	*p = e;
	return 1;
}

/* Step from directory dir to its entry `name`. */
static int step(struct ufs *fs, struct uinode *dir, const char *name, struct uinode **out)
{
	if (dir->d.type != UFS_T_DIR)
		return -ENOTDIR;
	struct udirent de;
	int err = ufs_dir_lookup(fs, dir, name, &de);
	if (err < 0)
		return err;
	struct uinode *ip;
	err = ufs_iget(fs, de.ino, de.gen, &ip);
	if (err < 0)
		return err;
	if (ip->d.type != de.type) {
		ufs_iput(fs, ip);
		return -EIO;
	}
	*out = ip;
	return 0;
}

int ufs_namei(struct ufs *fs, const char *path, struct uinode **ipp)
{
	struct uinode *ip = fs->root;
	ip->refs++;
	char name[UFS_NAME_MAX + 1];
	int r;
	while ((r = component(&path, name)) > 0) {
		struct uinode *next;
		int err = step(fs, ip, name, &next);
		ufs_iput(fs, ip);
		if (err < 0)
			return err;
		ip = next;
	}
	if (r < 0) {
		ufs_iput(fs, ip);
		return r;
	}
	*ipp = ip;
	return 0;
}

int ufs_nameiparent(struct ufs *fs, const char *path, struct uinode **dirp, char *name)
{
	struct uinode *ip = fs->root;
	ip->refs++;
	int r = component(&path, name);
	if (r <= 0) {
		ufs_iput(fs, ip);
		return r == 0 ? -EBUSY : r;     /* the root has no parent here */
	}
	char next_name[UFS_NAME_MAX + 1];
	for (;;) {
		r = component(&path, next_name);
		if (r < 0) {
			ufs_iput(fs, ip);
			return r;
		}
		if (r == 0)
			break;
		struct uinode *next;
		int err = step(fs, ip, name, &next);
		ufs_iput(fs, ip);
		if (err < 0)
			return err;
		ip = next;
		strcpy(name, next_name);
	}
	if (ip->d.type != UFS_T_DIR) {
		ufs_iput(fs, ip);
		return -ENOTDIR;
	}
	*dirp = ip;
	return 0;
}
