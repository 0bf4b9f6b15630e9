/*
 * check.h - the little the driver host tests share: a CHECK that stops the
 * test at the first failure with the file, line and values, and a seeded
 * random number generator so every run sees the same cases.
 */
#ifndef TESTS_DRIVERS_CHECK_H
#define TESTS_DRIVERS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		exit(1); \
	} \
} while (0)

/* Compare two integers and show both on failure. */
#define CHECK_EQ(a, b) do { \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { \
		fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", \
		        __FILE__, __LINE__, #a, #b, a_, b_); \
		exit(1); \
	} \
} while (0)

/* xorshift64*: small, fast, and the same everywhere. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static inline void rng_seed(uint64_t s) { rng_state = s ? s : 1; }

static inline uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n), n > 0 (the bias is negligible for the n used here). */
static inline uint64_t rng_below(uint64_t n) { return rng_next() % n; }

#endif
