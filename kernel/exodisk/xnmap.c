/*
 * xnmap.c - ED_OP_EXONODE_MAP: an exonode's entries and application data,
 * mapped read-only into the application (the thesis proposed it; the
 * prototype never built it).
 *
 * The page is a rendering, not the exonode itself: a header, one struct
 * ed_xnmap_ent per entry, then the application data.  It never contains a
 * capability, a birth id, or any byte of another exonode sharing the block.
 * The core rewrites it whenever the exonode changes (ed_ent_changed and the
 * commit, read-in and eviction paths call ed_map_sync), bumping a sequence
 * counter around each rewrite so a reader on another hart can detect a torn
 * copy.  When the exonode leaves the cache the page stays, marked DETACHED,
 * and comes back to life when the block is read in again; when the exonode
 * is deallocated it is marked GONE.
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

#define MAX_MAPS_PER_CLIENT 64

static struct ed_xnmap *map_at(struct exodisk *ed, uint32_t i)
{
	return ed_pvec_elem(&ed->maps, sizeof(struct ed_xnmap), i);
}

static void gen_begin(struct ed_xnmap_hdr *h)
{
	__atomic_store_n(&h->gen, h->gen | 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void gen_end(struct ed_xnmap_hdr *h)
{
	__atomic_store_n(&h->gen, h->gen + 1, __ATOMIC_RELEASE);
}

/* Render the exonode x of block e into the map's page. */
static void render(struct ed_xnmap *m, struct ed_entry *e, struct ed_xnhdr *x)
{
	struct ed_xnmap_hdr *h = m->page;
	gen_begin(h);
	uint64_t gen = h->gen;
	ed_memset(m->page, 0, ED_PAGE);
	h->gen = gen;
	h->magic = ED_XNMAP_MAGIC;
	h->sector = m->sector;
	h->unit = m->unit;
	h->xn_num = m->slot;
	h->parent_sector = x->parent;
	h->parent_slot = x->parent_slot;
	h->state = ED_XNMAP_LIVE;
	h->length = ((struct ed_xnblk *)e->cur)->slot_bytes;
	h->dirty = (e->flags & EF_DIRTY) != 0;
	uint32_t nent = 0;
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r))
		nent++;
	struct ed_xnmap_ent *ent = (struct ed_xnmap_ent *)(h + 1);
	uint32_t data = sizeof(*h) + nent * sizeof(*ent);
	uint32_t i = 0;
	for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r), i++) {
		ent[i].type = r->type;
		ent[i].idx = r->idx;
		if (r->type == ED_ENT_EXTENT) {
			ent[i].a = ed_xnrec_u64(r, 0);
			ent[i].b = r->a;
		} else if (r->type == ED_ENT_EXONODE) {
			ent[i].a = ed_xnrec_u64(r, 0);
			ent[i].b = r->a;
		} else {
			/* An exonode's entries fit in 2 KiB, so this always fits. */
			uint32_t len = ED_MIN(r->a, ED_PAGE - data);
			ent[i].len = len;
			ent[i].a = data;
			ed_memcpy((uint8_t *)m->page + data, ed_xnrec_data(r), len);
			data += (len + 7) & ~7u;
		}
	}
	h->nent = (uint16_t)nent;
	gen_end(h);
}

static void set_state(struct ed_xnmap *m, uint16_t state)
{
	struct ed_xnmap_hdr *h = m->page;
	if (h->state == state)
		return;
	gen_begin(h);
	h->state = state;
	gen_end(h);
}

void ed_map_sync(struct exodisk *ed, struct ed_entry *e, uint16_t state)
{
	uint32_t live = 0;
	for (uint32_t i = 0; i < ed->cfg.nmaps; i++) {
		struct ed_xnmap *m = map_at(ed, i);
		if (!m->used || m->unit != e->unit || m->sector != e->sector)
			continue;
		struct ed_xnmap_hdr *h = m->page;
		if (h->state == ED_XNMAP_GONE)
			continue;
		if (state != ED_XNMAP_LIVE) {
			set_state(m, state);
			continue;
		}
		struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
		struct ed_xnhdr *x = m->slot < ed_xn_nslots(b->nsect, b->slot_bytes)
		                     ? ed_xn_slot(e->cur, m->slot) : NULL;
		if (x != NULL && x->state == ED_SLOT_LIVE && x->birth == m->birth) {
			render(m, e, x);
			live++;
		} else {
			set_state(m, ED_XNMAP_GONE);
		}
	}
	e->nmaps = live;
}

static void map_free(struct exodisk *ed, struct ed_xnmap *m, bool unmap)
{
	if (unmap)
		ed->env.unmap_page(ed->env.ctx, m->client, m->uaddr);
	struct ed_entry *e = ed_cache_lookup(ed, m->unit, m->sector);
	if (e != NULL && e->nmaps > 0 && ((struct ed_xnmap_hdr *)m->page)->state == ED_XNMAP_LIVE)
		e->nmaps--;
	ed->env.page_free(ed->env.ctx, m->page);
	if (m->client != NULL && m->client->nmaps > 0)
		m->client->nmaps--;
	m->used = false;
	m->page = NULL;
	ed->nmaps_live--;
}

int64_t ed_op_map(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	if (a->stuff == NULL)
		return ED_E_ARG;
	if (a->stuff->one == ED_MAP_UNMAP) {
		for (uint32_t i = 0; i < ed->cfg.nmaps; i++) {
			struct ed_xnmap *m = map_at(ed, i);
			if (m->used && m->client == c && m->uaddr == a->stuff->two) {
				map_free(ed, m, true);
				return 0;
			}
		}
		return ED_E_NOMAP;
	}
	if (a->stuff->one != ED_MAP_MAP)
		return ED_E_ARG;
	struct ed_obj o;
	int err = ed_obj_find(ed, a->prot, &o);
	if (err != 0)
		return err;
	if (o.kind != ED_PK_EXONODE)
		return o.kind == ED_PK_PROXY ? ED_E_PROXY : ED_E_KIND;
	if ((err = ed_obj_access(ed, &o, a->prot, false)) != 0)
		return err;
	if (c->nmaps >= MAX_MAPS_PER_CLIENT)
		return ED_E_NOMAP;
	/* Issue 17 A3: beyond its first few, a client takes a window only
	 * while more than a reserve are left, so the others always find some
	 * (docs/exodisk.md, "Shared tables"). */
	if (c->nmaps >= ED_SHARE_GUARANTEED && ed->cfg.nmaps - ed->nmaps_live <= ed_share_reserve(ed->cfg.nmaps))
		return ED_E_NOMAP;
	struct ed_xnmap *m = NULL;
	for (uint32_t i = 0; i < ed->cfg.nmaps && m == NULL; i++)
		if (!map_at(ed, i)->used)
			m = map_at(ed, i);
	if (m == NULL)
		return ED_E_NOMAP;
	void *page = ed->env.page_alloc(ed->env.ctx);
	if (page == NULL)
		return ED_E_NOMEM;
	ed_memset(m, 0, sizeof(*m));
	m->page = page;
	m->client = c;
	m->cslot = c->slot;
	m->unit = o.e->unit;
	m->sector = o.e->sector;
	m->slot = o.slot;
	m->birth = o.x->birth;
	render(m, o.e, o.x);
	uint64_t uaddr;
	if ((err = ed->env.map_page(ed->env.ctx, c, page, &uaddr)) != 0) {
		ed->env.page_free(ed->env.ctx, page);
		m->page = NULL;
		return err;
	}
	m->uaddr = uaddr;
	m->used = true;
	ed->nmaps_live++;
	c->nmaps++;
	o.e->nmaps++;
	return (int64_t)uaddr;
}

void ed_map_drop_client(struct exodisk *ed, struct ed_client *c)
{
	for (uint32_t i = 0; i < ed->cfg.nmaps; i++) {
		struct ed_xnmap *m = map_at(ed, i);
		if (m->used && m->client == c)
			map_free(ed, m, true);
	}
}
