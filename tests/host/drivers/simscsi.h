/*
 * simscsi.h - an emulated SCSI target for host tests: a few targets, each
 * with a few logical units holding a RAM image, answering the commands the
 * SCSI layer sends (TEST UNIT READY, INQUIRY, REPORT LUNS, READ CAPACITY
 * (16) and (10), MODE SENSE(10), START STOP UNIT, READ(16), WRITE(16) with
 * FUA, SYNCHRONIZE CACHE(10)) the way SPC and SBC say a disk does, and able
 * to answer with every condition the layer handles:
 *
 *  - unit states: a pending UNIT ATTENTION, "becoming ready" for the next N
 *    commands, stopped (needs START UNIT), no medium, write-protected;
 *  - injected faults matching an operation code, LUN and LBA range for the
 *    next N commands: any status byte, any sense key/ASC/ASCQ in fixed or
 *    descriptor format (or no sense data at all), or a host-level failure.
 *
 * A unit with a write cache keeps two images: what reads see, and what
 * would survive a power cut (updated by FUA writes and SYNCHRONIZE CACHE),
 * so tests can check durability.  Every command is logged.
 *
 * The target sees data as one flat buffer; the harness (a fake host in
 * test_scsi.c, a simulated virtio device in test_vscsi.c) gathers and
 * scatters.
 */
#ifndef TESTS_DRIVERS_SIMSCSI_H
#define TESTS_DRIVERS_SIMSCSI_H

#include <stdint.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "drivers/scsi.h"
#include "check.h"

#define SIM_TARGETS 4
#define SIM_LUNS    8
#define SIM_FAULTS  16
#define SIM_LOG     4096

struct sim_fault {
	bool armed;
	uint8_t opcode;                /* 0xff: any */
	uint16_t target;               /* 0xffff: any */
	uint32_t lun;                  /* 0xffffffff: any */
	uint64_t lba_lo, lba_hi;       /* for READ/WRITE: the command's blocks must overlap this */
	int count;                     /* commands it still hits */
	uint8_t host_status;           /* non-zero: fail at the host level */
	uint8_t status;                /* the status byte (CHECK CONDITION for sense) */
	uint8_t key, asc, ascq;
	bool descriptor;               /* sense in descriptor format */
	bool deferred;                 /* response code 71h/73h */
	bool no_sense;                 /* CHECK CONDITION with no sense bytes */
	bool info;                     /* put the first LBA in the INFORMATION field */
};

struct sim_lun {
	bool present;
	uint8_t type;                  /* 0: direct-access block device */
	uint32_t bs;
	uint64_t nblocks;
	uint8_t *data, *durable;
	bool wce, dpofua, wp;
	bool ua; uint8_t ua_asc, ua_ascq;
	int becoming;                  /* commands left answering NOT READY 04/01 */
	bool stopped;                  /* NOT READY 04/02 until START UNIT */
	bool no_medium;
	bool no_rc16;                  /* READ CAPACITY(16) is an invalid operation code */
	bool no_mode_sense;
};

struct sim_target {
	bool present;
	bool no_report_luns;
	struct sim_lun lun[SIM_LUNS];
};

struct sim_logent {
	uint16_t target;
	uint32_t lun;
	uint8_t opcode;
	bool fua;
	uint64_t lba;
	uint32_t nblocks;
	uint8_t status, host_status;
};

struct simscsi {
	struct sim_target t[SIM_TARGETS];
	struct sim_fault fault[SIM_FAULTS];
	struct sim_logent log[SIM_LOG];
	uint32_t nlog;
	uint64_t ncmds;
	uint64_t by_op[256];
};

struct sim_result {
	uint8_t host_status, status;
	uint8_t sense[SCSI_SENSE_MAX];
	uint8_t sense_len;
	uint32_t resid;
};

static inline void sim_free(struct simscsi *s);

/* Start over: no targets, no faults (the images of an earlier setup are freed). */
static inline void sim_init(struct simscsi *s)
{
	sim_free(s);
}

/* Make a disk LUN; its image starts as a pattern so reads are checkable. */
static inline struct sim_lun *sim_add_disk(struct simscsi *s, uint16_t t, uint32_t l, uint32_t bs,
                                           uint64_t nblocks, bool wce, bool dpofua)
{
	CHECK(t < SIM_TARGETS && l < SIM_LUNS);
	s->t[t].present = true;
	struct sim_lun *u = &s->t[t].lun[l];
	u->present = true;
	u->type = 0;
	u->bs = bs;
	u->nblocks = nblocks;
	free(u->data);
	free(u->durable);
	u->data = malloc(bs * nblocks);
	u->durable = malloc(bs * nblocks);
	CHECK(u->data && u->durable);
	for (uint64_t i = 0; i < bs * nblocks; i++)
		u->data[i] = (uint8_t)(i * 7 + t * 31 + l * 131);
	memcpy(u->durable, u->data, bs * nblocks);
	u->wce = wce;
	u->dpofua = dpofua;
	/* Like a real unit after power-on: the first command gets a unit attention. */
	u->ua = true;
	u->ua_asc = 0x29;
	u->ua_ascq = 0x00;
	return u;
}

static inline void sim_free(struct simscsi *s)
{
	for (int t = 0; t < SIM_TARGETS; t++)
		for (int l = 0; l < SIM_LUNS; l++) {
			free(s->t[t].lun[l].data);
			free(s->t[t].lun[l].durable);
		}
	memset(s, 0, sizeof *s);
}

/* Arm a fault; returns it so the test can adjust fields. */
static inline struct sim_fault *sim_fault(struct simscsi *s, uint8_t opcode, int count)
{
	for (int i = 0; i < SIM_FAULTS; i++)
		if (!s->fault[i].armed) {
			s->fault[i] = (struct sim_fault){ .armed = true, .opcode = opcode, .target = 0xffff,
			                                  .lun = 0xffffffffu, .lba_lo = 0, .lba_hi = UINT64_MAX,
			                                  .count = count, .status = SCSI_S_CHECK_CONDITION };
			return &s->fault[i];
		}
	CHECK(!"too many faults");
	return NULL;
}

static inline void sim_clear_faults(struct simscsi *s)
{
	memset(s->fault, 0, sizeof s->fault);
}

static inline uint32_t sim_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t sim_be64(const uint8_t *p) { return (uint64_t)sim_be32(p) << 32 | sim_be32(p + 4); }
static inline void sim_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}
static inline void sim_put64(uint8_t *p, uint64_t v) { sim_put32(p, (uint32_t)(v >> 32)); sim_put32(p + 4, (uint32_t)v); }

static inline void sim_sense(struct sim_result *r, uint8_t key, uint8_t asc, uint8_t ascq, bool descriptor,
                             bool deferred, bool info, uint64_t lba)
{
	r->status = SCSI_S_CHECK_CONDITION;
	memset(r->sense, 0, sizeof r->sense);
	if (descriptor) {
		r->sense[0] = deferred ? 0x73 : 0x72;
		r->sense[1] = key;
		r->sense[2] = asc;
		r->sense[3] = ascq;
		r->sense[7] = info ? 12 : 0;
		if (info) {
			r->sense[8] = 0x00;       /* information descriptor */
			r->sense[9] = 0x0a;
			r->sense[10] = 0x80;      /* VALID */
			sim_put64(r->sense + 12, lba);
		}
		r->sense_len = (uint8_t)(8 + r->sense[7]);
	} else {
		r->sense[0] = (uint8_t)((deferred ? 0x71 : 0x70) | (info ? 0x80 : 0));
		r->sense[2] = key;
		if (info)
			sim_put32(r->sense + 3, (uint32_t)lba);
		r->sense[7] = 10;
		r->sense[12] = asc;
		r->sense[13] = ascq;
		r->sense_len = 18;
	}
}

/* The LBA range a READ/WRITE(16) covers, for fault matching. */
static inline bool sim_rw(const uint8_t *cdb, uint64_t *lba, uint32_t *n)
{
	if (cdb[0] != SCSI_OP_READ_16 && cdb[0] != SCSI_OP_WRITE_16)
		return false;
	*lba = sim_be64(cdb + 2);
	*n = sim_be32(cdb + 10);
	return true;
}

static inline void sim_log(struct simscsi *s, uint16_t t, uint32_t l, const uint8_t *cdb, const struct sim_result *r)
{
	s->ncmds++;
	s->by_op[cdb[0]]++;
	if (s->nlog == SIM_LOG)
		return;
	struct sim_logent *e = &s->log[s->nlog++];
	*e = (struct sim_logent){ .target = t, .lun = l, .opcode = cdb[0], .status = r->status,
	                          .host_status = r->host_status };
	uint64_t lba;
	uint32_t n;
	if (sim_rw(cdb, &lba, &n)) {
		e->lba = lba;
		e->nblocks = n;
		e->fua = (cdb[1] & SCSI_CDB16_FUA) != 0;
	}
}

/*
 * Run one command.  data is the flat data buffer of data_len bytes (the
 * data-out bytes for a write; room for data-in for a read).  For a read the
 * result's resid tells how much of data_len was not filled.
 */
static inline void sim_exec(struct simscsi *s, uint16_t t, uint32_t l, const uint8_t *cdb,
                            uint8_t *data, uint32_t data_len, struct sim_result *r)
{
	memset(r, 0, sizeof *r);
	r->resid = data_len;
	uint8_t op = cdb[0];
	if (t >= SIM_TARGETS || !s->t[t].present) {
		r->host_status = SCSI_HOST_NO_TARGET;
		sim_log(s, t, l, cdb, r);
		return;
	}
	struct sim_target *tg = &s->t[t];
	struct sim_lun *u = l < SIM_LUNS ? &tg->lun[l] : NULL;
	bool present = u != NULL && u->present;

	/* Injected faults come first. */
	uint64_t lba = 0;
	uint32_t nb = 0;
	bool rw = sim_rw(cdb, &lba, &nb);
	for (int i = 0; i < SIM_FAULTS; i++) {
		struct sim_fault *f = &s->fault[i];
		if (!f->armed || f->count <= 0 || (f->opcode != 0xff && f->opcode != op) ||
		    (f->target != 0xffff && f->target != t) || (f->lun != 0xffffffffu && f->lun != l))
			continue;
		if (rw && (lba + nb <= f->lba_lo || lba > f->lba_hi))
			continue;
		f->count--;
		if (f->host_status != 0) {
			r->host_status = f->host_status;
		} else if (f->status != SCSI_S_CHECK_CONDITION) {
			r->status = f->status;
		} else if (f->no_sense) {
			r->status = SCSI_S_CHECK_CONDITION;
			r->sense_len = 0;
		} else {
			sim_sense(r, f->key, f->asc, f->ascq, f->descriptor, f->deferred, f->info, lba);
		}
		/* A RECOVERED ERROR or NO SENSE still did the work: fall through
		 * for those so the data moves; everything else stops here. */
		if (!(r->host_status == 0 && r->status == SCSI_S_CHECK_CONDITION && r->sense_len > 0 &&
		      (f->key == SCSI_K_RECOVERED_ERROR || f->key == SCSI_K_NO_SENSE))) {
			sim_log(s, t, l, cdb, r);
			return;
		}
		break;
	}
	struct sim_result saved = *r;
	bool keep_sense = r->status == SCSI_S_CHECK_CONDITION;

	switch (op) {
	case SCSI_OP_REPORT_LUNS: {
		if (tg->no_report_luns) {
			sim_sense(r, SCSI_K_ILLEGAL_REQUEST, 0x20, 0x00, false, false, false, 0);
			break;
		}
		uint8_t buf[8 + 8 * SIM_LUNS] = { 0 };
		uint32_t n = 0;
		/* List them in descending order, as some targets do. */
		for (int k = SIM_LUNS - 1; k >= 0; k--)
			if (tg->lun[k].present) {
				buf[8 + 8 * n] = 0x40;           /* flat space addressing */
				buf[8 + 8 * n + 1] = (uint8_t)k;
				n++;
			}
		sim_put32(buf, 8 * n);
		uint32_t len = 8 + 8 * n, alloc = sim_be32(cdb + 6);
		if (len > alloc) len = alloc;
		if (len > data_len) len = data_len;
		memcpy(data, buf, len);
		r->resid = data_len - len;
		break;
	}
	case SCSI_OP_INQUIRY: {
		uint8_t buf[96] = { 0 };
		if (!present) {
			buf[0] = 0x7f;                        /* qualifier 3, type 1Fh: no unit */
		} else {
			buf[0] = u->type;
			buf[2] = 6;                           /* SPC-4 */
			buf[3] = 2;
			buf[4] = 91;
			memcpy(buf + 8, "SIMSCSI ", 8);
			memcpy(buf + 16, "EMULATED DISK   ", 16);
			memcpy(buf + 32, "1.0 ", 4);
		}
		uint32_t alloc = (uint32_t)cdb[3] << 8 | cdb[4], len = 96;
		if (len > alloc) len = alloc;
		if (len > data_len) len = data_len;
		memcpy(data, buf, len);
		r->resid = data_len - len;
		break;
	}
	default:
		if (!present) {
			sim_sense(r, SCSI_K_ILLEGAL_REQUEST, 0x25, 0x00, false, false, false, 0);
			break;
		}
		if (u->ua) {
			u->ua = false;
			sim_sense(r, SCSI_K_UNIT_ATTENTION, u->ua_asc, u->ua_ascq, false, false, false, 0);
			break;
		}
		if (u->no_medium) {
			sim_sense(r, SCSI_K_NOT_READY, 0x3a, 0x00, false, false, false, 0);
			break;
		}
		if (u->stopped && op != SCSI_OP_START_STOP_UNIT) {
			sim_sense(r, SCSI_K_NOT_READY, 0x04, 0x02, false, false, false, 0);
			break;
		}
		if (u->becoming > 0 && op != SCSI_OP_START_STOP_UNIT) {
			u->becoming--;
			sim_sense(r, SCSI_K_NOT_READY, 0x04, 0x01, false, false, false, 0);
			break;
		}
		switch (op) {
		case SCSI_OP_TEST_UNIT_READY:
			break;
		case SCSI_OP_START_STOP_UNIT:
			if (cdb[4] & 1)
				u->stopped = false;
			break;
		case SCSI_OP_SERVICE_IN_16: {
			if (u->no_rc16 || (cdb[1] & 0x1f) != SCSI_SA_READ_CAPACITY_16) {
				sim_sense(r, SCSI_K_ILLEGAL_REQUEST, 0x20, 0x00, false, false, false, 0);
				break;
			}
			uint8_t buf[32] = { 0 };
			sim_put64(buf, u->nblocks - 1);
			sim_put32(buf + 8, u->bs);
			uint32_t len = 32, alloc = sim_be32(cdb + 10);
			if (len > alloc) len = alloc;
			if (len > data_len) len = data_len;
			memcpy(data, buf, len);
			r->resid = data_len - len;
			break;
		}
		case SCSI_OP_READ_CAPACITY_10: {
			uint8_t buf[8];
			sim_put32(buf, u->nblocks - 1 > 0xffffffffull ? 0xffffffffu : (uint32_t)(u->nblocks - 1));
			sim_put32(buf + 4, u->bs);
			uint32_t len = data_len < 8 ? data_len : 8;
			memcpy(data, buf, len);
			r->resid = data_len - len;
			break;
		}
		case SCSI_OP_MODE_SENSE_10: {
			if (u->no_mode_sense || (cdb[2] & 0x3f) != 0x08) {
				sim_sense(r, SCSI_K_ILLEGAL_REQUEST, 0x24, 0x00, false, false, false, 0);
				break;
			}
			uint8_t buf[8 + 20] = { 0 };
			buf[1] = sizeof buf - 2;
			buf[3] = (uint8_t)((u->wp ? 0x80 : 0) | (u->dpofua ? 0x10 : 0));
			buf[8] = 0x08;
			buf[9] = 0x12;
			buf[10] = u->wce ? 0x04 : 0;
			uint32_t alloc = (uint32_t)cdb[7] << 8 | cdb[8], len = sizeof buf;
			if (len > alloc) len = alloc;
			if (len > data_len) len = data_len;
			memcpy(data, buf, len);
			r->resid = data_len - len;
			break;
		}
		case SCSI_OP_SYNC_CACHE_10:
			memcpy(u->durable, u->data, (size_t)u->bs * u->nblocks);
			break;
		case SCSI_OP_READ_16:
		case SCSI_OP_WRITE_16: {
			if (lba > u->nblocks || nb > u->nblocks - lba) {
				sim_sense(r, SCSI_K_ILLEGAL_REQUEST, 0x21, 0x00, false, false, false, 0);
				break;
			}
			uint64_t bytes = (uint64_t)nb * u->bs;
			CHECK(bytes == data_len);            /* the layer never sends a mismatch */
			if (op == SCSI_OP_WRITE_16 && u->wp) {
				sim_sense(r, SCSI_K_DATA_PROTECT, 0x27, 0x00, false, false, false, 0);
				break;
			}
			uint8_t *img = u->data + lba * u->bs;
			if (op == SCSI_OP_READ_16) {
				memcpy(data, img, bytes);
			} else {
				memcpy(img, data, bytes);
				if (!u->wce || (cdb[1] & SCSI_CDB16_FUA))
					memcpy(u->durable + lba * u->bs, data, bytes);
			}
			r->resid = 0;
			break;
		}
		default:
			sim_sense(r, SCSI_K_ILLEGAL_REQUEST, 0x20, 0x00, false, false, false, 0);
			break;
		}
	}
	/* A recovered error keeps its sense over the work's (good) result. */
	if (keep_sense && r->status == SCSI_S_GOOD) {
		uint32_t resid = r->resid;
		*r = saved;
		r->resid = resid;
	}
	sim_log(s, t, l, cdb, r);
}

#endif
