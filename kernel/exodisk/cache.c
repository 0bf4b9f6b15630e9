/*
 * cache.c - the exodisk cache: a statically sized table of extent headers
 * and exonode blocks (a prime number of entries, 281 by default as in the
 * thesis), hashed by (unit, sector), with an LRU list.
 *
 * Applications decide what is read in and when it is written back; the
 * cache only decides which clean entry makes room for a new one, and even
 * that follows the improved design of thesis section 2.3.3:
 *  - every entry remembers which clients hold it (read it in, allocated it,
 *    changed it); a client replaces only entries nobody holds or that only
 *    it holds, so one application cannot push another's entries out;
 *  - two clients reading the same block share one copy (and both hold it);
 *  - a client may hold at most `client_quota` entries, so no application
 *    can take the whole cache;
 *  - dirty entries are never replaced: when nothing else is left the caller
 *    is told to write back (ED_E_CACHEDIRTY), and nothing is silently lost.
 */
#include "kernel/exodisk/edcore.h"

struct ed_entry *ed_cache_ent(struct exodisk *ed, uint32_t i)
{
	return ed_pvec_elem(&ed->ents, sizeof(struct ed_entry), i);
}

static int32_t *bucket(struct exodisk *ed, uint16_t unit, uint64_t sector)
{
	uint64_t h = (sector ^ ((uint64_t)unit << 56)) * 0x9e3779b97f4a7c15ull;
	uint32_t b = (uint32_t)((h >> 29) % ed->cfg.cache_entries);
	return ed_pvec_elem(&ed->hashv, sizeof(int32_t), b);
}

int ed_cache_init(struct exodisk *ed)
{
	uint32_t n = ed->cfg.cache_entries;
	int e = ed_pvec_alloc(&ed->env, &ed->ents, ed_pvec_pages_for(n, sizeof(struct ed_entry)));
	if (e == 0)
		e = ed_pvec_alloc(&ed->env, &ed->entpages, n);
	if (e == 0)
		e = ed_pvec_alloc(&ed->env, &ed->hashv, ed_pvec_pages_for(n, sizeof(int32_t)));
	if (e != 0)
		return e;
	ed->lru_head = ed->lru_tail = -1;
	ed->free_head = -1;
	for (uint32_t i = n; i-- > 0; ) {
		struct ed_entry *en = ed_cache_ent(ed, i);
		uint8_t *page = ed_pvec_page(&ed->entpages, i);
		en->idx = i;
		en->ed = ed;
		en->cur = page + ED_ENT_CUR;
		en->stage = page + ED_ENT_STAGE;
		en->com = page + ED_ENT_COM;
		en->hnext = -1;
		en->lprev = -1;
		en->lnext = ed->free_head;
		ed->free_head = (int32_t)i;
		*(int32_t *)ed_pvec_elem(&ed->hashv, sizeof(int32_t), i) = -1;
	}
	return 0;
}

void ed_cache_free(struct exodisk *ed)
{
	ed_pvec_free(&ed->env, &ed->ents);
	ed_pvec_free(&ed->env, &ed->entpages);
	ed_pvec_free(&ed->env, &ed->hashv);
}

struct ed_entry *ed_cache_lookup(struct exodisk *ed, uint16_t unit, uint64_t sector)
{
	for (int32_t i = *bucket(ed, unit, sector); i >= 0; ) {
		struct ed_entry *e = ed_cache_ent(ed, (uint32_t)i);
		if (e->unit == unit && e->sector == sector)
			return e;
		i = e->hnext;
	}
	return NULL;
}

struct ed_entry *ed_cache_lookup_cover(struct exodisk *ed, uint16_t unit, uint64_t sector)
{
	for (uint64_t back = 0; back < ED_XN_MAX_SECT && back <= sector; back++) {
		struct ed_entry *e = ed_cache_lookup(ed, unit, sector - back);
		if (e != NULL && back < e->nsect)
			return e;
	}
	return NULL;
}

/* ---- LRU list ---------------------------------------------------------------- */

static void lru_unlink(struct exodisk *ed, struct ed_entry *e)
{
	if (e->lprev >= 0)
		ed_cache_ent(ed, (uint32_t)e->lprev)->lnext = e->lnext;
	else
		ed->lru_head = e->lnext;
	if (e->lnext >= 0)
		ed_cache_ent(ed, (uint32_t)e->lnext)->lprev = e->lprev;
	else
		ed->lru_tail = e->lprev;
	e->lprev = e->lnext = -1;
}

static void lru_push_head(struct exodisk *ed, struct ed_entry *e)
{
	e->lprev = -1;
	e->lnext = ed->lru_head;
	if (ed->lru_head >= 0)
		ed_cache_ent(ed, (uint32_t)ed->lru_head)->lprev = (int32_t)e->idx;
	else
		ed->lru_tail = (int32_t)e->idx;
	ed->lru_head = (int32_t)e->idx;
}

static void lru_push_tail(struct exodisk *ed, struct ed_entry *e)
{
	e->lnext = -1;
	e->lprev = ed->lru_tail;
	if (ed->lru_tail >= 0)
		ed_cache_ent(ed, (uint32_t)ed->lru_tail)->lnext = (int32_t)e->idx;
	else
		ed->lru_head = (int32_t)e->idx;
	ed->lru_tail = (int32_t)e->idx;
}

void ed_cache_touch(struct exodisk *ed, struct ed_entry *e)
{
	lru_unlink(ed, e);
	lru_push_head(ed, e);
}

void ed_cache_mark(struct exodisk *ed, struct ed_entry *e)
{
	lru_unlink(ed, e);
	lru_push_tail(ed, e);
}

/* ---- holders ------------------------------------------------------------------ */

int ed_cache_hold(struct exodisk *ed, struct ed_entry *e, struct ed_client *c)
{
	uint64_t bit = 1ull << c->slot;
	if (e->holders & bit)
		return 0;
	if (c->nheld >= ed->cfg.client_quota)
		return ED_E_QUOTA;
	e->holders |= bit;
	c->nheld++;
	return 0;
}

void ed_cache_unhold(struct exodisk *ed, struct ed_entry *e, int32_t cslot)
{
	uint64_t bit = 1ull << cslot;
	if (!(e->holders & bit))
		return;
	e->holders &= ~bit;
	struct ed_client *c = ed->clients[cslot];
	if (c != NULL && c->nheld > 0)
		c->nheld--;
}

/* ---- replacement ---------------------------------------------------------------- */

bool ed_cache_evictable(const struct ed_entry *e)
{
	const uint32_t busy = EF_READING | EF_DIRTY | EF_WRITING | EF_HOME_NEED | EF_HOME_IO |
	                      EF_DEALLOC | EF_STAGE | EF_PIN;
	return e->kind != 0 && (e->flags & EF_VALID) && !(e->flags & busy) && e->waiters == NULL &&
	       e->sg_wait == NULL;
}

void ed_cache_evict(struct exodisk *ed, struct ed_entry *e)
{
	if (e->nmaps > 0)
		ed_map_sync(ed, e, ED_XNMAP_DETACHED);
	int32_t *pp = bucket(ed, e->unit, e->sector);
	while (*pp != (int32_t)e->idx)
		pp = &ed_cache_ent(ed, (uint32_t)*pp)->hnext;
	*pp = e->hnext;
	e->hnext = -1;
	lru_unlink(ed, e);
	for (int32_t s = 0; s < ED_MAX_CLIENTS; s++)
		ed_cache_unhold(ed, e, s);
	e->kind = 0;
	e->flags = 0;
	e->lnext = ed->free_head;
	ed->free_head = (int32_t)e->idx;
}

/* Entries anyone may take: free, or held by nobody and replaceable. */
static uint32_t cache_takeable(struct exodisk *ed)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
		struct ed_entry *e = ed_cache_ent(ed, i);
		n += e->kind == 0 || (e->holders == 0 && ed_cache_evictable(e));
	}
	return n;
}

struct ed_entry *ed_cache_alloc(struct exodisk *ed, struct ed_client *c, uint16_t unit,
                                uint64_t sector, uint8_t kind, uint8_t nsect, int *err)
{
	uint64_t mine = 1ull << c->slot;
	/* Issue 17 A3: past its first few entries a client may take another
	 * (free, or nobody's) only while more than a reserve of those are
	 * left; otherwise it replaces its own, as at its quota.  So however
	 * many entries other clients hold, clean or dirty, a client holding
	 * few always finds one (docs/exodisk.md, "Shared tables"). */
	bool at_quota = c->nheld >= ed->cfg.client_quota ||
	                (c->nheld >= ED_SHARE_GUARANTEED &&
	                 cache_takeable(ed) <= ed_share_reserve(ed->cfg.cache_entries));
	struct ed_entry *victim = NULL;

	if (!at_quota && ed->free_head >= 0) {
		victim = ed_cache_ent(ed, (uint32_t)ed->free_head);
		ed->free_head = victim->lnext;
	} else {
		bool dirty_mine = false, dirty_any = false;
		for (int32_t i = ed->lru_tail; i >= 0; ) {
			struct ed_entry *e = ed_cache_ent(ed, (uint32_t)i);
			i = e->lprev;
			bool ok_owner = e->holders == mine || (e->holders == 0 && !at_quota);
			if (ok_owner && ed_cache_evictable(e)) {
				victim = e;
				break;
			}
			if (e->flags & EF_DIRTY) {
				dirty_any = true;
				dirty_mine |= (e->holders & mine) != 0;
			}
		}
		if (victim == NULL) {
			if (at_quota)
				*err = dirty_mine ? ED_E_CACHEDIRTY : ED_E_QUOTA;
			else
				*err = dirty_any ? ED_E_CACHEDIRTY : ED_E_CACHEFULL;
			return NULL;
		}
		ed_cache_evict(ed, victim);
		/* ed_cache_evict put it on the free list; take it back. */
		ed->free_head = victim->lnext;
	}

	struct ed_entry *e = victim;
	ed_memset(e->cur, 0, ED_PAGE);     /* cur, stage and com share one page */
	e->unit = unit;
	e->kind = kind;
	e->nsect = nsect;
	e->sector = sector;
	e->flags = 0;
	e->holders = 0;
	e->com_stamp = e->home_stamp = e->embed_stamp = e->inflight_stamp = 0;
	e->modgen = e->embed_modgen = 0;
	e->nmaps = 0;
	e->waiters = NULL;
	e->sg_wait = e->sg_wait_tail = NULL;
	int32_t *b = bucket(ed, unit, sector);
	e->hnext = *b;
	*b = (int32_t)e->idx;
	lru_push_head(ed, e);
	e->holders = mine;
	c->nheld++;
	return e;
}
