/*
 * harness.c - edtest's checking, capabilities, places on the disk, I/O
 * helpers and child processes (the declarations and rules are in edt.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

extern char **environ;

struct edc *E;
int U;
struct edc_fm FM;

/* The client: the library's system-call transport (its waits sleep in
 * ED_OP_POLL until one of our operations completes). */
void client_init(void)
{
	E = edc_default();
}

static unsigned long nchecks, nfailed;

static void vline(const char *tag, const char *fmt, va_list ap)
{
	printf("%s", tag);
	vprintf(fmt, ap);
}

bool expect(int64_t got, int64_t want, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	nchecks++;
	bool ok = got == want;
	vline(ok ? "ok: " : "FAIL: ", fmt, ap);
	va_end(ap);
	if (ok) {
		printf(" -> %ld", (long)got);
		if (got < 0)
			printf(" (%s)", exo_strerror(got));
	} else {
		nfailed++;
		printf(" -> %ld (%s), expected %ld (%s)", (long)got, got < 0 ? exo_strerror(got) : "",
		       (long)want, want < 0 ? exo_strerror(want) : "");
	}
	printf("\n");
	return ok;
}

bool check(bool cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	nchecks++;
	if (!cond)
		nfailed++;
	vline(cond ? "ok: " : "FAIL: ", fmt, ap);
	va_end(ap);
	printf("\n");
	return cond;
}

void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline("   ", fmt, ap);
	va_end(ap);
	printf("\n");
}

void group(const char *name)
{
	printf("== %s (unit %d)\n", name, U);
}

unsigned long checks_done(void) { return nchecks; }
unsigned long checks_failed(void) { return nfailed; }

/* ---- capabilities ------------------------------------------------------------ */

static uint64_t seed = 0x6564746573740001ull;

void cap_seed(uint64_t s)
{
	seed = s;
}

struct ed_cap cap(unsigned n)
{
	/* splitmix64 of seed and n: distinct, and not guessable from n alone. */
	struct ed_cap c;
	for (int i = 0; i < 2; i++) {
		uint64_t z = seed + (uint64_t)(2 * n + (unsigned)i + 1) * 0x9e3779b97f4a7c15ull;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		c.w[i] = z ^ (z >> 31);
	}
	return c;
}

bool cap_eq(const struct ed_cap *a, const struct ed_cap *b)
{
	return a->w[0] == b->w[0] && a->w[1] == b->w[1];
}

void cap_fmt(char out[33], const struct ed_cap *c)
{
	snprintf(out, 33, "%016lx%016lx", (unsigned long)c->w[0], (unsigned long)c->w[1]);
}

bool cap_parse(const char *s, struct ed_cap *out)
{
	if (strlen(s) != 32)
		return false;
	char half[17];
	for (int i = 0; i < 2; i++) {
		memcpy(half, s + 16 * i, 16);
		half[16] = 0;
		char *end;
		out->w[i] = strtoull(half, &end, 16);
		if (*end != 0)
			return false;
	}
	return true;
}

/* ---- places ------------------------------------------------------------------ */

static uint64_t next_goal;

uint64_t area(uint64_t n)
{
	uint64_t s = edc_fm_find(&FM, next_goal, n, 1);
	if (s == UINT64_MAX) {
		printf("FAIL: no %lu free sectors left on unit %d\n", (unsigned long)n, U);
		exit(1);
	}
	/* Leave a gap, so that a test that grows an extent finds room. */
	next_goal = s + n + 64;
	return s;
}

bool allocated(uint64_t s)
{
	return edc_fm_test(&FM, s) != 0;
}

bool all_allocated(uint64_t s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (!allocated(s + i))
			return false;
	return true;
}

bool all_free(uint64_t s, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (allocated(s + i))
			return false;
	return true;
}

struct ed_protector pext(uint64_t sector, uint64_t bytes, unsigned n)
{
	struct ed_cap rc = cap(n), wc = cap(n + 1);
	struct ed_protector p = edc_prot_extent(U, sector, &rc, &wc);
	p.length = bytes;
	return p;
}

struct ed_protector pxn(uint64_t sector, uint16_t slot, uint64_t bytes, unsigned n)
{
	struct ed_cap rc = cap(n), wc = cap(n + 1);
	struct ed_protector p = edc_prot_xn(U, sector, slot, &rc, &wc);
	p.length = bytes;
	return p;
}

struct ed_protector pproxy(int64_t id, unsigned n)
{
	struct ed_protector p = pext((uint64_t)id, 0, n);
	p.kind = ED_PK_PROXY;
	return p;
}

/* ---- I/O --------------------------------------------------------------------- */

int32_t io(const struct ed_protector *p, int write, uint64_t blkno, void *mem, uint64_t bytes)
{
	volatile int32_t word;
	int64_t r = edc_io(E, p, write, blkno, mem, bytes, &word);
	if (r < 0)
		return (int32_t)r;
	return edc_wait(E, &word);
}

int32_t ext_write(const struct ed_protector *p) { return edc_extent_write_sync(E, p); }
int32_t ext_read(const struct ed_protector *p) { return edc_extent_read_sync(E, p); }
int32_t xn_write(const struct ed_protector *p) { return edc_xn_write_sync(E, p); }
int32_t xn_read(const struct ed_protector *p) { return edc_xn_read_sync(E, p); }

int64_t rawreq(uint64_t op, uint64_t prot, uint64_t buf, uint64_t stuff)
{
	/* The transport passes the op as an int: for ops that do not fit,
	 * callers use sys_call4 themselves (t_absurd.c). */
	return E->t->request(E->ctx, (int)op, (struct ed_protector *)(uintptr_t)prot,
	                     (struct ed_buf *)(uintptr_t)buf, (struct ed_operation *)(uintptr_t)stuff);
}

/* Each 8-byte word names the sector, its place in it and the seed. */
void fill(void *buf, uint64_t bytes, uint64_t sector, uint32_t seed32)
{
	uint64_t *w = buf;
	for (uint64_t i = 0; i < bytes / 8; i++)
		w[i] = ((sector + i / 64) << 24) ^ ((uint64_t)seed32 << 8) ^ (i % 64) ^ 0xa5a5000000000000ull;
}

bool same(const void *buf, uint64_t bytes, uint64_t sector, uint32_t seed32, bool hdr)
{
	const uint64_t *w = buf;
	for (uint64_t i = 0; i < bytes / 8; i++) {
		uint64_t want = ((sector + i / 64) << 24) ^ ((uint64_t)seed32 << 8) ^ (i % 64) ^
		                0xa5a5000000000000ull;
		if (hdr && i < ED_EXT_HDR_BYTES / 8)
			want = 0;
		if (w[i] != want)
			return false;
	}
	return true;
}

bool pileup_certain(void)
{
	static int known = -1;
	if (known < 0) {
		static uint8_t buf[64 * 1024];
		known = (exo_kinfo()->flags & KINFO_F_POLLED) != 0;
		uint64_t S = area(1 + sizeof buf / SECT);
		struct ed_protector p = pext(S, SECT + sizeof buf, 5000);
		if (!known && edc_extent_alloc(E, &p) == 0) {
			io(&p, 1, S + 1, buf, sizeof buf);          /* the first write warms up */
			/* The fastest of four: one write slowed by a busy host
			 * (virtio under load once took over 2 ms) must not make a
			 * fast disk look slow; the model takes over 10 ms every time. */
			uint64_t best = UINT64_MAX;
			for (int i = 0; i < 4; i++) {
				uint64_t t0 = exo_time();
				io(&p, 1, S + 1, buf, sizeof buf);
				uint64_t ns = exo_time_to_ns(exo_time() - t0);
				if (ns < best) best = ns;
			}
			known = best > 4000000;
			edc_extent_dealloc(E, &p);
		}
	}
	return known != 0;
}

bool wait_until(bool (*cond)(void *), void *arg, unsigned ms)
{
	uint64_t end = exo_time() + exo_ns_to_time((uint64_t)ms * 1000000);
	while (!cond(arg)) {
		if (exo_time() > end)
			return false;
		exo_sleep_ns(1000000);      /* a timer tick: let the others run */
	}
	return true;
}

/* ---- children ------------------------------------------------------------------ */

int child_start(const char *name, const char *const *args)
{
	char ustr[8];
	snprintf(ustr, sizeof ustr, "%d", U);
	const char *argv[24] = { "edtest", "-u", ustr, "child", name };
	int n = 5;
	for (; args != NULL && args[n - 5] != NULL && n < 23; n++)
		argv[n] = args[n - 5];
	argv[n] = NULL;
	fflush(stdout);
	return exo_spawn("/bin/edtest", (char *const *)argv, environ);
}

int child(const char *name, const char *const *args)
{
	int pid = child_start(name, args);
	if (pid < 0)
		return pid;
	int status = -1;
	int r = exo_wait(pid, &status);
	return r < 0 ? r : status;
}

uint64_t pages_free(void)
{
	struct ed_unit_info u;
	uint64_t kmem = edc_unit_info(E, U, &u) >= 0 ? u.kmem_bytes / 4096 : 0;
	return exo_kinfo()->free_pages + kmem;
}
