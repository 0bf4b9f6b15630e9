/*
 * dir.c - directories: a file of 4 KiB blocks of records (struct
 * lfs_dirent: inode number, record length, name length, type, name), each
 * block ending in a seal (a sum seeded with the directory's inode number
 * and the block's number, checked whenever the block is read),
 * read whole into memory the first time the directory is used, with a
 * hash index from name to record, so a lookup, an insertion or a removal
 * costs the same in a directory of ten names or of ten thousand.
 *
 * A record covers the space up to the next one; free space is a record
 * with inode 0 (a new block is one), or the slack at the end of a live
 * record.  An insertion goes into the last block that had room, or a new
 * block; a removal frees the record, merging it into the one before.
 * Changed blocks are written at the next commit (lfs_dir_flush), like a
 * file's, so a rename - two directories' blocks and the inodes - reaches
 * the disk in one commit: all of it or none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

#define TOMB UINT32_MAX

struct ldir {
	uint8_t *data;            /* nblk blocks                                     */
	uint32_t nblk;
	uint8_t *bdirty;          /* per block: changed since written                */
	uint32_t *hx;             /* open addressing: record offset + 1, 0 empty      */
	uint32_t hcap, hused, hlive;
	uint32_t room;            /* a block that had room last time                 */
	uint32_t last;            /* offset + 1 of room's last record (0: unknown)   */
	uint8_t holes;            /* room may have free records before its last      */
	uint32_t nlive;
};

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static struct lfs_dirent *rec(struct ldir *d, uint32_t off)
{
	return (struct lfs_dirent *)(d->data + off);
}

static uint32_t need(size_t len)
{
	return (uint32_t)((LFS_DIRENT_HDR + len + 7) & ~(size_t)7);
}

static void hx_insert_h(struct ldir *d, uint32_t off, uint32_t h)
{
	uint32_t i = h & (d->hcap - 1);
	while (d->hx[i] != 0 && d->hx[i] != TOMB)
		i = (i + 1) & (d->hcap - 1);
	if (d->hx[i] == 0)
		d->hused++;
	d->hx[i] = off + 1;
	d->hlive++;
}

static void hx_insert(struct ldir *d, uint32_t off)
{
	struct lfs_dirent *r = rec(d, off);
	hx_insert_h(d, off, name_hash((const char *)(r + 1), r->namelen));
}

/* A fresh index with room for the live records and as many again. */
static int hx_rebuild(struct ldir *d)
{
	uint32_t cap = 64;
	while (cap < 4 * (d->nlive + 1))
		cap *= 2;
	uint32_t *hx = calloc(cap, sizeof *hx);
	if (hx == NULL)
		return -ENOMEM;
	free(d->hx);
	d->hx = hx;
	d->hcap = cap;
	d->hused = d->hlive = 0;
	for (uint32_t b = 0; b < d->nblk; b++)
		for (uint32_t o = 0; o < LFS_DIRSPACE;) {
			struct lfs_dirent *r = rec(d, b * LFS_BSIZE + o);
			if (r->ino != 0)
				hx_insert(d, b * LFS_BSIZE + o);
			o += r->reclen;
		}
	return 0;
}

/* Index the record at off (written, and counted in d->nlive).  The index
 * is at most half full: a miss (every create looks its name up first)
 * probes about 2.5 slots there, 8.5 at three quarters. */
static int hx_put(struct ldir *d, uint32_t off, uint32_t h)
{
	if ((d->hused + 1) * 2 > d->hcap)
		return hx_rebuild(d);      /* it finds the new record too */
	hx_insert_h(d, off, h);
	return 0;
}

/* The index slot of name, or -1. */
static int64_t hx_find_h(struct ldir *d, const char *name, size_t len, uint32_t h)
{
	if (d->hcap == 0)
		return -1;
	uint32_t i = h & (d->hcap - 1);
	for (uint32_t n = 0; n < d->hcap && d->hx[i] != 0; n++, i = (i + 1) & (d->hcap - 1)) {
		if (d->hx[i] == TOMB)
			continue;
		struct lfs_dirent *r = rec(d, d->hx[i] - 1);
		if (r->namelen == len && memcmp(r + 1, name, len) == 0)
			return i;
	}
	return -1;
}

static int64_t hx_find(struct ldir *d, const char *name, size_t len)
{
	return hx_find_h(d, name, len, name_hash(name, len));
}

void lfs_dir_free(struct lnode *n)
{
	struct ldir *d = n->dir;
	if (d == NULL)
		return;
	free(d->data);
	free(d->bdirty);
	free(d->hx);
	free(d);
	n->dir = NULL;
}

static int check_block(const uint8_t *b)
{
	for (uint32_t o = 0; o < LFS_DIRSPACE;) {
		const struct lfs_dirent *r = (const struct lfs_dirent *)(b + o);
		if (r->reclen < LFS_DIRENT_HDR || r->reclen % 8 != 0 || o + r->reclen > LFS_DIRSPACE ||
		    (r->ino != 0 && (r->namelen == 0 || need(r->namelen) > r->reclen ||
		                     (r->type != LIBFS_T_REG && r->type != LIBFS_T_DIR))))
			return 0;
		o += r->reclen;
	}
	return 1;
}

static void empty_block(uint8_t *b)
{
	memset(b, 0, LFS_BSIZE);
	((struct lfs_dirent *)b)->reclen = LFS_DIRSPACE;
}

int lfs_dir_init(struct lfs *fs, struct lnode *n)
{
	struct ldir *d = calloc(1, sizeof *d);
	if (d == NULL)
		return -ENOMEM;
	n->dir = d;
	return hx_rebuild(d);
}

/* Read the directory in and index it (lfs_dir_load: not yet in memory). */
static __attribute__((noinline)) int dir_read(struct lfs *fs, struct lnode *n)
{
	if (n->d.type != LIBFS_T_DIR)
		return -ENOTDIR;
	if (n->d.size % LFS_BSIZE != 0 || n->d.size > (64ull << 20)) {
		lfs_damaged(fs, "directory size", n->ino);
		return -EIO;
	}
	struct ldir *d = calloc(1, sizeof *d);
	if (d == NULL)
		return -ENOMEM;
	d->holes = 1;
	d->nblk = (uint32_t)(n->d.size / LFS_BSIZE);
	d->data = malloc(d->nblk ? (size_t)d->nblk * LFS_BSIZE : 1);
	d->bdirty = calloc(d->nblk ? d->nblk : 1, 1);
	int e = d->data && d->bdirty ? 0 : -ENOMEM;
	if (e == 0 && d->nblk > 0)
		e = (int)lfs_fread(fs, n, d->data, (size_t)d->nblk * LFS_BSIZE, 0);
	for (uint32_t b = 0; e >= 0 && b < d->nblk; b++)
		if (!lfs_sealed(d->data + (size_t)b * LFS_BSIZE, LFS_DIR_SEAL, n->ino, b)) {
			lfs_damaged_at(fs, "a directory block fails its checksum", n->ino, b);
			e = -EIO;
		} else if (!check_block(d->data + (size_t)b * LFS_BSIZE)) {
			lfs_damaged_at(fs, "a directory block's records do not parse", n->ino, b);
			e = -EIO;
		}
	for (uint32_t b = 0; e >= 0 && b < d->nblk; b++)
		for (uint32_t o = 0; o < LFS_DIRSPACE;) {
			struct lfs_dirent *r = rec(d, b * LFS_BSIZE + o);
			d->nlive += r->ino != 0;
			o += r->reclen;
		}
	if (e >= 0)
		e = hx_rebuild(d);
	if (e < 0) {
		free(d->data);
		free(d->bdirty);
		free(d->hx);
		free(d);
		return e;
	}
	n->dir = d;
	return 0;
}

int lfs_dir_load(struct lfs *fs, struct lnode *n)
{
	return n->dir != NULL ? 0 : dir_read(fs, n);
}

int lfs_dir_lookup(struct lfs *fs, struct lnode *n, const char *name, size_t len, uint32_t *ino,
                   uint32_t *type)
{
	uint32_t h;
	return lfs_dir_lookup_hashed(fs, n, name, len, ino, type, &h);
}

int lfs_dir_lookup_hashed(struct lfs *fs, struct lnode *n, const char *name, size_t len,
                          uint32_t *ino, uint32_t *type, uint32_t *hash)
{
	TRY(lfs_dir_load(fs, n));
	struct ldir *d = n->dir;
	*hash = name_hash(name, len);
	int64_t i = hx_find_h(d, name, len, *hash);
	if (i < 0)
		return -ENOENT;
	struct lfs_dirent *r = rec(d, d->hx[i] - 1);
	*ino = r->ino;
	*type = r->type;
	return 0;
}

static void changed(struct lfs *fs, struct lnode *n, uint32_t off)
{
	struct ldir *d = n->dir;
	uint32_t b = off / LFS_BSIZE;
	if (!d->bdirty[b]) {
		d->bdirty[b] = 1;
		fs->pend += LFS_BSIZE + sizeof(struct lfs_psent);
	}
	n->d.mtime = n->d.ctime = lfs_optime(fs);
	lfs_dirty(fs, n);
}

/* A record of r bytes carved from the record at off (free, or the slack
 * of a live one): the new record's offset, or -1 if it has no room. */
static int64_t carve(struct ldir *d, uint32_t off, uint32_t r)
{
	struct lfs_dirent *x = rec(d, off);
	uint32_t used = x->ino ? need(x->namelen) : 0;
	if (x->reclen - used < r)
		return -1;
	int islast = off % LFS_BSIZE + x->reclen == LFS_DIRSPACE;
	if (used == 0) {
		if (islast)
			d->last = off + 1;
		return off;
	}
	uint16_t rest = (uint16_t)(x->reclen - used);
	x->reclen = (uint16_t)used;
	struct lfs_dirent *y = rec(d, off + used);
	memset(y, 0, LFS_DIRENT_HDR);
	y->reclen = rest;
	if (islast)
		d->last = off + used + 1;
	return off + used;
}

/* A record of r bytes in block b: the offset, or -1 if it has no room.
 * Names added one after another go at the end of the block's last record
 * (known without walking the block, unless something was removed). */
static int64_t fit(struct ldir *d, uint32_t b, uint32_t r)
{
	if (d->last != 0 && (d->last - 1) / LFS_BSIZE == b) {
		int64_t o = carve(d, d->last - 1, r);
		if (o >= 0 || !d->holes)
			return o;
	}
	for (uint32_t o = 0; o < LFS_DIRSPACE;) {
		uint32_t off = b * LFS_BSIZE + o;
		uint16_t reclen = rec(d, off)->reclen;
		int64_t at = carve(d, off, r);
		if (at >= 0)
			return at;
		o += reclen;
	}
	return -1;
}

int lfs_dir_add(struct lfs *fs, struct lnode *n, const char *name, size_t len, uint32_t ino,
                uint32_t type)
{
	return lfs_dir_add_hashed(fs, n, name, len, ino, type, name_hash(name, len));
}

int lfs_dir_add_hashed(struct lfs *fs, struct lnode *n, const char *name, size_t len, uint32_t ino,
                       uint32_t type, uint32_t hash)
{
	TRY(lfs_dir_load(fs, n));
	struct ldir *d = n->dir;
	if (len == 0 || len > 255)
		return -ENAMETOOLONG;
	uint32_t r = need(len);
	int64_t off = -1;
	if (d->room < d->nblk)
		off = fit(d, d->room, r);
	if (off < 0) {
		/* A new block at the end. */
		uint32_t nb = d->nblk + 1;
		uint8_t *data = realloc(d->data, (size_t)nb * LFS_BSIZE);
		if (data == NULL)
			return -ENOMEM;
		d->data = data;
		uint8_t *bd = realloc(d->bdirty, nb);
		if (bd == NULL)
			return -ENOMEM;
		d->bdirty = bd;
		d->bdirty[d->nblk] = 0;
		empty_block(d->data + (size_t)d->nblk * LFS_BSIZE);
		d->room = d->nblk;
		d->last = d->nblk * LFS_BSIZE + 1;
		d->holes = 0;
		d->nblk = nb;
		n->d.size = (uint64_t)nb * LFS_BSIZE;
		off = fit(d, d->room, r);
	}
	struct lfs_dirent *x = rec(d, (uint32_t)off);
	uint16_t reclen = x->reclen;
	x->ino = ino;
	x->reclen = reclen;
	x->namelen = (uint8_t)len;
	x->type = (uint8_t)type;
	memcpy(x + 1, name, len);
	memset((uint8_t *)(x + 1) + len, 0, need(len) - LFS_DIRENT_HDR - len);
	d->nlive++;
	TRY(hx_put(d, (uint32_t)off, hash));
	changed(fs, n, (uint32_t)off);
	return 0;
}

int lfs_dir_remove(struct lfs *fs, struct lnode *n, const char *name, size_t len)
{
	TRY(lfs_dir_load(fs, n));
	struct ldir *d = n->dir;
	int64_t i = hx_find(d, name, len);
	if (i < 0)
		return -ENOENT;
	uint32_t off = d->hx[i] - 1;
	d->hx[i] = TOMB;
	d->hlive--;
	uint32_t b = off / LFS_BSIZE, bo = b * LFS_BSIZE;
	struct lfs_dirent *x = rec(d, off);
	/* Merge into the record before it in the block, if any. */
	struct lfs_dirent *prev = NULL;
	for (uint32_t o = bo; o < off;) {
		prev = rec(d, o);
		o += prev->reclen;
	}
	if (prev != NULL) {
		prev->reclen = (uint16_t)(prev->reclen + x->reclen);
		memset(x, 0, LFS_DIRENT_HDR);
	} else {
		x->ino = 0;
		x->namelen = 0;
		x->type = 0;
	}
	d->nlive--;
	d->room = b;
	d->last = 0;
	d->holes = 1;
	changed(fs, n, off);
	if (d->hused > d->hcap / 2 && d->hlive < d->hused / 2)
		TRY(hx_rebuild(d));
	return 0;
}

int lfs_dir_replace(struct lfs *fs, struct lnode *n, const char *name, size_t len, uint32_t ino,
                    uint32_t type)
{
	TRY(lfs_dir_load(fs, n));
	struct ldir *d = n->dir;
	int64_t i = hx_find(d, name, len);
	if (i < 0)
		return -ENOENT;
	struct lfs_dirent *x = rec(d, d->hx[i] - 1);
	x->ino = ino;
	x->type = (uint8_t)type;
	changed(fs, n, d->hx[i] - 1);
	return 0;
}

int lfs_dir_next(struct lfs *fs, struct lnode *n, uint64_t *cookie, struct libfs_dirent *de)
{
	TRY(lfs_dir_load(fs, n));
	struct ldir *d = n->dir;
	uint64_t end = (uint64_t)d->nblk * LFS_BSIZE;
	while (*cookie < end) {
		uint32_t off = (uint32_t)*cookie;
		if (off % LFS_BSIZE == LFS_DIRSPACE) {
			*cookie += LFS_BSIZE - LFS_DIRSPACE;     /* the block's seal */
			continue;
		}
		struct lfs_dirent *x = rec(d, off);
		if (x->reclen < LFS_DIRENT_HDR || (off % LFS_BSIZE) + x->reclen > LFS_DIRSPACE)
			return -EIO;          /* a cookie that is no record's offset */
		*cookie += x->reclen;
		if (x->ino != 0) {
			de->ino = x->ino;
			de->type = x->type;
			memcpy(de->name, x + 1, x->namelen);
			de->name[x->namelen] = 0;
			return 1;
		}
	}
	return 0;
}

int lfs_dir_empty(struct lfs *fs, struct lnode *n)
{
	TRY(lfs_dir_load(fs, n));
	return n->dir->nlive == 0;
}

int lfs_dir_flush(struct lfs *fs, struct lnode *n)
{
	struct ldir *d = n->dir;
	for (uint32_t b = 0; d != NULL && b < d->nblk; b++)
		if (d->bdirty[b]) {
			uint8_t *blk = d->data + (size_t)b * LFS_BSIZE;
			uint64_t seal = lfs_seal(blk, LFS_DIR_SEAL, n->ino, b);
			memcpy(blk + LFS_DIRSPACE, &seal, 8);
			TRY(lfs_bput(fs, n, b, blk, LFS_BSECT, 0));
			d->bdirty[b] = 0;
		}
	return 0;
}

int lfs_dir_move(struct lfs *fs, struct lnode *n, uint64_t lbn)
{
	TRY(lfs_dir_load(fs, n));
	if (lbn >= n->dir->nblk)
		return 0;
	changed(fs, n, (uint32_t)lbn * LFS_BSIZE);
	return 0;
}
