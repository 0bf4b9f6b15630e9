/*
 * bitmap.c - sparse bitmaps: one bit per sector of a unit, in 4096-byte
 * leaf pages of 32768 bits, reached through a radix tree of pointer pages.
 *
 * The free maps are the reason.  A bitmap of a 16 TiB unit is 4 GiB, but
 * what a disk holds is mostly long runs: all free, or all allocated.  So a
 * leaf (or a whole subtree) whose bits are all equal is not a page but a
 * marker, ED_BM_ZERO or ED_BM_ONES, and memory follows what is stored: a
 * page per 16 MiB region that holds both free and allocated sectors.
 *
 * A bitmap may also be a delta against another (its `base`): a subtree
 * marked ED_BM_SHARED reads as the base's.  The durable free map is kept
 * that way against the exported one, from which it differs only where
 * allocations are not yet committed; it owns pages only there.  The base
 * knows its dependent (`dep`), and before any of its leaves changes, the
 * dependent takes its own copy of that leaf.
 *
 * Changes that turn a marker into a page need memory.  ed_bm_prepare()
 * allocates everything a later set or clear of a range would need, so
 * that callers can fail cleanly before changing anything; after it, set
 * and clear of that range cannot fail.
 */
#include "kernel/exodisk/edcore.h"

#define PTRS        (ED_PAGE / sizeof(void *))       /* 512 per pointer page */
#define LEVELS      3                                /* pointer levels above the leaves */

static inline bool marker(const void *p)
{
	return p == ED_BM_ZERO || p == ED_BM_ONES || p == ED_BM_SHARED;
}

static void *page_new(struct ed_bm *m)
{
	void *p = m->env->page_alloc(m->env->ctx);
	if (p != NULL && m->pages != NULL)
		(*m->pages)++;
	return p;
}

static void page_del(struct ed_bm *m, void *p)
{
	m->env->page_free(m->env->ctx, p);
	if (m->pages != NULL)
		(*m->pages)--;
}

/* Bits of leaf li that lie below nbits. */
static uint64_t leaf_valid(const struct ed_bm *m, uint64_t li)
{
	uint64_t start = li * ED_BM_LEAF_BITS;
	return start >= m->nbits ? 0 : ED_MIN(ED_BM_LEAF_BITS, m->nbits - start);
}

static uint64_t nleaves(const struct ed_bm *m)
{
	return (m->nbits + ED_BM_LEAF_BITS - 1) / ED_BM_LEAF_BITS;
}

static void leaf_fill(uint64_t *w, uint64_t valid, bool ones)
{
	ed_memset(w, 0, ED_PAGE);
	if (!ones)
		return;
	uint64_t full = valid / 64;
	ed_memset(w, 0xff, full * 8);
	if (valid % 64)
		w[full] = (1ull << (valid % 64)) - 1;
}

static uint64_t popcount_page(const uint64_t *w)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < ED_PAGE / 8; i++)
		n += (uint64_t)__builtin_popcountll(w[i]);
	return n;
}

/* Is a leaf's page all clear (0), all set below valid (1), or mixed (-1)?
 * A mixed page - the usual answer - is known at its first word that
 * differs from the first: no count of the whole page. */
static int uniform(const uint64_t *w, uint64_t valid)
{
	uint64_t first = w[0];
	if (first != 0 && first != ~0ull && valid >= 64)
		return -1;
	bool ones = first != 0;
	uint64_t full = valid / 64;
	for (uint64_t i = 0; i < ED_PAGE / 8; i++) {
		uint64_t want = !ones || i > full ? 0 : i < full ? ~0ull : (1ull << (valid % 64)) - 1;
		if (w[i] != want)
			return -1;
	}
	return ones ? 1 : 0;
}

/* ---- reading ------------------------------------------------------------------ */

/* Slot of leaf li in the tree, or NULL if a marker above it decides: then
 * *above is that marker. */
static void **leaf_slot(const struct ed_bm *m, uint64_t li, void **above)
{
	void **slot = (void **)&m->root;
	for (int lvl = LEVELS; lvl > 0; lvl--) {
		void *p = *slot;
		if (marker(p)) {
			*above = p;
			return NULL;
		}
		slot = &((void **)p)[(li >> (9 * (lvl - 1))) & (PTRS - 1)];
	}
	return slot;
}

/* The leaf's page, or NULL with *mk = ED_BM_ZERO / ED_BM_ONES (SHARED is
 * resolved through the base); and the aligned block of leaves [*first,
 * *first + *n) that the same answer covers: one leaf for a page, a whole
 * subtree for a marker.  Searches skip a uniform subtree in one step, so
 * finding the next allocated sector of a blank 16 TiB map is a few
 * lookups, not a million. */
static const uint64_t *leaf_block(const struct ed_bm *m, uint64_t li, void **mk, uint64_t *first,
                                  uint64_t *n)
{
	void **slot = (void **)&m->root;
	uint64_t size = 1ull << (9 * LEVELS);
	void *p = *slot;
	for (int lvl = LEVELS; lvl > 0 && !marker(p); lvl--) {
		slot = &((void **)p)[(li >> (9 * (lvl - 1))) & (PTRS - 1)];
		size >>= 9;
		p = *slot;
	}
	*first = li & ~(size - 1);
	*n = size;
	if (p == ED_BM_SHARED) {
		uint64_t f2, n2;
		const uint64_t *w = leaf_block(m->base, li, mk, &f2, &n2);
		if (n2 < *n) {
			*first = f2;
			*n = n2;
		}
		return w;
	}
	if (marker(p)) {
		*mk = p;
		return NULL;
	}
	*mk = NULL;
	return p;
}

const uint64_t *ed_bm_leaf(const struct ed_bm *m, uint64_t li, void **mk)
{
	uint64_t first, n;
	return leaf_block(m, li, mk, &first, &n);
}

bool ed_bm_test(const struct ed_bm *m, uint64_t bit)
{
	void *mk;
	const uint64_t *w = ed_bm_leaf(m, bit / ED_BM_LEAF_BITS, &mk);
	if (w == NULL)
		return mk == ED_BM_ONES;
	uint64_t b = bit % ED_BM_LEAF_BITS;
	return (w[b / 64] >> (b % 64)) & 1;
}

/* Mask of [b, b + n) within b's word; *k = how many of those bits. */
static inline uint64_t span(uint64_t b, uint64_t n, uint64_t *k)
{
	uint64_t off = b % 64, c = ED_MIN(n, 64 - off);
	*k = c;
	return (c == 64 ? ~0ull : ((1ull << c) - 1)) << off;
}

/* Does [start, start + count) hold a bit equal to `val`? */
static bool any_is(const struct ed_bm *m, uint64_t start, uint64_t count, bool val)
{
	while (count > 0) {
		uint64_t li = start / ED_BM_LEAF_BITS, b = start % ED_BM_LEAF_BITS;
		uint64_t n = ED_MIN(count, ED_BM_LEAF_BITS - b);
		void *mk;
		const uint64_t *w = ed_bm_leaf(m, li, &mk);
		if (w == NULL) {
			if ((mk == ED_BM_ONES) == val)
				return true;
		} else {
			for (uint64_t s = b, left = n; left > 0; ) {
				uint64_t k, mask = span(s, left, &k);
				uint64_t x = val ? w[s / 64] : ~w[s / 64];
				if (x & mask)
					return true;
				s += k;
				left -= k;
			}
		}
		start += n;
		count -= n;
	}
	return false;
}

bool ed_bm_any(const struct ed_bm *m, uint64_t start, uint64_t count)
{
	return any_is(m, start, count, true);
}

bool ed_bm_all(const struct ed_bm *m, uint64_t start, uint64_t count)
{
	return !any_is(m, start, count, false);
}

/* The first run of set bits at or after *from: its first bit in *from and
 * its length in *len; false if there is none. */
bool ed_bm_run(const struct ed_bm *m, uint64_t *from, uint64_t *len)
{
	uint64_t s = ed_bm_next(m, *from, true);
	if (s >= m->nbits)
		return false;
	*from = s;
	*len = ed_bm_next(m, s, false) - s;
	return true;
}

/* The first bit at or after `from` (below the end) equal to val, or nbits. */
uint64_t ed_bm_next(const struct ed_bm *m, uint64_t from, bool val)
{
	while (from < m->nbits) {
		uint64_t li = from / ED_BM_LEAF_BITS, b = from % ED_BM_LEAF_BITS;
		uint64_t end = li * ED_BM_LEAF_BITS + leaf_valid(m, li);
		void *mk;
		uint64_t first, n;
		const uint64_t *w = leaf_block(m, li, &mk, &first, &n);
		if (w == NULL) {
			if ((mk == ED_BM_ONES) == val)
				return from;
			uint64_t next = first + n;
			from = next >= nleaves(m) ? m->nbits : next * ED_BM_LEAF_BITS;
			continue;
		}
		for (uint64_t i = b / 64; i < ED_PAGE / 8; i++) {
			uint64_t x = val ? w[i] : ~w[i];
			if (i == b / 64)
				x &= ~0ull << (b % 64);
			if (x != 0) {
				uint64_t s = li * ED_BM_LEAF_BITS + i * 64 + (uint64_t)__builtin_ctzll(x);
				return s < end ? s : m->nbits;
			}
		}
		from = end;
	}
	return m->nbits;
}

/* The last bit below `before` equal to val, or UINT64_MAX. */
uint64_t ed_bm_prev(const struct ed_bm *m, uint64_t before, bool val)
{
	before = ED_MIN(before, m->nbits);
	while (before > 0) {
		uint64_t last = before - 1;
		uint64_t li = last / ED_BM_LEAF_BITS, start = li * ED_BM_LEAF_BITS;
		void *mk;
		uint64_t first, n;
		const uint64_t *w = leaf_block(m, li, &mk, &first, &n);
		if (w == NULL) {
			if ((mk == ED_BM_ONES) == val)
				return last;
			before = first * ED_BM_LEAF_BITS;
			continue;
		}
		uint64_t b = last - start;
		for (uint64_t i = b / 64 + 1; i-- > 0; ) {
			uint64_t x = val ? w[i] : ~w[i];
			if (i == b / 64 && b % 64 != 63)
				x &= (1ull << (b % 64 + 1)) - 1;
			if (x != 0)
				return start + i * 64 + 63 - (uint64_t)__builtin_clzll(x);
		}
		before = start;
	}
	return UINT64_MAX;
}

/* ---- changing ------------------------------------------------------------------- */

static void free_tree(struct ed_bm *m, void *p, int lvl)
{
	if (marker(p))
		return;
	if (lvl > 0)
		for (uint32_t i = 0; i < PTRS; i++)
			free_tree(m, ((void **)p)[i], lvl - 1);
	page_del(m, p);
}

static void notify(struct ed_bm *m, uint64_t li)
{
	if (m->changed != NULL)
		m->changed(m->arg, li);
}

/* A pointer page whose entries are all the same marker gives way to that
 * marker (the bits read the same). */
static bool collapse_slot(struct ed_bm *m, void **slot)
{
	void **pg = *slot;
	if (marker(pg))
		return true;
	void *first = pg[0];
	if (!marker(first))
		return false;
	for (uint32_t i = 1; i < PTRS; i++)
		if (pg[i] != first)
			return false;
	*slot = first;
	page_del(m, pg);
	return true;
}

/* After leaf li changed: the pointer pages above it that became uniform go,
 * so that a long run of all-free or all-allocated leaves costs nothing. */
static void collapse_up(struct ed_bm *m, uint64_t li)
{
	void **s3 = &m->root;
	if (marker(*s3))
		return;
	void **s2 = &((void **)*s3)[(li >> 18) & (PTRS - 1)];
	if (marker(*s2))
		return;
	void **s1 = &((void **)*s2)[(li >> 9) & (PTRS - 1)];
	if (collapse_slot(m, s1) && collapse_slot(m, s2))
		(void)collapse_slot(m, s3);
}

/* The slot of leaf li, making pointer pages on the way: a marker above
 * becomes a page of that marker.  NULL if memory ran out. */
static void **leaf_slot_make(struct ed_bm *m, uint64_t li)
{
	void **slot = (void **)&m->root;
	for (int lvl = LEVELS; lvl > 0; lvl--) {
		if (marker(*slot)) {
			void *mk = *slot;
			void **np = page_new(m);
			if (np == NULL)
				return NULL;
			for (uint32_t i = 0; i < PTRS; i++)
				np[i] = mk;
			*slot = np;
		}
		slot = &((void **)*slot)[(li >> (9 * (lvl - 1))) & (PTRS - 1)];
	}
	return slot;
}

/* Before leaf li of m changes, the dependent that shares it takes a copy. */
static int unshare_dep(struct ed_bm *m, uint64_t li)
{
	struct ed_bm *dep = m->dep;
	if (dep == NULL)
		return 0;
	void *above = ED_BM_ZERO;
	void **ds = leaf_slot(dep, li, &above);
	if ((ds != NULL ? *ds : above) != ED_BM_SHARED)
		return 0;
	if ((ds = leaf_slot_make(dep, li)) == NULL)
		return ED_E_NOMEM;
	void *mk;
	const uint64_t *w = ed_bm_leaf(m, li, &mk);
	if (w == NULL) {
		*ds = mk;
		return 0;
	}
	uint64_t *copy = page_new(dep);
	if (copy == NULL)
		return ED_E_NOMEM;
	ed_memcpy(copy, w, ED_PAGE);
	*ds = copy;
	return 0;
}

/* Make leaf li of m a page of its own (for a partial change). */
static uint64_t *leaf_page(struct ed_bm *m, uint64_t li)
{
	if (unshare_dep(m, li) != 0)
		return NULL;
	void **slot = leaf_slot_make(m, li);
	if (slot == NULL)
		return NULL;
	if (!marker(*slot))
		return *slot;
	uint64_t *w = page_new(m);
	if (w == NULL)
		return NULL;
	if (*slot == ED_BM_SHARED) {
		void *mk;
		const uint64_t *bw = ed_bm_leaf(m->base, li, &mk);
		if (bw != NULL)
			ed_memcpy(w, bw, ED_PAGE);
		else
			leaf_fill(w, leaf_valid(m, li), mk == ED_BM_ONES);
	} else {
		leaf_fill(w, leaf_valid(m, li), *slot == ED_BM_ONES);
	}
	*slot = w;
	notify(m, li);
	return w;
}

/* Does changing [b, b + n) of leaf li to val need the leaf as a page? */
static bool needs_page(const struct ed_bm *m, uint64_t li, uint64_t b, uint64_t n, bool val)
{
	if (b == 0 && n >= leaf_valid(m, li))
		return false;              /* the whole leaf: a marker will do */
	void *mk;
	const uint64_t *w = ed_bm_leaf(m, li, &mk);
	return w == NULL && (mk == ED_BM_ONES) != val;
}

int ed_bm_prepare(struct ed_bm *m, uint64_t start, uint64_t count, bool val)
{
	while (count > 0) {
		uint64_t li = start / ED_BM_LEAF_BITS, b = start % ED_BM_LEAF_BITS;
		uint64_t n = ED_MIN(count, ED_BM_LEAF_BITS - b);
		/* A whole leaf becomes a marker: only its slot needs making. */
		int err = unshare_dep(m, li);
		if (err == 0 && leaf_slot_make(m, li) == NULL)
			err = ED_E_NOMEM;
		if (err == 0 && needs_page(m, li, b, n, val) && leaf_page(m, li) == NULL)
			err = ED_E_NOMEM;
		if (err != 0)
			return err;
		start += n;
		count -= n;
	}
	return 0;
}

/* Set leaf li to the marker mk (its page, if any, goes). */
static int leaf_mark(struct ed_bm *m, uint64_t li, void *mk)
{
	if (unshare_dep(m, li) != 0)
		return ED_E_NOMEM;
	void **slot = leaf_slot_make(m, li);
	if (slot == NULL)
		return ED_E_NOMEM;
	void *old = *slot;
	if (old == mk)
		return 0;
	*slot = mk;
	notify(m, li);
	if (!marker(old))
		page_del(m, old);
	return 0;
}

/* Bits set in leaf li now (below nbits). */
static uint64_t leaf_count(const struct ed_bm *m, uint64_t li)
{
	void *mk;
	const uint64_t *w = ed_bm_leaf(m, li, &mk);
	if (w == NULL)
		return mk == ED_BM_ONES ? leaf_valid(m, li) : 0;
	return popcount_page(w);
}

static int change(struct ed_bm *m, uint64_t start, uint64_t count, bool val)
{
	int err = 0;
	while (count > 0) {
		uint64_t li = start / ED_BM_LEAF_BITS, b = start % ED_BM_LEAF_BITS;
		uint64_t n = ED_MIN(count, ED_BM_LEAF_BITS - b);
		uint64_t valid = leaf_valid(m, li);
		if (b == 0 && n >= valid) {
			uint64_t before = leaf_count(m, li);
			if (leaf_mark(m, li, val ? ED_BM_ONES : ED_BM_ZERO) == 0)
				m->count = m->count - before + (val ? valid : 0);
			else
				err = ED_E_NOMEM;
			/* Once per pointer page: the last leaf of the page or the range. */
			if (li % PTRS == PTRS - 1 || count == n)
				collapse_up(m, li);
		} else {
			void *mk;
			const uint64_t *cw = ed_bm_leaf(m, li, &mk);
			bool nothing = cw == NULL && (mk == ED_BM_ONES) == val;
			uint64_t *w = nothing ? NULL : leaf_page(m, li);
			if (!nothing && w == NULL) {
				err = ED_E_NOMEM;
			} else if (w != NULL) {
				for (uint64_t s = b, left = n; left > 0; ) {
					uint64_t k, mask = span(s, left, &k);
					uint64_t old = w[s / 64];
					w[s / 64] = val ? old | mask : old & ~mask;
					uint64_t diff = (uint64_t)__builtin_popcountll(old ^ w[s / 64]);
					m->count = val ? m->count + diff : m->count - diff;
					s += k;
					left -= k;
				}
			}
		}
		start += n;
		count -= n;
	}
	return err;
}

int ed_bm_set(struct ed_bm *m, uint64_t start, uint64_t count)
{
	return change(m, start, count, true);
}

int ed_bm_clear(struct ed_bm *m, uint64_t start, uint64_t count)
{
	return change(m, start, count, false);
}

/* m &= ~mask | keep over the range: clear what only m has (the conservative
 * free map releasing what the durable one does not hold). */
int ed_bm_clear_unless(struct ed_bm *m, const struct ed_bm *keep, uint64_t start, uint64_t count)
{
	int err = 0;
	while (count > 0) {
		uint64_t li = start / ED_BM_LEAF_BITS, b = start % ED_BM_LEAF_BITS;
		uint64_t n = ED_MIN(count, ED_BM_LEAF_BITS - b);
		void *mk, *kmk;
		const uint64_t *w = ed_bm_leaf(m, li, &mk);
		const uint64_t *kw = ed_bm_leaf(keep, li, &kmk);
		if ((w == NULL && mk == ED_BM_ZERO) || (kw == NULL && kmk == ED_BM_ONES) ||
		    (w != NULL && w == kw)) {
			/* nothing that only m holds */
		} else if (kw == NULL) {
			if (change(m, start, n, false) != 0)      /* keep holds none of it */
				err = ED_E_NOMEM;
		} else {
			for (uint64_t s = b, left = n; left > 0; ) {
				uint64_t k, mask = span(s, left, &k);
				uint64_t drop = mask & ~kw[s / 64];
				if (drop != 0 && (w == NULL || (w[s / 64] & drop) != 0)) {
					uint64_t *pw = leaf_page(m, li);
					if (pw == NULL) {
						err = ED_E_NOMEM;
						break;
					}
					w = pw;
					uint64_t old = pw[s / 64];
					pw[s / 64] = old & ~drop;
					m->count -= (uint64_t)__builtin_popcountll(old & drop);
				}
				s += k;
				left -= k;
			}
		}
		start += n;
		count -= n;
	}
	return err;
}

uint64_t *ed_bm_own(struct ed_bm *m, uint64_t li)
{
	return leaf_page(m, li);
}

/* If leaf li of a dependent holds exactly what its base does, share it again. */
/* The slot on leaf li's path that holds a marker, and its level (0: the
 * leaf's own slot), or NULL if the leaf is a page. */
static void **marker_slot(struct ed_bm *m, uint64_t li, int *level)
{
	void **slot = &m->root;
	for (int lvl = LEVELS; lvl > 0; lvl--) {
		if (marker(*slot)) {
			*level = lvl;
			return slot;
		}
		slot = &((void **)*slot)[(li >> (9 * (lvl - 1))) & (PTRS - 1)];
	}
	*level = 0;
	return marker(*slot) ? slot : NULL;
}

void ed_bm_reshare(struct ed_bm *m, uint64_t li)
{
	/* A marker high up (a whole run of leaves) is shared if the base has
	 * the same marker there, or higher. */
	int lvl, blvl;
	void **ms = marker_slot(m, li, &lvl);
	if (ms != NULL && *ms != ED_BM_SHARED && lvl > 0) {
		void **bs = marker_slot(m->base, li, &blvl);
		if (bs != NULL && *bs == *ms && blvl >= lvl)
			*ms = ED_BM_SHARED;
		return;
	}
	void *above = ED_BM_ZERO;
	void **slot = leaf_slot(m, li, &above);
	if (slot == NULL || *slot == ED_BM_SHARED)
		return;
	void *mk, *bmk;
	const uint64_t *w = ed_bm_leaf(m, li, &mk);
	const uint64_t *bw = ed_bm_leaf(m->base, li, &bmk);
	bool same;
	if (w == NULL && bw == NULL)
		same = mk == bmk;
	else if (w != NULL && bw != NULL)
		same = ed_memcmp(w, bw, ED_PAGE) == 0;
	else
		same = false;
	if (!same)
		return;
	void *old = *slot;
	*slot = ED_BM_SHARED;
	if (!marker(old))
		page_del(m, old);
	collapse_up(m, li);
}

/* A leaf that reads as all one value becomes that marker (freeing its page):
 * mount uses it on what it reads, so memory follows the mixed regions. */
void ed_bm_compact(struct ed_bm *m, uint64_t li)
{
	void *above = ED_BM_ZERO;
	void **slot = leaf_slot(m, li, &above);
	if (slot == NULL || marker(*slot))
		return;
	int u = uniform(*slot, leaf_valid(m, li));
	if (u < 0)
		return;
	/* The bits stay what they were, so a dependent sharing the leaf still
	 * reads the same: no copy for it. */
	void *old = *slot;
	*slot = u == 0 ? ED_BM_ZERO : ED_BM_ONES;
	notify(m, li);
	page_del(m, old);
	collapse_up(m, li);
}

/* Install a page the caller filled as leaf li (mount): the bitmap owns it. */
int ed_bm_install(struct ed_bm *m, uint64_t li, uint64_t *page)
{
	void **slot = leaf_slot_make(m, li);
	if (slot == NULL)
		return ED_E_NOMEM;
	uint64_t before = leaf_count(m, li);
	void *old = *slot;
	*slot = page;
	if (m->pages != NULL)
		(*m->pages)++;
	if (!marker(old))
		page_del(m, old);
	m->count = m->count - before + popcount_page(page);
	notify(m, li);
	return 0;
}

/* ---- life ------------------------------------------------------------------------ */

void ed_bm_init(struct ed_bm *m, const struct ed_env *env, uint64_t nbits, void *fill,
                uint64_t *pages)
{
	ed_memset(m, 0, sizeof(*m));
	m->env = env;
	m->nbits = nbits;
	m->root = fill;
	m->pages = pages;
	if (fill == ED_BM_ONES)
		m->count = nbits;
}

void ed_bm_free(struct ed_bm *m)
{
	if (m->env != NULL)
		free_tree(m, m->root, LEVELS);
	m->root = ED_BM_ZERO;
	m->count = 0;
}

/* Every bit clear, the pages kept: a set emptied and filled again over and
 * over (a flush cycle's, unwritten.c) would otherwise free its tree each
 * time and build it again at the next bit - three pointer pages walked
 * 512 slots each, then allocated and zeroed again.  A leaf that is a ONES
 * marker (or a bitmap with a base) cannot be cleared in place without
 * memory: then the tree goes. */
void ed_bm_zero(struct ed_bm *m)
{
	uint64_t n = nleaves(m);
	for (uint64_t li = ed_bm_next_leaf(m, 0); li < n; li = ed_bm_next_leaf(m, li + 1)) {
		void *mk;
		if (m->base != NULL || ed_bm_leaf(m, li, &mk) == NULL) {
			ed_bm_free(m);
			return;
		}
		ed_memset(ed_bm_own(m, li), 0, ED_PAGE);
	}
	m->count = 0;
}

/* Number of leaves (for export and persistence). */
uint64_t ed_bm_nleaves(const struct ed_bm *m)
{
	return nleaves(m);
}

/* The next leaf index >= li whose backing differs from a ZERO marker in m
 * (a page or ONES), or nleaves.  Skips whole ZERO subtrees. */
uint64_t ed_bm_next_leaf(const struct ed_bm *m, uint64_t li)
{
	uint64_t n = nleaves(m);
	while (li < n) {
		/* Find the highest pointer level at which li's path hits a marker. */
		void *p = m->root;
		int lvl = LEVELS;
		for (; lvl > 0 && !marker(p); lvl--)
			p = ((void **)p)[(li >> (9 * (lvl - 1))) & (PTRS - 1)];
		uint64_t span_leaves = 1ull << (9 * lvl);
		uint64_t next = (li / span_leaves + 1) * span_leaves;
		if (p == ED_BM_SHARED) {
			/* As the base reads there. */
			uint64_t b = ed_bm_next_leaf(m->base, li);
			if (b < next)
				return b;
			li = next;
			continue;
		}
		if (p != ED_BM_ZERO)
			return li;
		li = next;        /* a ZERO marker covering 512^lvl leaves */
	}
	return n;
}

/* ---- sparse pointer arrays ------------------------------------------------------- */

void **ed_spa_slot(struct ed_spa *a, uint64_t i, bool make)
{
	void **slot = &a->root;
	for (int lvl = LEVELS; lvl > 0; lvl--) {
		if (*slot == NULL) {
			if (!make)
				return NULL;
			void *np = a->env->page_alloc(a->env->ctx);
			if (np == NULL)
				return NULL;
			if (a->pages != NULL)
				(*a->pages)++;
			*slot = np;
		}
		slot = &((void **)*slot)[(i >> (9 * (lvl - 1))) & (PTRS - 1)];
	}
	return slot;
}

static void spa_free(struct ed_spa *a, void *p, int lvl, void (*fn)(void *, void *), void *arg)
{
	if (p == NULL)
		return;
	for (uint32_t i = 0; i < PTRS; i++) {
		void *q = ((void **)p)[i];
		if (lvl > 1)
			spa_free(a, q, lvl - 1, fn, arg);
		else if (q != NULL && fn != NULL)
			fn(arg, q);
	}
	a->env->page_free(a->env->ctx, p);
	if (a->pages != NULL)
		(*a->pages)--;
}

void ed_spa_free(struct ed_spa *a, void (*fn)(void *arg, void *p), void *arg)
{
	if (a->env != NULL)
		spa_free(a, a->root, LEVELS, fn, arg);
	a->root = NULL;
}
