/*
 * commit.c - write-back through the commit log.
 *
 * Writing back a header or exonode block means making its new version
 * durable and the only acceptable one, atomically with the free-map change
 * it implies.  Writing the block in place cannot do that: a crash could
 * leave the new block on disk with nothing recording that it is now the
 * current version (so it would be rejected, and the old one is gone), or a
 * recorded version with the old block still there.  So a write-back appends
 * one log record holding the block's new image, its new version stamp, and
 * the sector ranges it allocates and frees; the record is written with FUA
 * and is the commit point.  The block is written to its home afterwards
 * (home.c), off the application's critical path, and checkpoints (ckpt.c)
 * empty the log.
 *
 * Write-backs that arrive while a record is being written wait and go out
 * together in the next one (group commit), so many applications writing
 * back at once cost one log write, not many.
 *
 * Freed sectors are released in the free map only when the record that
 * frees them is durable (thesis section 2.2): until then a crash could
 * bring back the old version still referring to them.
 *
 * Applying a durable record cannot fail, so whatever it needs is made sure
 * of before the record is written: the binding tree's leaf for each block
 * is in memory and pinned, nodes are set aside for splits, memory is taken
 * for the free-map changes, and the disk has room for the tree pages the
 * changes make dirty (a write-back that cannot have them fails with
 * ED_E_NOSPACE or ED_E_NOMEM and changes nothing).
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

#define LOG_HDR_MAX_BYTES (ED_LOG_MAX_HDR_SECT * ED_SECTOR)

static void log_done(struct blkreq *r);

void ed_commit_queue(struct exodisk *ed, struct ed_disk *d, struct ed_io *io)
{
	ed_io_append(&d->commitq, &d->commitq_tail, io);
	ed_commit_kick(ed, d);
}

static uint64_t choose_stamp(struct exodisk *ed, struct ed_disk *d, struct ed_entry *e)
{
	/* A header that was never committed may already be at home, written
	 * together with data (dataio.c); if it has not changed since, commit
	 * that very version so the home needs no second write. */
	if (e->kind == ED_KIND_EXTENT && e->com_stamp == 0 && e->embed_stamp != 0 &&
	    e->embed_modgen == e->modgen)
		return e->embed_stamp;
	return ed_new_stamp(d, &ed->keys);
}

/* Copy n sectors from src into the record's image pages at sector offset off. */
static void img_put(struct ed_disk *d, uint32_t off, const uint8_t *src, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++, off++) {
		uint8_t *page = ed_pvec_page(&d->logimg, off / ED_SECT_PER_PAGE);
		ed_memcpy(page + (off % ED_SECT_PER_PAGE) * ED_SECTOR, src + i * ED_SECTOR, ED_SECTOR);
	}
}

static void img_get(struct ed_disk *d, uint32_t off, uint8_t *dst, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++, off++) {
		uint8_t *page = ed_pvec_page(&d->logimg, off / ED_SECT_PER_PAGE);
		ed_memcpy(dst + i * ED_SECTOR, page + (off % ED_SECT_PER_PAGE) * ED_SECTOR, ED_SECTOR);
	}
}

/* Encode e's working copy into d->tmp as version `stamp`. */
static void encode_entry(struct exodisk *ed, struct ed_disk *d, struct ed_entry *e, uint64_t stamp)
{
	if (e->kind == ED_KIND_EXTENT) {
		ed_memset(d->tmp, 0, ED_SECTOR);
		ed_ext_encode(&ed->keys, d->sb.uuid, e->sector, ed_ext(e), stamp,
		              (struct ed_exthdr *)d->tmp);
	} else {
		ed_xnblk_encode(&ed->keys, d->sb.uuid, e->sector, e->cur, stamp, d->tmp);
	}
}

static void unpin(struct ed_disk *d, struct ed_io *io)
{
	if (io->bt_pinned) {
		ed_bt_unpin(d, io->bt_pin);
		io->bt_pin = NULL;
		io->bt_pinned = false;
	}
}

static void fail_io(struct exodisk *ed, struct ed_io *io, int err)
{
	struct ed_entry *e = io->ent;
	unpin(ed->disk[e->unit], io);
	e->flags &= ~EF_WRITING;
	ed_io_finish(ed, io, err);
	ed_ent_orphan(ed, e);      /* if its client has gone meanwhile */
}

/* Write one record at pos (cost: its sectors, with any gap a wrap
 * skipped): the header - fixed part, image list, the range lists, tag -
 * then the image pages, in one FUA write.  log_done completes it. */
static void log_write(struct exodisk *ed, struct ed_disk *d, struct ed_io *batch,
                      const struct ed_logimg *imgs, uint32_t nimg, uint32_t img_sect,
                      uint32_t hdr_sect, uint64_t pos, uint64_t cost, const struct ed_rl *allocs,
                      const struct ed_rl *frees, const struct ed_rl *unws, const struct ed_rl *wrs)
{
	uint8_t *hdr = d->loghdr;
	ed_memset(hdr, 0, ED_PAGE);
	struct ed_loghdr *h = (struct ed_loghdr *)hdr;
	h->magic = ED_LOG_MAGIC;
	h->fmt = ED_LOG_FMT;
	h->hdr_sect = (uint16_t)hdr_sect;
	h->nimg = nimg;
	h->img_sect = img_sect;
	h->seq = d->log_seq;
	h->pos = pos;
	h->next = pos + hdr_sect + img_sect;
	h->nalloc = allocs->n;
	h->nfree = frees->n;
	ed_memcpy(h->prev, d->log_chain, 16);
	uint8_t *p = hdr + sizeof(*h);
	if (nimg > 0)
		ed_memcpy(p, imgs, nimg * sizeof(struct ed_logimg));
	p += nimg * sizeof(struct ed_logimg);
	struct ed_logext *x = (struct ed_logext *)p;
	x->nunw = unws->n;
	x->nwritten = wrs->n;
	p += sizeof(*x);
	const struct ed_rl *lists[4] = { allocs, frees, unws, wrs };
	for (int i = 0; i < 4; i++) {
		if (lists[i]->n > 0)
			ed_memcpy(p, lists[i]->r, lists[i]->n * sizeof(struct ed_range));
		p += lists[i]->n * sizeof(struct ed_range);
	}
	d->st_unw_records += wrs->n > 0 || d->log_carry;
	ed_log_seal(&ed->keys, d->sb.uuid, d->sb.log_start + pos, hdr);

	uint32_t nseg = 0;
	d->logseg[nseg++] = (struct blk_seg){ (uint64_t)(uintptr_t)hdr, hdr_sect * ED_SECTOR };
	for (uint32_t s = 0; s < img_sect; s += ED_SECT_PER_PAGE) {
		uint32_t n = ED_MIN(ED_SECT_PER_PAGE, img_sect - s);
		d->logseg[nseg++] = (struct blk_seg){
			(uint64_t)(uintptr_t)ed_pvec_page(&d->logimg, s / ED_SECT_PER_PAGE), n * ED_SECTOR };
	}
	d->batch = batch;
	d->batch_nsect = hdr_sect + img_sect;
	d->batch_cost = cost;
	d->batch_next = pos + hdr_sect + img_sect;
	struct blkreq *r = &d->logreq;
	ed_memset(r, 0, sizeof(*r));
	r->op = BLK_WRITE;
	r->flags = BLK_F_FUA;
	r->unit = d->unit;
	r->sector = d->sb.log_start + pos;
	r->nsectors = d->batch_nsect;
	r->seg = d->logseg;
	r->nseg = (uint16_t)nseg;
	r->done = log_done;
	r->priv = d;
	d->log_busy = true;
	int err = blk_submit(r);
	if (err != 0) {
		r->status = err;
		log_done(r);
	}
}

void ed_commit_kick(struct exodisk *ed, struct ed_disk *d)
{
	bool fl = d->fl_state == FL_LOG;       /* a flush cycle has ranges to log */
	if (d->log_busy || d->ck != CK_IDLE || d->ck_hold || (d->commitq == NULL && !fl))
		return;
	if (d->ck_wanted && !d->closing) {
		ed_ckpt_progress(ed, d);
		return;
	}

	struct ed_logimg imgs[ED_LOG_MAX_IMG];
	struct ed_rl *allocs = ed_rl_get(ed), *frees = ed_rl_get(ed);
	struct ed_rl *cur = ed_rl_get(ed), *com = ed_rl_get(ed);
	struct ed_rl *a = ed_rl_get(ed), *f = ed_rl_get(ed);
	struct ed_rl *unws = ed_rl_get(ed), *wrs = ed_rl_get(ed);
	uint32_t nimg = 0, img_sect = 0, new_bindings = 0;
	struct ed_io **pp = &d->commitq, *last = NULL;
	struct ed_io *batch = NULL, **btail = &batch;
	bool need_ckpt = false;
	uint64_t pos = 0, cost = 0;
	uint32_t hdr_sect = 1;

	/* A flush cycle's `written` ranges go first (unwritten.c), up to half
	 * the header when write-backs wait too, all of it otherwise; the rest
	 * go in the next record.  What the cycle passes over from fl_pos to
	 * fl_next is then out of the durable view for the write-backs below:
	 * named written here, or not allocated durably yet - its data is
	 * durable, so the record that allocates it must not call it unwritten. */
	uint64_t fl_next = d->fl_pos;
	if (fl) {
		uint32_t most = (LOG_HDR_MAX_BYTES - sizeof(struct ed_loghdr) - sizeof(struct ed_logext) -
		                 ED_TAG_BYTES) / sizeof(struct ed_logrange);
		wrs->cap = ED_MIN(wrs->cap, d->commitq != NULL ? most / 2 : most);
		ed_unw_flushed_runs(d, &fl_next, wrs);
	}

	while (*pp != NULL && nimg < ED_LOG_MAX_IMG) {
		struct ed_io *io = *pp;
		struct ed_entry *e = io->ent;
		if (e->flags & EF_HOME_IO) {
			/* Its committed image is being written home from com; wait. */
			last = io;
			pp = &io->next;
			continue;
		}
		bool drop = (e->flags & EF_DEALLOC) != 0;
		bool fresh = !drop && e->com_stamp == 0;     /* a new binding */
		/* Applying the record at its completion changes the binding tree
		 * there: the leaf must be in memory, and nodes set aside for a
		 * split.  A leaf being read holds the record up until it is in. */
		int err = 0;
		if (!io->bt_pinned) {
			err = ed_bt_pin(d, e->sector, &io->bt_pin);
			if (err == ED_E_WAIT)
				break;
			io->bt_pinned = err == 0;
		}
		if (err == 0 && fresh)
			err = ed_bt_reserve(d, new_bindings + 1);
		if (err != 0) {
			*pp = io->next;
			if (*pp == NULL)
				d->commitq_tail = last;
			fail_io(ed, io, err);
			continue;
		}
		ed_refs(e, e->cur, drop, cur);
		if (e->com_stamp != 0)
			ed_refs(e, e->com, false, com);
		else
			com->n = 0;
		ed_rl_diff(cur, com, a);
		ed_rl_diff(com, cur, f);
		/* What it allocates that is unwritten (unwritten.c) is named so. */
		uint32_t unw_before = unws->n;
		bool unw_room = true;
		for (uint32_t i = 0; i < a->n && unw_room; i++)
			unw_room = ed_unw_durable_runs(d, a->r[i].start, a->r[i].nsectors, fl_next, unws);
		uint32_t nrange = allocs->n + frees->n + a->n + f->n + unws->n + wrs->n;
		uint32_t hbytes = sizeof(struct ed_loghdr) + (nimg + 1) * sizeof(struct ed_logimg) +
		                  sizeof(struct ed_logext) + nrange * sizeof(struct ed_logrange) +
		                  ED_TAG_BYTES;
		if (hbytes > LOG_HDR_MAX_BYTES || allocs->n + a->n > allocs->cap ||
		    frees->n + f->n > frees->cap || !unw_room) {
			unws->n = unw_before;
			break;
		}
		uint32_t isect = drop ? 0 : e->nsect;
		uint32_t hs = (hbytes + ED_SECTOR - 1) / ED_SECTOR;
		uint64_t total = hs + img_sect + isect;
		uint64_t p = d->log_head, c = total;
		if (p + total > d->sb.log_len) {
			c += d->sb.log_len - p;
			p = 0;
		}
		if (c + ED_LOG_CARRY_RESERVE(d) > d->sb.log_len - d->log_used) {
			unws->n = unw_before;
			need_ckpt = true;
			break;
		}
		/* Room on the disk for the tree pages this makes dirty: the
		 * binding's leaf (and a split), the free-map leaves its ranges
		 * touch.  Short of it, a checkpoint frees the pages it replaces;
		 * when even that did not help, the write-back fails, changing
		 * nothing. */
		uint64_t more = 1 + (fresh ? d->bt_height + 1 : 0);
		for (uint32_t i = 0; i < a->n + f->n; i++) {
			const struct ed_range *r = i < a->n ? &a->r[i] : &f->r[i - a->n];
			more += (r->start + r->nsectors - 1) / ED_BM_LEAF_BITS - r->start / ED_BM_LEAF_BITS + 1;
		}
		if (!ed_ckpt_room(d, more)) {
			unws->n = unw_before;
			if (!d->ck_nospace && (d->bt_dirty > 0 || d->fm_dirty.count > 0)) {
				need_ckpt = true;
				break;
			}
			*pp = io->next;
			if (*pp == NULL)
				d->commitq_tail = last;
			fail_io(ed, io, ED_E_NOSPACE);
			continue;
		}
		/* Memory for the free-map changes made at the completion. */
		if ((err = ed_fm_commit_prepare(d, a->r, a->n, 0)) != 0 ||
		    (err = ed_fm_commit_prepare(d, f->r, 0, f->n)) != 0) {
			unws->n = unw_before;
			*pp = io->next;
			if (*pp == NULL)
				d->commitq_tail = last;
			fail_io(ed, io, err);
			continue;
		}
		/* Accept it into the record. */
		*pp = io->next;
		if (*pp == NULL)
			d->commitq_tail = last;
		io->next = NULL;
		*btail = io;
		btail = &io->next;
		for (uint32_t i = 0; i < a->n; i++)
			ed_rl_add(allocs, a->r[i].start, a->r[i].nsectors);
		for (uint32_t i = 0; i < f->n; i++)
			ed_rl_add(frees, f->r[i].start, f->r[i].nsectors);
		struct ed_logimg *im = &imgs[nimg++];
		ed_memset(im, 0, sizeof(*im));
		im->home = e->sector;
		im->kind = e->kind;
		im->nsect = e->nsect;
		io->logop = drop ? ED_LOGOP_DROP : ED_LOGOP_PUT;
		im->op = io->logop;
		if (!drop) {
			if (e->com_stamp == 0)
				new_bindings++;
			io->stamp = choose_stamp(ed, d, e);
			im->stamp = io->stamp;
			io->img_off = img_sect;
			encode_entry(ed, d, e, io->stamp);
			img_put(d, img_sect, d->tmp, isect);
			img_sect += isect;
		}
		hdr_sect = hs;
		pos = p;
		cost = c;
	}
	/* Written ranges and no write-back: a record of them alone.  So too
	 * when the cycle has nothing (more) to name but the log is unsure: a
	 * record that failed may be on the disk all the same, naming unwritten
	 * what the cycle passed over as not allocated durably (its data is
	 * durable), so the flush may answer only once a later record -
	 * empty if need be - is durable in its place. */
	bool alone = batch == NULL &&
	             (wrs->n > 0 || (fl && fl_next >= d->nsectors && d->log_unsure));
	if (alone) {
		uint32_t hs = (sizeof(struct ed_loghdr) + sizeof(struct ed_logext) + ED_TAG_BYTES +
		               wrs->n * sizeof(struct ed_logrange) + ED_SECTOR - 1) / ED_SECTOR;
		uint64_t p = d->log_head, c = hs;
		if (p + hs > d->sb.log_len) {
			c += d->sb.log_len - p;
			p = 0;
		}
		if (c + ED_LOG_CARRY_RESERVE(d) > d->sb.log_len - d->log_used) {
			wrs->n = 0;               /* after a checkpoint */
			fl_next = d->fl_pos;
			need_ckpt = true;
			alone = false;
		} else {
			hdr_sect = hs;
			pos = p;
			cost = c;
		}
	}
	ed_rl_put(ed, f);
	ed_rl_put(ed, a);
	ed_rl_put(ed, com);
	ed_rl_put(ed, cur);

	if (batch == NULL && !alone) {
		ed_rl_put(ed, wrs);
		ed_rl_put(ed, unws);
		ed_rl_put(ed, frees);
		ed_rl_put(ed, allocs);
		if (fl && fl_next >= d->nsectors)
			ed_flush_logged(ed, d, 0);   /* nothing (more) to name */
		if (need_ckpt)
			ed_ckpt_request(ed, d);
		return;
	}
	if (need_ckpt)
		d->ck_wanted = true;
	d->log_fl = wrs->n > 0 || (fl && fl_next >= d->nsectors);
	d->fl_pos_next = fl_next;

	d->log_carry = false;
	log_write(ed, d, batch, imgs, nimg, img_sect, hdr_sect, pos, cost, allocs, frees, unws, wrs);
	ed_rl_put(ed, wrs);
	ed_rl_put(ed, unws);
	ed_rl_put(ed, frees);
	ed_rl_put(ed, allocs);
}

/* A checkpoint's carry record (unwritten.c): the next runs of the durable
 * unwritten view from d->ck_carry_pos on, as `unw` ranges, at the log's
 * head.  False when there is nothing left to carry; otherwise its
 * completion calls ed_ckpt_carried. */
uint32_t ed_log_carry_cap(void)
{
	return (LOG_HDR_MAX_BYTES - sizeof(struct ed_loghdr) - sizeof(struct ed_logext) -
	        ED_TAG_BYTES) / sizeof(struct ed_logrange);
}

bool ed_log_carry(struct exodisk *ed, struct ed_disk *d)
{
	struct ed_rl *none = ed_rl_get(ed), *unws = ed_rl_get(ed);
	unws->cap = ed_log_carry_cap();
	ed_unw_carry_runs(d, &d->ck_carry_pos, unws);
	/* Nothing to carry: a record all the same if the log is unsure, or
	 * the superblock would name as replay's start the place of a record
	 * that failed and may be there. */
	bool any = unws->n > 0 || d->log_unsure;
	if (any) {
		uint32_t hs = (sizeof(struct ed_loghdr) + sizeof(struct ed_logext) + ED_TAG_BYTES +
		               unws->n * sizeof(struct ed_logrange) + ED_SECTOR - 1) / ED_SECTOR;
		uint64_t p = d->log_head, c = hs;
		if (p + hs > d->sb.log_len) {
			c += d->sb.log_len - p;
			p = 0;
		}
		d->log_carry = true;
		log_write(ed, d, NULL, NULL, 0, 0, hs, p, c, none, none, unws, none);
	}
	ed_rl_put(ed, unws);
	ed_rl_put(ed, none);
	return any;
}

/* The record is durable: make each block's new version the current one. */
static void apply(struct exodisk *ed, struct ed_disk *d, struct ed_io *io)
{
	struct ed_entry *e = io->ent;
	if (io->logop == ED_LOGOP_DROP) {
		ed_bt_del(d, e->sector);
		unpin(d, io);
		e->flags &= ~(EF_WRITING | EF_DIRTY | EF_DEALLOC);
		if (e->flags & EF_HOME_NEED) {
			e->flags &= ~EF_HOME_NEED;
			d->nhome--;
		}
		if (e->nmaps > 0)
			ed_map_sync(ed, e, ED_XNMAP_GONE);
		ed_cache_evict(ed, e);
		return;
	}
	ed_bt_put(d, e->sector, io->stamp, e->kind, e->nsect);   /* leaf pinned, nodes set aside */
	unpin(d, io);
	img_get(d, io->img_off, e->com, e->kind == ED_KIND_EXTENT ? 1 : e->nsect);
	e->com_stamp = io->stamp;
	e->flags &= ~(EF_WRITING | EF_DIRTY);
	if (e->kind == ED_KIND_XNBLK) {
		/* Deallocated slots are free now that their release is durable. */
		struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
		uint32_t n = ed_xn_nslots(b->nsect, b->slot_bytes);
		for (uint32_t i = 0; i < n; i++) {
			struct ed_xnhdr *x = ed_xn_slot(e->cur, i);
			if (x->state == ED_SLOT_DEAD)
				ed_memset(x, 0, b->slot_bytes);
		}
	}
	if (e->nmaps > 0)
		ed_map_sync(ed, e, ED_XNMAP_LIVE);
	if (e->home_stamp != e->com_stamp)
		ed_home_need(ed, d, e);
}

static void log_done(struct blkreq *r)
{
	struct ed_disk *d = r->priv;
	struct exodisk *ed = d->ed;
	ed_lock(ed);
	struct ed_io *batch = d->batch;
	d->batch = NULL;
	d->log_busy = false;
	int status = r->status;
	/* A write that failed may still have reached the disk (a device can
	 * report an error for a write it made): a crash could then replay the
	 * record, as long as no later record is durable in its place (the log
	 * goes on from it: log_head does not move, and a later record has its
	 * number).  While it is so, a flush cycle writes a record before it
	 * answers, a checkpoint writes one before its superblock, and sectors
	 * let go stay allocated (freemap.c). */
	d->log_unsure = status != 0;
	if (status == 0) {
		struct ed_loghdr *h = (struct ed_loghdr *)d->loghdr;
		/* Free-map changes first: every block of the record becomes current
		 * together. */
		_Static_assert(sizeof(struct ed_logrange) == sizeof(struct ed_range), "ranges");
		uint32_t nunw, nwr;
		const struct ed_range *rg = (const struct ed_range *)ed_log_ranges(d->loghdr, &nunw, &nwr);
		ed_fm_commit(d, rg, h->nalloc, h->nfree);
		ed_memcpy(d->log_chain, ed_log_tag(d->loghdr), 16);
		d->log_seq++;
		d->log_head = d->batch_next;
		d->log_used += d->batch_cost;
		d->st_records++;
		if (d->held.count != 0)
			ed_fm_release_held(d);
	}
	if (d->log_carry) {
		d->log_carry = false;
		ed_ckpt_carried(ed, d, status);
		ed_idle_wake(ed);
		ed_unlock(ed);
		return;
	}
	if (d->log_fl) {
		/* The flush cycle's ranges named so far are durable as written. */
		d->log_fl = false;
		if (status != 0)
			ed_flush_logged(ed, d, status);
		else if ((d->fl_pos = d->fl_pos_next) >= d->nsectors)
			ed_flush_logged(ed, d, 0);
	}
	while (batch != NULL) {
		struct ed_io *io = batch;
		batch = io->next;
		if (status == 0) {
			apply(ed, d, io);
			d->st_commits++;
			ed_io_finish(ed, io, 0);
		} else {
			fail_io(ed, io, status);
		}
	}
	ed_bt_spares_trim(d);
	if (d->log_used * 2 > d->sb.log_len || ed_ckpt_due(d))
		d->ck_wanted = true;
	ed_commit_kick(ed, d);
	ed_ckpt_progress(ed, d);
	ed_idle_wake(ed);
	ed_unlock(ed);
}
