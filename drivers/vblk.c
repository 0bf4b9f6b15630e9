/*
 * vblk.c - the virtio-blk request engine (see vblk.h).
 *
 * start() files a block request on a waiting list and pump() offers chains
 * for waiting requests until the ring is full.  Each chain is one "slot": a
 * header, the data buffers and a status byte.  A request whose data needs
 * more buffers than one chain may carry is cut at a logical-block boundary
 * and offered as several chains; it completes when the last one does, with
 * the first error any of them reported.  After an error the rest of the
 * request is not offered at all.
 *
 * Durability: the device may hold completed writes in a volatile cache
 * (VIRTIO_BLK_F_FLUSH offered).  A FLUSH request becomes VIRTIO_BLK_T_FLUSH,
 * which covers every write the device has completed; the block layer makes
 * sure those are all the writes that came before it.  A FUA write is written
 * and then flushed before it completes.  A device without the flush feature
 * has no volatile cache (virtio 1.x, 5.2.5.1), so a FLUSH is done at once.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "drivers/virtqueue.h"
#include "drivers/vblk.h"

_Static_assert(sizeof(struct vblk_hdr) == 16, "virtio-blk request header is 16 bytes");

static int status_to_error(uint8_t s)
{
	switch (s) {
	case VIRTIO_BLK_S_OK:     return 0;
	case VIRTIO_BLK_S_UNSUPP: return BLK_E_UNSUPP;
	default:                  return BLK_E_IO;     /* IOERR, or nonsense */
	}
}

/* ---- lists ------------------------------------------------------------- */

static void wait_append(struct vblk *vb, struct vblk_req *q)
{
	q->next = NULL;
	if (vb->wait_tail != NULL)
		vb->wait_tail->next = q;
	else
		vb->wait = q;
	vb->wait_tail = q;
}

static void wait_pop(struct vblk *vb)
{
	struct vblk_req *q = vb->wait;
	vb->wait = q->next;
	if (vb->wait == NULL)
		vb->wait_tail = NULL;
	q->next = NULL;
}

static bool is_waiting(const struct vblk *vb, const struct vblk_req *q)
{
	for (const struct vblk_req *w = vb->wait; w != NULL; w = w->next)
		if (w == q)
			return true;
	return false;
}

static void wait_remove(struct vblk *vb, struct vblk_req *q)
{
	struct vblk_req **pp = &vb->wait, *prev = NULL;
	while (*pp != NULL && *pp != q) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (*pp == NULL)
		return;
	*pp = q->next;
	if (vb->wait_tail == q)
		vb->wait_tail = prev;
	q->next = NULL;
}

/* Hand the request back to the block layer. */
static void finish(struct vblk *vb, struct vblk_req *q)
{
	struct blkreq *r = q->r;
	int status = q->status;
	q->r = NULL;
	q->next = vb->free_reqs;
	vb->free_reqs = q;
	blk_complete(r, status);
}

/* ---- building chains --------------------------------------------------- */

/*
 * The data buffers of q's next chain, into vb->buf[1..]: pieces of the
 * request's segments, each at most size_max bytes, at most max_data of them,
 * cut back so the chain carries whole logical blocks.  Returns the bytes, or
 * 0 if not even one block fits in max_data buffers (a request whose segments
 * are that fragmented cannot be expressed to this device).
 */
static uint64_t plan_data(struct vblk *vb, const struct vblk_req *q, uint32_t *ndata)
{
	const struct blkreq *r = q->r;
	uint64_t want = (uint64_t)q->left * BLK_SECTOR_SIZE;
	uint64_t bytes = 0;
	uint32_t n = 0, seg = q->seg, off = q->off;
	bool dev_writes = r->op == BLK_READ;

	while (bytes < want && n < vb->max_data) {
		uint64_t piece = r->seg[seg].len - off;
		if (vb->lim.size_max != 0 && piece > vb->lim.size_max)
			piece = vb->lim.size_max;
		if (piece > want - bytes)
			piece = want - bytes;
		vb->buf[1 + n] = (struct vq_buf){ r->seg[seg].addr + off, (uint32_t)piece, dev_writes };
		n++;
		bytes += piece;
		off += (uint32_t)piece;
		if (off == r->seg[seg].len) {
			seg++;
			off = 0;
		}
	}
	/* Stopped for lack of buffers in the middle of a block: give back the tail. */
	uint64_t rem = bytes % vb->lim.blk_size;
	while (rem > 0 && n > 0) {
		struct vq_buf *last = &vb->buf[n];
		if (last->len <= rem) {
			rem -= last->len;
			bytes -= last->len;
			n--;
		} else {
			last->len -= (uint32_t)rem;
			bytes -= rem;
			rem = 0;
		}
	}
	*ndata = n;
	return n > 0 ? bytes : 0;
}

/* Move q's data cursor past nbytes. */
static void advance(struct vblk_req *q, uint64_t nbytes)
{
	const struct blkreq *r = q->r;
	while (nbytes > 0) {
		uint64_t here = r->seg[q->seg].len - q->off;
		if (here > nbytes) {
			q->off += (uint32_t)nbytes;
			return;
		}
		nbytes -= here;
		q->seg++;
		q->off = 0;
	}
}

/* Offer chains for waiting requests while the ring has room. */
static void pump(struct vblk *vb)
{
	bool added = false;
	struct vblk_req *failed = NULL;    /* completed after the loop, not inside it */

	while (vb->wait != NULL) {
		struct vblk_req *q = vb->wait;
		struct vblk_slot *s = vb->free_slots;
		if (s == NULL) {
			vb->stats.deferred++;
			break;
		}
		uint32_t ndata = 0;
		uint64_t nbytes = 0;
		if (q->flushing) {
			s->hdr = (struct vblk_hdr){ VIRTIO_BLK_T_FLUSH, 0, 0 };
		} else {
			nbytes = plan_data(vb, q, &ndata);
			if (nbytes == 0) {
				q->status = BLK_E_TOOBIG;
				wait_pop(vb);
				if (q->parts == 0) {
					q->next = failed;
					failed = q;
				}
				continue;
			}
			uint32_t type = q->r->op == BLK_READ ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT;
			s->hdr = (struct vblk_hdr){ type, 0, q->sector };
		}
		/* A status the device never wrote must not read as success. */
		s->status = 0xff;
		vb->buf[0] = (struct vq_buf){ (uint64_t)(uintptr_t)&s->hdr, sizeof(s->hdr), false };
		vb->buf[1 + ndata] = (struct vq_buf){ (uint64_t)(uintptr_t)&s->status, 1, true };
		int e = vq_add(vb->vq, vb->buf, ndata + 2, s);
		if (e == VQ_E_FULL) {
			vb->stats.deferred++;
			break;
		}
		if (e != 0) {          /* cannot happen: max_data respects the chain limit */
			q->status = BLK_E_TOOBIG;
			wait_pop(vb);
			if (q->parts == 0) {
				q->next = failed;
				failed = q;
			}
			continue;
		}
		vb->free_slots = s->next_free;
		s->req = q;
		s->nbytes = (uint32_t)nbytes;
		q->parts++;
		vb->stats.chains++;
		added = true;
		if (q->flushing) {
			wait_pop(vb);
		} else {
			if (nbytes < (uint64_t)q->left * BLK_SECTOR_SIZE && q->sector == q->r->sector)
				vb->stats.split++;
			advance(q, nbytes);
			q->sector += nbytes / BLK_SECTOR_SIZE;
			q->left -= (uint32_t)(nbytes / BLK_SECTOR_SIZE);
			if (q->left == 0)
				wait_pop(vb);
		}
	}
	if (added) {
		if (vb->vq->nchains > vb->stats.hiwater)
			vb->stats.hiwater = vb->vq->nchains;
		if (vq_publish(vb->vq)) {
			vb->stats.notifies++;
			vb->notify(vb->notify_arg);
		}
	}
	while (failed != NULL) {
		struct vblk_req *q = failed;
		failed = q->next;
		finish(vb, q);
	}
}

/* ---- block-layer interface ---------------------------------------------- */

static int vblk_start(void *dev, struct blkreq *r)
{
	struct vblk *vb = dev;
	if (r->op == BLK_WRITE && vb->lim.ro)
		return BLK_E_UNSUPP;
	if (r->op == BLK_FLUSH && !vb->lim.flush) {
		blk_complete(r, 0);            /* write-through device: nothing to flush */
		return 0;
	}
	struct vblk_req *q = vb->free_reqs;
	if (q == NULL)
		return BLK_E_QFULL;            /* cannot happen: max_inflight is VBLK_MAX_REQS */
	vb->free_reqs = q->next;
	*q = (struct vblk_req){ .r = r, .sector = r->sector, .left = r->nsectors,
	                        .flushing = r->op == BLK_FLUSH };
	wait_append(vb, q);
	pump(vb);
	return 0;
}

void vblk_reap(struct vblk *vb)
{
	struct vblk_slot *s;
	uint32_t len;
	while ((s = vq_get(vb->vq, &len)) != NULL) {
		struct vblk_req *q = s->req;
		int e = status_to_error(s->status);
		/* The device reports how much it wrote: the data of a read plus
		 * the status byte.  Anything short means the data (or the status)
		 * cannot be trusted. */
		uint64_t need = 1 + (s->hdr.type == VIRTIO_BLK_T_IN ? s->nbytes : 0);
		if (e == 0 && len < need)
			e = BLK_E_IO;
		s->req = NULL;
		s->next_free = vb->free_slots;
		vb->free_slots = s;

		q->parts--;
		if (e != 0 && q->status == 0)
			q->status = e;
		if (q->status != 0 && is_waiting(vb, q)) {
			wait_remove(vb, q);        /* an error: offer no more of it */
			q->left = 0;
		}
		if (q->parts > 0 || is_waiting(vb, q))
			continue;
		if (q->status == 0 && !q->flushing && (q->r->flags & BLK_F_FUA) && vb->lim.flush) {
			q->flushing = true;        /* the FUA write is done; now make it durable */
			wait_append(vb, q);
			continue;
		}
		finish(vb, q);
	}
	pump(vb);
}

static void vblk_poll(void *dev)
{
	vblk_reap(dev);
}

static const struct blkdev_ops vblk_ops = {
	.start = vblk_start,
	.poll = vblk_poll,
};

int vblk_attach(struct vblk *vb, struct virtq *vq, const struct vblk_limits *lim,
                void (*notify)(void *), void *notify_arg)
{
	if (vq == NULL || lim == NULL || notify == NULL || lim->capacity == 0 ||
	    vq->nchains != 0 || vq_max_chain(vq) < 3)
		return BLK_E_INVAL;
	__builtin_memset(vb, 0, sizeof(*vb));
	vb->vq = vq;
	vb->lim = *lim;
	/* A block size that is not a power of two in [512, 64 KiB] is nonsense:
	 * fall back to the protocol's unit. */
	uint32_t bs = lim->blk_size;
	if (bs < BLK_SECTOR_SIZE || bs > 65536 || (bs & (bs - 1)) != 0)
		vb->lim.blk_size = BLK_SECTOR_SIZE;
	vb->notify = notify;
	vb->notify_arg = notify_arg;
	vb->max_data = vq_max_chain(vq) - 2;
	if (lim->seg_max != 0 && lim->seg_max < vb->max_data)
		vb->max_data = lim->seg_max;
	for (int i = VQ_MAX_SIZE - 1; i >= 0; i--) {
		if (i < vq->size) {
			vb->slot[i].next_free = vb->free_slots;
			vb->free_slots = &vb->slot[i];
		}
	}
	for (int i = VBLK_MAX_REQS - 1; i >= 0; i--) {
		vb->req[i].next = vb->free_reqs;
		vb->free_reqs = &vb->req[i];
	}
	vb->info.nsectors = lim->capacity;
	vb->info.max_inflight = VBLK_MAX_REQS;
	vb->info.blksize = vb->lim.blk_size;
	vb->info.name = "virtio-blk";
	vb->unit = blk_register(&vblk_ops, vb, &vb->info);
	return vb->unit;
}
