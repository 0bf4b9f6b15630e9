/*
 * btree.c - the binding tree: for every bound extent header and exonode
 * block of a unit, its kind, size and current version stamp.
 *
 * It answers two questions the exodisk must never get wrong.  "Is this
 * sector metadata at all?" - reading a header or exonode block requires a
 * binding, so an application cannot make the kernel interpret data it
 * wrote as protection metadata.  "Is this the current version?" - a block
 * read from disk must carry exactly the stamp recorded here, so an older
 * copy written back by someone with access to the raw disk is rejected.
 *
 * It is a B+tree keyed by sector, in 4 KiB pages on disk (ondisk.h), so it
 * holds as many bindings as the disk has room for.  Only the root is read
 * at mount; other pages are read as lookups need them and kept in memory,
 * at most bt_budget clean ones per unit (least recently used go first).
 * Changed pages stay in memory until a checkpoint writes them to new places
 * (ckpt.c): a change marks its node and all its ancestors dirty.
 *
 * Lookups run inside requests, which never wait for the disk: a lookup that
 * needs a page starts reading it and answers ED_E_WAIT, and the request is
 * retried when the page is in.  Changes are made when a log record is
 * durable, at a completion, where nothing may fail: before the record is
 * written, the leaf of each binding it changes is read in and pinned, and
 * whole nodes are set aside for any split (ed_bt_pin, ed_bt_reserve).
 * Emptied nodes are dropped at the next checkpoint.
 */
#include "kernel/exodisk/edcore.h"

static inline struct ed_bthdr *H(const struct ed_bnode *n)
{
	return (struct ed_bthdr *)n->page;
}
static inline struct ed_btrec *R(const struct ed_bnode *n)
{
	return (struct ed_btrec *)(n->page + sizeof(struct ed_bthdr));
}
static inline struct ed_btent *E(const struct ed_bnode *n)
{
	return (struct ed_btent *)(n->page + sizeof(struct ed_bthdr));
}
static inline uint64_t ksec(uint64_t key)
{
	return key & ED_BT_SECTOR_MASK;
}
static inline uint64_t mkkey(uint64_t sector, uint8_t kind, uint8_t nsect)
{
	return sector | (uint64_t)nsect << 48 | (uint64_t)kind << 56;
}

/* ---- descriptors and pages ---------------------------------------------------- */

#define DESC_PER_PAGE ((ED_PAGE - sizeof(void *)) / sizeof(struct ed_bnode))

static struct ed_bnode *desc_get(struct ed_disk *d)
{
	if (d->bt_free == NULL) {
		uint8_t *pg = ed_dpage_alloc(d);
		if (pg == NULL)
			return NULL;
		*(void **)pg = d->bt_descpages;
		d->bt_descpages = pg;
		struct ed_bnode *n = (struct ed_bnode *)(pg + sizeof(void *));
		for (uint32_t i = 0; i < DESC_PER_PAGE; i++) {
			n[i].lnext = d->bt_free;
			d->bt_free = &n[i];
		}
	}
	struct ed_bnode *n = d->bt_free;
	d->bt_free = n->lnext;
	ed_memset(n, 0, sizeof(*n));
	n->d = d;
	return n;
}

static void desc_put(struct ed_disk *d, struct ed_bnode *n)
{
	n->page = NULL;
	n->lnext = d->bt_free;
	d->bt_free = n;
}

/* A node with its page (and, for an inner node, its page of children). */
static struct ed_bnode *node_new(struct ed_disk *d, bool inner)
{
	struct ed_bnode *n = desc_get(d);
	if (n == NULL)
		return NULL;
	n->page = ed_dpage_alloc(d);
	if (n->page != NULL && inner && (n->kid = ed_dpage_alloc(d)) == NULL) {
		ed_dpage_free(d, n->page);
		n->page = NULL;
	}
	if (n->page == NULL) {
		desc_put(d, n);
		return NULL;
	}
	d->bt_resident++;
	return n;
}

static void node_del(struct ed_disk *d, struct ed_bnode *n)
{
	if (n->kid != NULL)
		ed_dpage_free(d, n->kid);
	ed_dpage_free(d, n->page);
	d->bt_resident--;
	desc_put(d, n);
}

/* A spare node set aside earlier becomes a real one. */
static struct ed_bnode *spare_take(struct ed_disk *d, bool inner)
{
	struct ed_bnode *n = d->bt_spare;
	if (n == NULL)
		return NULL;        /* cannot happen when ed_bt_reserve was called */
	d->bt_spare = n->lnext;
	d->bt_nspare--;
	n->lnext = NULL;
	if (!inner && n->kid != NULL) {
		ed_dpage_free(d, n->kid);
		n->kid = NULL;
	}
	ed_memset(n->page, 0, ED_PAGE);
	if (n->kid != NULL)
		ed_memset(n->kid, 0, ED_PAGE);
	d->bt_resident++;
	return n;
}

int ed_bt_reserve(struct ed_disk *d, uint32_t inserts)
{
	uint32_t want = inserts * (d->bt_height + 2);
	while (d->bt_nspare < want) {
		struct ed_bnode *n = node_new(d, true);
		if (n == NULL)
			return ED_E_NOMEM;
		d->bt_resident--;             /* not part of the tree yet */
		n->lnext = d->bt_spare;
		d->bt_spare = n;
		d->bt_nspare++;
	}
	return 0;
}

/* Keep a few spares; give the rest back (after a record is applied). */
static void spares_trim(struct ed_disk *d, uint32_t keep)
{
	while (d->bt_nspare > keep) {
		struct ed_bnode *n = d->bt_spare;
		d->bt_spare = n->lnext;
		d->bt_nspare--;
		d->bt_resident++;
		node_del(d, n);
	}
}

/* ---- the LRU of clean nodes ------------------------------------------------------- */

static void lru_remove(struct ed_disk *d, struct ed_bnode *n)
{
	if (!(n->flags & BN_LRU))
		return;
	if (n->lprev != NULL)
		n->lprev->lnext = n->lnext;
	else
		d->bt_lru_head = n->lnext;
	if (n->lnext != NULL)
		n->lnext->lprev = n->lprev;
	else
		d->bt_lru_tail = n->lprev;
	n->lprev = n->lnext = NULL;
	n->flags &= ~BN_LRU;
}

static void lru_push(struct ed_disk *d, struct ed_bnode *n)
{
	lru_remove(d, n);
	if (n->flags & (BN_DIRTY | BN_LOADING))
		return;
	n->lprev = NULL;
	n->lnext = d->bt_lru_head;
	if (d->bt_lru_head != NULL)
		d->bt_lru_head->lprev = n;
	else
		d->bt_lru_tail = n;
	d->bt_lru_head = n;
	n->flags |= BN_LRU;
}

/* Which entry of its parent n is. */
static uint32_t kid_index(const struct ed_bnode *n)
{
	const struct ed_bnode *p = n->parent;
	for (uint32_t i = 0; i < H(p)->n; i++)
		if (p->kid[i] == n)
			return i;
	return 0;       /* not reached: a resident node is its parent's child */
}

struct ed_mptr *ed_bt_ptr_of(struct ed_disk *d, struct ed_bnode *n)
{
	return n->parent == NULL ? &d->bt_root : &E(n->parent)[kid_index(n)].ptr;
}

/* Forget a resident node that is clean and has no resident children. */
static void drop_node(struct ed_disk *d, struct ed_bnode *n)
{
	struct ed_bnode *p = n->parent;
	if (p != NULL) {
		p->kid[kid_index(n)] = NULL;
		p->nkids--;
	}
	lru_remove(d, n);
	node_del(d, n);
}

void ed_bt_evict(struct ed_disk *d)
{
	struct ed_bnode *n = d->bt_lru_tail;
	while (d->bt_resident > d->bt_budget && n != NULL) {
		struct ed_bnode *prev = n->lprev;
		if (n != d->bt && n->nkids == 0 && n->pins == 0 &&
		    !(n->flags & (BN_DIRTY | BN_LOADING)) && n->new_sector == 0)
			drop_node(d, n);
		n = prev;
	}
}

static void mark_dirty(struct ed_disk *d, struct ed_bnode *n)
{
	for (; n != NULL && !(n->flags & BN_DIRTY); n = n->parent) {
		n->flags |= BN_DIRTY;
		lru_remove(d, n);
		d->bt_dirty++;
	}
}

/* ---- reading pages in -------------------------------------------------------------- */

/* Is the page a well-formed node of this level, its keys in order and
 * within [lo, hi) (hi = 0: no upper bound)? */
static int node_ok(const struct ed_bnode *n, uint32_t level, uint64_t lo, uint64_t hi)
{
	const struct ed_bthdr *h = H(n);
	uint32_t max = level == 0 ? ED_BT_LEAF_MAX : ED_BT_INNER_MAX;
	if (h->magic != ED_BT_MAGIC || h->fmt != ED_TREE_FMT || h->level != level || h->n > max ||
	    h->reserved != 0 || (level > 0 && h->n == 0))
		return ED_E_CORRUPT;
	uint64_t prev = lo;
	for (uint32_t i = 0; i < h->n; i++) {
		uint64_t k = level == 0 ? R(n)[i].key : E(n)[i].key;
		uint64_t s = ksec(k);
		if ((i > 0 && s <= prev) || s < lo || (hi != 0 && s >= hi))
			return ED_E_CORRUPT;
		if (level == 0) {
			uint8_t kind = (uint8_t)(k >> 56), ns = (uint8_t)(k >> 48);
			if ((kind != ED_KIND_EXTENT && kind != ED_KIND_XNBLK) || ns < 1 ||
			    ns > ED_XN_MAX_SECT || R(n)[i].stamp == 0)
				return ED_E_CORRUPT;
		} else if (k != s || E(n)[i].ptr.sector < 2) {
			return ED_E_CORRUPT;
		}
		prev = s;
	}
	return 0;
}

/* Keys the child of entry i may hold: [lo, hi); hi = 0 means no bound. */
static void child_bounds(const struct ed_bnode *p, uint32_t i, uint64_t *lo, uint64_t *hi)
{
	*lo = ksec(E(p)[i].key);
	*hi = i + 1 < H(p)->n ? ksec(E(p)[i + 1].key) : 0;
	for (const struct ed_bnode *a = p; *hi == 0 && a->parent != NULL; a = a->parent) {
		uint32_t j = kid_index(a);
		if (j + 1 < H(a->parent)->n)
			*hi = ksec(E(a->parent)[j + 1].key);
	}
}

static int verify(struct ed_disk *d, struct ed_bnode *n, const struct ed_mptr *ptr,
                  uint32_t level, uint64_t lo, uint64_t hi)
{
	uint8_t tag[16];
	ed_mpage_tag(&d->ed->keys, ED_DOM_BTREE, d->sb.uuid, ptr->sector, n->page, tag);
	int err = ed_tag_equal(tag, ptr->tag) ? node_ok(n, level, lo, hi) : ED_E_BADMAC;
	if (err != 0)
		d->ed->bad_sector = ptr->sector;
	return err;
}

static void load_done(struct blkreq *r)
{
	struct ed_bnode *n = r->priv;
	struct ed_disk *d = n->d;
	struct exodisk *ed = d->ed;
	ed_lock(ed);
	d->bt_loading--;
	d->st_meta_reads++;
	n->flags &= ~BN_LOADING;
	int err = r->status;
	if (err == 0) {
		uint32_t i = kid_index(n);
		uint64_t lo, hi;
		child_bounds(n->parent, i, &lo, &hi);
		err = verify(d, n, &E(n->parent)[i].ptr, H(n->parent)->level - 1u, lo, hi);
	}
	if (err != 0) {
		n->flags |= BN_FAILED;
		n->err = err;
	} else {
		if (H(n)->level > 0 && n->kid == NULL && (n->kid = ed_dpage_alloc(d)) == NULL) {
			n->flags |= BN_FAILED;
			n->err = ED_E_NOMEM;
		}
		lru_push(d, n);
	}
	ed_meta_loaded(ed, d);
	ed_unlock(ed);
}

/* Start reading child i of p.  Returns ED_E_WAIT (or an error). */
static int start_load(struct ed_disk *d, struct ed_bnode *p, uint32_t i)
{
	p->pins++;               /* not p itself */
	ed_bt_evict(d);
	p->pins--;
	struct ed_bnode *n = node_new(d, false);
	if (n == NULL)
		return ED_E_NOMEM;
	n->parent = p;
	n->flags = BN_LOADING;
	p->kid[i] = n;
	p->nkids++;
	d->bt_loading++;
	n->seg = (struct blk_seg){ (uint64_t)(uintptr_t)n->page, ED_PAGE };
	struct blkreq *r = &n->req;
	ed_memset(r, 0, sizeof(*r));
	r->op = BLK_READ;
	r->unit = d->unit;
	r->sector = E(p)[i].ptr.sector;
	r->nsectors = ED_SECT_PER_PAGE;
	r->seg = &n->seg;
	r->nseg = 1;
	r->done = load_done;
	r->priv = n;
	int err = blk_submit(r);
	if (err != 0) {
		r->status = err;
		load_done(r);
	}
	return ED_E_WAIT;
}

/* ---- finding --------------------------------------------------------------------------- */

/* Entry of inner node n whose child holds key sector s. */
static uint32_t route(const struct ed_bnode *n, uint64_t s)
{
	uint32_t lo = 0, hi = H(n)->n;      /* the last entry with key <= s, or 0 */
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (ksec(E(n)[mid].key) <= s)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Position of the first record with sector >= s in leaf n. */
static uint32_t leaf_pos(const struct ed_bnode *n, uint64_t s)
{
	uint32_t lo = 0, hi = H(n)->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (ksec(R(n)[mid].key) < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Down to the leaf for sector s: 0 and *leaf, ED_E_NOTBOUND (no tree),
 * ED_E_WAIT (a page is on its way), or the error a page failed with.
 * *upper gets the first key beyond the leaf (0: none). */
static int descend(struct ed_disk *d, uint64_t s, struct ed_bnode **leaf, uint64_t *upper)
{
	struct ed_bnode *n = d->bt;
	if (n == NULL)
		return ED_E_NOTBOUND;
	if (upper != NULL)
		*upper = 0;
	while (H(n)->level > 0) {
		uint32_t i = route(n, s);
		if (upper != NULL && i + 1 < H(n)->n)
			*upper = ksec(E(n)[i + 1].key);
		struct ed_bnode *k = n->kid[i];
		if (k == NULL)
			return start_load(d, n, i);
		if (k->flags & BN_LOADING)
			return ED_E_WAIT;
		if (k->flags & BN_FAILED) {
			int err = k->err;
			if (k->nkids == 0)
				drop_node(d, k);     /* the next attempt reads it again */
			return err;
		}
		lru_push(d, k);
		n = k;
	}
	*leaf = n;
	return 0;
}

int ed_bt_get(struct ed_disk *d, uint64_t sector, struct ed_vtrec *out)
{
	struct ed_bnode *leaf;
	int err = descend(d, sector, &leaf, NULL);
	if (err != 0)
		return err;
	uint32_t i = leaf_pos(leaf, sector);
	if (i >= H(leaf)->n || ksec(R(leaf)[i].key) != sector)
		return ED_E_NOTBOUND;
	uint64_t k = R(leaf)[i].key;
	ed_memset(out, 0, sizeof(*out));
	out->sector = sector;
	out->stamp = R(leaf)[i].stamp;
	out->kind = (uint8_t)(k >> 56);
	out->nsect = (uint8_t)(k >> 48);
	return 0;
}

/* Let pages come in (format, mount, check: nothing else runs). */
static void wait_loads(struct ed_disk *d)
{
	while (d->bt_loading > 0)
		d->ed->env.wait(d->ed->env.ctx);
}

int ed_bt_get_sync(struct ed_disk *d, uint64_t sector, struct ed_vtrec *out)
{
	int err;
	while ((err = ed_bt_get(d, sector, out)) == ED_E_WAIT)
		wait_loads(d);
	return err;
}

int ed_bt_next_sync(struct ed_disk *d, uint64_t from, struct ed_vtrec *out)
{
	for (;;) {
		struct ed_bnode *leaf;
		uint64_t upper;
		int err = descend(d, from, &leaf, &upper);
		if (err == ED_E_WAIT) {
			wait_loads(d);
			continue;
		}
		if (err != 0)
			return err;
		uint32_t i = leaf_pos(leaf, from);
		if (i < H(leaf)->n) {
			uint64_t k = R(leaf)[i].key;
			ed_memset(out, 0, sizeof(*out));
			out->sector = ksec(k);
			out->stamp = R(leaf)[i].stamp;
			out->kind = (uint8_t)(k >> 56);
			out->nsect = (uint8_t)(k >> 48);
			return 0;
		}
		if (upper == 0 || upper <= from)
			return ED_E_NOTBOUND;
		from = upper;
	}
}

/* ---- changing ---------------------------------------------------------------------------- */

int ed_bt_pin(struct ed_disk *d, uint64_t sector, struct ed_bnode **leaf)
{
	*leaf = NULL;
	if (d->bt == NULL)
		return 0;            /* an empty tree: the root leaf is made from a spare */
	int err = descend(d, sector, leaf, NULL);
	if (err != 0)
		return err;
	(*leaf)->pins++;
	return 0;
}

void ed_bt_unpin(struct ed_disk *d, struct ed_bnode *leaf)
{
	if (leaf != NULL && leaf->pins > 0)
		leaf->pins--;
}

void ed_bt_spares_trim(struct ed_disk *d)
{
	spares_trim(d, 8);
}

/* Put entry (key, child) at position i of inner node p, which has room. */
static void inner_insert(struct ed_bnode *p, uint32_t i, uint64_t key, struct ed_bnode *child)
{
	uint32_t n = H(p)->n;
	ed_memmove(&E(p)[i + 1], &E(p)[i], (n - i) * sizeof(struct ed_btent));
	ed_memmove(&p->kid[i + 1], &p->kid[i], (n - i) * sizeof(p->kid[0]));
	ed_memset(&E(p)[i], 0, sizeof(struct ed_btent));
	E(p)[i].key = key;
	p->kid[i] = child;
	p->nkids++;
	child->parent = p;
	H(p)->n = (uint16_t)(n + 1);
}

static void init_node(struct ed_bnode *n, uint32_t level)
{
	H(n)->magic = ED_BT_MAGIC;
	H(n)->fmt = ED_TREE_FMT;
	H(n)->level = (uint8_t)level;
	H(n)->n = 0;
}

/* n has just split off `right` (keys >= key): hang it beside n in n's
 * parent, splitting parents (and growing a new root) as needed. */
static void add_sibling(struct ed_disk *d, struct ed_bnode *n, uint64_t key, struct ed_bnode *right)
{
	struct ed_bnode *p = n->parent;
	if (p == NULL) {
		/* n was the root: a new root above the two. */
		struct ed_bnode *root = spare_take(d, true);
		init_node(root, H(n)->level + 1u);
		inner_insert(root, 0, 0, n);
		inner_insert(root, 1, key, right);
		E(root)[0].ptr = d->bt_root;       /* n's place on disk, if any */
		ed_memset(&d->bt_root, 0, sizeof(d->bt_root));
		d->bt = root;
		d->bt_height++;
		mark_dirty(d, root);
		return;
	}
	uint32_t at = kid_index(n) + 1;
	if (H(p)->n < ED_BT_INNER_MAX) {
		inner_insert(p, at, key, right);
		mark_dirty(d, p);
		return;
	}
	/* Split p: the upper half of its entries (and their children) go right. */
	struct ed_bnode *pr = spare_take(d, true);
	init_node(pr, H(p)->level);
	uint32_t total = H(p)->n, keep = total / 2;
	for (uint32_t j = keep; j < total; j++) {
		E(pr)[j - keep] = E(p)[j];
		pr->kid[j - keep] = p->kid[j];
		if (p->kid[j] != NULL) {
			p->kid[j]->parent = pr;
			pr->nkids++;
			p->nkids--;
			p->kid[j] = NULL;
		}
	}
	H(pr)->n = (uint16_t)(total - keep);
	H(p)->n = (uint16_t)keep;
	uint64_t pkey = ksec(E(pr)[0].key);
	mark_dirty(d, p);
	pr->flags |= BN_DIRTY;
	d->bt_dirty++;
	if (at <= keep)
		inner_insert(p, at, key, right);
	else
		inner_insert(pr, at - keep, key, right);
	add_sibling(d, p, pkey, pr);
	/* pr's ancestors became dirty with p's; pr itself is counted. */
}

void ed_bt_put(struct ed_disk *d, uint64_t sector, uint64_t stamp, uint8_t kind, uint8_t nsect)
{
	struct ed_bnode *leaf;
	if (d->bt == NULL) {
		leaf = spare_take(d, false);
		init_node(leaf, 0);
		d->bt = leaf;
		d->bt_height = 1;
		ed_memset(&d->bt_root, 0, sizeof(d->bt_root));
	} else if (descend(d, sector, &leaf, NULL) != 0) {
		return;              /* not reached: the leaf was pinned */
	}
	uint32_t i = leaf_pos(leaf, sector);
	if (i < H(leaf)->n && ksec(R(leaf)[i].key) == sector) {
		R(leaf)[i].key = mkkey(sector, kind, nsect);
		R(leaf)[i].stamp = stamp;
		mark_dirty(d, leaf);
		return;
	}
	if (H(leaf)->n == ED_BT_LEAF_MAX) {
		struct ed_bnode *right = spare_take(d, false);
		init_node(right, 0);
		uint32_t total = H(leaf)->n, keep = total / 2;
		/* Appending in order (sectors allocated upwards) keeps leaves full. */
		if (i == total)
			keep = total - 1;
		ed_memcpy(R(right), &R(leaf)[keep], (total - keep) * sizeof(struct ed_btrec));
		H(right)->n = (uint16_t)(total - keep);
		H(leaf)->n = (uint16_t)keep;
		mark_dirty(d, leaf);
		right->flags |= BN_DIRTY;
		d->bt_dirty++;
		add_sibling(d, leaf, ksec(R(right)[0].key), right);
		/* A key between the halves stays left: right's first key is the
		 * separator its parent routes by. */
		if (i > keep) {
			leaf = right;
			i -= keep;
		}
	}
	uint32_t n = H(leaf)->n;
	ed_memmove(&R(leaf)[i + 1], &R(leaf)[i], (n - i) * sizeof(struct ed_btrec));
	R(leaf)[i].key = mkkey(sector, kind, nsect);
	R(leaf)[i].stamp = stamp;
	H(leaf)->n = (uint16_t)(n + 1);
	mark_dirty(d, leaf);
	d->bt_count++;
}

void ed_bt_del(struct ed_disk *d, uint64_t sector)
{
	struct ed_bnode *leaf;
	if (descend(d, sector, &leaf, NULL) != 0)
		return;
	uint32_t i = leaf_pos(leaf, sector);
	if (i >= H(leaf)->n || ksec(R(leaf)[i].key) != sector)
		return;
	uint32_t n = H(leaf)->n;
	ed_memmove(&R(leaf)[i], &R(leaf)[i + 1], (n - i - 1) * sizeof(struct ed_btrec));
	ed_memset(&R(leaf)[n - 1], 0, sizeof(struct ed_btrec));
	H(leaf)->n = (uint16_t)(n - 1);
	mark_dirty(d, leaf);
	d->bt_count--;
}

int ed_bt_put_sync(struct ed_disk *d, uint64_t sector, uint64_t stamp, uint8_t kind, uint8_t nsect)
{
	struct ed_bnode *leaf;
	int err;
	while ((err = ed_bt_pin(d, sector, &leaf)) == ED_E_WAIT)
		wait_loads(d);
	if (err == 0)
		err = ed_bt_reserve(d, 1);
	if (err == 0)
		ed_bt_put(d, sector, stamp, kind, nsect);
	ed_bt_unpin(d, leaf);
	spares_trim(d, 8);
	return err;
}

int ed_bt_del_sync(struct ed_disk *d, uint64_t sector)
{
	struct ed_bnode *leaf;
	int err;
	while ((err = ed_bt_pin(d, sector, &leaf)) == ED_E_WAIT)
		wait_loads(d);
	if (err == 0 && leaf != NULL)
		ed_bt_del(d, sector);
	ed_bt_unpin(d, leaf);
	return err == ED_E_NOTBOUND ? 0 : err;
}

/* Visit the place of every page of the tree (the checker), reading them
 * in; fn gets the error of a page that does not verify. */
static int walk(struct ed_disk *d, struct ed_bnode *n, void (*fn)(void *, uint64_t, int), void *arg)
{
	if (H(n)->level == 0)
		return 0;
	for (uint32_t i = 0; i < H(n)->n; i++) {
		struct ed_bnode *k = n->kid[i];
		uint64_t sector = E(n)[i].ptr.sector;
		if (k == NULL) {
			n->pins++;              /* stays while its children come and go */
			(void)start_load(d, n, i);
			wait_loads(d);
			n->pins--;
			k = n->kid[i];
		}
		if (k == NULL)
			return ED_E_NOMEM;
		if (k->flags & BN_FAILED) {
			fn(arg, sector, k->err);
			if (k->nkids == 0)
				drop_node(d, k);
			continue;
		}
		if (!(k->flags & BN_DIRTY) || k->new_sector == 0)
			if (sector > ED_MPTR_ONES)
				fn(arg, sector, 0);
		n->pins++;
		int err = walk(d, k, fn, arg);
		n->pins--;
		if (err != 0)
			return err;
	}
	return 0;
}

int ed_bt_walk_sync(struct ed_disk *d, void (*fn)(void *arg, uint64_t sector, int err), void *arg)
{
	if (d->bt == NULL)
		return 0;
	if (d->bt_root.sector > ED_MPTR_ONES)
		fn(arg, d->bt_root.sector, 0);
	return walk(d, d->bt, fn, arg);
}

/* ---- mount and unmount ----------------------------------------------------------------- */

int ed_bt_init(struct ed_disk *d)
{
	d->bt = NULL;
	d->bt_root = d->sb.bt_root;
	d->bt_height = d->sb.bt_height;
	d->bt_count = d->sb.bindings;
	if (d->bt_root.sector == ED_MPTR_ZERO)
		return d->bt_height == 0 && d->bt_count == 0 ? 0 : ED_E_CORRUPT;
	if (d->bt_height == 0 || d->bt_height > ED_BT_MAX_HEIGHT || d->bt_root.sector < d->data_start ||
	    d->bt_root.sector + ED_SECT_PER_PAGE > d->nsectors)
		return ED_E_CORRUPT;
	struct ed_bnode *n = node_new(d, d->bt_height > 1);
	if (n == NULL)
		return ED_E_NOMEM;
	int err = ed_sync_rw(d->ed, d->unit, BLK_READ, d->bt_root.sector, ED_SECT_PER_PAGE, n->page);
	d->st_mount_reads += ED_SECT_PER_PAGE;
	if (err == 0)
		err = verify(d, n, &d->bt_root, d->bt_height - 1, 0, 0);
	else
		d->ed->bad_sector = d->bt_root.sector;
	if (err != 0) {
		node_del(d, n);
		return err;
	}
	d->bt = n;
	lru_push(d, n);
	return 0;
}

static void free_subtree(struct ed_disk *d, struct ed_bnode *n)
{
	if (n->kid != NULL)
		for (uint32_t i = 0; i < ED_BT_INNER_MAX; i++)
			if (n->kid[i] != NULL)
				free_subtree(d, n->kid[i]);
	node_del(d, n);
}

void ed_bt_destroy(struct ed_disk *d)
{
	if (d->bt != NULL)
		free_subtree(d, d->bt);
	d->bt = NULL;
	spares_trim(d, 0);
	while (d->bt_descpages != NULL) {
		void *pg = d->bt_descpages;
		d->bt_descpages = *(void **)pg;
		ed_dpage_free(d, pg);
	}
	d->bt_free = NULL;
	d->bt_lru_head = d->bt_lru_tail = NULL;
}

/* ---- checkpoints ------------------------------------------------------------------------ */

/* Drop nodes a deletion emptied; a root with one child gives way to it. */
static bool cleanup_node(struct ed_disk *d, struct ed_bnode *n,
                         void (*gone)(struct ed_disk *, const struct ed_mptr *))
{
	if (!(n->flags & BN_DIRTY))
		return false;
	if (H(n)->level > 0)
		for (uint32_t i = 0; i < H(n)->n; ) {
			struct ed_bnode *k = n->kid[i];
			if (k != NULL && cleanup_node(d, k, gone)) {
				uint64_t lower = E(n)[i].key;
				gone(d, &E(n)[i].ptr);
				n->kid[i] = NULL;
				n->nkids--;
				node_del(d, k);
				d->bt_dirty--;
				uint32_t m = H(n)->n;
				ed_memmove(&E(n)[i], &E(n)[i + 1], (m - i - 1) * sizeof(struct ed_btent));
				ed_memmove(&n->kid[i], &n->kid[i + 1], (m - i - 1) * sizeof(n->kid[0]));
				n->kid[m - 1] = NULL;
				ed_memset(&E(n)[m - 1], 0, sizeof(struct ed_btent));
				H(n)->n = (uint16_t)(m - 1);
				/* The first entry's key is the node's lower bound, which
				 * its parent routes by: the next child inherits it. */
				if (i == 0 && m > 1)
					E(n)[0].key = lower;
				continue;
			}
			i++;
		}
	return H(n)->n == 0 && n->nkids == 0;
}

void ed_bt_cleanup(struct ed_disk *d, void (*gone)(struct ed_disk *, const struct ed_mptr *))
{
	if (d->bt == NULL)
		return;
	if (cleanup_node(d, d->bt, gone)) {
		/* Everything went: an empty tree. */
		gone(d, &d->bt_root);
		if (d->bt->flags & BN_DIRTY)
			d->bt_dirty--;
		lru_remove(d, d->bt);
		node_del(d, d->bt);
		d->bt = NULL;
		d->bt_height = 0;
		ed_memset(&d->bt_root, 0, sizeof(d->bt_root));
		return;
	}
	/* A root with a single child is replaced by the child (resident,
	 * since it must have been dirty or loaded for the root to shrink). */
	while (H(d->bt)->level > 0 && H(d->bt)->n == 1 && d->bt->kid[0] != NULL) {
		struct ed_bnode *old = d->bt, *k = old->kid[0];
		gone(d, &d->bt_root);
		d->bt_root = E(old)[0].ptr;
		k->parent = NULL;
		old->kid[0] = NULL;
		if (old->flags & BN_DIRTY)
			d->bt_dirty--;
		lru_remove(d, old);
		node_del(d, old);
		d->bt = k;
		d->bt_height--;
		mark_dirty(d, k);
	}
	/* The leftmost key of every inner node is its lower bound: keep the
	 * root's at 0 so that every sector routes somewhere. */
	if (H(d->bt)->level > 0 && E(d->bt)[0].key != 0) {
		E(d->bt)[0].key = 0;
		mark_dirty(d, d->bt);
	}
}

static int plan_node(struct ed_disk *d, struct ed_bnode *n, int (*add)(struct ed_disk *, struct ed_bnode *))
{
	if (!(n->flags & BN_DIRTY))
		return 0;
	if (H(n)->level > 0)
		for (uint32_t i = 0; i < H(n)->n; i++)
			if (n->kid[i] != NULL) {
				int err = plan_node(d, n->kid[i], add);
				if (err != 0)
					return err;
			}
	n->old = *ed_bt_ptr_of(d, n);
	return add(d, n);
}

int ed_bt_plan(struct ed_disk *d, int (*add)(struct ed_disk *, struct ed_bnode *))
{
	return d->bt == NULL ? 0 : plan_node(d, d->bt, add);
}

void ed_bt_seal(struct ed_disk *d, struct ed_bnode *n, const uint8_t tag[16])
{
	struct ed_mptr *p = ed_bt_ptr_of(d, n);
	p->sector = n->new_sector;
	ed_memcpy(p->tag, tag, 16);
}

/* A checkpoint that failed: the node's place is what it was. */
void ed_bt_restore(struct ed_disk *d, struct ed_bnode *n)
{
	*ed_bt_ptr_of(d, n) = n->old;
	n->new_sector = 0;
}

/* A checkpoint that is durable: the node is clean. */
void ed_bt_clean(struct ed_disk *d, struct ed_bnode *n)
{
	n->new_sector = 0;
	if (n->flags & BN_DIRTY) {
		n->flags &= ~BN_DIRTY;
		d->bt_dirty--;
	}
	lru_push(d, n);
}
