/*
 * scsi.h - the SCSI layer: disks (SCSI logical units) as block-layer units.
 *
 * A host adapter (virtio-scsi, drivers/vscsi.c, or a test's emulated
 * target) carries SCSI commands to targets and back; this layer decides
 * which commands to send and what their answers mean:
 *
 *   - scsi_scan() finds the disks behind a host at boot: REPORT LUNS on
 *     each target, INQUIRY, TEST UNIT READY (with START UNIT if the unit
 *     asks for it), READ CAPACITY(16), MODE SENSE for the caching page; each
 *     direct-access logical unit becomes a block unit (drivers/blk.h);
 *   - a block request becomes READ(16) or WRITE(16) (with FUA when the
 *     request wants it and the unit supports it, else a SYNCHRONIZE CACHE
 *     after the write), cut at block boundaries when it carries more
 *     buffers or bytes than the host takes in one command; a FLUSH becomes
 *     SYNCHRONIZE CACHE;
 *   - scsi_judge() reads the status byte and the sense data (fixed or
 *     descriptor format) and decides: done, retry now (UNIT ATTENTION,
 *     ABORTED COMMAND, transport hiccups), retry later (NOT READY becoming
 *     ready, BUSY, TASK SET FULL), or fail with a distinct block-layer
 *     error (BLK_E_MEDIUM for a medium error, BLK_E_NOTREADY, BLK_E_PROTECT,
 *     BLK_E_RANGE, BLK_E_UNSUPP, BLK_E_IO).
 *
 * Portable C (no allocation, no printing): the kernel links it behind
 * virtio-scsi and the host tests run it against an emulated target that
 * answers with every sense condition handled here.  Retries that must wait
 * use the host's clock; whoever owns the timer calls scsi_next_event() and
 * scsi_advance() (drivers/virtio_scsi.c arms a kernel timer event).
 * docs/blocklayer.md, "SCSI", describes the policy in a table.
 */
#ifndef SCSI_H
#define SCSI_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"

#define SCSI_CDB_MAX    16
#define SCSI_SENSE_MAX  96
#define SCSI_DISK_REQS     128     /* block requests one unit holds at once  */
#define SCSI_SCAN_TARGETS  16      /* targets 0..15 are scanned (at most)    */
#define SCSI_SCAN_LUNS     64      /* LUNs per target taken from REPORT LUNS */

/* Status byte (SAM-5). */
#define SCSI_S_GOOD                 0x00
#define SCSI_S_CHECK_CONDITION      0x02
#define SCSI_S_CONDITION_MET        0x04
#define SCSI_S_BUSY                 0x08
#define SCSI_S_RESERVATION_CONFLICT 0x18
#define SCSI_S_TASK_SET_FULL        0x28
#define SCSI_S_ACA_ACTIVE           0x30
#define SCSI_S_TASK_ABORTED         0x40

/* Sense keys (SPC-4). */
#define SCSI_K_NO_SENSE        0x0
#define SCSI_K_RECOVERED_ERROR 0x1
#define SCSI_K_NOT_READY       0x2
#define SCSI_K_MEDIUM_ERROR    0x3
#define SCSI_K_HARDWARE_ERROR  0x4
#define SCSI_K_ILLEGAL_REQUEST 0x5
#define SCSI_K_UNIT_ATTENTION  0x6
#define SCSI_K_DATA_PROTECT    0x7
#define SCSI_K_BLANK_CHECK     0x8
#define SCSI_K_VENDOR_SPECIFIC 0x9
#define SCSI_K_COPY_ABORTED    0xa
#define SCSI_K_ABORTED_COMMAND 0xb
#define SCSI_K_VOLUME_OVERFLOW 0xd
#define SCSI_K_MISCOMPARE      0xe

/* Operation codes used here. */
#define SCSI_OP_TEST_UNIT_READY   0x00
#define SCSI_OP_INQUIRY           0x12
#define SCSI_OP_START_STOP_UNIT   0x1b
#define SCSI_OP_READ_CAPACITY_10  0x25
#define SCSI_OP_SYNC_CACHE_10     0x35
#define SCSI_OP_MODE_SENSE_10     0x5a
#define SCSI_OP_READ_16           0x88
#define SCSI_OP_WRITE_16          0x8a
#define SCSI_OP_SERVICE_IN_16     0x9e   /* service action 0x10: READ CAPACITY(16) */
#define SCSI_OP_REPORT_LUNS       0xa0
#define SCSI_SA_READ_CAPACITY_16  0x10
#define SCSI_CDB16_FUA            0x08   /* READ(16)/WRITE(16) byte 1 */

/* What the host says about delivering a command (beside the SCSI status). */
enum scsi_host_status {
	SCSI_HOST_OK = 0,        /* delivered; status (and sense) are the target's  */
	SCSI_HOST_NO_TARGET,     /* no such target (or logical unit) behind the host */
	SCSI_HOST_RESET,         /* the command was lost to a bus or device reset   */
	SCSI_HOST_BUSY,          /* the host could not take it now                  */
	SCSI_HOST_ABORTED,       /* aborted by a task-management function           */
	SCSI_HOST_TRANSPORT,     /* transport failure that a retry may get past     */
	SCSI_HOST_OVERRUN,       /* the target sent more data than the buffers hold */
	SCSI_HOST_FAILED,        /* the host or target failed it for good           */
};

#define SCSI_DIR_NONE 0
#define SCSI_DIR_IN   1      /* device to memory (a read)  */
#define SCSI_DIR_OUT  2      /* memory to device (a write) */

struct scsi_host;

/* One command on its way to a logical unit and back. */
struct scsi_cmd {
	/* Set by the issuer. */
	uint16_t target;
	uint32_t lun;
	uint8_t  cdb[SCSI_CDB_MAX];
	uint8_t  cdb_len;
	uint8_t  dir;                  /* SCSI_DIR_* */
	const struct blk_seg *seg;     /* data: nbytes from seg[0] + seg_off on, */
	uint16_t nseg;                 /* using at most nseg segments            */
	uint32_t seg_off;
	uint32_t nbytes;
	void (*done)(struct scsi_cmd *c);
	void *priv;

	/* Set by the host before done(). */
	uint8_t  host_status;          /* enum scsi_host_status */
	uint8_t  status;               /* the status byte, when host_status is OK */
	uint8_t  sense_len;            /* valid bytes of sense */
	uint32_t resid;                /* data bytes not transferred */
	uint8_t  sense[SCSI_SENSE_MAX];

	/* The layer's and the host's. */
	void (*resend)(struct scsi_cmd *c);   /* a deferred retry is due */
	uint64_t due;                  /* deferred retry: when (host clock, ns) */
	struct scsi_cmd *next;         /* host queue while in flight; deferred list */
};

/* Decoded sense data (fixed or descriptor format). */
struct scsi_sense {
	uint8_t key, asc, ascq;
	bool deferred;                 /* about an earlier command (response code 71h/73h) */
	bool info_valid;
	uint64_t info;                 /* the INFORMATION field: usually the failing LBA */
};
/* Decode; 0, or -1 if the bytes are not sense data this layer understands. */
int scsi_sense_decode(const uint8_t *buf, uint32_t len, struct scsi_sense *out);
const char *scsi_key_name(uint8_t key);
/* A name for an additional sense code and qualifier ("unrecovered read error"),
 * or NULL when it is not in the table. */
const char *scsi_asc_name(uint8_t asc, uint8_t ascq);

/* What to do about a finished command. */
enum scsi_action {
	SCSI_ACT_DONE,               /* success (possibly a recovered error)        */
	SCSI_ACT_RETRY,              /* send it again now                           */
	SCSI_ACT_RETRY_LATER,        /* send it again after delay_ms                */
	SCSI_ACT_START_UNIT,         /* the unit needs START UNIT, then send it again */
	SCSI_ACT_FAIL,               /* give up with `error`                        */
};

struct scsi_verdict {
	enum scsi_action action;
	int      error;              /* BLK_E_* for FAIL */
	uint32_t delay_ms;           /* for RETRY_LATER */
	uint32_t max_tries;          /* attempts this kind of failure deserves */
	bool     has_sense;
	bool     recovered;          /* RECOVERED ERROR: done, but worth a note */
	struct scsi_sense sense;
	const char *what;            /* short explanation: "unit attention", ... */
};
/* Judge a finished command.  Pure: the policy table, tested case by case. */
void scsi_judge(const struct scsi_cmd *c, struct scsi_verdict *v);

/* Something worth telling the operator (the kernel prints it). */
enum scsi_event_kind {
	SCSI_EV_RETRY,               /* a command failed and is being sent again     */
	SCSI_EV_RECOVERED,           /* the device recovered an error itself         */
	SCSI_EV_FAILED,              /* a command failed for good                    */
	SCSI_EV_NOTICE,              /* scan findings: a unit skipped, and why       */
};
struct scsi_event {
	enum scsi_event_kind kind;
	int unit;                    /* block unit, or -1 during the scan            */
	uint16_t target;
	uint32_t lun;
	uint8_t opcode;
	uint64_t lba;
	uint32_t attempt;            /* 1 for the first try                          */
	int error;                   /* BLK_E_* for FAILED                            */
	const struct scsi_verdict *v;
	const char *text;            /* NOTICE: what happened                         */
};

/* Whatever moves commands: set up by the host driver. */
struct scsi_host_ops {
	/* Take c; call c->done(c) when the target has answered (possibly from
	 * inside queue() or from poll()).  Never refuses: a host with no room
	 * keeps commands waiting in order. */
	void (*queue)(struct scsi_host *h, struct scsi_cmd *c);
	/* Reap finished commands (polled completion, and synchronous scans). */
	void (*poll)(struct scsi_host *h);
};

struct scsi_disk;

struct scsi_host {
	/* Set by the host driver before scsi_scan. */
	const struct scsi_host_ops *ops;
	void *priv;
	const char *name;              /* "virtio-scsi" */
	uint32_t max_segs;             /* data buffers one command may carry   */
	uint32_t max_bytes;            /* data bytes one command may carry     */
	uint16_t max_target;           /* highest target number to scan        */
	uint32_t max_lun;              /* highest LUN the host can address     */
	uint32_t cmd_per_lun;          /* commands one unit may have in flight */
	/* Optional: the time in ns (NULL: retries that should wait go at once),
	 * a hook run when the earliest deferred retry changes, and a hook for
	 * events worth printing. */
	uint64_t (*clock)(struct scsi_host *h);
	void (*rearm)(struct scsi_host *h);
	void (*report)(struct scsi_host *h, const struct scsi_event *ev);

	/* The layer's. */
	struct scsi_cmd *deferred;     /* waiting retries, earliest first */
	struct scsi_disk *disks;       /* attached units, in scan order   */
	uint32_t ndisks;
	struct scsi_cmd scan_cmd;      /* the scan's command and its data  */
	uint8_t scan_buf[8 + 8 * SCSI_SCAN_LUNS];
	bool dead;                     /* stopped answering during the scan */
};

struct sd_req {
	struct scsi_cmd cmd;
	struct scsi_disk *sd;
	struct blkreq *r;
	uint32_t seg, off;             /* where the next piece's data starts */
	uint64_t sector;               /* its first sector                   */
	uint32_t left;                 /* sectors not yet sent               */
	uint32_t piece;                /* sectors in the command in flight   */
	uint32_t tries;                /* attempts of the command in flight  */
	bool     flushing;             /* the SYNCHRONIZE CACHE that makes a FUA write durable */
	bool     starting;             /* a START UNIT before the command is sent again */
	uint8_t  starts;               /* START UNITs sent for this request  */
	struct sd_req *next_free;
};

struct scsi_disk_stats {
	uint64_t commands;             /* commands sent, retries included       */
	uint64_t retries;
	uint64_t recovered;            /* RECOVERED ERROR answers               */
	uint64_t failed;               /* block requests completed with an error */
	uint64_t split;                /* block requests cut into several commands */
	uint64_t unit_attentions;
};

struct scsi_disk {
	struct scsi_host *host;
	uint16_t target;
	uint32_t lun;
	int unit;                      /* block unit */
	uint32_t block_size;           /* logical block, bytes */
	uint64_t nblocks;
	bool wce;                      /* volatile write cache enabled */
	bool dpofua;                   /* the unit honours FUA (else it is emulated) */
	bool wp;                       /* write-protected */
	char vendor[9], product[17], revision[5];
	struct sd_req req[SCSI_DISK_REQS];
	struct sd_req *free_reqs;
	struct blkdev_info info;
	char name[24];                 /* "scsi 0:0" */
	struct scsi_disk_stats stats;
	struct scsi_disk *next;
};

/*
 * Find the disks behind h and register a block unit for each, using the
 * structures in disks[0..max) (zeroed by the caller or not: the scan sets
 * every field).  Synchronous: it waits for each command by calling the
 * host's poll (and scsi_advance for waiting retries).  Returns the number
 * of units registered.
 */
int scsi_scan(struct scsi_host *h, struct scsi_disk *disks, int max);

/* Waiting retries: the host clock time of the earliest (UINT64_MAX if
 * none), and send those due at `now`. */
uint64_t scsi_next_event(const struct scsi_host *h);
void scsi_advance(struct scsi_host *h, uint64_t now);

/* Run one command to completion synchronously with the layer's retry
 * policy (the scan uses it; so can tests).  0 or a BLK_E_* error. */
int scsi_exec(struct scsi_host *h, struct scsi_cmd *c);

#endif /* SCSI_H */
