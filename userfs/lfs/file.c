/*
 * file.c - a file's blocks: where they are, reading, writing, truncating.
 *
 * An inode points at blocks 0..7 directly, at blocks 8..519 through an
 * indirect block, and beyond through a double indirect block of 512 more
 * (about 1 GiB in all).  A pointer is a log address plus how many sectors
 * of the block were written: a file's last block is stored only as far as
 * the file goes (a 1 KB file takes two sectors of the log, not eight), and
 * reads as zeros past that.  Bytes past the size inside a written sector
 * are always zero, so a file that grows never shows old bytes.
 *
 * Writing appends: the new contents of every block a write touches go
 * straight into the log's open partial segment (one copy, from the
 * caller's buffer), and the block's pointer moves there; the old copy's
 * bytes become dead in its segment's usage.  A partial block is merged
 * with its old contents on the way.  Small appends to a block that was
 * the last thing appended (an appending writer) grow it in place instead
 * of leaving a dead copy behind each time.
 *
 * Indirect blocks live in memory once read (struct lmap); changed ones
 * are written at the next commit, children before the double indirect
 * block that points at them (lfs_flush_maps).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

/* Indirect block `which` of n, from ptr (0: a new, empty one); its seal
 * and its pointers are checked. */
static int load_map(struct lfs *fs, struct lnode *n, uint32_t which, uint64_t ptr,
                    struct lmap **out)
{
	struct lmap *m = calloc(1, sizeof *m);
	if (m == NULL)
		return -ENOMEM;
	if (ptr != 0) {
		int e = lfs_read_block(fs, ptr, m->p);
		if (e == 0 && !lfs_sealed(m->p, LFS_IND_SEAL, n->ino, which)) {
			lfs_damaged_at(fs, "an indirect block fails its checksum", n->ino, which);
			e = -EIO;
		}
		uint64_t lim = fs->sb.nsegs * fs->sb.seg_sect;
		for (uint32_t i = 0; e == 0 && i < LFS_NPTR; i++)
			if (m->p[i] != 0 && LFS_PTR_LBA(m->p[i]) >= lim) {
				lfs_damaged_at(fs, "an indirect block points outside the log", n->ino, which);
				e = -EIO;
			}
		if (e < 0) {
			free(m);
			return e;
		}
	}
	*out = m;
	return 0;
}

/* The pointer slot of block lbn (and the map holding it), loading or, with
 * create, making the maps on the way; *sp NULL for a hole when !create. */
static int slot(struct lfs *fs, struct lnode *n, uint64_t lbn, int create, uint64_t **sp,
                struct lmap **mp)
{
	*sp = NULL;
	*mp = NULL;
	if (lbn < LFS_NDIRECT) {
		*sp = &n->d.direct[lbn];
		return 0;
	}
	lbn -= LFS_NDIRECT;
	if (lbn < LFS_NPTR) {
		if (n->ind == NULL) {
			if (n->d.ind == 0 && !create)
				return 0;
			TRY(load_map(fs, n, LFS_IND_SINGLE, n->d.ind, &n->ind));
		}
		*sp = &n->ind->p[lbn];
		*mp = n->ind;
		return 0;
	}
	lbn -= LFS_NPTR;
	if (lbn >= (uint64_t)LFS_NPTR * LFS_NPTR)
		return -EFBIG;
	uint32_t i = (uint32_t)(lbn / LFS_NPTR), j = (uint32_t)(lbn % LFS_NPTR);
	if (n->dind == NULL) {
		if (n->d.dind == 0 && !create)
			return 0;
		TRY(load_map(fs, n, LFS_IND_DOUBLE, n->d.dind, &n->dind));
	}
	if (n->dc == NULL) {
		n->dc = calloc(LFS_NPTR, sizeof *n->dc);
		if (n->dc == NULL)
			return -ENOMEM;
	}
	if (n->dc[i] == NULL) {
		if (n->dind->p[i] == 0 && !create)
			return 0;
		TRY(load_map(fs, n, LFS_IND_CHILD(i), n->dind->p[i], &n->dc[i]));
	}
	*sp = &n->dc[i]->p[j];
	*mp = n->dc[i];
	return 0;
}

int lfs_bmap(struct lfs *fs, struct lnode *n, uint64_t lbn, uint64_t *ptr)
{
	uint64_t *sp;
	struct lmap *mp;
	TRY(slot(fs, n, lbn, 0, &sp, &mp));
	*ptr = sp ? *sp : 0;
	return 0;
}

static void map_dirty(struct lfs *fs, struct lnode *n, struct lmap *m)
{
	if (m != NULL && !m->dirty) {
		m->dirty = 1;
		fs->pend += LFS_BSIZE + sizeof(struct lfs_psent);
	}
	if (m != NULL)
		n->mapdirty = 1;
}

int lfs_bset(struct lfs *fs, struct lnode *n, uint64_t lbn, uint64_t ptr)
{
	uint64_t *sp;
	struct lmap *mp;
	TRY(slot(fs, n, lbn, ptr != 0, &sp, &mp));
	if (sp == NULL)
		return 0;                        /* a hole stays a hole */
	uint64_t old = *sp;
	*sp = ptr;
	if (old != 0)
		lfs_seg_use(fs, LFS_PTR_LBA(old), -(int64_t)LFS_PTR_NSECT(old) * LFS_SECT);
	if (ptr != 0)
		lfs_seg_use(fs, LFS_PTR_LBA(ptr), (int64_t)LFS_PTR_NSECT(ptr) * LFS_SECT);
	map_dirty(fs, n, mp);
	lfs_dirty(fs, n);
	return 0;
}

int lfs_bput(struct lfs *fs, struct lnode *n, uint64_t lbn, const void *data, uint32_t nsect,
             int cleaner)
{
	struct lfs_psent pe = { n->ino, n->gen, (uint32_t)lbn, LFS_K_DATA, (uint8_t)nsect, 0 };
	uint64_t lba;
	int e;
	uint8_t *p = lfs_log_append(fs, &pe, &lba, &e);
	if (p == NULL)
		return e;
	memcpy(p, data, (size_t)nsect * LFS_SECT);
	return lfs_bset(fs, n, lbn, LFS_PTR(lba, nsect));
}

/* Write map m (which: LFS_IND_*) to the log; *ptr is where its copy was
 * and becomes where it is (0: it holds nothing, and is not written). */
static int put_map(struct lfs *fs, struct lnode *n, struct lmap *m, uint32_t which, uint64_t *ptr)
{
	int empty = 1;
	for (uint32_t i = 0; i < LFS_NPTR && empty; i++)
		empty = m->p[i] == 0;
	uint64_t np = 0;
	if (!empty) {
		struct lfs_psent pe = { n->ino, n->gen, which, LFS_K_IND, LFS_BSECT, 0 };
		uint64_t lba;
		int e;
		uint8_t *p = lfs_log_append(fs, &pe, &lba, &e);
		if (p == NULL)
			return e;
		m->p[LFS_NPTR] = lfs_seal(m->p, LFS_IND_SEAL, n->ino, which);
		memcpy(p, m->p, LFS_BSIZE);
		np = LFS_PTR(lba, LFS_BSECT);
		lfs_seg_use(fs, lba, LFS_BSIZE);
	}
	if (*ptr != 0)
		lfs_seg_use(fs, LFS_PTR_LBA(*ptr), -(int64_t)LFS_BSIZE);
	*ptr = np;
	m->dirty = 0;
	return 0;
}

int lfs_flush_maps(struct lfs *fs, struct lnode *n)
{
	if (n->dc != NULL && n->dind != NULL)
		for (uint32_t i = 0; i < LFS_NPTR; i++)
			if (n->dc[i] != NULL && n->dc[i]->dirty) {
				TRY(put_map(fs, n, n->dc[i], LFS_IND_CHILD(i), &n->dind->p[i]));
				n->dind->dirty = 1;
			}
	if (n->dind != NULL && n->dind->dirty)
		TRY(put_map(fs, n, n->dind, LFS_IND_DOUBLE, &n->d.dind));
	if (n->ind != NULL && n->ind->dirty)
		TRY(put_map(fs, n, n->ind, LFS_IND_SINGLE, &n->d.ind));
	n->mapdirty = 0;
	lfs_dirty(fs, n);
	return 0;
}

void lfs_maps_free(struct lnode *n)
{
	if (n->dc != NULL)
		for (uint32_t i = 0; i < LFS_NPTR; i++)
			free(n->dc[i]);
	free(n->dc);
	free(n->dind);
	free(n->ind);
	n->dc = NULL;
	n->dind = n->ind = NULL;
}

/* Every pointer of a map block is dead now. */
static void kill_ptrs(struct lfs *fs, const uint64_t *p, uint32_t np)
{
	for (uint32_t i = 0; i < np; i++)
		if (p[i] != 0)
			lfs_seg_use(fs, LFS_PTR_LBA(p[i]), -(int64_t)LFS_PTR_NSECT(p[i]) * LFS_SECT);
}

int lfs_free_blocks(struct lfs *fs, struct lnode *n)
{
	kill_ptrs(fs, n->d.direct, LFS_NDIRECT);
	if (n->ind == NULL && n->d.ind != 0)
		TRY(load_map(fs, n, LFS_IND_SINGLE, n->d.ind, &n->ind));
	if (n->ind != NULL)
		kill_ptrs(fs, n->ind->p, LFS_NPTR);
	kill_ptrs(fs, &n->d.ind, 1);
	if (n->dind == NULL && n->d.dind != 0)
		TRY(load_map(fs, n, LFS_IND_DOUBLE, n->d.dind, &n->dind));
	if (n->dind != NULL) {
		for (uint32_t i = 0; i < LFS_NPTR; i++) {
			struct lmap *c = n->dc ? n->dc[i] : NULL;
			if (c == NULL && n->dind->p[i] != 0) {
				TRY(load_map(fs, n, LFS_IND_CHILD(i), n->dind->p[i], &c));
				kill_ptrs(fs, c->p, LFS_NPTR);
				free(c);
			} else if (c != NULL) {
				kill_ptrs(fs, c->p, LFS_NPTR);
			}
		}
		kill_ptrs(fs, n->dind->p, LFS_NPTR);
	}
	kill_ptrs(fs, &n->d.dind, 1);
	lfs_maps_free(n);
	memset(n->d.direct, 0, sizeof n->d.direct);
	n->d.ind = n->d.dind = 0;
	return 0;
}

int lfs_map_live(struct lfs *fs, struct lnode *n, uint32_t which, uint64_t ptr)
{
	if (which == LFS_IND_SINGLE)
		return n->d.ind == ptr;
	if (which == LFS_IND_DOUBLE)
		return n->d.dind == ptr;
	uint32_t i = which - LFS_IND_CHILD(0);
	if (i >= LFS_NPTR)
		return 0;
	if (n->dind == NULL) {
		if (n->d.dind == 0)
			return 0;
		TRY(load_map(fs, n, LFS_IND_DOUBLE, n->d.dind, &n->dind));
	}
	return n->dind->p[i] == ptr;
}

int lfs_map_move(struct lfs *fs, struct lnode *n, uint32_t which)
{
	uint64_t lbn = which == LFS_IND_SINGLE ? LFS_NDIRECT
	             : which == LFS_IND_DOUBLE ? LFS_NDIRECT + LFS_NPTR
	             : LFS_NDIRECT + LFS_NPTR + (uint64_t)(which - LFS_IND_CHILD(0)) * LFS_NPTR;
	uint64_t *sp;
	struct lmap *mp;
	TRY(slot(fs, n, lbn, 0, &sp, &mp));
	if (which == LFS_IND_DOUBLE) {
		if (n->dind == NULL)
			return 0;
		mp = n->dind;
	}
	map_dirty(fs, n, mp);
	lfs_dirty(fs, n);
	return 0;
}

/* ---- reading and writing ------------------------------------------------------------- */

long lfs_fread(struct lfs *fs, struct lnode *n, void *buf, size_t len, uint64_t off)
{
	uint64_t size = n->d.size;
	if (off >= size)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	uint8_t *out = buf;
	size_t done = 0;
	while (done < len) {
		uint64_t lbn = (off + done) / LFS_BSIZE;
		uint32_t bo = (uint32_t)((off + done) % LFS_BSIZE);
		size_t m = LFS_BSIZE - bo < len - done ? LFS_BSIZE - bo : len - done;
		uint64_t ptr;
		TRY(lfs_bmap(fs, n, lbn, &ptr));
		if (ptr == 0) {
			memset(out + done, 0, m);
		} else if (bo == 0 && m == LFS_BSIZE && LFS_PTR_NSECT(ptr) == LFS_BSECT) {
			/* Whole blocks that follow each other in the log: one read. */
			uint64_t lba = LFS_PTR_LBA(ptr), k = 1, nx;
			while (k < 256 && done + (k + 1) * LFS_BSIZE <= len &&
			       lfs_bmap(fs, n, lbn + k, &nx) == 0 && nx == LFS_PTR(lba + k * LFS_BSECT, LFS_BSECT) &&
			       lfs_seg_of(fs, lba) == lfs_seg_of(fs, lba + k * LFS_BSECT))
				k++;
			TRY(lfs_read(fs, lba, (uint32_t)(k * LFS_BSECT), out + done));
			m = (size_t)k * LFS_BSIZE;
		} else {
			/* Part of a block: only the sectors it needs, straight into
			 * the caller's buffer when they line up (a small file's read
			 * is one copy, not a block's read, zeroing and copy). */
			uint32_t nw = LFS_PTR_NSECT(ptr), s0 = bo / LFS_SECT;
			uint32_t s1 = (uint32_t)((bo + m + LFS_SECT - 1) / LFS_SECT);
			uint64_t lba = LFS_PTR_LBA(ptr) + s0;
			if (s1 <= nw && bo % LFS_SECT == 0 && m % LFS_SECT == 0) {
				TRY(lfs_read(fs, lba, s1 - s0, out + done));
			} else if (s1 <= nw) {
				TRY(lfs_read(fs, lba, s1 - s0, fs->scratch));
				memcpy(out + done, fs->scratch + bo % LFS_SECT, m);
			} else {
				TRY(lfs_read_block(fs, ptr, fs->scratch));
				memcpy(out + done, fs->scratch + bo, m);
			}
		}
		done += m;
	}
	return (long)len;
}

long lfs_fwrite(struct lfs *fs, struct lnode *n, const void *buf, size_t len, uint64_t off)
{
	if (len == 0)
		return 0;
	uint64_t end = off + len;
	if (end < off || end > LFS_MAXFILE)
		return -EFBIG;
	uint64_t newsize = end > n->d.size ? end : n->d.size;
	const uint8_t *in = buf;
	size_t done = 0;
	while (done < len) {
		uint64_t lbn = (off + done) / LFS_BSIZE;
		uint32_t bo = (uint32_t)((off + done) % LFS_BSIZE);
		size_t m = LFS_BSIZE - bo < len - done ? LFS_BSIZE - bo : len - done;
		uint64_t bstart = lbn * LFS_BSIZE;
		uint32_t blen = newsize - bstart < LFS_BSIZE ? (uint32_t)(newsize - bstart) : LFS_BSIZE;
		uint32_t nsect = (blen + LFS_SECT - 1) / LFS_SECT;
		uint64_t old;
		TRY(lfs_bmap(fs, n, lbn, &old));
		struct lfs_psent pe = { n->ino, n->gen, (uint32_t)lbn, LFS_K_DATA, (uint8_t)nsect, 0 };
		uint64_t lba = 0;
		uint32_t on = old ? LFS_PTR_NSECT(old) : 0;
		uint8_t *p = NULL;
		if (old != 0 && (p = lfs_log_extend(fs, &pe, LFS_PTR_LBA(old), on, nsect)) != NULL) {
			/* Grown in place: the old bytes are there already. */
			lba = LFS_PTR_LBA(old);
			memset(p + (size_t)on * LFS_SECT, 0, (size_t)(nsect - on) * LFS_SECT);
		} else {
			int e;
			p = lfs_log_append(fs, &pe, &lba, &e);
			if (p == NULL)
				return done ? (long)done : e;
			uint32_t keep = 0;
			if (old != 0 && (bo != 0 || bo + m < blen)) {
				keep = on < nsect ? on : nsect;
				e = lfs_read(fs, LFS_PTR_LBA(old), keep, p);
				if (e < 0) {
					memset(p, 0, (size_t)nsect * LFS_SECT);
					return e;
				}
			}
			/* Zeros where neither the old block nor this write reaches
			 * (not the whole block first: the copy covers most of it). */
			uint32_t z = keep * LFS_SECT;
			if (z < bo)
				memset(p + z, 0, bo - z);
			z = z > bo + (uint32_t)m ? z : bo + (uint32_t)m;
			if (z < nsect * LFS_SECT)
				memset(p + z, 0, nsect * LFS_SECT - z);
		}
		memcpy(p + bo, in + done, m);
		if (blen < nsect * LFS_SECT)
			memset(p + blen, 0, nsect * LFS_SECT - blen);
		TRY(lfs_bset(fs, n, lbn, LFS_PTR(lba, nsect)));
		done += m;
		if (off + done > n->d.size)
			n->d.size = off + done;
	}
	n->d.size = newsize;
	n->d.mtime = n->d.ctime = lfs_optime(fs);
	lfs_dirty(fs, n);
	return (long)len;
}

int lfs_ftrunc(struct lfs *fs, struct lnode *n, uint64_t len)
{
	if (len > LFS_MAXFILE)
		return -EFBIG;
	uint64_t size = n->d.size;
	if (len < size) {
		uint64_t first = (len + LFS_BSIZE - 1) / LFS_BSIZE, last = (size + LFS_BSIZE - 1) / LFS_BSIZE;
		for (uint64_t lbn = first; lbn < last; lbn++) {
			uint64_t ptr;
			TRY(lfs_bmap(fs, n, lbn, &ptr));
			if (ptr != 0)
				TRY(lfs_bset(fs, n, lbn, 0));
		}
		/* The new last block: nothing past the size may stay in it. */
		uint32_t rem = (uint32_t)(len % LFS_BSIZE);
		uint64_t ptr;
		if (rem != 0 && lfs_bmap(fs, n, len / LFS_BSIZE, &ptr) == 0 && ptr != 0) {
			uint32_t nsect = (rem + LFS_SECT - 1) / LFS_SECT;
			TRY(lfs_read_block(fs, ptr, fs->scratch));
			memset(fs->scratch + rem, 0, LFS_BSIZE - rem);
			TRY(lfs_bput(fs, n, len / LFS_BSIZE, fs->scratch, nsect, 0));
		}
	}
	n->d.size = len;
	n->d.mtime = n->d.ctime = lfs_optime(fs);
	lfs_dirty(fs, n);
	return 0;
}
