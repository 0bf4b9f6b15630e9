/*
 * deadhold.c - check that a process dying with disk writes in flight hands its shared lock on only after they have landed.
 *   deadhold [N]      a child takes the lock of a shared area (libos/share.h),
 *                     queues N writes of 16 KiB (default 48, at most 64) and
 *                     kills itself.  The parent takes the lock after it
 *                     (SHARE_DEAD) and at once reads those sectors, which
 *                     must all hold what the child wrote; then it writes its
 *                     own over them and, after the child's exit and a flush,
 *                     must read its own back: no write of the dead child may
 *                     land after the lock was handed on.  Exit status 1 if
 *                     either fails.
 *   deadhold child SECTOR SLOT START N     the child's part
 *
 * The test leans on the block layer's C-LOOK order (drivers/blkqueue.c):
 * each of the parent's requests starts one sector before the child's write
 * it overlaps, so when both wait in the queue together the parent's is
 * served first.  If the kernel announced the death while the child's
 * writes still waited there (the bug this test was written for), the
 * parent would read the old sectors and its own writes would be
 * overwritten by the dead child's (docs/sharing.md, "A holder that dies").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/exo.h"
#include "libos/share.h"
#include "libos/kit/kit.h"

#define CHUNK   32u               /* sectors the child writes per request     */
#define STRIDE  64u               /* sectors between two of them              */
#define MAXN    64
#define LEAD    8u                /* sectors before the first chunk           */

extern char **environ;

static const char *opts = "key=deadhold";

/* Sector s's contents for pass p: every 8-byte word names both. */
static void fill(uint64_t *buf, uint64_t sector, uint32_t nsect, uint32_t pass)
{
	for (uint32_t i = 0; i < nsect * 64; i++)
		buf[i] = (uint64_t)pass << 48 | (sector + i / 64) << 8 | (i % 64);
}

/* The pass sector `sector` of buf holds, or -1 if it is no pass's. */
static int pass_of(const uint64_t *buf, uint64_t sector)
{
	uint32_t pass = (uint32_t)(buf[0] >> 48);
	uint64_t want[64];
	fill(want, sector, 1, pass);
	return memcmp(buf, want, sizeof want) == 0 ? (int)pass : -1;
}

static int attach(struct share *s)
{
	static const uint8_t name[SHSEG_NAME] = "deadhold";
	int e = share_attach(s, name, sizeof(struct share_area));
	if (e < 0)
		printf("deadhold: no shared area (%d)\n", e);
	return e;
}

/* Keep starting request r until the kernel takes it. */
static int64_t start(struct kit *k, uint64_t xs, uint16_t slot, int write, uint64_t blkno,
                     void *buf, uint32_t nsect, volatile int32_t *word)
{
	struct ed_protector p = kit_prot(k, xs, slot);
	int64_t r;
	KIT_RETRY(k, xs, slot, r, edc_io(k->c, &p, write, blkno, buf, (uint64_t)nsect * 512, word));
	return r;
}

static int child(uint64_t xs, uint16_t slot, uint64_t first, int n)
{
	struct kit k;
	struct share s;
	static uint64_t buf[MAXN][CHUNK * 64];
	static volatile int32_t word[MAXN];
	if (kit_open(&k, "deadhold", opts) < 0 || attach(&s) < 0)
		return 2;
	if (share_enter(&s) < 0)
		return 2;
	for (int i = 0; i < n; i++) {
		uint64_t at = first + (uint64_t)i * STRIDE;
		fill(buf[i], at, CHUNK, 1);
		if (start(&k, xs, slot, 1, at, buf[i], CHUNK, &word[i]) < 0) {
			printf("deadhold: child: write %d refused\n", i);
			return 2;
		}
	}
	/* Die holding the lock, the writes still queued. */
	exo_kill(exo_getpid());
	for (;;)
		exo_yield();
}

/* Requests of the parent: each chunk from one sector before it. */
static int all(struct kit *k, uint64_t xs, uint16_t slot, int write, uint64_t first, int n,
               uint64_t (*buf)[(CHUNK + 1) * 64], uint32_t pass)
{
	static volatile int32_t word[MAXN];
	for (int i = 0; i < n; i++) {
		uint64_t at = first + (uint64_t)i * STRIDE - 1;
		if (write)
			fill(buf[i], at, CHUNK + 1, pass);
		if (start(k, xs, slot, write, at, buf[i], CHUNK + 1, &word[i]) < 0)
			return -1;
	}
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad |= edc_wait(k->c, &word[i]) != 0;
	return bad ? -1 : 0;
}

/* Sectors of the child's chunks that do not hold pass `want`. */
static int count_not(uint64_t (*buf)[(CHUNK + 1) * 64], uint64_t first, int n, int want)
{
	int wrong = 0;
	for (int i = 0; i < n; i++)
		for (uint32_t j = 1; j <= CHUNK; j++)
			wrong += pass_of(&buf[i][j * 64], first + (uint64_t)i * STRIDE - 1 + j) != want;
	return wrong;
}

static int parent(int n)
{
	struct kit k;
	struct kit_pool pool = { .len = 256, .hint = 0 };
	struct share s;
	static uint64_t buf[MAXN][(CHUNK + 1) * 64];
	uint64_t xs, first, got;
	uint16_t slot;
	uint64_t want = LEAD + (uint64_t)n * STRIDE;
	int e = kit_open(&k, "deadhold", opts);
	if (e == 0)
		e = kit_alloc_xn(&k, &pool, 1 << 16, &xs, &slot);
	int64_t len = e < 0 ? e : kit_alloc_extent(&k, xs, slot, 0, xs, want, want, &got);
	if (len < 0 || kit_commit(&k, xs, slot) < 0) {
		printf("deadhold: cannot set up the disk (%d, %lld)\n", e, (long long)len);
		return 2;
	}
	first = got + LEAD;
	/* Pass 0 everywhere, durable, before the child starts. */
	if (all(&k, xs, slot, 1, first, n, buf, 0) < 0 || edc_flush(k.c, k.unit) < 0 || attach(&s) < 0) {
		printf("deadhold: cannot write pass 0\n");
		return 2;
	}
	char sx[24], sl[24], sf[24], sn[24];
	snprintf(sx, sizeof sx, "%llu", (unsigned long long)xs);
	snprintf(sl, sizeof sl, "%u", slot);
	snprintf(sf, sizeof sf, "%llu", (unsigned long long)first);
	snprintf(sn, sizeof sn, "%d", n);
	char *argv[] = { "deadhold", "child", sx, sl, sf, sn, NULL };
	int pid = exo_spawn("/bin/deadhold", argv, environ), status;
	if (pid < 0) {
		printf("deadhold: spawn: %s\n", exo_strerror(pid));
		return 2;
	}
	/* Once the child holds the lock, wait for it (not sleeping first: a
	 * sleep would give its writes time to land anyway). */
	while (__atomic_load_n(&s.a->k.lock, __ATOMIC_ACQUIRE) == 0) {
		if (exo_wait_opts(pid, &status, WAIT_NOHANG) == pid) {
			printf("deadhold: the child exited (%d) without taking the lock\n", status);
			return 2;
		}
		exo_yield();
	}
	int how = share_enter(&s);
	/* Read at once what the child wrote, then write over it. */
	int bad = all(&k, xs, slot, 0, first, n, buf, 0) < 0;
	int stale = count_not(buf, first, n, 1);
	bad |= all(&k, xs, slot, 1, first, n, buf, 2) < 0;
	/* Whatever the child still had queued has landed after these. */
	exo_wait(pid, &status);
	bad |= edc_flush(k.c, k.unit) < 0;
	bad |= all(&k, xs, slot, 0, first, n, buf, 0) < 0;
	int lost = count_not(buf, first, n, 2);
	share_leave(&s);
	share_detach(&s);
	kit_xn_free(&k, xs, slot);
	kit_commit(&k, xs, slot);
	printf("deadhold: %d writes in flight, lock %s; next holder read %d of %d sectors stale, "
	       "%d of its sectors overwritten by the dead process: %s\n", n,
	       how == SHARE_DEAD ? "DEAD" : "not DEAD", stale, n * (int)CHUNK, lost,
	       bad || how != SHARE_DEAD || stale || lost ? "WRONG" : "ok");
	return bad || how != SHARE_DEAD || stale || lost;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "child") == 0)
		return child(strtoull(argv[2], NULL, 0), (uint16_t)atoi(argv[3]),
		             strtoull(argv[4], NULL, 0), atoi(argv[5]));
	int n = argc >= 2 ? atoi(argv[1]) : 48;
	if (argc > 2 || n < 1 || n > MAXN) {
		printf("usage: deadhold [N]   (1 <= N <= %d)\n", MAXN);
		return 2;
	}
	return parent(n);
}
