/*
 * cache.c - the virtual volume's cache and its write-back: what a file
 * system reads and writes, in 64 KiB blocks with a valid, a dirty and a
 * class mark per sector; vvol_sync turns the dirty sectors into disk
 * writes in the order the map's hardening needs.
 *
 * Reads.  A sector that is not cached is read through the leaf that maps
 * its chunk - or is zeros, without touching the disk, if its chunk was
 * never written.  Runs that lie next to each other on the disk and in
 * memory go as one request, and every request of one call is in flight
 * at once.  Reads of a block or more skip the cache (vvol_read straight
 * into the caller's buffer, taking what the cache has that is newer).
 *
 * Write-back (vvol_sync(mask)), the hardening order of docs/vvol.md:
 *   1. the dirty sectors of the classes in mask, in volume order.  A
 *      chunk already mapped gets its dirty runs written in place.  A chunk
 *      not yet mapped first gets its sectors (vv_alloc: a leaf entry, in
 *      the exodisk's cache only) and then is written whole: the dirty
 *      sectors, and zeros for everything else - also for sectors dirty in
 *      a class not being written now, whose durable contents are still
 *      "never written", that is zeros.  Freed sectors are not scrubbed,
 *      so a chunk written only in part would show whatever was there
 *      before: another file system's data, or 0xEE in the power-cut tests.
 *   2. wait for every write; one flush (kit_barrier);
 *   3. commit the map nodes that changed (vv_commit, deepest first).
 * A crash before 3 leaves the new chunks unmapped (the exodisk undoes the
 * allocation) and so reading as zeros, their data unseen; after 3, every
 * mapped chunk holds what was written.  Between an allocation and the
 * issue of its chunk's write no other exodisk call is made, so the kit's
 * writeback hook (vvol_harden: wait, flush, commit) is safe whenever the
 * exodisk asks for room.  A write that fails makes the error sticky: no
 * commit happens any more in this mount (what was not durable is lost, as
 * in a crash, and never half-exposed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/vvol/vv_int.h"

#define INFLIGHT 32                 /* requests in flight                          */
#define RA_BLOCKS 32                /* the most blocks one read fills (2 MiB)       */

struct vv_blk {
	uint64_t bno;                 /* lba / VV_BLOCK                                */
	uint8_t *data;                /* VV_BLOCK sectors                              */
	uint64_t valid[2], dirty[2];
	uint64_t fill[2];             /* being read                                   */
	uint64_t wrote[2];            /* written by the vvol_sync under way           */
	uint64_t disk[2];             /* read from the disk and not checked since     */
	uint8_t cls[VV_BLOCK];        /* the class of each dirty sector               */
	int32_t pins;
	int32_t used;
	struct vv_blk *hnext, *prev, *next;
};

/* ---- bits ------------------------------------------------------------------ */

static inline int tst(const uint64_t *m, unsigned s)
{
	return (int)((m[s >> 6] >> (s & 63)) & 1);
}

static inline void set(uint64_t *m, unsigned s)
{
	m[s >> 6] |= 1ull << (s & 63);
}

static inline void clr(uint64_t *m, unsigned s)
{
	m[s >> 6] &= ~(1ull << (s & 63));
}

static inline int any(const uint64_t *m)
{
	return (m[0] | m[1]) != 0;
}

static int dirty_in(const struct vv_blk *b, unsigned s, unsigned mask)
{
	return tst(b->dirty, s) && (mask >> b->cls[s] & 1);
}

/* ---- blocks -------------------------------------------------------------------- */

/* Block memory the cache let go of (a block dropped, a volume closed),
 * for the next block this process needs: linked through their first
 * bytes, so taking and giving one costs a few instructions.  Not given
 * back to malloc: the RISC-V heap (libos/malloc.c) keeps free blocks
 * over 32 KiB on one list in address order that every large malloc and
 * free walks - made for a few large blocks, not a cache's thousands,
 * which between other allocations would not merge and would make each
 * free walk them all.  The heap never shrinks, so memory kept here is
 * not memory the system could have had back; what it does cost is that
 * the process's other large allocations cannot use it.  Bounded by the
 * most one volume's cache holds by default (VV_CACHE_AUTO_MAX), so a
 * program that closes a volume and opens another (the benchmarks' cold
 * phases) finds its blocks here; beyond that, back to malloc. */
static void *pool;
static uint32_t npool;

static uint8_t *data_new(void)
{
	if (pool != NULL) {
		void *d = pool;
		memcpy(&pool, d, sizeof pool);
		npool--;
		return d;
	}
	return malloc((size_t)VV_BLOCK * ED_SECTOR);
}

static void data_free(uint8_t *d)
{
	if (npool >= VV_CACHE_AUTO_MAX / ((size_t)VV_BLOCK * ED_SECTOR)) {
		free(d);
		return;
	}
	memcpy(d, &pool, sizeof pool);
	pool = d;
	npool++;
}

static uint32_t hslot(const struct vvol *v, uint64_t bno)
{
	return (uint32_t)((bno * 0x9e3779b97f4a7c15ull) >> 32) & (v->nhash - 1);
}

static void lru_unlink(struct vvol *v, struct vv_blk *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		v->lru = b->next;
	if (b->next)
		b->next->prev = b->prev;
	else
		v->lru_tail = b->prev;
	b->prev = b->next = NULL;
}

static void lru_front(struct vvol *v, struct vv_blk *b)
{
	b->next = v->lru;
	b->prev = NULL;
	if (v->lru)
		v->lru->prev = b;
	v->lru = b;
	if (v->lru_tail == NULL)
		v->lru_tail = b;
}

static void hash_remove(struct vvol *v, struct vv_blk *b)
{
	struct vv_blk **pp = &v->hash[hslot(v, b->bno)];
	while (*pp && *pp != b)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = b->hnext;
	b->hnext = NULL;
}

static struct vv_blk *lookup(struct vvol *v, uint64_t bno)
{
	for (struct vv_blk *b = v->hash[hslot(v, bno)]; b; b = b->hnext)
		if (b->bno == bno)
			return b;
	return NULL;
}

/* The cached block bno, or a new one (nothing valid) in place of the least
 * recently used clean, unpinned block; pinned.  NULL when every block is
 * dirty or pinned, or there is no memory. */
static struct vv_blk *get(struct vvol *v, uint64_t bno)
{
	struct vv_blk *b = lookup(v, bno);
	if (b != NULL) {
		v->st.hits++;
		lru_unlink(v, b);
		lru_front(v, b);
		b->pins++;
		return b;
	}
	v->st.misses++;
	if (v->nblk < v->maxblk) {
		b = calloc(1, sizeof *b);
		uint8_t *d = b ? data_new() : NULL;
		if (d == NULL) {
			free(b);
			b = NULL;
		} else {
			b->data = d;
			v->nblk++;
		}
	}
	if (b == NULL) {
		for (b = v->lru_tail; b && (b->pins || any(b->dirty)); b = b->prev)
			;
		if (b == NULL)
			return NULL;
		lru_unlink(v, b);
		hash_remove(v, b);
	}
	uint8_t *d = b->data;
	memset(b, 0, sizeof *b);
	b->data = d;
	b->bno = bno;
	b->used = 1;
	b->pins = 1;
	uint32_t h = hslot(v, bno);
	b->hnext = v->hash[h];
	v->hash[h] = b;
	lru_front(v, b);
	return b;
}

static void unpin(struct vv_blk *b)
{
	if (b->pins > 0)
		b->pins--;
}

static void mark_dirty(struct vvol *v, struct vv_blk *b, unsigned s, int cls)
{
	if (!any(b->dirty))
		v->ndirty++;
	if (!tst(b->dirty, s)) {
		set(b->dirty, s);
		b->cls[s] = (uint8_t)cls;
		v->dsect[cls]++;
	} else if (cls < b->cls[s]) {
		v->dsect[b->cls[s]]--;
		b->cls[s] = (uint8_t)cls;       /* the earliest class it was dirtied with */
		v->dsect[cls]++;
	}
	set(b->valid, s);
	clr(b->disk, s);                   /* the contents are ours now */
}

static void mark_clean(struct vvol *v, struct vv_blk *b, unsigned s)
{
	if (!tst(b->dirty, s))
		return;
	clr(b->dirty, s);
	v->dsect[b->cls[s]]--;
	if (!any(b->dirty))
		v->ndirty--;
}

/* ---- disk requests -------------------------------------------------------------- */

/* One run of sectors going to or from the disk through a leaf, grown while
 * what comes next lies right after it on the disk and in memory. */
struct run {
	struct vv_node *leaf;
	uint64_t phys;
	uint8_t *mem;
	uint64_t nsect;
};

static int issue(struct vvol *v, struct edc_batch *bt, int write, struct run *r)
{
	if (r->nsect == 0)
		return 0;
	struct kit *k = v->k;
	struct ed_protector p = kit_prot(k, r->leaf->sector, r->leaf->slot);
	int64_t e;
	KIT_RETRY(k, r->leaf->sector, r->leaf->slot, e,
	          edc_batch_io(bt, &p, write, r->phys, r->mem, r->nsect * ED_SECTOR));
	if (write) {
		k->unflushed++;
		v->st.wr_reqs++;
		v->st.wr_sect += r->nsect;
	} else {
		v->st.rd_reqs++;
		v->st.rd_sect += r->nsect;
	}
	r->nsect = 0;
	return e < 0 ? kit_err(e) : 0;
}

/* Add sectors [phys, phys + n) <-> mem to the run, issuing the run first
 * if they do not continue it. */
static int add(struct vvol *v, struct edc_batch *bt, int write, struct run *r,
               struct vv_node *leaf, uint64_t phys, uint8_t *mem, uint64_t n)
{
	if (r->nsect > 0 && r->leaf == leaf && r->phys + r->nsect == phys &&
	    r->mem + r->nsect * ED_SECTOR == mem && (r->nsect + n) * ED_SECTOR <= ED_IO_MAX) {
		r->nsect += n;
		return 0;
	}
	int e = issue(v, bt, write, r);
	r->leaf = leaf;
	r->phys = phys;
	r->mem = mem;
	r->nsect = n;
	return e;
}

/* Read volume sectors [lba, lba + n) into mem: zeros where no chunk is
 * mapped, else requests added to the run (not yet waited for). */
static int read_span(struct vvol *v, struct edc_batch *bt, struct run *r, uint64_t lba,
                     uint8_t *mem, uint64_t n)
{
	if (v->k == NULL) {
		memcpy(mem, v->img + lba * ED_SECTOR, n * ED_SECTOR);
		return 0;
	}
	while (n > 0) {
		uint64_t c = vv_chunk_of(v, lba), off = lba - c * v->d.chunk;
		uint64_t m = v->d.chunk - off < n ? v->d.chunk - off : n;
		uint64_t phys;
		struct vv_node *leaf;
		int e = vv_lookup(v, c, &phys, &leaf);
		if (e < 0)
			return e;
		if (phys == 0)
			memset(mem, 0, m * ED_SECTOR);
		else if ((e = add(v, bt, 0, r, leaf, phys + off, mem, m)) < 0)
			return e;
		lba += m;
		mem += m * ED_SECTOR;
		n -= m;
	}
	return 0;
}

/* Start reading the sectors of b in [s0, s1) that are neither valid nor
 * being read; they become valid in finish_fills. */
static int fill(struct vvol *v, struct edc_batch *bt, struct run *r, struct vv_blk *b,
                unsigned s0, unsigned s1)
{
	uint64_t lba0 = b->bno * VV_BLOCK;
	if (lba0 + s1 > v->d.nsectors)
		s1 = (unsigned)(v->d.nsectors - lba0);
	for (unsigned s = s0; s < s1;) {
		if (tst(b->valid, s) || tst(b->fill, s)) {
			s++;
			continue;
		}
		unsigned e = s;
		while (e < s1 && !tst(b->valid, e) && !tst(b->fill, e))
			e++;
		int err = read_span(v, bt, r, lba0 + s, b->data + (size_t)s * ED_SECTOR, e - s);
		if (err < 0)
			return err;
		for (unsigned i = s; i < e; i++)
			set(b->fill, i);
		s = e;
	}
	return 0;
}

/* Wait for the reads; the sectors read become valid (or, on an error, are
 * read again next time). */
static int finish_fills(struct vvol *v, struct edc_batch *bt, struct run *r,
                        struct vv_blk **bl, int nb)
{
	int e = v->k ? issue(v, bt, 0, r) : 0;
	int32_t w = v->k ? edc_batch_wait(bt) : 0;
	if (e == 0)
		e = kit_err(w);
	for (int i = 0; i < nb; i++) {
		if (e == 0) {
			bl[i]->valid[0] |= bl[i]->fill[0];
			bl[i]->valid[1] |= bl[i]->fill[1];
			bl[i]->disk[0] |= bl[i]->fill[0];
			bl[i]->disk[1] |= bl[i]->fill[1];
		}
		bl[i]->fill[0] = bl[i]->fill[1] = 0;
	}
	return e;
}

/* ---- through the cache ---------------------------------------------------------------- */

static int range_ok(const struct vvol *v, uint64_t lba, uint64_t n)
{
	return lba <= v->d.nsectors && n <= v->d.nsectors - lba;
}

/* A large read: straight into buf, with what the cache holds (newer than
 * the disk if dirty) copied over it. */
static int read_direct(struct vvol *v, uint64_t lba, uint8_t *buf, uint64_t n)
{
	struct edc_slot slots[INFLIGHT];
	struct edc_batch bt;
	struct run r = { 0 };
	if (v->k)
		edc_batch_init(&bt, v->k->c, slots, INFLIGHT);
	int e = 0;
	uint64_t at = lba;
	while (e == 0 && at < lba + n) {
		uint64_t bno = at / VV_BLOCK;
		uint64_t end = (bno + 1) * VV_BLOCK < lba + n ? (bno + 1) * VV_BLOCK : lba + n;
		struct vv_blk *b = lookup(v, bno);
		uint8_t *mem = buf + (at - lba) * ED_SECTOR;
		if (b == NULL) {
			e = read_span(v, &bt, &r, at, mem, end - at);
		} else {
			for (uint64_t s = at; e == 0 && s < end;) {
				unsigned i = (unsigned)(s - bno * VV_BLOCK);
				uint64_t t = s;
				int valid = tst(b->valid, i);
				while (t < end && tst(b->valid, (unsigned)(t - bno * VV_BLOCK)) == valid)
					t++;
				if (valid)
					memcpy(buf + (s - lba) * ED_SECTOR, b->data + (size_t)i * ED_SECTOR,
					       (t - s) * ED_SECTOR);
				else
					e = read_span(v, &bt, &r, s, buf + (s - lba) * ED_SECTOR, t - s);
				s = t;
			}
		}
		at = end;
	}
	if (v->k) {
		int f = issue(v, &bt, 0, &r);
		int32_t w = edc_batch_wait(&bt);
		if (e == 0)
			e = f ? f : kit_err(w);
	}
	return e;
}

/* Are sectors [lba, lba + n) all valid in the cache? */
static int cached(struct vvol *v, uint64_t lba, uint64_t n)
{
	for (uint64_t at = lba; at < lba + n;) {
		struct vv_blk *b = lookup(v, at / VV_BLOCK);
		if (b == NULL)
			return 0;
		uint64_t i = at % VV_BLOCK, e = i + (lba + n - at) < VV_BLOCK ? i + (lba + n - at) : VV_BLOCK;
		for (uint64_t s = i; s < e; s++)
			if (!tst(b->valid, (unsigned)s))
				return 0;
		at += e - i;
	}
	return 1;
}

static void copy_out(struct vvol *v, uint64_t lba, void *buf, uint64_t n)
{
	for (uint64_t at = lba; at < lba + n;) {
		struct vv_blk *b = lookup(v, at / VV_BLOCK);
		lru_unlink(v, b);
		lru_front(v, b);
		v->st.hits++;
		uint64_t i = at % VV_BLOCK;
		uint64_t m = VV_BLOCK - i < lba + n - at ? VV_BLOCK - i : lba + n - at;
		memcpy((uint8_t *)buf + (at - lba) * ED_SECTOR, b->data + i * ED_SECTOR, m * ED_SECTOR);
		at += m;
	}
}

/* Read [lba, lba + n) into buf through the cache, filling the sectors of
 * the window [w0, w1) (which holds the request) that are not cached, all
 * in flight at once. */
static int read_window(struct vvol *v, uint64_t lba, void *buf, uint64_t n, uint64_t w0, uint64_t w1)
{
	/* All of it cached: no read, and no read-ahead either - reading ahead
	 * only on a miss fetches a window once, not a little more per call. */
	if (cached(v, lba, n)) {
		copy_out(v, lba, buf, n);
		return 0;
	}
	/* A large read with no window around it, or more than the cache
	 * fills at once: straight into the caller's buffer. */
	uint64_t b0 = lba / VV_BLOCK, bl_last = (lba + n - 1) / VV_BLOCK;
	if ((w0 == lba && w1 == lba + n && n >= VV_BLOCK) || bl_last - b0 >= RA_BLOCKS)
		return read_direct(v, lba, buf, n);
	if (w1 > v->d.nsectors)
		w1 = v->d.nsectors;
	/* The window's blocks, those of the request first among them. */
	uint64_t wb0 = w0 / VV_BLOCK;
	if (bl_last - wb0 >= RA_BLOCKS) {
		wb0 = b0;
		w0 = lba;
	}
	struct vv_blk *bl[RA_BLOCKS];
	int nb = 0;
	uint64_t b1 = (w1 - 1) / VV_BLOCK;
	if (b1 - wb0 >= RA_BLOCKS)
		b1 = wb0 + RA_BLOCKS - 1;
	for (uint64_t bno = wb0; bno <= b1; bno++) {
		struct vv_blk *b = get(v, bno);
		if (b == NULL)
			break;
		bl[nb++] = b;
	}
	/* The blocks holding what was asked for must be there. */
	if ((uint64_t)nb < bl_last - wb0 + 1) {
		for (int i = 0; i < nb; i++)
			unpin(bl[i]);
		return read_direct(v, lba, buf, n);
	}
	struct edc_slot slots[INFLIGHT];
	struct edc_batch bt;
	struct run r = { 0 };
	if (v->k)
		edc_batch_init(&bt, v->k->c, slots, INFLIGHT);
	int e = 0;
	for (int i = 0; i < nb && e == 0; i++) {
		uint64_t first = bl[i]->bno * VV_BLOCK;
		uint64_t s0 = w0 > first ? w0 - first : 0;
		uint64_t s1 = w1 - first < VV_BLOCK ? w1 - first : VV_BLOCK;
		e = fill(v, &bt, &r, bl[i], (unsigned)s0, (unsigned)s1);
	}
	int f = finish_fills(v, &bt, &r, bl, nb);
	if (e == 0)
		e = f;
	for (uint64_t at = lba; e == 0 && at < lba + n;) {
		struct vv_blk *b = bl[at / VV_BLOCK - wb0];
		uint64_t i = at - b->bno * VV_BLOCK;
		uint64_t m = VV_BLOCK - i < lba + n - at ? VV_BLOCK - i : lba + n - at;
		memcpy((uint8_t *)buf + (at - lba) * ED_SECTOR, b->data + i * ED_SECTOR, m * ED_SECTOR);
		at += m;
	}
	for (int i = 0; i < nb; i++)
		unpin(bl[i]);
	return e;
}

int vvol_read(struct vvol *v, uint64_t lba, void *buf, uint64_t n, uint32_t ra)
{
	if (!range_ok(v, lba, n))
		return -EINVAL;
	if (n == 0)
		return 0;
	return read_window(v, lba, buf, n, lba, lba + n + ra);
}

int vvol_read_around(struct vvol *v, uint64_t lba, void *buf, uint64_t n, uint64_t w0, uint64_t w1)
{
	if (!range_ok(v, lba, n) || w0 > lba || w1 < lba + n)
		return -EINVAL;
	if (n == 0)
		return 0;
	return read_window(v, lba, buf, n, w0, w1);
}

int vvol_write(struct vvol *v, uint64_t lba, const void *buf, uint64_t n, int cls)
{
	if (!range_ok(v, lba, n) || cls < 0 || cls >= VV_NCLASS)
		return -EINVAL;
	if (v->readonly)
		return -EROFS;
	const uint8_t *src = buf;
	while (n > 0) {
		struct vv_blk *b = get(v, lba / VV_BLOCK);
		if (b == NULL)
			return -ENOBUFS;
		unsigned i = (unsigned)(lba % VV_BLOCK);
		uint64_t m = VV_BLOCK - i < n ? VV_BLOCK - i : n;
		if (src)
			memcpy(b->data + (size_t)i * ED_SECTOR, src, m * ED_SECTOR);
		else
			memset(b->data + (size_t)i * ED_SECTOR, 0, m * ED_SECTOR);
		for (unsigned s = i; s < i + m; s++)
			mark_dirty(v, b, s, cls);
		unpin(b);
		lba += m;
		n -= m;
		if (src)
			src += m * ED_SECTOR;
	}
	return 0;
}

int vvol_overlay(struct vvol *v, uint64_t lba, const void *buf)
{
	if (!range_ok(v, lba, 1) || lba >= v->d.nsectors)
		return -EINVAL;
	struct vv_blk *b = get(v, lba / VV_BLOCK);
	if (b == NULL)
		return -ENOBUFS;
	unsigned s = (unsigned)(lba % VV_BLOCK);
	int e = 0;
	if (tst(b->dirty, s) || tst(b->fill, s)) {
		e = -EBUSY;
	} else {
		memcpy(b->data + (size_t)s * ED_SECTOR, buf, ED_SECTOR);
		set(b->valid, s);
		clr(b->disk, s);              /* not the disk's: nothing to check */
	}
	unpin(b);
	return e;
}

uint8_t *vvol_sector(struct vvol *v, uint64_t lba, int flags, int *err)
{
	*err = 0;
	if (lba >= v->d.nsectors) {
		*err = -EINVAL;
		return NULL;
	}
	struct vv_blk *b = get(v, lba / VV_BLOCK);
	if (b == NULL) {
		*err = -ENOBUFS;
		return NULL;
	}
	unsigned i = (unsigned)(lba % VV_BLOCK);
	if (!tst(b->valid, i)) {
		if (flags & VV_NOFILL) {
			set(b->valid, i);
		} else {
			struct edc_slot slots[INFLIGHT];
			struct edc_batch bt;
			struct run r = { 0 };
			if (v->k)
				edc_batch_init(&bt, v->k->c, slots, INFLIGHT);
			int e = fill(v, &bt, &r, b, i, (flags & VV_RA) ? VV_BLOCK : i + 1);
			int f = finish_fills(v, &bt, &r, &b, 1);
			if (e == 0)
				e = f;
			if (e < 0) {
				unpin(b);
				*err = e;
				return NULL;
			}
		}
	}
	return b->data + (size_t)i * ED_SECTOR;
}

void vvol_unpin(struct vvol *v, uint64_t lba)
{
	struct vv_blk *b = lookup(v, lba / VV_BLOCK);
	if (b)
		unpin(b);
}

void vvol_dirty(struct vvol *v, uint64_t lba, uint64_t n, int cls)
{
	while (n > 0) {
		struct vv_blk *b = lookup(v, lba / VV_BLOCK);
		unsigned i = (unsigned)(lba % VV_BLOCK);
		uint64_t m = VV_BLOCK - i < n ? VV_BLOCK - i : n;
		for (unsigned s = i; b && s < i + m; s++)
			mark_dirty(v, b, s, cls);
		lba += m;
		n -= m;
	}
}

uint64_t vvol_dirty_sectors(const struct vvol *v, unsigned mask)
{
	uint64_t n = 0;
	for (int c = 0; c < VV_NCLASS; c++)
		if (mask >> c & 1)
			n += v->dsect[c];
	return n;
}

int vvol_pressed(const struct vvol *v, unsigned percent)
{
	return (uint64_t)v->ndirty * 100 >= (uint64_t)v->maxblk * percent;
}

/* ---- write-back --------------------------------------------------------------------- */

static int by_bno(const void *x, const void *y)
{
	const struct vv_blk *a = *(const struct vv_blk *const *)x, *b = *(const struct vv_blk *const *)y;
	return a->bno < b->bno ? -1 : a->bno > b->bno;
}

/* A staging buffer, kept until the batch is waited for. */
struct stage {
	void **v;
	int n, cap;
};

static uint8_t *stage_new(struct stage *st, size_t bytes)
{
	if (st->n == st->cap) {
		int cap = st->cap ? st->cap * 2 : 16;
		/* Grown by hand (picolibc's realloc, used here before
		 * libos/malloc.c, cleared the whole free chunk it grew into). */
		void **nv = malloc((size_t)cap * sizeof *nv);
		if (nv == NULL)
			return NULL;
		if (st->n)
			memcpy(nv, st->v, (size_t)st->n * sizeof *nv);
		free(st->v);
		st->v = nv;
		st->cap = cap;
	}
	uint8_t *p = calloc(1, bytes);
	if (p)
		st->v[st->n++] = p;
	return p;
}

static void stage_free(struct stage *st)
{
	for (int i = 0; i < st->n; i++)
		free(st->v[i]);
	free(st->v);
	memset(st, 0, sizeof *st);
}

/* Chunk c was just given sectors at phys: write all of it.  Straight from
 * block b when the chunk lies in it and holds nothing dirty of a class not
 * being written (its sectors not valid are zeros: set them so); else a
 * staging copy with the dirty sectors of mask in it and zeros around. */
static int write_new(struct vvol *v, struct edc_batch *bt, struct stage *st, struct vv_blk *b,
                     uint64_t c, uint64_t phys, struct vv_node *leaf, unsigned mask)
{
	uint64_t cs = c * v->d.chunk, ce = cs + v->d.chunk;
	uint64_t lba0 = b->bno * VV_BLOCK;
	int direct = cs >= lba0 && ce <= lba0 + VV_BLOCK;
	for (uint64_t s = cs; direct && s < ce; s++) {
		unsigned i = (unsigned)(s - lba0);
		if (tst(b->dirty, i) && !dirty_in(b, i, mask))
			direct = 0;
	}
	struct run r = { leaf, phys, NULL, v->d.chunk };
	if (direct) {
		for (uint64_t s = cs; s < ce; s++) {
			unsigned i = (unsigned)(s - lba0);
			if (!tst(b->valid, i)) {
				memset(b->data + (size_t)i * ED_SECTOR, 0, ED_SECTOR);
				set(b->valid, i);
				v->st.zero_sect++;
			}
			if (dirty_in(b, i, mask))
				set(b->wrote, i);
		}
		r.mem = b->data + (size_t)(cs - lba0) * ED_SECTOR;
		return issue(v, bt, 1, &r);
	}
	r.mem = stage_new(st, (size_t)v->d.chunk * ED_SECTOR);
	if (r.mem == NULL)
		return -ENOMEM;
	uint64_t copied = 0;
	for (uint64_t bno = cs / VV_BLOCK; bno * VV_BLOCK < ce; bno++) {
		struct vv_blk *x = lookup(v, bno);
		if (x == NULL || !any(x->dirty))
			continue;
		for (unsigned i = 0; i < VV_BLOCK; i++) {
			uint64_t s = bno * VV_BLOCK + i;
			if (s >= cs && s < ce && dirty_in(x, i, mask)) {
				memcpy(r.mem + (s - cs) * ED_SECTOR, x->data + (size_t)i * ED_SECTOR, ED_SECTOR);
				set(x->wrote, i);
				copied++;
			}
		}
	}
	v->st.zero_sect += v->d.chunk - copied;
	return issue(v, bt, 1, &r);
}

int vvol_harden(struct vvol *v)
{
	if (v->k == NULL)
		return 0;
	if (v->err)
		return v->err;
	if (v->batch != NULL) {
		int32_t w = edc_batch_wait(v->batch);
		if (w < 0)
			return v->err = kit_err(w);
	}
	struct kit *k = v->k;
	if (v->fresh > 0 || v->dirty.n == 0 || k->unflushed == 0) {
		int e = kit_barrier(k);
		if (e == 0)
			e = vv_commit(v);
		return e;
	}
	/* The commit maps nothing new - it only gives chunks back, which
	 * nothing durable uses - so it need not wait for the flush of the
	 * writes before it: both in flight at once, one wait for the disk. */
	struct kit_flush f;
	int e = kit_barrier_start(k, &f);
	if (e < 0)
		return e;
	e = vv_commit(v);
	int w = kit_barrier_end(k, &f);
	return w < 0 ? w : e;
}

static int write_back(struct vvol *v, unsigned mask, int harden);

static void note_written(struct vvol *v, uint64_t bno)
{
	for (uint32_t i = v->nwlog; i > 0 && i + 8 > v->nwlog; i--)
		if (v->wlog[i - 1] == bno)
			return;              /* written again since: listed already */
	if (v->nwlog == VV_WLOG)
		v->wover = 1;
	else
		v->wlog[v->nwlog++] = bno;
}

int vvol_track(struct vvol *v)
{
	if (v->wlog == NULL && (v->wlog = malloc(VV_WLOG * sizeof *v->wlog)) == NULL)
		return -ENOMEM;
	vvol_written_clear(v);
	return 0;
}

uint32_t vvol_written(struct vvol *v, const uint64_t **blocks, int *over)
{
	*blocks = v->wlog;
	*over = v->wover;
	return v->nwlog;
}

void vvol_written_clear(struct vvol *v)
{
	v->nwlog = 0;
	v->wover = 0;
}

int vvol_sync(struct vvol *v, unsigned mask)
{
	return write_back(v, mask, 1);
}

int vvol_writeout(struct vvol *v, unsigned mask)
{
	return write_back(v, mask, 0);
}

static int write_back(struct vvol *v, unsigned mask, int harden)
{
	if (v->err)
		return v->err;
	uint32_t nb = 0;
	struct vv_blk **bl = v->ndirty ? malloc(v->ndirty * sizeof *bl) : NULL;
	if (v->ndirty && bl == NULL)
		return -ENOMEM;
	for (struct vv_blk *b = v->lru; b; b = b->next) {
		int want = 0;
		for (unsigned s = 0; any(b->dirty) && s < VV_BLOCK && !want; s++)
			want = dirty_in(b, s, mask);
		if (want && nb < v->ndirty)
			bl[nb++] = b;
	}
	if (nb == 0) {
		free(bl);
		return v->readonly || !harden ? 0 : vvol_harden(v);
	}
	if (v->readonly) {
		free(bl);
		return -EROFS;
	}
	qsort(bl, nb, sizeof *bl, by_bno);
	if (v->k == NULL) {
		/* An image: in place, nothing to harden. */
		for (uint32_t i = 0; i < nb; i++)
			for (unsigned s = 0; s < VV_BLOCK; s++)
				if (dirty_in(bl[i], s, mask)) {
					memcpy(v->img + (bl[i]->bno * VV_BLOCK + s) * ED_SECTOR,
					       bl[i]->data + (size_t)s * ED_SECTOR, ED_SECTOR);
					mark_clean(v, bl[i], s);
				}
		free(bl);
		v->st.syncs++;
		return 0;
	}
	struct edc_slot slots[INFLIGHT];
	struct edc_batch bt;
	edc_batch_init(&bt, v->k->c, slots, INFLIGHT);
	v->batch = &bt;
	struct stage st = { 0 };
	struct run r = { 0 };
	int e = 0;
	for (uint32_t i = 0; i < nb && e == 0; i++) {
		struct vv_blk *b = bl[i];
		b->pins++;
		uint64_t lba0 = b->bno * VV_BLOCK;
		for (unsigned s = 0; s < VV_BLOCK && e == 0;) {
			if (!dirty_in(b, s, mask) || tst(b->wrote, s)) {
				s++;
				continue;
			}
			uint64_t c = vv_chunk_of(v, lba0 + s);
			uint64_t cend = (c + 1) * v->d.chunk - lba0;
			unsigned ce = cend < VV_BLOCK ? (unsigned)cend : VV_BLOCK;
			uint64_t phys;
			struct vv_node *leaf;
			e = vv_lookup(v, c, &phys, &leaf);
			if (e == 0 && phys == 0) {
				e = issue(v, &bt, 1, &r);
				if (e == 0)
					e = vv_alloc(v, c, &phys, &leaf);
				if (e == 0)
					e = write_new(v, &bt, &st, b, c, phys, leaf, mask);
				s = ce;
			} else if (e == 0) {
				unsigned t = s;
				while (t < ce && dirty_in(b, t, mask))
					set(b->wrote, t++);
				uint64_t off = lba0 + s - c * v->d.chunk;
				e = add(v, &bt, 1, &r, leaf, phys + off, b->data + (size_t)s * ED_SECTOR, t - s);
				s = t;
			}
		}
	}
	int f = issue(v, &bt, 1, &r);
	if (e == 0)
		e = f;
	int32_t w = edc_batch_wait(&bt);
	v->batch = NULL;
	stage_free(&st);
	if (w < 0)
		v->err = kit_err(w);       /* a write failed: never commit its chunk */
	for (uint32_t i = 0; i < nb; i++) {
		struct vv_blk *b = bl[i];
		if (v->wlog != NULL && any(b->wrote))
			note_written(v, b->bno);
		for (unsigned s = 0; s < VV_BLOCK; s++)
			if (tst(b->wrote, s)) {
				if (v->err == 0)
					mark_clean(v, b, s);
				clr(b->wrote, s);
			}
		unpin(b);
	}
	free(bl);
	/* Harden what was written even when something could not be (no room
	 * for a chunk, say): it is durable data the map may now point at. */
	int h = harden ? vvol_harden(v) : v->err;
	v->st.syncs++;
	return e ? e : h;
}

/* ---- giving chunks back ------------------------------------------------------------------ */

int vvol_discard(struct vvol *v, uint64_t lba, uint64_t n)
{
	if (!range_ok(v, lba, n))
		return -EINVAL;
	if (v->readonly)
		return -EROFS;
	uint64_t c0 = (lba + v->d.chunk - 1) / v->d.chunk, c1 = (lba + n) / v->d.chunk;
	for (uint64_t c = c0; c < c1; c++) {
		uint64_t cs = c * v->d.chunk, ce = cs + v->d.chunk;
		if (ce > v->d.nsectors)
			ce = v->d.nsectors;
		/* What the cache has of it is zeros now, and nothing to write. */
		for (uint64_t bno = cs / VV_BLOCK; bno * VV_BLOCK < ce; bno++) {
			struct vv_blk *b = lookup(v, bno);
			for (unsigned i = 0; b && i < VV_BLOCK; i++) {
				uint64_t s = bno * VV_BLOCK + i;
				if (s >= cs && s < ce) {
					memset(b->data + (size_t)i * ED_SECTOR, 0, ED_SECTOR);
					set(b->valid, i);
					clr(b->disk, i);
					mark_clean(v, b, i);
				}
			}
		}
		if (v->k == NULL)
			memset(v->img + cs * ED_SECTOR, 0, (ce - cs) * ED_SECTOR);
	}
	return v->k != NULL && c0 < c1 ? vv_free(v, c0, c1) : 0;
}

/* ---- checks a file system makes of what it reads ------------------------------------ */

int vvol_unchecked(struct vvol *v, uint64_t lba)
{
	struct vv_blk *b = lookup(v, lba / VV_BLOCK);
	unsigned s = (unsigned)(lba % VV_BLOCK);
	return b != NULL && tst(b->valid, s) && tst(b->disk, s);
}

void vvol_checked(struct vvol *v, uint64_t lba)
{
	struct vv_blk *b = lookup(v, lba / VV_BLOCK);
	if (b != NULL)
		clr(b->disk, (unsigned)(lba % VV_BLOCK));
}

int vvol_each_dirty(struct vvol *v, unsigned mask, int (*fn)(void *arg, uint64_t lba, int cls),
                    void *arg)
{
	/* Listed first: fn may use the cache, which reorders the blocks. */
	uint64_t n = vvol_dirty_sectors(v, mask), k = 0;
	if (n == 0)
		return 0;
	uint64_t *l = malloc(n * sizeof *l);
	if (l == NULL)
		return -ENOMEM;
	for (struct vv_blk *b = v->lru; b && k < n; b = b->next)
		for (unsigned s = 0; any(b->dirty) && s < VV_BLOCK && k < n; s++)
			if (dirty_in(b, s, mask))
				l[k++] = (b->bno * VV_BLOCK + s) << 2 | b->cls[s];
	int e = 0;
	for (uint64_t i = 0; i < k && e == 0; i++)
		e = fn(arg, l[i] >> 2, (int)(l[i] & 3));
	free(l);
	return e;
}

/* ---- another process changed the volume ----------------------------------------------------- */

/* Drop block b from the cache (clean, unpinned). */
static void blk_drop(struct vvol *v, struct vv_blk *b)
{
	lru_unlink(v, b);
	hash_remove(v, b);
	data_free(b->data);
	free(b);
	v->nblk--;
}

int vvol_forget(struct vvol *v, uint64_t lba, uint64_t n)
{
	if (!range_ok(v, lba, n))
		return -EINVAL;
	if (n == 0)
		return 0;
	uint64_t b0 = lba / VV_BLOCK, b1 = (lba + n - 1) / VV_BLOCK;
	/* A long range: walk the cache, not the range. */
	if (b1 - b0 >= v->nblk) {
		for (struct vv_blk *b = v->lru, *next; b; b = next) {
			next = b->next;
			if (b->bno < b0 || b->bno > b1)
				continue;
			if (any(b->dirty) || b->pins)
				return -EBUSY;
			blk_drop(v, b);
		}
		return 0;
	}
	for (uint64_t bno = b0; bno <= b1; bno++) {
		struct vv_blk *b = lookup(v, bno);
		if (b == NULL)
			continue;
		if (any(b->dirty) || b->pins)
			return -EBUSY;
		blk_drop(v, b);
	}
	return 0;
}

int vvol_reload(struct vvol *v, int force)
{
	if (v->batch != NULL)
		return -EBUSY;
	for (struct vv_blk *b = v->lru; b; b = b->next)
		if ((any(b->dirty) && !force) || b->pins)
			return -EBUSY;
	while (v->lru != NULL) {
		struct vv_blk *b = v->lru;
		v->lru = b->next;
		data_free(b->data);
		free(b);
	}
	memset(v->hash, 0, v->nhash * sizeof *v->hash);
	v->lru_tail = NULL;
	v->nblk = v->ndirty = 0;
	memset(v->dsect, 0, sizeof v->dsect);
	return vvol_reload_map(v);
}

int vvol_adopt(struct vvol *v)
{
	if (v->k == NULL || v->readonly)
		return 0;
	/* The map read again and every node loaded: loading a node takes it
	 * as ours when its page says it has changes nobody committed
	 * (map.c, load_node) - the one mechanism for a process that merely
	 * meets such a node and for this search for all of them.  (Read
	 * again because nodes loaded before - on a read-only volume, or
	 * before the death - were not checked then.) */
	int e = v->dirty.n != 0 ? vvol_harden(v) : 0;
	if (e == 0)
		e = vvol_reload_map(v);
	uint64_t chunks, nodes;
	if (e == 0)
		e = vv_count(v, &chunks, &nodes);
	return e < 0 ? e : vvol_harden(v);
}

int vvol_reload_map(struct vvol *v)
{
	if (v->k == NULL)
		return 0;
	if (v->batch != NULL || v->dirty.n != 0)
		return -EBUSY;
	/* The map as the others left it (committed: they harden before they
	 * let go); where the next chunk goes stays a hint. */
	uint64_t hint = v->hint;
	vv_map_free(v);
	v->fresh = 0;
	int e = vv_map_open(v);
	if (hint)
		v->hint = hint;
	return e;
}

/* ---- making and opening ---------------------------------------------------------------------- */

/* The machine's free memory in bytes, 0 when unknown: the guest's
 * ram_sys.c reads it from the kernel's information page; host programs
 * keep this default. */
__attribute__((weak)) uint64_t vvol_ram_free(void)
{
	return 0;
}

size_t vvol_cache_auto(void)
{
	uint64_t b = vvol_ram_free() / 4;
	if (b < VV_CACHE_AUTO_MIN)
		b = VV_CACHE_AUTO_MIN;
	if (b > VV_CACHE_AUTO_MAX)
		b = VV_CACHE_AUTO_MAX;
	return (size_t)b;
}

size_t vvol_cache_bytes(const struct vvol *v)
{
	return (size_t)v->maxblk * VV_BLOCK * ED_SECTOR;
}

static int cache_init(struct vvol *v, size_t cache_bytes)
{
	v->maxblk = (uint32_t)(cache_bytes / ((size_t)VV_BLOCK * ED_SECTOR));
	if (v->maxblk < 8)
		v->maxblk = 8;
	v->nhash = 1;
	while (v->nhash < v->maxblk * 2)
		v->nhash <<= 1;
	v->hash = calloc(v->nhash, sizeof *v->hash);
	return v->hash ? 0 : -ENOMEM;
}

int vvol_make(struct vvol *v, struct kit *k, int ent, uint64_t nsectors, uint32_t chunk,
              size_t cache_bytes)
{
	memset(v, 0, sizeof *v);
	if (chunk == 0)
		chunk = VV_CHUNK_DEF;
	if (chunk < VV_CHUNK_MIN || chunk > VV_CHUNK_MAX || (chunk & (chunk - 1)) != 0 ||
	    nsectors == 0 || ent < 1 || ent + 1 >= ED_XN_MAX_ENTRIES)
		return -EINVAL;
	v->k = k;
	v->ent = ent;
	v->d.magic = VV_DESC_MAGIC;
	v->d.nsectors = nsectors;
	v->d.chunk = chunk;
	v->d.version = 1;
	v->d.created = k->a.created;
	v->nchunks = (nsectors + chunk - 1) / chunk;
	int e = cache_init(v, cache_bytes);
	if (e == 0)
		e = vv_map_make(v);
	if (e < 0)
		vvol_close(v);
	return e;
}

int vvol_open(struct vvol *v, struct kit *k, int ent, size_t cache_bytes)
{
	memset(v, 0, sizeof *v);
	v->k = k;
	v->ent = ent;
	int e = cache_init(v, cache_bytes);
	if (e == 0)
		e = vv_map_open(v);
	if (e < 0)
		vvol_close(v);
	return e;
}

int vvol_open_image(struct vvol *v, uint8_t *img, uint64_t nsectors, size_t cache_bytes)
{
	memset(v, 0, sizeof *v);
	v->img = img;
	v->d.magic = VV_DESC_MAGIC;
	v->d.nsectors = nsectors;
	v->d.chunk = VV_CHUNK_MIN;
	v->d.version = 1;
	v->nchunks = (nsectors + VV_CHUNK_MIN - 1) / VV_CHUNK_MIN;
	return cache_init(v, cache_bytes);
}

void vvol_close(struct vvol *v)
{
	while (v->lru) {
		struct vv_blk *b = v->lru;
		v->lru = b->next;
		data_free(b->data);
		free(b);
	}
	free(v->hash);
	v->hash = NULL;
	free(v->wlog);
	v->wlog = NULL;
	v->lru_tail = NULL;
	v->nblk = v->ndirty = 0;
	memset(v->dsect, 0, sizeof v->dsect);
	if (v->k)
		vv_map_free(v);
}

/* ---- the map, for tools and tests ------------------------------------------------------------- */

int vvol_mapped(struct vvol *v, uint64_t lba, uint64_t *phys)
{
	if (lba >= v->d.nsectors)
		return -EINVAL;
	if (v->k == NULL) {
		*phys = lba;
		return 1;
	}
	uint64_t c = vv_chunk_of(v, lba), p;
	int e = vv_lookup(v, c, &p, NULL);
	if (e < 0)
		return e;
	*phys = p ? p + lba - c * v->d.chunk : 0;
	return p != 0;
}

int vvol_chunk(struct vvol *v, uint64_t c, int alloc, struct vvol_place *pl)
{
	if (v->k == NULL || c >= v->nchunks)
		return -EINVAL;
	uint64_t phys;
	struct vv_node *leaf;
	int e = vv_lookup(v, c, &phys, &leaf);
	if (e == 0 && phys == 0 && alloc)
		e = v->readonly ? -EROFS : vv_alloc(v, c, &phys, &leaf);
	if (e < 0 || phys == 0)
		return e;
	pl->phys = phys;
	pl->leaf = leaf->sector;
	pl->slot = leaf->slot;
	return 1;
}

uint64_t vvol_footprint(const struct vvol *v)
{
	uint64_t chunks, nodes;
	if (v->k == NULL || vv_count((struct vvol *)v, &chunks, &nodes) < 0)
		return 0;
	return chunks * v->d.chunk + nodes * ED_XN_MAX_SECT;
}
