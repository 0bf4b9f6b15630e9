/*
 * check.c - the invariant checker (see check.h for what it checks).
 *
 * It walks the binding table, fetches every bound block the way the next
 * mount would trust it (the home copy, or the log's image if the log holds
 * a newer version, or for a mounted unit the cache's committed copy),
 * verifies it, and marks every sector it refers to in a "seen" bitmap.
 * Overlaps show up as sectors seen twice; leaks as sectors the durable free
 * map allocates but nothing saw.  The checker only reads the disk.
 */
#include "kernel/exodisk/check.h"
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

struct ck {
	struct exodisk *ed;
	struct ed_disk *d;
	struct ed_logview *lv;         /* NULL for a mounted unit */
	bool live;
	ed_check_report_fn report;
	ed_check_visit_fn visit;
	void *arg;
	struct ed_check_stats *st;
	struct ed_pvec seen;
	uint8_t *img, *plain, *img2, *plain2;
	/* The log's newest images, sorted by home: the next mount rewrites
	 * these homes from them, so they are what counts. */
	struct ed_pvec limg;
	uint32_t nlimg;
};

struct limg {
	uint64_t home, stamp, lsec;
};

static struct limg *limg_at(struct ck *k, uint32_t i)
{
	return ed_pvec_elem(&k->limg, sizeof(struct limg), i);
}

/* Index the images of the live log (at most one per log sector). */
static int index_log(struct ck *k)
{
	struct ed_disk *d = k->d;
	uint32_t max = (uint32_t)k->lv->len;
	int err = ed_pvec_alloc(&k->ed->env, &k->limg, ed_pvec_pages_for(max, sizeof(struct limg)));
	if (err != 0)
		return err;
	struct ed_logrec_iter it;
	ed_log_iter_begin(d, k->lv, &it);
	while (ed_log_iter_next(k->ed, d, k->lv, &it))
		for (uint32_t i = 0; i < it.nimg && k->nlimg < max; i++)
			if (it.img[i].op == ED_LOGOP_PUT)
				*limg_at(k, k->nlimg++) = (struct limg){ it.img[i].home, it.img[i].stamp,
				                                         it.img_sector[i] };
	/* Insertion sort by (home, stamp): the log is at most a few thousand. */
	for (uint32_t i = 1; i < k->nlimg; i++) {
		struct limg t = *limg_at(k, i);
		uint32_t j = i;
		for (; j > 0; j--) {
			struct limg *p = limg_at(k, j - 1);
			if (p->home < t.home || (p->home == t.home && p->stamp <= t.stamp))
				break;
			*limg_at(k, j) = *p;
		}
		*limg_at(k, j) = t;
	}
	return 0;
}

static const struct limg *find_limg(struct ck *k, uint64_t home, uint64_t stamp)
{
	uint32_t lo = 0, hi = k->nlimg;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct limg *m = limg_at(k, mid);
		if (m->home < home || (m->home == home && m->stamp < stamp))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < k->nlimg && limg_at(k, lo)->home == home && limg_at(k, lo)->stamp == stamp)
		return limg_at(k, lo);
	return NULL;
}

static void copy_log(struct ck *k, uint64_t lsec, uint8_t *dst, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++, lsec++)
		ed_memcpy(dst + i * ED_SECTOR, ed_log_sector(k->lv, lsec), ED_SECTOR);
}

static void bad(struct ck *k, const char *what, uint64_t sector, uint64_t detail)
{
	k->st->violations++;
	if (k->report != NULL)
		k->report(k->arg, ED_CHK_VIOLATION, what, sector, detail);
}

static void note(struct ck *k, const char *what, uint64_t sector, uint64_t detail)
{
	k->st->notes++;
	if (k->report != NULL)
		k->report(k->arg, ED_CHK_NOTE, what, sector, detail);
}

static uint32_t nsect_of(const struct ed_vtrec *v)
{
	return v->kind == ED_KIND_EXTENT ? 1 : v->nsect;
}

/* The bound block as the next mount would trust it, decoded into plain. */
static int fetch(struct ck *k, const struct ed_vtrec *v, uint8_t *img, uint8_t *plain)
{
	struct ed_disk *d = k->d;
	uint32_t ns = nsect_of(v);
	bool have = false;
	if (k->live) {
		struct ed_entry *e = ed_cache_lookup(k->ed, d->unit, v->sector);
		if (e != NULL && e->com_stamp == v->stamp) {
			ed_memcpy(img, e->com, ns * ED_SECTOR);
			have = true;
		}
	}
	if (!have && k->lv != NULL) {
		const struct limg *l = find_limg(k, v->sector, v->stamp);
		if (l != NULL) {
			copy_log(k, l->lsec, img, ns);
			have = true;
		}
	}
	if (!have) {
		int err = ed_sync_rw(k->ed, d->unit, BLK_READ, v->sector, ns, img);
		if (err != 0)
			return err;
	}
	if (v->kind == ED_KIND_EXTENT)
		return ed_ext_decode(&k->ed->keys, d->sb.uuid, v->sector, (struct ed_exthdr *)img,
		                     v->stamp, (struct ed_exthdr *)plain);
	return ed_xnblk_decode(&k->ed->keys, d->sb.uuid, v->sector, img, ns, v->stamp, plain);
}

static void refs_of(const struct ed_vtrec *v, const uint8_t *plain, struct ed_rl *out)
{
	struct ed_entry e;
	ed_memset(&e, 0, sizeof(e));
	e.kind = v->kind;
	e.sector = v->sector;
	e.nsect = (uint8_t)nsect_of(v);
	ed_refs(&e, plain, false, out);
}

static void count_block(struct ck *k, uint8_t *plain)
{
	struct ed_xnblk *b = (struct ed_xnblk *)plain;
	uint32_t n = ed_xn_nslots(b->nsect, b->slot_bytes);
	for (uint32_t i = 0; i < n; i++) {
		struct ed_xnhdr *x = ed_xn_slot(plain, i);
		if (x->state != ED_SLOT_LIVE)
			continue;
		k->st->exonodes++;
		k->st->descendants += ed_xn_count(x, ED_ENT_EXONODE);
		k->st->data_entries += ed_xn_count(x, ED_ENT_DATA);
	}
}

/* Report runs of sectors set in a and clear in b (a & ~b) from `from` on. */
static void runs(struct ck *k, const struct ed_pvec *a, const struct ed_pvec *b, uint64_t from,
                 const char *what)
{
	uint64_t n = k->d->nsectors, run = 0, start = 0;
	for (uint64_t s = from; s < n; s++) {
		if (s % 64 == 0 && s + 64 <= n) {
			uint64_t w = *ed_fm_word(a, s) & ~*ed_fm_word(b, s);
			if (w == 0 && run == 0) {
				s += 63;
				continue;
			}
		}
		bool hit = ed_fm_test(a, s) && !ed_fm_test(b, s);
		if (hit && run++ == 0)
			start = s;
		if (!hit && run > 0) {
			bad(k, what, start, run);
			run = 0;
		}
	}
	if (run > 0)
		bad(k, what, start, run);
}

/* Descendant links, both ways: notes, since a crash can leave one side
 * behind and the core never follows a link that does not agree. */
static void check_links(struct ck *k, const struct ed_vtrec *v, uint8_t *plain)
{
	struct ed_disk *d = k->d;
	struct ed_xnblk *b = (struct ed_xnblk *)plain;
	uint32_t n = ed_xn_nslots(b->nsect, b->slot_bytes);
	for (uint32_t i = 0; i < n; i++) {
		struct ed_xnhdr *x = ed_xn_slot(plain, i);
		if (x->state != ED_SLOT_LIVE)
			continue;
		if (x->parent != 0) {
			struct ed_vtrec *pv = ed_vt_find(d, x->parent);
			bool ok = false;
			if (pv != NULL && pv->kind == ED_KIND_XNBLK &&
			    fetch(k, pv, k->img2, k->plain2) == 0) {
				struct ed_xnblk *pb = (struct ed_xnblk *)k->plain2;
				if (x->parent_slot < ed_xn_nslots(pb->nsect, pb->slot_bytes)) {
					struct ed_xnhdr *px = ed_xn_slot(k->plain2, x->parent_slot);
					for (struct ed_xnrec *r = ed_xn_first(px);
					     px->state == ED_SLOT_LIVE && r != NULL; r = ed_xn_next(px, r))
						ok |= r->type == ED_ENT_EXONODE && r->a == i &&
						      ed_xnrec_u64(r, 0) == v->sector && ed_xnrec_u64(r, 1) == x->birth;
				}
			}
			if (!ok)
				note(k, "descendant exonode not listed by its parent (orphan)", v->sector, i);
		}
		for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r)) {
			if (r->type != ED_ENT_EXONODE)
				continue;
			struct ed_vtrec *cv = ed_vt_find(d, ed_xnrec_u64(r, 0));
			bool ok = false;
			if (cv != NULL && cv->kind == ED_KIND_XNBLK &&
			    fetch(k, cv, k->img2, k->plain2) == 0) {
				struct ed_xnblk *cb = (struct ed_xnblk *)k->plain2;
				if (r->a < ed_xn_nslots(cb->nsect, cb->slot_bytes)) {
					struct ed_xnhdr *cx = ed_xn_slot(k->plain2, r->a);
					ok = cx->state == ED_SLOT_LIVE && cx->birth == ed_xnrec_u64(r, 1) &&
					     cx->parent == v->sector && cx->parent_slot == i;
				}
			}
			if (!ok)
				note(k, "descendant entry names no such exonode (dangling)", v->sector, r->idx);
		}
	}
}

/* The durable state: binding table, blocks, durable free map. */
static void check_durable(struct ck *k)
{
	struct ed_disk *d = k->d;
	struct ed_check_stats *st = k->st;
	st->gen = d->sb.gen;
	st->nsectors = d->nsectors;
	st->data_start = d->data_start;
	st->allocated = ed_fm_count(&d->dfm, d->nsectors);
	if (!ed_fm_all(&d->dfm, 0, d->data_start))
		bad(k, "exodisk region not allocated in the free map", 0, d->data_start);
	ed_fm_set(&k->seen, 0, d->data_start);
	struct ed_rl *refs = ed_rl_get(k->ed);
	for (uint32_t i = 0; i < d->vt_slots; i++) {
		const struct ed_vtrec *v = ed_vt_slot(d, i);
		if (v->stamp == 0)
			continue;
		st->bindings++;
		uint32_t ns = nsect_of(v);
		if ((v->kind != ED_KIND_EXTENT && v->kind != ED_KIND_XNBLK) || ns == 0 ||
		    ns > ED_XN_MAX_SECT || !ed_range_ok(d, v->sector, ns)) {
			bad(k, "binding table record is malformed", v->sector, v->kind);
			continue;
		}
		int err = fetch(k, v, k->img, k->plain);
		if (err != 0) {
			bad(k, "bound block fails verification", v->sector, (uint64_t)-err);
			ed_fm_set(&k->seen, v->sector, ns);
			continue;
		}
		if (k->visit != NULL)
			k->visit(k->arg, v->kind, v->sector, ns, k->plain);
		if (v->kind == ED_KIND_EXTENT) {
			st->extents++;
		} else {
			st->xnblocks++;
			count_block(k, k->plain);
		}
		refs_of(v, k->plain, refs);
		for (uint32_t j = 0; j < refs->n; j++) {
			uint64_t s = refs->r[j].start, c = refs->r[j].nsectors;
			if (!ed_range_ok(d, s, c)) {
				bad(k, "block refers outside the data area", v->sector, s);
				continue;
			}
			if (ed_fm_any(&k->seen, s, c))
				bad(k, "sector referred to by two bindings", s, v->sector);
			ed_fm_set(&k->seen, s, c);
			if (!ed_fm_all(&d->dfm, s, c))
				bad(k, "block refers to sectors the free map says are free", s, v->sector);
		}
	}
	ed_rl_put(k->ed, refs);
	runs(k, &d->dfm, &k->seen, d->data_start, "allocated sectors referred to by nothing (leak)");
	for (uint32_t i = 0; i < d->vt_slots; i++) {
		const struct ed_vtrec *v = ed_vt_slot(d, i);
		if (v->stamp != 0 && v->kind == ED_KIND_XNBLK && nsect_of(v) <= ED_XN_MAX_SECT &&
		    fetch(k, v, k->img, k->plain) == 0)
			check_links(k, v, k->plain);
	}
}

static int ck_begin(struct ck *k, struct exodisk *ed, struct ed_disk *d,
                    struct ed_check_stats *st)
{
	ed_memset(st, 0, sizeof(*st));
	k->ed = ed;
	k->d = d;
	k->st = st;
	int err = ed_pvec_alloc(&ed->env, &k->seen, d->fm_pages);
	uint8_t **bufs[] = { &k->img, &k->plain, &k->img2, &k->plain2 };
	for (uint32_t i = 0; i < ED_NELEM(bufs); i++)
		if ((*bufs[i] = ed->env.page_alloc(ed->env.ctx)) == NULL)
			err = ED_E_NOMEM;
	return err;
}

static void ck_end(struct ck *k)
{
	ed_pvec_free(&k->ed->env, &k->seen);
	uint8_t *bufs[] = { k->img, k->plain, k->img2, k->plain2 };
	for (uint32_t i = 0; i < ED_NELEM(bufs); i++)
		if (bufs[i] != NULL)
			k->ed->env.page_free(k->ed->env.ctx, bufs[i]);
}

int ed_check_disk(struct exodisk *ed, int unit, ed_check_report_fn report, ed_check_visit_fn visit,
                  void *arg, struct ed_check_stats *stats)
{
	struct ed_disk *d;
	struct ed_logview lv;
	int err = ed_disk_inspect(ed, unit, &d, &lv);
	if (err != 0)
		return err;
	struct ck k;
	ed_memset(&k, 0, sizeof(k));
	k.lv = &lv;
	k.report = report;
	k.visit = visit;
	k.arg = arg;
	err = ck_begin(&k, ed, d, stats);
	if (err == 0)
		err = index_log(&k);
	if (err == 0) {
		stats->log_records = lv.nrec;
		check_durable(&k);
	}
	ed_pvec_free(&ed->env, &k.limg);
	ck_end(&k);
	ed_disk_release(ed, d, &lv);
	return err;
}

/* ---- a mounted unit: its memory too ------------------------------------------------- */

static void check_entry(struct ck *k, struct ed_entry *e, struct ed_pvec *seen2, struct ed_rl *refs)
{
	struct ed_disk *d = k->d;
	if (e->kind == ED_KIND_XNBLK) {
		struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
		uint32_t n = ed_xn_nslots(b->nsect, b->slot_bytes);
		for (uint32_t i = 0; i < n; i++) {
			struct ed_xnhdr *x = ed_xn_slot(e->cur, i);
			bool ok;
			if (x->state == ED_SLOT_DEAD)
				ok = x->used == 0;
			else
				ok = ed_xn_check(x, b->slot_bytes) == 0;
			if (!ok)
				bad(k, "cached exonode is malformed", e->sector, i);
		}
	} else if (ed_ext(e)->nsectors == 0) {
		bad(k, "cached extent header has no sectors", e->sector, 0);
	}
	ed_refs(e, e->cur, (e->flags & EF_DEALLOC) != 0, refs);
	for (uint32_t j = 0; j < refs->n; j++) {
		uint64_t s = refs->r[j].start, c = refs->r[j].nsectors;
		if (!ed_range_ok(d, s, c)) {
			bad(k, "cached entry refers outside the data area", e->sector, s);
			continue;
		}
		if (!ed_fm_all(&d->fm, s, c))
			bad(k, "cached entry refers to sectors the free map says are free", s, e->sector);
		if (ed_fm_any(seen2, s, c))
			bad(k, "two cached entries refer to the same sector", s, e->sector);
		ed_fm_set(seen2, s, c);
	}
	if (e->com_stamp != 0) {
		struct ed_vtrec *v = ed_vt_find(d, e->sector);
		if (v == NULL || v->stamp != e->com_stamp)
			bad(k, "cached committed version is not the bound one", e->sector, e->com_stamp);
	}
}

static void check_proxies(struct ck *k)
{
	struct exodisk *ed = k->ed;
	for (uint32_t i = 0; i < ed->cfg.nproxy; i++) {
		struct ed_proxy *p = ed_pvec_elem(&ed->proxies, sizeof(*p), i);
		if (!p->used || p->unit != k->d->unit)
			continue;
		struct ed_rl *cov = ed_rl_get(ed);
		bool known = false;
		if (p->okind != ED_PK_PROXY) {
			struct ed_entry *e = ed_cache_lookup(ed, p->unit, p->osector);
			struct ed_protector pr;
			ed_memset(&pr, 0, sizeof(pr));
			pr.unit = p->unit;
			pr.blkno = p->osector;
			pr.xn_num = p->oslot;
			pr.kind = p->okind;
			struct ed_obj o;
			if (e != NULL && ed_obj_find(ed, &pr, &o) == 0 &&
			    (o.kind != ED_PK_EXONODE || o.x->birth == p->obirth)) {
				ed_obj_coverage(ed, &o, cov);
				known = true;
			}
		}
		for (uint32_t j = 0; j < p->nrange; j++) {
			if (!ed_fm_all(&k->d->fm, p->r[j].start, p->r[j].nsectors))
				bad(k, "proxy reaches unallocated sectors", p->r[j].start, i);
			if (known && !ed_rl_covers(cov, p->r[j].start, p->r[j].nsectors))
				bad(k, "proxy reaches beyond its origin", p->r[j].start, i);
		}
		ed_rl_put(ed, cov);
	}
}

int ed_check_live(struct exodisk *ed, int unit, ed_check_report_fn report, void *arg,
                  struct ed_check_stats *stats)
{
	int err;
	ed_lock(ed);
	struct ed_disk *d = ed_disk_get(ed, (uint32_t)unit, &err);
	if (d == NULL) {
		ed_unlock(ed);
		return err;
	}
	struct ck k;
	ed_memset(&k, 0, sizeof(k));
	k.live = true;
	k.report = report;
	k.arg = arg;
	struct ed_pvec seen2;
	ed_memset(&seen2, 0, sizeof(seen2));
	err = ck_begin(&k, ed, d, stats);
	if (err == 0)
		err = ed_pvec_alloc(&ed->env, &seen2, d->fm_pages);
	if (err == 0) {
		check_durable(&k);
		runs(&k, &d->dfm, &d->fm, 0, "durable allocation missing from the free map");
		struct ed_rl *refs = ed_rl_get(ed);
		for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
			struct ed_entry *e = ed_cache_ent(ed, i);
			if (e->kind != 0 && e->unit == unit && (e->flags & EF_VALID))
				check_entry(&k, e, &seen2, refs);
		}
		ed_rl_put(ed, refs);
		/* What the free map holds beyond the durable map must be exactly what
		 * cached entries allocated and have not committed. */
		ed_fm_set(&seen2, 0, d->data_start);
		for (uint64_t s = 0; s < d->nsectors; s += 64) {
			uint64_t w = *ed_fm_word(&d->fm, s) & ~*ed_fm_word(&d->dfm, s) &
			             ~*ed_fm_word(&seen2, s);
			if (w != 0)
				bad(&k, "free map holds an allocation nothing refers to", s + __builtin_ctzll(w),
				    (uint64_t)__builtin_popcountll(w));
		}
		check_proxies(&k);
	}
	ed_pvec_free(&ed->env, &seen2);
	ck_end(&k);
	ed_unlock(ed);
	return err;
}

int ed_check_freemap(struct exodisk *ed, int unit,
                     void (*fn)(void *arg, uint64_t start, uint64_t count, int allocated),
                     void *arg)
{
	struct ed_disk *d;
	struct ed_logview lv;
	int err = ed_disk_inspect(ed, unit, &d, &lv);
	if (err != 0)
		return err;
	uint64_t start = 0;
	int cur = ed_fm_test(&d->dfm, 0);
	for (uint64_t s = 1; s <= d->nsectors; s++) {
		int v = s < d->nsectors ? ed_fm_test(&d->dfm, s) : !cur;
		if (v != cur) {
			fn(arg, start, s - start, cur);
			start = s;
			cur = v;
		}
	}
	ed_disk_release(ed, d, &lv);
	return 0;
}
