/*
 * vscsi.c - the virtio-scsi request engine (see vscsi.h).
 *
 * queue() files a command at the end of a waiting list and pump() offers
 * chains for waiting commands, in order, while the ring has room; reap()
 * turns used chains back into answers for the SCSI layer.  The SCSI layer
 * has already cut every command to the buffer count this engine announced
 * (host.max_segs), so a chain is always one command.
 *
 * The response area is filled with an invalid response code before a chain
 * is offered, and a chain whose used length does not cover the response is
 * treated as a transport failure: the spec lets the driver trust only what
 * the device says it wrote.  Fields are little-endian (VIRTIO_F_VERSION_1).
 */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "drivers/vscsi.h"
#include "drivers/scsi.h"
#include "drivers/virtqueue.h"

#define RESPONSE_UNSET 0xff

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

void vscsi_lun_bytes(uint8_t out[8], uint16_t target, uint32_t lun)
{
	/* Byte 0 is 1; byte 1 the target; bytes 2-3 the LUN in the flat space
	 * addressing method (SAM: 01b in the top bits); the rest zero. */
	out[0] = 1;
	out[1] = (uint8_t)target;
	out[2] = (uint8_t)(0x40 | ((lun >> 8) & 0x3f));
	out[3] = (uint8_t)lun;
	for (int i = 4; i < 8; i++)
		out[i] = 0;
}

/* The device's LUN address back to target and LUN (for events). */
static void lun_from_bytes(const uint8_t *b, uint16_t *target, uint32_t *lun)
{
	*target = b[1];
	*lun = (uint32_t)(b[2] & 0x3f) << 8 | b[3];
}

static uint8_t host_status(uint8_t response)
{
	switch (response) {
	case VSCSI_S_OK:                return SCSI_HOST_OK;
	case VSCSI_S_OVERRUN:           return SCSI_HOST_OVERRUN;
	case VSCSI_S_ABORTED:           return SCSI_HOST_ABORTED;
	case VSCSI_S_BAD_TARGET:        return SCSI_HOST_NO_TARGET;
	case VSCSI_S_RESET:             return SCSI_HOST_RESET;
	case VSCSI_S_BUSY:              return SCSI_HOST_BUSY;
	case VSCSI_S_TRANSPORT_FAILURE: return SCSI_HOST_TRANSPORT;
	default:                        return SCSI_HOST_FAILED;   /* TARGET/NEXUS_FAILURE, FAILURE, nonsense */
	}
}

/* ---- offering chains ------------------------------------------------------ */

/* The command's data as chain buffers at vb[0..): nbytes from seg[0] + seg_off. */
static uint32_t data_bufs(const struct scsi_cmd *c, struct vq_buf *vb, bool dev_writes)
{
	uint32_t n = 0, left = c->nbytes, off = c->seg_off;
	for (uint16_t i = 0; left > 0 && i < c->nseg; i++) {
		uint32_t len = c->seg[i].len - off;
		if (len > left)
			len = left;
		vb[n++] = (struct vq_buf){ c->seg[i].addr + off, len, dev_writes };
		left -= len;
		off = 0;
	}
	return left == 0 ? n : 0;
}

static void finish_failed(struct scsi_cmd *c, uint8_t hs)
{
	c->host_status = hs;
	c->status = 0;
	c->sense_len = 0;
	c->resid = c->nbytes;
	c->done(c);
}

static void pump(struct vscsi *v)
{
	bool added = false;
	while (v->wait != NULL) {
		struct scsi_cmd *c = v->wait;
		struct vscsi_slot *s = v->free_slots;
		if (s == NULL) {
			v->stats.deferred++;
			break;
		}
		/* Request header. */
		for (uint32_t i = 0; i < v->hdr_bytes; i++)
			s->hdr[i] = 0;
		vscsi_lun_bytes(s->hdr, c->target, c->lun);
		put_le64(s->hdr + 8, (uint64_t)(s - v->slot));    /* tag: the slot */
		/* task_attr 0 (SIMPLE), prio 0, crn 0 */
		for (uint32_t i = 0; i < c->cdb_len && i < v->lim.cdb_size; i++)
			s->hdr[VSCSI_REQ_FIXED + i] = c->cdb[i];
		s->resp[11] = RESPONSE_UNSET;

		uint32_t n = 0, nd = 0;
		v->buf[n++] = (struct vq_buf){ (uint64_t)(uintptr_t)s->hdr, v->hdr_bytes, false };
		if (c->dir == SCSI_DIR_OUT && c->nbytes > 0) {
			nd = data_bufs(c, v->buf + n, false);
			n += nd;
		}
		v->buf[n++] = (struct vq_buf){ (uint64_t)(uintptr_t)s->resp, v->resp_bytes, true };
		if (c->dir == SCSI_DIR_IN && c->nbytes > 0) {
			nd = data_bufs(c, v->buf + n, true);
			n += nd;
		}
		bool bad = c->nbytes > 0 && c->dir != SCSI_DIR_NONE && nd == 0;
		int e = bad ? VQ_E_INVAL : vq_add(v->vq, v->buf, n, s);
		if (e == VQ_E_FULL) {
			v->stats.deferred++;
			break;
		}
		v->wait = c->next;
		if (v->wait == NULL)
			v->wait_tail = NULL;
		c->next = NULL;
		if (e != 0) {
			/* More buffers than a chain may have: the SCSI layer never asks
			 * for that (max_segs), so this is a bug above, reported as such. */
			finish_failed(c, SCSI_HOST_FAILED);
			continue;
		}
		v->free_slots = s->next_free;
		s->c = c;
		v->stats.commands++;
		added = true;
	}
	if (added) {
		if (v->vq->nchains > v->stats.hiwater)
			v->stats.hiwater = v->vq->nchains;
		if (vq_publish(v->vq)) {
			v->stats.notifies++;
			v->notify(v->notify_arg, VSCSI_Q_REQUEST);
		}
	}
}

static void vs_queue(struct scsi_host *h, struct scsi_cmd *c)
{
	struct vscsi *v = (struct vscsi *)h;
	c->next = NULL;
	if (v->wait_tail != NULL)
		v->wait_tail->next = c;
	else
		v->wait = c;
	v->wait_tail = c;
	pump(v);
}

/* ---- answers ---------------------------------------------------------------- */

static void answer(struct vscsi *v, struct vscsi_slot *s, uint32_t used)
{
	struct scsi_cmd *c = s->c;
	const uint8_t *r = s->resp;
	s->c = NULL;
	s->next_free = v->free_slots;
	v->free_slots = s;

	if (used < v->resp_bytes || r[11] == RESPONSE_UNSET) {
		v->stats.bad_responses++;
		finish_failed(c, SCSI_HOST_TRANSPORT);
		return;
	}
	c->host_status = host_status(r[11]);
	c->status = r[10];
	uint32_t resid = le32(r + 4);
	c->resid = resid > c->nbytes ? c->nbytes : resid;
	uint32_t sl = le32(r);
	if (sl > v->lim.sense_size)
		sl = v->lim.sense_size;
	if (sl > SCSI_SENSE_MAX)
		sl = SCSI_SENSE_MAX;
	for (uint32_t i = 0; i < sl; i++)
		c->sense[i] = r[VSCSI_RESP_FIXED + i];
	c->sense_len = (uint8_t)sl;
	/* A read must have had its data written as well: the used length
	 * counts the response and then the data-in bytes. */
	if (c->host_status == SCSI_HOST_OK && c->dir == SCSI_DIR_IN &&
	    used - v->resp_bytes < c->nbytes - c->resid) {
		v->stats.bad_responses++;
		c->host_status = SCSI_HOST_TRANSPORT;
	}
	c->done(c);
}

static void post_event(struct vscsi *v, int i)
{
	struct vq_buf b = { (uint64_t)(uintptr_t)v->events[i], VSCSI_EVENT_BYTES, true };
	for (int k = 0; k < VSCSI_EVENT_BYTES; k++)
		v->events[i][k] = 0;
	/* The token must be non-NULL and name the buffer: its address does. */
	vq_add(v->evq, &b, 1, v->events[i]);
}

static void reap_events(struct vscsi *v)
{
	uint8_t *e;
	uint32_t len;
	bool any = false;
	while ((e = vq_get(v->evq, &len)) != NULL) {
		int i = (int)((e - &v->events[0][0]) / VSCSI_EVENT_BYTES);
		v->stats.events++;
		if (len >= VSCSI_EVENT_BYTES && v->on_event != NULL) {
			uint16_t target;
			uint32_t lun;
			lun_from_bytes(e + 4, &target, &lun);
			v->on_event(v, le32(e), target, lun, le32(e + 12));
		}
		post_event(v, i);
		any = true;
	}
	if (any && vq_publish(v->evq))
		v->notify(v->notify_arg, VSCSI_Q_EVENT);
}

void vscsi_reap(struct vscsi *v)
{
	struct vscsi_slot *s;
	uint32_t len;
	while ((s = vq_get(v->vq, &len)) != NULL)
		answer(v, s, len);
	if (v->evq != NULL)
		reap_events(v);
	pump(v);
}

static void vs_poll(struct scsi_host *h)
{
	vscsi_reap((struct vscsi *)h);
}

static const struct scsi_host_ops vscsi_ops = {
	.queue = vs_queue,
	.poll = vs_poll,
};

int vscsi_init(struct vscsi *v, struct virtq *vq, struct virtq *evq, const struct vscsi_limits *lim,
               void (*notify)(void *, uint32_t), void *notify_arg)
{
	if (vq == NULL || lim == NULL || notify == NULL || vq->nchains != 0 || vq_max_chain(vq) < 3 ||
	    lim->cdb_size < 16 || lim->cdb_size > VSCSI_CDB_MAX ||
	    lim->sense_size < 18 || lim->sense_size > VSCSI_SENSE_MAX)
		return BLK_E_INVAL;
	uint8_t *p = (uint8_t *)v;
	for (size_t i = 0; i < sizeof *v; i++)
		p[i] = 0;
	v->vq = vq;
	v->evq = evq;
	v->notify = notify;
	v->notify_arg = notify_arg;
	v->lim = *lim;
	v->hdr_bytes = VSCSI_REQ_FIXED + lim->cdb_size;
	v->resp_bytes = VSCSI_RESP_FIXED + lim->sense_size;
	for (int i = VQ_MAX_SIZE - 1; i >= 0; i--) {
		if (i < vq->size) {
			v->slot[i].next_free = v->free_slots;
			v->free_slots = &v->slot[i];
		}
	}
	/* Buffers a chain may have: header, response, the rest data. */
	uint32_t max_data = vq_max_chain(vq) - 2;
	if (lim->seg_max != 0 && lim->seg_max < max_data)
		max_data = lim->seg_max;
	uint64_t max_bytes = lim->max_sectors != 0 ? (uint64_t)lim->max_sectors * BLK_SECTOR_SIZE
	                                           : (uint64_t)BLK_MAX_SECTORS * BLK_SECTOR_SIZE;
	if (max_bytes > (uint64_t)BLK_MAX_SECTORS * BLK_SECTOR_SIZE)
		max_bytes = (uint64_t)BLK_MAX_SECTORS * BLK_SECTOR_SIZE;
	struct scsi_host *h = &v->host;
	h->ops = &vscsi_ops;
	h->priv = v;
	h->name = "virtio-scsi";
	h->max_segs = max_data;
	h->max_bytes = (uint32_t)max_bytes;
	h->max_target = lim->max_target;
	h->max_lun = lim->max_lun > 16383 ? 16383 : lim->max_lun;   /* flat addressing's reach */
	h->cmd_per_lun = lim->cmd_per_lun;
	if (evq != NULL) {
		for (int i = 0; i < VSCSI_NEVENTS && i < evq->size; i++)
			post_event(v, i);
		if (vq_publish(evq))
			notify(notify_arg, VSCSI_Q_EVENT);
	}
	return 0;
}
