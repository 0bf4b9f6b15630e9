/*
 * xops.c - unixfs's exodisk operations.
 *
 * The exodisk cache belongs to the kernel and is shared: an exonode we
 * used a moment ago may have been replaced by another of ours, and a change
 * may find the cache full.  So every operation here runs in the libFS
 * kit's retry loop (kit_again, libos/kit/xn.c): ED_E_NOTCACHED reads the
 * exonode's block back in and tries again; a cache full of dirty entries
 * (ED_E_CACHEDIRTY) makes us write back every block we have changed
 * (ufs_writeback_all, the kit's writeback hook) and try again.  That
 * write-back is always allowed because unixfs keeps an invariant: whatever
 * an exonode says may become durable at any moment (sync.c says why that
 * holds).
 *
 * Every block we change is remembered with a depth in the kit's set of
 * changed blocks (struct kit_dirty), and write-back goes deepest first:
 * the leaves of a double-indirect node, then map nodes, then dnodes and
 * fnodes, then the superblock, so a durable descendant entry never names
 * a block that is not durable, and the superblock never names a root or a
 * file id range before what it names is.  Map pages are copied by the kit
 * too (kit_xn_map).
 *
 * A protector carries two capabilities, each a SipHash of the owner's key
 * and the exonode's place (kit_prot): struct uxn computes them once per
 * exonode and keeps them.
 *
 * struct uio keeps many transfers in flight at once and gathers writes
 * that continue one another into one request (a directory's small files
 * and blocks, written together at a commit, are usually one request).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

void ufs_xn_set(struct uxn *x, uint64_t sector, uint16_t slot)
{
	x->sector = sector;
	x->slot = slot;
	x->have = 0;
}

const struct ed_protector *ufs_xn_prot(struct ufs *fs, struct uxn *x)
{
	if (!x->have) {
		x->p = kit_prot(&fs->k, x->sector, x->slot);
		x->have = 1;
	}
	return &x->p;
}

/* ---- the set of changed blocks -------------------------------------------------- */

int ufs_touch(struct ufs *fs, uint64_t sector, uint16_t slot, int depth)
{
	return kit_dirty_add(&fs->dx, sector, slot, depth);
}

/* ---- exonode calls ------------------------------------------------------------------ */

/* Can a failed operation be tried again after fixing its cause?  The
 * kit's rules (kit_again); its writeback hook is ufs_writeback_all, which
 * fsck's read-only mounts and an empty set of changed blocks cannot use. */
static int recover(struct ufs *fs, int64_t r, struct uxn *x, int *tries)
{
	return kit_again(&fs->k, r, x->sector, x->slot, tries);
}

enum xop { X_ALLOC, X_DEALLOC, X_EXTENT, X_CHILD, X_DATA, X_READ, X_REMOVE, X_RANGE, X_COMBINE, X_SPLIT };

struct xreq {
	enum xop op;
	int entry;
	uint64_t a, b;
	const void *data;
	void *out;
	uint32_t len;
	int depth;
};

static int64_t xcall(struct ufs *fs, struct uxn *x, struct xreq *q)
{
	for (int tries = 0;;) {
		const struct ed_protector *p = ufs_xn_prot(fs, x);
		int64_t r;
		switch (q->op) {
		case X_ALLOC: {
			struct ed_protector ap = *p;
			ap.length = q->len;
			r = edc_xn_alloc(fs->k.c, &ap);
			break;
		}
		case X_DEALLOC:
			r = edc_xn_dealloc(fs->k.c, p);
			break;
		case X_EXTENT:
			r = edc_xn_add_extent(fs->k.c, p, q->entry, q->a, q->b * ED_SECTOR);
			break;
		case X_CHILD: {
			struct ed_protector cp = kit_prot(&fs->k, q->a, 0);
			r = edc_xn_add_exonode(fs->k.c, p, q->entry, q->a, 0, UFS_MAP_BYTES, &cp.rc, &cp.wc);
			break;
		}
		case X_DATA:
			r = edc_xn_add_data(fs->k.c, p, q->entry, q->data, q->len);
			break;
		case X_READ:
			r = edc_xn_read_data(fs->k.c, p, q->entry, q->out, q->len);
			break;
		case X_REMOVE:
			r = edc_xn_remove(fs->k.c, p, q->entry);
			break;
		case X_RANGE:
			r = edc_xn_remove_range(fs->k.c, p, q->entry, (int)q->a);
			break;
		case X_COMBINE:
			r = edc_xn_combine(fs->k.c, p, q->entry, (int)q->a);
			break;
		default:
			r = edc_xn_split(fs->k.c, p, q->entry, q->a, (int)q->b);
			break;
		}
		if (r >= 0) {
			/* Keep the count of free sectors (for promises, alloc.c)
			 * honest between recounts. */
			uint64_t used = q->op == X_EXTENT ? q->b : q->op == X_CHILD ? UFS_MAP_SECT : 0;
			fs->free_est -= used < fs->free_est ? used : fs->free_est;
			if (q->op != X_READ && q->op != X_DEALLOC) {
				int e = ufs_touch(fs, x->sector, x->slot, q->depth);
				if (e == 0 && q->op == X_CHILD)
					e = ufs_touch(fs, q->a, 0, q->depth + 1);
				if (e < 0)
					return ED_E_NOMEM;
			} else if (q->op == X_DEALLOC) {
				/* The block must be written back for the slot to be
				 * free on disk; it may have no live exonode left, which
				 * any slot's capability then names. */
				if (ufs_touch(fs, x->sector, x->slot, 0) < 0)
					return ED_E_NOMEM;
			}
			return r;
		}
		if (!recover(fs, r, x, &tries))
			return kit_why(&fs->k, r);
	}
}

int64_t ufs_xn_alloc(struct ufs *fs, struct uxn *x, uint32_t length, int depth)
{
	struct xreq q = { .op = X_ALLOC, .len = length, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_dealloc(struct ufs *fs, struct uxn *x)
{
	struct xreq q = { .op = X_DEALLOC };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_add_extent(struct ufs *fs, struct uxn *x, int entry, uint64_t start, uint64_t nsect,
                          int depth)
{
	struct xreq q = { .op = X_EXTENT, .entry = entry, .a = start, .b = nsect, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_add_child(struct ufs *fs, struct uxn *x, int entry, uint64_t csector, int depth)
{
	struct xreq q = { .op = X_CHILD, .entry = entry, .a = csector, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_add_data(struct ufs *fs, struct uxn *x, int entry, const void *data, uint32_t len,
                        int depth)
{
	struct xreq q = { .op = X_DATA, .entry = entry, .data = data, .len = len, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_read_data(struct ufs *fs, struct uxn *x, int entry, void *buf, uint32_t len)
{
	struct xreq q = { .op = X_READ, .entry = entry, .out = buf, .len = len };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_remove(struct ufs *fs, struct uxn *x, int entry, int depth)
{
	struct xreq q = { .op = X_REMOVE, .entry = entry, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_remove_range(struct ufs *fs, struct uxn *x, int first, int n, int depth)
{
	struct xreq q = { .op = X_RANGE, .entry = first, .a = (uint64_t)n, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_combine(struct ufs *fs, struct uxn *x, int first, int second, int depth)
{
	struct xreq q = { .op = X_COMBINE, .entry = first, .a = (uint64_t)second, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_split(struct ufs *fs, struct uxn *x, int entry, uint64_t off, int newent, int depth)
{
	struct xreq q = { .op = X_SPLIT, .entry = entry, .a = off, .b = (uint64_t)newent, .depth = depth };
	return xcall(fs, x, &q);
}

int64_t ufs_xn_snapshot(struct ufs *fs, struct uxn *x, void *buf)
{
	return kit_xn_map_prot(&fs->k, ufs_xn_prot(fs, x), buf);
}

/* ---- write-back ---------------------------------------------------------------------- */

int ufs_writeback_all(struct ufs *fs)
{
	/* One depth at a time, deepest first, each level durable before the
	 * next starts: the exodisk's log keeps order within a level anyway,
	 * but this way nothing depends on that.  The blocks not known to be
	 * written stay in the set. */
	return fs->dx.n == 0 ? 0 : kit_dirty_commit(&fs->k, &fs->dx);
}

int ufs_barrier(struct ufs *fs)
{
	/* (The kit skips it when nothing was written since the last one.) */
	fs->cnt.barriers++;
	return kit_barrier(&fs->k);
}

/* ---- I/O in flight ------------------------------------------------------------------------ */

static uint8_t *stage_mem[UIO_SLOTS];

void uio_init(struct uio *w, struct ufs *fs, int write)
{
	memset(w, 0, sizeof *w);
	w->fs = fs;
	w->write = write;
}

static void count_io(struct ufs *fs, int write, uint64_t bytes)
{
	if (write) {
		fs->k.unflushed++;       /* the next barrier must flush */
		fs->cnt.data_writes++;
		fs->cnt.data_bytes += bytes;
	} else {
		fs->cnt.data_reads++;
		fs->cnt.read_bytes += bytes;
	}
}

/* Wait for slot i's request, if it has one. */
static void slot_wait(struct uio *w, int i)
{
	if (!w->s[i].busy)
		return;
	int32_t r = edc_wait(w->fs->k.c, &w->s[i].word);
	w->s[i].busy = 0;
	if (r < 0) {
		if (w->err == 0)
			w->err = r;
		if (w->s[i].owner && w->s[i].owner->err == 0)
			w->s[i].owner->err = kit_err(r);
	}
}

/* Start one request in slot i; a refusal is returned at once. */
static int slot_start(struct uio *w, int i, const struct ed_protector *p, uint64_t sector, void *mem,
                      uint64_t bytes, struct udir *owner)
{
	struct ufs *fs = w->fs;
	count_io(fs, w->write, bytes);
	for (int tries = 0;;) {
		int64_t r = edc_io(fs->k.c, p, w->write, sector, mem, bytes, &w->s[i].word);
		if (r == 0) {
			w->s[i].busy = 1;
			w->s[i].owner = owner;
			return 0;
		}
		if (r == ED_E_NOIO) {
			/* Too many in flight: wait for one of ours, or idle. */
			int any = 0;
			for (int k = 0; k < UIO_SLOTS; k++)
				if (w->s[k].busy) {
					slot_wait(w, k);
					any = 1;
					break;
				}
			if (!any)
				fs->k.c->t->idle(fs->k.c->ctx);
			continue;
		}
		/* The exonode left the cache, or the cache is full: fix, retry. */
		struct uxn x;
		ufs_xn_set(&x, p->blkno, p->xn_num);
		x.p = *p;
		x.have = 1;
		if (recover(fs, r, &x, &tries))
			continue;
		r = kit_why(&fs->k, r);
		if (owner && owner->err == 0)
			owner->err = kit_err(r);
		if (w->err == 0)
			w->err = (int32_t)r;
		return (int)r;
	}
}

/* Send the run being gathered. */
static void send(struct uio *w)
{
	if (!w->gather)
		return;
	int i = w->next;
	w->gather = 0;
	slot_start(w, i, &w->p, w->sector, w->s[i].stage, w->len, w->owner);
	w->next = (i + 1) % UIO_SLOTS;
	w->len = 0;
}

static int same_prot(const struct ed_protector *a, const struct ed_protector *b)
{
	return a->blkno == b->blkno && a->xn_num == b->xn_num && a->kind == b->kind;
}

int uio_write(struct uio *w, const struct ed_protector *p, uint64_t sector, const void *data,
              uint32_t bytes, struct udir *owner)
{
	const uint8_t *src = data;
	while (bytes > 0) {
		if (w->gather && (!same_prot(&w->p, p) || w->sector + w->len / ED_SECTOR != sector ||
		                  w->len == UIO_STAGE || w->owner != owner))
			send(w);
		if (!w->gather) {
			int i = w->next;
			slot_wait(w, i);
			if (w->s[i].stage == NULL) {
				if (stage_mem[i] == NULL && (stage_mem[i] = malloc(UIO_STAGE)) == NULL)
					return -ENOMEM;
				w->s[i].stage = stage_mem[i];
			}
			w->p = *p;
			w->owner = owner;
			w->sector = sector;
			w->len = 0;
			w->gather = 1;
		}
		uint32_t k = UIO_STAGE - w->len < bytes ? UIO_STAGE - w->len : bytes;
		memcpy(w->s[w->next].stage + w->len, src, k);
		w->len += k;
		src += k;
		sector += k / ED_SECTOR;
		bytes -= k;
	}
	return 0;
}

int uio_direct(struct uio *w, const struct ed_protector *p, uint64_t sector, void *mem,
               uint64_t bytes, struct udir *owner)
{
	uint8_t *dst = mem;
	send(w);
	while (bytes > 0) {
		uint64_t k = bytes > ED_IO_MAX ? ED_IO_MAX : bytes;
		int i = w->next;
		slot_wait(w, i);
		int r = slot_start(w, i, p, sector, dst, k, owner);
		w->next = (i + 1) % UIO_SLOTS;
		if (r < 0)
			return kit_err(r);
		dst += k;
		sector += k / ED_SECTOR;
		bytes -= k;
	}
	return 0;
}

void uio_send(struct uio *w)
{
	send(w);
}

int uio_finish(struct uio *w)
{
	send(w);
	for (int i = 0; i < UIO_SLOTS; i++)
		slot_wait(w, i);
	int32_t e = w->err;
	w->err = 0;
	return e < 0 ? kit_err(e) : 0;
}

int ufs_io_sync(struct ufs *fs, const struct ed_protector *p, int write, uint64_t sector, void *mem,
                uint64_t bytes)
{
	struct uio w;
	uio_init(&w, fs, write);
	int r = 0;
	uint8_t *m = mem;
	while (r == 0 && bytes > 0) {
		uint32_t k = bytes > ED_IO_MAX ? ED_IO_MAX : (uint32_t)bytes;
		int i = w.next;
		slot_wait(&w, i);
		r = slot_start(&w, i, p, sector, m, k, NULL);
		w.next = (i + 1) % UIO_SLOTS;
		m += k;
		sector += k / ED_SECTOR;
		bytes -= k;
	}
	int e = uio_finish(&w);
	return r < 0 ? kit_err(r) : e;
}
