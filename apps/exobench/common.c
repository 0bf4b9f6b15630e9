/*
 * common.c - exobench's portable pieces (common.h): statistics, formatting,
 * random orders, self-naming blocks, option numbers, the output line.
 * Linked into exobench and into the Linux side's tools/linux/lxbench.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/exobench/common.h"

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

/* The line is made whole first and written with one write(): stdout's
 * buffer may flush a long line in pieces, and with two processes on one
 * console (exobench interleave) another's line could land in the middle. */
void emit(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(line, sizeof line, "EXOBENCH {");
	n += vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof line - 3)
		n = (int)sizeof line - 3;        /* (no line is this long) */
	line[n++] = '}';
	line[n++] = '\n';
	fflush(stdout);
	if (write(1, line, (size_t)n) != n)
		fprintf(stderr, "exobench: lost an EXOBENCH line\n");
}

void summarize(const uint64_t *v, int n, struct summary *s)
{
	uint64_t tmp[BENCH_MAXRUNS];
	memset(s, 0, sizeof *s);
	if (n <= 0 || n > BENCH_MAXRUNS)
		return;
	s->min = UINT64_MAX;
	for (int i = 0; i < n; i++) {
		tmp[i] = v[i];
		s->min = v[i] < s->min ? v[i] : s->min;
		s->max = v[i] > s->max ? v[i] : s->max;
	}
	mean_sd(v, n, &s->mean, &s->sd);
	s->median = median_u64(tmp, n);
}

uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

void shuffle(uint32_t *a, uint32_t n, uint64_t *seed)
{
	for (uint32_t i = 0; i < n; i++)
		a[i] = i;
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = (uint32_t)(rnd(seed) % i);
		uint32_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

void stamp_block(void *p, uint64_t tag, uint64_t id)
{
	memcpy(p, &tag, 8);
	memcpy((uint8_t *)p + 8, &id, 8);
}

int stamp_ok(const void *p, uint64_t tag, uint64_t id)
{
	uint64_t t, i;
	memcpy(&t, p, 8);
	memcpy(&i, (const uint8_t *)p + 8, 8);
	return t == tag && i == id;
}

long arg_num(const char *s, void (*usage)(void))
{
	char *end;
	if (s == NULL || *s < '0' || *s > '9')
		usage();
	long v = strtol(s, &end, 10);
	if (*end != 0)
		usage();
	return v;
}

int parse_num(const char *s, long *v)
{
	char *end;
	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	*v = strtol(s, &end, 10);
	return *end == 0 ? 0 : -1;
}

int num_list(const char *s, long *v, int max)
{
	char tmp[96];
	int n = 0;
	if (strlen(s) >= sizeof tmp)
		return -1;
	strcpy(tmp, s);
	for (char *p = tmp, *next; p != NULL; p = next) {
		next = strchr(p, ',');
		if (next != NULL)
			*next++ = 0;
		if (n == max || parse_num(p, &v[n]) != 0)
			return -1;
		n++;
	}
	return n;
}
