/*
 * common.h - the parts of exobench that are plain portable C: statistics,
 * number formatting, seeded random orders, self-naming blocks, option
 * numbers and the machine-readable output line.  They know nothing of the
 * exodisk, so the Linux side of the comparison (tools/linux/lxbench.c)
 * links the same file (common.c) and prints the same lines.
 */
#ifndef APPS_EXOBENCH_COMMON_H
#define APPS_EXOBENCH_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* Runs per experiment: at most this many in one boot. */
#define BENCH_MAXRUNS 16

/* Statistics over n values (the array is sorted in place). */
uint64_t median_u64(uint64_t *v, int n);
void mean_sd(const uint64_t *v, int n, uint64_t *mean, uint64_t *sd);

/* Mean, standard deviation (of the population: the runs are all there
 * is), median, minimum and maximum of n values (v is not changed). */
struct summary {
	uint64_t mean, sd, median, min, max;
};
void summarize(const uint64_t *v, int n, struct summary *s);

/* x/1000 with three decimals, and x/10^6 with two, into buf. */
const char *fmt_milli(char *buf, size_t n, uint64_t x);
const char *fmt_ms(char *buf, size_t n, uint64_t ns);

/* One machine-readable line: "EXOBENCH {" then the caller's key/values
 * (a printf format producing `"k":v,...` without braces), then "}". */
void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Seeded pseudo-random numbers (xorshift64*), the same in every boot, and
 * a random permutation of a[0..n) built with them. */
uint64_t rnd(uint64_t *seed);
void shuffle(uint32_t *a, uint32_t n, uint64_t *seed);
/* The seed of the large file's random order for a run and phase: every
 * organization and every file system visits the same blocks in the same
 * order. */
static inline uint64_t large_order_seed(int run, int phase)
{
	return 0x1a26ef11e5eedull + (uint64_t)run * 16 + (uint64_t)phase;
}

/* Data that names itself: the first 16 bytes of a block hold `tag` and
 * `id`, so a read that returns the wrong block (or a stale one) shows. */
void stamp_block(void *p, uint64_t tag, uint64_t id);
int stamp_ok(const void *p, uint64_t tag, uint64_t id);

/* An option's number: s must be all decimal digits (usage() otherwise,
 * which does not return). */
long arg_num(const char *s, void (*usage)(void));
/* The same without exiting: 0 and *v, or -1.  num_list: a comma-separated
 * list of at most max such numbers into v; the count, or -1. */
int parse_num(const char *s, long *v);
int num_list(const char *s, long *v, int max);

#endif
