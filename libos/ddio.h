/*
 * ddio.h - disk-directed I/O on the exodisk (thesis section 5.4.2, after
 * Kotz): instead of the issue-wait-process cycle, start many transfers at
 * once, let the disk system serve them in the order it finds cheapest (the
 * block layer's C-LOOK queue, the drive), and process each one as soon as
 * it completes, whatever its place in the list.
 *
 * It sits on the exodisk client library's asynchronous operations
 * (libos/edc.h): every transfer is an ED_OP_IO with a result word of its
 * own, held in a caller-provided slot.  Waiting sleeps in the kernel until
 * one more of the caller's operations has completed (ED_OP_POLL with a
 * count), then looks at the words: nothing spins, which matters on a
 * shared CPU and doubly under the disk model's -icount clock.  Where the
 * transport cannot sleep (the host's), it falls back to the transport's
 * idle hook.
 *
 * Two ways to use it:
 *
 *   ddio_run(d, list, n, process, ctx)
 *       keep up to `cap` transfers of the list in flight, call process()
 *       for each as it completes, start the next as room appears.  With
 *       cap = 1 this is the classic one-at-a-time loop, in list order.
 *   ddio_start() / ddio_next()
 *       start transfers yourself; ddio_next() hands back the next one to
 *       complete.
 *
 * Portable C11 (guest and host), like the client library under it.
 */
#ifndef LIBOS_DDIO_H
#define LIBOS_DDIO_H

#include <stdint.h>
#include "libos/edc.h"

/* One transfer: through `prot` (which must stay valid until it completes),
 * sectors [blkno, blkno + bytes/512) to or from mem.  `tag` is the
 * caller's, handed back at completion. */
struct ddio_req {
	const struct ed_protector *prot;
	int write;
	uint64_t blkno;
	void *mem;
	uint64_t bytes;            /* a multiple of 512, at most ED_IO_MAX */
	void *tag;
};

struct ddio_slot {
	volatile int32_t word;     /* the request's result word            */
	int32_t busy;
	struct ddio_req req;
};

struct ddio {
	struct edc *c;
	struct ddio_slot *slot;
	int cap;
	int inflight;
	int scan;                  /* where the next look for a completion starts */
	/* Counters, for benchmarks. */
	uint64_t started, completed;
	uint64_t sleeps;           /* times a wait slept in the kernel     */
	uint64_t retries;          /* starts refused with ED_E_NOIO, retried */
};

/* Process one completed transfer; a nonzero return stops ddio_run, which
 * then waits for what is still in flight and returns that value. */
typedef int (*ddio_fn)(void *ctx, const struct ddio_req *req, int32_t result);

void ddio_init(struct ddio *d, struct edc *c, struct ddio_slot *slots, int cap);

/* Start one transfer.  0: started; DDIO_FULL: every slot is busy (take a
 * completion first); or the kernel's refusal (ED_E_NOIO: its table of
 * operations in flight is full - take a completion of ours and retry). */
#define DDIO_FULL (-1000)
int32_t ddio_start(struct ddio *d, const struct ddio_req *r);

/* Wait for the next transfer to complete; copy it into *done (if not NULL)
 * and return its result (0 or a negative error).  DDIO_IDLE if nothing is
 * in flight. */
#define DDIO_IDLE (-1001)
int32_t ddio_next(struct ddio *d, struct ddio_req *done);

/* The whole list, as described above.  Returns 0, the first transfer error
 * (the list is still finished), a refusal to start, or process()'s value. */
int32_t ddio_run(struct ddio *d, const struct ddio_req *list, int n, ddio_fn process, void *ctx);

#endif
