/*
 * ckpt.c - checkpoints: the step that lets the commit log forget.
 *
 * The log holds every version committed since the last checkpoint.  A
 * checkpoint (1) waits until every block committed since then has been
 * written to its home, (2) flushes the disk's write cache, (3) writes the
 * pages of the two trees that changed since the last checkpoint - the
 * binding tree's dirty nodes and the free map's changed leaves, with the
 * inner pages above them - each to a new place (copy-on-write), and the
 * unwritten set in carry records at the log's head (zeroing on the disk
 * the runs they have no room for: unwritten.c, zero.c), flushes again,
 * and (4) writes a superblock naming the new roots and the log position
 * where replay would now start.  The two superblock copies
 * alternate, so a crash at any moment leaves the previous checkpoint
 * intact: its pages are not touched, since the sectors a checkpoint
 * replaces stay allocated in the exported free map until its superblock is
 * durable (never reuse a sector before what dropped it is durable).
 *
 * What a checkpoint writes follows what changed, not the disk's size: a
 * page per changed 4 KiB of the trees.  A plan starts small: the changed
 * free-map leaves alone, their pointers listed in the superblock (the
 * overrides, fmtree.c), their pages placed inside leaves that are being
 * written anyway where there is room.  Only if that list would pass
 * ED_FM_MAX_OVER leaves does it become a full plan, which also rewrites the inner pages above every changed or
 * overridden leaf and empties the list.  Its new pages are allocated in the
 * free map, and the pages it replaces freed, in the durable map it is
 * writing - which changes more free-map leaves, which must be written too;
 * planning repeats until nothing new appears (each page is planned once,
 * so it ends).  Commits wait while a checkpoint runs (the trees must not
 * change under it); checkpoints start when the log is half full, when the
 * dirty pages pass half the tree cache, and at shutdown.
 */
#include "kernel/exodisk/edcore.h"

static void ck_done(struct blkreq *r);

#define ITEMS_PER_PAGE (ED_PAGE / sizeof(struct ck_item))

static uint64_t sb_sector(uint64_t gen)
{
	return (gen & 1) ? ED_SB_A : ED_SB_B;
}

/* ---- the plan: a list of items in pages --------------------------------------------- */

static struct ck_item *item_at(struct ed_disk *d, uint32_t i)
{
	return ed_pvec_elem(&d->ck_items, sizeof(struct ck_item), i);
}

/* Room for twice as many items: a new vector, the old one copied in. */
static int items_grow(struct ed_disk *d)
{
	struct ed_pvec nv;
	uint32_t npages = d->ck_items.npages ? 2 * d->ck_items.npages : 4;
	int err = ed_pvec_alloc(&d->ed->env, &nv, npages);
	if (err != 0)
		return err;
	for (uint32_t i = 0; i < d->ck_items.npages; i++)
		ed_memcpy(ed_pvec_page(&nv, i), ed_pvec_page(&d->ck_items, i), ED_PAGE);
	d->mem_pages += npages - d->ck_items.npages;
	ed_pvec_free(&d->ed->env, &d->ck_items);
	d->ck_items = nv;
	return 0;
}

static struct ck_item *item_new(struct ed_disk *d)
{
	uint32_t cap = d->ck_items.npages * (uint32_t)ITEMS_PER_PAGE;
	if (d->ck_nitems == cap && items_grow(d) != 0)
		return NULL;
	struct ck_item *it = item_at(d, d->ck_nitems++);
	ed_memset(it, 0, sizeof(*it));
	return it;
}

/* Scratch while planning: the item of each free-map node planned, by level
 * and index (item number + 1). */
struct plan {
	struct ed_spa itemof[ED_FMT_MAX_HEIGHT + 1];
	int err;
	bool full;                 /* inner pages too (else the leaves and overrides) */
};


static struct ck_item *item_of(struct ed_disk *d, struct plan *p, uint32_t level, uint64_t index)
{
	void **slot = ed_spa_slot(&p->itemof[level], index, false);
	return slot == NULL || *slot == NULL ? NULL : item_at(d, (uint32_t)((uintptr_t)*slot - 1));
}

static int free_old(struct ed_disk *d, struct ck_item *it)
{
	if (it->old.sector <= ED_MPTR_ONES)
		return 0;
	/* Free in the map being written; in the exported map only once this
	 * checkpoint is durable (memory for that is taken now). */
	int err = ed_dfm_clear(d, it->old.sector, ED_SECT_PER_PAGE);
	if (err == 0)
		err = ed_bm_prepare(&d->fm, it->old.sector, ED_SECT_PER_PAGE, false);
	if (err == 0) {
		it->flags |= CKI_FREED;
		d->meta_pages--;
	}
	return err;
}

static struct plan *cur_plan;

static void gone_cb(struct ed_disk *d, const struct ed_mptr *p)
{
	if (p->sector <= ED_MPTR_ONES || cur_plan->err != 0)
		return;
	struct ck_item *it = item_new(d);
	if (it == NULL) {
		cur_plan->err = ED_E_NOMEM;
		return;
	}
	it->type = CKI_GONE;
	it->old = *p;
	cur_plan->err = free_old(d, it);
}

static int add_bt(struct ed_disk *d, struct ed_bnode *n)
{
	struct ck_item *it = item_new(d);
	if (it == NULL)
		return ED_E_NOMEM;
	it->type = CKI_BT;
	it->node = n;
	it->old = n->old;
	return free_old(d, it);
}

/* Items for free-map node (level, idx) and those above it not yet planned
 * (a small plan: the leaf alone); returns how many were added (or a
 * negative error). */
static int plan_up(struct ed_disk *d, struct plan *p, uint32_t level, uint64_t idx)
{
	int added = 0;
	uint32_t top = p->full ? d->fmt_height : 0;
	for (; level <= top; level++, idx /= ED_FMT_FANOUT) {
		if (item_of(d, p, level, idx) != NULL)
			break;
		struct ed_mptr *ptr = ed_fmt_ptr(d, level, idx, true);
		void **slot = ed_spa_slot(&p->itemof[level], idx, true);
		struct ck_item *it = item_new(d);
		if (ptr == NULL || slot == NULL || it == NULL)
			return ED_E_NOMEM;
		*slot = (void *)(uintptr_t)d->ck_nitems;
		/* Inner nodes on the way get images now: sealing fills them. */
		if (level > 0 && ed_fmt_image(d, level, idx, true) == NULL)
			return ED_E_NOMEM;
		it->type = level == 0 ? CKI_FMLEAF : CKI_FMINNER;
		it->level = (uint8_t)level;
		it->index = idx;
		it->old = *ptr;
		int err = free_old(d, it);
		if (err != 0)
			return err;
		added++;
	}
	return added;
}

/* Items for the dirty free-map leaves not yet planned, and the inner nodes
 * above them.  Returns how many were added (or a negative error). */
static int plan_fm(struct ed_disk *d, struct plan *p)
{
	int added = 0;
	for (uint64_t li = ed_bm_next(&d->fm_dirty, 0, true); li < d->fm_dirty.nbits;
	     li = ed_bm_next(&d->fm_dirty, li + 1, true)) {
		if (item_of(d, p, 0, li) != NULL)
			continue;
		int n = plan_up(d, p, 0, li);
		if (n < 0)
			return n;
		added += n;
	}
	return added;
}

/* Leaves a small plan would list in the superblock: those it writes and
 * those earlier small plans listed. */
static uint32_t over_count(struct ed_disk *d, struct plan *p)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < d->ck_nitems; i++)
		n += item_at(d, i)->type == CKI_FMLEAF;
	for (uint32_t i = 0; i < d->fm_nover; i++)
		n += item_of(d, p, 0, d->fm_over[i]) == NULL;
	return n;
}

/* Too much for a small plan: the inner pages above every leaf planned and
 * every overridden leaf join it. */
static int go_full(struct ed_disk *d, struct plan *p)
{
	p->full = true;
	uint32_t n = d->ck_nitems;
	for (uint32_t i = 0; i < n; i++) {
		struct ck_item *it = item_at(d, i);
		if (it->type != CKI_FMLEAF)
			continue;
		int err = plan_up(d, p, 1, it->index / ED_FMT_FANOUT);
		if (err < 0)
			return err;
	}
	for (uint32_t i = 0; i < d->fm_nover; i++) {
		int err = plan_up(d, p, 1, d->fm_over[i] / ED_FMT_FANOUT);
		if (err < 0)
			return err;
	}
	return 0;
}

/* Does a free-map leaf need a page, or will a ZERO/ONES pointer say it? */
static bool leaf_uniform(struct ed_disk *d, uint64_t li, uint64_t *marker)
{
	void *mk;
	const uint64_t *w = ed_bm_leaf(&d->dfm, li, &mk);
	if (w == NULL) {
		*marker = mk == ED_BM_ONES ? ED_MPTR_ONES : ED_MPTR_ZERO;
		return true;
	}
	uint64_t valid = ED_MIN(ED_BM_LEAF_BITS, d->nsectors - li * ED_BM_LEAF_BITS), c = 0;
	for (uint32_t i = 0; i < ED_PAGE / 8; i++)
		c += (uint64_t)__builtin_popcountll(w[i]);
	*marker = c == 0 ? ED_MPTR_ZERO : ED_MPTR_ONES;
	return c == 0 || c == valid;
}

/* Will free-map node (level, index) be a page, or a ZERO/ONES pointer
 * (*mk)?  A leaf, by its bits; an inner node, by what its children will be:
 * all the same marker, and it is that marker too. */
static bool fm_needs_page(struct ed_disk *d, struct plan *p, uint32_t level, uint64_t index,
                          uint64_t *mk)
{
	if (level == 0)
		return !leaf_uniform(d, index, mk);
	const struct ed_mptr *e = (const struct ed_mptr *)
		(ed_fmt_image(d, level, index, false) + sizeof(struct ed_fmhdr));
	uint64_t below = ed_fmt_level_nodes(d, level - 1), want = UINT64_MAX;
	for (uint32_t k = 0; k < ED_FMT_FANOUT && index * ED_FMT_FANOUT + k < below; k++) {
		uint64_t v;
		const struct ck_item *c = item_of(d, p, level - 1, index * ED_FMT_FANOUT + k);
		if (c != NULL) {
			if (c->flags & CKI_ALLOCATED)
				return true;
			v = c->marker;
		} else {
			v = e[k].sector;
			if (v > ED_MPTR_ONES)
				return true;
		}
		if (want != UINT64_MAX && v != want)
			return true;
		want = v;
	}
	*mk = want == UINT64_MAX ? ED_MPTR_ZERO : want;
	return false;
}

static int claim(struct ed_disk *d, struct ck_item *it)
{
	uint32_t got;
	uint64_t s = ed_mspace_alloc(d, 1, &got);
	if (s == 0)
		return ED_E_NOSPACE;
	it->sector = s;
	it->flags |= CKI_ALLOCATED;
	d->meta_pages++;
	return 0;
}

/* Claim new places for items that need one, binding-tree nodes first, then
 * the free map's nodes level by level upwards (a node's decision rests on
 * its children's); returns how many got one. */
static int place(struct ed_disk *d, struct plan *p)
{
	int placed = 0;
	for (uint32_t i = 0; i < d->ck_nitems; i++) {
		struct ck_item *it = item_at(d, i);
		if (it->type != CKI_BT || (it->flags & CKI_ALLOCATED))
			continue;
		int err = claim(d, it);
		if (err != 0)
			return err;
		placed++;
	}
	for (uint32_t level = 0; level <= d->fmt_height; level++)
		for (uint32_t i = 0; i < d->ck_nitems; i++) {
			struct ck_item *it = item_at(d, i);
			if ((it->type != CKI_FMLEAF && it->type != CKI_FMINNER) || it->level != level ||
			    (it->flags & CKI_ALLOCATED))
				continue;
			if (!fm_needs_page(d, p, level, it->index, &it->marker))
				continue;
			int err = claim(d, it);
			if (err != 0)
				return err;
			placed++;
		}
	return placed;
}

/* Heap sort of the items by place (those with none first), so that what is
 * written goes out in runs of consecutive pages. */
static bool item_before(struct ed_disk *d, uint32_t a, uint32_t b)
{
	return item_at(d, a)->sector < item_at(d, b)->sector;
}

static void item_swap(struct ed_disk *d, uint32_t a, uint32_t b)
{
	struct ck_item t = *item_at(d, a);
	*item_at(d, a) = *item_at(d, b);
	*item_at(d, b) = t;
}

static void sift(struct ed_disk *d, uint32_t i, uint32_t n)
{
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && item_before(d, c, c + 1))
			c++;
		if (!item_before(d, i, c))
			return;
		item_swap(d, i, c);
		i = c;
	}
}

static void sort_items(struct ed_disk *d)
{
	uint32_t n = d->ck_nitems;
	for (uint32_t i = n / 2; i-- > 0; )
		sift(d, i, n);
	for (uint32_t end = n; end-- > 1; ) {
		item_swap(d, 0, end);
		sift(d, 0, end);
	}
}

static void seal_ptr(struct ed_disk *d, struct ck_item *it, struct ed_mptr *ptr, const void *page,
                     int dom)
{
	if (page == NULL) {
		ed_memset(ptr, 0, sizeof(*ptr));
		ptr->sector = it->sector;       /* a marker */
	} else {
		ptr->sector = it->sector;
		ed_mpage_tag(&d->ed->keys, dom, d->sb.uuid, it->sector, page, ptr->tag);
	}
	it->flags |= CKI_SEALED;
}

/* Compute every page's tag, children before parents, into the pointers. */
static int seal(struct ed_disk *d)
{
	for (uint32_t level = 0; level <= d->fmt_height; level++)
		for (uint32_t i = 0; i < d->ck_nitems; i++) {
			struct ck_item *it = item_at(d, i);
			if ((it->type != CKI_FMLEAF && it->type != CKI_FMINNER) || it->level != level)
				continue;
			struct ed_mptr *ptr = ed_fmt_ptr(d, level, it->index, true);
			if (ptr == NULL)
				return ED_E_NOMEM;
			if (!(it->flags & CKI_ALLOCATED)) {
				it->sector = it->marker;         /* a uniform leaf, or a subtree */
				it->src = NULL;
			} else if (level == 0) {
				if ((it->src = ed_bm_own(&d->dfm, it->index)) == NULL)
					return ED_E_NOMEM;      /* its own copy: fm may change meanwhile */
			} else {
				it->src = ed_fmt_image(d, level, it->index, false);
			}
			seal_ptr(d, it, ptr, it->src, ED_DOM_FMAP);
		}
	for (uint32_t i = 0; i < d->ck_nitems; i++) {
		struct ck_item *it = item_at(d, i);
		if (it->type != CKI_BT)
			continue;
		uint8_t tag[16];
		it->node->new_sector = it->sector;
		it->src = it->node->page;
		ed_mpage_tag(&d->ed->keys, ED_DOM_BTREE, d->sb.uuid, it->sector, it->src, tag);
		ed_bt_seal(d, it->node, tag);
		it->flags |= CKI_SEALED;
	}
	return 0;
}

/* Undo a plan that will not become durable: the trees and maps are again
 * what the last checkpoint and the log say. */
static void unplan(struct ed_disk *d)
{
	for (uint32_t i = d->ck_nitems; i-- > 0; ) {
		struct ck_item *it = item_at(d, i);
		if (it->flags & CKI_SEALED) {
			if (it->type == CKI_BT)
				ed_bt_restore(d, it->node);
			else if (it->type != CKI_GONE)
				*ed_fmt_ptr(d, it->level, it->index, true) = it->old;
		}
		if (it->type == CKI_BT)
			it->node->new_sector = 0;
		if (it->flags & CKI_ALLOCATED) {
			(void)ed_dfm_clear(d, it->sector, ED_SECT_PER_PAGE);
			(void)ed_bm_clear(&d->fm, it->sector, ED_SECT_PER_PAGE);
			d->meta_pages--;
		}
		if (it->flags & CKI_FREED) {
			(void)ed_dfm_set(d, it->old.sector, ED_SECT_PER_PAGE);
			d->meta_pages++;
		}
		/* A node cleanup dropped is gone from memory: its page is freed
		 * by the next checkpoint that succeeds. */
		if (it->type == CKI_GONE && d->ck_gone_n < ED_NELEM(d->ck_gone))
			d->ck_gone[d->ck_gone_n++] = it->old;
	}
	d->ck_nitems = 0;
}

static int plan(struct exodisk *ed, struct ed_disk *d)
{
	d->ck_nitems = 0;
	d->ck_next = 0;
	d->ck_written = 0;
	d->meta_cursor = 0;        /* each checkpoint looks from the top down again */
	struct plan *p = ed->env.page_alloc(ed->env.ctx);
	if (p == NULL)
		return ED_E_NOMEM;
	_Static_assert(sizeof(struct plan) <= ED_PAGE, "plan scratch fits a page");
	for (uint32_t l = 0; l <= ED_FMT_MAX_HEIGHT; l++)
		p->itemof[l].env = &ed->env;
	cur_plan = p;
	/* Pages dropped by an earlier checkpoint that failed. */
	for (uint32_t i = 0; i < d->ck_gone_n && p->err == 0; i++)
		gone_cb(d, &d->ck_gone[i]);
	d->ck_gone_n = 0;
	if (p->err == 0)
		ed_bt_cleanup(d, gone_cb);
	int err = p->err;
	if (err == 0)
		err = ed_bt_plan(d, add_bt);
	/* Free-map leaves, then places for everything; both change the
	 * durable map, which may bring more leaves: until nothing new. */
	for (int round = 0; err == 0; round++) {
		int added = plan_fm(d, p);
		if (added >= 0 && !p->full && over_count(d, p) > ED_FM_MAX_OVER) {
			err = go_full(d, p);
			continue;
		}
		int placed = added < 0 ? added : place(d, p);
		if (added < 0 || placed < 0)
			err = added < 0 ? added : placed;
		else if (added == 0 && placed == 0)
			break;        /* (small enough, or full: the test above; place adds no leaves) */
	}
	if (err == 0)
		err = seal(d);
	if (err == 0)
		sort_items(d);
	bool full = p->full;
	for (uint32_t l = 0; l <= ED_FMT_MAX_HEIGHT; l++)
		ed_spa_free(&p->itemof[l], NULL, NULL);
	ed->env.page_free(ed->env.ctx, p);
	cur_plan = NULL;
	if (err != 0) {
		unplan(d);
		return err;
	}
	/* The superblock that will name it all. */
	struct ed_super *sb = &d->ck_sb;
	*sb = d->sb;
	sb->fmt = ED_SB_FMT;
	ed_memset(sb->fm_over, 0, sizeof(sb->fm_over));
	sb->fm_nover = 0;
	if (!full) {
		/* The leaves listed before, and those written now (their pointers
		 * are in the images, sealed). */
		for (uint32_t i = 0; i < d->fm_nover; i++)
			sb->fm_over[sb->fm_nover++].leaf = d->fm_over[i];
		for (uint32_t i = 0; i < d->ck_nitems; i++) {
			struct ck_item *it = item_at(d, i);
			bool listed = false;
			for (uint32_t j = 0; j < d->fm_nover; j++)
				listed |= d->fm_over[j] == it->index;
			if (it->type == CKI_FMLEAF && !listed)
				sb->fm_over[sb->fm_nover++].leaf = it->index;
		}
		for (uint32_t i = 0; i < sb->fm_nover; i++)
			sb->fm_over[i].ptr = *ed_fmt_ptr(d, 0, sb->fm_over[i].leaf, true);
	}
	sb->gen++;
	sb->bt_root = d->bt_root;
	sb->bt_height = d->bt_height;
	sb->bindings = d->bt_count;
	sb->fm_root = d->fmt_root;
	sb->fm_height = d->fmt_height;
	sb->allocated = d->dfm.count;
	sb->meta_pages = d->meta_pages;
	sb->log_pos = d->log_head;
	sb->log_seq = d->log_seq;
	ed_memcpy(sb->log_chain, d->log_chain, 16);
	sb->flags = d->ck_clean ? ED_SBF_CLEAN : 0;
	ed_super_seal(&ed->keys, sb, sb_sector(sb->gen));
	return 0;
}

/* The superblock is durable: the replaced pages are free for everyone.
 * (If its write failed it may have landed all the same: then the new
 * state is taken as current too, but the replaced pages stay allocated in
 * the exported map - either superblock may be the one on disk - until the
 * next mount reads which.) */
static void finish(struct exodisk *ed, struct ed_disk *d, bool release)
{
	d->sb = d->ck_sb;
	d->fm_nover = d->sb.fm_nover;
	for (uint32_t i = 0; i < d->fm_nover; i++)
		d->fm_over[i] = d->sb.fm_over[i].leaf;
	for (uint32_t i = 0; i < d->ck_nitems; i++) {
		struct ck_item *it = item_at(d, i);
		if ((it->flags & CKI_FREED) && release) {
			(void)ed_bm_clear(&d->fm, it->old.sector, ED_SECT_PER_PAGE);
			ed_fm_tidy(d, it->old.sector, ED_SECT_PER_PAGE);
		}
		if (it->type == CKI_BT)
			ed_bt_clean(d, it->node);
		else if (it->type == CKI_FMLEAF)
			ed_fm_tidy(d, it->index * ED_BM_LEAF_BITS, 1);
		else if (it->type == CKI_FMINNER && !(it->flags & CKI_ALLOCATED))
			ed_fmt_drop_image(d, it->level, it->index);     /* a marker now */
	}
	d->ck_nitems = 0;
	ed_bm_free(&d->fm_dirty);
	ed_bm_init(&d->fm_dirty, &ed->env, ed_bm_nleaves(&d->fm), ED_BM_ZERO, &d->mem_pages);
	d->log_used = d->ck_carry_used;     /* the carry records stay live */
	d->ck_carry_used = 0;
	if (d->ck_took_fl && release)
		ed_unw_cycle_end(d);             /* durable, and the log says so now */
	ed_unw_tidy_all(d);
	d->ck_took_fl = false;
	d->ck_nospace = false;
	d->st_ckpts++;
	d->st_ckpt_sectors += d->ck_written;
	d->st_ckpt_last = d->ck_written;
	ed_bt_evict(d);
}

/* The next write: a run of items at consecutive sectors, from ck_next. */
static uint32_t next_run(struct ed_disk *d, uint64_t *sector)
{
	while (d->ck_next < d->ck_nitems && !(item_at(d, d->ck_next)->flags & CKI_ALLOCATED))
		d->ck_next++;
	uint32_t n = 0;
	while (d->ck_next < d->ck_nitems && n < BLK_MAX_SECTORS / ED_SECT_PER_PAGE) {
		struct ck_item *it = item_at(d, d->ck_next);
		if (!(it->flags & CKI_ALLOCATED)) {
			d->ck_next++;
			continue;
		}
		if (n > 0 && it->sector != *sector + (uint64_t)n * ED_SECT_PER_PAGE)
			break;
		if (n == 0)
			*sector = it->sector;
		d->ckseg[n++] = (struct blk_seg){ (uint64_t)(uintptr_t)it->src, ED_PAGE };
		d->ck_next++;
	}
	return n;
}

/* ---- the asynchronous checkpoint ----------------------------------------------------- */

static void ck_submit(struct ed_disk *d, int op, int flags, uint64_t sector, uint32_t nsect,
                      uint32_t nseg)
{
	struct blkreq *r = &d->ckreq;
	ed_memset(r, 0, sizeof(*r));
	r->op = (uint8_t)op;
	r->flags = (uint8_t)flags;
	r->unit = d->unit;
	r->sector = sector;
	r->nsectors = nsect;
	r->seg = nseg ? d->ckseg : NULL;
	r->nseg = (uint16_t)nseg;
	r->done = ck_done;
	r->priv = d;
	if (op == BLK_WRITE)
		d->ck_written += nsect;
	int err = blk_submit(r);
	if (err != 0) {
		r->status = err;
		ck_done(r);
	}
}

static void ck_abort(struct exodisk *ed, struct ed_disk *d, int err)
{
	ed_zero_open(ed, d);         /* writes held back for zeroing go */
	if (d->ck >= CK_WRITE)
		unplan(d);
	d->ck = CK_IDLE;
	d->ck_wanted = false;
	/* A set its first flush took stays in unw_fl, now the durable view's
	 * like any cycle's (the next cycle names it written). */
	d->ck_took_fl = false;
	d->ck_error = err;
	d->ck_nospace = err == ED_E_NOSPACE;
	d->closing = false;
	d->ck_clean = false;
	while (d->ck_waiters != NULL) {
		struct ed_io *io = d->ck_waiters;
		d->ck_waiters = io->next;
		ed_io_finish(ed, io, err);
	}
	while (d->ck_later != NULL) {
		struct ed_io *io = d->ck_later;
		d->ck_later = io->next;
		ed_io_finish(ed, io, err);
	}
	/* Write-backs waiting for room in the log cannot have it now. */
	ed_commit_kick(ed, d);
	ed_idle_wake(ed);
}

void ed_ckpt_request(struct exodisk *ed, struct ed_disk *d)
{
	d->ck_wanted = true;
	ed_ckpt_progress(ed, d);
}

bool ed_ckpt_due(const struct ed_disk *d)
{
	return ((uint64_t)d->bt_dirty + d->fm_dirty.count) * 2 > d->bt_budget;
}

bool ed_ckpt_room(struct ed_disk *d, uint64_t more_pages)
{
	return ed_fm_free_sectors(d) >= ed_fm_ckpt_need(d, more_pages);
}

void ed_ckpt_progress(struct exodisk *ed, struct ed_disk *d)
{
	if (!d->mounted)
		return;
	if (d->ck == CK_IDLE) {
		/* A shutdown lets write-backs and a running flush cycle finish
		 * first: what they make durable must not be carried as unwritten
		 * (unwritten.c). */
		if (!d->ck_wanted || d->log_busy || d->ck_hold ||
		    (d->closing && (d->commitq != NULL || d->fl_state != FL_IDLE)))
			return;
		d->ck = CK_WAIT;
		d->ck_error = 0;
		/* Every block committed since the last checkpoint must be at home
		 * (this also retries home writes that failed). */
		for (uint32_t i = 0; i < ed->cfg.cache_entries && d->ck == CK_WAIT; i++) {
			struct ed_entry *e = ed_cache_ent(ed, i);
			if (e->kind != 0 && e->unit == d->unit && (e->flags & EF_HOME_NEED))
				ed_home_try(ed, e);
		}
	}
	if (d->ck == CK_WAIT) {
		if (d->ck_error != 0) {
			ck_abort(ed, d, d->ck_error);
			return;
		}
		if (d->nhome > 0 || d->log_busy)
			return;
		d->ck = CK_FLUSH1;
		/* Writes completed by now are durable once this flush is: the
		 * checkpoint takes them as a flush cycle would (unwritten.c), so
		 * its carry records need not name them. */
		d->ck_took_fl = d->fl_state == FL_IDLE && d->unw_done.count != 0 &&
		                ed_unw_cycle_begin(d);
		ck_submit(d, BLK_FLUSH, 0, 0, 0, 0);
	}
}

/* The carry records are written: what they had no room for is zeroed
 * (zero.c), then the flush before the superblock. */
static void carry_end(struct exodisk *ed, struct ed_disk *d)
{
	d->ck = CK_ZERO;
	if (ed_zero_begin(ed, d))
		return;                   /* ed_ckpt_zeroed goes on */
	d->ck = CK_FLUSH2;
	ck_submit(d, BLK_FLUSH, 0, 0, 0, 0);
}

/* Before the carry records: which runs they hold (unwritten.c). */
static void carry_start(struct ed_disk *d)
{
	d->ck_carry_pos = 0;
	d->ck_ncarry = 0;
	d->ck_carry_used = 0;
	ed_unw_carry_plan(d, (uint64_t)ed_log_carry_cap() * ED_LOG_CARRY_MAX(d));
}

/* A carry record ended (commit.c, log_done).  Another follows while the
 * set has more and the reserve allows; then the checkpoint goes on. */
void ed_ckpt_carried(struct exodisk *ed, struct ed_disk *d, int status)
{
	if (status == 0) {
		d->ck_carry_used += d->batch_cost;
		d->ck_ncarry++;
	}
	if (d->ck != CK_CARRY) {          /* ed_ckpt_sync waits for it */
		d->ck_carry_err = status;
		return;
	}
	if (status != 0) {
		ck_abort(ed, d, status);
		return;
	}
	if (d->ck_carry_pos < d->nsectors && d->ck_ncarry < ED_LOG_CARRY_MAX(d) &&
	    ed_log_carry(ed, d))
		return;
	carry_end(ed, d);
}

/* The zeros are written (zero.c): the flush before the superblock makes
 * them durable with the rest. */
void ed_ckpt_zeroed(struct exodisk *ed, struct ed_disk *d, int status)
{
	if (d->ck != CK_ZERO)
		return;
	if (status != 0) {
		ck_abort(ed, d, status);
		return;
	}
	d->ck = CK_FLUSH2;
	ck_submit(d, BLK_FLUSH, 0, 0, 0, 0);
}

static void ck_done(struct blkreq *r)
{
	struct ed_disk *d = r->priv;
	struct exodisk *ed = d->ed;
	ed_lock(ed);
	if (r->status != 0 && d->ck == CK_SUPER) {
		finish(ed, d, false);
		d->ck = CK_IDLE;
		ck_abort(ed, d, r->status);
		ed_unlock(ed);
		return;
	}
	if (r->status != 0) {
		ck_abort(ed, d, r->status);
		ed_unlock(ed);
		return;
	}
	switch (d->ck) {
	case CK_FLUSH1: {
		int err = plan(ed, d);
		if (err != 0) {
			ck_abort(ed, d, err);
			break;
		}
		d->ck = CK_WRITE;
		__attribute__((fallthrough));     /* to write the first run */
	}
	case CK_WRITE: {
		uint64_t sector = 0;
		uint32_t n = next_run(d, &sector);
		if (n > 0) {
			ck_submit(d, BLK_WRITE, 0, sector, n * ED_SECT_PER_PAGE, n);
		} else {
			/* The unwritten set goes on in the log the superblock will
			 * name (unwritten.c), before the flush that precedes it. */
			d->ck = CK_CARRY;
			carry_start(d);
			if (!ed_log_carry(ed, d))
				carry_end(ed, d);
		}
		break;
	}
	case CK_FLUSH2:
		d->ck = CK_SUPER;
		ed_memcpy(d->cksec, &d->ck_sb, ED_SECTOR);
		d->ckseg[0] = (struct blk_seg){ (uint64_t)(uintptr_t)d->cksec, ED_SECTOR };
		ck_submit(d, BLK_WRITE, BLK_F_FUA, sb_sector(d->ck_sb.gen), 1, 1);
		break;
	case CK_SUPER:
		finish(ed, d, true);
		d->ck = CK_IDLE;
		d->ck_wanted = false;
		if (d->closing)
			d->closed = true;
		while (d->ck_waiters != NULL) {
			struct ed_io *io = d->ck_waiters;
			d->ck_waiters = io->next;
			ed_io_finish(ed, io, 0);
		}
		/* Checkpoint requests that came after this one planned. */
		while (d->ck_later != NULL) {
			struct ed_io *io = d->ck_later;
			d->ck_later = io->next;
			if (d->closed) {
				ed_io_finish(ed, io, ED_E_UNIT);
			} else {
				io->next = d->ck_waiters;
				d->ck_waiters = io;
				d->ck_wanted = true;
			}
		}
		ed_commit_kick(ed, d);
		ed_ckpt_progress(ed, d);
		break;
	default:
		break;
	}
	ed_idle_wake(ed);
	ed_unlock(ed);
}

/* The synchronous form: format (and nothing else is running). */
int ed_ckpt_sync(struct exodisk *ed, struct ed_disk *d, bool clean)
{
	d->ck_clean = clean;
	int err = plan(ed, d);
	d->ck_clean = false;
	if (err != 0)
		return err;
	for (;;) {
		uint64_t sector = 0;
		uint32_t n = next_run(d, &sector);
		if (n == 0)
			break;
		d->ck_written += (uint64_t)n * ED_SECT_PER_PAGE;
		err = ed_sync_io(ed, d->unit, BLK_WRITE, 0, sector, n * ED_SECT_PER_PAGE, d->ckseg, n);
		if (err != 0)
			break;
	}
	/* The unwritten set (a mount's replay rebuilt it) goes on in the log. */
	carry_start(d);
	while (err == 0 && d->ck_carry_pos < d->nsectors && d->ck_ncarry < ED_LOG_CARRY_MAX(d)) {
		d->ck_carry_err = 0;
		if (!ed_log_carry(ed, d))
			break;
		while (d->log_busy)
			ed->env.wait(ed->env.ctx);
		err = d->ck_carry_err;
	}
	/* What they had no room for is zeroed, before the flush. */
	if (err == 0)
		err = ed_zero_sync(ed, d);
	if (err == 0)
		err = ed_sync_io(ed, d->unit, BLK_FLUSH, 0, 0, 0, NULL, 0);
	if (err == 0) {
		ed_memcpy(d->cksec, &d->ck_sb, ED_SECTOR);
		d->ck_written++;
		err = ed_sync_rw(ed, d->unit, BLK_WRITE, sb_sector(d->ck_sb.gen), 1, d->cksec);
	}
	if (err == 0)
		err = ed_sync_io(ed, d->unit, BLK_FLUSH, 0, 0, 0, NULL, 0);
	if (err != 0) {
		unplan(d);
		return err;
	}
	finish(ed, d, true);
	return 0;
}

/* A superblock alone: a new generation naming the same trees and log
 * position (mount uses it to make its mount count durable). */
int ed_super_sync(struct exodisk *ed, struct ed_disk *d)
{
	struct ed_super sb = d->sb;
	sb.gen++;
	sb.flags = 0;
	sb.fmt = ED_SB_FMT;        /* from now on its log may hold format-2 records */
	ed_super_seal(&ed->keys, &sb, sb_sector(sb.gen));
	ed_memcpy(d->cksec, &sb, ED_SECTOR);
	struct blk_seg seg = { (uint64_t)(uintptr_t)d->cksec, ED_SECTOR };
	int err = ed_sync_io(ed, d->unit, BLK_WRITE, BLK_F_FUA, sb_sector(sb.gen), 1, &seg, 1);
	if (err == 0)
		d->sb = sb;
	return err;
}
