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
/* The first line of every experiment: what ran, where, and the clock's
 * rate, so a reader of the lines alone knows the resolution. */
void emit_meta(const char *exp, int runs);

/* Runs per experiment: at most this many in one boot. */
#define BENCH_MAXRUNS 16

/* Mean, standard deviation (of the population: the runs are all there
 * is), median, minimum and maximum of n values (v is not changed). */
struct summary {
	uint64_t mean, sd, median, min, max;
};
void summarize(const uint64_t *v, int n, struct summary *s);

/* Seeded pseudo-random numbers (xorshift64*), the same in every boot, and
 * a random permutation of a[0..n) built with them. */
uint64_t rnd(uint64_t *seed);
void shuffle(uint32_t *a, uint32_t n, uint64_t *seed);

/* Data that names itself: the first 16 bytes of a block hold `tag` and
 * `id`, so a read that returns the wrong block (or a stale one) shows. */
void stamp_block(void *p, uint64_t tag, uint64_t id);
int stamp_ok(const void *p, uint64_t tag, uint64_t id);

/* An option's number: s must be all decimal digits (usage() otherwise,
 * which does not return). */
long arg_num(const char *s, void (*usage)(void));

/* Experiments: argv[0] is the subcommand's name. */
int smallfile_main(int argc, char **argv);
int largefile_main(int argc, char **argv);
int unixfs_main(int argc, char **argv);
int interleave_main(int argc, char **argv);
int insert_main(int argc, char **argv);
int ddio_main(int argc, char **argv);
int persist_main(int argc, char **argv);
int reqcost_main(int argc, char **argv);

#endif
