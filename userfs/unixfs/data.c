/*
 * data.c - file bytes.
 *
 * A file's bytes are in one of three places:
 *  - immediate: inside the inode exonode (up to UFS_IMM_MAX bytes); the
 *    in-memory copy is ip->imm, pushed into the exonode at sync;
 *  - memory-only: ip->mem, never written (LIBFS_P_MEMORY);
 *  - extents: 4 KiB blocks, cached in the buffer cache by (inode, block).
 *    Writes only dirty cached blocks; sectors are chosen when the blocks
 *    are written (delayed allocation), so a file written in pieces still
 *    gets long extents.
 *
 * Large aligned reads of clean ranges go straight from the disk into the
 * caller's buffer, bypassing the cache, in requests of up to 1 MiB kept in
 * flight together.  Writing out copies runs of dirty blocks into staging
 * buffers so that neighbouring blocks go to the disk as one request.
 *
 * The exonode's metadata (its size above all) is only ever brought up to
 * date after the data it describes is durable (ufs_push_meta, called by
 * sync.c), except that shrinking happens at once: a smaller size never
 * lets anything unwritten be read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define DIRECT_MIN  (64u * 1024)        /* reads at least this large bypass the cache */
#define STAGE_BYTES (256u * 1024)
#define NSTAGE      4

static const uint8_t zero_block[UFS_BSIZE];

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* ---- reading ----------------------------------------------------------------- */

#define READAHEAD 8           /* blocks one miss may bring in together */

/* Bring block b (lblk) into the cache: zeros if unmapped, else read it -
 * together with the uncached blocks after it in the same extent, up to the
 * end of the file, in one request (small files are read in one go). */
static int fill(struct ufs *fs, struct uinode *ip, struct bbuf *b)
{
	uint64_t run;
	uint64_t sector = ufs_map_lookup(ip, b->lblk * UFS_BSECT, &run);
	if (sector == 0) {
		memset(b->data, 0, UFS_BSIZE);
		b->flags |= BB_VALID;
		return 0;
	}
	static uint8_t stage[READAHEAD * UFS_BSIZE];
	uint64_t eof = (ip->d.size + UFS_BSIZE - 1) / UFS_BSIZE;
	uint64_t k = 1;
	/* Only for readers going forward from the start or where they left
	 * off: random reads would pay for blocks nobody wants. */
	int seq = b->lblk == 0 || b->lblk == ip->ra_next;
	ip->ra_next = b->lblk + 1;
	while (seq && k < READAHEAD && k < run / UFS_BSECT && b->lblk + k < eof &&
	       bc_count(&fs->bc, ip->ino, b->lblk + k, b->lblk + k + 1, 0) == 0)
		k++;
	struct edc_slot slots[1];
	struct edc_batch bt;
	edc_batch_init(&bt, fs->c, slots, 1);
	int32_t r = ufs_io(fs, &bt, ip, 0, sector, k > 1 ? stage : b->data, k * UFS_BSIZE);
	if (r == 0)
		r = edc_batch_wait(&bt);
	if (r < 0)
		return ufs_err(r);
	if (k > 1) {
		ip->ra_next = b->lblk + k;
		memcpy(b->data, stage, UFS_BSIZE);
		/* The rest goes into the cache if it can without writing
		 * anything out; b is pinned so it cannot be the one replaced. */
		bc_pin(b);
		for (uint64_t i = 1; i < k; i++) {
			struct bbuf *x = bc_get(&fs->bc, ip->ino, b->lblk + i);
			if (x == NULL)
				break;
			if (!(x->flags & BB_VALID)) {
				memcpy(x->data, stage + i * UFS_BSIZE, UFS_BSIZE);
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
	struct bbuf *b = bc_get(&fs->bc, ip->ino, lblk);
	if (b == NULL) {
		/* Every block is dirty: write file data out (not a whole sync),
		 * and sync only if that freed nothing. */
		int err = ufs_writebehind(fs);
		if (err < 0)
			return err;
		b = bc_get(&fs->bc, ip->ino, lblk);
		if (b == NULL && (err = ufs_sync(fs)) < 0)
			return err;
		if (b == NULL && (b = bc_get(&fs->bc, ip->ino, lblk)) == NULL)
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
	if (bc_count(&fs->bc, ip->ino, lb, lb + nb, 1) != 0)
		return 0;
	struct edc_slot slots[8];
	struct edc_batch bt;
	edc_batch_init(&bt, fs->c, slots, 8);
	uint64_t i = 0;
	while (i < nb) {
		uint64_t run;
		uint64_t sector = ufs_map_lookup(ip, (lb + i) * UFS_BSECT, &run);
		uint64_t k = sector ? min64(run / UFS_BSECT, nb - i) : 1;
		if (sector == 0) {
			/* Past the last extent: zeros.  (Only the tail can be.) */
			k = nb - i;
			memset(buf + i * UFS_BSIZE, 0, k * UFS_BSIZE);
		} else {
			int32_t r = ufs_io(fs, &bt, ip, 0, sector, buf + i * UFS_BSIZE, k * UFS_BSIZE);
			if (r < 0) {
				edc_batch_wait(&bt);
				*errp = ufs_err(r);
				return 1;
			}
		}
		i += k;
	}
	int32_t r = edc_batch_wait(&bt);
	*errp = r < 0 ? ufs_err(r) : 0;
	fs->cnt.direct_reads++;
	return 1;
}

long ufs_read(struct ufs *fs, struct uinode *ip, void *buf, size_t n, uint64_t off)
{
	uint64_t size = ip->d.size;
	if (off >= size || n == 0)
		return 0;
	n = (size_t)min64(n, size - off);
	uint8_t *out = buf;
	if (ip->persist == LIBFS_P_MEMORY) {
		for (size_t i = 0; i < n; i++)
			out[i] = off + i < ip->memcap ? ip->mem[off + i] : 0;
		return (long)n;
	}
	if (ip->d.flags & UFS_DF_IMMEDIATE) {
		memcpy(out, ip->imm + off, n);
		return (long)n;
	}
	size_t done = 0;
	while (done < n) {
		uint64_t pos = off + done;
		uint64_t lblk = pos / UFS_BSIZE, boff = pos % UFS_BSIZE;
		size_t left = n - done;
		/* A long run of whole blocks: straight into the caller's buffer. */
		if (boff == 0 && left >= DIRECT_MIN) {
			uint64_t nb = left / UFS_BSIZE;
			int err;
			if (read_direct(fs, ip, out + done, lblk, nb, &err)) {
				if (err < 0)
					return done > 0 ? (long)done : err;
				done += nb * UFS_BSIZE;
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

/* ---- writing ------------------------------------------------------------------- */

static int mem_reserve(struct uinode *ip, uint64_t end)
{
	if (end <= ip->memcap)
		return 0;
	size_t cap = ip->memcap ? ip->memcap : 4096;
	while (cap < end)
		cap *= 2;
	uint8_t *m = realloc(ip->mem, cap);
	if (m == NULL)
		return -ENOMEM;
	memset(m + ip->memcap, 0, cap - ip->memcap);
	ip->mem = m;
	ip->memcap = cap;
	return 0;
}

static int push_now(struct ufs *fs, struct uinode *ip);

/* An immediate file is about to outgrow its exonode: its bytes move into
 * block 0 of the cache.  The exonode stays immediate until sync moves the
 * data out (sync.c, ufs_flush_data). */
static int leave_immediate(struct ufs *fs, struct uinode *ip)
{
	struct bbuf *b;
	int err = getblk(fs, ip, 0, 0, &b);
	if (err < 0)
		return err;
	memcpy(b->data, ip->imm, ip->d.size);
	bc_dirty(&fs->bc, b);
	ufs_idirty(fs, ip);
	ip->d.flags &= ~UFS_DF_IMMEDIATE;
	ip->imm_dirty = 0;
	/* An exonode that says "empty, immediate" has nothing to preserve: it
	 * can say "empty, in extents" at once, so extents can be added now
	 * (large writes go straight to the disk). */
	if (ip->dd.size == 0 && (ip->dd.flags & UFS_DF_IMMEDIATE)) {
		/* (An immediate entry may be there, left by a write-back between
		 * its change and the size's: it goes in the same step.) */
		int64_t r = ufs_xn_remove(fs, ip->sector, ip->slot, UFS_E_IMM, 0);
		if (r < 0 && r != ED_E_ENTRY)
			return ufs_err(r);
		struct ufs_dinode keep = ip->d;
		ip->d = ip->dd;
		ip->d.flags &= ~UFS_DF_IMMEDIATE;
		err = push_now(fs, ip);
		ip->d = keep;
	}
	return err;
}

/* Write whole blocks [lb, lb + nb) from buf straight to the disk, giving
 * the file extents for them first.  Cached copies are forgotten: these
 * bytes replace them. */
static int write_direct(struct ufs *fs, struct uinode *ip, const uint8_t *buf, uint64_t lb,
                        uint64_t nb)
{
	int err = ufs_map_grow(fs, ip, (lb + nb) * UFS_BSECT);
	if (err < 0) {
		/* Give back what was allocated past the end of the file. */
		uint64_t keep = (ip->d.size + UFS_BSIZE - 1) / UFS_BSIZE * UFS_BSECT;
		if (ip->mapped > keep && bc_count(&fs->bc, ip->ino, keep / UFS_BSECT, UINT64_MAX, 1) == 0)
			ufs_map_shrink(fs, ip, keep);
		return err;
	}
	bc_drop_range(&fs->bc, ip->ino, lb, lb + nb);
	struct edc_slot slots[4];
	struct edc_batch bt;
	edc_batch_init(&bt, fs->c, slots, 4);
	for (uint64_t i = 0; i < nb; ) {
		uint64_t run;
		uint64_t sector = ufs_map_lookup(ip, (lb + i) * UFS_BSECT, &run);
		uint64_t k = min64(run / UFS_BSECT, nb - i);
		/* The kernel only reads a write's buffer. */
		int32_t r = ufs_io(fs, &bt, ip, 1, sector, (void *)(uintptr_t)(buf + i * UFS_BSIZE),
		                   k * UFS_BSIZE);
		if (r < 0) {
			edc_batch_wait(&bt);
			return ufs_err(r);
		}
		i += k;
	}
	int32_t r = edc_batch_wait(&bt);
	ufs_unreserve(fs, ip);
	return r < 0 ? ufs_err(r) : 0;
}

/* The file grows from its size to `to`: the bytes from the old end to the
 * end of its last block must read as zero.  They are zero on disk unless a
 * crash left bytes written there whose larger size never became durable,
 * so they are cleared in the cache (a block in memory, often cached). */
static int zero_tail(struct ufs *fs, struct uinode *ip, uint64_t to)
{
	uint64_t size = ip->d.size;
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
	ufs_idirty(fs, ip);
	return 0;
}

long ufs_write(struct ufs *fs, struct uinode *ip, const void *buf, size_t n, uint64_t off)
{
	if (n == 0)
		return 0;
	uint64_t end = off + n;
	uint64_t maxbytes = (uint64_t)UFS_MAX_EXTENTS * UINT32_MAX / 2 * ED_SECTOR;
	if (end > maxbytes || end < off)
		return -EFBIG;
	const uint8_t *in = buf;
	int err;
	if (ip->persist == LIBFS_P_MEMORY) {
		err = mem_reserve(ip, end);
		if (err < 0)
			return err;
		memcpy(ip->mem + off, in, n);
	} else if ((ip->d.flags & UFS_DF_IMMEDIATE) && end <= UFS_IMM_MAX) {
		if (off > ip->d.size)
			memset(ip->imm + ip->d.size, 0, off - ip->d.size);
		memcpy(ip->imm + off, in, n);
		ip->imm_dirty = 1;
	} else {
		/* Promise the blocks first, so a full disk is -ENOSPC here. */
		err = ufs_reserve(fs, ip, end);
		if (err < 0)
			return err;
		if (ip->d.flags & UFS_DF_IMMEDIATE) {
			err = leave_immediate(fs, ip);
			if (err < 0)
				return err;
		}
		if (off > ip->d.size && (err = zero_tail(fs, ip, off)) < 0)
			return err;
		size_t done = 0;
		while (done < n) {
			uint64_t pos = off + done;
			uint64_t lblk = pos / UFS_BSIZE, boff = pos % UFS_BSIZE;
			/* A long run of whole blocks that continues or overwrites the
			 * mapped part goes straight to the disk from the caller's
			 * buffer; its metadata still waits for sync. */
			if (boff == 0 && n - done >= DIRECT_MIN && lblk * UFS_BSECT <= ip->mapped &&
			    !(ip->dd.flags & UFS_DF_IMMEDIATE)) {
				uint64_t nb = (n - done) / UFS_BSIZE;
				err = write_direct(fs, ip, in + done, lblk, nb);
				if (err < 0) {
					if (done == 0)
						return err;
					n = done;
					end = off + n;
					break;
				}
				done += nb * UFS_BSIZE;
				if (pos + nb * UFS_BSIZE > ip->d.size)
					ip->d.size = pos + nb * UFS_BSIZE;
				ufs_idirty(fs, ip);
				continue;
			}
			size_t k = (size_t)min64(UFS_BSIZE - boff, n - done);
			/* A whole block needs no old contents; a partial one does,
			 * unless it lies wholly past the end of the file. */
			int need = k < UFS_BSIZE && lblk * UFS_BSIZE < ip->d.size;
			struct bbuf *b;
			err = getblk(fs, ip, lblk, need, &b);
			if (err < 0) {
				if (done == 0)
					return err;
				n = done;
				end = off + n;
				break;
			}
			memcpy(b->data + boff, in + done, k);
			bc_dirty(&fs->bc, b);
			ufs_idirty(fs, ip);       /* again: a sync may have run */
			done += k;
			/* The size covers every dirty block at all times: a sync
			 * started by a later getblk writes only blocks below it. */
			if (pos + k > ip->d.size)
				ip->d.size = pos + k;
		}
	}
	if (end > ip->d.size)
		ip->d.size = end;
	ip->d.mtime = ufs_now(fs);
	ufs_idirty(fs, ip);
	if (ip->persist == LIBFS_P_WRITETHROUGH) {
		err = ufs_fsync(fs, ip);
		if (err < 0)
			return err;
	}
	return (long)n;
}

/* Bring the exonode's metadata up to date (what ufs_push_meta does) when
 * it only gets smaller: allowed at any time. */
static int push_now(struct ufs *fs, struct uinode *ip)
{
	int64_t r = ufs_xn_add_data(fs, ip->sector, ip->slot, UFS_E_META, &ip->d, sizeof ip->d);
	if (r < 0)
		return ufs_err(r);
	ip->dd = ip->d;
	return 0;
}

int ufs_truncate(struct ufs *fs, struct uinode *ip, uint64_t len)
{
	uint64_t size = ip->d.size;
	if (len == size)
		return 0;
	if (len > (uint64_t)UFS_MAX_EXTENTS * UINT32_MAX / 2 * ED_SECTOR)
		return -EFBIG;
	int err = 0;
	if (ip->persist == LIBFS_P_MEMORY) {
		if (len < size && len < ip->memcap)
			memset(ip->mem + len, 0, min64(ip->memcap, size) - len);
		ip->d.size = len;
	} else if (ip->d.flags & UFS_DF_IMMEDIATE) {
		if (len <= UFS_IMM_MAX) {
			if (len > size)
				memset(ip->imm + size, 0, len - size);
			ip->d.size = len;
			ip->imm_dirty = 1;
		} else {
			err = leave_immediate(fs, ip);
			ip->d.size = len;
		}
	} else if (len > size) {
		/* Past the old end everything reads as zero: blocks past the last
		 * extent are zero by definition, the last block's tail is cleared. */
		err = zero_tail(fs, ip, len);
		if (err == 0)
			ip->d.size = len;
	} else {
		uint64_t keepblk = (len + UFS_BSIZE - 1) / UFS_BSIZE;
		bc_drop(&fs->bc, ip->ino, keepblk);
		if (len % UFS_BSIZE != 0) {
			/* Zero the rest of the last block, so growing again later
			 * shows zeros, not the old bytes. */
			struct bbuf *b;
			err = getblk(fs, ip, len / UFS_BSIZE, 1, &b);
			if (err < 0)
				return err;
			memset(b->data + len % UFS_BSIZE, 0, UFS_BSIZE - len % UFS_BSIZE);
			bc_dirty(&fs->bc, b);
			ufs_idirty(fs, ip);
			/* Reading that block may have read ahead past the new end
			 * (the size is still the old one): forget those too. */
			bc_drop(&fs->bc, ip->ino, keepblk);
		}
		ip->d.size = len;
		if (len == 0)
			ip->d.flags |= UFS_DF_IMMEDIATE;
		/* A smaller size may become durable at once; then the extents
		 * past it go. */
		if (ip->dd.size > len || len == 0) {
			struct ufs_dinode keep = ip->d;
			ip->d.size = min64(ip->dd.size, len);
			ip->d.flags = ip->dd.flags;
			err = push_now(fs, ip);
			ip->d = keep;
		}
		if (err == 0)
			err = ufs_map_shrink(fs, ip, keepblk * UFS_BSECT);
		if (err == 0 && len == 0 && ip->dd.flags != ip->d.flags)
			err = push_now(fs, ip);
	}
	if (err < 0)
		return err;
	ufs_unreserve(fs, ip);
	ip->d.mtime = ufs_now(fs);
	ufs_idirty(fs, ip);
	if (ip->persist == LIBFS_P_WRITETHROUGH)
		return ufs_fsync(fs, ip);
	return 0;
}

/* ---- writing out ----------------------------------------------------------------- */

/* Staging buffers: runs of dirty blocks are copied into one and written
 * with one request.  Each buffer has its own result word so it is reused
 * only when its write is done. */
struct stager {
	struct ufs *fs;
	struct uinode *ip;
	uint8_t *buf[NSTAGE];
	volatile int32_t word[NSTAGE];
	int busy[NSTAGE];
	int next;
	int32_t err;
	/* the run being gathered */
	uint64_t sector;
	uint32_t len;
};

static uint8_t *stage_mem[NSTAGE];

static int stage_init(struct stager *s, struct ufs *fs, struct uinode *ip)
{
	memset(s, 0, sizeof *s);
	s->fs = fs;
	s->ip = ip;
	for (int i = 0; i < NSTAGE; i++) {
		if (stage_mem[i] == NULL && (stage_mem[i] = malloc(STAGE_BYTES)) == NULL)
			return -ENOMEM;
		s->buf[i] = stage_mem[i];
	}
	return 0;
}

static int32_t stage_wait(struct stager *s, int i)
{
	if (!s->busy[i])
		return 0;
	int32_t r = edc_wait(s->fs->c, &s->word[i]);
	s->busy[i] = 0;
	if (r < 0 && s->err == 0)
		s->err = r;
	return r;
}

/* Send the gathered run. */
static void stage_send(struct stager *s)
{
	if (s->len == 0)
		return;
	int i = s->next;
	int32_t r = ufs_io_start(s->fs, s->ip, 1, s->sector, s->buf[i], s->len, &s->word[i]);
	if (r < 0) {
		if (s->err == 0)
			s->err = r;
	} else {
		s->busy[i] = 1;
	}
	s->next = (i + 1) % NSTAGE;
	s->len = 0;
}

/* Add one block's bytes at `sector`. */
static void stage_add(struct stager *s, uint64_t sector, const uint8_t *data)
{
	if (s->len > 0 && (s->sector + s->len / ED_SECTOR != sector || s->len + UFS_BSIZE > STAGE_BYTES))
		stage_send(s);
	if (s->len == 0) {
		stage_wait(s, s->next);
		s->sector = sector;
	}
	memcpy(s->buf[s->next] + s->len, data, UFS_BSIZE);
	s->len += UFS_BSIZE;
}

static int32_t stage_finish(struct stager *s)
{
	stage_send(s);
	for (int i = 0; i < NSTAGE; i++)
		stage_wait(s, i);
	return s->err;
}

/* Write out an extent file's dirty blocks, allocating what is unmapped and
 * zero-filling holes below the highest dirty block. */
static int flush_blocks(struct ufs *fs, struct uinode *ip)
{
	uint32_t max = fs->bc.nbufs;
	struct bbuf **list = malloc(max * sizeof *list);
	if (list == NULL)
		return -ENOMEM;
	uint32_t nd = bc_dirty_list(&fs->bc, 0, ip->ino, 0, list, max);
	int err = 0;
	if (nd == 0)
		goto out;
	/* Blocks past the end of the file are not data (a write raced a
	 * truncate); drop them. */
	uint64_t endblk = (ip->d.size + UFS_BSIZE - 1) / UFS_BSIZE;
	uint64_t hi = 0;
	for (uint32_t i = 0; i < nd; i++)
		if (list[i]->lblk < endblk && list[i]->lblk + 1 > hi)
			hi = list[i]->lblk + 1;
	uint64_t old_mapped_blk = ip->mapped / UFS_BSECT;
	if (hi * UFS_BSECT > ip->mapped) {
		err = ufs_map_grow(fs, ip, hi * UFS_BSECT);
		if (err < 0)
			goto out;
	}
	/* What is allocated now no longer needs promising. */
	fs->resv -= ip->resv < fs->resv ? ip->resv : fs->resv;
	ip->resv = 0;
	struct stager st;
	err = stage_init(&st, fs, ip);
	if (err < 0)
		goto out;
	uint32_t k = 0;
	for (uint64_t lb = 0; lb < hi && (k < nd || lb >= old_mapped_blk); lb++) {
		while (k < nd && list[k]->lblk < lb)
			k++;
		const uint8_t *data;
		if (k < nd && list[k]->lblk == lb)
			data = list[k]->data;
		else if (lb >= old_mapped_blk)
			data = zero_block;       /* newly mapped, never written: zeros */
		else
			continue;
		uint64_t run;
		uint64_t sector = ufs_map_lookup(ip, lb * UFS_BSECT, &run);
		stage_add(&st, sector, data);
	}
	int32_t r = stage_finish(&st);
	if (r < 0) {
		err = ufs_err(r);
		goto out;
	}
	for (uint32_t i = 0; i < nd; i++) {
		if (list[i]->lblk >= endblk)
			bc_drop(&fs->bc, ip->ino, list[i]->lblk);
		else
			bc_clean(&fs->bc, list[i]);
	}
out:
	free(list);
	return err;
}

/* The immediate bytes and metadata, pushed into the exonode together. */
static int push_immediate(struct ufs *fs, struct uinode *ip)
{
	int bytes = ip->imm_dirty || ip->d.size != ip->dd.size || ip->d.flags != ip->dd.flags;
	if (!bytes && memcmp(&ip->d, &ip->dd, sizeof ip->d) == 0)
		return 0;
	int64_t r = 0;
	uint32_t len = (uint32_t)((ip->d.size + 7) & ~7ull);
	if (bytes && len > 0) {
		if (len > ip->d.size)
			memset(ip->imm + ip->d.size, 0, len - ip->d.size);
		r = ufs_xn_add_data(fs, ip->sector, ip->slot, UFS_E_IMM, ip->imm, len);
	} else if (bytes) {
		r = ufs_xn_remove(fs, ip->sector, ip->slot, UFS_E_IMM, 0);
		if (r == ED_E_ENTRY)
			r = 0;           /* there was none */
	}
	if (r < 0)
		return ufs_err(r);
	int err = push_now(fs, ip);
	if (err == 0)
		ip->imm_dirty = 0;
	return err;
}

/* The file outgrew its exonode: give it one block holding its first 4 KiB,
 * make that durable, then switch the exonode over (sync.c's invariant:
 * what the exonode says is always durable). */
static int convert_out(struct ufs *fs, struct uinode *ip)
{
	struct bbuf *b;
	int err = getblk(fs, ip, 0, 0, &b);
	if (err < 0)
		return err;
	if (ip->mapped == 0) {
		err = ufs_map_grow(fs, ip, UFS_BSECT);
		if (err < 0)
			return err;
	}
	struct edc_slot slots[1];
	struct edc_batch bt;
	edc_batch_init(&bt, fs->c, slots, 1);
	int32_t r = ufs_io(fs, &bt, ip, 1, ip->ext[0].sector, b->data, UFS_BSIZE);
	if (r == 0)
		r = edc_batch_wait(&bt);
	if (r < 0)
		return ufs_err(r);
	bc_clean(&fs->bc, b);
	err = ufs_barrier(fs);
	if (err < 0)
		return err;
	r = (int32_t)ufs_xn_remove(fs, ip->sector, ip->slot, UFS_E_IMM, 0);
	if (r < 0 && r != ED_E_ENTRY)
		return ufs_err(r);
	struct ufs_dinode keep = ip->d;
	ip->d.flags &= ~UFS_DF_IMMEDIATE;
	ip->d.size = min64(ip->d.size, UFS_BSIZE);
	err = push_now(fs, ip);
	ip->d = keep;
	return err;
}

int ufs_flush_data(struct ufs *fs, struct uinode *ip)
{
	if (ip->persist == LIBFS_P_MEMORY)
		return 0;
	if (ip->d.flags & UFS_DF_IMMEDIATE)
		return push_immediate(fs, ip);
	if (ip->dd.flags & UFS_DF_IMMEDIATE) {
		int err = convert_out(fs, ip);
		if (err < 0)
			return err;
	}
	return flush_blocks(fs, ip);
}

int ufs_push_meta(struct ufs *fs, struct uinode *ip)
{
	if (ip->persist == LIBFS_P_MEMORY || memcmp(&ip->d, &ip->dd, sizeof ip->d) == 0)
		return 0;
	if (ip->d.flags & UFS_DF_IMMEDIATE)
		return push_immediate(fs, ip);
	return push_now(fs, ip);
}

int ufs_set_persist(struct ufs *fs, struct uinode *ip, int model)
{
	if (model == ip->persist)
		return 0;
	if (model == LIBFS_P_MEMORY || ip->persist == LIBFS_P_MEMORY)
		return -EINVAL;         /* ops.c handles memory-only files */
	ip->persist = model;
	ip->d.persist = (uint8_t)model;
	ufs_idirty(fs, ip);
	if (model == LIBFS_P_WRITETHROUGH)
		return ufs_fsync(fs, ip);
	return 0;
}
