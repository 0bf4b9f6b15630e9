/*
 * blk.h - the small request interface between block-device users and drivers.
 *
 * Users (the exodisk, the raw benchmark path, disktest) build a struct blkreq
 * and hand it to blk_submit(); the per-unit C-LOOK queue (drivers/blkqueue.c)
 * orders it and feeds it to the unit's driver (virtio-blk, RAM disk, the
 * mechanical disk model) through struct blkdev_ops.  When the device finishes,
 * the request's done() callback runs once, with r->status set.
 *
 * This header is portable: the kernel and the host test/tool builds both use
 * it.  In the kernel a segment address is a physical address (RAM is
 * identity-mapped, so it is also a kernel pointer); on the host it is simply a
 * host pointer.  Either way blk_seg_ptr() turns it into something memcpy can use.
 *
 * The block layer does no locking: the kernel calls it with interrupts off on
 * one hart.  docs/blocklayer.md describes the queue, flush ordering and the
 * exported queue page (kernel/uapi/blkexport.h).
 */
#ifndef BLK_H
#define BLK_H

#include <stdint.h>
#include <stddef.h>
#include "kernel/uapi/blkexport.h"

#define BLK_SECTOR_SIZE   512u
#define BLK_SECTOR_SHIFT  9
#define BLK_MAX_UNITS     8
/* Most segments one request may carry: 1 MiB of unaligned pages plus a header. */
#define BLK_MAX_SEGS      260
/* Largest transfer of one request, in sectors (1 MiB). */
#define BLK_MAX_SECTORS   2048u
/* Most requests one unit holds, queued plus in flight. */
#define BLK_QUEUE_MAX     256
/* Most requests the block layer hands one device at a time, and the default.
 * A small default keeps the ordering decisions in the C-LOOK queue, where they
 * are visible, rather than in the device. */
#define BLK_MAX_DEPTH     128
#define BLK_DEPTH_DEFAULT 2

/* Block-layer errors: negative, distinct, in the range -64 .. -127 (see kernel/uapi/errno.h). */
#define BLK_E_RANGE     (-64)   /* sector range past the end of the device            */
#define BLK_E_LEN       (-65)   /* zero length, or length not a multiple of a sector  */
#define BLK_E_ALIGN     (-66)   /* segments do not add up / bad segment / not on a device block */
#define BLK_E_QFULL     (-67)   /* the unit's queue holds its maximum of requests     */
#define BLK_E_UNIT      (-68)   /* no such disk unit                                  */
#define BLK_E_IO        (-69)   /* the device reported an I/O error                   */
#define BLK_E_UNSUPP    (-70)   /* the device cannot do this operation                */
#define BLK_E_OP        (-71)   /* unknown operation code                             */
#define BLK_E_TOOBIG    (-72)   /* more segments or sectors than one request may carry*/
#define BLK_E_FAULT     (-73)   /* buffer not in the caller's memory (raw path)       */
#define BLK_E_PERM      (-74)   /* raw path not enabled at boot                       */
#define BLK_E_ABORTED   (-75)   /* request dropped (device reset, shutdown)           */
#define BLK_E_INVAL     (-76)   /* malformed call: no done() callback, bad driver/setting */
#define BLK_E_MEDIUM    (-77)   /* the medium could not be read or written there (SCSI MEDIUM ERROR) */
#define BLK_E_NOTREADY  (-78)   /* the device is not ready: no medium, or it needs attention */
#define BLK_E_PROTECT   (-79)   /* the device is write-protected                      */

enum blk_op {
	BLK_READ  = 0,
	BLK_WRITE = 1,
	BLK_FLUSH = 2,   /* make every completed write durable; no data, no sectors */
};

/* Request flags. */
#define BLK_F_FUA     0x1   /* write: durable when it completes (driver may emulate with a flush) */

struct blk_seg {
	uint64_t addr;      /* physical address (kernel) or host pointer (host builds) */
	uint32_t len;       /* bytes; segments of a request add up to nsectors * 512   */
};

struct blkreq;
typedef void (*blk_done_fn)(struct blkreq *r);

struct blkreq {
	/* Filled in by the submitter. */
	uint8_t  op;            /* enum blk_op */
	uint8_t  flags;         /* BLK_F_* */
	uint16_t nseg;
	int32_t  unit;
	uint64_t sector;        /* first sector */
	uint32_t nsectors;      /* transfer length in sectors (0 for FLUSH) */
	struct blk_seg *seg;    /* nseg segments, owned by the submitter */
	blk_done_fn done;       /* called exactly once, from completion context */
	void    *priv;          /* for the submitter */

	/* Filled in by the block layer. */
	int32_t  status;        /* 0 or a negative BLK_E_* code, valid in done() */
	uint64_t seq;           /* arrival order, for FIFO tie-breaks and the exported queue */
	struct blkreq *next;    /* linkage: the block layer's while queued, the driver's
	                         * while in flight (between start() and blk_complete()) */
};

/* What a driver provides to the block layer for one unit. */
struct blkdev_ops {
	/* Start r on the device.  Return 0 if started, or a BLK_E_* error (the request
	 * is then completed by the block layer with that error).  The driver calls
	 * blk_complete(r, status) when the device is done with it. */
	int  (*start)(void *dev, struct blkreq *r);
	/* Polled-completion mode: reap finished requests (may call blk_complete). */
	void (*poll)(void *dev);
};

struct blkdev_info {
	uint64_t nsectors;      /* capacity */
	uint32_t max_inflight;  /* how many requests the device itself can hold */
	uint32_t blksize;       /* the device's logical block in bytes; 0 means 512.
	                         * Requests must start and end on a block. */
	const char *name;       /* "virtio-blk", "ramdisk", "model:RZ25", ... */
};

/* What blk_stat() reports about a unit. */
struct blk_unit_stat {
	struct blkdev_info info;
	uint32_t depth;         /* requests handed to the device at most at once */
	int      sched;         /* BLK_SCHED_* */
	uint32_t hiwater;       /* most requests the device has held at once since boot */
	uint64_t nsubmitted, ncompleted;
};

/* --- block layer (drivers/blkqueue.c) --- */
/* Add a unit; returns its number (0, 1, ...) or BLK_E_UNIT / BLK_E_INVAL. */
int   blk_register(const struct blkdev_ops *ops, void *dev, const struct blkdev_info *info);
/* 0 = queued; <0 = rejected and done() is NOT called.  On a device that
 * completes synchronously, done() may run before blk_submit returns. */
int   blk_submit(struct blkreq *r);
void  blk_complete(struct blkreq *r, int status);   /* drivers call this; a second call is ignored */
void  blk_poll(void);                         /* polled completion: reap all units */
int   blk_nunits(void);
uint64_t blk_capacity(int unit);
/* A unit's description, settings and counters; 0 or BLK_E_UNIT. */
int   blk_stat(int unit, struct blk_unit_stat *st);

/* Per-unit settings, effective at the next dispatch: the depth is clamped to
 * 1 .. min(max_inflight, BLK_MAX_DEPTH); sched is BLK_SCHED_CLOOK or _FIFO. */
int   blk_set_depth(int unit, uint32_t depth);
int   blk_set_sched(int unit, int sched);
/* Give the unit a page to keep its queue exported in (the kernel then maps it
 * read-only at UDISKQ(unit)); the block layer updates it from then on. */
int   blk_export_attach(int unit, struct blk_export *page);
/* Have fn told of every request the block layer accepts, before it is
 * started (the kernel's per-process counters: kernel/prof.c). */
void  blk_set_submit_hook(void (*fn)(const struct blkreq *r));
/* Forget every unit.  For host tests and tools that run several experiments;
 * the kernel registers its units once at boot and never calls this. */
void  blk_reset(void);

/* Check a request against the unit without queueing it (used by callers that
 * want a precise error before they commit resources). */
int   blk_validate(const struct blkreq *r);

/* Kernel RAM is identity-mapped and host builds use host pointers, so both
 * turn a segment address into a pointer the same way. */
static inline void *blk_seg_ptr(uint64_t addr) { return (void *)(uintptr_t)addr; }

#endif /* BLK_H */
