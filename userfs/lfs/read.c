/*
 * read.c - reading the log.
 *
 * A log address is in one of three places: a segment buffer (the current
 * segment, or the previous one, whose writes may still be in flight: the
 * buffer is the truth for both), the read cache, or the disk.  Blocks are
 * never rewritten in place, so nothing cached goes stale - except when a
 * segment is reused or released (lfs_rc_drop) and while a segment is still
 * being written (never cached).
 *
 * The read cache holds 64 KiB chunks of the log.  What was written
 * together is read together - many small files' inodes and data lie side
 * by side in the order they were written - so a read that lands near
 * where a recent read ended reads the whole chunk and keeps it; any other
 * reads only what was asked for (a random 4 KiB read stays 4 KiB).  Reads
 * of a chunk or more go straight to the caller's memory.
 *
 * A reader moving through the log this way (reading back files in the
 * order they were written) also has the next LFS_RA_CHUNKS chunks of the
 * segment read ahead, asynchronously, each in its own cache entry with its
 * own request: it waits for the disk once at the start, not at every
 * chunk (a cold read of 1,000 10 KB files waited for 180 reads one after
 * another).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

const struct ed_protector *lfs_prot(struct lfs *fs, uint64_t leaf, uint16_t slot)
{
	if (fs->prot_leaf != leaf || fs->prot_slot != slot || leaf == 0) {
		fs->prot = kit_prot(&fs->k, leaf, slot);
		fs->prot_leaf = leaf;
		fs->prot_slot = slot;
	}
	return &fs->prot;
}

int lfs_io(struct lfs *fs, int write, uint64_t lba, void *mem, uint32_t nsect)
{
	uint64_t s = lfs_seg_of(fs, lba);
	struct vvol_place pl;
	int r = vvol_chunk(&fs->v, s, 0, &pl);
	if (r < 0)
		return r;
	if (r == 0)
		return -EIO;                 /* not mapped: nothing was written there */
	int64_t e = kit_io_prot(&fs->k, lfs_prot(fs, pl.leaf, pl.slot), write,
	                        pl.phys + (lba - s * fs->sb.seg_sect), mem, (uint64_t)nsect * LFS_SECT);
	if (write) {
		fs->st.wr_reqs++;
		fs->st.wr_sect += nsect;
	} else {
		fs->st.rd_reqs++;
		fs->st.rd_sect += nsect;
	}
	return e < 0 ? kit_err(e) : 0;
}

/* lfs_io's read of sectors [off, off + nsect) of the segment at pl,
 * started through batch b (edc_batch_wait ends it): 1 started, 0 refused
 * (the caller reads when it must). */
static int read_start(struct lfs *fs, struct edc_batch *b, const struct vvol_place *pl, uint32_t off,
                      void *mem, uint32_t nsect)
{
	if (edc_batch_io(b, lfs_prot(fs, pl->leaf, pl->slot), 0, pl->phys + off, mem,
	                 (uint64_t)nsect * LFS_SECT) < 0)
		return 0;
	fs->st.rd_reqs++;
	fs->st.rd_sect += nsect;
	return 1;
}

/* The buffer holding sector lba, or NULL. */
static const struct lfs_lbuf *in_buf(const struct lfs *fs, uint64_t lba)
{
	uint64_t s = lfs_seg_of(fs, lba);
	uint32_t off = (uint32_t)(lba - s * fs->sb.seg_sect);
	for (int i = 0; i < 2; i++) {
		const struct lfs_lbuf *b = &fs->buf[i];
		if (b->seg == s && b->mem && off >= b->base && off < b->valid)
			return b;
	}
	return NULL;
}

/* Is a sector before end_off (a chunk's end, in segment s) one a segment
 * buffer may still write?  Sectors of the log's segments before where the
 * log was when it was mounted (a buffer's base) were written before: they
 * may be cached - the last checkpoint's group, inodes and directories
 * included, lies there after a mount. */
static int held(const struct lfs *fs, uint64_t s, uint32_t end_off)
{
	for (int i = 0; i < 2; i++)
		if (fs->buf[i].seg == s && end_off > fs->buf[i].base)
			return 1;
	return 0;
}

static struct lfs_rcent *rc_find(struct lfs *fs, uint64_t chunk)
{
	for (int i = 0; i < LFS_RC_N; i++)
		if (fs->rc[i].chunk == chunk + 1)
			return &fs->rc[i];
	return NULL;
}

/* Wait for the entry's read ahead, if any; a failed one leaves it empty. */
static void rc_wait(struct lfs_rcent *v)
{
	if (!v->pending)
		return;
	v->pending = 0;
	if (edc_batch_wait(&v->b) < 0)
		v->chunk = 0;
}

/* The least recently used entry (its read ahead finished). */
static struct lfs_rcent *rc_victim(struct lfs *fs)
{
	struct lfs_rcent *v = &fs->rc[0];
	for (int i = 1; i < LFS_RC_N; i++)
		if (fs->rc[i].age < v->age)
			v = &fs->rc[i];
	rc_wait(v);
	if (v->mem == NULL)
		v->mem = malloc((size_t)LFS_RC_SECT * LFS_SECT);
	return v->mem ? v : NULL;
}

/* Start reading chunk c into the cache, unless it is there, or in a
 * segment the log may still write, or not mapped. */
static void rc_ahead(struct lfs *fs, uint64_t c)
{
	uint64_t lba = c * LFS_RC_SECT, s = lfs_seg_of(fs, lba);
	uint32_t cend = (uint32_t)(lba + LFS_RC_SECT - s * fs->sb.seg_sect);
	struct vvol_place pl;
	if (s == 0 || s >= fs->sb.nsegs || rc_find(fs, c) != NULL || held(fs, s, cend) ||
	    in_buf(fs, lba) != NULL || in_buf(fs, lba + LFS_RC_SECT - 1) != NULL ||
	    vvol_chunk(&fs->v, s, 0, &pl) <= 0)
		return;
	struct lfs_rcent *v = rc_victim(fs);
	if (v == NULL)
		return;
	if (v->b.c == NULL)
		edc_batch_init(&v->b, fs->k.c, v->slots, 2);
	v->chunk = 0;
	if (!read_start(fs, &v->b, &pl, (uint32_t)(lba - s * fs->sb.seg_sect), v->mem, LFS_RC_SECT)) {
		edc_batch_wait(&v->b);
		return;                      /* refused: read when wanted, as before */
	}
	v->pending = 1;
	v->ahead = 1;
	v->chunk = c + 1;
	v->nsect = LFS_RC_SECT;
	v->age = ++fs->rcage;
	fs->st.ra_reqs++;
}

/* Read chunk c whole into the cache. */
static struct lfs_rcent *rc_fill(struct lfs *fs, uint64_t c)
{
	struct lfs_rcent *v = rc_victim(fs);
	if (v == NULL)
		return NULL;
	v->chunk = 0;
	v->ahead = 0;
	if (lfs_io(fs, 0, c * LFS_RC_SECT, v->mem, LFS_RC_SECT) < 0)
		return NULL;
	v->chunk = c + 1;
	v->nsect = LFS_RC_SECT;
	v->age = ++fs->rcage;
	return v;
}

/* Is lba near where a recent read ended? */
static int near(struct lfs *fs, uint64_t lba)
{
	for (int i = 0; i < fs->nrecent; i++)
		if (lba + 16 >= fs->recent[i] && lba <= fs->recent[i] + 2 * LFS_RC_SECT)
			return 1;
	return 0;
}

static void remember(struct lfs *fs, uint64_t end)
{
	for (int i = 0; i < fs->nrecent; i++)
		if (end >= fs->recent[i] && end <= fs->recent[i] + 2 * LFS_RC_SECT) {
			fs->recent[i] = end;
			return;
		}
	if (fs->nrecent < 4) {
		fs->recent[fs->nrecent++] = end;
		return;
	}
	memmove(fs->recent, fs->recent + 1, 3 * sizeof fs->recent[0]);
	fs->recent[3] = end;
}

/* Sectors that lie in one segment and one cache chunk. */
static int read_piece(struct lfs *fs, uint64_t lba, uint32_t n, uint8_t *dst)
{
	const struct lfs_lbuf *b = in_buf(fs, lba);
	uint64_t s = lfs_seg_of(fs, lba);
	if (b != NULL) {
		memcpy(dst, b->mem + (size_t)(lba - s * fs->sb.seg_sect) * LFS_SECT, (size_t)n * LFS_SECT);
		return 0;
	}
	uint64_t c = lba / LFS_RC_SECT;
	struct lfs_rcent *r = rc_find(fs, c);
	uint32_t cend = (uint32_t)((c + 1) * LFS_RC_SECT - s * fs->sb.seg_sect);
	int seq = near(fs, lba), ahead = 0;
	if (r != NULL) {
		rc_wait(r);
		if (r->chunk == 0)
			r = NULL;                /* its read ahead failed */
	}
	if (r == NULL && !held(fs, s, cend) && seq) {
		fs->st.rc_misses++;
		r = rc_fill(fs, c);
		ahead = r != NULL;
	} else if (r != NULL) {
		fs->st.rc_hits++;
		ahead = r->ahead;            /* the first use of one read ahead */
		r->ahead = 0;
	}
	remember(fs, lba + n);
	if (ahead) {
		/* A reader moving through the log (a miss near where it read,
		 * or reaching a chunk read ahead): the segment's next chunks,
		 * before it asks. */
		r->age = ++fs->rcage;        /* never the victim of what follows */
		uint64_t last = (s + 1) * fs->sb.seg_sect / LFS_RC_SECT;
		for (uint64_t k = 1; k <= LFS_RA_CHUNKS && c + k < last; k++)
			rc_ahead(fs, c + k);
	}
	if (r == NULL)
		return lfs_io(fs, 0, lba, dst, n);
	r->age = ++fs->rcage;
	memcpy(dst, r->mem + (size_t)(lba - c * LFS_RC_SECT) * LFS_SECT, (size_t)n * LFS_SECT);
	return 0;
}

int lfs_read(struct lfs *fs, uint64_t lba, uint32_t nsect, void *dst)
{
	uint8_t *d = dst;
	while (nsect > 0) {
		uint64_t s = lfs_seg_of(fs, lba);
		uint64_t send = (s + 1) * fs->sb.seg_sect;
		uint32_t n = send - lba < nsect ? (uint32_t)(send - lba) : nsect;
		/* Large and not in a buffer: straight in. */
		if (n >= LFS_RC_SECT && in_buf(fs, lba) == NULL && in_buf(fs, lba + n - 1) == NULL &&
		    !held(fs, s, (uint32_t)(lba + n - s * fs->sb.seg_sect))) {
			TRY(lfs_io(fs, 0, lba, d, n));
		} else {
			for (uint32_t done = 0; done < n;) {
				uint64_t a = lba + done;
				uint64_t cend = (a / LFS_RC_SECT + 1) * LFS_RC_SECT;
				uint32_t m = cend - a < n - done ? (uint32_t)(cend - a) : n - done;
				/* A buffer holds [base, valid): split there. */
				for (int i = 0; i < 2; i++) {
					const struct lfs_lbuf *b = &fs->buf[i];
					if (b->seg != s)
						continue;
					uint64_t lo = s * fs->sb.seg_sect + b->base;
					if (a < lo && a + m > lo)
						m = (uint32_t)(lo - a);
				}
				TRY(read_piece(fs, a, m, d + (size_t)done * LFS_SECT));
				done += m;
			}
		}
		lba += n;
		d += (size_t)n * LFS_SECT;
		nsect -= n;
	}
	return 0;
}

int lfs_read_block(struct lfs *fs, uint64_t ptr, void *dst)
{
	uint32_t n = LFS_PTR_NSECT(ptr);
	TRY(lfs_read(fs, LFS_PTR_LBA(ptr), n, dst));
	if (n < LFS_BSECT)
		memset((uint8_t *)dst + (size_t)n * LFS_SECT, 0, (size_t)(LFS_BSECT - n) * LFS_SECT);
	return 0;
}

int lfs_read_seg(struct lfs *fs, uint64_t seg, uint32_t n, void *dst)
{
	return lfs_read(fs, seg * fs->sb.seg_sect, n, dst);
}

int lfs_read_seg_start(struct lfs *fs, struct edc_batch *b, uint64_t seg, void *dst)
{
	struct vvol_place pl;
	return !held(fs, seg, fs->sb.seg_sect) && vvol_chunk(&fs->v, seg, 0, &pl) > 0 &&
	       read_start(fs, b, &pl, 0, dst, fs->sb.seg_sect);
}

void lfs_rc_drop(struct lfs *fs, uint64_t seg)
{
	uint64_t c0 = seg * fs->sb.seg_sect / LFS_RC_SECT;
	uint64_t c1 = c0 + fs->sb.seg_sect / LFS_RC_SECT;
	for (int i = 0; i < LFS_RC_N; i++)
		if (fs->rc[i].chunk > c0 && fs->rc[i].chunk <= c1) {
			rc_wait(&fs->rc[i]);
			fs->rc[i].chunk = 0;
		}
}

void lfs_rc_free(struct lfs *fs)
{
	for (int i = 0; i < LFS_RC_N; i++) {
		rc_wait(&fs->rc[i]);
		free(fs->rc[i].mem);
		fs->rc[i].mem = NULL;
		fs->rc[i].chunk = 0;
	}
}
