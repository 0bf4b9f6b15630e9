/*
 * iob.c - control blocks for asynchronous operations, result posting, and
 * the synchronous I/O used at format and mount time.
 *
 * An asynchronous exodisk operation (ED_OP_IO, reading a block in, writing
 * one back, shutdown) outlives the system call that started it, and maybe
 * the process: it owns the pinned application memory and the result word
 * until it finishes, which is why the result is posted and the pin released
 * in exactly one place (ed_io_finish).  If the client exits first, io->client
 * is cleared and the outcome still lands in the pinned word, harmlessly.
 */
#include "kernel/exodisk/edcore.h"

struct ed_io *ed_io_at(struct exodisk *ed, uint32_t i)
{
	return ed_pvec_elem(&ed->ios, sizeof(struct ed_io), i);
}

struct ed_io *ed_io_alloc(struct exodisk *ed, struct ed_client *c, int type, int *err)
{
	if (ed->io_free < 0) {
		*err = ED_E_NOIO;
		return NULL;
	}
	struct ed_io *io = ed_io_at(ed, (uint32_t)ed->io_free);
	ed->io_free = io->next != NULL ? (int32_t)io->next->idx : -1;
	uint32_t idx = io->idx;
	ed_memset(io, 0, offsetof(struct ed_io, sec));
	io->idx = idx;
	io->ed = ed;
	io->type = (uint8_t)type;
	io->client = c;
	io->cslot = c != NULL ? c->slot : -1;
	return io;
}

static void io_put(struct exodisk *ed, struct ed_io *io)
{
	io->type = IO_FREE;
	io->next = ed->io_free >= 0 ? ed_io_at(ed, (uint32_t)ed->io_free) : NULL;
	ed->io_free = (int32_t)io->idx;
}

void ed_io_start(struct exodisk *ed, struct ed_io *io, struct ed_args *a)
{
	if (a != NULL) {
		io->result = a->result;
		io->pin = a->pin;
		a->pin_taken = true;
	}
	if (io->result != NULL)
		ed->env.post(ed->env.ctx, io->result, ED_PENDING);
	if (io->client != NULL)
		io->client->pending++;
}

void ed_io_finish(struct exodisk *ed, struct ed_io *io, int32_t status)
{
	if (io->result != NULL)
		ed->env.post(ed->env.ctx, io->result, status);
	if (io->pin != NULL)
		ed->env.release(ed->env.ctx, io->pin);
	if (io->client != NULL && io->client->pending > 0) {
		io->client->pending--;
		if (ed->env.op_done != NULL)
			ed->env.op_done(ed->env.ctx);
	}
	bool data = io->type == IO_DATA;
	io_put(ed, io);
	if (data && ed->orphan_wait)
		ed_orphans_retry(ed);
}

void ed_io_abort(struct exodisk *ed, struct ed_io *io)
{
	io_put(ed, io);
}

void ed_post_now(struct exodisk *ed, struct ed_args *a, int32_t status)
{
	if (a->result != NULL)
		ed->env.post(ed->env.ctx, a->result, status);
}

bool ed_io_busy_range(struct exodisk *ed, uint16_t unit, uint64_t start, uint64_t count)
{
	for (uint32_t i = 0; i < ed->cfg.nio; i++) {
		struct ed_io *io = ed_io_at(ed, i);
		if (io->type == IO_DATA && io->unit == unit &&
		    ed_overlap(io->sector, io->nsect, start, count))
			return true;
	}
	return false;
}

/* ---- synchronous I/O (format, mount, check) ------------------------------------ */

static void sync_done(struct blkreq *r)
{
	*(volatile int *)r->priv = 1;
}

int ed_sync_io(struct exodisk *ed, int unit, int op, int flags, uint64_t sector,
               uint32_t nsect, struct blk_seg *seg, uint32_t nseg)
{
	volatile int done = 0;
	struct blkreq r;
	ed_memset(&r, 0, sizeof(r));
	r.op = (uint8_t)op;
	r.flags = (uint8_t)flags;
	r.unit = unit;
	r.sector = sector;
	r.nsectors = nsect;
	r.seg = seg;
	r.nseg = (uint16_t)nseg;
	r.done = sync_done;
	r.priv = (void *)&done;
	int e = blk_submit(&r);
	if (e != 0)
		return e;
	while (!done)
		ed->env.wait(ed->env.ctx);
	return r.status;
}

int ed_sync_rw(struct exodisk *ed, int unit, int op, uint64_t sector, uint32_t nsect, void *buf)
{
	struct blk_seg seg = { (uint64_t)(uintptr_t)buf, nsect * ED_SECTOR };
	return ed_sync_io(ed, unit, op, 0, sector, nsect, &seg, 1);
}

struct many {
	struct blkreq req[ED_SYNC_MANY];
	struct blk_seg seg[ED_SYNC_MANY];
	volatile uint32_t left;
	int err;
};

static void many_done(struct blkreq *r)
{
	struct many *m = r->priv;
	if (r->status != 0 && m->err == 0)
		m->err = r->status;
	m->left--;
}

int ed_sync_many(struct exodisk *ed, int unit, int op, const struct ed_xfer *x, uint32_t n)
{
	_Static_assert(sizeof(struct many) <= ED_PAGE, "a batch fits a page");
	if (n == 0)
		return 0;
	struct many *m = ed->env.page_alloc(ed->env.ctx);
	if (m == NULL)
		return ED_E_NOMEM;
	m->left = n;
	m->err = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct blkreq *r = &m->req[i];
		m->seg[i] = (struct blk_seg){ (uint64_t)(uintptr_t)x[i].buf, x[i].nsect * ED_SECTOR };
		r->op = (uint8_t)op;
		r->unit = unit;
		r->sector = x[i].sector;
		r->nsectors = x[i].nsect;
		r->seg = &m->seg[i];
		r->nseg = 1;
		r->done = many_done;
		r->priv = m;
		int e = blk_submit(r);
		if (e != 0) {
			if (m->err == 0)
				m->err = e;
			m->left--;
		}
	}
	while (m->left > 0)
		ed->env.wait(ed->env.ctx);
	int err = m->err;
	ed->env.page_free(ed->env.ctx, m);
	return err;
}
