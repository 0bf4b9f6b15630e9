/*
 * map.c - the virtual volume's map: which disk sectors hold which chunk,
 * kept in a tree of exonodes (thesis Figure 4-2: the exonode as a
 * logical-to-physical map; descendants split a large name space).
 *
 *   anchor entry ent     struct vv_desc: size, chunk, depth
 *   anchor entry ent+1   descendant: the root node
 *   interior node        descendant entries 0..79: the children, each
 *                        covering 120 * 80^(level-1) chunks
 *   leaf                 extent entries 0..119: entry i is chunk base+i,
 *                        exactly one chunk of sectors
 *   every node           data entry 255: struct vv_nodehdr (magic, level,
 *                        base), checked when the node is read
 *
 * A node is an exonode of VV_NODE_LEN (2016) bytes, one per 4-sector block
 * (56 header + 24 for entry 255 + 120 x 16 or 80 x 24 = 2000 bytes).  Each
 * has its own capabilities, derived from its place (kit_prot), so I/O goes
 * through the leaf that maps it.  Nodes exist only where something was
 * written: a volume nobody wrote has a root and nothing else.
 *
 * Nothing here is durable by itself: allocation adds entries to cached
 * exonodes, and vv_commit writes the changed ones back deepest first (a
 * durable descendant entry never names a node that is not).  The cache
 * (cache.c) calls vv_commit only after the data of every new chunk is
 * written and flushed - the hardening order of docs/vvol.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/vvol/vv_int.h"
#include "libos/clock.h"

/* Chunks a node of this level covers. */
static uint64_t span(unsigned level)
{
	uint64_t s = VV_LEAF_FAN;
	while (level-- > 0)
		s *= VV_NODE_FAN;
	return s;
}

/* Commit depth: the anchor is 0, the root 1, leaves the deepest. */
static int depth_of(const struct vvol *v, const struct vv_node *n)
{
	return 1 + (int)v->d.depth - (int)n->level;
}

static int touch(struct vvol *v, struct vv_node *n)
{
	return kit_dirty_add(&v->dirty, n->sector, n->slot, depth_of(v, n));
}

static struct vv_node *new_node(struct vv_node *parent, uint32_t pidx, uint64_t sector,
                                uint16_t slot, unsigned level, uint64_t base)
{
	struct vv_node *n = calloc(1, sizeof *n);
	if (n == NULL)
		return NULL;
	n->sector = sector;
	n->slot = slot;
	n->level = (uint8_t)level;
	n->base = base;
	n->parent = parent;
	n->pidx = pidx;
	return n;
}

static void free_tree(struct vv_node *n)
{
	if (n == NULL)
		return;
	if (n->level > 0)
		for (unsigned i = 0; i < VV_NODE_FAN; i++)
			free_tree(n->u.child[i]);
	free(n);
}

/* Read a node's entries from its exonode (the map page: no copy of the
 * block, and no capability in it). */
static int load_node(struct vvol *v, struct vv_node *n)
{
	struct kit *k = v->k;
	uint8_t *page = malloc(4096);
	if (page == NULL)
		return -ENOMEM;
	int64_t r = kit_xn_map(k, n->sector, n->slot, page);
	if (r < 0) {
		free(page);
		return kit_err(r);
	}
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *e = (const void *)(h + 1);
	int bad = sizeof *h + (size_t)h->nent * sizeof *e > 4096 || h->length != VV_NODE_LEN;
	int seen_hdr = 0, dirty = h->dirty != 0;
	for (uint32_t i = 0; !bad && i < h->nent; i++) {
		if (e[i].type == ED_ENT_DATA && e[i].idx == VV_HDR_ENT) {
			struct vv_nodehdr nh;
			if (e[i].len != sizeof nh || e[i].a + sizeof nh > 4096) {
				bad = 1;
				break;
			}
			memcpy(&nh, page + e[i].a, sizeof nh);
			bad = nh.magic != VV_NODE_MAGIC || nh.level != n->level || nh.base != n->base ||
			      nh.fan != (n->level ? VV_NODE_FAN : VV_LEAF_FAN);
			seen_hdr = 1;
		} else if (n->level == 0 && e[i].type == ED_ENT_EXTENT && e[i].idx < VV_LEAF_FAN) {
			bad = e[i].b != v->d.chunk || e[i].a == 0;
			if (!bad) {
				n->u.phys[e[i].idx] = e[i].a;
				n->count++;
			}
		} else if (n->level > 0 && e[i].type == ED_ENT_EXONODE && e[i].idx < VV_NODE_FAN) {
			uint64_t base = n->base + e[i].idx * span(n->level - 1u);
			struct vv_node *c = new_node(n, e[i].idx, e[i].a, (uint16_t)e[i].b,
			                             n->level - 1u, base);
			if (c == NULL) {
				free(page);
				return -ENOMEM;
			}
			n->u.child[e[i].idx] = c;
			n->count++;
		} else {
			bad = 1;
		}
	}
	free(page);
	if (bad || !seen_hdr) {
		/* Not a node of ours, or damaged: forget what we took from it. */
		if (n->level > 0)
			for (unsigned i = 0; i < VV_NODE_FAN; i++) {
				free_tree(n->u.child[i]);
				n->u.child[i] = NULL;
			}
		memset(&n->u, 0, sizeof n->u);
		n->count = 0;
		return -EIO;
	}
	n->loaded = 1;
	/* Changes to the node that nobody committed: a process sharing the
	 * volume changed it and died before it could.  The exodisk keeps them
	 * only while someone holds the node and undoes them when the last
	 * holder goes - under whoever has since used the chunks they map.  So
	 * whoever finds them commits them with its own (as new mappings:
	 * after the flush). */
	if (dirty && !v->readonly) {
		v->fresh++;
		return touch(v, n);
	}
	return 0;
}

static int ensure(struct vvol *v, struct vv_node *n)
{
	return n->loaded ? 0 : load_node(v, n);
}

/* A new node as entry i of parent p (loaded): a descendant exonode in a
 * 4-sector block of its own near the volume's allocation point. */
static int make_child(struct vvol *v, struct vv_node *p, uint32_t i, struct vv_node **out)
{
	struct kit *k = v->k;
	unsigned level = p->level - 1u;
	uint64_t base = p->base + i * span(level);
	uint64_t goal = v->hint;
	for (int races = 0; races < 32; races++) {
		uint64_t s = kit_find(k, goal, ED_XN_MAX_SECT, ED_XN_MAX_SECT);
		if (s == UINT64_MAX)
			return -ENOSPC;
		struct ed_protector pp = kit_prot(k, p->sector, p->slot);
		struct ed_protector cp = kit_prot(k, s, 0);
		int64_t r;
		KIT_RETRY(k, p->sector, p->slot, r,
		          edc_xn_add_exonode(k->c, &pp, (int)i, s, 0, VV_NODE_LEN, &cp.rc, &cp.wc));
		if (r >= 0) {
			struct vv_nodehdr nh = { VV_NODE_MAGIC, (uint16_t)level,
			                         (uint16_t)(level ? VV_NODE_FAN : VV_LEAF_FAN), base };
			struct vv_node *c = new_node(p, i, s, 0, level, base);
			if (c == NULL)
				return -ENOMEM;
			c->loaded = 1;
			p->u.child[i] = c;
			p->count++;
			int64_t w = kit_xn_put(k, s, 0, VV_HDR_ENT, &nh, sizeof nh);
			int e = w < 0 ? kit_err(w) : touch(v, c);
			if (e == 0)
				e = touch(v, p);
			*out = c;
			return e;
		}
		if (!kit_taken(r))
			return kit_err(r);
		k->st.raced++;
		goal = s + ED_XN_MAX_SECT;
	}
	return -ENOSPC;
}

struct vv_node *vv_leaf(struct vvol *v, uint64_t c, int create, int *err)
{
	*err = 0;
	if (c >= v->nchunks) {
		*err = -EINVAL;
		return NULL;
	}
	struct vv_node *n = v->root;
	for (;;) {
		int e = ensure(v, n);
		if (e < 0) {
			*err = e;
			return NULL;
		}
		if (n->level == 0)
			return n;
		uint32_t i = (uint32_t)((c - n->base) / span(n->level - 1u));
		struct vv_node *ch = n->u.child[i];
		if (ch == NULL) {
			if (!create)
				return NULL;
			e = make_child(v, n, i, &ch);
			if (e < 0) {
				*err = e;
				return NULL;
			}
		}
		n = ch;
	}
}

int vv_lookup(struct vvol *v, uint64_t c, uint64_t *phys, struct vv_node **leaf)
{
	int e;
	struct vv_node *l = vv_leaf(v, c, 0, &e);
	*phys = l ? l->u.phys[c - l->base] : 0;
	if (leaf)
		*leaf = l;
	return e;
}

int vv_alloc(struct vvol *v, uint64_t c, uint64_t *phys, struct vv_node **leaf)
{
	struct kit *k = v->k;
	int e;
	struct vv_node *l = vv_leaf(v, c, 1, &e);
	if (l == NULL)
		return e;
	uint32_t i = (uint32_t)(c - l->base);
	if (l->u.phys[i] != 0)
		return -EEXIST;
	/* Right after the chunk before it, so what is written in order lies
	 * in order on the disk; else where the last chunk went. */
	uint64_t goal = i > 0 && l->u.phys[i - 1] ? l->u.phys[i - 1] + v->d.chunk : v->hint;
	uint64_t start;
	int64_t got = kit_alloc_extent(k, l->sector, l->slot, (int)i, goal, v->d.chunk, v->d.chunk,
	                               &start);
	if (got < 0)
		return (int)got;
	l->u.phys[i] = start;
	l->count++;
	v->hint = start + v->d.chunk;
	v->st.allocs++;
	v->fresh++;
	*phys = start;
	if (leaf)
		*leaf = l;
	return touch(v, l);
}

/* A node left empty goes (not the root): removing its entry in the parent
 * deallocates it; its block's write-back is in the dirty set.  Only when
 * the parent is to be committed anyway (its block is in the dirty set: a
 * block is written whole, so its sector is enough): otherwise the empty node stays
 * (2 KiB, used again when its chunks are), so that giving chunks back
 * commits their leaves alone - one log record, not one per level. */
static int prune(struct vvol *v, struct vv_node *n)
{
	int e;
	while (n->count == 0 && n != v->root && kit_dirty_has(&v->dirty, n->parent->sector)) {
		struct vv_node *p = n->parent;
		int64_t r = kit_xn_remove(v->k, p->sector, p->slot, (int)n->pidx);
		if (r < 0)
			return kit_err(r);
		p->u.child[n->pidx] = NULL;
		p->count--;
		free(n);
		if ((e = touch(v, p)) < 0)
			return e;
		n = p;
	}
	return 0;
}

/* The nodes under n covering chunks [c0, c1): read the exonodes of those
 * not loaded into the exodisk's cache (all in flight at once), or, with
 * load, load those now cached. */
static int gather(struct vvol *v, struct vv_node *n, uint64_t c0, uint64_t c1,
                  struct edc_batch *b, int load)
{
	if (!n->loaded) {
		if (load)
			return load_node(v, n) == 0;
		struct ed_protector p = kit_prot(v->k, n->sector, n->slot);
		return edc_batch_xn_read(b, &p) == 0;
	}
	int got = 0;
	if (n->level == 0)
		return 0;
	uint64_t each = span(n->level - 1u);
	for (unsigned i = 0; i < VV_NODE_FAN; i++) {
		uint64_t lo = n->base + i * each, hi = lo + each;
		if (n->u.child[i] != NULL && hi > c0 && lo < c1)
			got += gather(v, n->u.child[i], c0, c1, b, load);
	}
	return got;
}

/* Before giving back a large range (a deleted file's chunks), bring in
 * the map nodes it needs a level at a time, each level's reads in flight
 * together: a wait for the disk per level, not per leaf.  Only a hint:
 * whatever fails here is met again, and reported, by vv_leaf. */
static void prefetch(struct vvol *v, uint64_t c0, uint64_t c1)
{
	for (unsigned level = 0; level <= v->d.depth; level++) {
		struct edc_slot slots[16];
		struct edc_batch b;
		edc_batch_init(&b, v->k->c, slots, 16);
		int issued = gather(v, v->root, c0, c1, &b, 0);
		(void)edc_batch_wait(&b);
		if (issued == 0 || gather(v, v->root, c0, c1, &b, 1) == 0)
			return;
	}
}

int vv_free(struct vvol *v, uint64_t c0, uint64_t c1)
{
	struct kit *k = v->k;
	uint64_t c = c0;
	if (c1 - c0 > VV_LEAF_FAN)
		prefetch(v, c0, c1);
	while (c < c1) {
		int e;
		struct vv_node *n = vv_leaf(v, c, 0, &e);
		if (n == NULL) {
			if (e < 0)
				return e;
			c = (c / VV_LEAF_FAN + 1) * VV_LEAF_FAN;   /* no leaf: nothing mapped here */
			continue;
		}
		uint32_t i0 = (uint32_t)(c - n->base);
		uint32_t i1 = c1 - n->base < VV_LEAF_FAN ? (uint32_t)(c1 - n->base) : VV_LEAF_FAN;
		c = n->base + i1;
		uint32_t mapped = 0;
		for (uint32_t i = i0; i < i1; i++)
			mapped += n->u.phys[i] != 0;
		if (mapped == 0)
			continue;
		/* The leaf's entries of the range in one request (the sectors are
		 * freed once the leaf's commit is durable). */
		struct ed_protector p = kit_prot(k, n->sector, n->slot);
		int64_t r;
		KIT_RETRY(k, n->sector, n->slot, r, edc_xn_remove_range(k->c, &p, (int)i0, (int)(i1 - i0)));
		if (r < 0)
			return kit_err(r);
		for (uint32_t i = i0; i < i1; i++)
			n->u.phys[i] = 0;
		n->count -= mapped;
		v->st.discards += mapped;
		if ((e = touch(v, n)) < 0)
			return e;
		if ((uint64_t)r != mapped)
			return -EIO;          /* the exodisk's leaf was not what we loaded */
		if ((e = prune(v, n)) < 0)
			return e;
	}
	return 0;
}

int vv_commit(struct vvol *v)
{
	if (v->dirty.n == 0)
		return 0;
	v->st.commits++;
	int e = kit_dirty_commit(v->k, &v->dirty);
	if (e == 0)
		v->fresh = 0;
	return e;
}

static int depth_for(uint64_t nchunks)
{
	int d = 0;
	while (d <= VV_MAX_DEPTH && span((unsigned)d) < nchunks)
		d++;
	return d;
}

int vv_map_make(struct vvol *v)
{
	struct kit *k = v->k;
	int d = depth_for(v->nchunks);
	if (d > VV_MAX_DEPTH)
		return -EFBIG;
	v->d.depth = (uint16_t)d;
	int64_t r = kit_xn_put(k, k->anchor, 0, v->ent, &v->d, sizeof v->d);
	if (r < 0)
		return kit_err(r);
	/* The root: a child of the anchor, near it. */
	uint64_t goal = k->anchor + 2;
	for (int races = 0; races < 32; races++) {
		uint64_t s = kit_find(k, goal, ED_XN_MAX_SECT, ED_XN_MAX_SECT);
		if (s == UINT64_MAX)
			return -ENOSPC;
		struct ed_protector ap = kit_prot(k, k->anchor, 0);
		struct ed_protector cp = kit_prot(k, s, 0);
		KIT_RETRY(k, k->anchor, 0, r,
		          edc_xn_add_exonode(k->c, &ap, v->ent + 1, s, 0, VV_NODE_LEN, &cp.rc, &cp.wc));
		if (r >= 0) {
			v->root = new_node(NULL, 0, s, 0, (unsigned)d, 0);
			if (v->root == NULL)
				return -ENOMEM;
			v->root->loaded = 1;
			struct vv_nodehdr nh = { VV_NODE_MAGIC, (uint16_t)d,
			                         (uint16_t)(d ? VV_NODE_FAN : VV_LEAF_FAN), 0 };
			r = kit_xn_put(k, s, 0, VV_HDR_ENT, &nh, sizeof nh);
			if (r < 0)
				return kit_err(r);
			v->hint = s + ED_XN_MAX_SECT;
			int e = touch(v, v->root);
			return e < 0 ? e : kit_dirty_add(&v->dirty, k->anchor, 0, 0);
		}
		if (!kit_taken(r))
			return kit_err(r);
		goal = s + ED_XN_MAX_SECT;
	}
	return -ENOSPC;
}

int vv_map_open(struct vvol *v)
{
	struct kit *k = v->k;
	int64_t r = kit_xn_get(k, k->anchor, 0, v->ent, &v->d, sizeof v->d);
	if (r < 0)
		return r == ED_E_ENTRY ? -ENODEV : kit_err(r);
	if (r != sizeof v->d || v->d.magic != VV_DESC_MAGIC || v->d.version != 1 ||
	    v->d.chunk < VV_CHUNK_MIN || v->d.chunk > VV_CHUNK_MAX ||
	    (v->d.chunk & (v->d.chunk - 1)) != 0 || v->d.nsectors == 0)
		return -EIO;
	v->nchunks = (v->d.nsectors + v->d.chunk - 1) / v->d.chunk;
	if (v->d.depth != depth_for(v->nchunks))
		return -EIO;
	/* The root: the anchor's descendant entry ent+1. */
	uint8_t *page = malloc(4096);
	if (page == NULL)
		return -ENOMEM;
	r = kit_xn_map(k, k->anchor, 0, page);
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *e = (const void *)(h + 1);
	uint64_t s = 0;
	uint16_t slot = 0;
	for (uint32_t i = 0; r == 0 && i < h->nent && sizeof *h + (i + 1) * sizeof *e <= 4096; i++)
		if (e[i].idx == v->ent + 1 && e[i].type == ED_ENT_EXONODE) {
			s = e[i].a;
			slot = (uint16_t)e[i].b;
		}
	free(page);
	if (r < 0)
		return kit_err(r);
	if (s == 0)
		return -EIO;
	v->root = new_node(NULL, 0, s, slot, v->d.depth, 0);
	if (v->root == NULL)
		return -ENOMEM;
	v->hint = s + ED_XN_MAX_SECT;
	return load_node(v, v->root);
}

void vv_map_free(struct vvol *v)
{
	free_tree(v->root);
	v->root = NULL;
	kit_dirty_free(&v->dirty);
}

static int count(struct vvol *v, struct vv_node *n, uint64_t *chunks, uint64_t *nodes)
{
	int e = ensure(v, n);
	if (e < 0)
		return e;
	(*nodes)++;
	if (n->level == 0) {
		*chunks += n->count;
		return 0;
	}
	for (unsigned i = 0; i < VV_NODE_FAN && e == 0; i++)
		if (n->u.child[i])
			e = count(v, n->u.child[i], chunks, nodes);
	return e;
}

int vv_count(struct vvol *v, uint64_t *chunks, uint64_t *nodes)
{
	*chunks = *nodes = 0;
	return v->root ? count(v, v->root, chunks, nodes) : 0;
}
