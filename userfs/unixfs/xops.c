/*
 * xops.c - unixfs's exodisk operations.
 *
 * The exodisk cache belongs to the kernel and is shared: an exonode we
 * used a moment ago may have been replaced by another of ours, and a change
 * may find the cache full.  So every operation here runs in a small loop:
 * ED_E_NOTCACHED reads the exonode's block back in and tries again; a cache
 * full of dirty entries (ED_E_CACHEDIRTY) makes us write back every block
 * we have changed and try again.  That write-back is always allowed because
 * unixfs keeps an invariant: whatever an exonode says may become durable at
 * any moment (sizes grow only after their data is durable, names are freed
 * only after no durable directory names them: see sync.c).
 *
 * Every block we change is remembered with a depth, and write-back goes
 * deepest first: the leaves of a double-indirect node, then map nodes, then
 * inode blocks, so a durable descendant entry never names a block that is
 * not durable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

struct ed_protector ufs_prot(struct ufs *fs, uint64_t sector, uint16_t slot)
{
	struct ed_cap rc = capkey_cap(&fs->key, 'r', sector, slot);
	struct ed_cap wc = capkey_cap(&fs->key, 'w', sector, slot);
	return edc_prot_xn(fs->unit, sector, slot, &rc, &wc);
}

int ufs_err(int64_t r)
{
	if (r >= 0)
		return (int)r;
	return -edc_errno(r);
}

int ufs_touch(struct ufs *fs, uint64_t sector, uint16_t slot, int depth)
{
	/* Blocks of memory-only inodes and the lock are never written back. */
	if (ufs_is_memblk(fs, sector) || (fs->sb.lock_sector != 0 && sector == fs->sb.lock_sector))
		return 0;
	for (uint32_t i = 0; i < fs->ndblk; i++)
		if (fs->dblk[i].sector == sector) {
			if (depth > fs->dblk[i].depth)
				fs->dblk[i].depth = (int8_t)depth;
			return 0;
		}
	if (fs->ndblk == fs->dblkcap) {
		uint32_t cap = fs->dblkcap ? fs->dblkcap * 2 : 64;
		struct udblk *n = realloc(fs->dblk, cap * sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		fs->dblk = n;
		fs->dblkcap = cap;
	}
	fs->dblk[fs->ndblk++] = (struct udblk){ sector, slot, (int8_t)depth };
	return 0;
}

/* Can a failed operation be tried again after fixing its cause? */
static int recover(struct ufs *fs, int64_t r, uint64_t sector, uint16_t slot, int tries)
{
	if (tries >= 4)
		return 0;
	if (r == ED_E_NOTCACHED) {
		struct ed_protector p = ufs_prot(fs, sector, slot);
		int32_t rr = edc_xn_read_sync(fs->c, &p);
		if ((rr == ED_E_CACHEDIRTY || rr == ED_E_QUOTA) && fs->ndblk > 0 && !fs->readonly &&
		    ufs_writeback_all(fs) == 0)
			rr = edc_xn_read_sync(fs->c, &p);
		return rr == 0;
	}
	if (r == ED_E_CACHEDIRTY || r == ED_E_DEALLOC) {
		/* Ours to clean: write back (which also finishes deallocations). */
		return fs->ndblk > 0 && !fs->readonly && ufs_writeback_all(fs) == 0;
	}
	if (r == ED_E_BUSY) {
		fs->c->t->idle(fs->c->ctx);
		return 1;
	}
	return 0;
}

enum xop { X_ALLOC, X_DEALLOC, X_EXTENT, X_CHILD, X_DATA, X_READ, X_REMOVE, X_COMBINE, X_SPLIT };

struct xreq {
	enum xop op;
	int entry;
	uint64_t a, b;
	const void *data;
	void *out;
	uint32_t len;
	int depth;
};

static int64_t xcall(struct ufs *fs, uint64_t sector, uint16_t slot, struct xreq *q)
{
	for (int tries = 0;; tries++) {
		struct ed_protector p = ufs_prot(fs, sector, slot);
		int64_t r;
		switch (q->op) {
		case X_ALLOC:
			p.length = q->len;
			r = edc_xn_alloc(fs->c, &p);
			break;
		case X_DEALLOC:
			r = edc_xn_dealloc(fs->c, &p);
			break;
		case X_EXTENT:
			r = edc_xn_add_extent(fs->c, &p, q->entry, q->a, q->b * ED_SECTOR);
			break;
		case X_CHILD: {
			struct ed_protector cp = ufs_prot(fs, q->a, 0);
			r = edc_xn_add_exonode(fs->c, &p, q->entry, q->a, 0, UFS_MAP_BYTES, &cp.rc, &cp.wc);
			break;
		}
		case X_DATA:
			r = edc_xn_add_data(fs->c, &p, q->entry, q->data, q->len);
			break;
		case X_READ:
			r = edc_xn_read_data(fs->c, &p, q->entry, q->out, q->len);
			break;
		case X_REMOVE:
			r = edc_xn_remove(fs->c, &p, q->entry);
			break;
		case X_COMBINE:
			r = edc_xn_combine(fs->c, &p, q->entry, (int)q->a);
			break;
		default:
			r = edc_xn_split(fs->c, &p, q->entry, q->a, (int)q->b);
			break;
		}
		if (r >= 0) {
			/* Keep the count of free sectors (for promises, alloc.c)
			 * honest between recounts. */
			uint64_t used = q->op == X_EXTENT ? q->b : q->op == X_CHILD ? UFS_MAP_SECT : 0;
			fs->free_est -= used < fs->free_est ? used : fs->free_est;
			if (q->op != X_READ) {
				int e = ufs_touch(fs, sector, slot, q->depth);
				if (e == 0 && q->op == X_CHILD)
					e = ufs_touch(fs, q->a, 0, q->depth + 1);
				if (e < 0)
					return ED_E_NOMEM;
			}
			return r;
		}
		if (!recover(fs, r, sector, slot, tries))
			return r;
	}
}

int64_t ufs_xn_alloc(struct ufs *fs, uint64_t sector, uint16_t slot, uint32_t length)
{
	struct xreq q = { .op = X_ALLOC, .len = length };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_dealloc(struct ufs *fs, uint64_t sector, uint16_t slot)
{
	struct xreq q = { .op = X_DEALLOC };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_add_extent(struct ufs *fs, uint64_t sector, uint16_t slot, int entry,
                          uint64_t start, uint64_t nsect, int depth)
{
	struct xreq q = { .op = X_EXTENT, .entry = entry, .a = start, .b = nsect, .depth = depth };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_add_child(struct ufs *fs, uint64_t sector, uint16_t slot, int entry,
                         uint64_t csector, int depth)
{
	struct xreq q = { .op = X_CHILD, .entry = entry, .a = csector, .depth = depth };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_add_data(struct ufs *fs, uint64_t sector, uint16_t slot, int entry,
                        const void *data, uint32_t len)
{
	struct xreq q = { .op = X_DATA, .entry = entry, .data = data, .len = len };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_read_data(struct ufs *fs, uint64_t sector, uint16_t slot, int entry, void *buf,
                         uint32_t len)
{
	struct xreq q = { .op = X_READ, .entry = entry, .out = buf, .len = len };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_remove(struct ufs *fs, uint64_t sector, uint16_t slot, int entry, int depth)
{
	struct xreq q = { .op = X_REMOVE, .entry = entry, .depth = depth };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_combine(struct ufs *fs, uint64_t sector, uint16_t slot, int first, int second,
                       int depth)
{
	struct xreq q = { .op = X_COMBINE, .entry = first, .a = (uint64_t)second, .depth = depth };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_split(struct ufs *fs, uint64_t sector, uint16_t slot, int entry, uint64_t off,
                     int newent, int depth)
{
	struct xreq q = { .op = X_SPLIT, .entry = entry, .a = off, .b = (uint64_t)newent,
	                  .depth = depth };
	return xcall(fs, sector, slot, &q);
}

int64_t ufs_xn_snapshot(struct ufs *fs, uint64_t sector, uint16_t slot, void *buf)
{
	for (int tries = 0;; tries++) {
		struct ed_protector p = ufs_prot(fs, sector, slot);
		int64_t addr = edc_xn_map(fs->c, &p);
		if (addr < 0) {
			if (recover(fs, addr, sector, slot, tries))
				continue;
			return addr;
		}
		/* The page is rewritten in place when the exonode changes; we do
		 * not change it meanwhile, but copy it the careful way anyway. */
		const volatile struct ed_xnmap_hdr *h = (const volatile void *)(uintptr_t)addr;
		uint64_t g0, g1;
		do {
			g0 = h->gen;
			memcpy(buf, (const void *)(uintptr_t)addr, 4096);
			g1 = h->gen;
		} while ((g0 & 1) || g0 != g1);
		edc_xn_unmap(fs->c, &p, (uint64_t)addr);
		const struct ed_xnmap_hdr *c = buf;
		if (c->magic != ED_XNMAP_MAGIC || c->state != ED_XNMAP_LIVE)
			return ED_E_CORRUPT;
		return 0;
	}
}

/* The exonode that lists the extent holding `sector` protects it. */
static const struct unode *node_of(const struct uinode *ip, uint64_t sector)
{
	for (uint32_t i = 0; i < ip->next; i++) {
		const struct uext *e = &ip->ext[i];
		if (sector >= e->sector && sector < e->sector + e->nsect)
			return &ip->node[e->node];
	}
	return &ip->node[UN_INODE];
}

static void count_io(struct ufs *fs, int write, uint64_t bytes)
{
	if (write) {
		fs->cnt.data_writes++;
		fs->cnt.data_bytes += bytes;
	} else {
		fs->cnt.data_reads++;
		fs->cnt.read_bytes += bytes;
	}
}

int32_t ufs_io(struct ufs *fs, struct edc_batch *b, const struct uinode *ip, int write,
               uint64_t sector, void *mem, uint64_t bytes)
{
	const struct unode *n = node_of(ip, sector);
	count_io(fs, write, bytes);
	for (int tries = 0;; tries++) {
		struct ed_protector p = ufs_prot(fs, n->sector, n->slot);
		int32_t r = edc_batch_io(b, &p, write, sector, mem, bytes);
		if (r >= 0 || !recover(fs, r, n->sector, n->slot, tries))
			return r;
	}
}

int32_t ufs_io_start(struct ufs *fs, const struct uinode *ip, int write, uint64_t sector,
                     void *mem, uint64_t bytes, volatile int32_t *word)
{
	const struct unode *n = node_of(ip, sector);
	count_io(fs, write, bytes);
	for (int tries = 0;; tries++) {
		struct ed_protector p = ufs_prot(fs, n->sector, n->slot);
		int64_t r = edc_io(fs->c, &p, write, sector, mem, bytes, word);
		if (r == ED_E_NOIO) {
			fs->c->t->idle(fs->c->ctx);
			continue;
		}
		if (r >= 0 || !recover(fs, r, n->sector, n->slot, tries))
			return (int32_t)r;
	}
}

static int cmp_depth(const void *x, const void *y)
{
	const struct udblk *a = x, *b = y;
	if (a->depth != b->depth)
		return a->depth > b->depth ? -1 : 1;
	return a->sector < b->sector ? -1 : a->sector > b->sector;
}

int ufs_writeback_all(struct ufs *fs)
{
	if (fs->ndblk == 0)
		return 0;
	qsort(fs->dblk, fs->ndblk, sizeof *fs->dblk, cmp_depth);
	struct edc_slot slots[32];
	struct edc_batch b;
	uint32_t i = 0;
	int err = 0;
	while (i < fs->ndblk) {
		/* One depth at a time, each level durable before the next starts:
		 * the exodisk's log keeps order within a level anyway, but this way
		 * nothing depends on that. */
		uint32_t j = i;
		int depth = fs->dblk[i].depth;
		edc_batch_init(&b, fs->c, slots, 32);
		for (; j < fs->ndblk && fs->dblk[j].depth == depth; j++) {
			struct ed_protector p = ufs_prot(fs, fs->dblk[j].sector, fs->dblk[j].slot);
			int32_t r = edc_batch_xn_write(&b, &p);
			/* Clean, or gone (never-written blocks that were freed): fine. */
			if (r < 0 && r != ED_E_CLEAN && r != ED_E_NOTBOUND && r != ED_E_NOTCACHED && err == 0)
				err = r;
		}
		int32_t r = edc_batch_wait(&b);
		if (r < 0 && err == 0)
			err = r;
		fs->cnt.writebacks += j - i;
		if (err != 0)
			break;
		i = j;
	}
	if (err != 0) {
		/* Keep the blocks not yet known to be written; i is the first. */
		memmove(fs->dblk, fs->dblk + i, (fs->ndblk - i) * sizeof *fs->dblk);
		fs->ndblk -= i;
		return ufs_err(err);
	}
	fs->ndblk = 0;
	return 0;
}

int ufs_barrier(struct ufs *fs)
{
	fs->cnt.barriers++;
	int32_t f = edc_flush(fs->c, fs->unit);
	return f < 0 ? ufs_err(f) : 0;
}
