/*
 * extops.c - self-protected extents: allocate, deallocate, grow, shrink;
 * and, for both kinds of metadata, reading a block into the cache and
 * writing it back (thesis section 3.2).
 *
 * Every change is made to the cached working copy and marks it dirty; it
 * becomes durable only when the application writes it back.  Sectors join
 * the free map's allocated set at once and leave it only when no durable
 * binding refers to them any more (freemap.c).
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

static int64_t extent_allocate(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	const struct ed_protector *prot = a->prot;
	int err;
	if (prot->kind != ED_PK_EXTENT || prot->pad[0] | prot->pad[1] | prot->pad[2] | prot->pad2)
		return ED_E_ARG;
	struct ed_disk *d = ed_disk_get(ed, prot->unit, &err);
	if (d == NULL)
		return err;
	if (prot->length == 0)
		return ED_E_ARG;
	if (prot->length % ED_SECTOR != 0)
		return ED_E_ALIGN;
	uint64_t n = prot->length / ED_SECTOR;
	if (n > d->nsectors)
		return ED_E_TOOBIG;
	if (!ed_range_ok(d, prot->blkno, n))
		return ED_E_RANGE;
	if (ed_cache_lookup_cover(ed, prot->unit, prot->blkno))
		return ED_E_ALLOCATED;
	if ((err = ed_fm_claim_check(d, prot->blkno, n)) != 0 ||
	    (err = ed_unw_prepare(d, prot->blkno, n)) != 0)
		return err;
	struct ed_entry *e = ed_cache_alloc(ed, c, prot->unit, prot->blkno, ED_KIND_EXTENT, 1, &err);
	if (e == NULL)
		return err;
	struct ed_exthdr *h = ed_ext(e);
	h->magic = ED_EXT_MAGIC;
	h->fmt = ED_FMT;
	h->nsect = 1;
	h->nsectors = n;
	h->rc = prot->rc;
	h->wc = prot->wc;
	e->flags = EF_VALID;
	ed_fm_claim(d, prot->blkno, n);
	ed_unw_mark(d, prot->blkno, n);      /* until written, they read as zeros */
	ed_ent_changed(ed, e, c);
	return 0;
}

/* Drop [start, start+count) from an entry's working copy: refused while I/O
 * to those sectors is in flight; released at once if no durable binding
 * refers to them. */
static int drop_range(struct exodisk *ed, struct ed_disk *d, uint64_t start, uint64_t count)
{
	if (ed_io_busy_range(ed, d->unit, start, count))
		return ED_E_IOBUSY;
	ed_fm_release_uncommitted(d, start, count);
	return 0;
}

static int64_t extent_change(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a)
{
	struct ed_obj o;
	int err = ed_obj_find(ed, a->prot, &o);
	if (err != 0)
		return err;
	if (o.kind != ED_PK_EXTENT)
		return o.kind == ED_PK_PROXY ? ED_E_PROXY : ED_E_KIND;
	if ((err = ed_obj_access(ed, &o, a->prot, true)) != 0 || (err = ed_ent_modifiable(o.e)) != 0)
		return err;
	struct ed_entry *e = o.e;
	struct ed_disk *d = ed->disk[e->unit];
	struct ed_exthdr *h = ed_ext(e);
	/* A write of the header sector may be in flight (data, or the header
	 * going home): it carries a copy, so the working copy may change. */

	if (op == ED_OP_EXTENT_DEALLOCATE) {
		if (ed_io_busy_range(ed, e->unit, e->sector, h->nsectors))
			return ED_E_IOBUSY;
		if (e->com_stamp == 0) {
			/* Never committed: nothing durable refers to it. */
			ed_ent_discard(ed, e);
			return 0;
		}
		struct ed_rl *com = ed_rl_get(ed), *cur = ed_rl_get(ed), *extra = ed_rl_get(ed);
		ed_refs(e, e->cur, false, cur);
		ed_refs(e, e->com, false, com);
		ed_rl_diff(cur, com, extra);
		for (uint32_t i = 0; i < extra->n; i++)
			ed_fm_release_uncommitted(d, extra->r[i].start, extra->r[i].nsectors);
		ed_rl_put(ed, extra);
		ed_rl_put(ed, cur);
		ed_rl_put(ed, com);
		e->flags |= EF_DEALLOC;
		ed_ent_changed(ed, e, c);
		return 0;
	}

	if (a->stuff == NULL)
		return ED_E_ARG;
	uint64_t bytes = a->stuff->one;
	if (bytes == 0)
		return ED_E_ARG;
	if (bytes % ED_SECTOR != 0)
		return ED_E_ALIGN;
	uint64_t k = bytes / ED_SECTOR;
	if (k > d->nsectors)
		return ED_E_TOOBIG;
	if (op == ED_OP_EXTENT_GROW) {
		uint64_t end = e->sector + h->nsectors;
		if (!ed_range_ok(d, end, k))
			return ED_E_RANGE;
		if ((err = ed_fm_claim_check(d, end, k)) != 0 || (err = ed_unw_prepare(d, end, k)) != 0)
			return err;
		ed_fm_claim(d, end, k);
		ed_unw_mark(d, end, k);
		h->nsectors += k;
	} else {
		if (k >= h->nsectors)
			return ED_E_RANGE;     /* the header sector always stays */
		if ((err = drop_range(ed, d, e->sector + h->nsectors - k, k)) != 0)
			return err;
		h->nsectors -= k;
	}
	ed_ent_changed(ed, e, c);
	return 0;
}

int64_t ed_op_extent(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a)
{
	if (a->prot == NULL)
		return ED_E_ARG;
	if (op == ED_OP_EXTENT_ALLOCATE)
		return extent_allocate(ed, c, a);
	return extent_change(ed, c, op, a);
}

/* ---- reading blocks in ------------------------------------------------------------ */

static void readin_done(struct blkreq *r)
{
	struct ed_entry *e = r->priv;
	struct exodisk *ed = e->ed;
	ed_lock(ed);
	struct ed_disk *d = ed->disk[e->unit];
	int status = r->status;
	/* The binding cannot have changed while the block was being read: only
	 * a write-back of this very entry changes it. */
	uint64_t stamp = e->read_stamp;
	if (status == 0) {
		if (e->kind == ED_KIND_EXTENT) {
			status = ed_ext_decode(&ed->keys, d->sb.uuid, e->sector, (struct ed_exthdr *)e->com,
			                       stamp, ed_ext(e));
			/* The rest of the sector is application data; keep it so home
			 * writes of the header carry it unchanged. */
			ed_memcpy(e->cur + ED_EXT_HDR_BYTES, e->com + ED_EXT_HDR_BYTES,
			          ED_SECTOR - ED_EXT_HDR_BYTES);
		} else {
			status = ed_xnblk_decode(&ed->keys, d->sb.uuid, e->sector, e->com, e->nsect,
			                         stamp, e->cur);
		}
	}
	struct ed_io *w = e->waiters;
	e->waiters = NULL;
	e->flags &= ~EF_READING;
	if (status == 0) {
		e->flags |= EF_VALID;
		e->com_stamp = e->home_stamp = stamp;
		if (ed->nmaps_live > 0 && e->kind == ED_KIND_XNBLK)
			ed_map_sync(ed, e, ED_XNMAP_LIVE);
	} else {
		ed_cache_evict(ed, e);
	}
	while (w != NULL) {
		struct ed_io *next = w->next;
		ed_io_finish(ed, w, status);
		w = next;
	}
	ed_unlock(ed);
}

int64_t ed_op_readin(struct exodisk *ed, struct ed_client *c, struct ed_args *a, uint8_t kind)
{
	const struct ed_protector *prot = a->prot;
	int err;
	if (prot == NULL)
		return ED_E_ARG;
	uint8_t pk = kind == ED_KIND_EXTENT ? ED_PK_EXTENT : ED_PK_EXONODE;
	if (prot->kind != pk)
		return prot->kind == ED_PK_PROXY ? ED_E_PROXY : ED_E_ARG;
	struct ed_disk *d = ed_disk_get(ed, prot->unit, &err);
	if (d == NULL)
		return err;
	if (prot->blkno >= d->nsectors)
		return ED_E_RANGE;
	struct ed_entry *e = ed_cache_lookup(ed, prot->unit, prot->blkno);
	if (e != NULL) {
		/* Already cached (or on its way): share the one copy. */
		if (e->kind != kind)
			return ED_E_KIND;
		if ((err = ed_cache_hold(ed, e, c)) != 0)
			return err;
		ed_cache_touch(ed, e);
		if (!(e->flags & EF_READING)) {
			ed_post_now(ed, a, 0);
			return 0;
		}
		struct ed_io *io = ed_io_alloc(ed, c, IO_READIN, &err);
		if (io == NULL)
			return err;
		io->ent = e;
		io->next = e->waiters;
		e->waiters = io;
		ed_io_start(ed, io, a);
		return 0;
	}
	struct ed_vtrec bind, *v = &bind;
	if ((err = ed_bt_get(d, prot->blkno, v)) != 0)
		return err;
	if (v->kind != kind)
		return ED_E_KIND;
	struct ed_io *io = ed_io_alloc(ed, c, IO_READIN, &err);
	if (io == NULL)
		return err;
	e = ed_cache_alloc(ed, c, prot->unit, prot->blkno, kind, v->nsect, &err);
	if (e == NULL) {
		ed_io_abort(ed, io);
		return err;
	}
	e->flags = EF_READING;
	e->read_stamp = v->stamp;
	e->waiters = io;
	io->ent = e;
	ed_io_start(ed, io, a);
	e->seg = (struct blk_seg){ (uint64_t)(uintptr_t)e->com, v->nsect * ED_SECTOR };
	struct blkreq *r = &e->req;
	ed_memset(r, 0, sizeof(*r));
	r->op = BLK_READ;
	r->unit = prot->unit;
	r->sector = prot->blkno;
	r->nsectors = v->nsect;
	r->seg = &e->seg;
	r->nseg = 1;
	r->done = readin_done;
	r->priv = e;
	if ((err = blk_submit(r)) != 0) {
		r->status = err;
		readin_done(r);
	}
	return 0;
}

/* ---- writing blocks back ------------------------------------------------------------ */

/* Write-back needs the write capability of the object prot names.  A block
 * whose exonodes are all deallocated protects nothing any more, so writing
 * it back (which only finishes the deallocation) needs none. */
static int writeback_access(struct exodisk *ed, struct ed_entry *e, const struct ed_protector *prot)
{
	if (e->kind == ED_KIND_EXTENT)
		return ed_cap_equal(&prot->wc, &ed_ext(e)->wc) ? 0 : ED_E_CAP;
	if (e->flags & EF_DEALLOC)
		return 0;
	struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
	if (prot->xn_num >= ed_xn_nslots(b->nsect, b->slot_bytes))
		return ED_E_SLOT;
	struct ed_xnhdr *x = ed_xn_slot(e->cur, prot->xn_num);
	if (x->state == ED_SLOT_DEAD)      /* its deallocation is what is pending */
		return ed_cap_equal(&prot->wc, &x->wc) ? 0 : ED_E_CAP;
	if (x->state != ED_SLOT_LIVE)
		return ED_E_SLOT;
	return ed_xn_access(ed, e, prot->xn_num, &prot->wc, true);
}

int64_t ed_op_writeback(struct exodisk *ed, struct ed_client *c, struct ed_args *a, uint8_t kind)
{
	const struct ed_protector *prot = a->prot;
	int err;
	if (prot == NULL)
		return ED_E_ARG;
	uint8_t pk = kind == ED_KIND_EXTENT ? ED_PK_EXTENT : ED_PK_EXONODE;
	if (prot->kind != pk)
		return prot->kind == ED_PK_PROXY ? ED_E_PROXY : ED_E_ARG;
	struct ed_disk *d = ed_disk_get(ed, prot->unit, &err);
	if (d == NULL)
		return err;
	struct ed_entry *e = ed_cache_lookup(ed, prot->unit, prot->blkno);
	if (e == NULL) {
		if (prot->blkno >= d->nsectors)
			return ED_E_RANGE;
		struct ed_vtrec v;
		return (err = ed_bt_get(d, prot->blkno, &v)) == 0 ? ED_E_NOTCACHED : err;
	}
	if (e->kind != kind)
		return ED_E_KIND;
	if (e->flags & (EF_READING | EF_WRITING) || !(e->flags & EF_VALID))
		return ED_E_BUSY;
	if ((err = writeback_access(ed, e, prot)) != 0)
		return err;
	if (!(e->flags & EF_DIRTY))
		return ED_E_CLEAN;
	struct ed_io *io = ed_io_alloc(ed, c, IO_COMMIT, &err);
	if (io == NULL)
		return err;
	io->ent = e;
	io->unit = e->unit;
	e->flags |= EF_WRITING;
	if (e->nmaps > 0)
		ed_map_sync(ed, e, ED_XNMAP_LIVE);
	ed_io_start(ed, io, a);
	ed_commit_queue(ed, d, io);
	return 0;
}
