/*
 * bench.c - exobench's shared pieces (see bench.h): the exodisk client,
 * time, request counts, statistics and output.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/rawlib.h"
#include "libos/exo.h"

struct bench B;

/* The library's system-call client, except that waiting sleeps in
 * ED_OP_POLL until one of our operations completes, as the raw path's
 * RAW_WAIT sleeps: both sides of every comparison wait the same way, and
 * under -icount an idle CPU lets simulated time skip ahead. */
static struct edc_transport transport;
static struct edc client;

static void idle_sleep(void *ctx)
{
	int64_t n = transport.request(ctx, ED_OP_POLL, NULL, NULL, NULL);
	if (n > 0) {
		struct ed_operation most = { .one = (uint64_t)n - 1 };
		transport.request(ctx, ED_OP_POLL, NULL, NULL, &most);
	}
}

const char *bench_open(int unit)
{
	struct edc *sys = edc_default();
	transport = *sys->t;
	transport.idle = idle_sleep;
	edc_init(&client, &transport, sys->ctx);
	B.c = &client;
	B.unit = unit;
	B.hz = exo_kinfo()->timebase_hz;
	strcpy(B.dev, "?");
	if (edc_fm_open(B.c, unit, &B.fm) != 0)
		return "no mounted exodisk on that unit";
	B.raw = raw_enabled();
	struct raw_info in;
	if (B.raw && raw_info((unsigned)unit, &in) == 0) {
		memcpy(B.dev, in.name, sizeof B.dev - 1);
		B.dev[sizeof B.dev - 1] = 0;
	}
	return NULL;
}

uint64_t now(void)
{
	return exo_time();
}

uint64_t ns_since(uint64_t t0)
{
	return exo_time_to_ns(exo_time() - t0);
}

uint64_t disk_requests(void)
{
	struct raw_info in;
	if (!B.raw || raw_info((unsigned)B.unit, &in) != 0)
		return 0;
	return in.nsubmitted;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t median_u64(uint64_t *v, int n)
{
	if (n <= 0)
		return 0;
	qsort(v, (size_t)n, sizeof v[0], cmp_u64);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void mean_sd(const uint64_t *v, int n, uint64_t *mean, uint64_t *sd)
{
	*mean = *sd = 0;
	if (n <= 0)
		return;
	uint64_t sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	*mean = sum / (uint64_t)n;
	/* Integer square root of the variance (no floating point needed). */
	uint64_t var = 0;
	for (int i = 0; i < n; i++) {
		uint64_t d = v[i] > *mean ? v[i] - *mean : *mean - v[i];
		var += d * d / (uint64_t)n;
	}
	uint64_t r = 0, bit = 1ull << 62;
	while (bit > var)
		bit >>= 2;
	while (bit != 0) {
		if (var >= r + bit) {
			var -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	*sd = r;
}

const char *fmt_milli(char *buf, size_t n, uint64_t x)
{
	snprintf(buf, n, "%lu.%03lu", (unsigned long)(x / 1000), (unsigned long)(x % 1000));
	return buf;
}

const char *fmt_ms(char *buf, size_t n, uint64_t ns)
{
	uint64_t c = (ns + 5000) / 10000;          /* hundredths of a millisecond */
	snprintf(buf, n, "%lu.%02lu", (unsigned long)(c / 100), (unsigned long)(c % 100));
	return buf;
}

void emit(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("EXOBENCH {");
	vprintf(fmt, ap);
	printf("}\n");
	va_end(ap);
}
