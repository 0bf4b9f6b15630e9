/*
 * map.c - a large file's extents and the exonodes that list them: the
 * fnode's direct entries, then map nodes (ufs_format.h).
 *
 * In memory a file's extents are one array in logical order, each naming
 * the exonode (node) and entry that holds it.  On disk they are, in order,
 * the inode's direct entries, the single-indirect leaf's, and the leaves of
 * the double-indirect node (ufs_format.h).  The lists only ever change at
 * their end: growing appends an extent to the last list with room (or
 * lengthens the last extent when the sectors after it are free: add, then
 * combine), shrinking removes whole extents from the end and cuts the last
 * one kept in two.  Map nodes appear when the inode's list is full and go
 * when their lists empty.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define B (ip->b)

static int node_depth(int node)
{
	return node == UN_INODE ? 0 : node < UN_LEAF0 ? 1 : 2;
}

static int node_cap(int node)
{
	return node == UN_INODE ? UFS_NDIRECT : node == UN_DOUBLE ? UFS_INNER_MAX : UFS_LEAF_MAX;
}

static int push_ext(struct uinode *ip, uint64_t sector, uint32_t nsect, int node, int idx)
{
	if (B->next == B->extcap) {
		uint32_t cap = B->extcap ? B->extcap * 2 : 8;
		struct uext *n = realloc(B->ext, cap * sizeof *n);
		if (n == NULL)
			return -ENOMEM;
		B->ext = n;
		B->extcap = cap;
	}
	B->ext[B->next++] = (struct uext){ B->mapped, sector, nsect, (uint16_t)node, (uint16_t)idx };
	B->mapped += nsect;
	B->node[node].nent++;
	return 0;
}

/* Add the extents of one exonode's map page; expect entry numbers from
 * `first`, consecutively. */
static int load_extents(struct ufs *fs, struct uinode *ip, const uint8_t *page, int node,
                        int first, int cap)
{
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	int want = first;
	for (uint32_t i = 0; i < h->nent; i++) {
		if (ent[i].type != ED_ENT_EXTENT)
			continue;
		if (ent[i].idx != want || want - first >= cap + 1 || ent[i].b == 0 ||
		    ent[i].b % UFS_BSECT != 0 || ent[i].a + ent[i].b > fs->k.fm.nsectors)
			return ufs_damage(fs, "extent list unixfs never makes", B->node[node].x.sector, ip->id);
		int err = push_ext(ip, ent[i].a, (uint32_t)ent[i].b, node, want);
		if (err < 0)
			return err;
		want++;
	}
	return 0;
}

/* The descendant exonode entry `idx` of a map page, or 0 if none. */
static uint64_t child_at(const uint8_t *page, int idx, uint16_t *slot)
{
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	for (uint32_t i = 0; i < h->nent; i++)
		if (ent[i].type == ED_ENT_EXONODE && ent[i].idx == idx) {
			*slot = (uint16_t)ent[i].b;
			return ent[i].a;
		}
	return 0;
}

/* Snapshot a map node and check it is one. */
static int load_node(struct ufs *fs, struct uinode *ip, int node, uint64_t sector, uint16_t slot,
                     uint8_t *page)
{
	if (slot != 0 || sector == 0 || sector >= fs->k.fm.nsectors)
		return ufs_damage(fs, "map node entry unixfs never makes", ip->x.sector, ip->id);
	struct uxn x;
	ufs_xn_set(&x, sector, slot);
	int64_t r = ufs_xn_snapshot(fs, &x, page);
	if (r < 0)
		return r == ED_E_NOMEM || r == ED_E_NOMAP ? -ENOMEM
		       : ufs_damage(fs, "map node unreadable", sector, ip->id);
	if (((const struct ed_xnmap_hdr *)page)->length != UFS_MAP_BYTES)
		return ufs_damage(fs, "not a map node (wrong size)", sector, ip->id);
	B->node[node] = (struct unode){ x, 0, 1 };
	return 0;
}

int ufs_map_load(struct ufs *fs, struct uinode *ip, const void *inode_page)
{
	const struct ed_xnmap_hdr *h = inode_page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	/* Only the entries the format defines. */
	for (uint32_t i = 0; i < h->nent; i++) {
		int idx = ent[i].idx;
		if ((ent[i].type == ED_ENT_EXTENT && (idx < UFS_E_EXT || idx > UFS_E_EXT + UFS_NDIRECT)) ||
		    (ent[i].type == ED_ENT_EXONODE && idx != UFS_E_SINGLE && idx != UFS_E_DOUBLE))
			return ufs_damage(fs, "fnode entry unixfs never makes", ip->x.sector, ip->id);
	}
	B->next = 0;
	B->mapped = 0;
	int err = load_extents(fs, ip, inode_page, UN_INODE, UFS_E_EXT, UFS_NDIRECT);
	if (err < 0)
		return err;
	uint8_t *page = malloc(4096), *inner = malloc(4096);
	if (page == NULL || inner == NULL) {
		free(page);
		free(inner);
		return -ENOMEM;
	}
	uint16_t slot;
	uint64_t s = child_at(inode_page, UFS_E_SINGLE, &slot);
	if (s != 0) {
		err = load_node(fs, ip, UN_SINGLE, s, slot, page);
		if (err == 0)
			err = load_extents(fs, ip, page, UN_SINGLE, 0, UFS_LEAF_MAX);
	}
	s = child_at(inode_page, UFS_E_DOUBLE, &slot);
	if (err == 0 && s != 0) {
		err = load_node(fs, ip, UN_DOUBLE, s, slot, inner);
		const struct ed_xnmap_hdr *ih = (const void *)inner;
		const struct ed_xnmap_ent *ie = (const void *)(ih + 1);
		for (uint32_t i = 0; err == 0 && i < ih->nent; i++) {
			if (ie[i].type != ED_ENT_EXONODE || ie[i].idx != i || i >= UFS_INNER_MAX) {
				err = ufs_damage(fs, "double node entry unixfs never makes", B->node[UN_DOUBLE].x.sector, ip->id);
				break;
			}
			int node = UN_LEAF0 + (int)i;
			err = load_node(fs, ip, node, ie[i].a, (uint16_t)ie[i].b, page);
			if (err == 0)
				err = load_extents(fs, ip, page, node, 0, UFS_LEAF_MAX);
			if (err == 0)
				B->node[UN_DOUBLE].nent++;
		}
	}
	free(page);
	free(inner);
	return err;
}

uint64_t ufs_map_lookup(const struct uinode *ip, uint64_t lsec, uint64_t *run)
{
	if (lsec >= B->mapped) {
		*run = 0;
		return 0;
	}
	uint32_t lo = 0, hi = B->next;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (B->ext[mid].lstart <= lsec)
			lo = mid;
		else
			hi = mid;
	}
	const struct uext *e = &B->ext[lo];
	uint64_t off = lsec - e->lstart;
	*run = e->nsect - off;
	return e->sector + off;
}

/* A new map node (a 4-sector block) listed at entry idx of node parent. */
static int new_node(struct ufs *fs, struct uinode *ip, int parent, int idx, int node)
{
	struct unode *p = &B->node[parent];
	uint64_t goal = fs->data_goal ? fs->data_goal : ip->x.sector;
	for (int tries = 0; tries < 8; tries++) {
		uint64_t start;
		int64_t n = ufs_alloc_run(fs, goal, UFS_MAP_SECT, UFS_MAP_SECT, UFS_MAP_SECT, &start);
		if (n < 0)
			return (int)n;
		int64_t r = ufs_xn_add_child(fs, &p->x, idx, start, node_depth(parent));
		if (r >= 0) {
			struct uxn x;
			ufs_xn_set(&x, start, 0);
			B->node[node] = (struct unode){ x, 0, 1 };
			B->node[parent].nent++;
			return 0;
		}
		if (!kit_taken(r))
			return kit_err(r);
		goal = start + UFS_MAP_SECT;
	}
	return -ENOSPC;
}

/* The node and entry number for one more extent, creating nodes as
 * needed; -EFBIG when the file has all the extents it can have. */
static int next_slot(struct ufs *fs, struct uinode *ip, int *node, int *idx)
{
	int last = B->next ? B->ext[B->next - 1].node : UN_INODE;
	if (last == UN_INODE && B->node[UN_INODE].nent < UFS_NDIRECT) {
		*node = UN_INODE;
		*idx = UFS_E_EXT + B->node[UN_INODE].nent;
		return 0;
	}
	if (last <= UN_SINGLE) {
		if (!B->node[UN_SINGLE].used) {
			int err = new_node(fs, ip, UN_INODE, UFS_E_SINGLE, UN_SINGLE);
			if (err < 0)
				return err;
		}
		if (B->node[UN_SINGLE].nent < UFS_LEAF_MAX) {
			*node = UN_SINGLE;
			*idx = B->node[UN_SINGLE].nent;
			return 0;
		}
	}
	/* Leaves of the double node. */
	if (!B->node[UN_DOUBLE].used) {
		int err = new_node(fs, ip, UN_INODE, UFS_E_DOUBLE, UN_DOUBLE);
		if (err < 0)
			return err;
	}
	int k = B->node[UN_DOUBLE].nent;      /* leaves so far */
	if (k > 0 && B->node[UN_LEAF0 + k - 1].nent < UFS_LEAF_MAX) {
		*node = UN_LEAF0 + k - 1;
		*idx = B->node[*node].nent;
		return 0;
	}
	if (k == UFS_INNER_MAX)
		return -EFBIG;
	int err = new_node(fs, ip, UN_DOUBLE, k, UN_LEAF0 + k);
	if (err < 0)
		return err;
	*node = UN_LEAF0 + k;
	*idx = 0;
	return 0;
}

int ufs_map_grow(struct ufs *fs, struct uinode *ip, uint64_t upto)
{
	int fails = 0;
	while (B->mapped < upto) {
		uint64_t need = upto - B->mapped;
		if (need > UINT32_MAX / 2)
			need = UINT32_MAX / 2 / UFS_BSECT * UFS_BSECT;
		struct uext *last = B->next ? &B->ext[B->next - 1] : NULL;
		/* Lengthen the last extent in place when the sectors after it are
		 * free and its list has room for the moment the new piece takes. */
		if (last != NULL) {
			uint64_t end = last->sector + last->nsect;
			uint64_t n = ufs_room_after(fs, end, need);
			struct unode *nd = &B->node[last->node];
			if (n > 0 && nd->nent < node_cap(last->node) + 1 &&
			    (uint64_t)last->nsect + n <= UINT32_MAX) {
				int depth = node_depth(last->node);
				int idx = last->idx + 1;
				int64_t r = ufs_xn_add_extent(fs, &nd->x, idx, end, n, depth);
				if (r >= 0) {
					r = ufs_xn_combine(fs, &nd->x, last->idx, idx, depth);
					if (r < 0) {
						/* Cannot happen (adjacent, same list); keep the
						 * entry consistent with what we know. */
						ufs_xn_remove(fs, &nd->x, idx, depth);
						return kit_err(r);
					}
					last->nsect += (uint32_t)n;
					B->mapped += n;
					fs->data_goal = end + n;
					continue;
				}
				if (!kit_taken(r) && r != ED_E_XNFULL)
					return kit_err(r);
			}
		}
		/* A new extent elsewhere. */
		int node, idx;
		int err = next_slot(fs, ip, &node, &idx);
		if (err < 0)
			return err;
		uint64_t goal = last ? last->sector + last->nsect
		                     : (fs->data_goal ? fs->data_goal : ip->x.sector + UFS_XBLK_SECT);
		uint64_t start;
		int64_t n = ufs_alloc_run(fs, goal, need, UFS_BSECT, UFS_BSECT, &start);
		if (n < 0)
			return (int)n;
		struct unode *nd = &B->node[node];
		int64_t r = ufs_xn_add_extent(fs, &nd->x, idx, start, (uint64_t)n, node_depth(node));
		if (kit_taken(r) && ++fails < 16)
			continue;              /* taken meanwhile: choose again */
		if (r < 0)
			return kit_err(r);
		err = push_ext(ip, start, (uint32_t)n, node, idx);
		if (err < 0)
			return err;
		fs->data_goal = start + (uint64_t)n;
	}
	return 0;
}

/* Remove map node `node` (now empty) from its parent. */
static int drop_node(struct ufs *fs, struct uinode *ip, int node)
{
	int parent = node == UN_SINGLE || node == UN_DOUBLE ? UN_INODE : UN_DOUBLE;
	int idx = node == UN_SINGLE ? UFS_E_SINGLE : node == UN_DOUBLE ? UFS_E_DOUBLE : node - UN_LEAF0;
	struct unode *p = &B->node[parent];
	int64_t r = ufs_xn_remove(fs, &p->x, idx, node_depth(parent));
	if (r < 0)
		return kit_err(r);
	memset(&B->node[node], 0, sizeof B->node[node]);
	p->nent--;
	return 0;
}

int ufs_map_shrink(struct ufs *fs, struct uinode *ip, uint64_t keep)
{
	while (B->mapped > keep) {
		struct uext *e = &B->ext[B->next - 1];
		struct unode *nd = &B->node[e->node];
		int depth = node_depth(e->node);
		if (e->lstart < keep) {
			/* Cut it: the part past `keep` becomes the next entry, which
			 * then goes. */
			uint64_t k = keep - e->lstart;
			int64_t r = ufs_xn_split(fs, &nd->x, e->idx, k * ED_SECTOR, e->idx + 1, depth);
			if (r >= 0)
				r = ufs_xn_remove(fs, &nd->x, e->idx + 1, depth);
			if (r < 0)
				return kit_err(r);
			B->mapped -= e->nsect - k;
			e->nsect = (uint32_t)k;
			break;
		}
		int64_t r = ufs_xn_remove(fs, &nd->x, e->idx, depth);
		if (r < 0)
			return kit_err(r);
		B->mapped -= e->nsect;
		B->next--;
		nd->nent--;
		int node = e->node;
		if (node != UN_INODE && B->node[node].nent == 0) {
			int err = drop_node(fs, ip, node);
			if (err < 0)
				return err;
			if (node >= UN_LEAF0 && B->node[UN_DOUBLE].nent == 0)
				err = drop_node(fs, ip, UN_DOUBLE);
			if (err < 0)
				return err;
		}
	}
	/* A double node left with no leaves (after a crash, say) goes too. */
	if (keep == 0 && B->node[UN_DOUBLE].used && B->node[UN_DOUBLE].nent == 0) {
		int err = drop_node(fs, ip, UN_DOUBLE);
		if (err < 0)
			return err;
	}
	if (keep == 0 && B->node[UN_SINGLE].used && B->node[UN_SINGLE].nent == 0) {
		int err = drop_node(fs, ip, UN_SINGLE);
		if (err < 0)
			return err;
	}
	return 0;
}

const struct ed_protector *ufs_map_prot(struct ufs *fs, struct uinode *ip, uint64_t sector)
{
	for (uint32_t i = 0; i < B->next; i++) {
		const struct uext *e = &B->ext[i];
		if (sector >= e->sector && sector < e->sector + e->nsect)
			return ufs_xn_prot(fs, &B->node[e->node].x);
	}
	return ufs_xn_prot(fs, &B->node[UN_INODE].x);
}
