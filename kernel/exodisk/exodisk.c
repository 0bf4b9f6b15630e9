/*
 * exodisk.c - the core's front door: creating it, registering clients and
 * cleaning up after them, and dispatching each exodisk_request to the file
 * that implements the operation.  The small operations that only look at
 * the cache or the unit (ED_OP_POLL, IN_CACHE, MARK_REPLACEMENT,
 * DROP_CACHE, GET_FREE_MAP, SHUTDOWN) live here too.
 */
#include "kernel/exodisk/edcore.h"
#include "kernel/exodisk/xnode.h"
#include "kernel/uapi/layout.h"

void ed_lock(struct exodisk *ed)
{
	if (ed->env.lock != NULL)
		ed->env.lock(ed->env.ctx);
}

void ed_unlock(struct exodisk *ed)
{
	if (ed->env.unlock != NULL)
		ed->env.unlock(ed->env.ctx);
}

struct ed_disk *ed_disk_get(struct exodisk *ed, uint32_t unit, int *err)
{
	struct ed_disk *d = unit < BLK_MAX_UNITS ? ed->disk[unit] : NULL;
	if (d == NULL || !d->mounted) {
		*err = ED_E_UNIT;
		return NULL;
	}
	if (d->closing || d->closed) {
		*err = ED_E_SHUTDOWN;
		return NULL;
	}
	return d;
}

bool ed_range_ok(const struct ed_disk *d, uint64_t start, uint64_t count)
{
	return count > 0 && start >= d->data_start && start < d->nsectors &&
	       count <= d->nsectors - start;
}

uint64_t ed_new_stamp(struct ed_disk *d, const struct ed_keys *k)
{
	return ed_stamp(k, d->nonce, ++d->nstamps);
}

/* ---- creation ------------------------------------------------------------------- */

static bool is_prime(uint32_t n)
{
	if (n < 2)
		return false;
	for (uint32_t i = 2; i * i <= n; i++)
		if (n % i == 0)
			return false;
	return true;
}

static int configure(struct ed_config *c)
{
	if (c->cache_entries == 0)
		c->cache_entries = 281;
	if (c->nio == 0)
		c->nio = 128;
	if (c->bounce_bytes == 0)
		c->bounce_bytes = 128 * 1024;
	if (c->nbounce == 0)
		c->nbounce = 2;
	if (c->nproxy == 0)
		c->nproxy = 64;
	if (c->nmaps == 0)
		c->nmaps = 256;
	if (c->client_quota == 0)
		c->client_quota = c->cache_entries / 4 * 3;
	if (c->meta_pages == 0)
		c->meta_pages = 1024;
	if (!is_prime(c->cache_entries) || c->cache_entries > 65521 || c->nio < 4 ||
	    c->nio > 4096 || c->bounce_bytes % ED_PAGE != 0 || c->bounce_bytes > ED_IO_MAX ||
	    c->nbounce > ED_PAGE / sizeof(struct ed_bounce) || c->nproxy > 0xffff ||
	    c->nmaps > 4096 || c->client_quota == 0 || c->meta_pages < 4)
		return ED_E_ARG;
	return 0;
}

struct exodisk *ed_create(const struct ed_env *env, const struct ed_config *cfg,
                          const uint8_t key[16], int *err)
{
	_Static_assert(sizeof(struct exodisk) <= ED_PAGE, "the core's state fits a page");
	struct ed_config c;
	if (cfg != NULL)
		c = *cfg;
	else
		ed_memset(&c, 0, sizeof(c));
	if ((*err = configure(&c)) != 0)
		return NULL;
	struct exodisk *ed = env->page_alloc(env->ctx);
	if (ed == NULL) {
		*err = ED_E_NOMEM;
		return NULL;
	}
	ed->env = *env;
	ed->cfg = c;
	ed->bad_sector = UINT64_MAX;
	ed_keys_derive(&ed->keys, key);
	int e = ed_cache_init(ed);
	if (e == 0)
		e = ed_pvec_alloc(env, &ed->ios, ed_pvec_pages_for(c.nio, sizeof(struct ed_io)));
	if (e == 0)
		e = ed_pvec_alloc(env, &ed->proxies, ed_pvec_pages_for(c.nproxy, sizeof(struct ed_proxy)));
	if (e == 0)
		e = ed_pvec_alloc(env, &ed->maps, ed_pvec_pages_for(c.nmaps, sizeof(struct ed_xnmap)));
	if (e == 0)
		e = ed_pvec_alloc(env, &ed->scratch, ED_NSCRATCH);
	if (e == 0 && (ed->bounce = env->page_alloc(env->ctx)) == NULL)
		e = ED_E_NOMEM;
	if (e == 0 && ((ed->zero_page = env->page_alloc(env->ctx)) == NULL ||
	               (ed->ones_page = env->page_alloc(env->ctx)) == NULL))
		e = ED_E_NOMEM;
	if (e == 0)
		ed_memset(ed->ones_page, 0xff, ED_PAGE);
	for (uint32_t i = 0; e == 0 && i < c.nbounce; i++) {
		struct ed_bounce *b = &ed->bounce[i];
		b->npages = c.bounce_bytes / ED_PAGE;
		e = ed_pvec_alloc(env, &b->pages, b->npages);
		if (e == 0 && (b->seg = env->page_alloc(env->ctx)) == NULL)
			e = ED_E_NOMEM;
	}
	if (e != 0) {
		ed_destroy(ed);
		*err = e;
		return NULL;
	}
	ed->io_free = -1;
	for (uint32_t i = c.nio; i-- > 0; ) {
		struct ed_io *io = ed_io_at(ed, i);
		io->idx = i;
		io->type = IO_FREE;
		io->next = ed->io_free >= 0 ? ed_io_at(ed, (uint32_t)ed->io_free) : NULL;
		ed->io_free = (int32_t)i;
	}
	return ed;
}

void ed_destroy(struct exodisk *ed)
{
	const struct ed_env *env = &ed->env;
	for (int u = 0; u < BLK_MAX_UNITS; u++)
		ed_unmount_forget(ed, u);
	if (ed->maps.dir != NULL)
		for (uint32_t i = 0; i < ed->cfg.nmaps; i++) {
			struct ed_xnmap *m = ed_pvec_elem(&ed->maps, sizeof(*m), i);
			if (m->used)
				env->page_free(env->ctx, m->page);
		}
	if (ed->bounce != NULL) {
		for (uint32_t i = 0; i < ed->cfg.nbounce; i++) {
			ed_pvec_free(env, &ed->bounce[i].pages);
			if (ed->bounce[i].seg != NULL)
				env->page_free(env->ctx, ed->bounce[i].seg);
		}
		env->page_free(env->ctx, ed->bounce);
	}
	ed_cache_free(ed);
	if (ed->zero_page != NULL)
		env->page_free(env->ctx, ed->zero_page);
	if (ed->ones_page != NULL)
		env->page_free(env->ctx, ed->ones_page);
	ed_pvec_free(env, &ed->ios);
	ed_pvec_free(env, &ed->proxies);
	ed_pvec_free(env, &ed->maps);
	ed_pvec_free(env, &ed->scratch);
	env->page_free(env->ctx, ed);
}

/* ---- clients -------------------------------------------------------------------- */

static int client_register(struct exodisk *ed, struct ed_client *c)
{
	if (c->registered)
		return 0;
	for (int32_t s = 0; s < ED_MAX_CLIENTS; s++) {
		if (ed->clients[s] == NULL) {
			ed->clients[s] = c;
			c->slot = s;
			c->registered = true;
			c->pending = c->nheld = c->nmaps = 0;
			return 0;
		}
	}
	return ED_E_NOCLIENT;
}

void ed_client_exit(struct exodisk *ed, struct ed_client *c)
{
	ed_lock(ed);
	if (!c->registered) {
		ed_unlock(ed);
		return;
	}
	/* Operations in flight finish into pinned memory, unseen. */
	for (uint32_t i = 0; i < ed->cfg.nio; i++) {
		struct ed_io *io = ed_io_at(ed, i);
		if (io->type != IO_FREE && io->client == c)
			io->client = NULL;
	}
	ed_map_drop_client(ed, c);
	ed_proxy_drop_client(ed, c->slot);
	/* Let go of its cache entries.  Uncommitted changes that nobody else
	 * holds are undone: the exiting process chose not to write them back.
	 * Entries with a write in flight are dealt with when it completes. */
	for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
		struct ed_entry *e = ed_cache_ent(ed, i);
		if (e->kind == 0 || !(e->holders & (1ull << c->slot)))
			continue;
		ed_cache_unhold(ed, e, c->slot);
		if (e->holders == 0 && (e->flags & EF_DIRTY))
			e->flags |= EF_ORPHAN;
		ed_ent_orphan(ed, e);
	}
	ed->clients[c->slot] = NULL;
	c->registered = false;
	c->slot = -1;
	ed_unlock(ed);
}

/* ---- the small operations ---------------------------------------------------------- */

static int64_t in_cache(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	if (a->prot == NULL)
		return ED_E_ARG;
	if (ed_disk_get(ed, a->prot->unit, &err) == NULL)
		return err;
	struct ed_entry *e = ed_cache_lookup(ed, a->prot->unit, a->prot->blkno);
	if (e == NULL)
		return 0;
	int64_t m = ED_IC_CACHED;
	if (e->flags & EF_DIRTY)
		m |= ED_IC_DIRTY;
	if (e->flags & (EF_READING | EF_WRITING))
		m |= ED_IC_BUSY;
	if (e->holders & (1ull << c->slot))
		m |= ED_IC_HELD;
	if (e->com_stamp != 0)
		m |= ED_IC_COMMITTED;
	if (e->kind == ED_KIND_XNBLK)
		m |= ED_IC_EXONODE;
	return m;
}

/* A client may mark for replacement an entry it holds (giving up its own
 * hold), or any entry whose write capability it presents (which drops every
 * hold).  A dirty entry is never replaced until written back, and whoever
 * changed it keeps holding it: marking it only moves it to the end of the
 * LRU list, so it goes first once it is clean. */
static int64_t mark_replacement(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	const struct ed_protector *prot = a->prot;
	if (prot == NULL)
		return ED_E_ARG;
	if (prot->kind == ED_PK_PROXY)
		return ED_E_PROXY;
	if (ed_disk_get(ed, prot->unit, &err) == NULL)
		return err;
	struct ed_entry *e = ed_cache_lookup(ed, prot->unit, prot->blkno);
	if (e == NULL)
		return ED_E_NOTCACHED;
	bool cap = false;
	if (e->flags & EF_VALID) {
		if (e->kind == ED_KIND_EXTENT) {
			cap = ed_cap_equal(&prot->wc, &ed_ext(e)->wc);
		} else {
			struct ed_xnblk *b = (struct ed_xnblk *)e->cur;
			cap = prot->xn_num < ed_xn_nslots(b->nsect, b->slot_bytes) &&
			      ed_xn_slot(e->cur, prot->xn_num)->state == ED_SLOT_LIVE &&
			      ed_xn_access(ed, e, prot->xn_num, &prot->wc, true) == 0;
		}
	}
	bool mine = (e->holders & (1ull << c->slot)) != 0;
	if (!cap && !mine)
		return ED_E_CAP;
	if (!(e->flags & EF_DIRTY)) {
		if (cap) {
			for (int32_t s = 0; s < ED_MAX_CLIENTS; s++)
				ed_cache_unhold(ed, e, s);
		} else {
			ed_cache_unhold(ed, e, c->slot);
		}
	}
	if (e->holders == 0 || (e->flags & EF_DIRTY))
		ed_cache_mark(ed, e);
	return 0;
}

/* ED_OP_DROP_CACHE: evict every entry of the unit that is clean, idle and
 * held by nobody but the caller (whose holds go with it), so that the next
 * use reads from the disk - what a benchmark needs before timing cold
 * reads.  It takes nothing a client could not already take by allocating:
 * replacement may always choose an entry nobody else holds, and dirty or
 * busy entries stay.  No capability is needed and no data is revealed.
 * Returns how many of the unit's entries are still cached; stuff->one (if
 * given) gets how many of those are busy - being read in, written back or
 * written home - and so will go by themselves if called again later (the
 * others are held by another client, or dirty). */
static int64_t drop_cache(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	if (a->prot == NULL)
		return ED_E_ARG;
	if (ed_disk_get(ed, a->prot->unit, &err) == NULL)
		return err;
	const uint32_t busy = EF_READING | EF_WRITING | EF_HOME_NEED | EF_HOME_IO | EF_STAGE | EF_PIN;
	uint64_t others = ~(1ull << c->slot);
	int64_t left = 0, nbusy = 0;
	for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
		struct ed_entry *e = ed_cache_ent(ed, i);
		if (e->kind == 0 || e->unit != a->prot->unit)
			continue;
		if ((e->holders & others) == 0 && ed_cache_evictable(e)) {
			ed_cache_evict(ed, e);
			continue;
		}
		left++;
		nbusy += (e->holders & others) == 0 && (e->flags & busy) != 0;
	}
	if (a->stuff != NULL)
		a->stuff->one = (uint64_t)nbusy;
	return left;
}

static int64_t get_free_map(struct exodisk *ed, struct ed_args *a)
{
	int err;
	if (a->prot == NULL || a->stuff == NULL)
		return ED_E_ARG;
	struct ed_disk *d = ed_disk_get(ed, a->prot->unit, &err);
	if (d == NULL)
		return err;
	a->stuff->one = d->nsectors;
	a->stuff->two = ed_bm_nleaves(&d->fm) * ED_PAGE;
	a->stuff->three = UFREEMAP(a->prot->unit);
	return 0;
}

/* ED_OP_UNIT_INFO: struct ed_unit_info into a->data (room: a->datalen). */
static int64_t unit_info(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	if (a->prot == NULL || a->stuff == NULL)
		return ED_E_ARG;
	if (ed_disk_get(ed, a->prot->unit, &err) == NULL)
		return err;
	if (a->data == NULL || a->datalen < sizeof(struct ed_unit_info))
		return ED_E_ARG;
	ed_unit_info(ed, a->prot->unit, c, a->data);
	return sizeof(struct ed_unit_info);
}

/* The start of a unit-wide asynchronous operation (SHUTDOWN, FLUSH): the
 * protector names only a mounted unit.  NULL with *err set on failure. */
static struct ed_io *unit_io(struct exodisk *ed, struct ed_client *c, struct ed_args *a, int type,
                             struct ed_disk **dp, int *err)
{
	if (a->prot == NULL) {
		*err = ED_E_ARG;
		return NULL;
	}
	*dp = ed_disk_get(ed, a->prot->unit, err);
	if (*dp == NULL)
		return NULL;
	struct ed_io *io = ed_io_alloc(ed, c, type, err);
	if (io != NULL)
		io->unit = a->prot->unit;
	return io;
}

static int64_t shutdown(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	struct ed_disk *d;
	struct ed_io *io = unit_io(ed, c, a, IO_SHUTDOWN, &d, &err);
	if (io == NULL)
		return err;
	ed_io_start(ed, io, a);
	io->next = d->ck_waiters;
	d->ck_waiters = io;
	d->closing = true;
	d->ck_clean = true;
	ed_ckpt_request(ed, d);
	return 0;
}

/* ED_OP_CHECKPOINT: a checkpoint that starts after the request, so that
 * everything committed before it is in the trees and the log is empty
 * when it completes.  Like FLUSH it reveals and changes no data (it writes
 * the exodisk's own pages), so it needs no capability.  A checkpoint that
 * is already running planned without this caller's commits: the request
 * waits for the next one. */
static int64_t checkpoint(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	struct ed_disk *d;
	struct ed_io *io = unit_io(ed, c, a, IO_CKPT, &d, &err);
	if (io == NULL)
		return err;
	ed_io_start(ed, io, a);
	if (d->ck <= CK_WAIT) {       /* it has not planned yet */
		io->next = d->ck_waiters;
		d->ck_waiters = io;
	} else {
		io->next = d->ck_later;
		d->ck_later = io;
	}
	ed_ckpt_request(ed, d);
	return 0;
}

/* ED_OP_FLUSH: a device flush on the unit.  It reveals and changes no data,
 * so it needs no capability; it exists because a device may keep completed
 * writes in a volatile cache, and a library's fsync must be able to empty it.
 *
 * Flushes go in cycles, one at a time (unwritten.c): a cycle takes the
 * sectors written since the last one that were unwritten, flushes the
 * device, then logs them as written, and answers every request that was
 * waiting when it began.  A cycle with nothing to log is the device flush
 * alone, as before. */
static void cycle_answer(struct exodisk *ed, struct ed_disk *d, int status)
{
	while (d->fl_cur != NULL) {
		struct ed_io *io = d->fl_cur;
		d->fl_cur = io->next;
		ed_io_finish(ed, io, status);
	}
	d->fl_state = FL_IDLE;
	if (d->closing)
		ed_ckpt_progress(ed, d);     /* a shutdown waited for the cycle */
}

static void fl_done(struct blkreq *r)
{
	struct ed_disk *d = r->priv;
	struct exodisk *ed = d->ed;
	ed_lock(ed);
	if (r->status != 0) {
		/* Every request waiting gets the error (the set stays to be
		 * logged by a later cycle). */
		struct ed_io **pp = &d->fl_cur;
		while (*pp != NULL)
			pp = &(*pp)->next;
		*pp = d->fl_q;
		d->fl_q = NULL;
		cycle_answer(ed, d, r->status);
	} else if (d->unw_fl.count == 0) {
		cycle_answer(ed, d, 0);
		ed_flush_kick(ed, d);
	} else {
		/* Its records name the set from fl_pos on: 0 for a new set,
		 * or where a failed cycle's records had got to. */
		d->fl_state = FL_LOG;
		ed_commit_kick(ed, d);
	}
	ed_idle_wake(ed);
	ed_unlock(ed);
}

void ed_flush_queue(struct exodisk *ed, struct ed_disk *d, struct ed_io *io)
{
	io->next = d->fl_q;
	d->fl_q = io;
	ed_flush_kick(ed, d);
}

void ed_flush_kick(struct exodisk *ed, struct ed_disk *d)
{
	if (d->fl_state != FL_IDLE || d->fl_q == NULL)
		return;
	d->fl_cur = d->fl_q;
	d->fl_q = NULL;
	/* If an earlier cycle's set is still there (its record failed), this
	 * cycle logs that one, and its requests wait for the next as well. */
	d->fl_took = ed_unw_cycle_begin(d);
	if (!d->fl_took) {
		d->fl_q = d->fl_cur;
		d->fl_cur = NULL;
	}
	d->fl_state = FL_FLUSH;
	struct blkreq *r = &d->fl_req;
	ed_memset(r, 0, sizeof(*r));
	r->op = BLK_FLUSH;
	r->unit = d->unit;
	r->done = fl_done;
	r->priv = d;
	int err = blk_submit(r);
	if (err != 0) {
		r->status = err;
		fl_done(r);
	}
}

/* The cycle's last record is durable (status 0), or a record failed. */
void ed_flush_logged(struct exodisk *ed, struct ed_disk *d, int status)
{
	if (status == 0)
		ed_unw_cycle_end(d);
	cycle_answer(ed, d, status);
	ed_flush_kick(ed, d);
}

static int64_t flush(struct exodisk *ed, struct ed_client *c, struct ed_args *a)
{
	int err;
	struct ed_disk *d;
	struct ed_io *io = unit_io(ed, c, a, IO_FLUSH, &d, &err);
	if (io == NULL)
		return err;
	ed_io_start(ed, io, a);
	ed_flush_queue(ed, d, io);
	return 0;
}

/* ---- dispatch -------------------------------------------------------------------- */

static int64_t dispatch(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a)
{
	a->pin_taken = false;
	int64_t r = client_register(ed, c);
	if (r == 0) {
		switch (op) {
		case ED_OP_IO:
			r = ed_op_io(ed, c, a);
			break;
		case ED_OP_EXTENT_ALLOCATE:
		case ED_OP_EXTENT_DEALLOCATE:
		case ED_OP_EXTENT_GROW:
		case ED_OP_EXTENT_SHRINK:
			r = ed_op_extent(ed, c, op, a);
			break;
		case ED_OP_EXTENT_READ:
			r = ed_op_readin(ed, c, a, ED_KIND_EXTENT);
			break;
		case ED_OP_EXTENT_WRITE:
			r = ed_op_writeback(ed, c, a, ED_KIND_EXTENT);
			break;
		case ED_OP_EXONODE_READ:
			r = ed_op_readin(ed, c, a, ED_KIND_XNBLK);
			break;
		case ED_OP_EXONODE_WRITE:
			r = ed_op_writeback(ed, c, a, ED_KIND_XNBLK);
			break;
		case ED_OP_EXONODE_ALLOCATE:
		case ED_OP_EXONODE_DEALLOCATE:
		case ED_OP_EXONODE_ADD_EXTENT:
		case ED_OP_EXONODE_ADD_EXONODE:
		case ED_OP_EXONODE_ADD_DATA:
		case ED_OP_EXONODE_READ_DATA:
		case ED_OP_EXONODE_REMOVE_ENTRY:
		case ED_OP_EXONODE_REMOVE_RANGE:
		case ED_OP_EXONODE_COMBINE:
		case ED_OP_EXONODE_SPLIT:
		case ED_OP_EXONODE_MAP:
		case ED_OP_EXONODE_PROXY:
		case ED_OP_EXONODE_CAP_DISCOVER:
			r = ed_op_exonode(ed, c, op, a);
			break;
		case ED_OP_MARK_REPLACEMENT:
			r = mark_replacement(ed, c, a);
			break;
		case ED_OP_POLL:
			r = c->pending;
			break;
		case ED_OP_IN_CACHE:
			r = in_cache(ed, c, a);
			break;
		case ED_OP_DROP_CACHE:
			r = drop_cache(ed, c, a);
			break;
		case ED_OP_GET_FREE_MAP:
			r = get_free_map(ed, a);
			break;
		case ED_OP_SHUTDOWN:
			r = shutdown(ed, c, a);
			break;
		case ED_OP_FLUSH:
			r = flush(ed, c, a);
			break;
		case ED_OP_UNIT_INFO:
			r = unit_info(ed, c, a);
			break;
		case ED_OP_CHECKPOINT:
			r = checkpoint(ed, c, a);
			break;
		default:
			r = ED_E_OP;
			break;
		}
	}
	return r;
}

int ed_block(struct exodisk *ed)
{
	ed_unlock(ed);
	int stop = 0;
	if (ed->env.sleep != NULL)
		stop = ed->env.sleep(ed->env.ctx);
	else
		ed->env.wait(ed->env.ctx);
	ed_lock(ed);
	return stop;
}

/* A request that needs a page of the binding tree that is not in memory
 * starts reading it and is answered ED_E_WAIT, having changed nothing; it
 * is made again once a page has come in. */
int64_t ed_request(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a)
{
	ed_lock(ed);
	int64_t r;
	for (;;) {
		uint64_t loads = ed->meta_loads;
		r = dispatch(ed, c, op, a);
		if (r != ED_E_WAIT)
			break;
		if (ed->meta_loads != loads)
			continue;          /* it came in already (a synchronous device) */
		int stop = ed_block(ed);
		if (stop != 0) {
			r = stop;
			break;
		}
	}
	ed_unlock(ed);
	return r;
}

/* A binding-tree page came in (or failed to): requests waiting for one try
 * again, and so does the commit log. */
void ed_meta_loaded(struct exodisk *ed, struct ed_disk *d)
{
	ed->meta_loads++;
	if (ed->env.wakeup != NULL)
		ed->env.wakeup(ed->env.ctx);
	ed_commit_kick(ed, d);
	ed_ckpt_progress(ed, d);
}

void ed_idle_wake(struct exodisk *ed)
{
	if (ed->idle_waiters > 0 && ed->env.wakeup != NULL)
		ed->env.wakeup(ed->env.ctx);
}

int ed_unit_info(struct exodisk *ed, int unit, struct ed_client *c, struct ed_unit_info *out)
{
	ed_memset(out, 0, sizeof(*out));
	struct ed_disk *d = unit >= 0 && unit < BLK_MAX_UNITS ? ed->disk[unit] : NULL;
	if (d == NULL || !d->mounted)
		return ED_E_UNIT;
	out->nsectors = d->nsectors;
	out->data_start = d->data_start;
	out->allocated = d->fm.count;
	out->reserved = ED_MIN(ed_fm_reserve(d), ed_fm_free_sectors(d));
	out->meta_sectors = d->data_start + d->meta_pages * ED_SECT_PER_PAGE;
	out->bindings = d->bt_count;
	out->log_sectors = d->sb.log_len;
	out->log_used = d->log_used;
	out->cache_entries = ed->cfg.cache_entries;
	for (uint32_t i = 0; i < ed->cfg.cache_entries; i++) {
		struct ed_entry *e = ed_cache_ent(ed, i);
		out->cache_free += e->kind == 0;
		out->cache_dirty += e->kind != 0 && (e->flags & EF_DIRTY) != 0;
	}
	out->client_quota = ed->cfg.client_quota;
	out->client_held = c != NULL ? c->nheld : 0;
	out->kmem_bytes = d->mem_pages * ED_PAGE;
	out->fm_bytes = ed_bm_nleaves(&d->fm) * ED_PAGE;
	out->fm_addr = UFREEMAP(unit);
	out->mount_reads = d->st_mount_reads;
	out->replayed = d->st_replayed;
	out->carried = d->st_carried;
	out->unw_zeroed = d->st_unw_zeroed;
	out->unw_zero_ckpts = d->st_unw_zero_ckpts;
	out->unw_records = d->st_unw_records;
	out->checkpoints = d->st_ckpts;
	out->ckpt_sectors = d->st_ckpt_sectors;
	out->ckpt_last = d->st_ckpt_last;
	out->commits = d->st_commits;
	out->records = d->st_records;
	out->meta_reads = d->st_meta_reads;
	out->meta_resident = d->bt_resident;
	out->format_sectors = ed->st_formatted[unit];
	if (d->lost.later > 0) {
		out->lost_seq = d->lost.seq;
		out->lost_at = d->lost.at;
		out->lost_records = d->lost.last_seq - d->lost.seq + 1;
		out->lost_blocks = d->lost.blocks;
	}
	if (d->fell.fell) {
		out->fell = 1;
		out->fell_sb = d->fell.sb;
		out->fell_at = d->fell.at;
		out->fell_gen = d->fell.gen;
		out->fell_used_gen = d->fell.used_gen;
		out->fell_lost = d->fell.lost;
		out->fell_io = d->fell.io;
	}
	return 0;
}

uint64_t ed_format_sectors(struct exodisk *ed)
{
	return ed->st_format_sectors;
}

uint64_t ed_bad_sector(struct exodisk *ed)
{
	return ed->bad_sector;
}

uint32_t ed_freemap_npages(struct exodisk *ed, int unit)
{
	if (unit < 0 || unit >= BLK_MAX_UNITS || ed->disk[unit] == NULL)
		return 0;
	return (uint32_t)ed_bm_nleaves(&ed->disk[unit]->fm);
}

void *ed_freemap_page(struct exodisk *ed, int unit, uint32_t i)
{
	if (i >= ed_freemap_npages(ed, unit))
		return NULL;
	return ed_fm_export_page(ed, ed->disk[unit], i);
}
