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
#include <stddef.h>
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
static inline uint64_t cycles(void)
{
	uint64_t c;
	__asm__ volatile("rdcycle %0" : "=r"(c));
	return c;
}

/* Requests the unit has accepted since boot (from any source), if the raw
 * path is on to ask; else 0. */
uint64_t disk_requests(void);

/* Statistics over n values (the array is sorted in place). */
uint64_t median_u64(uint64_t *v, int n);
void mean_sd(const uint64_t *v, int n, uint64_t *mean, uint64_t *sd);

/* x/1000 with three decimals, and x/10^6 with two, into buf. */
const char *fmt_milli(char *buf, size_t n, uint64_t x);
const char *fmt_ms(char *buf, size_t n, uint64_t ns);

/* One machine-readable line: "EXOBENCH {" then the caller's key/values
 * (a printf format producing `"k":v,...` without braces), then "}". */
void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Experiments: argv[0] is the subcommand's name. */
int smallfile_main(int argc, char **argv);
int reqcost_main(int argc, char **argv);

#endif
