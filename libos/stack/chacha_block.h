/*
 * chacha_block.h - ChaCha's block function and the loop that XORs its key
 * stream into a buffer, as static inline code: libos/stack/chacha.c
 * compiles it in plain C, chacha_zbb.c once more with Zbb's roriw for the
 * rotates (RV64).  Also the little-endian word helpers both use.
 *
 * The sixteen words are locals, so a compiler holds the whole state in
 * registers: a quarter round is then its ALU instructions and nothing else
 * (RV64IMAC: 20, three per rotate; with Zbb or on x86-64: 12).
 */
#ifndef LIBOS_STACK_CHACHA_BLOCK_H
#define LIBOS_STACK_CHACHA_BLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CHACHA_INLINE static inline __attribute__((always_inline))

/* Little-endian words; a whole word at a time where the machine is
 * little-endian and the address allows it (the crypt layer's buffers are
 * aligned to 4 bytes), which is most of what ChaCha's loop costs beside
 * the rounds. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FAST_LE 1
#else
#define FAST_LE 0
#endif
/* x86-64 loads and stores words at any address at full speed. */
#if defined(__x86_64__)
#define ANY_ALIGN 1
#else
#define ANY_ALIGN 0
#endif

/* Can a word at p be loaded or stored whole (ld32, st32)? */
CHACHA_INLINE int word_ok(const void *p)
{
	return ANY_ALIGN || ((uintptr_t)p & 3) == 0;
}

CHACHA_INLINE uint32_t ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, ANY_ALIGN ? p : __builtin_assume_aligned(p, 4), 4);
	return v;
}

CHACHA_INLINE void st32(uint8_t *p, uint32_t v)
{
	memcpy(ANY_ALIGN ? p : __builtin_assume_aligned(p, 4), &v, 4);
}

CHACHA_INLINE void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

#define CHACHA_ROTL(x, n) ((x) << (n) | (x) >> (32 - (n)))
#define CHACHA_QR(a, b, c, d) do { \
	a += b; d ^= a; d = CHACHA_ROTL(d, 16); c += d; b ^= c; b = CHACHA_ROTL(b, 12); \
	a += b; d ^= a; d = CHACHA_ROTL(d, 8);  c += d; b ^= c; b = CHACHA_ROTL(b, 7); } while (0)

/* The state's words and a quarter round: plain 32-bit C unless the
 * including file defines all three first (chacha_zbb.c: 64-bit registers
 * holding sign-extended words, and assembly). */
#ifndef CHACHA_WORD
#define CHACHA_WORD uint32_t
#define CHACHA_IN(v) (v)
#define CHACHA_QUARTER CHACHA_QR
#endif

/* A double round: the columns, then the diagonals. */
#define CHACHA_DOUBLE_ROUND(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15) \
	do { \
		CHACHA_QUARTER(x0, x4, x8, x12); \
		CHACHA_QUARTER(x1, x5, x9, x13); \
		CHACHA_QUARTER(x2, x6, x10, x14); \
		CHACHA_QUARTER(x3, x7, x11, x15); \
		CHACHA_QUARTER(x0, x5, x10, x15); \
		CHACHA_QUARTER(x1, x6, x11, x12); \
		CHACHA_QUARTER(x2, x7, x8, x13); \
		CHACHA_QUARTER(x3, x4, x9, x14); \
	} while (0)

/* Block st[12] of the key stream (`rounds` rounds, even: double rounds,
 * then the input added): XORed word by word from
 * in into out when ks is NULL (in and out word_ok), else written to ks as
 * words. */
CHACHA_INLINE void chacha_block(const uint32_t st[16], int rounds, const uint8_t *in, uint8_t *out,
                                uint32_t *ks)
{
	CHACHA_WORD x0 = CHACHA_IN(st[0]), x1 = CHACHA_IN(st[1]), x2 = CHACHA_IN(st[2]);
	CHACHA_WORD x3 = CHACHA_IN(st[3]), x4 = CHACHA_IN(st[4]), x5 = CHACHA_IN(st[5]);
	CHACHA_WORD x6 = CHACHA_IN(st[6]), x7 = CHACHA_IN(st[7]), x8 = CHACHA_IN(st[8]);
	CHACHA_WORD x9 = CHACHA_IN(st[9]), x10 = CHACHA_IN(st[10]), x11 = CHACHA_IN(st[11]);
	CHACHA_WORD x12 = CHACHA_IN(st[12]), x13 = CHACHA_IN(st[13]), x14 = CHACHA_IN(st[14]);
	CHACHA_WORD x15 = CHACHA_IN(st[15]);
	for (int i = 0; i < rounds; i += 2)
		CHACHA_DOUBLE_ROUND(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15);
#define CHACHA_OUT(i) do { \
	uint32_t w_ = (uint32_t)x##i + st[i]; \
	if (ks != NULL) ks[i] = w_; else st32(out + 4 * (i), ld32(in + 4 * (i)) ^ w_); } while (0)
	CHACHA_OUT(0);  CHACHA_OUT(1);  CHACHA_OUT(2);  CHACHA_OUT(3);
	CHACHA_OUT(4);  CHACHA_OUT(5);  CHACHA_OUT(6);  CHACHA_OUT(7);
	CHACHA_OUT(8);  CHACHA_OUT(9);  CHACHA_OUT(10); CHACHA_OUT(11);
	CHACHA_OUT(12); CHACHA_OUT(13); CHACHA_OUT(14); CHACHA_OUT(15);
#undef CHACHA_OUT
}

/* out = in XOR the key stream from block st[12] on (st[12] counts up);
 * in may equal out. */
CHACHA_INLINE void chacha_xor_blocks(uint32_t st[16], int rounds, const uint8_t *in, uint8_t *out,
                                     size_t n)
{
	if (FAST_LE && word_ok(in) && word_ok(out))
		for (; n >= 64; n -= 64, in += 64, out += 64, st[12]++)
			chacha_block(st, rounds, in, out, NULL);
	while (n > 0) {
		uint32_t x[16];
		uint8_t ks[64];
		chacha_block(st, rounds, NULL, NULL, x);
		st[12]++;
		for (int i = 0; i < 16; i++)
			put32(ks + 4 * i, x[i]);
		size_t k = n < 64 ? n : 64;
		for (size_t i = 0; i < k; i++)
			out[i] = in[i] ^ ks[i];
		in += k;
		out += k;
		n -= k;
	}
}

#endif
