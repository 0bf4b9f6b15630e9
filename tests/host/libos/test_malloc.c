/*
 * test_malloc.c - libos/malloc.c (the guest programs' heap on RISC-V) on
 * the host: built with its functions renamed (tm_*) over a heap in a static
 * array, then driven by a random mix of malloc, calloc, memalign, realloc
 * and free of small and large sizes.  Every live block is filled with its
 * own byte and checked before it changes, so blocks that overlap, a realloc
 * that loses bytes, or a calloc that is not zero fail the test; and the
 * heap must not grow past a bound (freed memory is used again).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *tm_malloc(size_t n);
void tm_free(void *p);
void *tm_realloc(void *p, size_t n);
void *tm_calloc(size_t n, size_t size);
void *tm_memalign(size_t align, size_t n);
size_t tm_malloc_usable_size(void *p);

static unsigned char arena[64u << 20] __attribute__((aligned(4096)));
static size_t brk_;

void *tm_sbrk(intptr_t incr)
{
	if (incr < 0 || brk_ + (size_t)incr > sizeof arena)
		return (void *)-1;
	void *old = arena + brk_;
	brk_ += (size_t)incr;
	return old;
}

#define N 2000
static unsigned char *blk[N];
static size_t len[N];
static unsigned char fill[N];

static int fails;
#define CHECK(c, ...) do { if (!(c)) { printf("test_malloc: FAIL: " __VA_ARGS__); printf("\n"); fails++; return; } } while (0)

static size_t some_size(void)
{
	int r = rand() % 100;
	if (r < 70)
		return (size_t)(rand() % 300);
	if (r < 92)
		return (size_t)(rand() % 40000);
	return (size_t)(rand() % (256 << 10));
}

static void intact(int i)
{
	for (size_t k = 0; k < len[i]; k++)
		CHECK(blk[i][k] == fill[i], "block %d (%zu bytes) changed at %zu", i, len[i], k);
}

static void step(void)
{
	int i = rand() % N, op = rand() % 10;
	intact(i);
	if (op < 4) {
		tm_free(blk[i]);
		blk[i] = NULL;
		len[i] = 0;
	} else if (op < 7) {
		tm_free(blk[i]);
		len[i] = some_size();
		size_t align = (size_t)64 << (rand() % 7);
		blk[i] = op == 4 ? tm_memalign(align, len[i]) : op == 5 ? tm_calloc(1, len[i]) : tm_malloc(len[i]);
		CHECK(blk[i] != NULL, "out of memory for %zu bytes", len[i]);
		CHECK(tm_malloc_usable_size(blk[i]) >= len[i], "usable size below %zu", len[i]);
		CHECK(op != 4 || ((uintptr_t)blk[i] & (align - 1)) == 0, "memalign(%zu) misaligned", align);
		CHECK(((uintptr_t)blk[i] & 15) == 0, "not 16-byte aligned");
		for (size_t k = 0; op == 5 && k < len[i]; k++)
			CHECK(blk[i][k] == 0, "calloc'ed byte %zu not zero", k);
		fill[i] = (unsigned char)rand();
		memset(blk[i], fill[i], len[i]);
	} else {
		size_t n = some_size();
		blk[i] = tm_realloc(blk[i], n);
		CHECK(blk[i] != NULL || n == 0, "realloc to %zu failed", n);
		for (size_t k = 0; k < len[i] && k < n; k++)
			CHECK(blk[i][k] == fill[i], "realloc from %zu to %zu lost byte %zu", len[i], n, k);
		len[i] = n;
		if (n > 0)
			memset(blk[i], fill[i], n);
	}
}

int main(void)
{
	srand(11);
	for (size_t n = 0; n <= 40000 && !fails; n += 1 + n / 64) {
		void *p = tm_malloc(n);
		if (p == NULL || tm_malloc_usable_size(p) < n) {
			printf("test_malloc: FAIL: malloc(%zu)\n", n);
			return 1;
		}
		tm_free(p);
	}
	for (long it = 0; it < 60000 && !fails; it++)
		step();
	for (int i = 0; i < N && !fails; i++)
		intact(i);
	/* The arena (64 MiB) holds the run only if freed blocks are used
	 * again: what is live at a time is about 10 MiB (8% of 2,000 blocks
	 * large, 128 KiB on average), what is allocated in all many GiB. */
	if (fails)
		return 1;
	printf("test_malloc: ok (heap %zu MiB after 60000 operations)\n", brk_ >> 20);
	return 0;
}
