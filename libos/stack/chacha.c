/*
 * chacha.c - ChaCha (8, 12 or 20 rounds), Poly1305 and the ChaCha-Poly1305
 * AEAD of RFC 8439 for the crypt layer (crypto.h).
 *
 * ChaCha's block and its loop are in chacha_block.h, built here for the
 * base instruction set and in chacha_zbb.c for RISC-V's Zbb rotates; this
 * file picks one per call.  Poly1305 works in two 64-bit limbs and a small
 * third one, with 64 x 64 -> 128-bit products (one mul and one mulhu each
 * on RV64, one mul on x86-64): four full products and two small ones per
 * 16-byte block.
 */
#include <string.h>
#include "libos/stack/crypto.h"
#include "libos/stack/chacha_block.h"

#if !defined(__SIZEOF_INT128__)
#error "Poly1305 here needs a compiler with unsigned __int128 (64-bit GCC and Clang have it)"
#endif
typedef unsigned __int128 u128;

static uint32_t le32(const uint8_t *p)
{
	if (FAST_LE && word_ok(p))
		return ld32(p);
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* A little-endian 64-bit word at p, which is aligned to `align` (8, 4 or
 * 1) bytes: one load, two, or eight. */
static inline __attribute__((always_inline)) uint64_t load64(const uint8_t *p, int align)
{
	uint64_t v;
	uint32_t lo, hi;
	if (FAST_LE && ANY_ALIGN) {
		memcpy(&v, p, 8);
		return v;
	}
	if (FAST_LE && align == 8) {
		memcpy(&v, __builtin_assume_aligned(p, 8), 8);
		return v;
	}
	if (FAST_LE && align == 4) {
		memcpy(&lo, __builtin_assume_aligned(p, 4), 4);
		memcpy(&hi, __builtin_assume_aligned(p + 4, 4), 4);
		return (uint64_t)lo | (uint64_t)hi << 32;
	}
	v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* ---- ChaCha ----------------------------------------------------------------- */

/* Two ways to compute the same key stream, chosen per call:
 *
 *   zbb       RV64 with the Zbb extension: roriw, so a quarter round is
 *             12 instructions instead of 20.  Chosen only when the kernel
 *             found Zbb on every hart in the device tree (KINFO_F_ZBB);
 *             QEMU's default rv64 CPU has it.
 *   portable  plain C, anywhere: the reference, and the fallback.  On
 *             x86-64 the compiler makes each rotate one rol already.
 *
 * Nothing faster was found for x86-64 under QEMU's TCG: four blocks at a
 * time in SSE2 registers ran half the instructions but took twice the
 * time (docs/stacking.md, "crypt's speed").  The tests compare the two
 * ways (tests/host/userfs/test_crypto.c; in the guest `cryptotest`).
 */
#if defined(__riscv) && !defined(HOST_BUILD)
#include "kernel/uapi/layout.h"
#include "kernel/uapi/kinfo.h"
#define HAVE_ZBB_PATH 1
/* libos/stack/chacha_zbb.c: chacha_xor_blocks built for Zbb. */
void chacha_xor_zbb(uint32_t st[16], int rounds, const uint8_t *in, uint8_t *out, size_t n);
#else
#define HAVE_ZBB_PATH 0
#endif

static int force_portable;

void chacha_force_portable(int on)
{
	force_portable = on;
}

static int use_zbb(void)
{
#if HAVE_ZBB_PATH
	static int known, have;
	if (!known) {
		have = (((const struct kinfo *)UKINFO)->flags & KINFO_F_ZBB) != 0;
		known = 1;
	}
	return have && !force_portable;
#else
	return 0;
#endif
}

const char *chacha_impl(void)
{
	return use_zbb() ? "zbb" : "portable";
}

static void setup(uint32_t st[16], const uint8_t key[32], const uint8_t nonce[12], uint32_t counter)
{
	st[0] = 0x61707865;     /* "expand 32-byte k" */
	st[1] = 0x3320646e;
	st[2] = 0x79622d32;
	st[3] = 0x6b206574;
	for (int i = 0; i < 8; i++)
		st[4 + i] = le32(key + 4 * i);
	st[12] = counter;
	for (int i = 0; i < 3; i++)
		st[13 + i] = le32(nonce + 4 * i);
}

static void xor_portable(uint32_t st[16], int rounds, const uint8_t *in, uint8_t *out, size_t n)
{
	chacha_xor_blocks(st, rounds, in, out, n);
}

void chacha_xor(int rounds, const uint8_t key[32], const uint8_t nonce[12], uint32_t counter,
                const uint8_t *in, uint8_t *out, size_t n)
{
	uint32_t st[16];
	setup(st, key, nonce, counter);
#if HAVE_ZBB_PATH
	if (use_zbb()) {
		chacha_xor_zbb(st, rounds, in, out, n);
		return;
	}
#endif
	xor_portable(st, rounds, in, out, n);
}

void chacha20_xor(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter,
                  const uint8_t *in, uint8_t *out, size_t n)
{
	chacha_xor(20, key, nonce, counter, in, out, n);
}

/* ---- Poly1305 --------------------------------------------------------------- */

/* The accumulator h = h0 + h1 2^64 + h2 2^128, kept below about 2^131 (h2
 * small) between blocks; r = r0 + r1 2^64 as clamped, s1 = 5 r1 / 4 (r1
 * is a multiple of 4 after clamping, so this is exact). */
struct poly {
	uint64_t r0, r1, s1, h0, h1, h2, pad0, pad1;
	uint8_t buf[16];
	size_t nbuf;
};

static void poly_init(struct poly *p, const uint8_t key[32])
{
	/* Clamp r (section 2.5.1): the top four bits of every 32-bit word
	 * and the bottom two of the upper three cleared. */
	p->r0 = le64(key) & 0x0ffffffc0fffffffull;
	p->r1 = le64(key + 8) & 0x0ffffffc0ffffffcull;
	p->s1 = p->r1 + (p->r1 >> 2);
	p->pad0 = le64(key + 16);
	p->pad1 = le64(key + 24);
	p->h0 = p->h1 = p->h2 = 0;
	p->nbuf = 0;
}

/* h = (h + m) r mod 2^130 - 5, partly reduced, for `blocks` 16-byte blocks
 * (whose loads are aligned to `align` bytes);
 * hibit is 1 (2^128 added to each block) for whole blocks, 0 for the
 * padded last one.
 *
 * (h0 + h1 2^64 + h2 2^128)(r0 + r1 2^64) has the terms h1 r1 2^128,
 * h2 r1 2^192 and h2 r0 2^128; as 2^130 = 5 (mod p) and 4 divides r1,
 * h1 r1 2^128 = h1 (r1/4) 2^130 = h1 s1 and h2 r1 2^192 = h2 s1 2^64, so
 *   d0 = h0 r0 + h1 s1,  d1 = h0 r1 + h1 r0 + h2 s1,  d2 = h2 r0.
 * With r0, r1 < 2^60, s1 < 2^61 and h2 < 8 the sums fit 128 bits, the
 * carry out of d0 and d1 is below 2^62 and d2 below 2^63.6; then the bits
 * above 2^130 are folded back in times 5, which leaves h2 <= 4 (and h2 + 2
 * after the next block is added). */
static inline __attribute__((always_inline)) void
poly_run(struct poly *p, const uint8_t *m, size_t blocks, uint64_t hibit, int align)
{
	uint64_t r0 = p->r0, r1 = p->r1, s1 = p->s1, h0 = p->h0, h1 = p->h1, h2 = p->h2;
	/* The sums are written as 64-bit words with their carries (x < y
	 * after x += y), not as 128-bit additions: compilers spill those
	 * (GCC 12 on x86-64: about 100 instructions a block instead of 40). */
	for (; blocks > 0; blocks--, m += 16) {
		uint64_t m0 = load64(m, align), m1 = load64(m + 8, align);
		h0 += m0;
		uint64_t c = h0 < m0;
		h1 += c;
		c = h1 < c;
		h1 += m1;
		c += h1 < m1;
		h2 += c + hibit;

		u128 a = (u128)h0 * r0, b = (u128)h1 * s1;
		u128 e = (u128)h0 * r1, f = (u128)h1 * r0;
		uint64_t d0 = (uint64_t)a + (uint64_t)b;
		uint64_t d0h = (uint64_t)(a >> 64) + (uint64_t)(b >> 64) + (d0 < (uint64_t)b);
		uint64_t d1 = (uint64_t)e + (uint64_t)f;
		uint64_t d1h = (uint64_t)(e >> 64) + (uint64_t)(f >> 64) + (d1 < (uint64_t)f);
		uint64_t t = h2 * s1;
		d1 += t;
		d1h += d1 < t;
		d1 += d0h;
		d1h += d1 < d0h;
		uint64_t d2 = h2 * r0 + d1h;

		/* d2 holds bits 128 and up: keep two, fold the rest in as
		 * c * 5 (below 2^64, as d2 < 2^63.6: see above). */
		h0 = d0;
		h1 = d1;
		c = d2 >> 2;
		h2 = d2 & 3;
		c += c << 2;
		h0 += c;
		c = h0 < c;
		h1 += c;
		h2 += h1 < c;
	}
	p->h0 = h0;
	p->h1 = h1;
	p->h2 = h2;
}

/* The loop above, compiled once per alignment of the message (the crypt
 * layer's ciphertext is 4-byte aligned), so no load is a byte at a time
 * or a call. */
static void poly_blocks(struct poly *p, const uint8_t *m, size_t blocks, uint64_t hibit)
{
	if (((uintptr_t)m & 7) == 0)
		poly_run(p, m, blocks, hibit, 8);
	else if (((uintptr_t)m & 3) == 0)
		poly_run(p, m, blocks, hibit, 4);
	else
		poly_run(p, m, blocks, hibit, 1);
}

static void poly_update(struct poly *p, const uint8_t *m, size_t n)
{
	if (p->nbuf > 0) {
		size_t k = 16 - p->nbuf < n ? 16 - p->nbuf : n;
		memcpy(p->buf + p->nbuf, m, k);
		p->nbuf += k;
		m += k;
		n -= k;
		if (p->nbuf < 16)
			return;
		poly_blocks(p, p->buf, 1, 1);
		p->nbuf = 0;
	}
	poly_blocks(p, m, n / 16, 1);
	m += n / 16 * 16;
	n %= 16;
	memcpy(p->buf, m, n);
	p->nbuf = n;
}

/* Zeros up to the next multiple of 16 bytes (the AEAD's padding). */
static void poly_pad16(struct poly *p)
{
	static const uint8_t zeros[16];
	if (p->nbuf > 0)
		poly_update(p, zeros, 16 - p->nbuf);
}

static void poly_final(struct poly *p, uint8_t tag[16])
{
	if (p->nbuf > 0) {
		p->buf[p->nbuf] = 1;
		memset(p->buf + p->nbuf + 1, 0, 15 - p->nbuf);
		poly_blocks(p, p->buf, 1, 0);
	}
	uint64_t h0 = p->h0, h1 = p->h1, h2 = p->h2;
	/* Fold once more: h < 2^130 + a little, so h < 2p. */
	uint64_t c = h2 >> 2;
	h2 &= 3;
	u128 t = (u128)h0 + c + (c << 2);
	h0 = (uint64_t)t;
	t = (u128)h1 + (uint64_t)(t >> 64);
	h1 = (uint64_t)t;
	h2 += (uint64_t)(t >> 64);
	/* g = h + 5 - 2^130: if it is not negative (bit 130 of h + 5 is
	 * set), h mod p is g; chosen with masks, not a branch. */
	t = (u128)h0 + 5;
	uint64_t g0 = (uint64_t)t;
	t = (u128)h1 + (uint64_t)(t >> 64);
	uint64_t g1 = (uint64_t)t;
	uint64_t g2 = h2 + (uint64_t)(t >> 64);
	uint64_t use_g = 0 - (g2 >> 2);           /* all ones when h + 5 >= 2^130 */
	h0 = (h0 & ~use_g) | (g0 & use_g);
	h1 = (h1 & ~use_g) | (g1 & use_g);
	/* tag = (h + s) mod 2^128 */
	t = (u128)h0 + p->pad0;
	put64(tag, (uint64_t)t);
	put64(tag + 8, h1 + p->pad1 + (uint64_t)(t >> 64));
}

void poly1305(const uint8_t key[32], const uint8_t *msg, size_t n, uint8_t tag[16])
{
	struct poly p;
	poly_init(&p, key);
	poly_update(&p, msg, n);
	poly_final(&p, tag);
}

/* ---- the AEAD --------------------------------------------------------------- */

static void aead_tag(int rounds, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                     size_t alen, const uint8_t *ct, size_t n, uint8_t tag[16])
{
	uint8_t otk[64] = { 0 };
	chacha_xor(rounds, key, nonce, 0, otk, otk, 64);     /* the one-time key: block 0 */
	struct poly p;
	poly_init(&p, otk);
	poly_update(&p, aad, alen);
	poly_pad16(&p);
	poly_update(&p, ct, n);
	poly_pad16(&p);
	uint8_t lens[16];
	put64(lens, (uint64_t)alen);
	put64(lens + 8, (uint64_t)n);
	poly_update(&p, lens, 16);
	poly_final(&p, tag);
}

void chacha_aead_seal(int rounds, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                      size_t alen, const uint8_t *pt, size_t n, uint8_t *ct, uint8_t tag[16])
{
	chacha_xor(rounds, key, nonce, 1, pt, ct, n);
	aead_tag(rounds, key, nonce, aad, alen, ct, n, tag);
}

int chacha_aead_open(int rounds, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                     size_t alen, const uint8_t *ct, size_t n, const uint8_t tag[16], uint8_t *pt)
{
	uint8_t want[16];
	aead_tag(rounds, key, nonce, aad, alen, ct, n, want);
	if (!crypto_equal(want, tag, 16))
		return -1;
	chacha_xor(rounds, key, nonce, 1, ct, pt, n);
	return 0;
}

int chacha_aead_check(int rounds, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                      size_t alen, const uint8_t *ct, size_t n, const uint8_t tag[16])
{
	uint8_t want[16];
	aead_tag(rounds, key, nonce, aad, alen, ct, n, want);
	return crypto_equal(want, tag, 16) ? 0 : -1;
}

void aead_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t alen,
               const uint8_t *pt, size_t n, uint8_t *ct, uint8_t tag[16])
{
	chacha_aead_seal(20, key, nonce, aad, alen, pt, n, ct, tag);
}

int aead_open(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t alen,
              const uint8_t *ct, size_t n, const uint8_t tag[16], uint8_t *pt)
{
	return chacha_aead_open(20, key, nonce, aad, alen, ct, n, tag, pt);
}

int crypto_equal(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}
