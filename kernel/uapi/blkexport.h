/*
 * blkexport.h - the read-only page through which each disk unit shows its
 * request queue to applications (the thesis's "expose information").
 *
 * The block layer (drivers/blkqueue.c) rewrites one struct blk_export per unit
 * whenever that unit's queue changes; the kernel maps the page read-only at
 * UDISKQ(unit) (layout.h) in every process.  An application can look at the
 * head position and the pending requests to decide when and where to issue
 * its own, without a system call.
 *
 * The writer may be in the middle of an update while an application reads, so
 * the page carries a generation counter used like a sequence lock: it is odd
 * while an update is in progress and is incremented again when it is done.  A
 * reader copies the page and accepts the copy only if the counter was even and
 * unchanged across the copy; blkx_snapshot() below does exactly that.
 */
#ifndef UAPI_BLKEXPORT_H
#define UAPI_BLKEXPORT_H

#include <stdint.h>

#define BLKX_MAGIC    0x514b4c42u   /* "BLKQ" read as little-endian bytes */
#define BLKX_VERSION  1

/* Scheduling policies (also the argument of blk_set_sched in drivers/blk.h). */
#define BLK_SCHED_CLOOK  0   /* ascending sector from the head, then wrap to the lowest */
#define BLK_SCHED_FIFO   1   /* arrival order */

/* Operation codes as they appear in the page; equal to enum blk_op. */
#define BLKX_OP_READ   0
#define BLKX_OP_WRITE  1
#define BLKX_OP_FLUSH  2

/* Entry flags. */
#define BLKX_F_INFLIGHT  0x1   /* handed to the device, not yet completed          */
#define BLKX_F_FUA       0x2   /* write that is durable when it completes          */
#define BLKX_F_BARRIER   0x4   /* waits behind a FLUSH (see docs/blocklayer.md)     */

/* One request as an application sees it. */
struct blk_export_ent {
	uint64_t sector;     /* first sector (0 for FLUSH)                              */
	uint32_t seq;        /* low 32 bits of the unit's arrival counter               */
	uint16_t nsectors;   /* length in sectors (a request carries at most 2048)      */
	uint8_t  op;         /* BLKX_OP_*                                               */
	uint8_t  flags;      /* BLKX_F_*                                                */
};

/* Header fields, then as many entries as fill the rest of the 4096-byte page. */
#define BLKX_HDR_BYTES  64
#define BLKX_NENT       ((4096 - BLKX_HDR_BYTES) / sizeof(struct blk_export_ent))   /* 252 */

struct blk_export {
	uint32_t magic;       /* BLKX_MAGIC once the unit is registered                     */
	uint16_t version;     /* BLKX_VERSION                                              */
	uint8_t  unit;        /* unit number                                               */
	uint8_t  sched;       /* BLK_SCHED_*                                               */
	uint64_t gen;         /* odd while being rewritten; changes on every update        */
	uint64_t head;        /* sector just past the most recently dispatched transfer:   */
	                      /* C-LOOK serves the lowest queued sector >= head next        */
	uint64_t capacity;    /* unit size in sectors                                      */
	uint64_t nsubmitted;  /* requests accepted since boot (seq of the newest one)      */
	uint64_t ncompleted;  /* requests completed since boot                             */
	uint32_t ninflight;   /* requests the device is working on                         */
	uint32_t nqueued;     /* requests waiting in the queue                             */
	uint32_t depth;       /* most requests the block layer hands the device at once    */
	uint32_t nent;        /* valid entries below: in-flight ones in dispatch order,    */
	                      /* then queued ones in the order they will be served.  If     */
	                      /* ninflight + nqueued > BLKX_NENT the tail is left out.      */
	struct blk_export_ent ent[BLKX_NENT];
};

_Static_assert(sizeof(struct blk_export_ent) == 16, "export entry layout");
_Static_assert(sizeof(struct blk_export) == 4096, "the export is one page");

/*
 * Copy a consistent snapshot of *x into *out.  Returns 0 on success, or -1 if
 * the block layer was rewriting the page meanwhile (the caller simply tries
 * again; an update takes microseconds).  Word-by-word volatile copying keeps
 * the compiler from merging or reordering the reads of the shared page.
 */
static inline int blkx_snapshot(const struct blk_export *x, struct blk_export *out)
{
	const volatile uint64_t *src = (const volatile uint64_t *)x;
	uint64_t *dst = (uint64_t *)out;
	uint64_t g1 = __atomic_load_n(&x->gen, __ATOMIC_ACQUIRE);
	if (g1 & 1)
		return -1;
	for (unsigned i = 0; i < sizeof(*x) / sizeof(uint64_t); i++)
		dst[i] = src[i];
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint64_t g2 = __atomic_load_n(&x->gen, __ATOMIC_RELAXED);
	return g1 == g2 ? 0 : -1;
}

#endif /* UAPI_BLKEXPORT_H */
