/*
 * mount.c - formatting a disk, and mounting one: recovery.
 *
 * Format writes a constant amount whatever the disk's size: the two
 * superblocks, the log's first sector, and the few pages of an empty
 * binding tree and a free map whose only mixed leaf holds the exodisk's own
 * region (ckpt.c writes them).
 *
 * Recovery never scans the disk.  A mount reads the newest valid
 * superblock, the free map's tree (the pages of leaves that are neither all
 * free nor all allocated - what is stored, not the disk's size), the root
 * of the binding tree (the rest is read as lookups need it), then replays
 * the commit log from the position the superblock gives.  Each record is
 * accepted only if its MAC verifies, it carries the next sequence number
 * and the previous record's tag, and every image in it verifies; the first
 * record that fails ends the log (it is the one a crash interrupted).
 * Replaying a record re-applies its binding and free-map changes.  Then
 * every block the log says is current is compared with its home copy and
 * rewritten if the home is behind, and the disk is flushed.  The cost is
 * those pages plus the live log - at most half the log region - and no
 * more: docs/exodisk.md reports measurements.
 */
#include "kernel/exodisk/edcore.h"

void *ed_dpage_alloc(struct ed_disk *d)
{
	void *p = d->ed->env.page_alloc(d->ed->env.ctx);
	if (p != NULL)
		d->mem_pages++;
	return p;
}

void ed_dpage_free(struct ed_disk *d, void *p)
{
	d->ed->env.page_free(d->ed->env.ctx, p);
	d->mem_pages--;
}

static void disk_free(struct exodisk *ed, struct ed_disk *d)
{
	const struct ed_env *env = &ed->env;
	ed_bt_destroy(d);
	ed_fmt_destroy(d);
	ed_fm_destroy(d);
	ed_pvec_free(env, &d->logimg);
	ed_pvec_free(env, &d->ck_items);
	void *pages[] = { d->tmp, d->cksec, d->ckseg, d->loghdr, d->logseg, d->z_page };
	for (uint32_t i = 0; i < ED_NELEM(pages); i++)
		if (pages[i] != NULL)
			env->page_free(env->ctx, pages[i]);
	env->page_free(env->ctx, d);
}

static struct ed_disk *disk_new(struct exodisk *ed, int unit)
{
	_Static_assert(sizeof(struct ed_disk) <= ED_PAGE, "a disk's state fits a page");
	const struct ed_env *env = &ed->env;
	struct ed_disk *d = env->page_alloc(env->ctx);
	if (d == NULL)
		return NULL;
	d->ed = ed;
	d->unit = (uint16_t)unit;
	d->tmp = env->page_alloc(env->ctx);
	d->cksec = env->page_alloc(env->ctx);
	d->ckseg = env->page_alloc(env->ctx);
	d->loghdr = env->page_alloc(env->ctx);
	d->logseg = env->page_alloc(env->ctx);
	uint32_t nimg = ED_LOG_MAX_IMG * ED_XN_MAX_SECT / ED_SECT_PER_PAGE;
	int err = ed_pvec_alloc(env, &d->logimg, nimg);
	d->mem_pages = 6 + nimg + 1;
	d->bt_budget = ed->cfg.meta_pages;
	if (err != 0 || !d->tmp || !d->cksec || !d->ckseg || !d->loghdr || !d->logseg) {
		disk_free(ed, d);
		return NULL;
	}
	return d;
}

/* Sizes a format accepts: the region, some tree pages and some data; and
 * no more sectors than the exported free map can show. */
uint64_t ed_format_min_sectors(void)
{
	return ED_LOG_FIRST + 64 + 1024;
}

static uint64_t default_log(uint64_t n)
{
	return ED_MIN(ED_MAX(n / 256, 64), 2048);
}

/* Geometry of the superblock-to-be (format) or read (mount). */
static void set_geometry(struct ed_disk *d)
{
	d->nsectors = d->sb.nsectors;
	d->data_start = d->sb.data_start;
	d->meta_pages = d->sb.meta_pages;
	d->meta_cursor = d->data_start;
}

/* ---- format ------------------------------------------------------------------ */

int ed_format(struct exodisk *ed, int unit, const struct ed_format_opts *o)
{
	struct ed_format_opts none;
	if (o == NULL) {
		ed_memset(&none, 0, sizeof(none));
		o = &none;
	}
	if (unit < 0 || unit >= BLK_MAX_UNITS || blk_capacity(unit) == 0)
		return ED_E_UNIT;
	if (ed->disk[unit] != NULL)
		return ED_E_ARG;        /* mounted: unmount first */
	uint64_t cap = blk_capacity(unit);
	uint64_t n = o->nsectors ? o->nsectors : cap;
	if (n > cap || n > ED_MAX_SECTORS)
		return ED_E_TOOBIG;
	if (n < ed_format_min_sectors())
		return ED_E_RANGE;
	uint64_t log = o->log_sectors ? o->log_sectors : default_log(n);
	log = (log + 7) & ~7ull;
	if (log < 16 || log > ED_LOG_MAX || ED_LOG_FIRST + log + 1024 > n)
		return ED_E_TOOBIG;

	struct ed_disk *d = disk_new(ed, unit);
	if (d == NULL)
		return ED_E_NOMEM;
	struct ed_super *sb = &d->sb;
	sb->magic = ED_SB_MAGIC;
	sb->fmt = ED_SB_FMT;
	bool have_uuid = false;
	for (int i = 0; i < 16; i++)
		have_uuid |= o->uuid[i] != 0;
	if (have_uuid) {
		ed_memcpy(sb->uuid, o->uuid, 16);
	} else {
		ed_store64(sb->uuid, ed->env.entropy(ed->env.ctx));
		ed_store64(sb->uuid + 8, ed->env.entropy(ed->env.ctx));
	}
	sb->nsectors = n;
	sb->log_start = ED_LOG_FIRST;
	sb->log_len = log;
	sb->data_start = ED_LOG_FIRST + log;
	sb->gen = 0;           /* the first checkpoint makes it 1: superblock A */
	sb->log_pos = 0;
	sb->log_seq = 1;
	set_geometry(d);
	int err = ed_fm_init(ed, d);
	if (err == 0) {
		/* The exodisk's own region is allocated, and its leaves changed. */
		sb->fm_height = ed_fmt_height(ed_bm_nleaves(&d->fm));
		for (uint32_t l = 0; l <= ED_FMT_MAX_HEIGHT; l++) {
			d->fmt_img[l].env = &ed->env;
			d->fmt_img[l].pages = &d->mem_pages;
		}
		d->fmt_height = sb->fm_height;
		err = ed_fm_mount_change(d, 0, sb->data_start, true);
	}
	if (err == 0) {
		ed_fm_link(d);
		err = ed_bt_init(d);
	}
	if (err == 0) {
		d->log_head = 0;
		d->log_seq = 1;
		/* Superblock B and the log's first sector from any earlier format
		 * must not be mistaken for current ones. */
		ed_memset(d->tmp, 0, ED_SECTOR);
		err = ed_sync_rw(ed, unit, BLK_WRITE, ED_SB_B, 1, d->tmp);
		if (err == 0)
			err = ed_sync_rw(ed, unit, BLK_WRITE, ED_LOG_FIRST, 1, d->tmp);
	}
	if (err == 0)
		err = ed_ckpt_sync(ed, d, true);
	if (err == 0)
		ed->st_format_sectors = ed->st_formatted[unit] = d->st_ckpt_sectors + 2;
	disk_free(ed, d);
	return err;
}

/* ---- mount --------------------------------------------------------------------- */

static int check_geometry(const struct ed_super *sb, uint64_t cap)
{
	if (sb->nsectors > cap && sb->nsectors <= ED_MAX_SECTORS)
		return ED_E_TOOBIG;       /* larger than the unit: a truncated image */
	if (sb->nsectors > cap || sb->nsectors == 0 || sb->nsectors > ED_MAX_SECTORS ||
	    sb->log_start != ED_LOG_FIRST || sb->log_len < 16 || sb->log_len % ED_SECT_PER_PAGE != 0 ||
	    sb->log_len > ED_LOG_MAX || sb->data_start != sb->log_start + sb->log_len ||
	    sb->data_start >= sb->nsectors || sb->log_pos > sb->log_len || sb->log_seq == 0 ||
	    sb->bt_height > ED_BT_MAX_HEIGHT || sb->fm_height > ED_FMT_MAX_HEIGHT ||
	    sb->allocated > sb->nsectors)
		return ED_E_CORRUPT;
	return 0;
}

/* Read the trees the superblock names (the free map whole, the binding
 * tree's root) and check what can be checked cheaply. */
static int load_trees(struct exodisk *ed, struct ed_disk *d)
{
	set_geometry(d);
	int err = ed_fm_init(ed, d);
	if (err == 0)
		err = ed_fmt_load(d);
	if (err == 0 && (d->fm.count != d->sb.allocated || !ed_bm_all(&d->fm, 0, d->data_start)))
		err = ED_E_CORRUPT;
	if (err == 0)
		err = ed_bt_init(d);
	return err;
}

static void unload_trees(struct ed_disk *d)
{
	ed_bt_destroy(d);
	ed_fmt_destroy(d);
	ed_fm_destroy(d);
	d->mem_pages = 6 + d->logimg.npages + 1;
}

/* ---- log replay -------------------------------------------------------------------- */

#define LOG_CHUNK_PAGES 16     /* read the log 64 KiB at a time, as replay needs it */

/* Read the chunk of the log that holds page p. */
static void load_chunk(struct ed_logview *lv, uint32_t p)
{
	uint32_t npages = (uint32_t)(lv->len / ED_SECT_PER_PAGE);
	uint32_t n = ED_MIN(LOG_CHUNK_PAGES, npages - p);
	struct blk_seg *seg = lv->d->ckseg;
	for (uint32_t i = 0; i < n; i++)
		seg[i] = (struct blk_seg){ (uint64_t)(uintptr_t)ed_pvec_page(&lv->pages, p + i), ED_PAGE };
	int err = ed_sync_io(lv->ed, lv->d->unit, BLK_READ, 0,
	                     lv->d->sb.log_start + (uint64_t)p * ED_SECT_PER_PAGE,
	                     n * ED_SECT_PER_PAGE, seg, n);
	lv->d->st_mount_reads += (uint64_t)n * ED_SECT_PER_PAGE;
	if (err != 0 && lv->err == 0)
		lv->err = err;
	for (uint32_t i = 0; i < n; i++)
		lv->loaded[p + i] = 1;
}

uint8_t *ed_log_sector(struct ed_logview *lv, uint64_t s)
{
	uint32_t p = (uint32_t)(s / ED_SECT_PER_PAGE);
	if (!lv->loaded[p])
		load_chunk(lv, p);
	return (uint8_t *)ed_pvec_page(&lv->pages, p) + (s % ED_SECT_PER_PAGE) * ED_SECTOR;
}

static void logcopy(struct ed_logview *lv, uint64_t s, uint8_t *dst, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ed_memcpy(dst + i * ED_SECTOR, ed_log_sector(lv, s + i), ED_SECTOR);
}

static int open_log(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv)
{
	ed_memset(lv, 0, sizeof(*lv));
	lv->ed = ed;
	lv->d = d;
	lv->len = d->sb.log_len;
	lv->loaded = ed->env.page_alloc(ed->env.ctx);
	if (lv->loaded == NULL)
		return ED_E_NOMEM;
	return ed_pvec_alloc(&ed->env, &lv->pages, (uint32_t)(lv->len / ED_SECT_PER_PAGE));
}

static void close_log(struct exodisk *ed, struct ed_logview *lv)
{
	ed_pvec_free(&ed->env, &lv->pages);
	if (lv->loaded != NULL)
		ed->env.page_free(ed->env.ctx, lv->loaded);
	lv->loaded = NULL;
}

static bool range_ok(const struct ed_disk *d, uint64_t start, uint64_t count)
{
	return count > 0 && start >= d->data_start && start < d->nsectors &&
	       count <= d->nsectors - start;
}

/* Is there a valid record at pos with this sequence number and chain?  On
 * success its header is in d->tmp. */
static bool record_at(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv,
                      uint64_t pos, uint64_t seq, const uint8_t chain[16])
{
	if (pos >= lv->len)
		return false;
	uint32_t avail = (uint32_t)ED_MIN(lv->len - pos, ED_LOG_MAX_HDR_SECT);
	logcopy(lv, pos, d->tmp, avail);
	if (ed_log_check(&ed->keys, d->sb.uuid, d->sb.log_start + pos, d->tmp,
	                 avail * ED_SECTOR) != 0)
		return false;
	const struct ed_loghdr *h = (const struct ed_loghdr *)d->tmp;
	if (h->seq != seq || h->pos != pos || !ed_tag_equal(h->prev, chain) ||
	    h->img_sect > ED_LOG_MAX_IMG * ED_XN_MAX_SECT ||
	    pos + h->hdr_sect + h->img_sect > lv->len)
		return false;
	/* Every image must be the authentic block version its entry names. */
	const struct ed_logimg *im = (const struct ed_logimg *)(d->tmp + sizeof(*h));
	uint32_t off = 0;
	for (uint32_t i = 0; i < h->nimg; i++) {
		if (!range_ok(d, im[i].home, 1))
			return false;
		if (im[i].op == ED_LOGOP_DROP)
			continue;
		if (im[i].op != ED_LOGOP_PUT)
			return false;
		uint32_t ns = im[i].kind == ED_KIND_EXTENT ? 1 : im[i].nsect;
		if ((im[i].kind != ED_KIND_EXTENT && im[i].kind != ED_KIND_XNBLK) ||
		    ns < 1 || ns > ED_XN_MAX_SECT || off + ns > h->img_sect ||
		    !range_ok(d, im[i].home, ns))
			return false;
		uint8_t *img = d->cksec, *plain = d->cksec + ED_PAGE / 2;
		logcopy(lv, pos + h->hdr_sect + off, img, ns);
		int err = im[i].kind == ED_KIND_EXTENT
			? ed_ext_decode(&ed->keys, d->sb.uuid, im[i].home, (struct ed_exthdr *)img,
			                im[i].stamp, (struct ed_exthdr *)plain)
			: ed_xnblk_decode(&ed->keys, d->sb.uuid, im[i].home, img, ns, im[i].stamp, plain);
		if (err != 0)
			return false;
		off += ns;
	}
	if (off != h->img_sect)
		return false;
	uint32_t nunw, nwr;
	const struct ed_logrange *rg = ed_log_ranges(d->tmp, &nunw, &nwr);
	for (uint32_t i = 0; i < h->nalloc + h->nfree + nunw + nwr; i++)
		if (!range_ok(d, rg[i].start, rg[i].count))
			return false;
	return true;
}

/* Apply the record in d->tmp to the binding tree and the free map (which
 * are one map while mounting: dfm shares fm). */
static int apply_record(struct ed_disk *d)
{
	const struct ed_loghdr *h = (const struct ed_loghdr *)d->tmp;
	const struct ed_logimg *im = (const struct ed_logimg *)(d->tmp + sizeof(*h));
	for (uint32_t i = 0; i < h->nimg; i++) {
		int err;
		if (im[i].op == ED_LOGOP_DROP) {
			err = ed_bt_del_sync(d, im[i].home);
		} else {
			uint8_t ns = im[i].kind == ED_KIND_EXTENT ? 1 : im[i].nsect;
			err = ed_bt_put_sync(d, im[i].home, im[i].stamp, im[i].kind, ns);
		}
		if (err != 0)
			return err;
	}
	uint32_t nunw, nwr;
	const struct ed_logrange *rg = ed_log_ranges(d->tmp, &nunw, &nwr);
	/* A sector allocated or freed loses what earlier records said of it:
	 * a record that allocates names, in its `unw` ranges, all of what it
	 * allocates that is unwritten (an earlier checkpoint's carry record
	 * may have named a sector before it was allocated, and the flush
	 * cycle that made its data durable passed it over: unwritten.c). */
	for (uint32_t i = 0; i < h->nalloc + h->nfree; i++) {
		int err = ed_fm_mount_change(d, rg[i].start, rg[i].count, i < h->nalloc);
		if (err == 0)
			err = ed_unw_replay(d, rg[i].start, rg[i].count, false);
		if (err != 0)
			return err;
	}
	/* The unwritten set as the records left it (unwritten.c): a sector
	 * allocated unwritten reads as zeros until a record names it written. */
	rg += h->nalloc + h->nfree;
	for (uint32_t i = 0; i < nunw + nwr; i++) {
		int err = ed_unw_replay(d, rg[i].start, rg[i].count, i < nunw);
		if (err != 0)
			return err;
	}
	return 0;
}

/* The next record follows this one, or starts the region again if it did
 * not fit; returns its position, or -1 when the log ends. */
static int64_t next_record(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv,
                           uint64_t pos, uint64_t seq, const uint8_t chain[16])
{
	if (record_at(ed, d, lv, pos, seq, chain))
		return (int64_t)pos;
	if (pos != 0 && record_at(ed, d, lv, 0, seq, chain))
		return 0;
	return -1;
}

/* ---- redo: bring homes up to the versions the log holds ------------------------------
 *
 * After replay the binding table names, for some blocks, a version whose
 * only copy may be in the log (its home write had not finished).  Those
 * homes are read, compared and rewritten where they differ.  The reads and
 * writes go out REDO_BATCH at a time, sorted by sector, so the C-LOOK queue
 * can sweep across the disk instead of seeking for each one. */

#define REDO_BATCH 32

struct redo {
	uint64_t home;
	uint64_t lsec;             /* its image in the log region */
	uint8_t  kind, nsect;
};

static struct redo *redo_at(struct ed_pvec *v, uint32_t i)
{
	return ed_pvec_elem(v, sizeof(struct redo), i);
}

/* Heap sort by home (the list lives in pages, so no qsort). */
static void redo_sift(struct ed_pvec *v, uint32_t i, uint32_t n)
{
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			return;
		if (c + 1 < n && redo_at(v, c + 1)->home > redo_at(v, c)->home)
			c++;
		if (redo_at(v, i)->home >= redo_at(v, c)->home)
			return;
		struct redo t = *redo_at(v, i);
		*redo_at(v, i) = *redo_at(v, c);
		*redo_at(v, c) = t;
		i = c;
	}
}

static void redo_sort(struct ed_pvec *v, uint32_t n)
{
	for (uint32_t i = n / 2; i-- > 0; )
		redo_sift(v, i, n);
	for (uint32_t end = n; end-- > 1; ) {
		struct redo t = *redo_at(v, 0);
		*redo_at(v, 0) = *redo_at(v, end);
		*redo_at(v, end) = t;
		redo_sift(v, 0, end);
	}
}

static int redo_homes(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv)
{
	struct ed_pvec list, bufs;
	ed_memset(&list, 0, sizeof(list));
	ed_memset(&bufs, 0, sizeof(bufs));
	uint32_t max = (uint32_t)lv->len, n = 0;
	struct ed_xfer *x = ed->env.page_alloc(ed->env.ctx);
	int err = x == NULL ? ED_E_NOMEM : 0;
	if (err == 0)
		err = ed_pvec_alloc(&ed->env, &list, ed_pvec_pages_for(max, sizeof(struct redo)));
	if (err == 0)   /* one 2 KiB buffer per transfer: two per page */
		err = ed_pvec_alloc(&ed->env, &bufs, REDO_BATCH / 2);
	struct ed_logrec_iter it;
	ed_log_iter_begin(d, lv, &it);
	while (err == 0 && ed_log_iter_next(ed, d, lv, &it))
		for (uint32_t i = 0; err == 0 && i < it.nimg && n < max; i++) {
			struct ed_vtrec v;
			if (it.img[i].op != ED_LOGOP_PUT)
				continue;
			int e = ed_bt_get_sync(d, it.img[i].home, &v);
			if (e != 0 && e != ED_E_NOTBOUND)
				err = e;
			else if (e == 0 && v.stamp == it.img[i].stamp)
				*redo_at(&list, n++) = (struct redo){ it.img[i].home, it.img_sector[i],
				                                      it.img[i].kind,
				                                      it.img[i].kind == ED_KIND_EXTENT ? 1 : it.img[i].nsect };
		}
	if (err == 0)
		redo_sort(&list, n);
	for (uint32_t first = 0; err == 0 && first < n; first += REDO_BATCH) {
		uint32_t k = ED_MIN(REDO_BATCH, n - first), nw = 0;
		for (uint32_t i = 0; i < k; i++) {
			struct redo *r = redo_at(&list, first + i);
			x[i] = (struct ed_xfer){ r->home, r->nsect,
			                         (uint8_t *)ed_pvec_page(&bufs, i / 2) + (i % 2) * (ED_PAGE / 2) };
		}
		err = ed_sync_many(ed, d->unit, BLK_READ, x, k);
		d->st_mount_reads += k;
		for (uint32_t i = 0; err == 0 && i < k; i++) {
			struct redo *r = redo_at(&list, first + i);
			uint8_t *home = (uint8_t *)ed_pvec_page(&bufs, i / 2) + (i % 2) * (ED_PAGE / 2);
			uint8_t *img = d->cksec;
			logcopy(lv, r->lsec, img, r->nsect);
			/* A header shares its sector with data: replace only the header -
			 * unless the sector is unwritten (replay said so): then its
			 * data part is whatever the disk held before (a previous
			 * owner's bytes), and goes as the image has it, zeros. */
			uint32_t cmp = r->kind == ED_KIND_EXTENT && !ed_unw_any(d, r->home, 1)
			               ? ED_EXT_HDR_BYTES : r->nsect * ED_SECTOR;
			if (ed_memcmp(img, home, cmp) == 0)
				continue;
			ed_memcpy(home, img, cmp);
			x[nw++] = (struct ed_xfer){ r->home, r->nsect, home };
			d->st_redone++;
		}
		if (err == 0 && nw > 0)
			err = ed_sync_many(ed, d->unit, BLK_WRITE, x, nw);
	}
	ed_pvec_free(&ed->env, &list);
	ed_pvec_free(&ed->env, &bufs);
	if (x != NULL)
		ed->env.page_free(ed->env.ctx, x);
	return err;
}

/* Is the log's end a damaged record rather than its end?  Records are
 * written one at a time, each after the one before is durable, so a valid
 * record numbered after the first one that fails to verify (seq) was
 * written after it: that one was damaged once durable, and every change
 * from it on - chained to it, so not applicable without it - is lost.
 * (A record that fails with nothing valid after it was never completed,
 * and never acknowledged: nothing is lost.)  Counts them into d->lost;
 * reads the whole log, at most ED_LOG_MAX sectors, at a mount after a
 * crash (the mount of a unit shut down cleanly skips it). */
static void find_lost(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv, uint64_t pos,
                      uint64_t seq)
{
	ed_memset(&d->lost, 0, sizeof(d->lost));
	for (uint64_t q = 0; q < lv->len && lv->err == 0; q++) {
		const struct ed_loghdr *h = (const struct ed_loghdr *)ed_log_sector(lv, q);
		if (h->magic != ED_LOG_MAGIC || h->seq <= seq || h->pos != q)
			continue;
		uint32_t avail = (uint32_t)ED_MIN(lv->len - q, ED_LOG_MAX_HDR_SECT);
		logcopy(lv, q, d->tmp, avail);
		if (ed_log_check(&ed->keys, d->sb.uuid, d->sb.log_start + q, d->tmp, avail * ED_SECTOR) != 0)
			continue;
		h = (const struct ed_loghdr *)d->tmp;
		d->lost.later++;
		d->lost.blocks += h->nimg;
		d->lost.ranges += h->nalloc + h->nfree;
		if (h->seq > d->lost.last_seq)
			d->lost.last_seq = h->seq;
	}
	if (d->lost.later > 0) {
		d->lost.seq = seq;
		d->lost.at = d->sb.log_start + pos;
	}
}

/* Replay the log into d's tables.  With redo, also bring home copies up to
 * date and flush; without (inspection), write nothing.  The log stays in lv. */
static int replay(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv, bool redo)
{
	int err = open_log(ed, d, lv);
	uint64_t pos = d->sb.log_pos, seq = d->sb.log_seq, used = 0;
	uint8_t chain[16];
	ed_memcpy(chain, d->sb.log_chain, 16);
	uint64_t nrec = 0, ncarry = 0;
	for (int64_t p; err == 0 && (p = next_record(ed, d, lv, pos, seq, chain)) >= 0; ) {
		const struct ed_loghdr *h = (const struct ed_loghdr *)d->tmp;
		err = apply_record(d);
		if (err != 0)
			break;
		ed_memcpy(chain, d->tmp + h->hdr_sect * ED_SECTOR - ED_TAG_BYTES, 16);
		if ((uint64_t)p != pos)
			used += lv->len - pos;      /* it wrapped: the tail was skipped */
		pos = (uint64_t)p + h->hdr_sect + h->img_sect;
		used += h->hdr_sect + h->img_sect;
		seq++;
		/* A checkpoint's carry record (only `unw` ranges: the unwritten
		 * set, unwritten.c), or an empty one (written in the place of a
		 * record that failed: commit.c), changes nothing that was
		 * committed: a mount after a clean shutdown still says it
		 * replayed nothing. */
		uint32_t nunw, nwr;
		(void)ed_log_ranges(d->tmp, &nunw, &nwr);
		if (h->nimg == 0 && h->nalloc == 0 && h->nfree == 0 && nwr == 0)
			ncarry++;
		else
			nrec++;
	}
	if (err == 0)
		err = lv->err;        /* a log read failed: do not guess where it ends */
	/* After a clean shutdown nothing was committed (a mount clears the
	 * flag before anything can be): nothing to look for. */
	if (err == 0 && !(d->sb.flags & ED_SBF_CLEAN))
		find_lost(ed, d, lv, pos, seq);
	else
		ed_memset(&d->lost, 0, sizeof(d->lost));
	if (err == 0)
		err = lv->err;
	d->dfm.count = d->fm.count;      /* one map until ed_fm_link */
	d->log_head = pos;
	d->log_seq = seq;
	ed_memcpy(d->log_chain, chain, 16);
	d->log_used = used;
	d->st_replayed = nrec;
	d->st_carried = ncarry;
	/* After a fallback: the records the newer checkpoint covered that this
	 * replay did not reach are gone with it (the log reuses its space). */
	if (d->fell.fell) {
		d->fell.lost = d->fell.gen == 0 ? UINT64_MAX : d->fell.seq > seq ? d->fell.seq - seq : 0;
	}
	lv->nrec = nrec + ncarry;
	lv->used = used;
	if (err != 0 || !redo)
		return err;

	/* Second pass: bring homes up to the versions the table now names. */
	if (nrec > 0)
		err = redo_homes(ed, d, lv);
	if (err == 0)
		err = lv->err;
	if (err == 0 && nrec > 0)
		err = ed_sync_io(ed, d->unit, BLK_FLUSH, 0, 0, 0, NULL, 0);
	return err;
}

void ed_log_iter_begin(struct ed_disk *d, const struct ed_logview *lv, struct ed_logrec_iter *it)
{
	ed_memset(it, 0, sizeof(*it));
	it->pos = d->sb.log_pos;
	it->seq = d->sb.log_seq;
	ed_memcpy(it->chain, d->sb.log_chain, 16);
	it->left = lv->nrec;
}

bool ed_log_iter_next(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv,
                      struct ed_logrec_iter *it)
{
	if (it->left == 0)
		return false;
	int64_t p = next_record(ed, d, lv, it->pos, it->seq, it->chain);
	if (p < 0)
		return false;
	const struct ed_loghdr *h = (const struct ed_loghdr *)d->tmp;
	it->nimg = h->nimg;
	ed_memcpy(it->img, d->tmp + sizeof(*h), h->nimg * sizeof(struct ed_logimg));
	uint64_t off = (uint64_t)p + h->hdr_sect;
	for (uint32_t i = 0; i < h->nimg; i++) {
		it->img_sector[i] = off;
		if (it->img[i].op == ED_LOGOP_PUT)
			off += it->img[i].kind == ED_KIND_EXTENT ? 1 : it->img[i].nsect;
	}
	ed_memcpy(it->chain, d->tmp + h->hdr_sect * ED_SECTOR - ED_TAG_BYTES, 16);
	it->pos = (uint64_t)p + h->hdr_sect + h->img_sect;
	it->seq++;
	it->left--;
	return true;
}

/* Find the newest valid superblock whose trees verify, and load them. */
static int open_disk(struct exodisk *ed, int unit, struct ed_disk **out)
{
	if (unit < 0 || unit >= BLK_MAX_UNITS || blk_capacity(unit) == 0)
		return ED_E_UNIT;
	if (ed->disk[unit] != NULL)
		return ED_E_ARG;
	struct ed_disk *d = disk_new(ed, unit);
	if (d == NULL)
		return ED_E_NOMEM;
	/* Both superblocks; try the newer valid one first.  (They wait in a
	 * page of d's: kernel stacks are small.) */
	struct ed_super *cand = (struct ed_super *)d->cksec;
	int cerr[2];
	const uint64_t where[2] = { ED_SB_A, ED_SB_B };
	const struct ed_xfer both[2] = { { ED_SB_A, 1, &cand[0] }, { ED_SB_B, 1, &cand[1] } };
	int rerr = ed_sync_many(ed, unit, BLK_READ, both, 2);
	d->st_mount_reads += 2;
	for (int i = 0; i < 2; i++) {
		cerr[i] = rerr;
		if (cerr[i] == 0)
			cerr[i] = ed_super_check(&ed->keys, &cand[i], where[i]);
		if (cerr[i] == 0)
			cerr[i] = check_geometry(&cand[i], blk_capacity(unit));
		if (cerr[i] == 0 && (cand[i].gen & 1) != (i == 0))
			cerr[i] = ED_E_CORRUPT;   /* a copy moved to the other place */
	}
	int order[2] = { 0, 1 };
	if (cerr[0] == 0 && cerr[1] == 0 && cand[1].gen > cand[0].gen) {
		order[0] = 1;
		order[1] = 0;
	}
	/* The more telling error: a real superblock's over a blank sector's. */
	int err = cerr[0] == ED_E_FORMAT ? cerr[1] : cerr[0];
	if (err != 0 && err != ED_E_FORMAT)
		ed->bad_sector = cerr[0] == ED_E_FORMAT ? ED_SB_B : ED_SB_A;
	bool loaded = false;
	uint64_t sb_bad = ed->bad_sector;
	int used = -1, failed = -1, failed_err = 0;
	uint64_t failed_at = 0;
	bool failed_io = false;
	for (int k = 0; k < 2 && !loaded; k++) {
		int i = order[k];
		if (cerr[i] != 0)
			continue;
		d->sb = cand[i];
		/* A read the disk fails is tried again (ED_MOUNT_READ_TRIES in
		 * all, with a pause before each: 50 ms, then 100): a transient
		 * error says nothing against the checkpoint. */
		for (int t = 0; t < ED_MOUNT_READ_TRIES; t++) {
			ed->bad_sector = UINT64_MAX;
			err = load_trees(ed, d);
			if (err == 0)
				break;
			unload_trees(d);
			if (err != BLK_E_IO)
				break;
			if (t + 1 < ED_MOUNT_READ_TRIES && ed->env.pause != NULL)
				ed->env.pause(ed->env.ctx, ED_MOUNT_RETRY_MS << t);
		}
		loaded = err == 0;
		if (loaded) {
			used = i;
			break;
		}
		/* Only damage is a reason to take the older checkpoint.  Running
		 * out of memory says nothing against the newer one, and mounting
		 * the older would then write a superblock over it and lose the
		 * log records only it still covers: the mount fails instead, and
		 * the next one tries the newer again.  A page of the newer that
		 * the disk failed to read every time is a media error - damage
		 * the disk itself reports - and without a fallback the unit would
		 * never mount again: the older is tried, and if its trees can be
		 * read (the disk works, only that page does not) the mount takes
		 * it and says loudly what it cost.  If the older fails too, the
		 * mount fails with the newer's error and writes nothing. */
		bool unreadable = err == BLK_E_IO && k == 0;
		if (err != ED_E_BADMAC && err != ED_E_CORRUPT && !unreadable)
			break;
		failed = i;
		failed_at = ed->bad_sector;
		failed_io = unreadable;
		failed_err = err;
	}
	if (!loaded && failed_io && err != 0)
		err = failed_err;       /* the older failed too: the newer's read error */
	if (!loaded) {
		if (ed->bad_sector == UINT64_MAX)
			ed->bad_sector = sb_bad;
		disk_free(ed, d);
		return err != 0 ? err : ED_E_FORMAT;
	}
	ed->bad_sector = sb_bad;
	/* A fallback: the other superblock verified but its trees did not (it
	 * was tried first, so it is the newer), or it is not blank and does
	 * not verify itself (then which was newer cannot be told).  Neither
	 * happens in a crash - a checkpoint flushes its pages before it writes
	 * its superblock, and a sector is written whole or not at all - so it
	 * is damage, and the mount must say what it cost (replay). */
	int other = 1 - used;
	ed_memset(&d->fell, 0, sizeof(d->fell));
	if (failed == other) {
		d->fell.fell = true;
		d->fell.at = failed_at != UINT64_MAX ? failed_at : where[other];
		d->fell.gen = cand[other].gen;
		d->fell.seq = cand[other].log_seq;
		d->fell.io = failed_io;
	} else if (cerr[other] != 0 && cerr[other] != ED_E_FORMAT) {
		d->fell.fell = true;
		d->fell.at = where[other];
	}
	if (d->fell.fell) {
		d->fell.sb = where[other];
		d->fell.used_gen = cand[used].gen;
	}
	*out = d;
	return 0;
}

int ed_disk_inspect(struct exodisk *ed, int unit, struct ed_disk **out, struct ed_logview *lv)
{
	ed_memset(lv, 0, sizeof(*lv));
	int err = open_disk(ed, unit, out);
	if (err == 0 && (err = replay(ed, *out, lv, false)) != 0) {
		ed_disk_release(ed, *out, lv);
		*out = NULL;
	}
	return err;
}

void ed_disk_release(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv)
{
	close_log(ed, lv);
	disk_free(ed, d);
}

int ed_mount(struct exodisk *ed, int unit)
{
	struct ed_disk *d;
	struct ed_logview lv;
	ed_memset(&lv, 0, sizeof(lv));
	int err = open_disk(ed, unit, &d);
	if (err != 0)
		return err;
	err = replay(ed, d, &lv, true);
	close_log(ed, &lv);
	if (err == 0) {
		ed_fm_link(d);
		/* This mount's nonce: fresh stamps even if the disk is rolled back. */
		d->sb.mounts++;
		uint8_t in[40];
		ed_memcpy(in, d->sb.uuid, 16);
		ed_store64(in + 16, d->sb.mounts);
		ed_store64(in + 24, ed->env.entropy(ed->env.ctx));
		ed_store64(in + 32, ED_DOM_NONCE);
		d->nonce = siphash64(ed->keys.stamp, in, sizeof(in));
		d->nstamps = 0;
		/* No checkpoint here: the replayed records stay in the log (the
		 * homes are current now) and the next checkpoint drops them.  Only
		 * the mount count must be durable before any stamp is drawn. */
		err = ed_super_sync(ed, d);
		/* A damaged record cut the log short (find_lost): what came before
		 * it is the unit's state now.  Its records are set behind for good
		 * - the log goes on past their numbers, and a checkpoint says so -
		 * so that no later mount takes them for a damaged log again. */
		if (err == 0 && d->lost.later > 0) {
			d->log_seq = d->lost.last_seq + 1;
			err = ed_ckpt_sync(ed, d, false);
		}
		if (err == 0 && (d->log_used * 2 > d->sb.log_len || ed_ckpt_due(d)))
			d->ck_wanted = true;
	}
	if (err != 0) {
		disk_free(ed, d);
		return err;
	}
	d->mounted = true;
	ed->disk[unit] = d;
	return 0;
}

/* Unmount for host tests and tools: forget the unit without writing. */
void ed_unmount_forget(struct exodisk *ed, int unit)
{
	if (unit >= 0 && unit < BLK_MAX_UNITS && ed->disk[unit] != NULL) {
		disk_free(ed, ed->disk[unit]);
		ed->disk[unit] = NULL;
	}
}
