/*
 * scsi_disk.c - SCSI logical units as block units (see scsi.h): the scan
 * that finds them, the block-layer operations that turn requests into
 * READ(16), WRITE(16) and SYNCHRONIZE CACHE, and the retries scsi_judge()
 * asks for.
 *
 * Each block request owns one struct sd_req, which has at most one command
 * at the target at a time: a request too large for one command (more
 * buffers than the host takes, or more bytes) is cut at block boundaries
 * into pieces sent one after the other; a FUA write on a unit that does not
 * honour FUA is followed by a SYNCHRONIZE CACHE; a unit that asks for START
 * UNIT gets one before the command is sent again.  Requests are independent
 * of each other: the block layer above decides how many run at once and in
 * what order, and a FLUSH waits in the block layer for everything before it.
 *
 * Portable: no allocation (the caller gives the disk structures), no
 * printing (events go to the host's report hook).
 */
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "drivers/scsi.h"
#include "drivers/blk.h"

/* A scan command that gets no answer for this long means the host is dead. */
#define EXEC_TIMEOUT_NS  (30ull * 1000000000ull)
#define EXEC_MAX_SPINS   100000000ull        /* the same, for hosts without a clock */
/* START UNITs one request may send before it gives up on the unit. */
#define SD_MAX_STARTS    3

static void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static void put_be64(uint8_t *p, uint64_t v) { put_be32(p, (uint32_t)(v >> 32)); put_be32(p + 4, (uint32_t)v); }
static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t be64(const uint8_t *p) { return (uint64_t)be32(p) << 32 | be32(p + 4); }

static void zero(void *p, size_t n)
{
	uint8_t *b = p;
	while (n-- > 0)
		*b++ = 0;
}

static void report(struct scsi_host *h, const struct scsi_event *ev)
{
	if (h->report != NULL)
		h->report(h, ev);
}

/* The LBA field of a command, for reports. */
static uint64_t cmd_lba(const struct scsi_cmd *c)
{
	if (c->cdb[0] == SCSI_OP_READ_16 || c->cdb[0] == SCSI_OP_WRITE_16)
		return be64(c->cdb + 2);
	if (c->cdb[0] == SCSI_OP_SYNC_CACHE_10)
		return be32(c->cdb + 2);
	return 0;
}

/* ---- waiting retries --------------------------------------------------- */

static uint64_t host_now(struct scsi_host *h)
{
	return h->clock != NULL ? h->clock(h) : 0;
}

/* Send c again (through c->resend) after delay_ms; at once without a clock. */
static void defer(struct scsi_host *h, struct scsi_cmd *c, uint32_t delay_ms)
{
	if (h->clock == NULL) {
		c->resend(c);
		return;
	}
	c->due = host_now(h) + (uint64_t)delay_ms * 1000000u;
	struct scsi_cmd **pp = &h->deferred;
	while (*pp != NULL && (*pp)->due <= c->due)
		pp = &(*pp)->next;
	c->next = *pp;
	*pp = c;
	if (h->rearm != NULL)
		h->rearm(h);
}

uint64_t scsi_next_event(const struct scsi_host *h)
{
	return h->deferred != NULL ? h->deferred->due : UINT64_MAX;
}

void scsi_advance(struct scsi_host *h, uint64_t now)
{
	bool any = false;
	while (h->deferred != NULL && h->deferred->due <= now) {
		struct scsi_cmd *c = h->deferred;
		h->deferred = c->next;
		c->next = NULL;
		c->resend(c);
		any = true;
	}
	if (any && h->rearm != NULL)
		h->rearm(h);
}

/* ---- the block-layer side ---------------------------------------------- */

static void sd_issue(struct sd_req *q);

static void sd_finish(struct sd_req *q, int error)
{
	struct scsi_disk *sd = q->sd;
	struct blkreq *r = q->r;
	q->r = NULL;
	q->next_free = sd->free_reqs;
	sd->free_reqs = q;
	if (error != 0)
		sd->stats.failed++;
	blk_complete(r, error);
}

/*
 * The next piece of q's data: as many whole blocks as fit in the host's
 * limits from the data cursor on.  Returns its bytes (0 if not even one
 * block fits in max_segs buffers: the request is too fragmented for the
 * host) and the number of segments it touches.
 */
static uint32_t plan_piece(const struct sd_req *q, uint16_t *nseg)
{
	const struct scsi_disk *sd = q->sd;
	const struct blkreq *r = q->r;
	uint64_t want = (uint64_t)q->left * BLK_SECTOR_SIZE;
	if (want > sd->host->max_bytes)
		want = sd->host->max_bytes;
	uint64_t bytes = 0;
	uint32_t n = 0, seg = q->seg, off = q->off;
	while (bytes < want && n < sd->host->max_segs && seg < r->nseg) {
		uint64_t here = r->seg[seg].len - off;
		if (here > want - bytes)
			here = want - bytes;
		bytes += here;
		n++;
		seg++;
		off = 0;
	}
	bytes -= bytes % sd->block_size;       /* whole blocks only */
	*nseg = (uint16_t)n;
	return (uint32_t)bytes;
}

static void sd_cmd_done(struct scsi_cmd *c);

static void sd_resend(struct scsi_cmd *c)
{
	sd_issue(c->priv);
}

/* Build q's next command from its state and send it. */
static void sd_issue(struct sd_req *q)
{
	struct scsi_disk *sd = q->sd;
	struct scsi_cmd *c = &q->cmd;
	const struct blkreq *r = q->r;
	zero(c, offsetof(struct scsi_cmd, sense));
	c->target = sd->target;
	c->lun = sd->lun;
	c->done = sd_cmd_done;
	c->resend = sd_resend;
	c->priv = q;
	if (q->starting) {
		c->cdb[0] = SCSI_OP_START_STOP_UNIT;
		c->cdb[4] = 0x01;                     /* START */
		c->cdb_len = 6;
		c->dir = SCSI_DIR_NONE;
	} else if (q->flushing) {
		c->cdb[0] = SCSI_OP_SYNC_CACHE_10;    /* LBA 0, 0 blocks: the whole unit */
		c->cdb_len = 10;
		c->dir = SCSI_DIR_NONE;
	} else {
		uint16_t nseg;
		uint32_t bytes = plan_piece(q, &nseg);
		if (bytes == 0) {
			sd_finish(q, BLK_E_TOOBIG);
			return;
		}
		bool write = r->op == BLK_WRITE;
		c->cdb[0] = write ? SCSI_OP_WRITE_16 : SCSI_OP_READ_16;
		if (write && (r->flags & BLK_F_FUA) && sd->dpofua)
			c->cdb[1] = SCSI_CDB16_FUA;
		uint32_t per = sd->block_size / BLK_SECTOR_SIZE;
		put_be64(c->cdb + 2, q->sector / per);
		put_be32(c->cdb + 10, bytes / sd->block_size);
		c->cdb_len = 16;
		c->dir = write ? SCSI_DIR_OUT : SCSI_DIR_IN;
		c->seg = &r->seg[q->seg];
		c->seg_off = q->off;
		c->nseg = nseg;
		c->nbytes = bytes;
		q->piece = bytes / BLK_SECTOR_SIZE;
		if (q->piece < q->left && q->sector == r->sector && q->tries == 0)
			sd->stats.split++;
	}
	q->tries++;
	sd->stats.commands++;
	sd->host->ops->queue(sd->host, c);
}

/* Move q's data cursor past the piece just done. */
static void advance(struct sd_req *q)
{
	const struct blkreq *r = q->r;
	uint64_t nbytes = (uint64_t)q->piece * BLK_SECTOR_SIZE;
	q->sector += q->piece;
	q->left -= q->piece;
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

static void sd_event(struct sd_req *q, enum scsi_event_kind kind, const struct scsi_verdict *v, int error)
{
	struct scsi_disk *sd = q->sd;
	struct scsi_event ev = {
		.kind = kind, .unit = sd->unit, .target = sd->target, .lun = sd->lun,
		.opcode = q->cmd.cdb[0], .lba = cmd_lba(&q->cmd), .attempt = q->tries,
		.error = error, .v = v,
	};
	report(sd->host, &ev);
}

static void sd_cmd_done(struct scsi_cmd *c)
{
	struct sd_req *q = c->priv;
	struct scsi_disk *sd = q->sd;
	struct scsi_verdict v;
	scsi_judge(c, &v);
	if (v.action == SCSI_ACT_DONE && c->dir != SCSI_DIR_NONE && c->resid != 0) {
		v.action = SCSI_ACT_FAIL;       /* a short transfer: part of the data is missing */
		v.error = BLK_E_IO;
		v.what = "short transfer";
	}
	if (v.has_sense && v.sense.key == SCSI_K_UNIT_ATTENTION)
		sd->stats.unit_attentions++;
	if (v.recovered) {
		sd->stats.recovered++;
		sd_event(q, SCSI_EV_RECOVERED, &v, 0);
	}

	switch (v.action) {
	case SCSI_ACT_DONE:
		q->tries = 0;
		if (q->starting) {              /* the unit is started: send what it refused */
			q->starting = false;
			sd_issue(q);
			return;
		}
		if (q->flushing) {
			sd_finish(q, 0);
			return;
		}
		advance(q);
		if (q->left > 0) {
			sd_issue(q);
			return;
		}
		if ((q->r->flags & BLK_F_FUA) && !sd->dpofua && sd->wce) {
			q->flushing = true;         /* written; now make it durable */
			sd_issue(q);
			return;
		}
		sd_finish(q, 0);
		return;
	case SCSI_ACT_RETRY:
	case SCSI_ACT_RETRY_LATER:
	case SCSI_ACT_START_UNIT:
		if (q->tries >= v.max_tries ||
		    (v.action == SCSI_ACT_START_UNIT && (q->starting || q->starts >= SD_MAX_STARTS)))
			break;                      /* out of attempts: fail below */
		sd->stats.retries++;
		sd_event(q, SCSI_EV_RETRY, &v, 0);
		if (v.action == SCSI_ACT_START_UNIT) {
			q->starting = true;
			q->starts++;
			q->tries = 0;
			sd_issue(q);
		} else if (v.action == SCSI_ACT_RETRY_LATER) {
			defer(sd->host, c, v.delay_ms);   /* sd_issue counts the attempt then */
		} else {
			sd_issue(q);
		}
		return;
	case SCSI_ACT_FAIL:
		break;
	}
	int error = v.error != 0 ? v.error : BLK_E_IO;
	sd_event(q, SCSI_EV_FAILED, &v, error);
	sd_finish(q, error);
}

static int sd_start(void *dev, struct blkreq *r)
{
	struct scsi_disk *sd = dev;
	if (r->op == BLK_WRITE && sd->wp)
		return BLK_E_PROTECT;
	if (r->op == BLK_FLUSH && !sd->wce) {
		blk_complete(r, 0);            /* write-through unit: nothing to flush */
		return 0;
	}
	struct sd_req *q = sd->free_reqs;
	if (q == NULL)
		return BLK_E_QFULL;            /* cannot happen: max_inflight is what we hold */
	sd->free_reqs = q->next_free;
	q->r = r;
	q->seg = 0;
	q->off = 0;
	q->sector = r->sector;
	q->left = r->nsectors;
	q->piece = 0;
	q->tries = 0;
	q->flushing = r->op == BLK_FLUSH;
	q->starting = false;
	q->starts = 0;
	sd_issue(q);
	return 0;
}

static void sd_poll(void *dev)
{
	struct scsi_disk *sd = dev;
	sd->host->ops->poll(sd->host);
	if (sd->host->clock != NULL && sd->host->deferred != NULL)
		scsi_advance(sd->host, host_now(sd->host));
}

static const struct blkdev_ops sd_ops = {
	.start = sd_start,
	.poll = sd_poll,
};

/* ---- synchronous commands (the scan) ------------------------------------ */

struct exec_wait {
	volatile bool done;
	void *priv;
	void (*done_fn)(struct scsi_cmd *);
};

static void exec_done(struct scsi_cmd *c)
{
	((struct exec_wait *)c->priv)->done = true;
}

/* Send c once and wait for the answer.  false if none came in time. */
static bool exec_once(struct scsi_host *h, struct scsi_cmd *c)
{
	struct exec_wait w = { .done = false };
	c->done = exec_done;
	c->priv = &w;
	h->ops->queue(h, c);
	uint64_t start = host_now(h);
	for (uint64_t spins = 0; !w.done; spins++) {
		h->ops->poll(h);
		if (w.done)
			break;
		if (h->clock != NULL ? host_now(h) - start > EXEC_TIMEOUT_NS : spins > EXEC_MAX_SPINS)
			return false;
	}
	return true;
}

/* Wait ms on the host's clock (no clock: not at all). */
static void exec_sleep(struct scsi_host *h, uint32_t ms)
{
	if (h->clock == NULL)
		return;
	uint64_t until = host_now(h) + (uint64_t)ms * 1000000u;
	while (host_now(h) < until)
		h->ops->poll(h);
}

static void exec_event(struct scsi_host *h, const struct scsi_cmd *c, enum scsi_event_kind kind,
                       uint32_t attempt, const struct scsi_verdict *v, int error)
{
	struct scsi_event ev = {
		.kind = kind, .unit = -1, .target = c->target, .lun = c->lun, .opcode = c->cdb[0],
		.lba = cmd_lba(c), .attempt = attempt, .error = error, .v = v,
	};
	report(h, &ev);
}

int scsi_exec(struct scsi_host *h, struct scsi_cmd *c)
{
	if (h->dead)
		return BLK_E_ABORTED;
	for (uint32_t attempt = 1;; attempt++) {
		if (!exec_once(h, c)) {
			/* The command is still the host's: nothing may be sent again. */
			h->dead = true;
			return BLK_E_ABORTED;
		}
		struct scsi_verdict v;
		scsi_judge(c, &v);
		if (v.action == SCSI_ACT_DONE) {
			if (v.recovered)
				exec_event(h, c, SCSI_EV_RECOVERED, attempt, &v, 0);
			return 0;
		}
		bool start = v.action == SCSI_ACT_START_UNIT;
		if (v.action == SCSI_ACT_FAIL || attempt >= v.max_tries ||
		    (start && c->cdb[0] == SCSI_OP_START_STOP_UNIT)) {
			int error = v.error != 0 ? v.error : BLK_E_IO;
			/* A missing target is what scanning expects: not worth a line. */
			if (c->host_status != SCSI_HOST_NO_TARGET)
				exec_event(h, c, SCSI_EV_FAILED, attempt, &v, error);
			return error;
		}
		exec_event(h, c, SCSI_EV_RETRY, attempt, &v, 0);
		if (v.action == SCSI_ACT_RETRY_LATER)
			exec_sleep(h, v.delay_ms);
		if (start) {
			struct scsi_cmd s = { .target = c->target, .lun = c->lun, .cdb_len = 6,
			                      .dir = SCSI_DIR_NONE };
			s.cdb[0] = SCSI_OP_START_STOP_UNIT;
			s.cdb[4] = 0x01;
			int e = scsi_exec(h, &s);
			if (e != 0)
				return e;
		}
	}
}

/* ---- the scan ------------------------------------------------------------ */

/* A scan command reading up to len bytes into the host's scan buffer. */
static struct scsi_cmd *scan_cmd(struct scsi_host *h, struct blk_seg *seg, uint16_t target,
                                 uint32_t lun, uint32_t len)
{
	struct scsi_cmd *c = &h->scan_cmd;
	zero(c, sizeof *c);
	zero(h->scan_buf, sizeof h->scan_buf);
	c->target = target;
	c->lun = lun;
	if (len > 0) {
		seg->addr = (uint64_t)(uintptr_t)h->scan_buf;
		seg->len = len;
		c->seg = seg;
		c->nseg = 1;
		c->nbytes = len;
		c->dir = SCSI_DIR_IN;
	}
	return c;
}

static void notice(struct scsi_host *h, uint16_t target, uint32_t lun, const char *text)
{
	struct scsi_event ev = { .kind = SCSI_EV_NOTICE, .unit = -1, .target = target, .lun = lun, .text = text };
	report(h, &ev);
}

/* LUNs of a target from REPORT LUNS; LUN 0 alone if the target does not
 * support it.  Returns how many went into luns[], or a negative error
 * (BLK_E_UNIT: no such target). */
static int report_luns(struct scsi_host *h, uint16_t target, uint32_t *luns)
{
	struct blk_seg seg;
	uint32_t len = sizeof h->scan_buf;
	struct scsi_cmd *c = scan_cmd(h, &seg, target, 0, len);
	c->cdb[0] = SCSI_OP_REPORT_LUNS;
	put_be32(c->cdb + 6, len);
	c->cdb_len = 12;
	int e = scsi_exec(h, c);
	if (e == BLK_E_UNSUPP) {
		luns[0] = 0;                   /* an old target: LUN 0 only */
		return 1;
	}
	if (e != 0)
		return e;
	uint32_t bytes = len - c->resid;
	uint32_t listed = bytes >= 8 ? be32(h->scan_buf) / 8 : 0;
	int n = 0;
	for (uint32_t i = 0; i < listed && 8 + 8 * i + 8 <= bytes && n < SCSI_SCAN_LUNS; i++) {
		const uint8_t *l = h->scan_buf + 8 + 8 * i;
		uint32_t lun;
		switch (l[0] >> 6) {
		case 0: lun = l[1]; break;                                  /* peripheral device */
		case 1: lun = (uint32_t)(l[0] & 0x3f) << 8 | l[1]; break;   /* flat space */
		default: continue;                                          /* not one we address */
		}
		if (lun > h->max_lun)
			continue;
		/* Keep the list ascending (units are numbered in LUN order, whatever
		 * order the target lists them in) and free of repeats. */
		int at = n;
		while (at > 0 && luns[at - 1] > lun)
			at--;
		if (at > 0 && luns[at - 1] == lun)
			continue;
		for (int k = n; k > at; k--)
			luns[k] = luns[k - 1];
		luns[at] = lun;
		n++;
	}
	return n;
}

static void copy_text(char *dst, const uint8_t *src, int n)
{
	int end = n;
	while (end > 0 && (src[end - 1] == ' ' || src[end - 1] == 0))
		end--;
	for (int i = 0; i < end; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? (char)src[i] : '?';
	dst[end] = 0;
}

static void name_disk(struct scsi_disk *sd)
{
	char *p = sd->name;
	const char *pre = "scsi ";
	while (*pre)
		*p++ = *pre++;
	uint32_t parts[2] = { sd->target, sd->lun };
	for (int k = 0; k < 2; k++) {
		char tmp[12];
		int n = 0;
		uint32_t v = parts[k];
		do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v != 0);
		while (n > 0)
			*p++ = tmp[--n];
		if (k == 0)
			*p++ = ':';
	}
	*p = 0;
}

/* Look at one logical unit; fill sd and return true if it is a usable disk. */
static bool probe_lun(struct scsi_host *h, uint16_t target, uint32_t lun, struct scsi_disk *sd)
{
	struct blk_seg seg;
	struct scsi_cmd *c;

	/* INQUIRY: a direct-access block device that is actually connected? */
	c = scan_cmd(h, &seg, target, lun, 96);
	c->cdb[0] = SCSI_OP_INQUIRY;
	put_be16(c->cdb + 3, 96);
	c->cdb_len = 6;
	if (scsi_exec(h, c) != 0 || 96 - c->resid < 36)
		return false;
	uint8_t qualifier = h->scan_buf[0] >> 5, type = h->scan_buf[0] & 0x1f;
	if (qualifier != 0)
		return false;                  /* no unit at this LUN (or not connected) */
	if (type != 0) {
		notice(h, target, lun, "not a direct-access block device: skipped");
		return false;
	}
	zero(sd, sizeof *sd);
	sd->host = h;
	sd->target = target;
	sd->lun = lun;
	sd->unit = -1;
	copy_text(sd->vendor, h->scan_buf + 8, 8);
	copy_text(sd->product, h->scan_buf + 16, 16);
	copy_text(sd->revision, h->scan_buf + 32, 4);
	name_disk(sd);

	/* TEST UNIT READY: clears the unit attention of the reset the unit has
	 * just been through, waits while it becomes ready, starts it if asked. */
	c = scan_cmd(h, &seg, target, lun, 0);
	c->cdb[0] = SCSI_OP_TEST_UNIT_READY;
	c->cdb_len = 6;
	int e = scsi_exec(h, c);
	if (e != 0) {
		notice(h, target, lun, e == BLK_E_NOTREADY ? "not ready (no medium?): skipped"
		                                           : "does not become ready: skipped");
		return false;
	}

	/* READ CAPACITY(16), or (10) for a unit that does not know it. */
	c = scan_cmd(h, &seg, target, lun, 32);
	c->cdb[0] = SCSI_OP_SERVICE_IN_16;
	c->cdb[1] = SCSI_SA_READ_CAPACITY_16;
	put_be32(c->cdb + 10, 32);
	c->cdb_len = 16;
	e = scsi_exec(h, c);
	if (e == 0 && 32 - c->resid >= 12) {
		sd->nblocks = be64(h->scan_buf) + 1;
		sd->block_size = be32(h->scan_buf + 8);
	} else if (e == BLK_E_UNSUPP) {
		c = scan_cmd(h, &seg, target, lun, 8);
		c->cdb[0] = SCSI_OP_READ_CAPACITY_10;
		c->cdb_len = 10;
		if (scsi_exec(h, c) != 0 || c->resid != 0) {
			notice(h, target, lun, "READ CAPACITY failed: skipped");
			return false;
		}
		sd->nblocks = (uint64_t)be32(h->scan_buf) + 1;
		sd->block_size = be32(h->scan_buf + 4);
	} else {
		notice(h, target, lun, "READ CAPACITY(16) failed: skipped");
		return false;
	}
	uint32_t bs = sd->block_size;
	if (bs < BLK_SECTOR_SIZE || bs > 65536 || (bs & (bs - 1)) != 0 || sd->nblocks == 0 ||
	    sd->nblocks > UINT64_MAX / bs) {
		notice(h, target, lun, "unusable block size or capacity: skipped");
		return false;
	}

	/* MODE SENSE(10), caching page: is there a volatile write cache, does
	 * the unit honour FUA, is it write-protected?  Without an answer assume
	 * the cautious: a write cache (so flushes are sent), no FUA. */
	sd->wce = true;
	c = scan_cmd(h, &seg, target, lun, 64);
	c->cdb[0] = SCSI_OP_MODE_SENSE_10;
	c->cdb[1] = 0x08;                  /* DBD: no block descriptors */
	c->cdb[2] = 0x08;                  /* current values, caching page */
	put_be16(c->cdb + 7, 64);
	c->cdb_len = 10;
	if (scsi_exec(h, c) == 0 && 64 - c->resid >= 8) {
		const uint8_t *b = h->scan_buf;
		uint32_t got = 64 - c->resid;
		sd->wp = (b[3] & 0x80) != 0;
		sd->dpofua = (b[3] & 0x10) != 0;
		uint32_t page = 8u + ((uint32_t)b[6] << 8 | b[7]);
		if (page + 3 <= got && (b[page] & 0x3f) == 0x08)
			sd->wce = (b[page + 2] & 0x04) != 0;
	}
	return true;
}

static void register_disk(struct scsi_host *h, struct scsi_disk *sd)
{
	for (int i = SCSI_DISK_REQS - 1; i >= 0; i--) {
		sd->req[i].sd = sd;
		sd->req[i].next_free = sd->free_reqs;
		sd->free_reqs = &sd->req[i];
	}
	sd->info.nsectors = sd->nblocks * (sd->block_size / BLK_SECTOR_SIZE);
	uint32_t depth = h->cmd_per_lun;
	if (depth == 0 || depth > SCSI_DISK_REQS)
		depth = SCSI_DISK_REQS;
	sd->info.max_inflight = depth;
	sd->info.blksize = sd->block_size;
	sd->info.name = h->name != NULL ? h->name : "scsi";
	sd->unit = blk_register(&sd_ops, sd, &sd->info);
}

int scsi_scan(struct scsi_host *h, struct scsi_disk *disks, int max)
{
	int n = 0;
	h->deferred = NULL;
	h->disks = NULL;
	h->ndisks = 0;
	h->dead = false;
	if (h->max_segs == 0 || h->max_bytes < sizeof h->scan_buf)
		return 0;                      /* a host that cannot carry even the scan's commands */
	struct scsi_disk **tail = &h->disks;
	uint16_t targets = h->max_target < SCSI_SCAN_TARGETS ? h->max_target + 1 : SCSI_SCAN_TARGETS;
	for (uint16_t t = 0; t < targets && n < max && !h->dead; t++) {
		uint32_t luns[SCSI_SCAN_LUNS];
		int nl = report_luns(h, t, luns);
		for (int i = 0; i < nl && n < max && !h->dead; i++) {
			struct scsi_disk *sd = &disks[n];
			if (!probe_lun(h, t, luns[i], sd))
				continue;
			register_disk(h, sd);
			if (sd->unit < 0) {
				notice(h, t, luns[i], "no block unit left for it: skipped");
				continue;
			}
			*tail = sd;
			tail = &sd->next;
			h->ndisks++;
			n++;
		}
	}
	if (h->dead)
		notice(h, 0, 0, "the host stopped answering: scan abandoned");
	return n;
}
