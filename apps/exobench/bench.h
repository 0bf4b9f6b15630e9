/*
 * bench.h - what the exobench experiments share (apps/exobench.c is the
 * driver; each experiment is a subcommand in a file of its own here).
 *
 * Timing: the RISC-V time CSR (rdtime), read without a system call.  Its
 * rate is kinfo->timebase_hz: 10 MHz on QEMU virt, so one tick is 100 ns,
 * the resolution of every time exobench reports.  Under the disk model
 * (DISK=model, QEMU -icount) the same counter is virtual time, advanced
 * 1 ns per executed instruction and skipped forward while the CPU idles.
 *
 * Output: a human table on stdout, and every figure also as one line
 * "EXOBENCH {json}" for scripts (make bench, issue 6).  Keys are fixed per
 * experiment; times are integers in nanoseconds.
 */
#ifndef APPS_EXOBENCH_BENCH_H
#define APPS_EXOBENCH_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include "libos/exo.h"
#include <stddef.h>
#include "apps/exobench/common.h"
#include "libos/edc.h"

struct bench {
	struct edc *c;            /* the exodisk client (waits by sleeping)   */
	int unit;
	struct edc_fm fm;         /* the unit's free map                      */
	bool raw;                 /* the raw path is on (boot option rawio=1) */
	char dev[32];             /* "virtio-blk", "model:RZ25", ... or "?"  */
	uint64_t hz;              /* rdtime ticks per second                  */
};

extern struct bench B;

/* Set up B for unit; 0 or a message (the unit has no exodisk...). */
const char *bench_open(int unit);

/* Time. */
uint64_t now(void);                        /* rdtime                         */
uint64_t ns_since(uint64_t t0);            /* nanoseconds since rdtime t0    */
static inline uint64_t cycles(void) { return exo_cycles(); }   /* libos/exo.h */

/* Requests the unit has accepted since boot (from any source), if the raw
 * path is on to ask; else 0. */
uint64_t disk_requests(void);

/* The first line of every experiment: what ran, where, and the clock's
 * rate, so a reader of the lines alone knows the resolution. */
void emit_meta(const char *exp, int runs);

/* Empty the exodisk cache of B.unit before a cold phase (ED_OP_DROP_CACHE,
 * called again, a millisecond apart, while entries are still busy being
 * written to their home sectors).  Returns how many of the unit's entries
 * are left (held by another process, or dirty: a libFS's in-memory lock),
 * or a negative error. */
int64_t bench_cold(void);

/* Experiments: argv[0] is the subcommand's name. */
int smallfile_main(int argc, char **argv);
int largefile_main(int argc, char **argv);
int fs_main(int argc, char **argv);
int unixfs_main(int argc, char **argv);
int interleave_main(int argc, char **argv);
int insert_main(int argc, char **argv);
int ddio_main(int argc, char **argv);
int persist_main(int argc, char **argv);
int reqcost_main(int argc, char **argv);
int lfsclean_main(int argc, char **argv);

#endif
