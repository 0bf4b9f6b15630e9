/*
 * xnops.c - exonode operations (thesis Table 3.2): allocate and deallocate
 * exonodes, add extents, descendant exonodes and application data, read
 * data, remove entries (one, or a range of extents), combine and split
 * entries, and discover a descendant's capabilities.
 *
 * Exonodes of one length are packed into a block of 1..4 sectors; the first
 * allocation in a free sector creates the block, later ones fill its free
 * slots.  A deallocated exonode's slot stays DEAD (unusable) until the
 * block's next write-back is durable, so no new exonode can take the place
 * of one that a crash could bring back.  A descendant exonode records its
 * parent's block and slot and the parent records the child's block, slot
 * and birth id; access through ancestors checks both directions (objects.c).
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

/* Allocate one exonode at (sector, slot), creating its block if the sector
 * is free.  parent is 0 for a root exonode.  On success *ep and *birth tell
 * where it is. */
static int xn_alloc(struct exodisk *ed, struct ed_client *c, struct ed_disk *d, uint64_t sector,
                    uint32_t slot, uint64_t length, const struct ed_cap *rc,
                    const struct ed_cap *wc, uint64_t parent, uint16_t parent_slot,
                    struct ed_entry **ep, uint64_t *birth)
{
	int err;
	if (length % ED_XN_ALIGN != 0)
		return ED_E_ALIGN;
	if (length < ED_XN_HDR_BYTES || length > ED_XN_MAX_BYTES)
		return ED_E_XNSIZE;
	struct ed_entry *e = ed_cache_lookup(ed, d->unit, sector);
	if (e != NULL) {
		if (e->kind != ED_KIND_XNBLK)
			return ED_E_ALLOCATED;
		if ((err = ed_ent_modifiable(e)) != 0)
			return err;
		struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
		if (b->slot_bytes != length)
			return ED_E_XNSIZE;
		if (slot >= ed_xn_nslots(b->nsect, b->slot_bytes))
			return ED_E_SLOT;
		if (ed_xn_slot(e->cur, slot)->state != ED_SLOT_FREE)
			return ED_E_SLOT;
	} else {
		uint32_t nsect = ed_xn_nsect_for(length);
		if (!ed_range_ok(d, sector, nsect))
			return ED_E_RANGE;
		if (slot >= ed_xn_nslots(nsect, (uint32_t)length))
			return ED_E_SLOT;
		if (ed_fm_any(d, sector, nsect) || ed_cache_lookup_cover(ed, d->unit, sector)) {
			struct ed_vtrec v;
			err = ed_bt_get(d, sector, &v);
			if (err == ED_E_WAIT)
				return err;
			return err == 0 && v.kind == ED_KIND_XNBLK ? ED_E_NOTCACHED : ED_E_ALLOCATED;
		}
		if ((err = ed_fm_claim_check(d, sector, nsect)) != 0)
			return err;
		e = ed_cache_alloc(ed, c, d->unit, sector, ED_KIND_XNBLK, (uint8_t)nsect, &err);
		if (e == NULL)
			return err;
		struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
		b->magic = ED_XNBLK_MAGIC;
		b->fmt = ED_FMT;
		b->nsect = (uint8_t)nsect;
		b->slot_bytes = (uint16_t)length;
		e->flags = EF_VALID;
		ed_fm_claim(d, sector, nsect);
	}
	struct ed_xnhdr *x = ed_xn_slot(e->cur, slot);
	ed_memset(x, 0, length);
	x->state = ED_SLOT_LIVE;
	x->birth = ed_new_stamp(d, &ed->keys);
	x->parent = parent;
	x->parent_slot = parent_slot;
	x->rc = *rc;
	x->wc = *wc;
	ed_ent_changed(ed, e, c);
	*ep = e;
	*birth = x->birth;
	return 0;
}

/* Does any block slot still hold a live exonode? */
static bool block_live(struct ed_entry *e)
{
	struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
	uint32_t n = ed_xn_nslots(b->nsect, b->slot_bytes);
	for (uint32_t i = 0; i < n; i++)
		if (ed_xn_slot(e->cur, i)->state == ED_SLOT_LIVE)
			return true;
	return false;
}

/* Was this exonode (same slot, same birth) in the committed image? */
static bool slot_committed(struct ed_entry *e, uint32_t slot, uint64_t birth)
{
	if (e->com_stamp == 0)
		return false;
	struct ed_xnhdr *cx = ed_xn_slot(e->com, slot);
	return cx->state == ED_SLOT_LIVE && cx->birth == birth;
}

/* Free the exonode in (e, slot): its extents go back to the free map (at
 * once if they never were durable), the slot becomes DEAD or FREE, and an
 * empty block is deallocated. */
static int xn_can_free(struct exodisk *ed, struct ed_entry *e, uint32_t slot)
{
	struct ed_xnhdr *x = ed_xn_slot(e->cur, slot);
	if (ed_xn_count(x, ED_ENT_EXONODE) != 0)
		return ED_E_NOTEMPTY;
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r))
		if (r->type == ED_ENT_EXTENT && ed_io_busy_range(ed, e->unit, ed_xnrec_u64(r, 0), r->a))
			return ED_E_IOBUSY;
	return 0;
}

static int xn_free(struct exodisk *ed, struct ed_client *c, struct ed_entry *e, uint32_t slot)
{
	struct ed_disk *d = ed->disk[e->unit];
	struct ed_xnhdr *x = ed_xn_slot(e->cur, slot);
	int err = xn_can_free(ed, e, slot);
	if (err != 0)
		return err;
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r))
		if (r->type == ED_ENT_EXTENT)
			ed_fm_release_uncommitted(d, ed_xnrec_u64(r, 0), r->a);
	struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
	if (slot_committed(e, slot, x->birth)) {
		/* Keep the capabilities: a write-back may name this slot. */
		ed_memset(ed_xn_entries(x), 0, ed_xn_area(b->slot_bytes));
		x->used = 0;
		x->state = ED_SLOT_DEAD;
	} else {
		ed_memset(x, 0, b->slot_bytes);
	}
	if (!block_live(e)) {
		if (e->com_stamp == 0) {
			ed_ent_discard(ed, e);
			return 0;
		}
		e->flags |= EF_DEALLOC;
	}
	ed_ent_changed(ed, e, c);
	return 0;
}

/* Remove the parent's entry for the child (e, slot), if the parent is here
 * to change; otherwise its entry stays and simply never matches again. */
static void unlink_parent(struct exodisk *ed, struct ed_client *c, struct ed_entry *e, uint32_t slot)
{
	struct ed_xnhdr *x = ed_xn_slot(e->cur, slot);
	if (x->parent == 0)
		return;
	struct ed_entry *pe = ed_cache_lookup(ed, e->unit, x->parent);
	if (pe == NULL || pe->kind != ED_KIND_XNBLK || ed_ent_modifiable(pe) != 0)
		return;
	struct ed_xnblk *pb = (struct ed_xnblk *)pe->cur;
	if (x->parent_slot >= ed_xn_nslots(pb->nsect, pb->slot_bytes))
		return;
	struct ed_xnhdr *px = ed_xn_slot(pe->cur, x->parent_slot);
	if (px->state != ED_SLOT_LIVE)
		return;
	for (struct ed_xnrec *r = ed_xn_first(px); r != NULL; r = ed_xn_next(px, r)) {
		if (r->type == ED_ENT_EXONODE && r->a == slot && ed_xnrec_u64(r, 0) == e->sector &&
		    ed_xnrec_u64(r, 1) == x->birth) {
			ed_xn_remove(px, r);
			ed_ent_changed(ed, pe, c);
			return;
		}
	}
}

/* Entry number to use: the one asked for, or for -1 the lowest free one.
 * Any other negative number is out of range, not a request for a free one. */
static int pick_idx(struct ed_xnhdr *x, int64_t want)
{
	if (want == -1)
		return ed_xn_free_idx(x);
	return want >= 0 && want < ED_XN_MAX_ENTRIES ? (int)want : -1;
}

static int64_t add_extent(struct exodisk *ed, struct ed_client *c, struct ed_obj *o,
                          struct ed_args *a)
{
	struct ed_disk *d = ed->disk[o->e->unit];
	uint64_t start = a->stuff->one, bytes = a->stuff->two;
	if (bytes == 0)
		return ED_E_ARG;
	if (bytes % ED_SECTOR != 0)
		return ED_E_ALIGN;
	uint64_t n = bytes / ED_SECTOR;
	if (n > UINT32_MAX || n > d->nsectors)
		return ED_E_TOOBIG;
	if (!ed_range_ok(d, start, n))
		return ED_E_RANGE;
	int idx = pick_idx(o->x, a->prot->xn_entry);
	if (idx < 0)
		return ED_E_ENTRY;
	if (ed_xn_find(o->x, idx) != NULL)
		return ED_E_ENTRY;
	if (ED_XN_EXTENT_BYTES > ed_xn_area(((struct ed_xnblk *)o->e->cur)->slot_bytes) - o->x->used)
		return ED_E_XNFULL;
	int err;
	if ((err = ed_fm_claim_check(d, start, n)) != 0 || (err = ed_unw_prepare(d, start, n)) != 0)
		return err;
	uint8_t pay[8];
	ed_store64(pay, start);
	if (!ed_xn_insert(o->x, ((struct ed_xnblk *)o->e->cur)->slot_bytes, idx, ED_ENT_EXTENT,
	                  (uint32_t)n, pay, 8, &err))
		return err;
	ed_fm_claim(d, start, n);
	ed_unw_mark(d, start, n);            /* until written, they read as zeros */
	ed_ent_changed(ed, o->e, c);
	return idx;
}

static int64_t add_exonode(struct exodisk *ed, struct ed_client *c, struct ed_obj *o,
                           struct ed_args *a)
{
	struct ed_disk *d = ed->disk[o->e->unit];
	const struct ed_operation *st = a->stuff;
	uint32_t slot_bytes = ((struct ed_xnblk *)o->e->cur)->slot_bytes;
	if (st->two > 0xffff)
		return ED_E_SLOT;
	int idx = pick_idx(o->x, a->prot->xn_entry);
	if (idx < 0 || ed_xn_find(o->x, idx) != NULL)
		return ED_E_ENTRY;
	if (ED_XN_CHILD_BYTES > ed_xn_area(slot_bytes) - o->x->used)
		return ED_E_XNFULL;
	/* Keep the parent in the cache while the child's block may need room. */
	struct ed_entry *pe = o->e, *ce;
	uint64_t birth;
	pe->flags |= EF_PIN;
	int err = xn_alloc(ed, c, d, st->one, (uint32_t)st->two, st->three, &st->rc, &st->wc,
	                   pe->sector, o->slot, &ce, &birth);
	pe->flags &= ~EF_PIN;
	if (err != 0)
		return err;
	uint8_t pay[16];
	ed_store64(pay, st->one);
	ed_store64(pay + 8, birth);
	struct ed_xnhdr *px = ed_xn_slot(pe->cur, o->slot);
	if (!ed_xn_insert(px, slot_bytes, idx, ED_ENT_EXONODE, (uint32_t)st->two, pay, 16, &err))
		return err;           /* cannot happen: room and number were checked */
	ed_ent_changed(ed, pe, c);
	return idx;
}

static int64_t add_data(struct exodisk *ed, struct ed_client *c, struct ed_obj *o,
                        struct ed_args *a)
{
	uint64_t len = a->stuff->one;
	uint32_t slot_bytes = ((struct ed_xnblk *)o->e->cur)->slot_bytes;
	if (len % ED_XN_ALIGN != 0)
		return ED_E_ALIGN;
	if (len > ed_xn_area(slot_bytes))
		return ED_E_TOOBIG;
	if (len > 0 && (a->data == NULL || a->datalen < len))
		return ED_E_ARG;
	int idx = pick_idx(o->x, a->prot->xn_entry);
	if (idx < 0)
		return ED_E_ENTRY;
	int err;
	struct ed_xnrec *r = ed_xn_find(o->x, idx);
	if (r != NULL) {
		if (r->type != ED_ENT_DATA)
			return ED_E_ENTTYPE;
		if ((err = ed_xn_set_data(o->x, slot_bytes, r, a->data, (uint32_t)len)) != 0)
			return err;
	} else if (!ed_xn_insert(o->x, slot_bytes, idx, ED_ENT_DATA, (uint32_t)len, a->data,
	                         (uint32_t)len, &err)) {
		return err;
	}
	ed_ent_changed(ed, o->e, c);
	return idx;
}

static int64_t read_data(struct exodisk *ed, struct ed_obj *o, struct ed_args *a)
{
	struct ed_xnrec *r = a->prot->xn_entry >= 0 ? ed_xn_find(o->x, a->prot->xn_entry) : NULL;
	if (r == NULL)
		return ED_E_ENTRY;
	if (r->type != ED_ENT_DATA)
		return ED_E_ENTTYPE;
	uint64_t len = a->stuff->one;
	if (len > a->datalen || (len > 0 && a->data == NULL))
		return ED_E_ARG;
	uint32_t n = (uint32_t)ED_MIN(len, r->a);
	ed_memcpy(a->data, ed_xnrec_data(r), n);
	a->stuff->two = r->a;          /* output: the entry's full length */
	return n;
}

/* A descendant entry's child, if it is cached and still the same exonode. */
static int child_of(struct exodisk *ed, struct ed_entry *pe, struct ed_xnrec *r,
                    struct ed_entry **cep, struct ed_xnhdr **cxp)
{
	struct ed_entry *ce = ed_cache_lookup(ed, pe->unit, ed_xnrec_u64(r, 0));
	if (ce == NULL)
		return ED_E_NOTCACHED;
	if (ce->kind != ED_KIND_XNBLK || !(ce->flags & EF_VALID))
		return ce->kind != ED_KIND_XNBLK ? ED_E_STALEREF : ED_E_BUSY;
	struct ed_xnblk *cb = (struct ed_xnblk *)ce->cur;
	if (r->a >= ed_xn_nslots(cb->nsect, cb->slot_bytes))
		return ED_E_STALEREF;
	struct ed_xnhdr *cx = ed_xn_slot(ce->cur, r->a);
	if (cx->state != ED_SLOT_LIVE || cx->birth != ed_xnrec_u64(r, 1))
		return ED_E_STALEREF;
	*cep = ce;
	*cxp = cx;
	return 0;
}

static int64_t remove_entry(struct exodisk *ed, struct ed_client *c, struct ed_obj *o,
                            struct ed_args *a)
{
	struct ed_disk *d = ed->disk[o->e->unit];
	struct ed_xnrec *r = a->prot->xn_entry >= 0 ? ed_xn_find(o->x, a->prot->xn_entry) : NULL;
	if (r == NULL)
		return ED_E_ENTRY;
	int err;
	if (r->type == ED_ENT_EXTENT) {
		uint64_t start = ed_xnrec_u64(r, 0);
		if (ed_io_busy_range(ed, d->unit, start, r->a))
			return ED_E_IOBUSY;
		ed_fm_release_uncommitted(d, start, r->a);
	} else if (r->type == ED_ENT_EXONODE) {
		/* Removing a descendant entry deallocates the descendant, which must
		 * hold no extents or exonodes of its own. */
		struct ed_entry *ce;
		struct ed_xnhdr *cx;
		err = child_of(ed, o->e, r, &ce, &cx);
		if (err == 0) {
			if (ed_xn_count(cx, ED_ENT_EXTENT) + ed_xn_count(cx, ED_ENT_EXONODE) != 0)
				return ED_E_NOTEMPTY;
			if ((err = ed_ent_modifiable(ce)) != 0)
				return err;
			uint32_t cslot = r->a;
			o->e->flags |= EF_PIN;
			err = xn_free(ed, c, ce, cslot);
			o->e->flags &= ~EF_PIN;
			if (err != 0)
				return err;
		} else if (err != ED_E_STALEREF) {
			return err;
		}
		/* The child may have shared the parent's block: find r again. */
		r = ed_xn_find(o->x, a->prot->xn_entry);
		if (r == NULL)
			return ED_E_ENTRY;
	}
	ed_xn_remove(o->x, r);
	ed_ent_changed(ed, o->e, c);
	return 0;
}

/* ED_OP_EXONODE_REMOVE_RANGE: remove every entry numbered xn_entry ..
 * xn_entry + stuff->one - 1 (absent numbers are skipped), each of which
 * must be an extent: one call where an application giving back many
 * extents at once (a virtual volume's freed chunks, a file cut short)
 * would otherwise make one REMOVE_ENTRY each.  As for REMOVE_ENTRY, the
 * sectors go back to the free map only when the exonode's write-back is
 * durable.  All or nothing: a descendant or data entry in the range, or an
 * extent with I/O in flight, and nothing is removed.  Returns how many
 * entries went.  The entries of a range lie in a row (entries are kept in
 * number order), so they go with one move of the rest. */
static int64_t remove_range(struct exodisk *ed, struct ed_client *c, struct ed_obj *o,
                            struct ed_args *a)
{
	struct ed_disk *d = ed->disk[o->e->unit];
	int64_t first = a->prot->xn_entry;
	uint64_t n = a->stuff->one;
	if (first < 0 || n == 0 || n > ED_XN_MAX_ENTRIES || (uint64_t)first + n > ED_XN_MAX_ENTRIES)
		return ED_E_ENTRY;
	struct ed_xnrec *lo = NULL;
	uint32_t count = 0;
	for (struct ed_xnrec *r = ed_xn_first(o->x); r != NULL; r = ed_xn_next(o->x, r)) {
		if (r->idx < first)
			continue;
		if ((uint64_t)r->idx >= (uint64_t)first + n)
			break;
		if (r->type != ED_ENT_EXTENT)
			return ED_E_ENTTYPE;
		if (ed_io_busy_range(ed, d->unit, ed_xnrec_u64(r, 0), r->a))
			return ED_E_IOBUSY;
		if (lo == NULL)
			lo = r;
		count++;
	}
	if (count == 0)
		return 0;
	/* Sectors never committed go back now, as for REMOVE_ENTRY - merged
	 * into runs first, so the free map's leaves are tidied once a run
	 * rather than once an extent (a volume's chunks lie side by side). */
	struct ed_rl *rl = ed_rl_get(ed);
	struct ed_xnrec *r = lo;
	for (uint32_t i = 0; i < count; i++, r = ed_xn_next(o->x, r)) {
		if (rl != NULL)
			ed_rl_add(rl, ed_xnrec_u64(r, 0), r->a);
		if (rl == NULL || rl->overflow)
			ed_fm_release_uncommitted(d, ed_xnrec_u64(r, 0), r->a);
	}
	if (rl != NULL) {
		/* (What did not fit in the list went one by one above.) */
		ed_rl_norm(rl);
		for (uint32_t i = 0; i < rl->n; i++)
			ed_fm_release_uncommitted(d, rl->r[i].start, rl->r[i].nsectors);
		ed_rl_put(ed, rl);
	}
	ed_xn_remove_span(o->x, lo, count * ED_XN_EXTENT_BYTES);
	ed_ent_changed(ed, o->e, c);
	return count;
}

static int64_t combine(struct exodisk *ed, struct ed_client *c, struct ed_obj *o,
                       struct ed_args *a)
{
	int i1 = a->prot->xn_entry;
	int64_t i2 = (int64_t)a->stuff->one;
	if (i1 < 0 || i2 < 0 || i2 >= ED_XN_MAX_ENTRIES || i1 == i2)
		return ED_E_ENTRY;
	struct ed_xnrec *r1 = ed_xn_find(o->x, i1), *r2 = ed_xn_find(o->x, (int)i2);
	if (r1 == NULL || r2 == NULL)
		return ED_E_ENTRY;
	if (r1->type != ED_ENT_EXTENT || r2->type != ED_ENT_EXTENT)
		return ED_E_ENTTYPE;
	uint64_t s1 = ed_xnrec_u64(r1, 0), s2 = ed_xnrec_u64(r2, 0);
	uint64_t n = (uint64_t)r1->a + r2->a;
	if (n > UINT32_MAX)
		return ED_E_TOOBIG;
	uint64_t start;
	if (s1 + r1->a == s2)
		start = s1;
	else if (s2 + r2->a == s1)
		start = s2;
	else
		return ED_E_RANGE;     /* not adjacent on disk */
	ed_xn_remove(o->x, r2);
	r1 = ed_xn_find(o->x, i1);
	ed_xnrec_set_u64(r1, 0, start);
	r1->a = (uint32_t)n;
	ed_ent_changed(ed, o->e, c);
	return 0;
}

static int64_t split(struct exodisk *ed, struct ed_client *c, struct ed_obj *o,
                     struct ed_args *a)
{
	int i1 = a->prot->xn_entry;
	struct ed_xnrec *r = i1 >= 0 ? ed_xn_find(o->x, i1) : NULL;
	if (r == NULL)
		return ED_E_ENTRY;
	if (r->type != ED_ENT_EXTENT)
		return ED_E_ENTTYPE;
	uint64_t off = a->stuff->one;
	if (off % ED_SECTOR != 0)
		return ED_E_ALIGN;
	uint64_t k = off / ED_SECTOR;
	if (k == 0 || k >= r->a)
		return ED_E_RANGE;
	int i2 = pick_idx(o->x, (int64_t)a->stuff->two);
	if (i2 < 0 || ed_xn_find(o->x, i2) != NULL)
		return ED_E_ENTRY;
	uint32_t slot_bytes = ((struct ed_xnblk *)o->e->cur)->slot_bytes;
	if (ED_XN_EXTENT_BYTES > ed_xn_area(slot_bytes) - o->x->used)
		return ED_E_XNFULL;
	uint64_t start = ed_xnrec_u64(r, 0);
	uint32_t rest = r->a - (uint32_t)k;
	r->a = (uint32_t)k;
	uint8_t pay[8];
	ed_store64(pay, start + k);
	int err;
	if (!ed_xn_insert(o->x, slot_bytes, i2, ED_ENT_EXTENT, rest, pay, 8, &err))
		return err;
	ed_ent_changed(ed, o->e, c);
	return i2;
}

static int64_t cap_discover(struct exodisk *ed, struct ed_obj *o, struct ed_args *a)
{
	/* The rights first: without them every entry - missing, data, extent
	 * or exonode - gets the same answer, so nothing about the exonode's
	 * contents leaks to a caller holding no capability. */
	bool rd = ed_obj_access(ed, o, a->prot, false) == 0;
	bool wr = ed_obj_access(ed, o, a->prot, true) == 0;
	if (!rd && !wr)
		return ed_obj_access(ed, o, a->prot, false);
	struct ed_xnrec *r = a->prot->xn_entry >= 0 ? ed_xn_find(o->x, a->prot->xn_entry) : NULL;
	if (r == NULL)
		return ED_E_ENTRY;
	if (r->type != ED_ENT_EXONODE)
		return ED_E_ENTTYPE;
	struct ed_entry *ce;
	struct ed_xnhdr *cx;
	int err = child_of(ed, o->e, r, &ce, &cx);
	if (err != 0)
		return err;
	/* The same rights the ancestor's capability gives, and no more. */
	ed_memset(&a->stuff->rc, 0, sizeof(a->stuff->rc));
	ed_memset(&a->stuff->wc, 0, sizeof(a->stuff->wc));
	if (rd)
		a->stuff->rc = cx->rc;
	if (wr)
		a->stuff->wc = cx->wc;
	return (rd ? 1 : 0) | (wr ? 2 : 0);
}

int64_t ed_op_exonode(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a)
{
	const struct ed_protector *prot = a->prot;
	int err;
	if (prot == NULL)
		return ED_E_ARG;
	if (op == ED_OP_EXONODE_ALLOCATE) {
		if (prot->kind != ED_PK_EXONODE || prot->pad[0] | prot->pad[1] | prot->pad[2] | prot->pad2)
			return ED_E_ARG;
		struct ed_disk *d = ed_disk_get(ed, prot->unit, &err);
		if (d == NULL)
			return err;
		struct ed_entry *e;
		uint64_t birth;
		return xn_alloc(ed, c, d, prot->blkno, prot->xn_num, prot->length, &prot->rc,
		                &prot->wc, 0, 0, &e, &birth);
	}
	if (op == ED_OP_EXONODE_MAP)
		return ed_op_map(ed, c, a);
	if (op == ED_OP_EXONODE_PROXY)
		return ed_op_proxy(ed, c, a);

	struct ed_obj o;
	if ((err = ed_obj_find(ed, prot, &o)) != 0)
		return err;
	if (o.kind == ED_PK_PROXY)
		return ed_proxy_op(ed, c, op, a, o.p);
	if (o.kind != ED_PK_EXONODE)
		return ED_E_KIND;
	bool needs_stuff = op == ED_OP_EXONODE_ADD_EXTENT || op == ED_OP_EXONODE_ADD_EXONODE ||
	                   op == ED_OP_EXONODE_ADD_DATA || op == ED_OP_EXONODE_READ_DATA ||
	                   op == ED_OP_EXONODE_COMBINE || op == ED_OP_EXONODE_SPLIT ||
	                   op == ED_OP_EXONODE_REMOVE_RANGE ||
	                   op == ED_OP_EXONODE_CAP_DISCOVER;
	if (needs_stuff && a->stuff == NULL)
		return ED_E_ARG;
	if (op == ED_OP_EXONODE_CAP_DISCOVER)
		return cap_discover(ed, &o, a);
	if (op == ED_OP_EXONODE_READ_DATA) {
		if ((err = ed_obj_access(ed, &o, prot, false)) != 0)
			return err;
		return read_data(ed, &o, a);
	}
	/* Everything else changes the exonode: write capability, and an entry
	 * that is neither being read in nor written back. */
	if ((err = ed_obj_access(ed, &o, prot, true)) != 0 || (err = ed_ent_modifiable(o.e)) != 0)
		return err;
	switch (op) {
	case ED_OP_EXONODE_DEALLOCATE: {
		/* Check first: the parent must not lose its entry if this fails. */
		if ((err = xn_can_free(ed, o.e, o.slot)) != 0)
			return err;
		o.e->flags |= EF_PIN;
		unlink_parent(ed, c, o.e, o.slot);
		o.e->flags &= ~EF_PIN;
		return xn_free(ed, c, o.e, o.slot);
	}
	case ED_OP_EXONODE_ADD_EXTENT:  return add_extent(ed, c, &o, a);
	case ED_OP_EXONODE_ADD_EXONODE: return add_exonode(ed, c, &o, a);
	case ED_OP_EXONODE_ADD_DATA:    return add_data(ed, c, &o, a);
	case ED_OP_EXONODE_REMOVE_ENTRY: return remove_entry(ed, c, &o, a);
	case ED_OP_EXONODE_REMOVE_RANGE: return remove_range(ed, c, &o, a);
	case ED_OP_EXONODE_COMBINE:     return combine(ed, c, &o, a);
	case ED_OP_EXONODE_SPLIT:       return split(ed, c, &o, a);
	default:                        return ED_E_OP;
	}
}
