/*
 * chacha_zbb.c - ChaCha's block loop (chacha_block.h) for RV64 with the
 * Zbb extension: each 32-bit rotate is one roriw, so a quarter round is 12
 * instructions instead of 20.  chacha.c calls it only when the kernel found
 * Zbb on every hart (KINFO_F_ZBB in the kinfo page); elsewhere this file
 * is empty.
 *
 * Why the quarter round in assembly: GCC 12 given -march=..._zbb rotates by a
 * register (rolw), which ties up four registers holding 16, 12, 8 and 7 and
 * makes the state spill; and roriw in a one-instruction asm statement
 * leaves GCC unable to prove its result sign-extended, so it extends every
 * word again each round.  Here the sixteen words live in 64-bit registers
 * as sign-extended words (the form RV64 keeps 32-bit values in, which
 * addw, xor and roriw all keep) and a quarter round is exactly its 12
 * instructions.
 */
#include <stdint.h>

#if defined(__riscv) && !defined(HOST_BUILD)
/* A quarter round: addw, xor, roriw (a rotate left by n is a rotate
 * right by 32 - n), four times.  One asm statement each (GCC allows 30
 * operands, and the sixteen words in and out would be 32). */
#define ZQR(a, b, c, d) \
	__asm__(".option push\n\t.option arch, +zbb\n\t" \
	        "addw %0, %0, %1\n\t" "xor %3, %3, %0\n\t" "roriw %3, %3, 16\n\t" \
	        "addw %2, %2, %3\n\t" "xor %1, %1, %2\n\t" "roriw %1, %1, 20\n\t" \
	        "addw %0, %0, %1\n\t" "xor %3, %3, %0\n\t" "roriw %3, %3, 24\n\t" \
	        "addw %2, %2, %3\n\t" "xor %1, %1, %2\n\t" "roriw %1, %1, 25\n\t" \
	        ".option pop" \
	        : "+r"(a), "+r"(b), "+r"(c), "+r"(d))

#define CHACHA_WORD int64_t
#define CHACHA_IN(v) ((int64_t)(int32_t)(v))
#define CHACHA_QUARTER ZQR
#include "libos/stack/chacha_block.h"

void chacha_xor_zbb(uint32_t st[16], int rounds, const uint8_t *in, uint8_t *out, size_t n);

void chacha_xor_zbb(uint32_t st[16], int rounds, const uint8_t *in, uint8_t *out, size_t n)
{
	chacha_xor_blocks(st, rounds, in, out, n);
}
#endif
