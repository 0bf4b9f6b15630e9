/*
 * blkqueue.c - the block layer: disk units, request checking, the per-unit
 * C-LOOK (or FIFO) queue, flush barriers, and the exported queue page.
 *
 * Users call blk_submit(); the request is checked, then waits in its unit's
 * queue until the unit has fewer than `depth` requests in the device, when
 * the scheduling policy picks the next one and the driver's start() gets it.
 * The driver calls blk_complete(), which runs the request's done() callback
 * and refills the device.  Keeping the device's share small (2 by default)
 * is what makes the ordering real: with everything handed to the device at
 * once, the queue would order nothing.
 *
 * A FLUSH is a full barrier.  Requests that arrived before it are served (in
 * policy order) and completed before it starts; requests that arrive after it
 * wait in the unit's `held` list, in arrival order, until it completes.  This
 * is what a driver needs for durability: a virtio FLUSH covers only writes
 * the device has already completed.
 *
 * Portable code: no allocation (requests are owned by their submitters and
 * linked through r->next), no locking (the kernel calls in with interrupts
 * off on one hart), no printing.  See docs/blocklayer.md.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "drivers/blk.h"

_Static_assert(BLK_READ == BLKX_OP_READ && BLK_WRITE == BLKX_OP_WRITE &&
               BLK_FLUSH == BLKX_OP_FLUSH, "exported op codes equal enum blk_op");
_Static_assert(BLK_MAX_SECTORS <= 0xffff, "an exported length fits in 16 bits");

struct unit {
	bool used;
	const struct blkdev_ops *ops;
	void *dev;
	struct blkdev_info info;
	uint32_t depth;           /* most requests handed to the device at once        */
	int sched;                /* BLK_SCHED_*                                       */

	/* Requests the policy may choose from now, kept in policy order:
	 * (sector, seq) for C-LOOK, seq for FIFO. */
	struct blkreq *ready;
	uint32_t nready;
	/* Requests behind a FLUSH barrier, in arrival order.  Unless a FLUSH is
	 * in flight, the first one here is the FLUSH that holds the rest back. */
	struct blkreq *held, *held_tail;
	uint32_t nheld;
	bool flush_inflight;

	/* What the device is working on, in dispatch order. */
	struct blkreq *inflight[BLK_MAX_DEPTH];
	uint32_t ninflight;

	uint64_t head;            /* sector just past the last dispatched transfer */
	uint64_t seq;             /* arrival counter */
	uint64_t ncompleted;
	uint32_t hiwater;         /* most requests ever in the device at once */

	/* Guards against recursion: a synchronous device completes inside
	 * start(), and done() may submit again; the outer dispatch loop then
	 * picks up the work instead of a nested one. */
	bool dispatching, again;

	struct blk_export *xp;    /* exported page, or NULL */
};

static struct unit units[BLK_MAX_UNITS];
static int nunits;
static void (*submit_hook)(const struct blkreq *r);

static struct unit *unit_of(int32_t n)
{
	if (n < 0 || n >= nunits || !units[n].used)
		return NULL;
	return &units[n];
}

/* ---- checking ---------------------------------------------------------- */

static int check_data_request(const struct unit *u, const struct blkreq *r)
{
	if (r->nsectors == 0)
		return BLK_E_LEN;
	if (r->nsectors > BLK_MAX_SECTORS)
		return BLK_E_TOOBIG;
	if (r->nseg == 0 || r->seg == NULL)
		return BLK_E_ALIGN;
	if (r->nseg > BLK_MAX_SEGS)
		return BLK_E_TOOBIG;

	/* Segments may have any non-zero byte length (application pages need
	 * not be sector aligned), but together they must be the transfer. */
	uint64_t total = 0;
	for (uint32_t i = 0; i < r->nseg; i++) {
		if (r->seg[i].len == 0 || r->seg[i].addr == 0)
			return BLK_E_ALIGN;
		total += r->seg[i].len;
	}
	if (total % BLK_SECTOR_SIZE != 0)
		return BLK_E_LEN;
	if (total != (uint64_t)r->nsectors * BLK_SECTOR_SIZE)
		return BLK_E_ALIGN;

	/* Written so that a huge r->sector cannot wrap around. */
	uint64_t cap = u->info.nsectors;
	if (r->sector >= cap || r->nsectors > cap - r->sector)
		return BLK_E_RANGE;

	/* A device with blocks larger than a sector (a virtio disk with a 4 KiB
	 * logical block) cannot transfer part of one. */
	uint32_t per_block = u->info.blksize > BLK_SECTOR_SIZE ? u->info.blksize / BLK_SECTOR_SIZE : 1;
	if (r->sector % per_block != 0 || r->nsectors % per_block != 0)
		return BLK_E_ALIGN;
	return 0;
}

int blk_validate(const struct blkreq *r)
{
	if (r == NULL || r->done == NULL)
		return BLK_E_INVAL;
	const struct unit *u = unit_of(r->unit);
	if (u == NULL)
		return BLK_E_UNIT;
	if (r->op != BLK_READ && r->op != BLK_WRITE && r->op != BLK_FLUSH)
		return BLK_E_OP;
	if ((r->flags & ~BLK_F_FUA) != 0 || ((r->flags & BLK_F_FUA) && r->op != BLK_WRITE))
		return BLK_E_OP;
	if (r->op == BLK_FLUSH)
		return (r->nsectors != 0 || r->nseg != 0) ? BLK_E_LEN : 0;
	return check_data_request(u, r);
}

/* ---- the queue --------------------------------------------------------- */

/* Does a come before b in the unit's ready list? */
static bool before(const struct unit *u, const struct blkreq *a, const struct blkreq *b)
{
	if (u->sched == BLK_SCHED_CLOOK && a->sector != b->sector)
		return a->sector < b->sector;
	return a->seq < b->seq;
}

static void ready_insert(struct unit *u, struct blkreq *r)
{
	struct blkreq **pp = &u->ready;
	while (*pp != NULL && !before(u, r, *pp))
		pp = &(*pp)->next;
	r->next = *pp;
	*pp = r;
	u->nready++;
}

static void held_append(struct unit *u, struct blkreq *r)
{
	r->next = NULL;
	if (u->held_tail != NULL)
		u->held_tail->next = r;
	else
		u->held = r;
	u->held_tail = r;
	u->nheld++;
}

static struct blkreq *held_pop(struct unit *u)
{
	struct blkreq *r = u->held;
	u->held = r->next;
	if (u->held == NULL)
		u->held_tail = NULL;
	u->nheld--;
	r->next = NULL;
	return r;
}

/* A FLUSH finished: let the requests that arrived behind it (up to the next
 * FLUSH) into the ready list. */
static void release_held(struct unit *u)
{
	while (u->held != NULL && u->held->op != BLK_FLUSH)
		ready_insert(u, held_pop(u));
}

/* For C-LOOK: the first ready request at or past the head, or, when the
 * sweep has passed them all, the lowest one (the wrap).  For FIFO: the
 * oldest.  Returns the link that points at it. */
static struct blkreq **ready_pick(struct unit *u)
{
	if (u->sched == BLK_SCHED_CLOOK) {
		for (struct blkreq **pp = &u->ready; *pp != NULL; pp = &(*pp)->next)
			if ((*pp)->sector >= u->head)
				return pp;
	}
	return &u->ready;
}

/* Take the next request the device may have, or NULL. */
static struct blkreq *take_next(struct unit *u)
{
	if (u->flush_inflight || u->ninflight >= u->depth)
		return NULL;
	struct blkreq *r;
	if (u->ready != NULL) {
		struct blkreq **pp = ready_pick(u);
		r = *pp;
		*pp = r->next;
		u->nready--;
	} else if (u->held != NULL && u->ninflight == 0) {
		/* Everything before the barrier has completed. */
		r = held_pop(u);
		u->flush_inflight = true;
	} else {
		return NULL;
	}
	r->next = NULL;
	if (r->op != BLK_FLUSH)
		u->head = r->sector + r->nsectors;
	u->inflight[u->ninflight++] = r;
	if (u->ninflight > u->hiwater)
		u->hiwater = u->ninflight;
	return r;
}

static bool inflight_remove(struct unit *u, struct blkreq *r)
{
	for (uint32_t i = 0; i < u->ninflight; i++) {
		if (u->inflight[i] == r) {
			for (uint32_t j = i + 1; j < u->ninflight; j++)
				u->inflight[j - 1] = u->inflight[j];
			u->ninflight--;
			return true;
		}
	}
	return false;
}

/* ---- the exported page ------------------------------------------------- */

static void export_ent(struct blk_export *x, const struct blkreq *r, uint8_t flags)
{
	if (x->nent >= BLKX_NENT)
		return;
	struct blk_export_ent *e = &x->ent[x->nent++];
	e->sector = r->sector;
	e->seq = (uint32_t)r->seq;
	e->nsectors = (uint16_t)r->nsectors;
	e->op = r->op;
	e->flags = flags | ((r->flags & BLK_F_FUA) ? BLKX_F_FUA : 0);
}

/* Rewrite the unit's page: header, in-flight requests, then the queue in the
 * order it would be served if nothing else arrived. */
static void publish(struct unit *u, int n)
{
	struct blk_export *x = u->xp;
	if (x == NULL)
		return;
	uint64_t g = x->gen | 1;      /* odd: update in progress */
	__atomic_store_n(&x->gen, g, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);

	x->magic = BLKX_MAGIC;
	x->version = BLKX_VERSION;
	x->unit = (uint8_t)n;
	x->sched = (uint8_t)u->sched;
	x->head = u->head;
	x->capacity = u->info.nsectors;
	x->nsubmitted = u->seq;
	x->ncompleted = u->ncompleted;
	x->ninflight = u->ninflight;
	x->nqueued = u->nready + u->nheld;
	x->depth = u->depth;
	x->nent = 0;
	for (uint32_t i = 0; i < u->ninflight; i++)
		export_ent(x, u->inflight[i], BLKX_F_INFLIGHT);
	/* C-LOOK: from the pick point to the end, then the wrapped part. */
	struct blkreq **start = ready_pick(u);
	for (struct blkreq *r = *start; r != NULL; r = r->next)
		export_ent(x, r, 0);
	for (struct blkreq *r = u->ready; r != *start; r = r->next)
		export_ent(x, r, 0);
	for (struct blkreq *r = u->held; r != NULL; r = r->next)
		export_ent(x, r, BLKX_F_BARRIER);

	__atomic_store_n(&x->gen, g + 1, __ATOMIC_RELEASE);
}

/* ---- dispatch and completion ------------------------------------------- */

static void finish(struct unit *u, struct blkreq *r, int status);

static void dispatch(struct unit *u)
{
	if (u->dispatching) {
		u->again = true;
		return;
	}
	u->dispatching = true;
	do {
		u->again = false;
		struct blkreq *r;
		while ((r = take_next(u)) != NULL) {
			int e = u->ops->start(u->dev, r);
			/* A refusing driver has not completed r; the block layer does. */
			if (e != 0 && inflight_remove(u, r))
				finish(u, r, e < 0 ? e : BLK_E_IO);
		}
	} while (u->again);
	u->dispatching = false;
}

/* r has left the device: account for it and tell its submitter. */
static void finish(struct unit *u, struct blkreq *r, int status)
{
	if (r->op == BLK_FLUSH) {
		u->flush_inflight = false;
		release_held(u);
	}
	u->ncompleted++;
	r->next = NULL;
	r->status = status;
	r->done(r);
}

int blk_submit(struct blkreq *r)
{
	int e = blk_validate(r);
	if (e != 0)
		return e;
	struct unit *u = &units[r->unit];
	if (u->nready + u->nheld + u->ninflight >= BLK_QUEUE_MAX)
		return BLK_E_QFULL;

	r->status = 0;
	r->seq = ++u->seq;
	if (submit_hook != NULL)
		submit_hook(r);
	if (r->op != BLK_FLUSH && u->held == NULL && !u->flush_inflight)
		ready_insert(u, r);
	else
		held_append(u, r);
	dispatch(u);
	publish(u, r->unit);
	return 0;
}

void blk_complete(struct blkreq *r, int status)
{
	if (r == NULL)
		return;
	struct unit *u = unit_of(r->unit);
	/* A request the device does not hold (a driver completing twice) is
	 * ignored, so done() runs exactly once. */
	if (u == NULL || !inflight_remove(u, r))
		return;
	int32_t n = r->unit;      /* r may be reused by done() */
	finish(u, r, status > 0 ? BLK_E_IO : status);
	dispatch(u);
	publish(u, n);
}

void blk_poll(void)
{
	for (int n = 0; n < nunits; n++)
		if (units[n].used && units[n].ops->poll != NULL)
			units[n].ops->poll(units[n].dev);
}

/* ---- units ------------------------------------------------------------- */

int blk_register(const struct blkdev_ops *ops, void *dev, const struct blkdev_info *info)
{
	if (ops == NULL || ops->start == NULL || info == NULL ||
	    info->nsectors == 0 || info->max_inflight == 0 ||
	    (info->blksize != 0 && (info->blksize < BLK_SECTOR_SIZE ||
	                            (info->blksize & (info->blksize - 1)) != 0)))
		return BLK_E_INVAL;
	if (nunits >= BLK_MAX_UNITS)
		return BLK_E_UNIT;
	int n = nunits++;
	struct unit *u = &units[n];
	__builtin_memset(u, 0, sizeof(*u));
	u->used = true;
	u->ops = ops;
	u->dev = dev;
	u->info = *info;
	u->sched = BLK_SCHED_CLOOK;
	u->depth = 0;
	blk_set_depth(n, BLK_DEPTH_DEFAULT);
	return n;
}

int blk_set_depth(int unit, uint32_t depth)
{
	struct unit *u = unit_of(unit);
	if (u == NULL)
		return BLK_E_UNIT;
	if (depth == 0)
		return BLK_E_INVAL;
	uint32_t max = u->info.max_inflight < BLK_MAX_DEPTH ? u->info.max_inflight : BLK_MAX_DEPTH;
	u->depth = depth < max ? depth : max;
	/* A deeper device can take more now; a shallower one drains first. */
	dispatch(u);
	publish(u, unit);
	return (int)u->depth;
}

int blk_set_sched(int unit, int sched)
{
	struct unit *u = unit_of(unit);
	if (u == NULL)
		return BLK_E_UNIT;
	if (sched != BLK_SCHED_CLOOK && sched != BLK_SCHED_FIFO)
		return BLK_E_INVAL;
	u->sched = sched;
	/* Re-sort what is waiting under the new order. */
	struct blkreq *r = u->ready;
	u->ready = NULL;
	u->nready = 0;
	while (r != NULL) {
		struct blkreq *next = r->next;
		ready_insert(u, r);
		r = next;
	}
	publish(u, unit);
	return 0;
}

int blk_export_attach(int unit, struct blk_export *page)
{
	struct unit *u = unit_of(unit);
	if (u == NULL)
		return BLK_E_UNIT;
	if (page != NULL)
		__builtin_memset(page, 0, sizeof(*page));
	u->xp = page;
	publish(u, unit);
	return 0;
}

void blk_set_submit_hook(void (*fn)(const struct blkreq *r))
{
	submit_hook = fn;
}

int blk_nunits(void)
{
	return nunits;
}

uint64_t blk_capacity(int unit)
{
	struct unit *u = unit_of(unit);
	return u != NULL ? u->info.nsectors : 0;
}

int blk_stat(int unit, struct blk_unit_stat *st)
{
	struct unit *u = unit_of(unit);
	if (u == NULL)
		return BLK_E_UNIT;
	st->info = u->info;
	st->depth = u->depth;
	st->sched = u->sched;
	st->hiwater = u->hiwater;
	st->nsubmitted = u->seq;
	st->ncompleted = u->ncompleted;
	return 0;
}

void blk_reset(void)
{
	__builtin_memset(units, 0, sizeof(units));
	nunits = 0;
}
