/*
 * vscsi.h - the virtio-scsi request engine: the SCSI layer's host adapter
 * (struct scsi_host, scsi.h) over virtio-scsi's virtqueues.
 *
 * Each SCSI command becomes one chain on the request queue: a request
 * header the device reads (the LUN address, a tag, the task attribute and
 * the CDB), the data the device reads (a write), a response the device
 * writes (its verdict on delivery, the SCSI status, the residual count and
 * the sense data), and the data the device writes (a read).  The event
 * queue is kept stocked with buffers so the device can say when units come,
 * go or change; the engine hands those to a hook.
 *
 * Portable like vblk.c: it talks to the device only through the
 * virtqueues and a notify callback, so the host tests run it against a
 * simulated device.  drivers/virtio_scsi.c does the discovery and setup.
 * virtio 1.x, section 5.6.
 */
#ifndef VSCSI_H
#define VSCSI_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/scsi.h"
#include "drivers/virtqueue.h"

/* Queues (5.6.2). */
#define VSCSI_Q_CONTROL  0
#define VSCSI_Q_EVENT    1
#define VSCSI_Q_REQUEST  2

/* Feature bits (5.6.3). */
#define VIRTIO_SCSI_F_INOUT    0
#define VIRTIO_SCSI_F_HOTPLUG  1
#define VIRTIO_SCSI_F_CHANGE   2

/* Configuration space offsets (5.6.4). */
#define VSCSI_CFG_NUM_QUEUES   0
#define VSCSI_CFG_SEG_MAX      4
#define VSCSI_CFG_MAX_SECTORS  8
#define VSCSI_CFG_CMD_PER_LUN  12
#define VSCSI_CFG_EVENT_SIZE   16
#define VSCSI_CFG_SENSE_SIZE   20
#define VSCSI_CFG_CDB_SIZE     24
#define VSCSI_CFG_MAX_CHANNEL  28   /* 16 bits */
#define VSCSI_CFG_MAX_TARGET   30   /* 16 bits */
#define VSCSI_CFG_MAX_LUN      32

/* Response codes (5.6.6.1). */
#define VSCSI_S_OK                 0
#define VSCSI_S_OVERRUN            1
#define VSCSI_S_ABORTED            2
#define VSCSI_S_BAD_TARGET         3
#define VSCSI_S_RESET              4
#define VSCSI_S_BUSY               5
#define VSCSI_S_TRANSPORT_FAILURE  6
#define VSCSI_S_TARGET_FAILURE     7
#define VSCSI_S_NEXUS_FAILURE      8
#define VSCSI_S_FAILURE            9

/* Events (5.6.6.3). */
#define VSCSI_T_NO_EVENT         0
#define VSCSI_T_TRANSPORT_RESET  1
#define VSCSI_T_ASYNC_NOTIFY     2
#define VSCSI_T_PARAM_CHANGE     3
#define VSCSI_T_EVENTS_MISSED    0x80000000u
#define VSCSI_EVT_RESET_RESCAN   1
#define VSCSI_EVT_RESET_REMOVED  2

/* Sizes.  The header's CDB and the response's sense area are as long as
 * the device's configuration says (defaults 32 and 96); the engine takes
 * any up to these. */
#define VSCSI_CDB_MAX       32
#define VSCSI_SENSE_MAX     96
#define VSCSI_REQ_FIXED     19      /* lun[8], tag (le64), task_attr, prio, crn */
#define VSCSI_RESP_FIXED    12      /* sense_len, resid (le32), status_qualifier (le16), status, response */
#define VSCSI_EVENT_BYTES   16      /* event (le32), lun[8], reason (le32) */
#define VSCSI_NEVENTS       4

/* What the device told us about itself. */
struct vscsi_limits {
	uint32_t seg_max;          /* data buffers per command; 0: only the ring limits */
	uint32_t max_sectors;      /* 512-byte sectors per command                     */
	uint32_t cmd_per_lun;
	uint32_t cdb_size, sense_size;
	uint16_t max_target;
	uint32_t max_lun;
};

/* One chain in the device.  hdr and resp are what the device reads and writes. */
struct vscsi_slot {
	uint8_t hdr[VSCSI_REQ_FIXED + VSCSI_CDB_MAX];
	uint8_t resp[VSCSI_RESP_FIXED + VSCSI_SENSE_MAX];
	struct scsi_cmd *c;
	struct vscsi_slot *next_free;
};

struct vscsi_stats {
	uint64_t commands;         /* chains offered                  */
	uint64_t deferred;         /* times a command waited for ring space */
	uint64_t notifies;
	uint64_t events;           /* event-queue buffers the device used */
	uint64_t bad_responses;    /* chains whose response the device did not (fully) write */
	uint32_t hiwater;          /* most chains in the device at once */
};

struct vscsi {
	struct scsi_host host;     /* first: the SCSI layer's handle */
	struct virtq *vq;          /* request queue */
	struct virtq *evq;         /* event queue, or NULL */
	void (*notify)(void *arg, uint32_t queue);
	void *notify_arg;
	/* Optional: an event the device reported (TRANSPORT_RESET, PARAM_CHANGE, ...). */
	void (*on_event)(struct vscsi *v, uint32_t event, uint16_t target, uint32_t lun, uint32_t reason);
	struct vscsi_limits lim;
	uint32_t hdr_bytes, resp_bytes;
	struct vscsi_slot slot[VQ_MAX_SIZE];
	struct vscsi_slot *free_slots;
	struct scsi_cmd *wait, *wait_tail;   /* commands waiting for ring space, in order */
	struct vq_buf buf[VQ_MAX_SIZE];      /* the chain being built */
	uint8_t events[VSCSI_NEVENTS][VSCSI_EVENT_BYTES];
	struct vscsi_stats stats;
};

/* Set up the engine over an initialised, empty request queue (and event
 * queue, or NULL) and fill in its SCSI host (ops, limits; the caller adds
 * the name, clock and hooks before scsi_scan).  0, or BLK_E_INVAL if the
 * limits or the queue cannot work. */
int  vscsi_init(struct vscsi *v, struct virtq *vq, struct virtq *evq, const struct vscsi_limits *lim,
                void (*notify)(void *arg, uint32_t queue), void *notify_arg);
/* Reap the chains the device has used (both queues) and complete their
 * commands.  Interrupts and polls come here. */
void vscsi_reap(struct vscsi *v);

/* The 8-byte LUN address virtio-scsi uses for target t, LUN l (5.6.6.1). */
void vscsi_lun_bytes(uint8_t out[8], uint16_t target, uint32_t lun);

#endif /* VSCSI_H */
