/*
 * data.c - file bytes.
 *
 * A regular file's bytes are in one of three places (ufs_format.h):
 *  - nowhere: an empty file;
 *  - small (up to UFS_SMALL_MAX bytes): in sectors of its directory's
 *    space.  In memory a small file being written is whole in ip->ibuf;
 *    when it is written out it gets new sectors (copy-on-write: the old
 *    ones stay the file's on disk until the commit that moves the record
 *    is durable), placed after the directory's other new files so that a
 *    commit writes them - and its directory blocks - in one request;
 *  - large: in the extents of its own fnode (and map nodes), cached in
 *    the buffer cache by (file, block).  Writes only dirty cached blocks;
 *    sectors are chosen when the blocks are written (delayed allocation),
 *    so a file written in pieces still gets long extents.  Large aligned
 *    reads and writes go straight between the disk and the caller's
 *    buffer, in requests of up to 1 MiB kept in flight together.
 * Memory-only files (LIBFS_P_MEMORY) live in ip->ibuf and are never
 * written.
 *
 * A file's size and where its bytes are live in its record, which only a
 * commit of its directory makes durable, after the bytes (sync.c).  A
 * truncated large file keeps its extents until then (the durable record
 * may still say the old size); the blocks cut off read as zeros meanwhile.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define DIRECT_MIN  (64u * 1024)        /* reads/writes at least this large bypass the cache */
#define READAHEAD   8                   /* blocks a sequential miss brings in together */
#define CLUSTER     16                  /* blocks a random miss brings in: 64 KiB, aligned */
#define SMALL_AHEAD 128u                /* sectors read ahead in a large directory */

static const uint8_t zero_block[UFS_BSIZE];

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t sects(uint64_t bytes) { return (bytes + UFS_SECT - 1) / UFS_SECT; }

static int is_big(const struct uinode *ip) { return ip->b != NULL; }

/* ---- small files -------------------------------------------------------------- */

void ufs_ibuf_free(struct ufs *fs, struct uinode *ip)
{
	if (ip->ibig)
		upool_big_free(fs, ip->ibuf);
	else
		upool_free(fs, ip->ibuf);
	ip->ibuf = NULL;
	ip->icap = 0;
	ip->ibig = 0;
}

/* Zero [from, to) of ibuf but for [skip, skip_end), which the caller is
 * about to fill. */
static void zero_but(uint8_t *b, size_t from, size_t to, size_t skip, size_t skip_end)
{
	if (skip < from)
		skip = from;
	if (skip_end > to)
		skip_end = to;
	if (skip >= skip_end) {
		memset(b + from, 0, to - from);
		return;
	}
	memset(b + from, 0, skip - from);
	memset(b + skip_end, 0, to - skip_end);
}

/* ibuf holds at least want bytes, rounded up to whole sectors (icap),
 * zero past the file's size: bytes up to icap are always valid, except
 * [skip, skip_end), left for the caller to fill at once. */
static int ibuf_room2(struct ufs *fs, struct uinode *ip, uint64_t want, size_t skip, size_t skip_end)
{
	size_t cap = (size_t)(sects(want ? want : 1) * UFS_SECT);
	if (cap <= ip->icap)
		return 0;
	if (ip->ibuf != NULL && !ip->ibig && cap <= upool_size(ip->ibuf)) {
		zero_but(ip->ibuf, ip->icap, cap, skip, skip_end);    /* room in its block */
		ip->icap = cap;
		return 0;
	}
	uint8_t *n;
	int big = cap > UPOOL_SMALL;
	if (!big) {
		n = upool_alloc_raw(fs, cap);
	} else {
		/* Larger small files, and memory-only files that grow past
		 * UFS_SMALL_MAX: doubling, so appends copy little. */
		cap = cap < 2 * ip->icap ? 2 * ip->icap : cap;
		n = ip->ibig ? upool_big_realloc(fs, ip->ibuf, cap) : upool_big_alloc(fs, cap);
	}
	if (n == NULL)
		return -ENOMEM;
	if (!(big && ip->ibig) && ip->icap)
		memcpy(n, ip->ibuf, ip->icap);
	zero_but(n, ip->icap, cap, skip, skip_end);
	if (!(big && ip->ibig))
		ufs_ibuf_free(fs, ip);
	ip->ibuf = n;
	ip->icap = cap;
	ip->ibig = (uint8_t)big;
	return 0;
}

static int ibuf_room(struct ufs *fs, struct uinode *ip, uint64_t want)
{
	return ibuf_room2(fs, ip, want, 0, 0);
}

int ufs_load_small(struct ufs *fs, struct uinode *ip)
{
	struct uent *e = ip->ent;
	if (ip->ibuf != NULL || e->r.size == 0)
		return 0;
	int err = ibuf_room(fs, ip, e->r.size);
	if (err < 0)
		return err;
	if (e->r.where == UFS_W_SMALL && e->r.loc != 0) {
		err = ds_read(fs, e->dir, e->r.loc * UFS_SECT, ip->ibuf, e->r.size, 0);
		if (err < 0)
			ufs_ibuf_free(fs, ip);
	}
	return err;
}

/* The small file's bytes are about to change: what is on disk becomes
 * old.  Sectors written and never committed are nobody's any more. */
static void small_dirty(struct ufs *fs, struct uinode *ip)
{
	struct uent *e = ip->ent;
	if (e->r.where == UFS_W_SMALL && e->r.loc != 0) {
		if (!(e->committed && e->dr.where == UFS_W_SMALL && e->dr.loc == e->r.loc) && e->dir)
			ds_free(&e->dir->sp, e->r.loc, sects(e->r.size));
		e->r.loc = 0;
	}
	ip->idirty = 1;
	ufs_file_dirty(fs, ip);
}

/* Count the file's bytes waiting in memory. */
static void count_dirty(struct ufs *fs, struct uinode *ip)
{
	uint64_t now = ip->idirty ? ip->ent->r.size : 0;
	fs->dirty_bytes += now;
	fs->dirty_bytes -= ip->counted < fs->dirty_bytes ? ip->counted : fs->dirty_bytes;
	ip->counted = now;
}

/* Promise the sectors a small file of `size` bytes will take. */
static int small_promise(struct ufs *fs, struct uinode *ip, uint64_t size)
{
	uint64_t need = sects(size);
	return need > ip->resv ? ufs_promise(fs, ip, need - ip->resv) : 0;
}

/* ---- large files: reading -------------------------------------------------------- */

/* Is block x of ip in the extent that holds block lb at disk sector
 * `sector` (so [x, lb] is one stretch of the disk)? */
static int same_extent(struct uinode *ip, uint64_t x, uint64_t lb, uint64_t sector)
{
	uint64_t run;
	return ufs_map_lookup(ip, x * UFS_BSECT, &run) == sector - (lb - x) * UFS_BSECT &&
	       run > (lb - x) * UFS_BSECT;
}

/* The first block at or after `from` such that it and every block up to
 * lb are in lb's extent (lb at disk sector `sector`): one map lookup when
 * the extent reaches back to from (the usual case), a binary search over
 * [from, lb] otherwise - not a lookup per block. */
static uint64_t extent_back(struct uinode *ip, uint64_t from, uint64_t lb, uint64_t sector)
{
	if (same_extent(ip, from, lb, sector))
		return from;
	uint64_t lo = from, hi = lb;                  /* lo is out, hi is in */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (same_extent(ip, mid, lb, sector))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* Bring block b (lblk) into the cache: zeros if unmapped (or cut off by a
 * truncate), else read it in one request with its neighbours:
 *  - a reader going forward from the start or from where it left off gets
 *    the uncached blocks after it, up to READAHEAD, in the same extent;
 *  - any other miss, in a file the cache can hold whole, gets its cluster
 *    (the CLUSTER-block aligned piece of the file around it, as far as the
 *    same extent holds it uncached), so a program reading the file in a
 *    random order reads each byte once, in 1/CLUSTER of the requests, and
 *    finds more and more of it cached, as Linux's page cache gives it;
 *  - in a larger file, just the block (its neighbours would be replaced
 *    before they are asked for: bytes moved for nothing, which QEMU
 *    copies one by one). */
static int fill(struct ufs *fs, struct uinode *ip, struct bbuf *b)
{
	struct ubig *B = ip->b;
	uint64_t run;
	uint64_t sector = b->lblk >= B->zero_from ? 0 : ufs_map_lookup(ip, b->lblk * UFS_BSECT, &run);
	if (sector == 0) {
		memset(b->data, 0, UFS_BSIZE);
		b->flags |= BB_VALID;
		return 0;
	}
	static uint8_t stage[CLUSTER * UFS_BSIZE];
	uint64_t eof = (ip->ent->r.size + UFS_BSIZE - 1) / UFS_BSIZE;
	if (eof > B->zero_from)
		eof = B->zero_from;
	int seq = b->lblk == 0 || b->lblk == B->ra_next;
	/* Read around a random miss only when the cache can hold the whole
	 * file: then every byte read is used before it is replaced, and the
	 * file is read once, in 1/CLUSTER of the requests.  A file larger
	 * than the cache would have its clusters replaced before their other
	 * blocks are asked for: CLUSTER times the bytes for nothing. */
	int around = !seq && eof <= fs->bc.nbufs;
	uint64_t lo = b->lblk, hi = b->lblk + 1;     /* the blocks to read: [lo, hi) */
	uint64_t limit = seq ? b->lblk + READAHEAD : around ? (b->lblk / CLUSTER + 1) * CLUSTER : hi;
	while (hi < limit && hi - b->lblk < run / UFS_BSECT && hi < eof &&
	       bc_lookup(&fs->bc, ip->id, hi) == NULL)
		hi++;
	if (around && b->lblk % CLUSTER != 0) {
		/* Back to the cluster's start, as far as the extent goes and
		 * none of it is cached: the map once, the cache once for the
		 * whole stretch (block by block only if some of it is). */
		uint64_t start = extent_back(ip, b->lblk / CLUSTER * CLUSTER, b->lblk, sector);
		if (bc_count(&fs->bc, ip->id, start, b->lblk, 0) == 0)
			lo = start;
		else
			while (lo > start && bc_count(&fs->bc, ip->id, lo - 1, lo, 0) == 0)
				lo--;
	}
	B->ra_next = seq ? hi : b->lblk + 1;
	uint64_t first = sector - (b->lblk - lo) * UFS_BSECT;
	int err = ufs_io_sync(fs, ufs_map_prot(fs, ip, sector), 0, first, hi - lo > 1 ? stage : b->data,
	                      (hi - lo) * UFS_BSIZE);
	if (err < 0)
		return err;
	if (hi - lo > 1) {
		memcpy(b->data, stage + (b->lblk - lo) * UFS_BSIZE, UFS_BSIZE);
		/* The rest goes into the cache if it can without writing
		 * anything out; b is pinned so it cannot be the one replaced. */
		bc_pin(b);
		for (uint64_t i = lo; i < hi; i++) {
			if (i == b->lblk)
				continue;
			struct bbuf *x = bc_get(&fs->bc, ip->id, i);
			if (x == NULL)
				break;
			if (!(x->flags & BB_VALID)) {
				memcpy(x->data, stage + (i - lo) * UFS_BSIZE, UFS_BSIZE);
				x->flags |= BB_VALID;
			}
		}
		bc_unpin(b);
	}
	b->flags |= BB_VALID;
	return 0;
}

/* A cached, valid block; writes out dirty blocks first if the cache is
 * full of them. */
static int getblk(struct ufs *fs, struct uinode *ip, uint64_t lblk, int need_contents,
                  struct bbuf **bp)
{
	struct bbuf *b = bc_get(&fs->bc, ip->id, lblk);
	if (b == NULL) {
		/* Every block is dirty: write file data out (not a whole sync),
		 * and sync only if that freed nothing. */
		int err = ufs_writebehind(fs);
		if (err < 0)
			return err;
		b = bc_get(&fs->bc, ip->id, lblk);
		if (b == NULL && (err = ufs_sync(fs)) < 0)
			return err;
		if (b == NULL && (b = bc_get(&fs->bc, ip->id, lblk)) == NULL)
			return -ENOMEM;
	}
	if (!(b->flags & BB_VALID)) {
		if (need_contents) {
			int err = fill(fs, ip, b);
			if (err < 0)
				return err;
		} else {
			memset(b->data, 0, UFS_BSIZE);
			b->flags |= BB_VALID;
		}
	}
	*bp = b;
	return 0;
}

/* Read whole blocks [lb, lb + nb) straight into buf when none of them is
 * dirty in the cache; returns 1 if done, 0 if the cache must be used. */
static int read_direct(struct ufs *fs, struct uinode *ip, uint8_t *buf, uint64_t lb, uint64_t nb,
                       int *errp)
{
	if (bc_count(&fs->bc, ip->id, lb, lb + nb, 1) != 0)
		return 0;
	struct uio w;
	uio_init(&w, fs, 0);
	uint64_t i = 0;
	int err = 0;
	while (i < nb && err == 0) {
		uint64_t run;
		int cut = lb + i >= ip->b->zero_from;
		uint64_t sector = cut ? 0 : ufs_map_lookup(ip, (lb + i) * UFS_BSECT, &run);
		/* A hole (or blocks cut off: all the rest) reads as zeros, as
		 * far as it goes. */
		uint64_t k = cut || run == 0 ? nb - i : min64(run / UFS_BSECT, nb - i);
		if (ip->b->zero_from != UINT64_MAX && lb + i + k > ip->b->zero_from && !cut)
			k = ip->b->zero_from - (lb + i);
		if (sector == 0)
			memset(buf + i * UFS_BSIZE, 0, k * UFS_BSIZE);
		else
			err = uio_direct(&w, ufs_map_prot(fs, ip, sector), sector, buf + i * UFS_BSIZE,
			                 k * UFS_BSIZE, NULL);
		i += k;
	}
	int e2 = uio_finish(&w);
	*errp = err ? err : e2;
	fs->cnt.direct_reads++;
	return 1;
}

long ufs_read(struct ufs *fs, struct uinode *ip, void *buf, size_t n, uint64_t off)
{
	struct uent *e = ip->ent;
	uint64_t size = e->r.size;
	if (off >= size || n == 0)
		return 0;
	n = (size_t)min64(n, size - off);
	uint8_t *out = buf;
	if (!is_big(ip)) {
		if (ip->ibuf != NULL) {
			memcpy(out, ip->ibuf + off, n);
			return (long)n;
		}
		if (e->r.where != UFS_W_SMALL)
			return -EIO;          /* cannot be: a non-empty file is somewhere */
		int err = ds_read(fs, e->dir, e->r.loc * UFS_SECT + off, out, n, SMALL_AHEAD);
		return err < 0 ? err : (long)n;
	}
	size_t done = 0;
	while (done < n) {
		uint64_t pos = off + done;
		uint64_t lblk = pos / UFS_BSIZE, boff = pos % UFS_BSIZE;
		size_t left = n - done;
		/* A long run of whole blocks: from what was read ahead of a
		 * reader going in order, else straight into the caller's
		 * buffer. */
		if (boff == 0 && left >= DIRECT_MIN) {
			long k = ufs_stream_read(fs, ip, out + done, pos, left);
			if (k > 0) {
				done += (size_t)k;
				ip->b->ra_next = (off + done) / UFS_BSIZE;
				continue;
			}
			uint64_t nb = left / UFS_BSIZE;
			int err;
			if (read_direct(fs, ip, out + done, lblk, nb, &err)) {
				if (err < 0)
					return done > 0 ? (long)done : err;
				done += nb * UFS_BSIZE;
				ip->b->ra_next = lblk + nb;
				continue;
			}
		}
		struct bbuf *b;
		int err = getblk(fs, ip, lblk, 1, &b);
		if (err < 0)
			return done > 0 ? (long)done : err;
		size_t k = (size_t)min64(UFS_BSIZE - boff, left);
		memcpy(out + done, b->data + boff, k);
		done += k;
	}
	return (long)done;
}

/* ---- large files: writing ------------------------------------------------------------- */

/* Promise the blocks of bytes [off, end) that no extent holds: the
 * sectors a write-back will allocate for them.  Blocks already dirty in
 * the cache were promised when they were first written (skip_dirty). */
static int big_promise(struct ufs *fs, struct uinode *ip, uint64_t off, uint64_t end, int skip_dirty)
{
	uint64_t lb = off / UFS_BSIZE, hb = (end + UFS_BSIZE - 1) / UFS_BSIZE;
	uint64_t need = 0;
	while (lb < hb) {
		uint64_t run;
		uint64_t sector = ufs_map_lookup(ip, lb * UFS_BSECT, &run);
		uint64_t k = run == 0 || run / UFS_BSECT > hb - lb ? hb - lb : run / UFS_BSECT;
		if (k == 0)
			k = 1;
		/* A hole's blocks need sectors but for those already dirty in
		 * the cache: counted over the range, not looked up one by one. */
		if (sector == 0)
			need += (k - (skip_dirty ? bc_count(&fs->bc, ip->id, lb, lb + k, 1) : 0)) * UFS_BSECT;
		lb += k;
	}
	return need ? ufs_promise(fs, ip, need) : 0;
}

/* n sectors promised for ip were allocated. */
static void big_unpromise(struct ufs *fs, struct uinode *ip, uint64_t n)
{
	if (n > ip->resv)
		n = ip->resv;
	if (n)
		ufs_unpromise(fs, ip, n);
}

/* Write whole blocks [lb, lb + nb) from buf straight to the disk, giving
 * the file extents for them first (filling holes).  Cached copies are
 * forgotten: these bytes replace them. */
static int write_direct(struct ufs *fs, struct uinode *ip, const uint8_t *buf, uint64_t lb, uint64_t nb)
{
	int64_t got = ufs_map_fill(fs, ip, lb * UFS_BSECT, (lb + nb) * UFS_BSECT);
	if (got < 0)
		return (int)got;
	big_unpromise(fs, ip, (uint64_t)got);
	int err = 0;
	bc_drop_range(&fs->bc, ip->id, lb, lb + nb);
	struct uio w;
	uio_init(&w, fs, 1);
	for (uint64_t i = 0; i < nb && err == 0;) {
		uint64_t run;
		uint64_t sector = ufs_map_lookup(ip, (lb + i) * UFS_BSECT, &run);
		uint64_t k = min64(run / UFS_BSECT, nb - i);
		/* The kernel only reads a write's buffer. */
		err = uio_direct(&w, ufs_map_prot(fs, ip, sector), sector,
		                 (void *)(uintptr_t)(buf + i * UFS_BSIZE), k * UFS_BSIZE, NULL);
		i += k;
	}
	int e2 = uio_finish(&w);
	return err ? err : e2;
}

/* The file grows from its size to `to`: the bytes from the old end to the
 * end of its last block must read as zero. */
static int zero_tail(struct ufs *fs, struct uinode *ip, uint64_t to)
{
	uint64_t size = ip->ent->r.size;
	if (size % UFS_BSIZE == 0 || to <= size)
		return 0;
	uint64_t blk = size / UFS_BSIZE;
	uint64_t end = to < (blk + 1) * UFS_BSIZE ? to : (blk + 1) * UFS_BSIZE;
	struct bbuf *b;
	int err = getblk(fs, ip, blk, 1, &b);
	if (err < 0)
		return err;
	memset(b->data + size % UFS_BSIZE, 0, end - size);
	bc_dirty(&fs->bc, b);
	ufs_file_dirty(fs, ip);
	return 0;
}

/* A small (or empty) file outgrows its directory's space: it gets an fnode
 * and its bytes move into the cache as its first blocks. */
static int make_big(struct ufs *fs, struct uinode *ip)
{
	struct uent *e = ip->ent;
	int err = ufs_load_small(fs, ip);
	if (err < 0)
		return err;
	uint64_t size = e->r.size;
	uint64_t oldloc = e->r.where == UFS_W_SMALL ? e->r.loc : 0;
	/* Room in the cache for its blocks first, while the file is still
	 * whole as it is (making room may write things out, even sync). */
	struct bbuf *bl[UFS_SMALL_MAX / UFS_BSIZE];
	uint64_t nb = (size + UFS_BSIZE - 1) / UFS_BSIZE;
	for (int round = 0;; round++) {
		uint64_t got = 0;
		for (; got < nb; got++) {
			bl[got] = bc_get(&fs->bc, ip->id, got);
			if (bl[got] == NULL)
				break;
			bc_pin(bl[got]);
		}
		if (got == nb)
			break;
		for (uint64_t i = 0; i < got; i++)
			bc_unpin(bl[i]);
		if (round == 2)
			return -ENOMEM;
		err = round == 0 ? ufs_writebehind(fs) : ufs_sync(fs);
		if (err < 0)
			return err;
	}
	err = ufs_make_big(fs, ip);
	if (err < 0) {
		for (uint64_t i = 0; i < nb; i++)
			bc_unpin(bl[i]);
		return err;
	}
	/* Sectors the small file had and never committed are free now. */
	if (oldloc != 0 && !(e->committed && e->dr.where == UFS_W_SMALL && e->dr.loc == oldloc) && e->dir)
		ds_free(&e->dir->sp, oldloc, sects(size));
	for (uint64_t i = 0; i < nb; i++) {
		struct bbuf *b = bl[i];
		memset(b->data, 0, UFS_BSIZE);
		memcpy(b->data, ip->ibuf + i * UFS_BSIZE, min64(UFS_BSIZE, size - i * UFS_BSIZE));
		b->flags |= BB_VALID;
		bc_dirty(&fs->bc, b);
		bc_unpin(b);
	}
	ip->idirty = 0;
	count_dirty(fs, ip);
	ufs_ibuf_free(fs, ip);
	if (ip->resv)
		ufs_unpromise(fs, ip, ip->resv);
	return big_promise(fs, ip, 0, size, 0);
}

static long big_write(struct ufs *fs, struct uinode *ip, const uint8_t *in, size_t n, uint64_t off)
{
	struct uent *e = ip->ent;
	struct ubig *B = ip->b;
	uint64_t end = off + n;
	ufs_stream_drop(fs, ip->id);          /* what it read ahead is old now */
	/* The bytes written, and the old last block when the write leaves a
	 * gap after it (its tail is cleared; the gap is a hole). */
	int err = big_promise(fs, ip, off, end, 1);
	if (err == 0 && off > e->r.size && e->r.size % UFS_BSIZE != 0 &&
	    off / UFS_BSIZE > e->r.size / UFS_BSIZE)
		err = big_promise(fs, ip, e->r.size, e->r.size + 1, 1);
	if (err < 0)
		return err;
	if (off > e->r.size && (err = zero_tail(fs, ip, off)) < 0)
		return err;
	size_t done = 0;
	while (done < n) {
		uint64_t pos = off + done;
		uint64_t lblk = pos / UFS_BSIZE, boff = pos % UFS_BSIZE;
		/* A long run of whole blocks that continues or overwrites the
		 * mapped part goes straight to the disk from the caller's buffer;
		 * its record still waits for a commit. */
		if (boff == 0 && n - done >= DIRECT_MIN && lblk * UFS_BSECT <= B->mapped &&
		    lblk <= B->zero_from) {
			uint64_t nb = (n - done) / UFS_BSIZE;
			err = write_direct(fs, ip, in + done, lblk, nb);
			if (err < 0)
				break;
			if (B->zero_from != UINT64_MAX && lblk <= B->zero_from && lblk + nb > B->zero_from)
				B->zero_from = lblk + nb;       /* rewritten: no longer cut off */
			done += nb * UFS_BSIZE;
			if (pos + nb * UFS_BSIZE > e->r.size)
				e->r.size = pos + nb * UFS_BSIZE;
			ufs_file_dirty(fs, ip);
			continue;
		}
		size_t k = (size_t)min64(UFS_BSIZE - boff, n - done);
		/* A whole block needs no old contents; a partial one does,
		 * unless it lies wholly past the end of the file. */
		int need = k < UFS_BSIZE && lblk * UFS_BSIZE < e->r.size;
		struct bbuf *b;
		err = getblk(fs, ip, lblk, need, &b);
		if (err < 0)
			break;
		memcpy(b->data + boff, in + done, k);
		bc_dirty(&fs->bc, b);
		ufs_file_dirty(fs, ip);       /* again: a sync may have run */
		done += k;
		/* The size covers every dirty block at all times: a sync started
		 * by a later getblk writes only blocks below it. */
		if (pos + k > e->r.size)
			e->r.size = pos + k;
	}
	if (done == 0 && err < 0)
		return err;
	return (long)done;
}

long ufs_write(struct ufs *fs, struct uinode *ip, const void *buf, size_t n, uint64_t off)
{
	if (n == 0)
		return 0;
	struct uent *e = ip->ent;
	uint64_t end = off + n;
	uint64_t maxbytes = (uint64_t)UFS_MAX_EXTENTS * (UINT32_MAX / 2) * ED_SECTOR;
	if (end > maxbytes || end < off)
		return -EFBIG;
	int err;
	long done = (long)n;
	if (e->memonly) {
		if ((err = ibuf_room2(fs, ip, end, off, end)) < 0)
			return err;
		memcpy(ip->ibuf + off, buf, n);
		if (end > e->r.size)
			e->r.size = end;
	} else if (!is_big(ip) && end <= UFS_SMALL_MAX) {
		if ((err = ufs_load_small(fs, ip)) < 0 || (err = ibuf_room2(fs, ip, end, off, end)) < 0)
			return err;
		if ((err = small_promise(fs, ip, end > e->r.size ? end : e->r.size)) < 0)
			return err;
		memcpy(ip->ibuf + off, buf, n);
		small_dirty(fs, ip);
		if (end > e->r.size)
			e->r.size = end;
		e->r.where = UFS_W_SMALL;
		count_dirty(fs, ip);
	} else {
		if (!is_big(ip) && (err = make_big(fs, ip)) < 0)
			return err;
		done = big_write(fs, ip, buf, n, off);
		if (done < 0)
			return done;
	}
	e->r.mtime = ufs_now(fs);
	if (!e->memonly)
		ufs_file_dirty(fs, ip);
	if (e->r.persist == LIBFS_P_WRITETHROUGH) {
		err = ufs_fsync(fs, ip);
		if (err < 0)
			return err;
	} else if (fs->dirty_bytes > fs->dirty_max) {
		/* Memory holds enough unwritten small files: write them out now
		 * (their records wait for the next sync). */
		err = ufs_writebehind(fs);
		if (err < 0)
			return err;
	}
	return done;
}

int ufs_truncate(struct ufs *fs, struct uinode *ip, uint64_t len)
{
	struct uent *e = ip->ent;
	uint64_t size = e->r.size;
	if (len == size)
		return 0;
	if (len > (uint64_t)UFS_MAX_EXTENTS * (UINT32_MAX / 2) * ED_SECTOR)
		return -EFBIG;
	int err = 0;
	if (e->memonly) {
		if ((err = ibuf_room(fs, ip, len)) < 0)
			return err;
		if (len < size)
			memset(ip->ibuf + len, 0, ip->icap - len);
		e->r.size = len;
	} else if (!is_big(ip) && len <= UFS_SMALL_MAX) {
		if ((err = ufs_load_small(fs, ip)) < 0 || (err = ibuf_room(fs, ip, len)) < 0)
			return err;
		if (len > size && (err = small_promise(fs, ip, len)) < 0)
			return err;
		if (len < size)
			memset(ip->ibuf + len, 0, ip->icap - len);
		small_dirty(fs, ip);
		e->r.size = len;
		e->r.where = len ? UFS_W_SMALL : UFS_W_NONE;
		count_dirty(fs, ip);
	} else {
		if (!is_big(ip) && (err = make_big(fs, ip)) < 0)
			return err;
		struct ubig *B = ip->b;
		ufs_stream_drop(fs, ip->id);
		if (len > size) {
			/* Past the old end everything reads as zero: blocks past the
			 * last extent are zero by definition, the last block's tail is
			 * cleared. */
			err = zero_tail(fs, ip, len);
			if (err == 0)
				e->r.size = len;
		} else {
			uint64_t keepblk = (len + UFS_BSIZE - 1) / UFS_BSIZE;
			bc_drop(&fs->bc, ip->id, keepblk);
			if (len % UFS_BSIZE != 0) {
				/* Zero the rest of the last block, so growing again later
				 * shows zeros, not the old bytes. */
				struct bbuf *b;
				err = getblk(fs, ip, len / UFS_BSIZE, 1, &b);
				if (err < 0)
					return err;
				memset(b->data + len % UFS_BSIZE, 0, UFS_BSIZE - len % UFS_BSIZE);
				bc_dirty(&fs->bc, b);
				/* Reading that block may have read ahead past the new end. */
				bc_drop(&fs->bc, ip->id, keepblk);
			}
			e->r.size = len;
			/* The durable record may still say the old size: the extents
			 * stay until the commit (ufs_big_committed); meanwhile the
			 * blocks cut off read as zeros. */
			if (keepblk < B->zero_from)
				B->zero_from = keepblk;
		}
		/* (Blocks dropped keep their promise until the next write-back
		 * gives back what it did not use.) */
	}
	if (err < 0)
		return err;
	e->r.mtime = ufs_now(fs);
	if (!e->memonly)
		ufs_file_dirty(fs, ip);
	if (e->r.persist == LIBFS_P_WRITETHROUGH)
		return ufs_fsync(fs, ip);
	return 0;
}

/* ---- writing out ---------------------------------------------------------------------- */

static int note_file(struct ufs *fs, struct uinode *ip)
{
	if (fs->nwfiles == fs->wfilescap) {
		uint32_t cap = fs->wfilescap ? fs->wfilescap * 2 : 64;
		struct uinode **n = realloc(fs->wfiles, cap * sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		fs->wfiles = n;
		fs->wfilescap = cap;
	}
	fs->wfiles[fs->nwfiles++] = ip;
	ip->refs++;                  /* held until the write is settled */
	return 0;
}

static int note_buf(struct ufs *fs, struct bbuf *b, struct udir *owner)
{
	if (fs->nwbufs == fs->wbufscap) {
		uint32_t cap = fs->wbufscap ? fs->wbufscap * 2 : 64;
		struct wbuf *n = realloc(fs->wbufs, cap * sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		fs->wbufs = n;
		fs->wbufscap = cap;
	}
	fs->wbufs[fs->nwbufs++] = (struct wbuf){ b, owner };
	return 0;
}

/* Write out a large file's dirty blocks, allocating what is unmapped (a
 * block never written stays a hole) - and, as zeros, the blocks a
 * truncate cut off that the size covers again and the file still maps
 * (the extents stay until the commit; they must not show old bytes). */
static int flush_blocks(struct ufs *fs, struct uinode *ip, struct uio *w)
{
	struct ubig *B = ip->b;
	struct udir *owner = ip->ent ? ip->ent->dir : NULL;
	uint64_t endblk = (ip->ent->r.size + UFS_BSIZE - 1) / UFS_BSIZE;
	uint64_t mapblk = (B->mapped + UFS_BSECT - 1) / UFS_BSECT;
	uint64_t zlo = B->zero_from, zhi = B->zero_from < endblk ? (endblk < mapblk ? endblk : mapblk) : 0;
	uint32_t max = 0;
	uint32_t nd = 0;
	struct bbuf **list = NULL;
	bc_owner_blocks(&fs->bc, ip->id, &max);
	if (max > 0) {
		if ((list = malloc(max * sizeof *list)) == NULL)
			return -ENOMEM;
		nd = bc_dirty_list(&fs->bc, 0, ip->id, 0, list, max);
	}
	int err = 0;
	uint64_t top = zhi;              /* written (zeros or data) below this */
	/* Blocks past the end of the file are not data (a write raced a
	 * truncate); dropped below.  The others are in block order: give
	 * each run of them its extents, then write it. */
	for (uint32_t i = 0; i < nd && err == 0 && list[i]->lblk < endblk;) {
		uint32_t j = i + 1;
		while (j < nd && list[j]->lblk == list[j - 1]->lblk + 1 && list[j]->lblk < endblk)
			j++;
		uint64_t lo = list[i]->lblk, hi = list[j - 1]->lblk + 1;
		int64_t got = ufs_map_fill(fs, ip, lo * UFS_BSECT, hi * UFS_BSECT);
		if (got < 0) {
			err = (int)got;
			break;
		}
		big_unpromise(fs, ip, (uint64_t)got);
		if (hi > top)
			top = hi;
		for (; i < j && err == 0; i++) {
			uint64_t run;
			uint64_t sector = ufs_map_lookup(ip, list[i]->lblk * UFS_BSECT, &run);
			err = note_buf(fs, list[i], owner);
			if (err == 0)
				err = uio_write(w, ufs_map_prot(fs, ip, sector), sector, list[i]->data, UFS_BSIZE, owner);
		}
	}
	/* Cut off, covered again, still mapped, not rewritten: zeros. */
	for (uint64_t lb = zlo; err == 0 && lb < zhi; lb++) {
		struct bbuf *b = bc_lookup(&fs->bc, ip->id, lb);
		if (b != NULL && (b->flags & BB_DIRTY))
			continue;
		uint64_t run;
		uint64_t sector = ufs_map_lookup(ip, lb * UFS_BSECT, &run);
		if (sector == 0) {
			if (run == 0)
				break;
			lb += run / UFS_BSECT - 1;
			continue;
		}
		err = uio_write(w, ufs_map_prot(fs, ip, sector), sector, zero_block, UFS_BSIZE, owner);
	}
	if (err == 0) {
		/* Every dirty block has its sectors now: what was promised for
		 * blocks dropped since goes back. */
		big_unpromise(fs, ip, ip->resv);
		if (B->zero_from != UINT64_MAX && B->zero_from < top)
			B->zero_from = top;      /* no longer cut off below top */
	}
	if (nd > 0 && list[nd - 1]->lblk >= endblk)       /* (the list is in block order) */
		bc_drop(&fs->bc, ip->id, endblk);
	free(list);
	return err;
}

int ufs_flush_data(struct ufs *fs, struct uinode *ip, struct uio *w, int slack)
{
	struct uent *e = ip->ent;
	if (e == NULL || e->memonly)
		return 0;
	if (is_big(ip))
		return flush_blocks(fs, ip, w);
	if (!ip->idirty)
		return 0;
	if (e->r.size == 0) {
		e->r.where = UFS_W_NONE;
		e->r.loc = 0;
		ip->idirty = 0;
		count_dirty(fs, ip);
		if (ip->resv)
			ufs_unpromise(fs, ip, ip->resv);
		return 0;
	}
	uint64_t n = sects(e->r.size);
	uint64_t s;
	int err = ds_alloc(fs, e->dir, n, 1, slack, &s);
	if (err == -EFBIG) {
		/* The directory's space cannot grow (its dnode lists all the
		 * extents it can): the file gets an fnode of its own. */
		err = make_big(fs, ip);
		return err < 0 ? err : flush_blocks(fs, ip, w);
	}
	if (err < 0)
		return err;
	err = note_file(fs, ip);
	if (err == 0)
		err = uio_write(w, ufs_xn_prot(fs, &e->dir->x), s, ip->ibuf, (uint32_t)(n * UFS_SECT), e->dir);
	if (err < 0) {
		ds_free(&e->dir->sp, s, n);
		return err;
	}
	ds_written(fs, e->dir, s, ip->ibuf, n * UFS_SECT);
	/* The record says where now (a commit prepared next writes it); if
	 * the write fails, ufs_small_settled takes it back. */
	ip->wloc = s;
	e->r.where = UFS_W_SMALL;
	e->r.loc = s;
	return 0;
}

/* The write of a small file's bytes is done: with `ok`, they are its
 * (uncommitted) place; else its sectors go back and it stays dirty. */
void ufs_small_settled(struct ufs *fs, struct uinode *ip, int ok)
{
	struct uent *e = ip->ent;
	if (e == NULL || ip->wloc == 0)
		return;
	uint64_t n = sects(e->r.size);
	if (ok && ip->idirty) {
		ip->idirty = 0;
		count_dirty(fs, ip);
		if (ip->resv)
			ufs_unpromise(fs, ip, ip->resv);
		/* Nobody has it open: the disk holds it, memory need not. */
		if (ip->refs <= 1)
			ufs_ibuf_free(fs, ip);
	} else if (!ok) {
		if (e->dir)
			ds_free(&e->dir->sp, ip->wloc, n);
		if (e->r.loc == ip->wloc)
			e->r.loc = 0;
	}
	ip->wloc = 0;
}

int ufs_big_committed(struct ufs *fs, struct uinode *ip)
{
	struct ubig *B = ip->b;
	if (B == NULL || B->zero_from == UINT64_MAX)
		return 0;
	/* The smaller size is durable: the extents past it can go. */
	uint64_t keep = (ip->ent->r.size + UFS_BSIZE - 1) / UFS_BSIZE * UFS_BSECT;
	int err = B->mapped > keep ? ufs_map_shrink(fs, ip, keep) : 0;
	if (err == 0)
		B->zero_from = UINT64_MAX;
	return err;
}

int ufs_to_memory(struct ufs *fs, struct uinode *ip)
{
	struct uent *e = ip->ent;
	int err = ufs_load_small(fs, ip);
	if (err < 0)
		return err;
	/* Sectors written and never committed are nobody's now; committed
	 * ones go with the next commit, which drops the name from disk. */
	if (e->r.where == UFS_W_SMALL && e->r.loc != 0 &&
	    !(e->committed && e->dr.where == UFS_W_SMALL && e->dr.loc == e->r.loc))
		ds_free(&e->dir->sp, e->r.loc, sects(e->r.size));
	e->r.loc = 0;
	e->r.where = e->r.size ? UFS_W_SMALL : UFS_W_NONE;
	ip->idirty = 0;
	count_dirty(fs, ip);
	if (ip->resv)
		ufs_unpromise(fs, ip, ip->resv);
	ufs_dir_memonly(fs, e->dir, e);
	return 0;
}

int ufs_set_persist(struct ufs *fs, struct uinode *ip, int model)
{
	struct uent *e = ip->ent;
	if (model == e->r.persist)
		return 0;
	if (model == LIBFS_P_MEMORY || e->memonly)
		return -EINVAL;         /* ops.c handles memory-only files */
	e->r.persist = (uint8_t)model;
	ufs_file_dirty(fs, ip);
	if (model == LIBFS_P_WRITETHROUGH)
		return ufs_fsync(fs, ip);
	return 0;
}
