/*
 * test_mem.c - kernel/mem.c (the memcpy, memmove, memset and memcmp of the
 * kernel and of every guest program) against the host's C library, for
 * every length up to 300 bytes and every alignment of source and
 * destination, with guard bytes around each destination to catch a store
 * one byte too far.  Built under other names (MEM_PREFIX) so the host's own
 * functions stay in charge of everything else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *km_memcpy(void *, const void *, size_t);
void *km_memmove(void *, const void *, size_t);
void *km_memset(void *, int, size_t);
int km_memcmp(const void *, const void *, size_t);

#define MAXN 300
#define PAD 16

static unsigned char src[MAXN + 2 * PAD], got[MAXN + 2 * PAD], want[MAXN + 2 * PAD];
static int failures;

static void fail(const char *what, size_t n, size_t da, size_t sa)
{
	if (failures++ < 10)
		printf("FAIL: %s n=%zu dst+%zu src+%zu\n", what, n, da, sa);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 3));
}

static int sign(int x) { return (x > 0) - (x < 0); }

int main(void)
{
	for (size_t n = 0; n <= MAXN; n++) {
		for (size_t da = 0; da < 8; da++) {
			for (size_t sa = 0; sa < 8; sa++) {
				fill(src, sizeof src, (unsigned)n);
				fill(got, sizeof got, 99);
				memcpy(want, got, sizeof got);
				if (km_memcpy(got + PAD + da, src + PAD + sa, n) != got + PAD + da)
					fail("memcpy return", n, da, sa);
				memcpy(want + PAD + da, src + PAD + sa, n);
				if (memcmp(got, want, sizeof got))
					fail("memcpy", n, da, sa);

				/* memmove within one buffer, both directions. */
				fill(got, sizeof got, 5);
				memcpy(want, got, sizeof got);
				km_memmove(got + PAD + da, got + PAD + sa, n);
				memmove(want + PAD + da, want + PAD + sa, n);
				if (memcmp(got, want, sizeof got))
					fail("memmove", n, da, sa);

				/* memcmp: equal, then one byte changed anywhere. */
				memcpy(got + PAD + da, src + PAD + sa, n);
				if (km_memcmp(got + PAD + da, src + PAD + sa, n) != 0)
					fail("memcmp equal", n, da, sa);
				if (n > 0 && sa == 0) {
					for (size_t k = 0; k < n; k += (n > 40 ? 13 : 1)) {
						got[PAD + da + k] ^= 0x80;
						int a = km_memcmp(got + PAD + da, src + PAD + sa, n);
						int b = memcmp(got + PAD + da, src + PAD + sa, n);
						if (sign(a) != sign(b))
							fail("memcmp order", n, da, k);
						got[PAD + da + k] ^= 0x80;
					}
				}
			}
			fill(got, sizeof got, 77);
			memcpy(want, got, sizeof got);
			km_memset(got + PAD + da, 0xA5, n);
			memset(want + PAD + da, 0xA5, n);
			if (memcmp(got, want, sizeof got))
				fail("memset", n, da, 0);
		}
	}
	/* Overlaps of every distance, both directions, over longer runs. */
	static unsigned char big[4096], ref[4096];
	for (size_t dist = 1; dist < 40; dist++) {
		for (int dir = 0; dir < 2; dir++) {
			fill(big, sizeof big, (unsigned)dist);
			memcpy(ref, big, sizeof big);
			size_t from = dir ? 100 + dist : 100, to = dir ? 100 : 100 + dist;
			km_memmove(big + to, big + from, 3000);
			memmove(ref + to, ref + from, 3000);
			if (memcmp(big, ref, sizeof big))
				fail("memmove overlap", 3000, to, from);
		}
	}
	if (failures) {
		printf("test_mem: %d failures\n", failures);
		return 1;
	}
	printf("test_mem: ok\n");
	return 0;
}
