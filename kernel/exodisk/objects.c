/*
 * objects.c - turning a struct ed_protector into the object it names, and
 * deciding whether the presented capability grants access.
 *
 * An extent is named by its header sector; an exonode by its block's sector
 * and slot; a proxy by its id.  Extents and exonodes must be in the cache
 * (applications read them in themselves).  A capability grants access to
 * the object whose capability it is and, for exonodes, to every descendant
 * reachable from it: the check walks the back-pointers from the named
 * exonode up towards the root, confirming at each step that the parent
 * really lists the child (same block, slot and birth id), so neither a stale
 * back-pointer nor a reused slot can lend anyone an ancestor's rights.
 * Nothing here ever grants rights upwards.
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

int ed_obj_find(struct exodisk *ed, const struct ed_protector *prot, struct ed_obj *o)
{
	int err;
	ed_memset(o, 0, sizeof(*o));
	if (prot == NULL)
		return ED_E_ARG;
	if (prot->pad[0] | prot->pad[1] | prot->pad[2] | prot->pad2)
		return ED_E_ARG;
	struct ed_disk *d = ed_disk_get(ed, prot->unit, &err);
	if (d == NULL)
		return err;
	o->kind = prot->kind;
	if (prot->kind == ED_PK_PROXY)
		return ed_proxy_find(ed, prot, &o->p);
	if (prot->kind != ED_PK_EXTENT && prot->kind != ED_PK_EXONODE)
		return ED_E_ARG;
	uint8_t want = prot->kind == ED_PK_EXTENT ? ED_KIND_EXTENT : ED_KIND_XNBLK;
	struct ed_entry *e = ed_cache_lookup(ed, prot->unit, prot->blkno);
	if (e == NULL) {
		if (prot->blkno >= d->nsectors)
			return ED_E_RANGE;
		int err = ed_bt_get(d, prot->blkno, &o->bind);
		if (err != 0)
			return err;         /* ED_E_NOTBOUND, ED_E_WAIT, or what the tree page said */
		return o->bind.kind == want ? ED_E_NOTCACHED : ED_E_KIND;
	}
	if (e->kind != want)
		return ED_E_KIND;
	if (!(e->flags & EF_VALID))
		return ED_E_BUSY;
	o->e = e;
	if (want == ED_KIND_XNBLK) {
		struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
		if (prot->xn_num >= ed_xn_nslots(b->nsect, b->slot_bytes))
			return ED_E_SLOT;
		o->slot = prot->xn_num;
		o->x = ed_xn_slot(e->cur, o->slot);
		if (o->x->state == ED_SLOT_DEAD)
			return ED_E_DEALLOC;
		if (o->x->state != ED_SLOT_LIVE)
			return ED_E_SLOT;
	}
	return 0;
}

/* Does the exonode at (e, slot) list the child (sector, slot, birth)? */
static bool lists_child(struct ed_xnhdr *p, uint64_t sector, uint16_t slot, uint64_t birth)
{
	for (struct ed_xnrec *r = ed_xn_first(p); r != NULL; r = ed_xn_next(p, r))
		if (r->type == ED_ENT_EXONODE && r->a == slot && ed_xnrec_u64(r, 0) == sector &&
		    ed_xnrec_u64(r, 1) == birth)
			return true;
	return false;
}

int ed_xn_access(struct exodisk *ed, struct ed_entry *e, uint16_t slot, const struct ed_cap *cap,
                 bool write)
{
	struct ed_xnhdr *x = ed_xn_slot(e->cur, slot);
	for (int depth = 0; ; depth++) {
		if (ed_cap_equal(cap, write ? &x->wc : &x->rc))
			return 0;
		if (x->parent == 0)
			return ED_E_CAP;
		if (depth == ED_MAX_DEPTH)
			return ED_E_DEPTH;
		struct ed_entry *pe = ed_cache_lookup(ed, e->unit, x->parent);
		if (pe == NULL || pe->kind != ED_KIND_XNBLK || !(pe->flags & EF_VALID))
			return ED_E_NOTCACHED;
		struct ed_xnblk *pb = (struct ed_xnblk *)pe->cur;
		if (x->parent_slot >= ed_xn_nslots(pb->nsect, pb->slot_bytes))
			return ED_E_CAP;
		struct ed_xnhdr *px = ed_xn_slot(pe->cur, x->parent_slot);
		if (px->state != ED_SLOT_LIVE || !lists_child(px, e->sector, slot, x->birth))
			return ED_E_CAP;
		e = pe;
		slot = x->parent_slot;
		x = px;
	}
}

int ed_obj_access(struct exodisk *ed, const struct ed_obj *o, const struct ed_protector *prot,
                  bool write)
{
	const struct ed_cap *cap = write ? &prot->wc : &prot->rc;
	switch (o->kind) {
	case ED_PK_EXTENT: {
		const struct ed_exthdr *h = ed_ext(o->e);
		return ed_cap_equal(cap, write ? &h->wc : &h->rc) ? 0 : ED_E_CAP;
	}
	case ED_PK_EXONODE:
		return ed_xn_access(ed, o->e, o->slot, cap, write);
	default: {
		const struct ed_proxy *p = o->p;
		if (!(p->rights & (write ? ED_PROXY_WRITE : ED_PROXY_READ)))
			return ED_E_CAP;
		return ed_cap_equal(cap, write ? &p->wc : &p->rc) ? 0 : ED_E_CAP;
	}
	}
}

int ed_ent_modifiable(const struct ed_entry *e)
{
	if (e->flags & (EF_READING | EF_WRITING) || !(e->flags & EF_VALID))
		return ED_E_BUSY;
	if (e->flags & EF_DEALLOC)
		return ED_E_DEALLOC;
	return 0;
}

void ed_ent_changed(struct exodisk *ed, struct ed_entry *e, struct ed_client *c)
{
	e->flags |= EF_DIRTY;
	e->modgen++;
	/* Whoever changes an entry holds it, even past its quota: a dirty entry
	 * must always have someone who can write it back or let it go. */
	if (c != NULL && !(e->holders & (1ull << c->slot))) {
		e->holders |= 1ull << c->slot;
		c->nheld++;
	}
	e->flags &= ~EF_ORPHAN;
	ed_cache_touch(ed, e);
	if (e->nmaps > 0)
		ed_map_sync(ed, e, ED_XNMAP_LIVE);
	ed_proxy_sync(ed, e);
}

int ed_obj_coverage(struct exodisk *ed, const struct ed_obj *o, struct ed_rl *out)
{
	out->n = 0;
	out->overflow = false;
	switch (o->kind) {
	case ED_PK_EXTENT:
		ed_rl_add(out, o->e->sector, ed_ext(o->e)->nsectors);
		break;
	case ED_PK_EXONODE:
		ed_refs_slot(o->x, out);
		break;
	default:
		for (uint32_t i = 0; i < o->p->nrange; i++)
			ed_rl_add(out, o->p->r[i].start, o->p->r[i].nsectors);
		break;
	}
	ed_rl_norm(out);
	return out->overflow ? ED_E_CORRUPT : 0;
}

/* ---- undoing what was never committed ------------------------------------------- */

void ed_ent_discard(struct exodisk *ed, struct ed_entry *e)
{
	struct ed_disk *d = ed->disk[e->unit];
	struct ed_rl *refs = ed_rl_get(ed);
	ed_refs(e, e->cur, false, refs);
	for (uint32_t i = 0; i < refs->n; i++)
		ed_fm_release_uncommitted(d, refs->r[i].start, refs->r[i].nsectors);
	ed_rl_put(ed, refs);
	/* A block whose last exonode just went refers to nothing, not even its
	 * own sectors: release those explicitly. */
	ed_fm_release_uncommitted(d, e->sector, e->kind == ED_KIND_XNBLK ? e->nsect : 1);
	/* Proxies and maps see the object go before the entry is reused. */
	e->flags |= EF_DEALLOC;
	if (e->nmaps > 0)
		ed_map_sync(ed, e, ED_XNMAP_GONE);
	ed_proxy_sync(ed, e);
	e->flags &= ~(EF_DIRTY | EF_DEALLOC);
	ed_cache_evict(ed, e);
}

void ed_ent_revert(struct exodisk *ed, struct ed_entry *e)
{
	struct ed_disk *d = ed->disk[e->unit];
	struct ed_rl *cur = ed_rl_get(ed), *com = ed_rl_get(ed), *extra = ed_rl_get(ed);
	ed_refs(e, e->cur, (e->flags & EF_DEALLOC) != 0, cur);
	ed_refs(e, e->com, false, com);
	ed_rl_diff(cur, com, extra);
	for (uint32_t i = 0; i < extra->n; i++)
		ed_fm_release_uncommitted(d, extra->r[i].start, extra->r[i].nsectors);
	ed_rl_put(ed, extra);
	ed_rl_put(ed, com);
	ed_rl_put(ed, cur);
	/* The committed image was verified when it was read or made, so it
	 * decodes; a failure here would be a bug, and the checker would see
	 * the entry disagree with the disk. */
	if (e->kind == ED_KIND_EXTENT)
		(void)ed_ext_decode(&ed->keys, d->sb.uuid, e->sector, (struct ed_exthdr *)e->com,
		                    e->com_stamp, (struct ed_exthdr *)e->cur);
	else
		(void)ed_xnblk_decode(&ed->keys, d->sb.uuid, e->sector, e->com, e->nsect,
		                      e->com_stamp, e->cur);
	e->flags &= ~(EF_DIRTY | EF_DEALLOC);
	e->modgen++;
	if (e->nmaps > 0)
		ed_map_sync(ed, e, ED_XNMAP_LIVE);
	ed_proxy_sync(ed, e);
}

/* Would undoing e free sectors that queued or in-flight data I/O still
 * targets?  (Issue 17 A1: a dead process's queued writes must not land on
 * whoever allocates its sectors next.)  Its image's references cover what
 * discard and revert can free, and the block itself. */
static bool undo_io_busy(struct exodisk *ed, struct ed_entry *e)
{
	bool busy = ed_io_busy_range(ed, e->unit, e->sector, e->kind == ED_KIND_XNBLK ? e->nsect : 1);
	struct ed_rl *refs = ed_rl_get(ed);
	ed_refs(e, e->cur, false, refs);
	for (uint32_t i = 0; i < refs->n && !busy; i++)
		busy = ed_io_busy_range(ed, e->unit, refs->r[i].start, refs->r[i].nsectors);
	ed_rl_put(ed, refs);
	return busy;
}

void ed_orphans_retry(struct exodisk *ed)
{
	ed->orphan_wait = false;
	for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
		struct ed_entry *e = ed_cache_ent(ed, i);
		if (e->kind != 0 && (e->flags & EF_ORPHAN))
			ed_ent_orphan(ed, e);
	}
}

/* Every holder of this dirty entry has exited (ed_client_exit marked it
 * EF_ORPHAN): once no write-back and no data I/O to what it would free is
 * in flight, undo what nobody will write back.  (The last such data I/O to
 * finish calls ed_orphans_retry.) */
void ed_ent_orphan(struct exodisk *ed, struct ed_entry *e)
{
	const uint32_t busy = EF_WRITING | EF_READING | EF_STAGE | EF_HOME_IO;
	if (e->kind == 0 || !(e->flags & EF_ORPHAN))
		return;
	if (e->holders != 0 || !(e->flags & EF_DIRTY)) {
		e->flags &= ~EF_ORPHAN;
		return;
	}
	if (e->flags & busy)
		return;
	if (undo_io_busy(ed, e)) {
		ed->orphan_wait = true;
		return;
	}
	e->flags &= ~EF_ORPHAN;
	if (e->com_stamp != 0)
		ed_ent_revert(ed, e);
	else
		ed_ent_discard(ed, e);
}
