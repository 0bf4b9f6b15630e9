/*
 * rawio.h - the raw disk path: system call SYS_raw_io, which reads and
 * writes a disk unit's sectors with NO protection at all.
 *
 * It exists only to measure what protection costs.  The exodisk thesis
 * compares every protected operation with "the disk driver" alone; this is
 * that baseline, built to look like the exodisk's own I/O path (asynchronous,
 * the application's buffer pinned and used in place, a completion word in
 * application memory, the same block layer and C-LOOK queue) so that the two
 * differ only by the protection checks.  It is refused (BLK_E_PERM) unless
 * the kernel was booted with the option rawio=1, and then any process may
 * read or write any sector of any disk.  Never enable it where the disks
 * matter.  docs/blocklayer.md, "The raw path", has the details.
 *
 *   raw_io(RAW_SUBMIT, struct raw_req *v, n)      queue n requests in order;
 *        -> how many were queued (stops at the first refused), or that
 *           first request's error if none was
 *   raw_io(RAW_WAIT, max_pending)                  sleep until at most max_pending
 *        -> the caller's requests still pending      of the caller's requests are pending
 *   raw_io(RAW_INFO, unit, struct raw_info *out)   -> 0
 *   raw_io(RAW_SET, unit, RAW_SET_SCHED, BLK_SCHED_CLOOK or BLK_SCHED_FIFO) -> 0
 *   raw_io(RAW_SET, unit, RAW_SET_DEPTH, n)        -> the depth in effect (clamped)
 */
#ifndef UAPI_RAWIO_H
#define UAPI_RAWIO_H

#include <stdint.h>

/* Commands (first argument). */
#define RAW_SUBMIT  0
#define RAW_WAIT    1
#define RAW_INFO    2
#define RAW_SET     3

/* Request operations: the block layer's (drivers/blk.h). */
#define RAW_READ    0
#define RAW_WRITE   1
#define RAW_FLUSH   2    /* every write completed before it becomes durable; nbytes 0 */

#define RAW_F_FUA   0x1  /* write: durable when it completes */

/* The completion word holds RAW_PENDING from submission until the request
 * completes, then 0 or a negative BLK_E_* code. */
#define RAW_PENDING 1

#define RAW_MAX_BYTES  (1024u * 1024)   /* one request moves at most 1 MiB */
#define RAW_MAX_BATCH  256              /* requests per RAW_SUBMIT call     */

struct raw_req {
	uint8_t  op;        /* RAW_READ, RAW_WRITE, RAW_FLUSH                          */
	uint8_t  flags;     /* RAW_F_FUA                                               */
	uint16_t unit;      /* disk unit                                               */
	uint32_t nbytes;    /* a multiple of 512, 1 .. RAW_MAX_BYTES (0 for a FLUSH)    */
	uint64_t sector;    /* first sector                                            */
	uint64_t buf;       /* the data in the caller's memory: any alignment           */
	uint64_t resptr;    /* address of an int32_t completion word (4-aligned), or 0 */
};

struct raw_info {
	uint64_t capacity;      /* sectors                                               */
	uint64_t nsubmitted;    /* requests the unit accepted since boot (any source)    */
	uint64_t ncompleted;
	uint32_t blksize;       /* the device's logical block in bytes                  */
	uint32_t max_inflight;  /* requests the device can hold                          */
	uint32_t depth;         /* requests the block layer hands it at most at once     */
	uint32_t sched;         /* BLK_SCHED_CLOOK or BLK_SCHED_FIFO                     */
	uint32_t hiwater;       /* most requests the device has held at once since boot  */
	uint32_t polled;        /* 1 if completions are polled rather than interrupts    */
	char     name[32];      /* "virtio-blk", "model:RZ25", "ramdisk"                 */
};

/* RAW_SET settings. */
#define RAW_SET_SCHED  0
#define RAW_SET_DEPTH  1

_Static_assert(sizeof(struct raw_req) == 32, "raw_req layout");

#endif /* UAPI_RAWIO_H */
