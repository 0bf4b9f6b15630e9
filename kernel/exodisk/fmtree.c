/*
 * fmtree.c - the free map on disk: a radix tree over its leaves.
 *
 * The free map is one bit per sector, 1 = allocated, in leaves of 32768
 * sectors (4 KiB).  On disk a leaf is a page of exactly those bits; above
 * the leaves are inner pages of ED_FMT_FANOUT pointers each, fm_height
 * levels of them, and the superblock points at the root.  A checkpoint that
 * changed only a few leaves (at most ED_FM_MAX_OVER, counting those of
 * earlier such checkpoints) writes just the leaves and puts their pointers
 * in the superblock, which overrides what the inner pages on disk say
 * about them; a checkpoint that changes more rewrites the inner pages
 * above all of them, and the list empties.  So what a checkpoint writes
 * does not grow with the tree's height.  A pointer can
 * also say "everything below is free" (ED_MPTR_ZERO) or "allocated"
 * (ED_MPTR_ONES) with no page at all, so a blank 16 TiB disk's free map is
 * a handful of pages and format writes almost nothing.  Every pointer
 * carries the MAC of the page below it.
 *
 * All of it is in memory while a unit is mounted: the inner pages as they
 * are on disk (fmt_img, by level and index: the pointers to leaves live in
 * the level-1 pages), the leaves in the free-map bitmaps (freemap.c), where
 * uniform leaves cost nothing.  Mount reads it all - the pages that are
 * not uniform, which is what is stored, not the disk's size.  Checkpoints
 * (ckpt.c) rewrite the leaves whose bits changed and the inner pages above
 * them, copy-on-write.
 */
#include "kernel/exodisk/edcore.h"

uint32_t ed_fmt_height(uint64_t nleaves)
{
	uint32_t h = 1;
	for (uint64_t cap = ED_FMT_FANOUT; cap < nleaves; cap *= ED_FMT_FANOUT)
		h++;
	return h;
}

static struct ed_mptr *img_ptrs(uint8_t *img)
{
	return (struct ed_mptr *)(img + sizeof(struct ed_fmhdr));
}

/* Nodes of a level: leaves (level 0), then inner levels up to the root. */
static uint64_t level_nodes(const struct ed_disk *d, uint32_t level)
{
	uint64_t n = ed_bm_nleaves(&d->fm);
	for (uint32_t l = 0; l < level; l++)
		n = (n + ED_FMT_FANOUT - 1) / ED_FMT_FANOUT;
	return n;
}

struct ed_mptr *ed_fmt_ptr(struct ed_disk *d, uint32_t level, uint64_t index, bool make)
{
	if (level >= d->fmt_height)
		return &d->fmt_root;
	uint8_t *img = ed_fmt_image(d, level + 1, index / ED_FMT_FANOUT, make);
	return img == NULL ? NULL : &img_ptrs(img)[index % ED_FMT_FANOUT];
}

uint8_t *ed_fmt_image(struct ed_disk *d, uint32_t level, uint64_t index, bool make)
{
	void **slot = ed_spa_slot(&d->fmt_img[level], index, make);
	if (slot == NULL)
		return NULL;
	if (*slot != NULL || !make)
		return *slot;
	/* A node under a ZERO or ONES pointer: made of that marker. */
	struct ed_mptr *own = ed_fmt_ptr(d, level, index, true);
	if (own == NULL || own->sector > ED_MPTR_ONES)
		return NULL;     /* a page pointer whose image is not here cannot be */
	uint8_t *img = ed_dpage_alloc(d);
	if (img == NULL)
		return NULL;
	struct ed_fmhdr *h = (struct ed_fmhdr *)img;
	h->magic = ED_FMT_MAGIC;
	h->fmt = ED_TREE_FMT;
	h->level = (uint8_t)level;
	h->index = index;
	/* Entries beyond the disk's leaves stay ZERO. */
	uint64_t below = level_nodes(d, level - 1);
	for (uint32_t i = 0; i < ED_FMT_FANOUT; i++)
		if (index * ED_FMT_FANOUT + i < below)
			img_ptrs(img)[i].sector = own->sector;
	*slot = img;
	return img;
}

/* ---- mount: read the whole tree ------------------------------------------------ */

struct pend {
	uint32_t level;            /* of the node read: 0 = leaf */
	uint64_t index;
	struct ed_mptr ptr;
	void *page;
};

static bool ptr_ok(const struct ed_disk *d, const struct ed_mptr *p)
{
	return p->sector <= ED_MPTR_ONES ||
	       (p->sector >= d->data_start && p->sector % ED_SECT_PER_PAGE == 0 &&
	        p->sector + ED_SECT_PER_PAGE <= d->nsectors);
}

static int check_image(struct ed_disk *d, const uint8_t *img, uint32_t level, uint64_t index)
{
	const struct ed_fmhdr *h = (const struct ed_fmhdr *)img;
	if (h->magic != ED_FMT_MAGIC || h->fmt != ED_TREE_FMT || h->level != level || h->index != index ||
	    h->pad != 0)
		return ED_E_CORRUPT;
	uint64_t below = level_nodes(d, level - 1);
	const struct ed_mptr *p = (const struct ed_mptr *)(img + sizeof(*h));
	for (uint32_t i = 0; i < ED_FMT_FANOUT; i++) {
		if (!ptr_ok(d, &p[i]))
			return ED_E_CORRUPT;
		if (index * ED_FMT_FANOUT + i >= below && p[i].sector != ED_MPTR_ZERO)
			return ED_E_CORRUPT;
	}
	return 0;
}

/* What a ONES pointer at (level, index) says: its leaves are all allocated.
 * (Out of memory, that is ED_E_NOMEM: the mount fails rather than take the
 * leaves for free, which would make the checkpoint look damaged.) */
static int mark_ones(struct ed_disk *d, uint32_t level, uint64_t index)
{
	uint64_t per = 1;
	for (uint32_t l = 0; l < level; l++)
		per *= ED_FMT_FANOUT;
	uint64_t first = index * per * ED_BM_LEAF_BITS;
	if (first >= d->nsectors)
		return 0;
	return ed_bm_set(&d->fm, first, ED_MIN(per * ED_BM_LEAF_BITS, d->nsectors - first));
}

/* Read the pages of a batch, verify them, and file them: inner pages as
 * images, leaves into the free map.  Their children join *next. */
static int read_batch(struct ed_disk *d, struct pend *b, uint32_t n)
{
	/* The transfers share the batch's page (kernel stacks are small). */
	struct ed_xfer *x = (struct ed_xfer *)(b + ED_SYNC_MANY);
	for (uint32_t i = 0; i < n; i++)
		x[i] = (struct ed_xfer){ b[i].ptr.sector, ED_SECT_PER_PAGE, b[i].page };
	int err = ed_sync_many(d->ed, d->unit, BLK_READ, x, n);
	d->st_mount_reads += (uint64_t)n * ED_SECT_PER_PAGE;
	if (err != 0)
		d->ed->bad_sector = b[0].ptr.sector;
	for (uint32_t i = 0; err == 0 && i < n; i++) {
		uint8_t tag[16];
		ed_mpage_tag(&d->ed->keys, ED_DOM_FMAP, d->sb.uuid, b[i].ptr.sector, b[i].page, tag);
		if (!ed_tag_equal(tag, b[i].ptr.tag))
			err = ED_E_BADMAC;
		else if (b[i].level > 0)
			err = check_image(d, b[i].page, b[i].level, b[i].index);
		if (err != 0) {
			d->ed->bad_sector = b[i].ptr.sector;
			break;
		}
		if (b[i].level == 0) {
			uint64_t li = b[i].index;
			uint64_t valid = ED_MIN(ED_BM_LEAF_BITS, d->nsectors - li * ED_BM_LEAF_BITS);
			/* Bits past the end of the disk are never set. */
			uint64_t *w = b[i].page;
			for (uint64_t bit = valid; bit < ED_BM_LEAF_BITS; bit++)
				if ((w[bit / 64] >> (bit % 64)) & 1)
					err = ED_E_CORRUPT;
			if (err == 0)
				err = ed_bm_install(&d->fm, li, b[i].page);
			if (err == 0) {
				d->mem_pages--;                   /* the bitmap counts it now */
				ed_bm_compact(&d->fm, li);
				b[i].page = NULL;
			}
		} else {
			void **slot = ed_spa_slot(&d->fmt_img[b[i].level], b[i].index, true);
			if (slot == NULL) {
				err = ED_E_NOMEM;
			} else {
				*slot = b[i].page;
				b[i].page = NULL;
			}
		}
	}
	for (uint32_t i = 0; i < n; i++)
		if (b[i].page != NULL)
			ed_dpage_free(d, b[i].page);
	return err;
}

static bool overridden(const struct ed_super *sb, uint64_t li)
{
	for (uint32_t i = 0; i < sb->fm_nover; i++)
		if (sb->fm_over[i].leaf == li)
			return true;
	return false;
}

/* The superblock's overrides, once the tree is read: their pointers go into
 * the images (made from the markers above where the tree on disk has none),
 * their leaves into the free map. */
static int load_overrides(struct ed_disk *d, struct pend *b)
{
	const struct ed_super *sb = &d->sb;
	uint32_t n = 0;
	int err = 0;
	for (uint32_t i = 0; err == 0 && i < sb->fm_nover; i++) {
		uint64_t li = sb->fm_over[i].leaf;
		const struct ed_mptr *op = &sb->fm_over[i].ptr;
		struct ed_mptr *ptr = ed_fmt_ptr(d, 0, li, true);
		if (ptr == NULL) {
			err = ED_E_NOMEM;
			break;
		}
		*ptr = *op;
		d->fm_over[d->fm_nover++] = li;
		uint64_t first = li * ED_BM_LEAF_BITS;
		uint64_t valid = ED_MIN(ED_BM_LEAF_BITS, d->nsectors - first);
		/* A marker above may have set its bits: the override decides. */
		err = ed_bm_prepare(&d->fm, first, valid, false);
		if (err == 0)
			(void)ed_bm_clear(&d->fm, first, valid);
		if (err == 0 && op->sector == ED_MPTR_ONES)
			err = ed_bm_set(&d->fm, first, valid);
		if (err != 0 || op->sector <= ED_MPTR_ONES)
			continue;
		b[n] = (struct pend){ 0, li, *op, ed_dpage_alloc(d) };
		if (b[n].page == NULL) {
			err = ED_E_NOMEM;
			break;
		}
		n++;
	}
	if (err == 0 && n > 0)
		return read_batch(d, b, n);
	for (uint32_t i = 0; i < n; i++)     /* read_batch frees what it was given */
		ed_dpage_free(d, b[i].page);
	return err;
}

int ed_fmt_load(struct ed_disk *d)
{
	d->fmt_height = d->sb.fm_height;
	d->fmt_root = d->sb.fm_root;
	uint64_t nl = ed_bm_nleaves(&d->fm);
	if (d->fmt_height != ed_fmt_height(nl) || !ptr_ok(d, &d->fmt_root) ||
	    d->sb.fm_nover > ED_FM_MAX_OVER)
		return ED_E_CORRUPT;
	d->fm_nover = 0;
	for (uint32_t i = 0; i < d->sb.fm_nover; i++) {
		const struct ed_fmover *o = &d->sb.fm_over[i];
		if (o->leaf >= nl || !ptr_ok(d, &o->ptr))
			return ED_E_CORRUPT;
		for (uint32_t j = 0; j < i; j++)
			if (d->sb.fm_over[j].leaf == o->leaf)
				return ED_E_CORRUPT;
	}
	for (uint32_t l = 0; l <= ED_FMT_MAX_HEIGHT; l++) {
		d->fmt_img[l].env = &d->ed->env;
		d->fmt_img[l].pages = &d->mem_pages;
	}
	if (d->fmt_root.sector == ED_MPTR_ONES && mark_ones(d, d->fmt_height, 0) != 0)
		return ED_E_NOMEM;
	struct pend *b = ed_dpage_alloc(d);
	if (b == NULL)
		return ED_E_NOMEM;
	if (d->fmt_root.sector <= ED_MPTR_ONES) {
		int err = load_overrides(d, b);
		ed_dpage_free(d, b);
		return err;
	}
	_Static_assert(ED_SYNC_MANY * (sizeof(struct pend) + sizeof(struct ed_xfer)) <= ED_PAGE,
	               "a batch fits a page");
	/* The root, then level by level downwards. */
	b[0] = (struct pend){ d->fmt_height, 0, d->fmt_root, ed_dpage_alloc(d) };
	int err = b[0].page == NULL ? ED_E_NOMEM : read_batch(d, b, 1);
	for (uint32_t level = d->fmt_height; err == 0 && level >= 1; level--) {
		uint32_t n = 0;
		uint64_t nodes = level_nodes(d, level);
		for (uint64_t j = 0; err == 0 && j < nodes; j++) {
			void **slot = ed_spa_slot(&d->fmt_img[level], j, false);
			if (slot == NULL || *slot == NULL)
				continue;
			struct ed_mptr *p = img_ptrs(*slot);
			for (uint32_t k = 0; err == 0 && k < ED_FMT_FANOUT; k++) {
				uint64_t child = j * ED_FMT_FANOUT + k;
				if (level == 1 && overridden(&d->sb, child))
					continue;      /* an older page: the superblock names its leaf */
				if (p[k].sector == ED_MPTR_ONES) {
					err = mark_ones(d, level - 1, child);
					continue;
				}
				if (p[k].sector == ED_MPTR_ZERO)
					continue;
				b[n] = (struct pend){ level - 1, child, p[k], ed_dpage_alloc(d) };
				if (b[n].page == NULL) {
					err = ED_E_NOMEM;
					break;
				}
				if (++n == ED_SYNC_MANY) {
					err = read_batch(d, b, n);
					n = 0;
				}
			}
		}
		if (err == 0 && n > 0)
			err = read_batch(d, b, n);
		else
			for (uint32_t i = 0; i < n; i++)
				ed_dpage_free(d, b[i].page);
	}
	if (err == 0)
		err = load_overrides(d, b);
	ed_dpage_free(d, b);
	return err;
}

static void free_img(void *arg, void *p)
{
	ed_dpage_free(arg, p);
}

void ed_fmt_destroy(struct ed_disk *d)
{
	for (uint32_t l = 0; l <= ED_FMT_MAX_HEIGHT; l++)
		ed_spa_free(&d->fmt_img[l], free_img, d);
}

void ed_fmt_each_page(struct ed_disk *d, void (*fn)(void *arg, uint64_t sector, int err), void *arg)
{
	if (d->fmt_root.sector > ED_MPTR_ONES)
		fn(arg, d->fmt_root.sector, 0);
	for (uint32_t level = d->fmt_height; level >= 1; level--) {
		uint64_t nodes = level_nodes(d, level);
		for (uint64_t j = 0; j < nodes; j++) {
			uint8_t *img = ed_fmt_image(d, level, j, false);
			if (img == NULL)
				continue;
			for (uint32_t k = 0; k < ED_FMT_FANOUT; k++)
				if (img_ptrs(img)[k].sector > ED_MPTR_ONES)
					fn(arg, img_ptrs(img)[k].sector, 0);
		}
	}
}

uint64_t ed_fmt_level_nodes(const struct ed_disk *d, uint32_t level)
{
	return level_nodes(d, level);
}

void ed_fmt_drop_image(struct ed_disk *d, uint32_t level, uint64_t index)
{
	void **slot = ed_spa_slot(&d->fmt_img[level], index, false);
	if (slot != NULL && *slot != NULL) {
		ed_dpage_free(d, *slot);
		*slot = NULL;
	}
}
