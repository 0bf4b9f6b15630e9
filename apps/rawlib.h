/*
 * rawlib.h - what disktest and rawbench share: calls into the benchmark-only
 * raw disk path (kernel/uapi/rawio.h), the exported queue pages, and a data
 * pattern that names the disk, sector and pass it was written for, so a read
 * that returns the wrong sector, a stale one or a torn one is caught.
 */
#ifndef APPS_RAWLIB_H
#define APPS_RAWLIB_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "kernel/uapi/rawio.h"
#include "kernel/uapi/blkexport.h"

/* The system call, one wrapper per command (results as in rawio.h). */
long raw_submit(const struct raw_req *v, unsigned n);
long raw_wait(unsigned max_pending);
long raw_info(unsigned unit, struct raw_info *out);
long raw_set(unsigned unit, unsigned what, unsigned long value);

/* Fill in a request. */
void raw_req_make(struct raw_req *q, int op, unsigned unit, uint64_t sector,
                  void *buf, uint32_t nbytes, volatile int32_t *word);

/* Whether the kernel was booted with rawio=1 / polled=1 (kinfo flags). */
bool raw_enabled(void);
bool raw_polled(void);
unsigned raw_ndisks(void);

/* The unit's read-only queue page at UDISKQ(unit), and a consistent copy of it. */
const struct blk_export *raw_queue_page(unsigned unit);
void raw_queue_snapshot(unsigned unit, struct blk_export *out);

/* The pattern: every 512-byte sector of buf (which holds sectors starting at
 * `sector`) stamped with unit, sector and pass, the rest pseudo-random from
 * those.  pat_check returns the index of the first sector that differs, or -1. */
void pat_fill(void *buf, size_t nbytes, unsigned unit, uint64_t sector, uint32_t pass);
long pat_check(const void *buf, size_t nbytes, unsigned unit, uint64_t sector, uint32_t pass);

/* xorshift64*, seeded, the same in every run. */
uint64_t rnd_next(uint64_t *state);

/* Timebase ticks to nanoseconds. */
uint64_t raw_ticks_to_ns(uint64_t ticks);

#endif
