/*
 * edc.h - the exodisk client library: what a library file system calls to
 * reach the disk.
 *
 * Three layers, bottom up:
 *
 *  1. A transport carries one exodisk_request.  In the guest it is the
 *     system call (edc_sys.c); on the host it is a direct call into the
 *     exodisk core that does what the kernel's system-call layer does
 *     (edc_host.c).  Everything above it is one implementation.
 *  2. Typed wrappers, one per operation of kernel/uapi/exodisk.h, which fill
 *     in the argument structures (docs/exodisk.md says what each field
 *     means for each operation).
 *  3. Asynchronous I/O: a request names a result word; the kernel stores
 *     ED_PENDING in it while the request is queued and 0 or a negative error
 *     when it completes.  edc_wait/_all/_any poll words; struct edc_batch
 *     keeps many requests in flight, splitting large transfers and backing
 *     off when the kernel has too many (ED_E_NOIO).  Disk-directed I/O is
 *     built on this.
 *
 * Results are the kernel's: >= 0 on success, a negative ED_E_* / BLK_E_* /
 * K_E_* code on failure.  edc_errno() maps a code to the POSIX errno a
 * libFS should report.  Portable C11 (guest and host).
 */
#ifndef LIBOS_EDC_H
#define LIBOS_EDC_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/uapi/exodisk.h"

/* ---- transports ---------------------------------------------------------- */
struct edc_transport {
	/* One exodisk_request; the structures are the caller's and may be
	 * written (outputs land in *stuff).  Any pointer may be NULL. */
	int64_t (*request)(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
	                   struct ed_operation *stuff);
	/* Called while waiting for a result word: let completions happen
	 * (guest: give up the CPU; host: poll the block layer). */
	void (*idle)(void *ctx);
	/* Page i (4096 bytes) of unit's free map, or NULL past its end.  The
	 * map is one bit per sector, 1 = allocated, little-endian 64-bit words. */
	const uint64_t *(*fm_page)(void *ctx, int unit, uint32_t i);
	/* The unit's size in sectors as the exodisk sees it (0: unknown unit). */
	uint64_t (*nsectors)(void *ctx, int unit);
};

struct edc {
	const struct edc_transport *t;
	void *ctx;
	/* Counters, for benchmarks and tests. */
	uint64_t nrequests;     /* exodisk_request calls            */
	uint64_t nios;          /* ED_OP_IO requests                */
	uint64_t io_bytes;      /* bytes those requests moved       */
	uint64_t nwaits;        /* times a wait had to idle         */
	/* Optional (edc_set_wait): called instead of the transport's idle
	 * while waiting for one result word; returns once *word may have
	 * changed (the system call's: sleep in the kernel until that word is
	 * final or nothing of ours is in flight, one system call). */
	void (*wait)(void *ctx, volatile int32_t *word);
};

void edc_init(struct edc *c, const struct edc_transport *t, void *ctx);
void edc_set_wait(struct edc *c, void (*wait)(void *ctx, volatile int32_t *word));
/* The handle libFSes use when mounted by name.  In the guest it starts as
 * the system call; host programs install theirs. */
struct edc *edc_default(void);
void edc_set_default(struct edc *c);

/* ---- protectors --------------------------------------------------------- */
struct ed_protector edc_prot_extent(int unit, uint64_t blkno, const struct ed_cap *rc,
                                    const struct ed_cap *wc);
struct ed_protector edc_prot_xn(int unit, uint64_t blkno, uint16_t slot, const struct ed_cap *rc,
                                const struct ed_cap *wc);

/* ---- synchronous operations (the result is the return value) ------------ */
/* Self-protected extents.  prot names the extent's first sector; for
 * allocation prot->length is its length in bytes and rc/wc its new
 * capabilities. */
int64_t edc_extent_alloc(struct edc *c, const struct ed_protector *prot);
int64_t edc_extent_dealloc(struct edc *c, const struct ed_protector *prot);
int64_t edc_extent_grow(struct edc *c, const struct ed_protector *prot, uint64_t bytes);
int64_t edc_extent_shrink(struct edc *c, const struct ed_protector *prot, uint64_t bytes);

/* Exonodes.  For allocation prot->length is the exonode's length (a multiple
 * of 8, at most ED_XN_MAX_BYTES); every exonode of a block has the same. */
int64_t edc_xn_alloc(struct edc *c, const struct ed_protector *prot);
int64_t edc_xn_dealloc(struct edc *c, const struct ed_protector *prot);
/* Allocate sectors [start, start + bytes/512) and add them as an extent entry
 * (entry -1: the first free one).  Returns the entry number. */
int64_t edc_xn_add_extent(struct edc *c, const struct ed_protector *prot, int entry,
                          uint64_t start, uint64_t bytes);
/* Allocate a descendant exonode at (sector, slot) of `length` bytes with
 * capabilities rc/wc and add an entry for it.  Returns the entry number. */
int64_t edc_xn_add_exonode(struct edc *c, const struct ed_protector *prot, int entry,
                           uint64_t sector, uint16_t slot, uint64_t length,
                           const struct ed_cap *rc, const struct ed_cap *wc);
/* Add, or replace, application-defined data (len a multiple of 8).
 * Returns the entry number. */
int64_t edc_xn_add_data(struct edc *c, const struct ed_protector *prot, int entry,
                        const void *data, uint32_t len);
int64_t edc_xn_read_data(struct edc *c, const struct ed_protector *prot, int entry,
                         void *buf, uint32_t len);
int64_t edc_xn_remove(struct edc *c, const struct ed_protector *prot, int entry);
/* Remove the extent entries numbered first .. first + n - 1 in one call
 * (numbers not in use are skipped): how many went, or an error and none. */
int64_t edc_xn_remove_range(struct edc *c, const struct ed_protector *prot, int first, int n);
/* Merge entry `second` into `first` (adjacent extents); split extent `entry`
 * at byte offset `off` (a multiple of 512), the tail becoming entry `newent`. */
int64_t edc_xn_combine(struct edc *c, const struct ed_protector *prot, int first, int second);
int64_t edc_xn_split(struct edc *c, const struct ed_protector *prot, int entry, uint64_t off,
                     int newent);
/* Map the exonode read-only; returns its address (struct ed_xnmap_hdr). */
int64_t edc_xn_map(struct edc *c, const struct ed_protector *prot);
int64_t edc_xn_unmap(struct edc *c, const struct ed_protector *prot, uint64_t addr);
/* A proxy exonode covering `ranges` of what prot covers, with its own
 * capabilities.  Returns the proxy id (use with ED_PK_PROXY). */
int64_t edc_xn_proxy(struct edc *c, const struct ed_protector *prot, const struct ed_range *ranges,
                     uint32_t nranges, uint32_t rights, const struct ed_cap *rc,
                     const struct ed_cap *wc);
/* The capabilities of the descendant exonode in `entry`. */
int64_t edc_xn_cap_discover(struct edc *c, const struct ed_protector *prot, int entry,
                            struct ed_cap *rc, struct ed_cap *wc);
int64_t edc_mark_replacement(struct edc *c, const struct ed_protector *prot);
int64_t edc_pending(struct edc *c);                         /* ED_OP_POLL */
int64_t edc_in_cache(struct edc *c, const struct ed_protector *prot);   /* ED_IC_* mask */
/* ED_OP_DROP_CACHE: evict the unit's clean, idle entries that no other
 * client holds (this one's holds go too).  Returns how many of the unit's
 * entries remain cached, or an error; *busy (if not NULL) gets how many of
 * those are only busy with I/O and will go if called again later. */
int64_t edc_drop_cache(struct edc *c, int unit, uint64_t *busy);

/* ---- asynchronous operations ---------------------------------------------
 * Each takes a result word.  It is set to ED_PENDING before the request is
 * made and receives the final result (0 or an error) exactly once, either
 * from the kernel or, if the request is refused outright, from the library;
 * the function returns that immediate refusal too (0 = queued). */
int64_t edc_io(struct edc *c, const struct ed_protector *prot, int write, uint64_t blkno,
               void *mem, uint64_t bytes, volatile int32_t *word);
int64_t edc_extent_read(struct edc *c, const struct ed_protector *prot, volatile int32_t *word);
int64_t edc_extent_write(struct edc *c, const struct ed_protector *prot, volatile int32_t *word);
int64_t edc_xn_read(struct edc *c, const struct ed_protector *prot, volatile int32_t *word);
int64_t edc_xn_write(struct edc *c, const struct ed_protector *prot, volatile int32_t *word);
int64_t edc_shutdown(struct edc *c, int unit, volatile int32_t *word);

static inline int edc_done(const volatile int32_t *word) { return *word != ED_PENDING; }
/* Wait for one word; returns its final value. */
int32_t edc_wait(struct edc *c, volatile int32_t *word);
/* Wait for all n words; returns 0 or the first error in array order. */
int32_t edc_wait_all(struct edc *c, volatile int32_t *const *words, int n);
/* Wait until at least one of n words is final; returns its index (the
 * lowest, if several are), or -1 if n == 0. */
int edc_wait_any(struct edc *c, volatile int32_t *const *words, int n);

/* Synchronous wrappers over the asynchronous ones. */
int32_t edc_read(struct edc *c, const struct ed_protector *prot, uint64_t blkno, void *mem,
                 uint64_t bytes);
int32_t edc_write(struct edc *c, const struct ed_protector *prot, uint64_t blkno,
                  const void *mem, uint64_t bytes);
int32_t edc_xn_read_sync(struct edc *c, const struct ed_protector *prot);
int32_t edc_xn_write_sync(struct edc *c, const struct ed_protector *prot);
int32_t edc_extent_read_sync(struct edc *c, const struct ed_protector *prot);
int32_t edc_extent_write_sync(struct edc *c, const struct ed_protector *prot);

/* ---- durability -------------------------------------------------------------
 * A device may hold completed writes in a volatile cache; they are durable
 * only after a flush.  edc_flush (ED_OP_FLUSH) makes every write of the unit
 * that completed before the call durable by the time it returns: 0 or an
 * error.  A single write can instead be made durable by itself with
 * ED_B_FUA (edc_io with flags ED_B_WRITE | ED_B_FUA). */
int32_t edc_flush(struct edc *c, int unit);
/* The same, started: *word gets the result (edc_wait).  0 queued, or an
 * error and nothing queued. */
int64_t edc_flush_start(struct edc *c, int unit, volatile int32_t *word);
/* ED_OP_CHECKPOINT: a checkpoint of the unit that starts after the call
 * (everything committed before it goes into the exodisk's trees and the
 * commit log empties); returns when it is durable: 0 or an error.  For
 * measurements and tools: the exodisk checkpoints on its own when needed. */
int32_t edc_checkpoint(struct edc *c, int unit);

/* ---- batches ---------------------------------------------------------------
 * A batch keeps up to `cap` requests in flight in caller-provided slots.
 * Adding a request when all slots are busy, or when the kernel answers
 * ED_E_NOIO, first waits for the oldest one.  Transfers over ED_IO_MAX are
 * split.  A request the kernel refuses outright is not added: its error
 * is returned at once, for the caller to handle (and, say, retry).
 * edc_batch_wait() waits for everything and returns the first error any
 * added request completed with (0 if none); then the batch is empty. */
struct edc_slot {
	volatile int32_t word;
	int32_t used;
};

struct edc_batch {
	struct edc *c;
	struct edc_slot *slot;
	int cap;
	int head, n;             /* ring of slots in submission order */
	int32_t err;             /* first error seen */
	uint64_t submitted;      /* requests made through this batch */
};

void edc_batch_init(struct edc_batch *b, struct edc *c, struct edc_slot *slots, int cap);
int32_t edc_batch_io(struct edc_batch *b, const struct ed_protector *prot, int write,
                     uint64_t blkno, void *mem, uint64_t bytes);
int32_t edc_batch_xn_write(struct edc_batch *b, const struct ed_protector *prot);
int32_t edc_batch_xn_read(struct edc_batch *b, const struct ed_protector *prot);
int32_t edc_batch_wait(struct edc_batch *b);

/* ---- the free map ----------------------------------------------------------
 * A read-only view of a unit's free map (exported by the kernel, so reading
 * it costs no system call).  It changes under the reader as others allocate:
 * use it to choose, and let the allocation itself decide (ED_E_ALLOCATED
 * means someone was faster). */
struct edc_fm {
	struct edc *c;
	int unit;
	uint64_t nsectors;
};

int  edc_fm_open(struct edc *c, int unit, struct edc_fm *fm);
int  edc_fm_test(const struct edc_fm *fm, uint64_t sector);    /* 1 = allocated */
/* The first run of `count` free sectors, starting at a multiple of `align`,
 * at or after `goal`, wrapping around once; UINT64_MAX if there is none. */
uint64_t edc_fm_find(const struct edc_fm *fm, uint64_t goal, uint64_t count, uint64_t align);
/* The same inside [from, to) only, without wrapping: a run that starts at
 * or after `from` and ends at or before `to`.  A search near a goal that
 * costs what the window holds, not what the rest of the unit does. */
uint64_t edc_fm_find_in(const struct edc_fm *fm, uint64_t from, uint64_t to, uint64_t count,
                        uint64_t align);
/* Free sectors in [start, start + count) that follow start (0 if start is
 * allocated), at most `max`. */
uint64_t edc_fm_run(const struct edc_fm *fm, uint64_t start, uint64_t max);
/* The first allocated sector at or after s (fm->nsectors if none): a word
 * of the map at a time, for scans over the allocated objects of a big disk. */
uint64_t edc_fm_next_used(const struct edc_fm *fm, uint64_t s);
/* Sectors applications can still allocate: the map's free sectors less
 * those the exodisk keeps for its own metadata (ED_E_NOSPACE once they
 * are all that is left).  What a statfs calls free.  The kernel's count
 * (ED_OP_UNIT_INFO: a map of terabytes is not read for it). */
uint64_t edc_fm_count_free(const struct edc_fm *fm);

/* ED_OP_UNIT_INFO: the unit's size, what is allocated and kept, bindings,
 * log, cache, kernel memory (kernel/uapi/exodisk.h).  >= 0 or an error. */
int64_t edc_unit_info(struct edc *c, int unit, struct ed_unit_info *out);

/* ---- errors --------------------------------------------------------------- */
/* The POSIX errno (positive) a libFS should report for a kernel code. */
int edc_errno(int64_t code);
/* A message for an ED_E_* code, or NULL for other codes. */
const char *ed_strerror(long code);

#endif
