/*
 * cryptotest.c - the crypt layer's cryptography checked in the guest, and its speed.
 *   cryptotest              the published test vectors and the fast ChaCha
 *                           against the portable one (the host's test_crypto)
 *   cryptotest -b [MB]      time ChaCha, Poly1305 and the AEAD over MB MiB
 *                           (default 4) of 4 KiB blocks, fast and portable
 * The tests are tests/host/userfs/test_crypto.c, compiled here for the guest,
 * so that the code the guest's CPU runs (x86-64: SSE2, four blocks at a time;
 * RV64 with Zbb: rotates) is the code checked.  Under ICOUNT=1 the benchmark's
 * nanoseconds are instructions: `-b` prints instructions per byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/clock.h"

#define CRYPTO_TEST_NO_MAIN
#include "tests/host/userfs/test_crypto.c"

static uint8_t bench_buf[4096 + 64];

static double per_byte(uint64_t ns, uint64_t bytes)
{
	return (double)ns / (double)bytes;
}

static void bench(int mb)
{
	uint8_t key[32], nonce[12] = { 0 }, tag[16], aad[33] = { 0 };
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	uint8_t *b = bench_buf + 4;          /* the crypt layer's blocks are 4-byte aligned */
	memset(b, 0x5a, 4096);
	uint64_t blocks = (uint64_t)mb * 256, bytes = blocks * 4096;
	for (int portable = 0; portable < 2; portable++) {
		chacha_force_portable(portable);
		printf("cryptotest: %s, %d MiB in 4 KiB blocks (ns per byte; instructions under ICOUNT=1)\n",
		       chacha_impl(), mb);
		for (int rounds = 8; rounds <= 20; rounds += 4) {
			uint64_t t0 = libos_time_ns();
			for (uint64_t i = 0; i < blocks; i++)
				chacha_xor(rounds, key, nonce, 1, b, b, 4096);
			uint64_t t1 = libos_time_ns();
			for (uint64_t i = 0; i < blocks; i++) {
				nonce[0] = (uint8_t)i;
				chacha_aead_seal(rounds, key, nonce, aad, sizeof aad, b, 4096, b, tag);
			}
			uint64_t t2 = libos_time_ns();
			printf("  ChaCha%-2d  %6.2f   AEAD seal  %6.2f\n", rounds, per_byte(t1 - t0, bytes),
			       per_byte(t2 - t1, bytes));
		}
		uint64_t t0 = libos_time_ns();
		for (uint64_t i = 0; i < blocks; i++)
			poly1305(key, b, 4096, tag);
		uint64_t t1 = libos_time_ns();
		printf("  Poly1305  %6.2f\n", per_byte(t1 - t0, bytes));
	}
	chacha_force_portable(0);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "-b") == 0) {
		int mb = argc >= 3 ? atoi(argv[2]) : 4;
		if (mb < 1 || mb > 1024) {
			fprintf(stderr, "cryptotest: -b takes 1 to 1024 (MiB)\n");
			return 2;
		}
		bench(mb);
		return 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: cryptotest [-b [MB]]\n");
		return 2;
	}
	return run_tests();
}
