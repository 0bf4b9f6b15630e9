/*
 * dataio.c - ED_OP_IO: asynchronous reads and writes of application data.
 *
 * The capability and the sector range are checked, the request goes to the
 * C-LOOK queue with blk_submit(), and the call returns; the completion
 * writes 0 or an error into the application's result word.
 *
 * Two cases need more than a plain request:
 *
 *  - The first sector of a self-protected extent holds the header in its
 *    first ED_EXT_HDR_BYTES and application data after it.  A write covering
 *    it is still ONE scatter-gather request: the kernel's image of that
 *    sector (the committed header, the application's bytes after it) and
 *    then the application's remaining sectors.  A read covering it reads that
 *    sector into the kernel and copies only the application's part out, so
 *    no header byte ever reaches application memory.  (The header area reads
 *    as zeros; writes to it are ignored.)
 *
 *  - Reading a self-protected extent whose header is not cached.  The thesis
 *    paid a synchronous header read first (86.6% overhead, section 5.2).
 *    Here the header and data come in ONE request into a kernel bounce
 *    buffer; the header is verified and the read capability and range are
 *    checked at completion, and only then is data copied to the application.
 *    Beyond the bounce buffer's size the rest is read straight into the
 *    application's memory - after the check.  The header is then cached,
 *    space permitting, so the next access is cheap.
 *
 * And a read that meets sectors not written since they were allocated
 * (unwritten.c) goes run by run: zeros for those, one request for each run
 * of the others, so no byte of a sector's previous owner ever reaches
 * application memory.  (Only reads that do meet one: the others are the
 * plain request above.)
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"

/* ---- segment lists ------------------------------------------------------------ */

/* Visit the pieces of [off, off+len) of a segment list. */
static int segs_pieces(const struct blk_seg *seg, uint32_t nseg, uint64_t off, uint64_t len,
                       struct blk_seg *out, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < nseg && len > 0; i++) {
		if (off >= seg[i].len) {
			off -= seg[i].len;
			continue;
		}
		uint64_t k = ED_MIN(len, seg[i].len - off);
		if (n == max)
			return -1;
		out[n++] = (struct blk_seg){ seg[i].addr + off, (uint32_t)k };
		len -= k;
		off = 0;
	}
	return len == 0 ? (int)n : -1;
}

static void segs_copy_in(const struct blk_seg *seg, uint32_t nseg, uint64_t off,
                         const uint8_t *src, uint64_t len)
{
	for (uint32_t i = 0; i < nseg && len > 0; i++) {
		if (off >= seg[i].len) {
			off -= seg[i].len;
			continue;
		}
		uint64_t k = ED_MIN(len, seg[i].len - off);
		ed_memcpy((uint8_t *)blk_seg_ptr(seg[i].addr) + off, src, k);
		src += k;
		len -= k;
		off = 0;
	}
}

/* Drop the first `bytes` of the list, in place. */
static void segs_trim(struct blk_seg *seg, uint32_t *nseg, uint64_t bytes)
{
	uint32_t i = 0;
	while (i < *nseg && bytes >= seg[i].len)
		bytes -= seg[i++].len;
	if (i < *nseg && bytes > 0) {
		seg[i].addr += bytes;
		seg[i].len -= (uint32_t)bytes;
	}
	ed_memmove(seg, seg + i, (*nseg - i) * sizeof(*seg));
	*nseg -= i;
}

static void segs_push_front(struct blk_seg *seg, uint32_t *nseg, struct blk_seg s)
{
	ed_memmove(seg + 1, seg, *nseg * sizeof(*seg));
	seg[0] = s;
	(*nseg)++;
}

/* Copy between a flat buffer and the header-sector pieces (bytes 0..511). */
static void head_copy_out(struct ed_io *io, uint32_t from, const uint8_t *src, uint32_t len)
{
	segs_copy_in(io->head, io->nhead, from, src + from, len);
}

static void head_copy_in(struct ed_io *io, uint8_t *dst)
{
	uint64_t off = 0;
	for (uint32_t i = 0; i < io->nhead; i++) {
		ed_memcpy(dst + off, blk_seg_ptr(io->head[i].addr), io->head[i].len);
		off += io->head[i].len;
	}
}

/* ---- completion of the plain and header paths ---------------------------------- */

static void data_done(struct blkreq *r)
{
	struct ed_io *io = r->priv;
	struct exodisk *ed = io->ed;
	ed_lock(ed);
	int status = r->status;
	struct ed_entry *e = io->ent;
	static const uint8_t zero[ED_EXT_HDR_BYTES];
	/* Written sectors that were unwritten are written now; a FUA write
	 * among them is durable only once a record says so (a flush cycle
	 * answers it, below). */
	bool fua_unw = false;
	struct ed_disk *d = io->write ? ed->disk[io->unit] : NULL;
	if (io->write)
		d->app_wr--;              /* counted in at submit() */
	if (io->write && status == 0) {
		fua_unw = io->fua && ed_unw_pending(d, io->sector, io->nsect);
		ed_unw_written(d, io->sector, io->nsect);
	}
	if (io->hdr_read && status == 0) {
		head_copy_out(io, ED_EXT_HDR_BYTES, io->sec, ED_SECTOR - ED_EXT_HDR_BYTES);
		segs_copy_in(io->head, io->nhead, 0, zero, ED_EXT_HDR_BYTES);
	} else if (e != NULL) {
		if (status == 0) {
			ed_memcpy(e->cur + ED_EXT_HDR_BYTES, e->stage + ED_EXT_HDR_BYTES,
			          ED_SECTOR - ED_EXT_HDR_BYTES);
			e->home_stamp = e->inflight_stamp;
		} else if (e->com_stamp != 0) {
			/* The home sector may be damaged: rewrite the committed
			 * header once the stage is free again. */
			e->home_stamp = 0;
			ed_home_need(ed, ed->disk[e->unit], e);
		}
		ed_stage_release(ed, e);
		ed_ent_orphan(ed, e);
	}
	if (fua_unw)
		ed_flush_queue(ed, d, io);
	else
		ed_io_finish(ed, io, status);
	if (d != NULL && d->zgate)
		ed_zero_kick(ed, d);      /* the last write in flight, maybe: the zeros may go */
	ed_unlock(ed);
}

static int submit(struct ed_io *io, uint64_t sector, uint32_t nsect, struct blk_seg *seg,
                  uint32_t nseg, blk_done_fn done)
{
	struct blkreq *r = &io->req;
	ed_memset(r, 0, sizeof(*r));
	r->op = io->write ? BLK_WRITE : BLK_READ;
	r->flags = io->write && io->fua ? BLK_F_FUA : 0;
	r->unit = io->unit;
	r->sector = sector;
	r->nsectors = nsect;
	r->seg = seg;
	r->nseg = (uint16_t)nseg;
	r->done = done;
	r->priv = io;
	return blk_submit(r);
}

/* A write of application sectors: counted in flight (zero.c's gate waits
 * for none) until data_done counts it out, error or not.  (Counted here,
 * not in submit(), which reads also use: so it stays inlined there.) */
static int submit_write(struct exodisk *ed, struct ed_io *io)
{
	ed->disk[io->unit]->app_wr++;
	return submit(io, io->sector, io->nsect, io->seg, io->nseg, data_done);
}

/* A request the block layer refused (err): finish it now, and say so. */
static int refused(struct ed_io *io, int err)
{
	if (err != 0) {
		io->req.status = err;
		data_done(&io->req);
	}
	return err;
}

/* Start a data write covering an extent's header sector: the sector image
 * is the committed header (or, for a header never committed, the current
 * one under a stamp drawn for it) and the application's bytes after it. */
static void sg_issue(struct exodisk *ed, struct ed_io *io)
{
	struct ed_entry *e = io->ent;
	struct ed_disk *d = ed->disk[e->unit];
	if (e->com_stamp != 0) {
		ed_memcpy(e->stage, e->com, ED_EXT_HDR_BYTES);
		e->inflight_stamp = e->com_stamp;
	} else {
		if (e->embed_stamp == 0 || e->embed_modgen != e->modgen) {
			e->embed_stamp = ed_new_stamp(d, &ed->keys);
			e->embed_modgen = e->modgen;
		}
		ed_ext_encode(&ed->keys, d->sb.uuid, e->sector, ed_ext(e), e->embed_stamp,
		              (struct ed_exthdr *)e->stage);
		e->inflight_stamp = e->embed_stamp;
	}
	head_copy_in(io, io->sec);
	ed_memcpy(e->stage + ED_EXT_HDR_BYTES, io->sec + ED_EXT_HDR_BYTES,
	          ED_SECTOR - ED_EXT_HDR_BYTES);
	e->flags |= EF_STAGE;
	ed->st_sg_writes++;
	refused(io, submit_write(ed, io));
}

void ed_sg_next(struct exodisk *ed, struct ed_entry *e)
{
	struct ed_io *io = e->sg_wait;
	if (io == NULL || (e->flags & EF_STAGE))
		return;
	struct ed_disk *d = ed->disk[e->unit];
	if (d->zgate) {
		d->z_later = true;        /* a checkpoint zeroes: ed_zero_open calls again */
		return;
	}
	e->sg_wait = io->next;
	if (e->sg_wait == NULL)
		e->sg_wait_tail = NULL;
	io->next = NULL;
	sg_issue(ed, io);
}

/* ---- writes held back while a checkpoint zeroes (zero.c) ---------------------------- */

/* Issue an ED_OP_IO write: one covering an extent's header sector waits
 * for the entry's stage if another write of that sector has it. */
static void write_go(struct exodisk *ed, struct ed_io *io)
{
	struct ed_entry *e = io->ent;
	if (e != NULL) {
		if (e->flags & EF_STAGE)
			ed_io_append(&e->sg_wait, &e->sg_wait_tail, io);
		else
			sg_issue(ed, io);
		return;
	}
	refused(io, submit_write(ed, io));
}

/* The gate opens (zero.c): the writes that waited at it go, in order.
 * (Each is started: its result word says pending.) */
void ed_io_unpark(struct exodisk *ed, struct ed_disk *d)
{
	struct ed_io *io = d->zwait;
	d->zwait = d->zwait_tail = NULL;
	while (io != NULL) {
		struct ed_io *next = io->next;
		io->next = NULL;
		write_go(ed, io);
		io = next;
	}
}

/* ---- reads that meet unwritten sectors -------------------------------------------- */

static void segs_zero(const struct blk_seg *seg, uint32_t nseg, uint64_t len)
{
	for (uint32_t i = 0; i < nseg && len > 0; i++) {
		uint64_t k = ED_MIN(len, seg[i].len);
		ed_memset(blk_seg_ptr(seg[i].addr), 0, k);
		len -= k;
	}
}

static void step_done(struct blkreq *r);

/* Hand out the read from io->st_pos (where io->seg now starts) to its end:
 * a run of unwritten sectors as zeros at once, a run of written ones with
 * one request.  Each run is looked at when its turn comes, so a sector
 * counted written has its data on the disk (its write completed); one
 * still unwritten reads as zeros even if a write to it is on its way -
 * a read beside a write may see either. */
static void step(struct exodisk *ed, struct ed_io *io)
{
	struct ed_disk *d = ed->disk[io->unit];
	uint64_t end = io->sector + io->nsect;
	while (io->st_pos < end) {
		bool unw;
		uint64_t k = ed_unw_run(d, io->st_pos, end, &unw);
		uint64_t bytes = k * ED_SECTOR;
		if (unw) {
			segs_zero(io->seg, io->nseg, bytes);
			segs_trim(io->seg, &io->nseg, bytes);
			io->st_pos += k;
			continue;
		}
		/* The run's part of the list: cut it where the run ends. */
		uint32_t j = 0;
		uint64_t left = bytes;
		while (left > io->seg[j].len)
			left -= io->seg[j++].len;
		io->st_run = (uint32_t)k;
		io->st_cut = j;
		io->st_cutlen = io->seg[j].len;
		io->seg[j].len = (uint32_t)left;
		int err = submit(io, io->st_pos, (uint32_t)k, io->seg, j + 1, step_done);
		if (err != 0) {
			io->seg[j].len = io->st_cutlen;
			ed_io_finish(ed, io, err);
		}
		return;
	}
	ed_io_finish(ed, io, 0);
}

static void step_done(struct blkreq *r)
{
	struct ed_io *io = r->priv;
	struct exodisk *ed = io->ed;
	ed_lock(ed);
	io->seg[io->st_cut].len = io->st_cutlen;
	if (r->status != 0) {
		ed_io_finish(ed, io, r->status);
	} else {
		segs_trim(io->seg, &io->nseg, (uint64_t)io->st_run * ED_SECTOR);
		io->st_pos += io->st_run;
		step(ed, io);
	}
	ed_unlock(ed);
}

/* ---- the bounce path ------------------------------------------------------------- */

static void bounce_done(struct blkreq *r);

static uint32_t bounce_sectors(const struct exodisk *ed)
{
	return ed->cfg.bounce_bytes / ED_SECTOR;
}

static void bounce_start(struct exodisk *ed, struct ed_io *io, struct ed_bounce *b)
{
	io->bounce = b;
	b->busy = true;
	uint64_t end = io->sector + io->nsect, lim = bounce_sectors(ed);
	io->rd_start = io->blkno;
	io->rd_nsect = io->sector < io->blkno + lim ? (uint32_t)ED_MIN(end - io->blkno, lim) : 1;
	if (io->stepped)
		io->rd_nsect = 1;      /* the header to check; then run by run */
	uint32_t nseg = 0;
	for (uint32_t s = 0; s < io->rd_nsect; s += ED_SECT_PER_PAGE) {
		uint32_t n = ED_MIN(ED_SECT_PER_PAGE, io->rd_nsect - s);
		b->seg[nseg++] = (struct blk_seg){
			(uint64_t)(uintptr_t)ed_pvec_page(&b->pages, s / ED_SECT_PER_PAGE), n * ED_SECTOR };
	}
	int err = submit(io, io->rd_start, io->rd_nsect, b->seg, nseg, bounce_done);
	if (err != 0) {
		io->req.status = err;
		bounce_done(&io->req);
	}
}

/* A bounce buffer is free again: give it to the next waiting read. */
static void bounce_put(struct exodisk *ed, struct ed_bounce *b)
{
	b->busy = false;
	struct ed_io *w = ed->bounce_waiters;
	if (w != NULL) {
		ed->bounce_waiters = w->next;
		if (ed->bounce_waiters == NULL)
			ed->bounce_waiters_tail = NULL;
		bounce_start(ed, w, b);
	}
}

void ed_bounce_kick(struct exodisk *ed)
{
	for (uint32_t i = 0; i < ed->cfg.nbounce && ed->bounce_waiters != NULL; i++)
		if (!ed->bounce[i].busy)
			bounce_put(ed, &ed->bounce[i]);
}

static uint8_t *bounce_sector(struct ed_bounce *b, uint32_t s)
{
	return (uint8_t *)ed_pvec_page(&b->pages, s / ED_SECT_PER_PAGE) +
	       (s % ED_SECT_PER_PAGE) * ED_SECTOR;
}

/* Verify the header that came in with the data, against its binding as it
 * was when the read started (or against the cached copy if someone read it
 * in meanwhile), and check the capability and the range.  The binding can
 * change meanwhile only through a write-back of the cached header, and a
 * shrink or deallocation waits for this read to finish (ED_E_IOBUSY); a
 * header that grew and was written back since fails as stale, and the
 * application reads again. */
static int bounce_check(struct exodisk *ed, struct ed_io *io)
{
	struct ed_disk *d = ed->disk[io->unit];
	struct ed_entry *e = ed_cache_lookup(ed, io->unit, io->blkno);
	struct ed_exthdr h;
	if (e != NULL && e->kind == ED_KIND_EXTENT && (e->flags & EF_VALID)) {
		if (e->flags & EF_DEALLOC)
			return ED_E_DEALLOC;
		h = *ed_ext(e);
	} else if (e != NULL) {
		return e->kind == ED_KIND_EXTENT ? ED_E_BUSY : ED_E_KIND;
	} else {
		struct ed_vtrec *v = &io->bind;
		int err = ed_ext_decode(&ed->keys, d->sb.uuid, io->blkno,
		                        (const struct ed_exthdr *)bounce_sector(io->bounce, 0),
		                        v->stamp, &h);
		if (err != 0)
			return err;
		/* Keep it: the header is verified, and the next access is free. */
		if (io->client != NULL) {
			int e2;
			struct ed_entry *ne = ed_cache_alloc(ed, io->client, io->unit, io->blkno,
			                                     ED_KIND_EXTENT, 1, &e2);
			if (ne != NULL) {
				ed_memcpy(ne->com, bounce_sector(io->bounce, 0), ED_SECTOR);
				*ed_ext(ne) = h;
				ed_memcpy(ne->cur + ED_EXT_HDR_BYTES, ne->com + ED_EXT_HDR_BYTES,
				          ED_SECTOR - ED_EXT_HDR_BYTES);
				ne->com_stamp = ne->home_stamp = v->stamp;
				ne->flags = EF_VALID;
			}
		}
	}
	if (!ed_cap_equal(&io->cap, &h.rc))
		return ED_E_CAP;
	if (io->sector + io->nsect > io->blkno + h.nsectors)
		return ED_E_RANGE;
	return 0;
}

static void bounce_done(struct blkreq *r)
{
	struct ed_io *io = r->priv;
	struct exodisk *ed = io->ed;
	ed_lock(ed);
	int status = r->status;
	if (status == 0 && io->phase == 0) {
		status = bounce_check(ed, io);
		uint64_t end = io->sector + io->nsect;
		uint64_t got_end = io->rd_start + io->rd_nsect;
		uint64_t done_to = io->sector;
		if (status == 0 && io->sector < got_end) {
			/* The checked data: copy what the bounce buffer holds. */
			uint64_t last = ED_MIN(end, got_end);
			for (uint64_t s = io->sector; s < last; s++)
				segs_copy_in(io->seg, io->nseg, (s - io->sector) * ED_SECTOR,
				             bounce_sector(io->bounce, (uint32_t)(s - io->rd_start)), ED_SECTOR);
			if (io->sector == io->blkno) {
				static const uint8_t zero[ED_EXT_HDR_BYTES];
				segs_copy_in(io->seg, io->nseg, 0, zero, ED_EXT_HDR_BYTES);
			}
			done_to = last;
		}
		ed->st_bounce_reads++;
		struct ed_bounce *b = io->bounce;
		io->bounce = NULL;
		bounce_put(ed, b);
		if (status == 0 && done_to < end && io->stepped) {
			segs_trim(io->seg, &io->nseg, (done_to - io->sector) * ED_SECTOR);
			io->st_pos = done_to;
			step(ed, io);
			ed_unlock(ed);
			return;
		}
		if (status == 0 && done_to < end) {
			/* The rest goes straight to the application: it is checked. */
			io->phase = 1;
			segs_trim(io->seg, &io->nseg, (done_to - io->sector) * ED_SECTOR);
			int err = submit(io, done_to, (uint32_t)(end - done_to), io->seg, io->nseg,
			                 bounce_done);
			if (err != 0)
				ed_io_finish(ed, io, err);
			ed_unlock(ed);
			return;
		}
	} else if (io->bounce != NULL) {
		struct ed_bounce *b = io->bounce;
		io->bounce = NULL;
		bounce_put(ed, b);
	}
	ed_io_finish(ed, io, status);
	ed_unlock(ed);
}

/* ---- ED_OP_IO ------------------------------------------------------------------------ */

/* Does one extent entry of exonode o hold [start, start + n)? */
static bool in_one_extent(const struct ed_obj *o, uint64_t start, uint32_t n)
{
	if (o->kind != ED_PK_EXONODE)
		return false;
	for (struct ed_xnrec *r = ed_xn_first(o->x); r != NULL; r = ed_xn_next(o->x, r))
		if (r->type == ED_ENT_EXTENT && start >= ed_xnrec_u64(r, 0) &&
		    start + n <= ed_xnrec_u64(r, 0) + r->a)
			return true;
	return false;
}

static int check_buf(const struct ed_args *a)
{
	const struct ed_buf *b = a->buf;
	if (b->b_flags != ED_B_READ && b->b_flags != ED_B_WRITE && b->b_flags != (ED_B_WRITE | ED_B_FUA))
		return ED_E_ARG;
	if (b->b_pad != 0 || b->b_dev != a->prot->unit)
		return ED_E_ARG;
	if (b->b_bcount == 0)
		return ED_E_ARG;
	if (b->b_bcount % ED_SECTOR != 0)
		return ED_E_ALIGN;
	if (b->b_bcount > ED_IO_MAX)
		return ED_E_TOOBIG;
	if (a->seg == NULL || a->nseg == 0 || a->segcap < a->nseg + 2)
		return ED_E_ARG;
	uint64_t total = 0;
	for (uint32_t i = 0; i < a->nseg; i++) {
		if (a->seg[i].len == 0 || a->seg[i].addr == 0)
			return ED_E_ARG;
		total += a->seg[i].len;
	}
	return total == b->b_bcount ? 0 : ED_E_ARG;
}

int64_t ed_op_io(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	if (a->buf == NULL || a->prot == NULL)
		return ED_E_ARG;
	if ((err = check_buf(a)) != 0)
		return err;
	const struct ed_buf *b = a->buf;
	const struct ed_protector *prot = a->prot;
	struct ed_disk *d = ed_disk_get(ed, prot->unit, &err);
	if (d == NULL)
		return err;
	uint32_t nsect = (uint32_t)(b->b_bcount / ED_SECTOR);
	if (!ed_range_ok(d, b->b_blkno, nsect))
		return ED_E_RANGE;
	bool write = (b->b_flags & ED_B_WRITE) != 0;

	struct ed_obj o;
	err = ed_obj_find(ed, prot, &o);
	bool bounce = err == ED_E_NOTCACHED && prot->kind == ED_PK_EXTENT && !write;
	/* (ED_E_NOTCACHED for an extent: o.bind is its binding, of that kind.) */
	if (err != 0 && !bounce)
		return err;
	if (bounce && b->b_blkno < prot->blkno)
		return ED_E_RANGE;
	if (!bounce) {
		if (o.e != NULL && (o.e->flags & EF_DEALLOC))
			return ED_E_DEALLOC;
		if ((err = ed_obj_access(ed, &o, prot, write)) != 0)
			return err;
		/* Usually one extent of the exonode holds the whole transfer:
		 * found by a walk of its entries, without building (and
		 * sorting) the list of everything it covers. */
		if (!in_one_extent(&o, b->b_blkno, nsect)) {
			struct ed_rl *cov = ed_rl_get(ed);
			err = ed_obj_coverage(ed, &o, cov);
			bool inside = err == 0 && ed_rl_covers(cov, b->b_blkno, nsect);
			ed_rl_put(ed, cov);
			if (!inside)
				return err != 0 ? err : ED_E_RANGE;
		}
	}
	bool header = !bounce && o.kind == ED_PK_EXTENT && b->b_blkno == o.e->sector;

	struct ed_io *io = ed_io_alloc(ed, c, IO_DATA, &err);
	if (io == NULL)
		return err;
	io->unit = prot->unit;
	io->write = write;
	io->fua = (b->b_flags & ED_B_FUA) != 0;
	io->sector = b->b_blkno;
	io->nsect = nsect;
	io->pkind = prot->kind;
	io->xn_num = prot->xn_num;
	io->blkno = prot->blkno;
	io->cap = write ? prot->wc : prot->rc;
	io->seg = a->seg;
	io->nseg = a->nseg;
	io->segcap = a->segcap;

	io->stepped = !write && ed_unw_any(d, io->sector, nsect);
	if (bounce) {
		io->bind = o.bind;
		ed_io_start(ed, io, a);
		struct ed_bounce *bb = NULL;
		for (uint32_t i = 0; i < ed->cfg.nbounce && bb == NULL; i++)
			if (!ed->bounce[i].busy)
				bb = &ed->bounce[i];
		if (bb != NULL) {
			bounce_start(ed, io, bb);
		} else {
			ed_io_append(&ed->bounce_waiters, &ed->bounce_waiters_tail, io);
		}
		return 0;
	}

	if (io->stepped) {
		io->st_pos = io->sector;
		if (header) {
			/* The header sector from the kernel's copy: zeros where the
			 * header is, the application's bytes after it (the
			 * entry's copy of them is what the disk has, or - for an
			 * extent whose header never went home - zeros). */
			static const uint8_t zero[ED_EXT_HDR_BYTES];
			segs_copy_in(io->seg, io->nseg, 0, zero, ED_EXT_HDR_BYTES);
			segs_copy_in(io->seg, io->nseg, ED_EXT_HDR_BYTES, o.e->cur + ED_EXT_HDR_BYTES,
			             ED_SECTOR - ED_EXT_HDR_BYTES);
			segs_trim(io->seg, &io->nseg, ED_SECTOR);
			io->st_pos++;
		}
		d->st_unw_reads++;
		ed_io_start(ed, io, a);
		step(ed, io);
		return 0;
	}
	if (header) {
		struct ed_entry *e = o.e;
		int n = segs_pieces(io->seg, io->nseg, 0, ED_SECTOR, io->head, ED_NELEM(io->head));
		if (n < 0) {
			ed_io_abort(ed, io);
			return ED_E_ARG;
		}
		io->nhead = (uint32_t)n;
		segs_trim(io->seg, &io->nseg, ED_SECTOR);
		if (!write) {
			/* Read the sector into the kernel; data_done copies out the
			 * application's part. */
			io->hdr_read = true;
			segs_push_front(io->seg, &io->nseg,
			                (struct blk_seg){ (uint64_t)(uintptr_t)io->sec, ED_SECTOR });
		} else {
			/* One write of that sector at a time (they could land in
			 * either order): wait for the stage if it is in use. */
			io->ent = e;
			segs_push_front(io->seg, &io->nseg,
			                (struct blk_seg){ (uint64_t)(uintptr_t)e->stage, ED_SECTOR });
			ed_io_start(ed, io, a);
			if (d->zgate)         /* the gate is shut: it waits, in order */
				ed_io_append(&d->zwait, &d->zwait_tail, io);
			else
				write_go(ed, io);
			return 0;
		}
	}
	if (!write)
		ed->st_cached_reads++;
	ed_io_start(ed, io, a);
	if (write && d->zgate) {    /* the gate is shut: it waits, in order */
		ed_io_append(&d->zwait, &d->zwait_tail, io);
		return 0;
	}
	return refused(io, write ? submit_write(ed, io)
	                         : submit(io, io->sector, nsect, io->seg, io->nseg, data_done));
}
