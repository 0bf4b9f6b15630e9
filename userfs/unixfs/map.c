/*
 * map.c - a large file's extents and the exonodes that list them: the
 * fnode's direct entries, then map nodes (ufs_format.h).
 *
 * In memory a file's extents are one array sorted by where they start in
 * the file, each naming the exonode (node) and entry that holds it; the
 * gaps between them are holes.  On disk they are, in list order, the
 * inode's direct entries, the single-indirect leaf's, and the leaves of
 * the double-indirect node; an extent starts where the one before it in
 * list order ends unless its list's position table says otherwise
 * (ufs_format.h, "Holes").  New extents always go at the end of list
 * order (the last list with room, at an entry number past its last), so
 * adding one never moves another: a file written in order stays dense
 * (no table at all); an extent that does not continue the one before it
 * in list order - after a hole, or filling a hole - gets a table line.
 * Growing lengthens an extent in place when the sectors after it are
 * free (add, then combine); shrinking removes the extents that start past
 * the new end, last in list order first, each run of neighbouring entries
 * of one list in one request (ED_OP_EXONODE_REMOVE_RANGE), and cuts the
 * one it ends in.  Map nodes appear when the last list is full and go
 * when the last lists empty.
 *
 * Beside the array each list keeps which entry numbers hold an extent,
 * which have a table line, and its table (struct ulist), so that whether
 * an entry is free, a list's table, and which extent is last in list
 * order are each found without looking at the file's other extents: a
 * change costs what it changes (plus a binary search), not the file's
 * size.  (Adding an extent in the middle of the array still moves the
 * ones after it: one memmove of at most UFS_MAX_EXTENTS * 24 bytes.)
 *
 * Every change to one exonode is one exodisk call or two in a row; the
 * states between are harmless if they ever became durable: a table line
 * is written before its extent is added and dropped after it is removed
 * (a line naming no extent means nothing), and the temporary entry of a
 * lengthening or a cut sits right after the extent it belongs to.
 * Removing last in list order first keeps every state between a file
 * the new end is inside: an extent that stays and follows one that goes
 * has a table line (it cannot continue an extent starting past the end),
 * so taking that one away moves nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define B (ip->b)
#define RANGE_MAX 256            /* entries one ED_OP_EXONODE_REMOVE_RANGE takes */

uint64_t ufs_map_steps;

/* ---- a list's entry numbers (struct ulist) --------------------------------- */

static int bit(const uint64_t *m, int i) { return (int)(m[i / 64] >> (i % 64) & 1); }
static void set_bit(uint64_t *m, int i) { m[i / 64] |= 1ull << (i % 64); }
static void clear_bit(uint64_t *m, int i) { m[i / 64] &= ~(1ull << (i % 64)); }

/* The highest bit set below `below` (at most 256), or -1. */
static int highest(const uint64_t *m, int below)
{
	for (int w = below > 0 ? (below - 1) / 64 : -1; w >= 0; w--) {
		uint64_t x = m[w];
		if (below - 64 * w < 64)
			x &= (1ull << (below - 64 * w)) - 1;
		ufs_map_steps++;
		if (x != 0)
			return 64 * w + 63 - __builtin_clzll(x);
	}
	return -1;
}

/* Bits set in [from, to). */
static uint32_t count(const uint64_t *m, int from, int to)
{
	uint32_t n = 0;
	for (int i = from; i < to;) {
		int w = i / 64, b = i % 64, e = to - 64 * w < 64 ? to - 64 * w : 64;
		uint64_t x = m[w] >> b;
		if (e - b < 64)
			x &= (1ull << (e - b)) - 1;
		n += (uint32_t)__builtin_popcountll(x);
		ufs_map_steps++;
		i = 64 * w + e;
	}
	return n;
}

/* A list's bookkeeping is allocated when it first holds an extent (a
 * file of one list carries one, not UN_MAX). */
static const struct ulist no_list;

static const struct ulist *lst(const struct uinode *ip, int node)
{
	return B->list[node] ? B->list[node] : &no_list;
}

static struct ulist *lst_make(struct uinode *ip, int node)
{
	if (B->list[node] == NULL)
		B->list[node] = calloc(1, sizeof *B->list[node]);
	return B->list[node];
}

/* A list with no entries (its memory is kept for reuse). */
static void list_reset(struct uinode *ip, int node)
{
	struct ulist *l = B->list[node];
	if (l != NULL) {
		memset(l->has, 0, sizeof l->has);
		memset(l->pos, 0, sizeof l->pos);
	}
	B->top[node] = B->npos[node] = 0;
}

/* Where entry idx's line is in node's table, or where it would go. */
static uint32_t line_find(const struct uinode *ip, int node, int idx)
{
	const uint64_t *line = lst(ip, node)->line;
	uint32_t lo = 0, hi = B->npos[node];
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		ufs_map_steps++;
		if (ufs_pos_entry(line[mid]) < (uint32_t)idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int line_add(struct uinode *ip, int node, int idx, uint64_t lblk)
{
	struct ulist *l = lst_make(ip, node);
	if (l == NULL)
		return -ENOMEM;
	uint32_t n = B->npos[node];
	if (n == l->linecap) {
		uint32_t cap = l->linecap ? l->linecap * 2u : 8u;
		uint64_t *m = realloc(l->line, cap * sizeof *m);
		if (m == NULL)
			return -ENOMEM;
		l->line = m;
		l->linecap = (uint16_t)cap;
	}
	uint32_t at = line_find(ip, node, idx);   /* n: a new extent's, at the end */
	memmove(&l->line[at + 1], &l->line[at], (n - at) * sizeof *l->line);
	l->line[at] = ufs_pos(lblk, (uint32_t)idx);
	B->npos[node] = (uint16_t)(n + 1);
	set_bit(l->pos, idx);
	return 0;
}

static void line_del(struct uinode *ip, int node, int idx)
{
	struct ulist *l = B->list[node];      /* there: idx has a line */
	uint32_t n = B->npos[node], at = line_find(ip, node, idx);
	if (at < n && ufs_pos_entry(l->line[at]) == (uint32_t)idx) {
		memmove(&l->line[at], &l->line[at + 1], (n - at - 1) * sizeof *l->line);
		B->npos[node] = (uint16_t)(n - 1);
	}
	clear_bit(l->pos, idx);
}

void ufs_map_free(struct ubig *b)
{
	for (int n = 0; n < UN_MAX; n++)
		if (b->list[n] != NULL) {
			free(b->list[n]->line);
			free(b->list[n]);
		}
	free(b->ext);
}

/* ---- the extents ------------------------------------------------------------ */

static int node_depth(int node)
{
	return node == UN_INODE ? 0 : node < UN_LEAF0 ? 1 : 2;
}

/* Bytes of a list for extent entries and the position table. */
static uint32_t list_bytes(int node)
{
	return node == UN_INODE ? UFS_FNODE_LIST_BYTES : UFS_LEAF_LIST_BYTES;
}

static int first_idx(int node) { return node == UN_INODE ? UFS_E_EXT : 0; }
static int last_idx(int node) { return node == UN_INODE ? UFS_E_LAST_FNODE : UFS_E_LAST_LEAF; }
static int pos_idx(int node) { return node == UN_INODE ? UFS_E_POS_FNODE : UFS_E_POS_LEAF; }

/* Would node's list hold `ext` more extents and `pos` more table lines,
 * with 16 bytes still free? */
static int fits(const struct uinode *ip, int node, int ext, int pos)
{
	uint32_t npos = B->npos[node] + (uint32_t)pos;
	uint32_t bytes = (B->node[node].nent + (uint32_t)ext) * 16u + (npos ? 8u + npos * UFS_POS_BYTES : 0);
	return bytes + 16u <= list_bytes(node);
}

/* Room in the array for one more. */
static int ext_room(struct uinode *ip)
{
	if (B->next < B->extcap)
		return 0;
	uint32_t cap = B->extcap ? B->extcap * 2 : 8;
	struct uext *n = realloc(B->ext, cap * sizeof *n);
	if (n == NULL)
		return -ENOMEM;
	B->ext = n;
	B->extcap = cap;
	return 0;
}

/* Index of the last extent starting at or before lsec, or -1. */
static int64_t find(const struct uinode *ip, uint64_t lsec)
{
	if (B->next == 0 || B->ext[0].lstart > lsec)
		return -1;
	uint32_t lo = 0, hi = B->next;
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		ufs_map_steps++;
		if (B->ext[mid].lstart <= lsec)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Put e into the array at its place in the file. */
static int insert_ext(struct uinode *ip, struct uext e)
{
	int err = ext_room(ip);
	if (err == 0 && lst_make(ip, e.node) == NULL)
		err = -ENOMEM;
	if (err == 0 && e.pos)
		err = line_add(ip, e.node, e.idx, e.lstart / UFS_BSECT);
	if (err < 0)
		return err;
	uint32_t at = (uint32_t)(find(ip, e.lstart) + 1);
	memmove(&B->ext[at + 1], &B->ext[at], (B->next - at) * sizeof *B->ext);
	B->ext[at] = e;
	B->next++;
	B->hint = at;
	struct unode *nd = &B->node[e.node];
	nd->nent++;
	set_bit(B->list[e.node]->has, e.idx);
	if (e.idx + 1 > B->top[e.node])
		B->top[e.node] = (uint16_t)(e.idx + 1);
	B->held += e.nsect;
	if (e.lstart + e.nsect > B->mapped)
		B->mapped = e.lstart + e.nsect;
	return 0;
}

/* Write node's position table as its lines say, plus one line `extra`
 * (0: none).  A file system of version 2 becomes version 3 first. */
static int write_table(struct ufs *fs, struct uinode *ip, int node, uint64_t extra)
{
	uint64_t line[UFS_LEAF_LIST_BYTES / UFS_POS_BYTES + 1];
	uint32_t n = 0, have = B->npos[node];
	const uint64_t *mine = lst(ip, node)->line;
	if (have > UFS_LEAF_LIST_BYTES / UFS_POS_BYTES)
		return -EFBIG;                 /* cannot happen: fits() keeps lists short */
	/* In entry-number order; `extra` (a new extent's) goes in its place. */
	for (uint32_t i = 0; i < have; i++) {
		if (extra != 0 && ufs_pos_entry(mine[i]) > ufs_pos_entry(extra)) {
			line[n++] = extra;
			extra = 0;
		}
		line[n++] = mine[i];
		ufs_map_steps++;
	}
	if (extra != 0)
		line[n++] = extra;
	struct unode *nd = &B->node[node];
	int64_t r;
	if (n == 0) {
		r = ufs_xn_remove(fs, &nd->x, pos_idx(node), node_depth(node));
		if (r == ED_E_ENTRY)
			r = 0;
	} else {
		if (fs->sb.version < UFS_SB_HOLES) {
			fs->sb.version = UFS_SB_HOLES;
			int err = ufs_push_sb(fs);
			if (err < 0) {
				fs->sb.version = UFS_SB_VERSION_MIN;
				return err;
			}
		}
		r = ufs_xn_add_data(fs, &nd->x, pos_idx(node), line, n * UFS_POS_BYTES, node_depth(node));
	}
	return r < 0 ? kit_err(r) : 0;
}

static int cmp_lstart(const void *a, const void *b)
{
	const struct uext *x = a, *y = b;
	return x->lstart < y->lstart ? -1 : x->lstart > y->lstart;
}

/* Add the extents of one exonode's map page, in entry order, each at the
 * end of the last one (*cursor) unless the page's position table says
 * where it starts. */
static int load_extents(struct ufs *fs, struct uinode *ip, const uint8_t *page, int node,
                        uint64_t *cursor)
{
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	uint64_t sector = B->node[node].x.sector;
	const uint64_t *line = NULL;
	uint32_t nline = 0;
	for (uint32_t i = 0; i < h->nent; i++)
		if (ent[i].type == ED_ENT_DATA && ent[i].idx == pos_idx(node)) {
			if (ent[i].len == 0 || ent[i].len % UFS_POS_BYTES != 0 || ent[i].a + ent[i].len > 4096)
				return ufs_damage(fs, "malformed position table", sector, ip->id);
			line = (const uint64_t *)(page + ent[i].a);
			nline = ent[i].len / UFS_POS_BYTES;
		}
	for (uint32_t j = 1; j < nline; j++)
		if (ufs_pos_entry(line[j]) <= ufs_pos_entry(line[j - 1]))
			return ufs_damage(fs, "position table out of order", sector, ip->id);
	uint32_t j = 0, bytes = 0;
	int prev = -1;
	for (uint32_t i = 0; i < h->nent; i++) {
		if (ent[i].type != ED_ENT_EXTENT)
			continue;
		int idx = ent[i].idx;
		if (idx < first_idx(node) || idx > last_idx(node) || idx <= prev || ent[i].b == 0 ||
		    ent[i].b % UFS_BSECT != 0 || ent[i].a + ent[i].b > fs->k.fm.nsectors ||
		    ent[i].b > UINT32_MAX)
			return ufs_damage(fs, "extent list unixfs never makes", sector, ip->id);
		prev = idx;
		while (j < nline && ufs_pos_entry(line[j]) < (uint32_t)idx) {
			B->stale_pos++;            /* names no extent: means nothing */
			j++;
		}
		struct uext e = { *cursor, ent[i].a, (uint32_t)ent[i].b, (uint8_t)node, 0, (uint16_t)idx };
		if (j < nline && ufs_pos_entry(line[j]) == (uint32_t)idx) {
			uint64_t lblk = ufs_pos_lblk(line[j++]);
			if (lblk > UINT64_MAX / 2 / UFS_BSECT)
				return ufs_damage(fs, "position past any file", sector, ip->id);
			e.lstart = lblk * UFS_BSECT;
			e.pos = 1;
		}
		int err = ext_room(ip);
		if (err == 0 && lst_make(ip, node) == NULL)
			err = -ENOMEM;
		if (err == 0 && e.pos)
			err = line_add(ip, node, idx, e.lstart / UFS_BSECT);
		if (err < 0)
			return err;
		B->ext[B->next++] = e;
		B->node[node].nent++;
		set_bit(B->list[node]->has, idx);
		B->top[node] = (uint16_t)(idx + 1);
		ufs_map_steps++;
		*cursor = e.lstart + e.nsect;
		bytes += 16;
	}
	B->stale_pos += nline - j;
	if (nline)
		bytes += 8 + nline * UFS_POS_BYTES;
	if (bytes > list_bytes(node))
		return ufs_damage(fs, "extent list longer than unixfs makes", sector, ip->id);
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
	list_reset(ip, node);
	return 0;
}

int ufs_map_load(struct ufs *fs, struct uinode *ip, const void *inode_page)
{
	const struct ed_xnmap_hdr *h = inode_page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	/* Only the entries the format defines. */
	for (uint32_t i = 0; i < h->nent; i++) {
		int idx = ent[i].idx;
		if ((ent[i].type == ED_ENT_EXTENT && (idx < UFS_E_EXT || idx > UFS_E_LAST_FNODE)) ||
		    (ent[i].type == ED_ENT_EXONODE && idx != UFS_E_SINGLE && idx != UFS_E_DOUBLE) ||
		    (ent[i].type == ED_ENT_DATA && idx != UFS_E_META && idx != UFS_E_POS_FNODE))
			return ufs_damage(fs, "fnode entry unixfs never makes", ip->x.sector, ip->id);
	}
	B->next = 0;
	B->mapped = 0;
	B->held = 0;
	B->stale_pos = 0;
	B->hint = 0;
	for (int n = 0; n < UN_MAX; n++)
		list_reset(ip, n);
	uint64_t cursor = 0;
	int err = load_extents(fs, ip, inode_page, UN_INODE, &cursor);
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
			err = load_extents(fs, ip, page, UN_SINGLE, &cursor);
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
				err = load_extents(fs, ip, page, node, &cursor);
			if (err == 0)
				B->node[UN_DOUBLE].nent++;
		}
	}
	free(page);
	free(inner);
	if (err < 0)
		return err;
	/* In file order; a dense file's already are. */
	int sorted = 1;
	for (uint32_t i = 1; i < B->next && sorted; i++)
		sorted = B->ext[i - 1].lstart <= B->ext[i].lstart;
	if (!sorted)
		qsort(B->ext, B->next, sizeof *B->ext, cmp_lstart);
	for (uint32_t i = 0; i < B->next; i++) {
		if (i > 0 && B->ext[i - 1].lstart + B->ext[i - 1].nsect > B->ext[i].lstart)
			return ufs_damage(fs, "extents overlap in the file", B->node[B->ext[i].node].x.sector, ip->id);
		B->held += B->ext[i].nsect;
	}
	B->mapped = B->next ? B->ext[B->next - 1].lstart + B->ext[B->next - 1].nsect : 0;
	return 0;
}

uint64_t ufs_map_lookup(const struct uinode *ip, uint64_t lsec, uint64_t *run)
{
	int64_t i = find(ip, lsec);
	if (i >= 0 && lsec < B->ext[i].lstart + B->ext[i].nsect) {
		const struct uext *e = &B->ext[i];
		B->hint = (uint32_t)i;         /* for ufs_map_prot, which follows */
		uint64_t off = lsec - e->lstart;
		*run = e->nsect - off;
		return e->sector + off;
	}
	/* A hole: *run is how far it goes (0: to the end of the file). */
	*run = (uint64_t)(i + 1) < B->next ? B->ext[i + 1].lstart - lsec : 0;
	return 0;
}

uint64_t ufs_map_holes(const struct uinode *ip, uint64_t from, uint64_t upto)
{
	uint64_t n = 0;
	while (from < upto) {
		uint64_t run;
		uint64_t s = ufs_map_lookup(ip, from, &run);
		if (run == 0 || run > upto - from)
			run = upto - from;
		if (s == 0)
			n += run;
		from += run;
	}
	return n;
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
			list_reset(ip, node);
			B->node[parent].nent++;
			return 0;
		}
		if (!kit_taken(r))
			return kit_err(r);
		goal = start + UFS_MAP_SECT;
	}
	return -ENOSPC;
}

/* The last list in list order (a map node may be there and empty). */
static int last_node(const struct uinode *ip)
{
	int k = B->node[UN_DOUBLE].used ? B->node[UN_DOUBLE].nent : 0;
	if (k > 0)
		return UN_LEAF0 + k - 1;
	return B->node[UN_SINGLE].used ? UN_SINGLE : UN_INODE;
}

/* The extent last in list order (the one a new extent at the end of the
 * last list follows), or NULL. */
static const struct uext *list_last(const struct uinode *ip)
{
	int dense = 1;
	for (int n = 0; n < UN_MAX && dense; n++)
		dense = B->npos[n] == 0;
	if (dense)                  /* list order is file order */
		return B->next ? &B->ext[B->next - 1] : NULL;
	int node = last_node(ip);
	while (node >= 0 && B->top[node] == 0)
		node--;
	if (node < 0)
		return NULL;
	/* Back from it to the nearest extent with a table line, counting the
	 * ones passed: each continues the one before it in the file, so they
	 * follow that one in the array. */
	uint32_t k = 0;
	for (int n = node; n >= 0; n--) {
		const struct ulist *l = lst(ip, n);
		int below = n == node ? B->top[node] : 256;
		int p = highest(l->pos, below);
		k += count(l->has, p + 1, below);
		if (p >= 0) {
			const uint64_t *line = &l->line[line_find(ip, n, p)];
			int64_t at = find(ip, ufs_pos_lblk(*line) * UFS_BSECT);
			return at >= 0 && at + k < B->next ? &B->ext[at + k] : &B->ext[B->next - 1];
		}
	}
	return k ? &B->ext[k - 1] : NULL;
}

/* The node and entry number for one more extent at the end of list order
 * (with a table line if `pos`), creating nodes as needed; -EFBIG when the
 * file has all the lists it can have. */
static int next_slot(struct ufs *fs, struct uinode *ip, int pos, int *node, int *idx)
{
	for (;;) {
		int last = last_node(ip);
		int i = B->top[last] > first_idx(last) ? B->top[last] : first_idx(last);
		if (fits(ip, last, 1, pos) && i <= last_idx(last)) {
			*node = last;
			*idx = i;
			return 0;
		}
		int err;
		if (last == UN_INODE) {
			err = new_node(fs, ip, UN_INODE, UFS_E_SINGLE, UN_SINGLE);
		} else {
			if (!B->node[UN_DOUBLE].used && (err = new_node(fs, ip, UN_INODE, UFS_E_DOUBLE, UN_DOUBLE)) < 0)
				return err;
			int k = B->node[UN_DOUBLE].nent;      /* leaves so far */
			if (k == UFS_INNER_MAX)
				return -EFBIG;
			err = new_node(fs, ip, UN_DOUBLE, k, UN_LEAF0 + k);
		}
		if (err < 0)
			return err;
	}
}

/* Is entry idx of node free (no extent, not the table's)? */
static int idx_free(const struct uinode *ip, int node, int idx)
{
	if (idx > last_idx(node))
		return 0;
	return !bit(lst(ip, node)->has, idx);
}

/* Lengthen extent `at` in place by up to `want` sectors when the sectors
 * after it on disk are free; returns the sectors added (0: could not). */
static int64_t lengthen(struct ufs *fs, struct uinode *ip, uint32_t at, uint64_t want)
{
	struct uext *e = &B->ext[at];
	struct unode *nd = &B->node[e->node];
	uint64_t end = e->sector + e->nsect;
	/* The temporary entry goes right after e, so that for a moment it
	 * simply continues it. */
	int idx = e->idx + 1;
	if (!fits(ip, e->node, 0, 0) || !idx_free(ip, e->node, idx))
		return 0;
	uint64_t n = ufs_room_after(fs, end, want);
	if (n == 0 || (uint64_t)e->nsect + n > UINT32_MAX / 2)
		return 0;
	int depth = node_depth(e->node);
	int64_t r = ufs_xn_add_extent(fs, &nd->x, idx, end, n, depth);
	if (r < 0)
		return kit_taken(r) || r == ED_E_XNFULL ? 0 : kit_err(r);
	r = ufs_xn_combine(fs, &nd->x, e->idx, idx, depth);
	if (r < 0) {
		/* Cannot happen (adjacent, same list); keep the entry consistent
		 * with what we know. */
		ufs_xn_remove(fs, &nd->x, idx, depth);
		return kit_err(r);
	}
	e->nsect += (uint32_t)n;
	B->held += n;
	if (e->lstart + e->nsect > B->mapped)
		B->mapped = e->lstart + e->nsect;
	fs->data_goal = end + n;
	return (int64_t)n;
}

/* Map the hole [l, l + n) (no extent holds any of it). */
static int map_hole(struct ufs *fs, struct uinode *ip, uint64_t l, uint64_t n)
{
	int fails = 0;
	while (n > 0) {
		uint64_t need = n;
		if (need > UINT32_MAX / 2)
			need = UINT32_MAX / 2 / UFS_BSECT * UFS_BSECT;
		int64_t at = find(ip, l);
		const struct uext *prev = at >= 0 ? &B->ext[at] : NULL;
		if (prev != NULL && prev->lstart + prev->nsect == l) {
			int64_t got = lengthen(fs, ip, (uint32_t)at, need);
			if (got < 0)
				return (int)got;
			if (got > 0) {
				l += (uint64_t)got;
				n -= (uint64_t)got;
				continue;
			}
		}
		/* A new extent at the end of list order: with a table line
		 * unless it continues the extent last in list order. */
		const struct uext *ll = list_last(ip);
		int pos = (ll ? ll->lstart + ll->nsect : 0) != l;
		int node, idx;
		int err = next_slot(fs, ip, pos, &node, &idx);
		if (err < 0)
			return err;
		if (pos && (err = write_table(fs, ip, node, ufs_pos(l / UFS_BSECT, (uint32_t)idx))) < 0)
			return err;
		uint64_t goal = prev ? prev->sector + prev->nsect
		                     : (fs->data_goal ? fs->data_goal : ip->x.sector + UFS_XBLK_SECT);
		uint64_t start;
		int64_t got = ufs_alloc_run(fs, goal, need, UFS_BSECT, UFS_BSECT, &start);
		int64_t r = got;
		if (got > 0)
			r = ufs_xn_add_extent(fs, &B->node[node].x, idx, start, (uint64_t)got, node_depth(node));
		if (r < 0) {
			/* The table line names no extent: take it back (it would
			 * mean nothing anyway). */
			if (pos)
				write_table(fs, ip, node, 0);
			if (kit_taken(r) && ++fails < 16)
				continue;              /* taken meanwhile: choose again */
			return got < 0 ? (int)got : kit_err(r);
		}
		err = insert_ext(ip, (struct uext){ l, start, (uint32_t)got, (uint8_t)node, (uint8_t)pos, (uint16_t)idx });
		if (err < 0)
			return err;
		fs->data_goal = start + (uint64_t)got;
		l += (uint64_t)got;
		n -= (uint64_t)got;
	}
	return 0;
}

int64_t ufs_map_fill(struct ufs *fs, struct uinode *ip, uint64_t from, uint64_t upto)
{
	uint64_t before = B->held;
	while (from < upto) {
		uint64_t run;
		uint64_t s = ufs_map_lookup(ip, from, &run);
		if (run == 0 || run > upto - from)
			run = upto - from;
		if (s == 0) {
			int err = map_hole(fs, ip, from, run);
			if (err < 0)
				return err;
		}
		from += run;
	}
	return (int64_t)(B->held - before);
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
	list_reset(ip, node);
	p->nent--;
	return 0;
}

/* Empty map nodes at the end of list order go (one in the middle stays:
 * the leaves of the double node are numbered in order). */
static int drop_empty_tail(struct ufs *fs, struct uinode *ip)
{
	for (;;) {
		int last = last_node(ip);
		if (last == UN_INODE || B->node[last].nent != 0)
			break;
		/* The exodisk frees a map node only when it lists nothing:
		 * lines naming no extent go first. */
		int err = B->stale_pos ? write_table(fs, ip, last, 0) : 0;
		if (err == 0)
			err = drop_node(fs, ip, last);
		if (err == 0 && last >= UN_LEAF0 && B->node[UN_DOUBLE].nent == 0)
			err = drop_node(fs, ip, UN_DOUBLE);
		if (err < 0)
			return err;
	}
	/* A double node left with no leaves (after a crash, say) goes too. */
	if (B->node[UN_DOUBLE].used && B->node[UN_DOUBLE].nent == 0) {
		int err = drop_node(fs, ip, UN_DOUBLE);
		if (err < 0)
			return err;
		if (B->node[UN_SINGLE].used && B->node[UN_SINGLE].nent == 0)
			return drop_node(fs, ip, UN_SINGLE);
	}
	return 0;
}

/* Give back the extents at array positions first.. (those starting at or
 * past a new end): list by list, last in list order first, each run of
 * entry numbers in which every extent goes in one request, then the
 * list's table without their lines. */
static int remove_tail(struct ufs *fs, struct uinode *ip, uint32_t first)
{
	uint64_t (*gone)[4] = calloc(UN_MAX, sizeof *gone);
	if (gone == NULL)
		return -ENOMEM;
	for (uint32_t i = first; i < B->next; i++) {
		set_bit(gone[B->ext[i].node], B->ext[i].idx);
		ufs_map_steps++;
	}
	int err = 0;
	for (int node = UN_MAX - 1; node >= 0 && err == 0; node--) {
		struct ulist *l = B->list[node];
		struct unode *nd = &B->node[node];
		int lines = 0;
		if (l == NULL)
			continue;                  /* never held an extent */
		for (int hi = highest(gone[node], 256); hi >= 0 && err == 0;
		     hi = highest(gone[node], hi)) {
			/* Down from hi while the next entry holding an extent goes
			 * too (absent numbers in between do not matter). */
			int lo = hi, n = 1, below;
			while ((below = highest(l->has, lo)) >= 0 && bit(gone[node], below) &&
			       hi - below < RANGE_MAX) {
				lo = below;
				n++;
			}
			int64_t r = n == 1 ? ufs_xn_remove(fs, &nd->x, hi, node_depth(node))
			                   : ufs_xn_remove_range(fs, &nd->x, lo, hi - lo + 1, node_depth(node));
			if (r < 0) {
				err = kit_err(r);
				break;
			}
			if (n > 1 && r != n) {
				err = ufs_damage(fs, "map node lists other extents than the file has",
				                 nd->x.sector, ip->id);
				break;
			}
			for (int i = lo; i <= hi; i++) {
				ufs_map_steps++;
				if (!bit(gone[node], i))
					continue;
				clear_bit(gone[node], i);
				clear_bit(l->has, i);
				nd->nent--;
				if (bit(l->pos, i)) {
					line_del(ip, node, i);
					lines++;
				}
			}
		}
		B->top[node] = (uint16_t)(highest(l->has, 256) + 1);
		/* Their table lines go after them (a line naming nothing means
		 * nothing). */
		if (err == 0 && lines)
			err = write_table(fs, ip, node, 0);
	}
	/* The array keeps what the lists still hold (after an error too). */
	uint32_t j = first;
	for (uint32_t i = first; i < B->next; i++) {
		const struct uext *e = &B->ext[i];
		if (bit(lst(ip, e->node)->has, e->idx))
			B->ext[j++] = *e;
		else
			B->held -= e->nsect;
	}
	B->next = j;
	B->mapped = j ? B->ext[j - 1].lstart + B->ext[j - 1].nsect : 0;
	free(gone);
	return err;
}

int ufs_map_shrink(struct ufs *fs, struct uinode *ip, uint64_t keep)
{
	uint32_t first = B->next;
	while (first > 0 && B->ext[first - 1].lstart >= keep) {
		first--;
		ufs_map_steps++;
	}
	if (first < B->next) {
		int err = remove_tail(fs, ip, first);
		if (err < 0)
			return err;
	}
	if (B->next > 0 && B->mapped > keep) {
		/* The extent `keep` is inside: cut it.  The part past `keep`
		 * becomes the entry right after it (or any free one), which then
		 * goes. */
		struct uext *e = &B->ext[B->next - 1];
		int node = e->node;
		struct unode *nd = &B->node[node];
		int depth = node_depth(node);
		uint64_t k = keep - e->lstart;
		int tmp = idx_free(ip, node, e->idx + 1) ? e->idx + 1 : -1;
		int64_t r = ufs_xn_split(fs, &nd->x, e->idx, k * ED_SECTOR, tmp, depth);
		if (r >= 0)
			r = ufs_xn_remove(fs, &nd->x, (int)r, depth);
		if (r < 0)
			return kit_err(r);
		B->held -= e->nsect - k;
		e->nsect = (uint32_t)k;
		B->mapped = keep;
	}
	if (keep == 0 && B->stale_pos) {
		/* Lines naming no extent: every list is empty now, tables go. */
		int err = ufs_map_tidy(fs, ip);
		if (err < 0)
			return err;
	}
	return drop_empty_tail(fs, ip);
}

int ufs_map_tidy(struct ufs *fs, struct uinode *ip)
{
	for (int n = 0; n < UN_MAX; n++)
		if (B->node[n].used && n != UN_DOUBLE) {
			int err = write_table(fs, ip, n, 0);
			if (err < 0)
				return err;
		}
	B->stale_pos = 0;
	return 0;
}

const struct ed_protector *ufs_map_prot(struct ufs *fs, struct uinode *ip, uint64_t sector)
{
	/* Callers ask about the sector ufs_map_lookup just gave them. */
	const struct uext *h = B->hint < B->next ? &B->ext[B->hint] : NULL;
	if (h != NULL && sector >= h->sector && sector < h->sector + h->nsect)
		return ufs_xn_prot(fs, &B->node[h->node].x);
	for (uint32_t i = 0; i < B->next; i++) {
		const struct uext *e = &B->ext[i];
		ufs_map_steps++;
		if (sector >= e->sector && sector < e->sector + e->nsect)
			return ufs_xn_prot(fs, &B->node[e->node].x);
	}
	return ufs_xn_prot(fs, &B->node[UN_INODE].x);
}
