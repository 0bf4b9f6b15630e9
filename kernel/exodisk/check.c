/*
 * check.c - the invariant checker (see check.h for what it checks).
 *
 * It walks the binding tree, fetches every bound block the way the next
 * mount would trust it (the home copy, or the log's image if the log holds
 * a newer version, or for a mounted unit the cache's committed copy),
 * verifies it, and marks every sector it refers to in a "seen" bitmap,
 * together with the pages of the two trees themselves.  Overlaps show up
 * as sectors seen twice; leaks as sectors the durable free map allocates
 * but nothing saw.  The checker only reads the disk.  Its bitmaps are
 * sparse like the free maps, so checking a large disk costs what is on it.
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
	struct ed_bm seen;
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

static uint64_t count_bits(const struct ed_bm *m)
{
	uint64_t n = 0;
	for (uint64_t s = ed_bm_next(m, 0, true); s < m->nbits; ) {
		uint64_t e = ed_bm_next(m, s, false);
		n += e - s;
		s = e < m->nbits ? ed_bm_next(m, e, true) : e;
	}
	return n;
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

/* One 64-bit word of a sparse bitmap, markers included. */
static uint64_t word_at(const struct ed_bm *m, uint64_t s)
{
	void *mk;
	const uint64_t *w = ed_bm_leaf(m, s / ED_BM_LEAF_BITS, &mk);
	if (w == NULL)
		return mk == ED_BM_ONES ? ~0ull : 0;
	return w[(s % ED_BM_LEAF_BITS) / 64];
}

/* Report runs of sectors set in a and clear in b and c (c may be NULL)
 * from `from` on.  Only leaves where a has anything are looked at. */
static void runs(struct ck *k, const struct ed_bm *a, const struct ed_bm *b, const struct ed_bm *c,
                 uint64_t from, const char *what)
{
	uint64_t n = k->d->nsectors, run = 0, start = 0;
	for (uint64_t li = ed_bm_next_leaf(a, from / ED_BM_LEAF_BITS); li < ed_bm_nleaves(a);
	     li = ed_bm_next_leaf(a, li + 1)) {
		uint64_t base = li * ED_BM_LEAF_BITS;
		if (run > 0 && start + run != base) {
			bad(k, what, start, run);
			run = 0;
		}
		/* Whole leaves that are markers decide at once. */
		void *ma, *mb, *mc = ED_BM_ZERO;
		const uint64_t *wa = ed_bm_leaf(a, li, &ma), *wb = ed_bm_leaf(b, li, &mb);
		const uint64_t *wc = c != NULL ? ed_bm_leaf(c, li, &mc) : NULL;
		if ((wb == NULL && mb == ED_BM_ONES) || (wc == NULL && mc == ED_BM_ONES))
			continue;
		uint64_t end = ED_MIN(base + ED_BM_LEAF_BITS, n);
		if (wa == NULL && wb == NULL && wc == NULL && base >= from) {
			if (run++ == 0)               /* ONES, not in b or c: all of it */
				start = base;
			run += end - base - 1;
			continue;
		}
		for (uint64_t s = ED_MAX(base, from & ~63ull); s < end; s += 64) {
			uint64_t x = word_at(a, s) & ~word_at(b, s) & (c != NULL ? ~word_at(c, s) : ~0ull);
			if (s < from)
				x &= ~0ull << (from - s);
			if (n - s < 64)
				x &= (1ull << (n - s)) - 1;
			for (uint32_t bit = 0; bit < 64; bit++) {
				bool hit = (x >> bit) & 1;
				if (hit && run++ == 0)
					start = s + bit;
				if (!hit && run > 0) {
					bad(k, what, start, run);
					run = 0;
				}
				if (x >> bit == 0 && run == 0)
					break;
			}
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
			struct ed_vtrec pvr, *pv = &pvr;
			bool ok = false;
			if (ed_bt_get_sync(d, x->parent, pv) == 0 && pv->kind == ED_KIND_XNBLK &&
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
			struct ed_vtrec cvr, *cv = &cvr;
			bool ok = false;
			if (ed_bt_get_sync(d, ed_xnrec_u64(r, 0), cv) == 0 && cv->kind == ED_KIND_XNBLK &&
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

/* A tree page: it must lie in the data area, be allocated, and be seen once. */
static void tree_page(void *arg, uint64_t sector, int err)
{
	struct ck *k = arg;
	k->st->tree_pages++;
	if (err != 0) {
		bad(k, "exodisk tree page fails verification", sector, (uint64_t)-err);
		return;
	}
	if (!ed_range_ok(k->d, sector, ED_SECT_PER_PAGE)) {
		bad(k, "exodisk tree page outside the data area", sector, 0);
		return;
	}
	if (ed_bm_any(&k->seen, sector, ED_SECT_PER_PAGE))
		bad(k, "exodisk tree page overlaps other metadata", sector, 0);
	(void)ed_bm_set(&k->seen, sector, ED_SECT_PER_PAGE);
	if (!ed_bm_all(&k->d->dfm, sector, ED_SECT_PER_PAGE))
		bad(k, "exodisk tree page is free in the free map", sector, 0);
}

/* The durable state: binding tree, blocks, durable free map. */
static void check_durable(struct ck *k)
{
	struct ed_disk *d = k->d;
	struct ed_check_stats *st = k->st;
	st->gen = d->sb.gen;
	st->nsectors = d->nsectors;
	st->data_start = d->data_start;
	st->allocated = d->dfm.count;
	if (!ed_bm_all(&d->dfm, 0, d->data_start))
		bad(k, "exodisk region not allocated in the free map", 0, d->data_start);
	(void)ed_bm_set(&k->seen, 0, d->data_start);
	/* The trees' own pages. */
	ed_fmt_each_page(d, tree_page, k);
	int err = ed_bt_walk_sync(d, tree_page, k);
	if (err != 0)
		bad(k, "binding tree cannot be read", 0, (uint64_t)-err);
	struct ed_rl *refs = ed_rl_get(k->ed);
	struct ed_vtrec vr, *v = &vr;
	for (uint64_t from = 0; (err = ed_bt_next_sync(d, from, v)) == 0; from = v->sector + 1) {
		st->bindings++;
		uint32_t ns = nsect_of(v);
		if ((v->kind != ED_KIND_EXTENT && v->kind != ED_KIND_XNBLK) || ns == 0 ||
		    ns > ED_XN_MAX_SECT || !ed_range_ok(d, v->sector, ns)) {
			bad(k, "binding record is malformed", v->sector, v->kind);
			continue;
		}
		err = fetch(k, v, k->img, k->plain);
		if (err != 0) {
			bad(k, "bound block fails verification", v->sector, (uint64_t)-err);
			(void)ed_bm_set(&k->seen, v->sector, ns);
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
			if (ed_bm_any(&k->seen, s, c))
				bad(k, "sector referred to by two bindings", s, v->sector);
			(void)ed_bm_set(&k->seen, s, c);
			if (!ed_bm_all(&d->dfm, s, c))
				bad(k, "block refers to sectors the free map says are free", s, v->sector);
		}
	}
	if (err != ED_E_NOTBOUND)
		bad(k, "binding tree cannot be read", 0, (uint64_t)-err);
	ed_rl_put(k->ed, refs);
	if (st->bindings != d->bt_count)
		bad(k, "binding count in the superblock is wrong", 0, st->bindings);
	if (st->tree_pages != d->meta_pages)
		bad(k, "tree page count in the superblock is wrong", 0, st->tree_pages);
	runs(k, &d->dfm, &k->seen, NULL, d->data_start, "allocated sectors referred to by nothing (leak)");
	for (uint64_t from = 0; ed_bt_next_sync(d, from, v) == 0; from = v->sector + 1)
		if (v->kind == ED_KIND_XNBLK && nsect_of(v) <= ED_XN_MAX_SECT &&
		    fetch(k, v, k->img, k->plain) == 0)
			check_links(k, v, k->plain);
}

static int ck_begin(struct ck *k, struct exodisk *ed, struct ed_disk *d,
                    struct ed_check_stats *st)
{
	ed_memset(st, 0, sizeof(*st));
	k->ed = ed;
	k->d = d;
	k->st = st;
	int err = 0;
	ed_bm_init(&k->seen, &ed->env, d->nsectors, ED_BM_ZERO, NULL);
	uint8_t **bufs[] = { &k->img, &k->plain, &k->img2, &k->plain2 };
	for (uint32_t i = 0; i < ED_NELEM(bufs); i++)
		if ((*bufs[i] = ed->env.page_alloc(ed->env.ctx)) == NULL)
			err = ED_E_NOMEM;
	return err;
}

static void ck_end(struct ck *k)
{
	ed_bm_free(&k->seen);
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
		/* The newest checkpoint is damaged: a mount falls back to the
		 * one before it (what that loses: exotool info, the boot). */
		if (d->fell.fell)
			bad(&k, d->fell.io ? "the newest checkpoint's trees cannot be read at this sector (the disk "
			    "failed every read of it): a mount falls back to the checkpoint before it (detail: log "
			    "records only the newest still covered, lost with it)"
			    : d->fell.gen != 0 ? "the newest checkpoint's trees do not verify at this sector: a mount "
			    "falls back to the checkpoint before it (detail: log records only the newest still "
			    "covered, lost with it)"
			    : "a superblock does not verify: a mount uses the other one, and if the damaged one was "
			    "the newer checkpoint, falls back to the one before it (detail: its generation)",
			    d->fell.at, d->fell.gen != 0 ? d->fell.lost : d->fell.used_gen);
		/* The next mount would stop before it and drop what follows. */
		if (d->lost.later > 0)
			bad(&k, "damaged commit-log record with valid records after it: a mount applies the "
			    "log up to it and loses it and the records after it (detail: how many)",
			    d->lost.at, d->lost.last_seq - d->lost.seq + 1);
		check_durable(&k);
	}
	ed_pvec_free(&ed->env, &k.limg);
	ck_end(&k);
	ed_disk_release(ed, d, &lv);
	return err;
}

/* ---- a mounted unit: its memory too ------------------------------------------------- */

static void check_entry(struct ck *k, struct ed_entry *e, struct ed_bm *seen2, struct ed_rl *refs)
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
		if (!ed_bm_all(&d->fm, s, c))
			bad(k, "cached entry refers to sectors the free map says are free", s, e->sector);
		if (ed_bm_any(seen2, s, c))
			bad(k, "two cached entries refer to the same sector", s, e->sector);
		(void)ed_bm_set(seen2, s, c);
	}
	if (e->com_stamp != 0) {
		struct ed_vtrec v;
		if (ed_bt_get_sync(d, e->sector, &v) != 0 || v.stamp != e->com_stamp)
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
			if (!ed_bm_all(&k->d->fm, p->r[j].start, p->r[j].nsectors))
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
	/* Nothing may change the trees and maps while the checker looks.  Its
	 * reads of binding-tree pages let waiting work go on (ed_meta_loaded),
	 * and a commit or a due checkpoint that started inside the walk made
	 * the new tree pages look leaked.  A checkpoint or log write already
	 * under way is waited for, asleep (the caller may be a process: others
	 * must run meanwhile), until its completion wakes us (ed_idle_wake);
	 * new ones, and commits, wait until the check is done. */
	while (d->ck != CK_IDLE || d->log_busy) {
		if (ed->env.sleep == NULL && ed->env.wait == NULL) {
			ed_unlock(ed);
			return ED_E_BUSY;
		}
		ed->idle_waiters++;
		int stop = ed_block(ed);
		ed->idle_waiters--;
		d = stop == 0 ? ed_disk_get(ed, (uint32_t)unit, &err) : NULL;
		if (d == NULL) {
			ed_unlock(ed);
			return stop != 0 ? stop : err;
		}
	}
	d->ck_hold++;
	struct ck k;
	ed_memset(&k, 0, sizeof(k));
	k.live = true;
	k.report = report;
	k.arg = arg;
	struct ed_bm seen2;
	ed_bm_init(&seen2, &ed->env, d->nsectors, ED_BM_ZERO, NULL);
	err = ck_begin(&k, ed, d, stats);
	if (err == 0) {
		check_durable(&k);
		runs(&k, &d->dfm, &d->fm, NULL, 0, "durable allocation missing from the free map");
		struct ed_rl *refs = ed_rl_get(ed);
		for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
			struct ed_entry *e = ed_cache_ent(ed, i);
			if (e->kind != 0 && e->unit == unit && (e->flags & EF_VALID))
				check_entry(&k, e, &seen2, refs);
		}
		ed_rl_put(ed, refs);
		/* What the free map holds beyond the durable map must be exactly what
		 * cached entries allocated and have not committed. */
		(void)ed_bm_set(&seen2, 0, d->data_start);
		/* ... or what was let go while a failed log record may come back
		 * (freemap.c, held). */
		for (uint64_t s = 0, n; d->held.count != 0 && ed_bm_run(&d->held, &s, &n); s += n)
			(void)ed_bm_set(&seen2, s, n);
		runs(&k, &d->fm, &d->dfm, &seen2, 0, "free map holds an allocation nothing refers to");
		check_proxies(&k);
		/* The counts kept as the maps change. */
		if (d->fm.count != count_bits(&d->fm) || d->dfm.count != count_bits(&d->dfm))
			bad(&k, "free map counts disagree with the maps", 0, d->fm.count);
	}
	ed_bm_free(&seen2);
	ck_end(&k);
	d->ck_hold--;
	ed_commit_kick(ed, d);
	ed_ckpt_progress(ed, d);
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
	for (uint64_t s = 0; s < d->nsectors; ) {
		int v = ed_bm_test(&d->dfm, s);
		uint64_t e = ed_bm_next(&d->dfm, s, !v);
		fn(arg, s, e - s, v);
		s = e;
	}
	ed_disk_release(ed, d, &lv);
	return 0;
}

/* ---- the exodisk's own pages, for tests that model the free map ------------------------ */

struct metawalk {
	void (*fn)(void *arg, uint64_t sector);
	void *arg;
};

static void meta_cb(void *arg, uint64_t sector, int err)
{
	struct metawalk *w = arg;
	(void)err;
	w->fn(w->arg, sector);
}

int ed_check_meta_pages(struct exodisk *ed, int unit, void (*fn)(void *arg, uint64_t sector),
                        void *arg)
{
	int err;
	ed_lock(ed);
	struct ed_disk *d = ed_disk_get(ed, (uint32_t)unit, &err);
	if (d == NULL) {
		ed_unlock(ed);
		return err;
	}
	struct metawalk w = { fn, arg };
	ed_fmt_each_page(d, meta_cb, &w);
	err = ed_bt_walk_sync(d, meta_cb, &w);
	/* A checkpoint on its way holds both its new pages and the old ones. */
	for (uint32_t i = 0; i < d->ck_nitems; i++) {
		const struct ck_item *it = ed_pvec_elem(&d->ck_items, sizeof(*it), i);
		if (it->flags & CKI_ALLOCATED)
			fn(arg, it->sector);
		if ((it->flags & CKI_FREED) && it->old.sector > ED_MPTR_ONES)
			fn(arg, it->old.sector);
	}
	for (uint32_t i = 0; i < d->ck_gone_n; i++)
		fn(arg, d->ck_gone[i].sector);
	ed_unlock(ed);
	return err;
}
