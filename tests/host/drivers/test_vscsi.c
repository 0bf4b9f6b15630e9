/*
 * test_vscsi.c - the virtio-scsi request engine (drivers/vscsi.c) under the
 * real SCSI layer and block layer, against a simulated virtio-scsi device:
 * the device side of the virtqueues (simvirtio.h), which checks every chain
 * against the layout virtio-scsi prescribes (request header with the
 * device's CDB size, data-out, response with its sense size, data-in) and
 * the LUN addressing, runs the command on the emulated target (simscsi.h)
 * and answers in random order.
 *
 *  - the scan through the engine: absent targets answer BAD_TARGET;
 *  - random reads, writes, FUA writes and flushes, 128 in flight, data
 *    checked, with indirect descriptors and with a small direct ring
 *    (commands wait for ring space), and with tight seg_max / max_sectors;
 *  - transport faults: a response never written, a read whose used length
 *    does not cover its data, a device BUSY/RESET/TRANSPORT_FAILURE
 *    response: retried, and the request completes with good data;
 *  - the event queue: events reach the hook and the buffer goes back.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/blk.h"
#include "drivers/scsi.h"
#include "drivers/vscsi.h"
#include "drivers/virtqueue.h"
#include "check.h"
#include "simvirtio.h"
#include "simscsi.h"
#include "treq.h"

static uint8_t ring[65536] __attribute__((aligned(4096)));
static uint8_t evring[4096] __attribute__((aligned(4096)));
static struct vq_desc itab[VQ_MAX_SIZE * VQ_MAX_SIZE];
static struct virtq vq, evq;
static struct vscsi vs;
static struct simscsi sim;
static struct scsi_disk disks[BLK_MAX_UNITS];

/* ---- the simulated device ------------------------------------------------ */

static struct simdev {
	struct simvq q, eq;
	struct vscsi_limits lim;
	struct sim_chain held[VQ_MAX_SIZE];
	int nheld;
	struct sim_chain evheld[8];   /* event buffers the device holds */
	int nev;
	/* Faults for the next chains. */
	int no_response;              /* leave the response unwritten, used length 0 */
	int short_read;               /* a read's used length one byte short */
	int response_code;            /* answer with this virtio-scsi response once (0: none) */
	uint32_t max_data_bufs, notifies, chains;
} dev;

static const struct scsi_host_ops *real_ops;

static void dev_notify(void *arg, uint32_t queue)
{
	(void)arg;
	CHECK(queue == VSCSI_Q_REQUEST || queue == VSCSI_Q_EVENT);
	dev.notifies++;
}

static void wr_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint8_t response_of(uint8_t host_status)
{
	switch (host_status) {
	case SCSI_HOST_OK:        return VSCSI_S_OK;
	case SCSI_HOST_NO_TARGET: return VSCSI_S_BAD_TARGET;
	default:                  return VSCSI_S_FAILURE;
	}
}

/* Execute held chain i and return it. */
static void dev_complete(int i)
{
	struct sim_chain c = dev.held[i];
	dev.held[i] = dev.held[--dev.nheld];
	uint32_t hdr = VSCSI_REQ_FIXED + dev.lim.cdb_size, resp = VSCSI_RESP_FIXED + dev.lim.sense_size;

	/* Layout: header (readable), data-out (readable), response (writable), data-in (writable). */
	CHECK(c.n >= 2);
	CHECK(!c.buf[0].dev_writes && c.buf[0].len == hdr);
	uint32_t k = 1, nout = 0, nin = 0;
	uint64_t out_bytes = 0, in_bytes = 0;
	while (k < c.n && !c.buf[k].dev_writes) { out_bytes += c.buf[k].len; nout++; k++; }
	CHECK(k < c.n && c.buf[k].dev_writes && c.buf[k].len == resp);
	uint32_t resp_at = k++;
	while (k < c.n) { CHECK(c.buf[k].dev_writes); in_bytes += c.buf[k].len; nin++; k++; }
	CHECK(nout == 0 || nin == 0);
	if (dev.lim.seg_max)
		CHECK(nout + nin <= dev.lim.seg_max);
	CHECK((out_bytes + in_bytes) / 512 <= dev.lim.max_sectors);
	if (nout + nin > dev.max_data_bufs)
		dev.max_data_bufs = nout + nin;
	dev.chains++;

	const uint8_t *h = (const uint8_t *)(uintptr_t)c.buf[0].addr;
	CHECK_EQ(h[0], 1);                                 /* LUN address format */
	CHECK_EQ(h[2] & 0xc0, 0x40);                       /* flat space addressing */
	for (int b = 4; b < 8; b++)
		CHECK_EQ(h[b], 0);
	CHECK_EQ(h[16], 0);                                /* SIMPLE */
	uint16_t target = h[1];
	uint32_t lun = (uint32_t)(h[2] & 0x3f) << 8 | h[3];
	const uint8_t *cdb = h + VSCSI_REQ_FIXED;
	uint8_t *r = (uint8_t *)(uintptr_t)c.buf[resp_at].addr;

	if (dev.no_response > 0) {
		dev.no_response--;
		sim_put(&dev.q, c.head, 0);
		return;
	}
	if (dev.response_code > 0) {
		r[11] = (uint8_t)dev.response_code;
		dev.response_code = 0;
		wr_le32(r, 0);
		sim_put(&dev.q, c.head, resp);
		return;
	}
	uint32_t len = (uint32_t)(out_bytes + in_bytes);
	uint8_t *flat = malloc(len ? len : 1);
	uint32_t at = 0;
	for (uint32_t b = 1; b < resp_at; b++) {
		memcpy(flat + at, (void *)(uintptr_t)c.buf[b].addr, c.buf[b].len);
		at += c.buf[b].len;
	}
	struct sim_result res;
	sim_exec(&sim, target, lun, cdb, flat, len, &res);
	uint32_t used = resp;
	if (res.host_status == 0 && nin > 0) {
		uint32_t fill = len - res.resid;
		at = 0;
		for (uint32_t b = resp_at + 1; b < c.n && at < fill; b++) {
			uint32_t n = c.buf[b].len < fill - at ? c.buf[b].len : fill - at;
			memcpy((void *)(uintptr_t)c.buf[b].addr, flat + at, n);
			at += n;
		}
		used += fill;
		if (dev.short_read > 0 && fill > 0) {
			dev.short_read--;
			used--;
		}
	}
	free(flat);
	memset(r, 0, resp);
	wr_le32(r, res.sense_len);
	wr_le32(r + 4, res.resid);
	r[10] = res.status;
	r[11] = response_of(res.host_status);
	memcpy(r + VSCSI_RESP_FIXED, res.sense, res.sense_len);
	sim_put(&dev.q, c.head, used);
}

/* The device works: take what is offered, answer everything in random order. */
static void dev_run(void)
{
	while (dev.nheld < VQ_MAX_SIZE && sim_take(&dev.q, &dev.held[dev.nheld]))
		dev.nheld++;
	while (dev.nheld > 0)
		dev_complete((int)rng_below((uint64_t)dev.nheld));
}

static void t_queue(struct scsi_host *h, struct scsi_cmd *c) { real_ops->queue(h, c); }
static void t_poll(struct scsi_host *h)
{
	if (rng_below(4) != 0)
		dev_run();
	real_ops->poll(h);
}
static const struct scsi_host_ops test_ops = { .queue = t_queue, .poll = t_poll };

static struct {
	uint32_t event, reason, lun;
	uint16_t target;
	int n;
} seen;

static void on_event(struct vscsi *v, uint32_t event, uint16_t target, uint32_t lun, uint32_t reason)
{
	(void)v;
	seen.event = event;
	seen.target = target;
	seen.lun = lun;
	seen.reason = reason;
	seen.n++;
}

static int setup(uint16_t qsize, bool indirect, struct vscsi_limits lim)
{
	blk_reset();
	memset(&dev, 0, sizeof dev);
	memset(&seen, 0, sizeof seen);
	CHECK_EQ(vq_init(&vq, qsize, ring, indirect ? itab : NULL, indirect ? qsize : 0), 0);
	CHECK_EQ(vq_init(&evq, 8, evring, NULL, 0), 0);
	simvq_init(&dev.q, &vq, indirect);
	simvq_init(&dev.eq, &evq, false);
	dev.lim = lim;
	CHECK_EQ(vscsi_init(&vs, &vq, &evq, &lim, dev_notify, NULL), 0);
	/* The event buffers were offered at once. */
	while (dev.nev < 8 && sim_take(&dev.eq, &dev.evheld[dev.nev])) {
		struct sim_chain *ec = &dev.evheld[dev.nev++];
		CHECK(ec->n == 1 && ec->buf[0].dev_writes && ec->buf[0].len == VSCSI_EVENT_BYTES);
	}
	CHECK_EQ(dev.nev, VSCSI_NEVENTS);
	vs.on_event = on_event;
	real_ops = vs.host.ops;
	vs.host.ops = &test_ops;
	int n = scsi_scan(&vs.host, disks, BLK_MAX_UNITS);
	for (int u = 0; u < n; u++)
		blk_set_depth(u, 128);
	return n;
}

/* ---- requests ---------------------------------------------------------------- */

#define NT 128
static struct treq tr[NT];

static void start(struct treq *t, int unit, uint8_t op, uint8_t flags, uint64_t sector, uint32_t n,
                  uint32_t minpiece, uint32_t maxpiece)
{
	req_set(t, unit, op, flags, sector, n);
	if (op != BLK_FLUSH)
		fragment(t, n * 512, minpiece, maxpiece);
	if (op == BLK_WRITE)
		req_fill_random(t);
	CHECK_EQ(blk_submit(&t->r), 0);
}

static void wait_all(void)
{
	treq_wait_all(tr, NT, NULL);
}

static void shadows(int n)
{
	for (int u = 0; u < n; u++) {
		struct sim_lun *l = &sim.t[disks[u].target].lun[disks[u].lun];
		free(shadow[u]);
		shadow[u] = malloc((size_t)l->bs * l->nblocks);
		memcpy(shadow[u], l->data, (size_t)l->bs * l->nblocks);
	}
}

static void random_io(int nunits, int steps, uint32_t minpiece, uint32_t maxpiece)
{
	shadows(nunits);
	reads_checked = 0;
	for (int step = 0; step < steps; step++) {
		for (int i = 0; i < NT; i++) {
			struct treq *t = &tr[i];
			if (t->busy || rng_below(3) == 0)
				continue;
			if (t->ndone > 0)
				CHECK_EQ(t->status, 0);
			int u = (int)rng_below((uint64_t)nunits);
			struct sim_lun *l = &sim.t[disks[u].target].lun[disks[u].lun];
			uint32_t per = l->bs / 512;
			uint32_t n = per * (1 + (uint32_t)rng_below(rng_below(8) == 0 ? 256 / per : 8));
			uint64_t sector = rng_below((l->nblocks * per - n) / per + 1) * per;
			int kind = (int)rng_below(10);
			uint8_t op = kind < 5 ? BLK_READ : kind < 9 ? BLK_WRITE : BLK_FLUSH;
			bool clash = false;
			for (int k = 0; k < NT && op != BLK_FLUSH; k++) {
				struct treq *o = &tr[k];
				if (o->busy && o->r.unit == u && o->r.op != BLK_FLUSH &&
				    sector < o->r.sector + o->r.nsectors && o->r.sector < sector + n)
					clash = true;
			}
			if (clash)
				continue;
			start(t, u, op, op == BLK_WRITE && rng_below(3) == 0 ? BLK_F_FUA : 0, sector,
			      op == BLK_FLUSH ? 0 : n, minpiece, maxpiece);
		}
		blk_poll();
	}
	wait_all();
	for (int i = 0; i < NT; i++)
		if (tr[i].ndone > 0)
			CHECK_EQ(tr[i].status, 0);
	for (int u = 0; u < nunits; u++) {
		struct sim_lun *l = &sim.t[disks[u].target].lun[disks[u].lun];
		CHECK(memcmp(l->data, shadow[u], (size_t)l->bs * l->nblocks) == 0);
	}
	CHECK(reads_checked > 100);
}

static const struct vscsi_limits qemu_like = {
	.seg_max = 254, .max_sectors = 0xffff, .cmd_per_lun = 128, .cdb_size = 32, .sense_size = 96,
	.max_target = 255, .max_lun = 16383,
};

static void disks_setup(void)
{
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 4096, true, true);
	sim_add_disk(&sim, 0, 1, 512, 2048, true, false);
	sim_add_disk(&sim, 0, 6, 4096, 512, false, false);
	sim_add_disk(&sim, 2, 0, 512, 1024, true, true);
}

static void test_scan_and_io(void)
{
	disks_setup();
	CHECK_EQ(setup(256, true, qemu_like), 4);
	CHECK(disks[2].lun == 6 && disks[2].block_size == 4096 && disks[3].target == 2);
	CHECK(sim.by_op[SCSI_OP_REPORT_LUNS] >= 2);
	random_io(4, 150, 1, 5000);
	printf("ok: scan (4 units on 2 of 16 targets) and random I/O, indirect ring: %u chains, up to %u data buffers\n",
	       dev.chains, dev.max_data_bufs);

	/* A small direct ring: commands wait for room. */
	disks_setup();
	CHECK_EQ(setup(16, false, qemu_like), 4);
	random_io(4, 100, 1, 5000);
	CHECK(vs.stats.deferred > 0);
	printf("ok: random I/O on a 16-entry direct ring (%lu waits for ring space)\n", (unsigned long)vs.stats.deferred);

	/* Tight device limits: 4 buffers, 16 sectors per command. */
	struct vscsi_limits tight = qemu_like;
	tight.seg_max = 4;
	tight.max_sectors = 16;
	disks_setup();
	CHECK_EQ(setup(256, true, tight), 4);
	random_io(4, 100, 4096, 4096);   /* whole blocks per buffer: every cut is expressible */
	CHECK(disks[0].stats.split > 0);
	printf("ok: random I/O with seg_max 4, max_sectors 16 (%lu requests split)\n",
	       (unsigned long)(disks[0].stats.split + disks[1].stats.split));

	/* CDB and sense areas of other sizes. */
	struct vscsi_limits small = qemu_like;
	small.cdb_size = 16;
	small.sense_size = 32;
	disks_setup();
	CHECK_EQ(setup(64, true, small), 4);
	random_io(4, 50, 1, 5000);
	struct vscsi_limits bad = qemu_like;
	bad.cdb_size = 12;
	CHECK_EQ(vscsi_init(&vs, &vq, NULL, &bad, dev_notify, NULL), BLK_E_INVAL);
	bad = qemu_like;
	bad.sense_size = 200;
	CHECK_EQ(vscsi_init(&vs, &vq, NULL, &bad, dev_notify, NULL), BLK_E_INVAL);
	printf("ok: 16-byte CDB and 32-byte sense areas; sizes beyond the engine refused\n");
}

static void test_transport_faults(void)
{
	disks_setup();
	CHECK_EQ(setup(256, true, qemu_like), 4);
	shadows(4);
	struct { const char *what; int *knob; int value; int code; } faults[] = {
		{ "response never written", &dev.no_response, 1, 0 },
		{ "read's used length short", &dev.short_read, 1, 0 },
		{ "BUSY response", NULL, 0, VSCSI_S_BUSY },
		{ "RESET response", NULL, 0, VSCSI_S_RESET },
		{ "TRANSPORT_FAILURE response", NULL, 0, VSCSI_S_TRANSPORT_FAILURE },
	};
	for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) {
		uint64_t bad = vs.stats.bad_responses, reads = sim.by_op[SCSI_OP_READ_16];
		if (faults[i].knob)
			*faults[i].knob = faults[i].value;
		else
			dev.response_code = faults[i].code;
		start(&tr[0], 0, BLK_READ, 0, 64, 8, 512, 4096);
		wait_all();
		CHECK_EQ(tr[0].status, 0);
		CHECK(sim.by_op[SCSI_OP_READ_16] - reads >= 1);
		if (faults[i].knob)
			CHECK_EQ(vs.stats.bad_responses - bad, 1);
		printf("ok: %s: retried, good data\n", faults[i].what);
	}
	/* A FAILURE response fails the request. */
	dev.response_code = VSCSI_S_FAILURE;
	start(&tr[0], 1, BLK_WRITE, 0, 8, 8, 512, 4096);
	wait_all();
	CHECK_EQ(tr[0].status, BLK_E_IO);
	/* Sense comes through the response: a medium error on unit 3. */
	struct sim_fault *f = sim_fault(&sim, SCSI_OP_READ_16, 1);
	f->key = SCSI_K_MEDIUM_ERROR;
	f->asc = 0x11;
	f->descriptor = true;
	f->info = true;
	start(&tr[0], 3, BLK_READ, 0, 16, 8, 512, 4096);
	wait_all();
	CHECK_EQ(tr[0].status, BLK_E_MEDIUM);
	printf("ok: FAILURE response fails; a medium error's sense crosses the transport\n");
}

static void test_events(void)
{
	disks_setup();
	CHECK_EQ(setup(256, true, qemu_like), 4);
	struct { uint32_t event, reason; uint16_t t; uint32_t l; } evs[] = {
		{ VSCSI_T_TRANSPORT_RESET, VSCSI_EVT_RESET_RESCAN, 1, 0 },
		{ VSCSI_T_PARAM_CHANGE, 0x2a | (0x09 << 8), 0, 6 },
		{ VSCSI_T_TRANSPORT_RESET | VSCSI_T_EVENTS_MISSED, VSCSI_EVT_RESET_REMOVED, 2, 0 },
	};
	for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) {
		CHECK(dev.nev > 0);
		struct sim_chain c = dev.evheld[--dev.nev];
		uint16_t head = c.head;
		uint8_t *e = (uint8_t *)(uintptr_t)c.buf[0].addr;
		wr_le32(e, evs[i].event);
		vscsi_lun_bytes(e + 4, evs[i].t, evs[i].l);
		wr_le32(e + 12, evs[i].reason);
		sim_put(&dev.eq, head, VSCSI_EVENT_BYTES);
		blk_poll();
		CHECK_EQ(seen.n, (int)i + 1);
		CHECK(seen.event == evs[i].event && seen.reason == evs[i].reason &&
		      seen.target == evs[i].t && seen.lun == evs[i].l);
		/* The buffer went back to the device. */
		CHECK(sim_take(&dev.eq, &dev.evheld[dev.nev]));
		dev.nev++;
	}
	CHECK_EQ(dev.nev, VSCSI_NEVENTS);
	printf("ok: events reach the hook; their buffers go back\n");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng_seed(0x7e5c5105ull);
	test_scan_and_io();
	test_transport_faults();
	test_events();
	for (int u = 0; u < BLK_MAX_UNITS; u++)
		free(shadow[u]);
	for (int i = 0; i < NT; i++)
		free(tr[i].mem);
	sim_free(&sim);
	return 0;
}
