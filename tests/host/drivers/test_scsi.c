/*
 * test_scsi.c - the SCSI layer (drivers/scsi_sense.c, drivers/scsi_disk.c)
 * through the real block layer, against an emulated target (simscsi.h)
 * behind a fake host adapter that completes commands in random order (or
 * at once, inside queue()), with a clock the test moves.
 *
 *  - scsi_judge and sense decoding, condition by condition;
 *  - the scan: REPORT LUNS (in any order, or unsupported), units that are
 *    not disks, absent, without medium, stopped (START UNIT), becoming
 *    ready, READ CAPACITY(16) unsupported (fallback to (10)), 4 KiB blocks,
 *    the caching page (write cache, FUA, write protection);
 *  - random reads, writes, FUA writes and flushes with fragmented buffers,
 *    128 in flight on two units, data checked against a shadow copy and
 *    durability against the target's durable image, with native and
 *    emulated FUA;
 *  - requests cut into several commands by tight host limits, and a
 *    request too fragmented for them;
 *  - every sense condition and host failure the layer handles, each with
 *    the error the request must end with and the number of attempts it
 *    must take, waiting retries held until the clock reaches them.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/blk.h"
#include "drivers/scsi.h"
#include "check.h"
#include "simscsi.h"
#include "treq.h"

static struct simscsi sim;

/* ---- the fake host adapter ------------------------------------------------ */

#define FH_MAXPEND 4096

static struct fakehost {
	struct scsi_host h;
	struct scsi_cmd *pend[FH_MAXPEND];
	int npend;
	bool sync;                      /* complete inside queue() */
	uint64_t now;                   /* ns */
	uint64_t queued;
	int rearms;
} fh;

static struct scsi_disk disks[BLK_MAX_UNITS];

static struct {
	int n[4];                       /* by enum scsi_event_kind */
	struct scsi_event last;
	struct scsi_verdict last_v;
} events;

static void fh_process(struct scsi_cmd *c)
{
	uint32_t n = c->nbytes;
	uint8_t *buf = malloc(n ? n : 1);
	CHECK(buf != NULL);
	/* Gather (a write) from the command's segments. */
	uint32_t off = c->seg_off, at = 0;
	for (uint16_t i = 0; at < n; i++) {
		CHECK(i < c->nseg);
		uint32_t len = c->seg[i].len - off;
		if (len > n - at) len = n - at;
		if (c->dir == SCSI_DIR_OUT)
			memcpy(buf + at, (uint8_t *)blk_seg_ptr(c->seg[i].addr) + off, len);
		at += len;
		off = 0;
	}
	CHECK(c->dir != SCSI_DIR_NONE || n == 0);
	CHECK(c->cdb_len == 6 || c->cdb_len == 10 || c->cdb_len == 12 || c->cdb_len == 16);
	struct sim_result r;
	sim_exec(&sim, c->target, c->lun, c->cdb, buf, n, &r);
	/* Scatter (a read) what the target filled. */
	if (c->dir == SCSI_DIR_IN && r.host_status == 0) {
		uint32_t fill = n - r.resid;
		off = c->seg_off;
		at = 0;
		for (uint16_t i = 0; at < fill; i++) {
			uint32_t len = c->seg[i].len - off;
			if (len > fill - at) len = fill - at;
			memcpy((uint8_t *)blk_seg_ptr(c->seg[i].addr) + off, buf + at, len);
			at += len;
			off = 0;
		}
	}
	free(buf);
	c->host_status = r.host_status;
	c->status = r.status;
	c->resid = r.resid;
	c->sense_len = r.sense_len;
	memcpy(c->sense, r.sense, sizeof c->sense);
	c->done(c);
}

static void fh_queue(struct scsi_host *h, struct scsi_cmd *c)
{
	(void)h;
	fh.queued++;
	if (fh.sync) {
		fh_process(c);
		return;
	}
	CHECK(fh.npend < FH_MAXPEND);
	fh.pend[fh.npend++] = c;
}

static void fh_poll(struct scsi_host *h)
{
	(void)h;
	fh.now += 100000;               /* time passes while the host is polled */
	while (fh.npend > 0) {
		int i = (int)rng_below((uint64_t)fh.npend);
		struct scsi_cmd *c = fh.pend[i];
		fh.pend[i] = fh.pend[--fh.npend];
		fh_process(c);
	}
}

static uint64_t fh_clock(struct scsi_host *h)
{
	(void)h;
	return fh.now;
}

static void fh_rearm(struct scsi_host *h)
{
	(void)h;
	fh.rearms++;
}

static void fh_report(struct scsi_host *h, const struct scsi_event *ev)
{
	(void)h;
	events.n[ev->kind]++;
	events.last = *ev;
	if (ev->v != NULL) {
		events.last_v = *ev->v;
		events.last.v = &events.last_v;
	}
}

static const struct scsi_host_ops fh_ops = { .queue = fh_queue, .poll = fh_poll };

/* A fresh block layer and host; the test has set up `sim`.  Returns the units found. */
static int setup_host(uint32_t max_segs, uint32_t max_bytes, bool clock)
{
	blk_reset();
	memset(&fh, 0, sizeof fh);
	memset(&events, 0, sizeof events);
	fh.h.ops = &fh_ops;
	fh.h.name = "test-scsi";
	fh.h.max_segs = max_segs;
	fh.h.max_bytes = max_bytes;
	fh.h.max_target = 255;
	fh.h.max_lun = 16383;
	fh.h.cmd_per_lun = 128;
	fh.h.clock = clock ? fh_clock : NULL;
	fh.h.rearm = fh_rearm;
	fh.h.report = fh_report;
	fh.now = 1000000000ull;
	int n = scsi_scan(&fh.h, disks, BLK_MAX_UNITS);
	for (int u = 0; u < n; u++)
		CHECK_EQ(blk_set_depth(u, 128), 128);
	return n;
}

/* ---- block requests --------------------------------------------------------- */

/* The simulated devices complete by the clock: each poll moves it 1 ms. */
static void tick_1ms(void)
{
	fh.now += 1000000;
}

static void wait_all(struct treq *t, int n)
{
	treq_wait_all(t, n, tick_1ms);
}

static struct sim_lun *lun_of(int unit)
{
	return &sim.t[disks[unit].target].lun[disks[unit].lun];
}

static uint32_t frag_min = 100;       /* run_one's smallest buffer piece */

/* One request, run to completion; returns its status. */
static int run_one(int unit, uint8_t op, uint8_t flags, uint64_t sector, uint32_t nsectors, uint8_t *data)
{
	static struct treq t;
	req_set(&t, unit, op, flags, sector, nsectors);
	if (op != BLK_FLUSH) {
		fragment(&t, nsectors * 512, frag_min, 3000);
		if (op == BLK_WRITE)
			req_copy(&t, data, true);
	}
	int e = blk_submit(&t.r);
	if (e != 0)
		return e;
	wait_all(&t, 1);
	CHECK_EQ(t.ndone, 1);
	if (op == BLK_READ && t.status == 0)
		req_copy(&t, data, false);
	return t.status;
}

/* ---- scsi_judge and sense decoding ------------------------------------------ */

static void judge_sense(uint8_t key, uint8_t asc, uint8_t ascq, enum scsi_action act, int err)
{
	struct scsi_cmd c = { .host_status = SCSI_HOST_OK, .status = SCSI_S_CHECK_CONDITION };
	c.sense[0] = 0x70;
	c.sense[2] = key;
	c.sense[7] = 10;
	c.sense[12] = asc;
	c.sense[13] = ascq;
	c.sense_len = 18;
	struct scsi_verdict v;
	scsi_judge(&c, &v);
	CHECK_EQ(v.action, act);
	if (act == SCSI_ACT_FAIL || err != 0)
		CHECK_EQ(v.error, err);
	CHECK(v.has_sense && v.sense.key == key && v.sense.asc == asc && v.sense.ascq == ascq);
	CHECK(v.what != NULL && v.max_tries >= 1);
}

static void test_judge(void)
{
	judge_sense(SCSI_K_NO_SENSE, 0, 0, SCSI_ACT_DONE, 0);
	judge_sense(SCSI_K_RECOVERED_ERROR, 0x18, 0, SCSI_ACT_DONE, 0);
	judge_sense(SCSI_K_NOT_READY, 0x04, 0x01, SCSI_ACT_RETRY_LATER, BLK_E_NOTREADY);
	judge_sense(SCSI_K_NOT_READY, 0x04, 0x00, SCSI_ACT_RETRY_LATER, BLK_E_NOTREADY);
	judge_sense(SCSI_K_NOT_READY, 0x04, 0x02, SCSI_ACT_START_UNIT, BLK_E_NOTREADY);
	judge_sense(SCSI_K_NOT_READY, 0x04, 0x03, SCSI_ACT_FAIL, BLK_E_NOTREADY);
	judge_sense(SCSI_K_NOT_READY, 0x3a, 0x00, SCSI_ACT_FAIL, BLK_E_NOTREADY);
	judge_sense(SCSI_K_MEDIUM_ERROR, 0x11, 0x00, SCSI_ACT_FAIL, BLK_E_MEDIUM);
	judge_sense(SCSI_K_MEDIUM_ERROR, 0x0c, 0x00, SCSI_ACT_FAIL, BLK_E_MEDIUM);
	judge_sense(SCSI_K_HARDWARE_ERROR, 0x44, 0x00, SCSI_ACT_RETRY, BLK_E_IO);
	judge_sense(SCSI_K_ILLEGAL_REQUEST, 0x21, 0x00, SCSI_ACT_FAIL, BLK_E_RANGE);
	judge_sense(SCSI_K_ILLEGAL_REQUEST, 0x20, 0x00, SCSI_ACT_FAIL, BLK_E_UNSUPP);
	judge_sense(SCSI_K_ILLEGAL_REQUEST, 0x24, 0x00, SCSI_ACT_FAIL, BLK_E_UNSUPP);
	judge_sense(SCSI_K_ILLEGAL_REQUEST, 0x25, 0x00, SCSI_ACT_FAIL, BLK_E_UNIT);
	judge_sense(SCSI_K_UNIT_ATTENTION, 0x29, 0x00, SCSI_ACT_RETRY, BLK_E_IO);
	judge_sense(SCSI_K_UNIT_ATTENTION, 0x2a, 0x09, SCSI_ACT_RETRY, BLK_E_IO);
	judge_sense(SCSI_K_DATA_PROTECT, 0x27, 0x00, SCSI_ACT_FAIL, BLK_E_PROTECT);
	judge_sense(SCSI_K_BLANK_CHECK, 0, 0, SCSI_ACT_FAIL, BLK_E_IO);
	judge_sense(SCSI_K_ABORTED_COMMAND, 0x00, 0x06, SCSI_ACT_RETRY, BLK_E_IO);
	judge_sense(SCSI_K_MISCOMPARE, 0x1d, 0, SCSI_ACT_FAIL, BLK_E_IO);
	judge_sense(SCSI_K_VOLUME_OVERFLOW, 0, 0, SCSI_ACT_FAIL, BLK_E_IO);

	struct { uint8_t hs, st; enum scsi_action act; int err; } rows[] = {
		{ SCSI_HOST_OK, SCSI_S_GOOD, SCSI_ACT_DONE, 0 },
		{ SCSI_HOST_OK, SCSI_S_CONDITION_MET, SCSI_ACT_DONE, 0 },
		{ SCSI_HOST_OK, SCSI_S_BUSY, SCSI_ACT_RETRY_LATER, BLK_E_IO },
		{ SCSI_HOST_OK, SCSI_S_TASK_SET_FULL, SCSI_ACT_RETRY_LATER, BLK_E_IO },
		{ SCSI_HOST_OK, SCSI_S_TASK_ABORTED, SCSI_ACT_RETRY, BLK_E_IO },
		{ SCSI_HOST_OK, SCSI_S_RESERVATION_CONFLICT, SCSI_ACT_FAIL, BLK_E_IO },
		{ SCSI_HOST_OK, SCSI_S_ACA_ACTIVE, SCSI_ACT_FAIL, BLK_E_IO },
		{ SCSI_HOST_OK, 0x77, SCSI_ACT_FAIL, BLK_E_IO },
		{ SCSI_HOST_OK, SCSI_S_CHECK_CONDITION, SCSI_ACT_RETRY, BLK_E_IO },   /* no sense data */
		{ SCSI_HOST_NO_TARGET, 0, SCSI_ACT_FAIL, BLK_E_UNIT },
		{ SCSI_HOST_RESET, 0, SCSI_ACT_RETRY, BLK_E_IO },
		{ SCSI_HOST_BUSY, 0, SCSI_ACT_RETRY_LATER, BLK_E_IO },
		{ SCSI_HOST_ABORTED, 0, SCSI_ACT_RETRY, BLK_E_IO },
		{ SCSI_HOST_TRANSPORT, 0, SCSI_ACT_RETRY, BLK_E_IO },
		{ SCSI_HOST_OVERRUN, 0, SCSI_ACT_FAIL, BLK_E_IO },
		{ SCSI_HOST_FAILED, 0, SCSI_ACT_FAIL, BLK_E_IO },
		{ 200, 0, SCSI_ACT_FAIL, BLK_E_IO },
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		struct scsi_cmd c = { .host_status = rows[i].hs, .status = rows[i].st };
		struct scsi_verdict v;
		scsi_judge(&c, &v);
		CHECK_EQ(v.action, rows[i].act);
		if (v.action != SCSI_ACT_DONE)
			CHECK_EQ(v.error, rows[i].err);
		if (v.action == SCSI_ACT_RETRY_LATER)
			CHECK(v.delay_ms > 0);
	}

	/* Decoding: fixed with INFORMATION, descriptor with an information
	 * descriptor, deferred codes, truncation, garbage. */
	struct scsi_sense s;
	uint8_t f[18] = { 0xf0, 0, 0x03, 0x00, 0x01, 0x02, 0x03, 10, 0, 0, 0, 0, 0x11, 0x04 };
	CHECK_EQ(scsi_sense_decode(f, 18, &s), 0);
	CHECK(s.key == 3 && s.asc == 0x11 && s.ascq == 4 && s.info_valid && s.info == 0x010203 && !s.deferred);
	f[0] = 0x71;
	CHECK_EQ(scsi_sense_decode(f, 18, &s), 0);
	CHECK(s.deferred && !s.info_valid);
	f[7] = 4;                                  /* additional length stops before ASC */
	CHECK_EQ(scsi_sense_decode(f, 18, &s), 0);
	CHECK(s.key == 3 && s.asc == 0 && s.ascq == 0);
	CHECK_EQ(scsi_sense_decode(f, 2, &s), -1);
	uint8_t d[20] = { 0x72, 0x06, 0x2a, 0x09, 0, 0, 0, 12, 0x00, 0x0a, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34 };
	CHECK_EQ(scsi_sense_decode(d, 20, &s), 0);
	CHECK(s.key == 6 && s.asc == 0x2a && s.ascq == 9 && s.info_valid && s.info == 0x1234);
	d[9] = 0x40;                               /* a descriptor running off the end is ignored */
	CHECK_EQ(scsi_sense_decode(d, 20, &s), 0);
	CHECK(!s.info_valid && s.key == 6);
	d[0] = 0x73;
	CHECK_EQ(scsi_sense_decode(d, 20, &s), 0);
	CHECK(s.deferred);
	uint8_t junk[8] = { 0x12, 1, 2, 3, 4, 5, 6, 7 };
	CHECK_EQ(scsi_sense_decode(junk, 8, &s), -1);
	CHECK_EQ(scsi_sense_decode(junk, 0, &s), -1);
	CHECK(strcmp(scsi_key_name(SCSI_K_MEDIUM_ERROR), "MEDIUM ERROR") == 0);
	CHECK(strcmp(scsi_asc_name(0x11, 0x00), "unrecovered read error") == 0);
	CHECK(scsi_asc_name(0xee, 0xee) == NULL);
	printf("ok: judge and sense decoding\n");
}

/* ---- the scan ----------------------------------------------------------------- */

static void test_scan(void)
{
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 4096, true, true);
	sim_add_disk(&sim, 0, 5, 512, 2048, false, false);
	struct sim_lun *cd = sim_add_disk(&sim, 0, 3, 2048, 100, false, false);
	cd->type = 5;                                     /* a CD-ROM: not a disk */
	/* Target 1 absent.  Target 2: no REPORT LUNS, no READ CAPACITY(16), 4 KiB blocks. */
	sim_add_disk(&sim, 2, 0, 4096, 512, true, false)->no_rc16 = true;
	sim.t[2].no_report_luns = true;
	/* Target 3: a stopped unit, one without medium, one becoming ready, one write-protected. */
	sim_add_disk(&sim, 3, 0, 512, 1024, true, false)->stopped = true;
	sim_add_disk(&sim, 3, 1, 512, 1024, true, false)->no_medium = true;
	sim_add_disk(&sim, 3, 2, 512, 1024, true, false)->becoming = 5;
	sim_add_disk(&sim, 3, 4, 512, 1024, true, false)->wp = true;

	int n = setup_host(254, 1 << 20, true);
	CHECK_EQ(n, 6);
	struct { uint16_t t; uint32_t l, bs; uint64_t nb; bool wce, fua, wp; } want[] = {
		{ 0, 0, 512, 4096, true, true, false },
		{ 0, 5, 512, 2048, false, false, false },
		{ 2, 0, 4096, 512, true, false, false },
		{ 3, 0, 512, 1024, true, false, false },
		{ 3, 2, 512, 1024, true, false, false },
		{ 3, 4, 512, 1024, true, false, true },
	};
	for (int i = 0; i < n; i++) {
		struct scsi_disk *sd = &disks[i];
		CHECK_EQ(sd->unit, i);
		CHECK_EQ(sd->target, want[i].t);
		CHECK_EQ(sd->lun, want[i].l);
		CHECK_EQ(sd->block_size, want[i].bs);
		CHECK_EQ(sd->nblocks, want[i].nb);
		CHECK_EQ(sd->wce, want[i].wce);
		CHECK_EQ(sd->dpofua, want[i].fua);
		CHECK_EQ(sd->wp, want[i].wp);
		CHECK_EQ(blk_capacity(i), want[i].nb * want[i].bs / 512);
		CHECK(strcmp(sd->vendor, "SIMSCSI") == 0 && strcmp(sd->product, "EMULATED DISK") == 0);
		struct blk_unit_stat st;
		CHECK_EQ(blk_stat(i, &st), 0);
		CHECK_EQ(st.info.blksize, want[i].bs);
		CHECK(strcmp(st.info.name, "test-scsi") == 0);
	}
	CHECK(strcmp(disks[1].name, "scsi 0:5") == 0);
	CHECK(sim.by_op[SCSI_OP_START_STOP_UNIT] == 1);        /* the stopped unit was started */
	CHECK(sim.by_op[SCSI_OP_READ_CAPACITY_10] == 1);       /* the fallback, once */
	CHECK(!sim.t[3].lun[0].stopped);
	CHECK_EQ(sim.t[3].lun[2].becoming, 0);
	/* Becoming ready took 5 retries 100 ms apart on the host clock. */
	CHECK(fh.now >= 1000000000ull + 5 * 100000000ull);
	CHECK_EQ(events.n[SCSI_EV_NOTICE], 2);     /* the CD-ROM and the unit without medium */
	printf("ok: scan found %d units (not a disk, no medium skipped; START UNIT, RC(10) fallback)\n", n);
}

/* ---- random I/O, durability ------------------------------------------------- */

#define NT 128

static struct treq tr[NT];

/* Random requests on units 0 and 1 (one with native FUA, one without),
 * NT in flight, completing in random order; outstanding writes never
 * overlap each other or a read, so the shadow stays exact. */
static void test_random_io(bool sync)
{
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 8192, true, true);
	sim_add_disk(&sim, 0, 1, 4096, 1024, true, false);
	CHECK_EQ(setup_host(254, 1 << 20, true), 2);
	fh.sync = sync;
	for (int u = 0; u < 2; u++) {
		struct sim_lun *l = lun_of(u);
		shadow[u] = malloc((size_t)l->bs * l->nblocks);
		memcpy(shadow[u], l->data, (size_t)l->bs * l->nblocks);
	}
	uint64_t nops = 0, nfua = 0, nflush = 0;
	reads_checked = 0;
	for (int step = 0; step < 250; step++) {
		/* Start requests in free slots. */
		for (int i = 0; i < NT; i++) {
			struct treq *t = &tr[i];
			if (t->busy || rng_below(3) == 0)
				continue;
			if (t->ndone > 0)
				CHECK_EQ(t->status, 0);
			int u = (int)rng_below(2);
			struct sim_lun *l = lun_of(u);
			uint32_t per = l->bs / 512;
			uint64_t cap = l->nblocks * per;
			uint32_t n = per * (1 + (uint32_t)rng_below(rng_below(8) == 0 ? 2048 / per : 16));
			uint64_t sector = rng_below(cap / per - n / per + 1) * per;
			int kind = (int)rng_below(10);
			uint8_t op = kind < 5 ? BLK_READ : kind < 9 ? BLK_WRITE : BLK_FLUSH;
			/* Keep outstanding data requests apart. */
			bool clash = false;
			for (int k = 0; k < NT && op != BLK_FLUSH; k++) {
				struct treq *o = &tr[k];
				if (!o->busy || o->r.unit != u || o->r.op == BLK_FLUSH)
					continue;
				if (sector < o->r.sector + o->r.nsectors && o->r.sector < sector + n)
					clash = true;
			}
			if (clash)
				continue;
			uint8_t flags = op == BLK_WRITE && rng_below(3) == 0 ? BLK_F_FUA : 0;
			req_set(t, u, op, flags, sector, op == BLK_FLUSH ? 0 : n);
			if (op != BLK_FLUSH) {
				uint32_t maxp = rng_below(2) ? 700 : 70000;
				fragment(t, n * 512, 1, maxp);
			}
			if (op == BLK_WRITE) {
				req_fill_random(t);
				nfua += flags != 0;
			}
			nflush += op == BLK_FLUSH;
			nops++;
			CHECK_EQ(blk_submit(&t->r), 0);
		}
		if (!sync || rng_below(2))
			blk_poll();
		fh.now += 1000000;
	}
	wait_all(tr, NT);
	for (int i = 0; i < NT; i++)
		CHECK(tr[i].ndone <= 1);
	/* Everything written is in the image; after a final flush, durably. */
	for (int u = 0; u < 2; u++) {
		CHECK_EQ(run_one(u, BLK_FLUSH, 0, 0, 0, NULL), 0);
		struct sim_lun *l = lun_of(u);
		CHECK(memcmp(l->data, shadow[u], (size_t)l->bs * l->nblocks) == 0);
		CHECK(memcmp(l->durable, shadow[u], (size_t)l->bs * l->nblocks) == 0);
	}
	for (int u = 0; u < 2; u++) {
		free(shadow[u]);
		shadow[u] = NULL;
	}
	CHECK(reads_checked > 1000);
	/* Unit 0 honours FUA: the FUA bit was sent.  Unit 1 does not: each FUA
	 * write was followed by a SYNCHRONIZE CACHE (so there are more of those
	 * than flushes asked for). */
	uint32_t fua_cmds[2] = { 0, 0 };
	for (uint32_t i = 0; i < sim.nlog; i++)
		if (sim.log[i].fua)
			fua_cmds[sim.log[i].lun]++;
	CHECK(fua_cmds[0] > 0);
	CHECK_EQ(fua_cmds[1], 0);
	CHECK(sim.by_op[SCSI_OP_SYNC_CACHE_10] > nflush);
	CHECK_EQ(disks[0].stats.failed + disks[1].stats.failed, 0);
	printf("ok: %lu random requests (%lu FUA writes, %lu flushes), %s completion, data and durability checked\n",
	       (unsigned long)nops, (unsigned long)nfua, (unsigned long)nflush, sync ? "synchronous" : "random-order");
}

/* Durability exactly: after a FUA write completes its data is in the
 * durable image; a plain write is not until a flush. */
static void test_durability(void)
{
	for (int fua_native = 0; fua_native < 2; fua_native++) {
		sim_init(&sim);
		sim_add_disk(&sim, 0, 0, 512, 1024, true, fua_native);
		CHECK_EQ(setup_host(254, 1 << 20, true), 1);
		struct sim_lun *l = lun_of(0);
		uint8_t buf[4096];
		memset(buf, 0xa5, sizeof buf);
		CHECK_EQ(run_one(0, BLK_WRITE, 0, 8, 8, buf), 0);
		CHECK(memcmp(l->data + 8 * 512, buf, 4096) == 0);
		CHECK(memcmp(l->durable + 8 * 512, buf, 4096) != 0);
		CHECK_EQ(run_one(0, BLK_FLUSH, 0, 0, 0, NULL), 0);
		CHECK(memcmp(l->durable + 8 * 512, buf, 4096) == 0);
		memset(buf, 0x5a, sizeof buf);
		uint64_t syncs = sim.by_op[SCSI_OP_SYNC_CACHE_10];
		CHECK_EQ(run_one(0, BLK_WRITE, BLK_F_FUA, 64, 8, buf), 0);
		CHECK(memcmp(l->durable + 64 * 512, buf, 4096) == 0);
		CHECK_EQ(sim.by_op[SCSI_OP_SYNC_CACHE_10] - syncs, fua_native ? 0 : 1);
	}
	/* Without a write cache a flush sends nothing and FUA is a plain write. */
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 1024, false, false);
	CHECK_EQ(setup_host(254, 1 << 20, true), 1);
	uint64_t before = sim.ncmds;
	CHECK_EQ(run_one(0, BLK_FLUSH, 0, 0, 0, NULL), 0);
	CHECK_EQ(sim.ncmds, before);
	uint8_t buf[512] = { 1 };
	CHECK_EQ(run_one(0, BLK_WRITE, BLK_F_FUA, 3, 1, buf), 0);
	CHECK_EQ(sim.ncmds, before + 1);
	CHECK(memcmp(lun_of(0)->durable + 3 * 512, buf, 512) == 0);
	/* A write-protected unit: writes refused before anything is sent. */
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 1024, true, false)->wp = true;
	CHECK_EQ(setup_host(254, 1 << 20, true), 1);
	before = sim.ncmds;
	CHECK_EQ(run_one(0, BLK_WRITE, 0, 3, 1, buf), BLK_E_PROTECT);
	CHECK_EQ(sim.ncmds, before);
	CHECK_EQ(run_one(0, BLK_READ, 0, 3, 1, buf), 0);
	printf("ok: durability with native and emulated FUA, write-through and write-protected units\n");
}

/* Tight host limits cut requests into commands at block boundaries. */
static void test_split(void)
{
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 8192, true, true);
	sim_add_disk(&sim, 0, 1, 4096, 1024, true, false);
	CHECK_EQ(setup_host(3, 8192, true), 2);
	frag_min = 2048;                   /* three pieces always hold a 4 KiB block */
	for (int round = 0; round < 300; round++) {
		int u = round % 2;
		uint32_t per = u ? 8 : 1;
		uint32_t n = per * (1 + (uint32_t)rng_below(u ? 64 : 512));
		uint64_t sector = rng_below((8192 - n) / per + 1) * per;
		uint8_t *data = malloc(n * 512), *back = malloc(n * 512);
		for (uint32_t b = 0; b < n * 512; b++)
			data[b] = (uint8_t)rng_next();
		uint8_t flags = rng_below(2) ? BLK_F_FUA : 0;
		CHECK_EQ(run_one(u, BLK_WRITE, flags, sector, n, data), 0);
		CHECK_EQ(run_one(u, BLK_READ, 0, sector, n, back), 0);
		CHECK(memcmp(data, back, n * 512) == 0);
		if (flags)
			CHECK(memcmp(lun_of(u)->durable + sector * 512, data, n * 512) == 0);
		free(data);
		free(back);
	}
	frag_min = 100;
	CHECK(disks[0].stats.split > 0 && disks[1].stats.split > 0);
	/* Every command stayed inside the limits. */
	for (uint32_t i = 0; i < sim.nlog; i++)
		if (sim.log[i].opcode == SCSI_OP_READ_16 || sim.log[i].opcode == SCSI_OP_WRITE_16)
			CHECK(sim.log[i].nblocks * (sim.log[i].lun ? 4096u : 512u) <= 8192);
	/* 4 KiB blocks in 3 buffers of 1 KiB cannot be expressed: too fragmented. */
	static struct treq t;
	req_set(&t, 1, BLK_READ, 0, 0, 16);
	fragment(&t, 16 * 512, 1024, 1024);
	CHECK_EQ(blk_submit(&t.r), 0);
	wait_all(&t, 1);
	CHECK_EQ(t.status, BLK_E_TOOBIG);
	printf("ok: requests cut to 3 buffers / 8 KiB per command; a too-fragmented one refused\n");
}

/* ---- conditions ----------------------------------------------------------------- */

struct cond {
	const char *name;
	uint8_t op;                     /* BLK_READ / BLK_WRITE / BLK_FLUSH */
	uint8_t flags;
	uint8_t fault_op;               /* the SCSI opcode the fault hits */
	int count;                      /* how many commands it hits */
	uint8_t host_status, status, key, asc, ascq;
	bool descriptor, deferred, no_sense, unit_state;
	int want;                       /* the request's final status */
	int attempts;                   /* commands with fault_op sent */
	uint32_t wait_ms;               /* least clock time the retries must take */
	int event;                      /* an event kind that must have been reported, or -1 */
};

#define CC SCSI_S_CHECK_CONDITION
static const struct cond conds[] = {
	{ "unit attention once", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 6, 0x29, 0x00, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "capacity changed (descriptor sense)", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, CC, 6, 0x2a, 0x09, 1, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "unit attention forever", BLK_READ, 0, SCSI_OP_READ_16, 99, 0, CC, 6, 0x29, 0x00, 0, 0, 0, 0, BLK_E_IO, 5, 0, SCSI_EV_FAILED },
	{ "becoming ready 3 times", BLK_READ, 0, SCSI_OP_READ_16, 3, 0, CC, 2, 0x04, 0x01, 0, 0, 0, 0, 0, 4, 300, SCSI_EV_RETRY },
	{ "never ready", BLK_READ, 0, SCSI_OP_READ_16, 999, 0, CC, 2, 0x04, 0x01, 0, 0, 0, 0, BLK_E_NOTREADY, 60, 5900, SCSI_EV_FAILED },
	{ "needs START UNIT", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, CC, 2, 0x04, 0x02, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "no medium", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 2, 0x3a, 0x00, 0, 0, 0, 0, BLK_E_NOTREADY, 1, 0, SCSI_EV_FAILED },
	{ "manual intervention", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, CC, 2, 0x04, 0x03, 0, 0, 0, 0, BLK_E_NOTREADY, 1, 0, SCSI_EV_FAILED },
	{ "medium error on read", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 3, 0x11, 0x00, 0, 0, 0, 0, BLK_E_MEDIUM, 1, 0, SCSI_EV_FAILED },
	{ "medium error on write (descriptor)", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, CC, 3, 0x0c, 0x00, 1, 0, 0, 0, BLK_E_MEDIUM, 1, 0, SCSI_EV_FAILED },
	{ "deferred medium error", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, CC, 3, 0x0c, 0x00, 0, 1, 0, 0, BLK_E_MEDIUM, 1, 0, SCSI_EV_FAILED },
	{ "hardware error twice", BLK_READ, 0, SCSI_OP_READ_16, 2, 0, CC, 4, 0x44, 0x00, 0, 0, 0, 0, 0, 3, 0, SCSI_EV_RETRY },
	{ "hardware error forever", BLK_READ, 0, SCSI_OP_READ_16, 99, 0, CC, 4, 0x44, 0x00, 0, 0, 0, 0, BLK_E_IO, 5, 0, SCSI_EV_FAILED },
	{ "aborted command once", BLK_WRITE, BLK_F_FUA, SCSI_OP_WRITE_16, 1, 0, CC, 0xb, 0x00, 0x06, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "LBA out of range", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 5, 0x21, 0x00, 0, 0, 0, 0, BLK_E_RANGE, 1, 0, SCSI_EV_FAILED },
	{ "invalid operation code", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, CC, 5, 0x20, 0x00, 0, 0, 0, 0, BLK_E_UNSUPP, 1, 0, SCSI_EV_FAILED },
	{ "write protected", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, CC, 7, 0x27, 0x00, 0, 0, 0, 0, BLK_E_PROTECT, 1, 0, SCSI_EV_FAILED },
	{ "recovered error", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 1, 0x18, 0x00, 0, 0, 0, 0, 0, 1, 0, SCSI_EV_RECOVERED },
	{ "no sense", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 0, 0x00, 0x00, 0, 0, 0, 0, 0, 1, 0, -1 },
	{ "blank check", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 8, 0x00, 0x05, 0, 0, 0, 0, BLK_E_IO, 1, 0, SCSI_EV_FAILED },
	{ "check condition without sense", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, CC, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "BUSY twice", BLK_WRITE, 0, SCSI_OP_WRITE_16, 2, 0, SCSI_S_BUSY, 0, 0, 0, 0, 0, 0, 0, 0, 3, 20, SCSI_EV_RETRY },
	{ "TASK SET FULL once", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, SCSI_S_TASK_SET_FULL, 0, 0, 0, 0, 0, 0, 0, 0, 2, 10, SCSI_EV_RETRY },
	{ "BUSY forever", BLK_READ, 0, SCSI_OP_READ_16, 999, 0, SCSI_S_BUSY, 0, 0, 0, 0, 0, 0, 0, BLK_E_IO, 30, 290, SCSI_EV_FAILED },
	{ "TASK ABORTED once", BLK_READ, 0, SCSI_OP_READ_16, 1, 0, SCSI_S_TASK_ABORTED, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "reservation conflict", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, 0, SCSI_S_RESERVATION_CONFLICT, 0, 0, 0, 0, 0, 0, 0, BLK_E_IO, 1, 0, SCSI_EV_FAILED },
	{ "host reset once", BLK_READ, 0, SCSI_OP_READ_16, 1, SCSI_HOST_RESET, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "transport failure once", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, SCSI_HOST_TRANSPORT, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "host busy once", BLK_READ, 0, SCSI_OP_READ_16, 1, SCSI_HOST_BUSY, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 10, SCSI_EV_RETRY },
	{ "aborted by the host once", BLK_READ, 0, SCSI_OP_READ_16, 1, SCSI_HOST_ABORTED, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "host failure", BLK_READ, 0, SCSI_OP_READ_16, 1, SCSI_HOST_FAILED, 0, 0, 0, 0, 0, 0, 0, 0, BLK_E_IO, 1, 0, SCSI_EV_FAILED },
	{ "data overrun", BLK_READ, 0, SCSI_OP_READ_16, 1, SCSI_HOST_OVERRUN, 0, 0, 0, 0, 0, 0, 0, 0, BLK_E_IO, 1, 0, SCSI_EV_FAILED },
	{ "target gone", BLK_WRITE, 0, SCSI_OP_WRITE_16, 1, SCSI_HOST_NO_TARGET, 0, 0, 0, 0, 0, 0, 0, 0, BLK_E_UNIT, 1, 0, SCSI_EV_FAILED },
	{ "flush: hardware error once", BLK_FLUSH, 0, SCSI_OP_SYNC_CACHE_10, 1, 0, CC, 4, 0x44, 0x00, 0, 0, 0, 0, 0, 2, 0, SCSI_EV_RETRY },
	{ "flush: write error", BLK_FLUSH, 0, SCSI_OP_SYNC_CACHE_10, 1, 0, CC, 3, 0x0c, 0x00, 0, 0, 0, 0, BLK_E_MEDIUM, 1, 0, SCSI_EV_FAILED },
};

static void test_conditions(void)
{
	for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++) {
		const struct cond *c = &conds[i];
		for (int native = 0; native < 2; native++) {
			sim_init(&sim);
			sim_add_disk(&sim, 0, 0, 512, 4096, true, native);
			CHECK_EQ(setup_host(254, 1 << 20, true), 1);
			struct sim_fault *f = sim_fault(&sim, c->fault_op, c->count);
			f->host_status = c->host_status;
			f->status = c->status;
			f->key = c->key;
			f->asc = c->asc;
			f->ascq = c->ascq;
			f->descriptor = c->descriptor;
			f->deferred = c->deferred;
			f->no_sense = c->no_sense;
			f->info = true;
			memset(&events, 0, sizeof events);
			uint64_t sent = sim.by_op[c->fault_op];
			uint64_t t0 = fh.now;
			uint8_t data[8 * 512], back[8 * 512];
			for (int b = 0; b < (int)sizeof data; b++)
				data[b] = (uint8_t)(b * 3 + i);
			int st = run_one(0, c->op, c->flags, 40, c->op == BLK_FLUSH ? 0 : 8, data);
			if (st != c->want) {
				fprintf(stderr, "condition \"%s\": status %d, want %d\n", c->name, st, c->want);
				exit(1);
			}
			int attempts = (int)(sim.by_op[c->fault_op] - sent);
			if (attempts != c->attempts) {
				fprintf(stderr, "condition \"%s\": %d attempts, want %d\n", c->name, attempts, c->attempts);
				exit(1);
			}
			if (fh.now - t0 < (uint64_t)c->wait_ms * 1000000u) {
				fprintf(stderr, "condition \"%s\": retried after %lu ms, must wait %u\n", c->name,
				        (unsigned long)((fh.now - t0) / 1000000), c->wait_ms);
				exit(1);
			}
			if (c->event >= 0 && events.n[c->event] == 0) {
				fprintf(stderr, "condition \"%s\": no event of kind %d\n", c->name, c->event);
				exit(1);
			}
			if (c->want != 0)
				CHECK_EQ(events.last.error, c->want);
			/* A success moved the data; a failure of a write left the old data. */
			if (c->op == BLK_WRITE && c->want == 0) {
				CHECK(memcmp(lun_of(0)->data + 40 * 512, data, sizeof data) == 0);
				if (c->flags & BLK_F_FUA)
					CHECK(memcmp(lun_of(0)->durable + 40 * 512, data, sizeof data) == 0);
			}
			if (c->op == BLK_READ && c->want == 0) {
				CHECK_EQ(run_one(0, BLK_READ, 0, 40, 8, back), 0);
				CHECK(memcmp(lun_of(0)->data + 40 * 512, back, sizeof back) == 0);
			}
			/* The unit keeps working afterwards. */
			sim_clear_faults(&sim);
			CHECK_EQ(run_one(0, BLK_WRITE, 0, 100, 8, data), 0);
			CHECK_EQ(run_one(0, BLK_READ, 0, 100, 8, back), 0);
			CHECK(memcmp(data, back, sizeof data) == 0);
		}
	}
	/* A unit that asks for START UNIT: one is sent, then the command again. */
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 4096, true, true);
	CHECK_EQ(setup_host(254, 1 << 20, true), 1);
	sim.t[0].lun[0].stopped = true;
	uint8_t data[512] = { 7 };
	uint64_t starts = sim.by_op[SCSI_OP_START_STOP_UNIT];
	CHECK_EQ(run_one(0, BLK_WRITE, 0, 1, 1, data), 0);
	CHECK_EQ(sim.by_op[SCSI_OP_START_STOP_UNIT] - starts, 1);
	/* A failure in the middle of a split request: the rest is not sent. */
	sim_init(&sim);
	sim_add_disk(&sim, 0, 0, 512, 4096, true, true);
	CHECK_EQ(setup_host(254, 4096, true), 1);
	struct sim_fault *f = sim_fault(&sim, SCSI_OP_WRITE_16, 1);
	f->key = SCSI_K_MEDIUM_ERROR;
	f->asc = 0x0c;
	f->lba_lo = 208;
	f->lba_hi = 208;
	uint8_t big[64 * 512];
	memset(big, 0x3c, sizeof big);
	uint64_t writes = sim.by_op[SCSI_OP_WRITE_16];
	CHECK_EQ(run_one(0, BLK_WRITE, 0, 200, 64, big), BLK_E_MEDIUM);
	CHECK_EQ(sim.by_op[SCSI_OP_WRITE_16] - writes, 2);      /* 200..207 done, 208..215 failed, no more */
	CHECK(memcmp(lun_of(0)->data + 200 * 512, big, 8 * 512) == 0);
	CHECK(memcmp(lun_of(0)->data + 208 * 512, big, 512) != 0);
	printf("ok: %zu conditions, each with native and emulated FUA: errors, attempts, waits and events\n",
	       sizeof conds / sizeof conds[0]);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng_seed(0x5c5105ull);
	test_judge();
	test_scan();
	test_durability();
	test_random_io(false);
	test_random_io(true);
	test_split();
	test_conditions();
	sim_free(&sim);
	return 0;
}
