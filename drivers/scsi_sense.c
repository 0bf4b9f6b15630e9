/*
 * scsi_sense.c - what a SCSI target's answer means (see scsi.h): sense
 * data decoding in both formats, names for sense keys and the common
 * additional sense codes, and scsi_judge(), the retry policy.
 *
 * The policy follows what SPC and SBC say each condition means:
 *
 *   UNIT ATTENTION    the command was not executed (the unit reports a reset,
 *                     a changed capacity or LUN inventory, ...): send again;
 *   NOT READY         04/01 and the other "in progress" qualifiers: the unit
 *                     will be ready, so try again a little later; 04/02: it
 *                     wants START UNIT first; no medium or manual
 *                     intervention: fail, retrying cannot help;
 *   ABORTED COMMAND,  the target gave up on this attempt (a transport or
 *   HARDWARE ERROR    internal hiccup): a few more attempts;
 *   BUSY, TASK SET    the target is saturated: wait and try again;
 *   FULL
 *   MEDIUM ERROR      the device has already retried internally and the
 *                     block is bad: fail at once (BLK_E_MEDIUM);
 *   ILLEGAL REQUEST   our fault (LBA out of range, unsupported command):
 *                     fail at once;
 *   DATA PROTECT      write-protected: fail (BLK_E_PROTECT);
 *   RECOVERED ERROR   done; the data is good, but it is worth a note.
 *
 * Portable: no allocation, no printing.
 */
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "drivers/scsi.h"
#include "drivers/blk.h"

/* How many attempts each kind of trouble deserves. */
#define TRIES_QUICK      5      /* retry at once: unit attention, aborted, transport */
#define TRIES_BUSY       30     /* BUSY / TASK SET FULL, DELAY_BUSY_MS apart         */
#define TRIES_BECOMING   60     /* NOT READY, in progress: DELAY_READY_MS apart      */
#define DELAY_BUSY_MS    10
#define DELAY_READY_MS   100

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

int scsi_sense_decode(const uint8_t *buf, uint32_t len, struct scsi_sense *out)
{
	*out = (struct scsi_sense){ 0 };
	if (buf == NULL || len < 1)
		return -1;
	uint8_t code = buf[0] & 0x7f;
	if (code == 0x70 || code == 0x71) {
		/* Fixed format: key in byte 2, INFORMATION in 3..6, ASC/ASCQ in 12/13
		 * if the additional length (byte 7) reaches them. */
		if (len < 3)
			return -1;
		out->deferred = code == 0x71;
		out->key = buf[2] & 0x0f;
		if (len >= 7 && (buf[0] & 0x80)) {
			out->info_valid = true;
			out->info = be32(buf + 3);
		}
		uint32_t end = len >= 8 ? 8u + buf[7] : len;
		if (end > len)
			end = len;
		if (end >= 13)
			out->asc = buf[12];
		if (end >= 14)
			out->ascq = buf[13];
		return 0;
	}
	if (code == 0x72 || code == 0x73) {
		/* Descriptor format: key, ASC, ASCQ in bytes 1..3; descriptors from 8. */
		if (len < 4)
			return -1;
		out->deferred = code == 0x73;
		out->key = buf[1] & 0x0f;
		out->asc = buf[2];
		out->ascq = buf[3];
		uint32_t end = len >= 8 ? 8u + buf[7] : len;
		if (end > len)
			end = len;
		for (uint32_t at = 8; at + 2 <= end;) {
			uint8_t type = buf[at], dlen = buf[at + 1];
			if (at + 2 + dlen > end)
				break;             /* a descriptor running off the end: ignore the rest */
			if (type == 0x00 && dlen >= 0x0a && (buf[at + 2] & 0x80)) {
				out->info_valid = true;
				out->info = be64(buf + at + 4);
			}
			at += 2u + dlen;
		}
		return 0;
	}
	return -1;
}

const char *scsi_key_name(uint8_t key)
{
	static const char *const names[16] = {
		"NO SENSE", "RECOVERED ERROR", "NOT READY", "MEDIUM ERROR",
		"HARDWARE ERROR", "ILLEGAL REQUEST", "UNIT ATTENTION", "DATA PROTECT",
		"BLANK CHECK", "VENDOR SPECIFIC", "COPY ABORTED", "ABORTED COMMAND",
		"reserved sense key 0xc", "VOLUME OVERFLOW", "MISCOMPARE", "COMPLETED",
	};
	return names[key & 0x0f];
}

/* The additional sense codes this layer acts on or that a disk reports
 * commonly (SPC-4, annex D). */
static const struct { uint8_t asc, ascq; const char *name; } ascs[] = {
	{ 0x00, 0x00, "no additional sense information" },
	{ 0x00, 0x06, "I/O process terminated" },
	{ 0x04, 0x00, "logical unit not ready, cause not reportable" },
	{ 0x04, 0x01, "logical unit is in process of becoming ready" },
	{ 0x04, 0x02, "logical unit not ready, initializing command required" },
	{ 0x04, 0x03, "logical unit not ready, manual intervention required" },
	{ 0x04, 0x04, "logical unit not ready, format in progress" },
	{ 0x04, 0x07, "logical unit not ready, operation in progress" },
	{ 0x04, 0x09, "logical unit not ready, self-test in progress" },
	{ 0x0c, 0x00, "write error" },
	{ 0x0c, 0x02, "write error, auto reallocation failed" },
	{ 0x11, 0x00, "unrecovered read error" },
	{ 0x11, 0x04, "unrecovered read error, auto reallocate failed" },
	{ 0x14, 0x01, "record not found" },
	{ 0x17, 0x01, "recovered data with retries" },
	{ 0x18, 0x00, "recovered data with error correction applied" },
	{ 0x1a, 0x00, "parameter list length error" },
	{ 0x20, 0x00, "invalid command operation code" },
	{ 0x21, 0x00, "logical block address out of range" },
	{ 0x24, 0x00, "invalid field in CDB" },
	{ 0x25, 0x00, "logical unit not supported" },
	{ 0x27, 0x00, "write protected" },
	{ 0x27, 0x07, "space allocation failed write protect" },
	{ 0x28, 0x00, "not ready to ready change, medium may have changed" },
	{ 0x29, 0x00, "power on, reset, or bus device reset occurred" },
	{ 0x29, 0x01, "power on occurred" },
	{ 0x29, 0x02, "SCSI bus reset occurred" },
	{ 0x29, 0x03, "bus device reset function occurred" },
	{ 0x2a, 0x01, "mode parameters changed" },
	{ 0x2a, 0x09, "capacity data has changed" },
	{ 0x31, 0x00, "medium format corrupted" },
	{ 0x3a, 0x00, "medium not present" },
	{ 0x3f, 0x01, "microcode has been changed" },
	{ 0x3f, 0x0e, "reported LUNs data has changed" },
	{ 0x44, 0x00, "internal target failure" },
	{ 0x47, 0x00, "SCSI parity error" },
	{ 0x4b, 0x00, "data phase error" },
	{ 0x5d, 0x00, "failure prediction threshold exceeded" },
};

const char *scsi_asc_name(uint8_t asc, uint8_t ascq)
{
	for (size_t i = 0; i < sizeof ascs / sizeof ascs[0]; i++)
		if (ascs[i].asc == asc && ascs[i].ascq == ascq)
			return ascs[i].name;
	return NULL;
}

static void verdict(struct scsi_verdict *v, enum scsi_action a, int error, uint32_t tries,
                    uint32_t delay_ms, const char *what)
{
	v->action = a;
	v->error = error;
	v->max_tries = tries;
	v->delay_ms = delay_ms;
	v->what = what;
}

/* CHECK CONDITION: the sense data decides. */
static void judge_sense(const struct scsi_cmd *c, struct scsi_verdict *v)
{
	if (scsi_sense_decode(c->sense, c->sense_len < SCSI_SENSE_MAX ? c->sense_len : SCSI_SENSE_MAX,
	                      &v->sense) != 0) {
		/* Check condition without usable sense: we cannot know why, so the
		 * command deserves another attempt or two, then an I/O error. */
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "check condition without sense data");
		return;
	}
	v->has_sense = true;
	const struct scsi_sense *s = &v->sense;
	switch (s->key) {
	case SCSI_K_NO_SENSE:
		verdict(v, SCSI_ACT_DONE, 0, 1, 0, "no sense");
		return;
	case SCSI_K_RECOVERED_ERROR:
		v->recovered = true;
		verdict(v, SCSI_ACT_DONE, 0, 1, 0, "recovered error");
		return;
	case SCSI_K_NOT_READY:
		if (s->asc == 0x04 && s->ascq == 0x02) {
			verdict(v, SCSI_ACT_START_UNIT, BLK_E_NOTREADY, TRIES_QUICK, 0, "unit needs START UNIT");
		} else if (s->asc == 0x04 && s->ascq == 0x03) {
			verdict(v, SCSI_ACT_FAIL, BLK_E_NOTREADY, 1, 0, "unit needs manual intervention");
		} else if (s->asc == 0x3a) {
			verdict(v, SCSI_ACT_FAIL, BLK_E_NOTREADY, 1, 0, "no medium");
		} else {
			/* 04/01 becoming ready, 04/04 format, 04/07 operation, ... in
			 * progress, or not reportable: the unit expects to be ready. */
			verdict(v, SCSI_ACT_RETRY_LATER, BLK_E_NOTREADY, TRIES_BECOMING, DELAY_READY_MS,
			        "unit not ready yet");
		}
		return;
	case SCSI_K_MEDIUM_ERROR:
		verdict(v, SCSI_ACT_FAIL, BLK_E_MEDIUM, 1, 0, "medium error");
		return;
	case SCSI_K_HARDWARE_ERROR:
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "hardware error");
		return;
	case SCSI_K_ILLEGAL_REQUEST:
		if (s->asc == 0x21)
			verdict(v, SCSI_ACT_FAIL, BLK_E_RANGE, 1, 0, "address out of range");
		else if (s->asc == 0x25)
			verdict(v, SCSI_ACT_FAIL, BLK_E_UNIT, 1, 0, "no such logical unit");
		else
			verdict(v, SCSI_ACT_FAIL, BLK_E_UNSUPP, 1, 0, "illegal request");
		return;
	case SCSI_K_UNIT_ATTENTION:
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "unit attention");
		return;
	case SCSI_K_DATA_PROTECT:
		verdict(v, SCSI_ACT_FAIL, BLK_E_PROTECT, 1, 0, "write protected");
		return;
	case SCSI_K_ABORTED_COMMAND:
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "command aborted by the target");
		return;
	default:
		/* BLANK CHECK, COPY ABORTED, VOLUME OVERFLOW, MISCOMPARE and the
		 * vendor's own: nothing a disk read or write expects. */
		verdict(v, SCSI_ACT_FAIL, BLK_E_IO, 1, 0, "unexpected sense key");
		return;
	}
}

void scsi_judge(const struct scsi_cmd *c, struct scsi_verdict *v)
{
	*v = (struct scsi_verdict){ 0 };
	switch (c->host_status) {
	case SCSI_HOST_OK:
		break;
	case SCSI_HOST_NO_TARGET:
		verdict(v, SCSI_ACT_FAIL, BLK_E_UNIT, 1, 0, "no such target");
		return;
	case SCSI_HOST_RESET:
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "lost to a reset");
		return;
	case SCSI_HOST_BUSY:
		verdict(v, SCSI_ACT_RETRY_LATER, BLK_E_IO, TRIES_BUSY, DELAY_BUSY_MS, "host busy");
		return;
	case SCSI_HOST_ABORTED:
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "aborted by the host");
		return;
	case SCSI_HOST_TRANSPORT:
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "transport failure");
		return;
	case SCSI_HOST_OVERRUN:
		verdict(v, SCSI_ACT_FAIL, BLK_E_IO, 1, 0, "data overrun");
		return;
	default:
		verdict(v, SCSI_ACT_FAIL, BLK_E_IO, 1, 0, "host failure");
		return;
	}
	switch (c->status) {
	case SCSI_S_GOOD:
	case SCSI_S_CONDITION_MET:
		verdict(v, SCSI_ACT_DONE, 0, 1, 0, "good");
		return;
	case SCSI_S_CHECK_CONDITION:
		judge_sense(c, v);
		return;
	case SCSI_S_BUSY:
		verdict(v, SCSI_ACT_RETRY_LATER, BLK_E_IO, TRIES_BUSY, DELAY_BUSY_MS, "target busy");
		return;
	case SCSI_S_TASK_SET_FULL:
		verdict(v, SCSI_ACT_RETRY_LATER, BLK_E_IO, TRIES_BUSY, DELAY_BUSY_MS, "task set full");
		return;
	case SCSI_S_TASK_ABORTED:
		verdict(v, SCSI_ACT_RETRY, BLK_E_IO, TRIES_QUICK, 0, "task aborted");
		return;
	case SCSI_S_RESERVATION_CONFLICT:
		verdict(v, SCSI_ACT_FAIL, BLK_E_IO, 1, 0, "reserved by another initiator");
		return;
	default:
		verdict(v, SCSI_ACT_FAIL, BLK_E_IO, 1, 0, "unexpected status");
		return;
	}
}
