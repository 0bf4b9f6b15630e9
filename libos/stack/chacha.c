/*
 * chacha.c - ChaCha20, Poly1305 and the ChaCha20-Poly1305 AEAD of RFC 8439
 * for the crypt layer (crypto.h).  Poly1305 works in five 26-bit limbs so
 * that every product fits 64 bits on any machine.
 */
#include <string.h>
#include "libos/stack/crypto.h"

/* Little-endian words; a whole word at a time where the machine is
 * little-endian and the address is aligned (the crypt layer's buffers are),
 * which is most of what this file costs. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FAST_LE 1
#else
#define FAST_LE 0
#endif

static int aligned4(const void *p)
{
	return ((uintptr_t)p & 3) == 0;
}

static uint32_t le32(const uint8_t *p)
{
	if (FAST_LE && aligned4(p)) {
		uint32_t v;
		memcpy(&v, __builtin_assume_aligned(p, 4), 4);
		return v;
	}
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* ---- ChaCha20 --------------------------------------------------------------- */

#define ROTL(x, n) ((x) << (n) | (x) >> (32 - (n)))
#define QR(a, b, c, d) do { \
	a += b; d ^= a; d = ROTL(d, 16); c += d; b ^= c; b = ROTL(b, 12); \
	a += b; d ^= a; d = ROTL(d, 8);  c += d; b ^= c; b = ROTL(b, 7); } while (0)

/* One 64-byte block of key stream, as words. */
static void block_words(const uint32_t in[16], uint32_t x[16])
{
	memcpy(x, in, 16 * sizeof x[0]);
	for (int i = 0; i < 10; i++) {
		QR(x[0], x[4], x[8], x[12]);     /* columns */
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);    /* diagonals */
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
	for (int i = 0; i < 16; i++)
		x[i] += in[i];
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

void chacha20_xor(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter,
                  const uint8_t *in, uint8_t *out, size_t n)
{
	uint32_t st[16], x[16];
	uint8_t ks[64];
	setup(st, key, nonce, counter);
	while (n > 0) {
		block_words(st, x);
		st[12]++;
		size_t k = n < 64 ? n : 64;
		if (FAST_LE && k == 64 && aligned4(in) && aligned4(out)) {
			for (int i = 0; i < 16; i++) {
				uint32_t w;
				memcpy(&w, __builtin_assume_aligned(in + 4 * i, 4), 4);
				w ^= x[i];
				memcpy(__builtin_assume_aligned(out + 4 * i, 4), &w, 4);
			}
		} else {
			for (int i = 0; i < 16; i++)
				put32(ks + 4 * i, x[i]);
			for (size_t i = 0; i < k; i++)
				out[i] = in[i] ^ ks[i];
		}
		in += k;
		out += k;
		n -= k;
	}
}

/* ---- Poly1305 --------------------------------------------------------------- */

struct poly {
	uint32_t r[5], s5[4], h[5], pad[4];
	uint8_t buf[16];
	size_t nbuf;
};

#define M26 0x3ffffffu

static void poly_init(struct poly *p, const uint8_t key[32])
{
	uint8_t k[16];
	memcpy(k, key, 16);
	/* Clamp r (section 2.5.1). */
	k[3] &= 15; k[7] &= 15; k[11] &= 15; k[15] &= 15;
	k[4] &= 252; k[8] &= 252; k[12] &= 252;
	uint32_t t0 = le32(k), t1 = le32(k + 4), t2 = le32(k + 8), t3 = le32(k + 12);
	p->r[0] = t0 & M26;
	p->r[1] = (t0 >> 26 | t1 << 6) & M26;
	p->r[2] = (t1 >> 20 | t2 << 12) & M26;
	p->r[3] = (t2 >> 14 | t3 << 18) & M26;
	p->r[4] = t3 >> 8;
	for (int i = 0; i < 4; i++)
		p->s5[i] = p->r[i + 1] * 5;
	for (int i = 0; i < 4; i++)
		p->pad[i] = le32(key + 16 + 4 * i);
	memset(p->h, 0, sizeof p->h);
	p->nbuf = 0;
}

/* h = (h + m) * r mod 2^130 - 5 for one 16-byte block; hibit is 2^128 in
 * the top limb (1 << 24) for a whole block, 0 for the padded last one. */
static void poly_block(struct poly *p, const uint8_t *m, uint32_t hibit)
{
	uint32_t t0 = le32(m), t1 = le32(m + 4), t2 = le32(m + 8), t3 = le32(m + 12);
	uint64_t h0 = p->h[0] + (t0 & M26);
	uint64_t h1 = p->h[1] + ((t0 >> 26 | t1 << 6) & M26);
	uint64_t h2 = p->h[2] + ((t1 >> 20 | t2 << 12) & M26);
	uint64_t h3 = p->h[3] + ((t2 >> 14 | t3 << 18) & M26);
	uint64_t h4 = p->h[4] + ((t3 >> 8) | hibit);
	const uint32_t *r = p->r, *s = p->s5;
	uint64_t d0 = h0 * r[0] + h1 * s[3] + h2 * s[2] + h3 * s[1] + h4 * s[0];
	uint64_t d1 = h0 * r[1] + h1 * r[0] + h2 * s[3] + h3 * s[2] + h4 * s[1];
	uint64_t d2 = h0 * r[2] + h1 * r[1] + h2 * r[0] + h3 * s[3] + h4 * s[2];
	uint64_t d3 = h0 * r[3] + h1 * r[2] + h2 * r[1] + h3 * r[0] + h4 * s[3];
	uint64_t d4 = h0 * r[4] + h1 * r[3] + h2 * r[2] + h3 * r[1] + h4 * r[0];
	d1 += d0 >> 26;
	d2 += d1 >> 26;
	d3 += d2 >> 26;
	d4 += d3 >> 26;
	uint64_t c = d4 >> 26;
	uint64_t n0 = (d0 & M26) + c * 5;
	p->h[0] = (uint32_t)(n0 & M26);
	p->h[1] = (uint32_t)((d1 & M26) + (n0 >> 26));
	p->h[2] = (uint32_t)(d2 & M26);
	p->h[3] = (uint32_t)(d3 & M26);
	p->h[4] = (uint32_t)(d4 & M26);
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
		poly_block(p, p->buf, 1u << 24);
		p->nbuf = 0;
	}
	for (; n >= 16; m += 16, n -= 16)
		poly_block(p, m, 1u << 24);
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
		poly_block(p, p->buf, 0);
	}
	uint32_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2], h3 = p->h[3], h4 = p->h[4], c;
	/* Carry fully. */
	c = h1 >> 26; h1 &= M26; h2 += c;
	c = h2 >> 26; h2 &= M26; h3 += c;
	c = h3 >> 26; h3 &= M26; h4 += c;
	c = h4 >> 26; h4 &= M26; h0 += c * 5;
	c = h0 >> 26; h0 &= M26; h1 += c;
	/* g = h + 5 - 2^130; take it when it did not go below zero. */
	uint32_t g0 = h0 + 5; c = g0 >> 26; g0 &= M26;
	uint32_t g1 = h1 + c; c = g1 >> 26; g1 &= M26;
	uint32_t g2 = h2 + c; c = g2 >> 26; g2 &= M26;
	uint32_t g3 = h3 + c; c = g3 >> 26; g3 &= M26;
	uint32_t g4 = h4 + c - (1u << 26);
	uint32_t use_g = (g4 >> 31) - 1;          /* all ones when g >= 0 */
	h0 = (h0 & ~use_g) | (g0 & use_g);
	h1 = (h1 & ~use_g) | (g1 & use_g);
	h2 = (h2 & ~use_g) | (g2 & use_g);
	h3 = (h3 & ~use_g) | (g3 & use_g);
	h4 = (h4 & ~use_g) | (g4 & use_g);
	uint32_t w[4] = {
		h0 | h1 << 26, h1 >> 6 | h2 << 20, h2 >> 12 | h3 << 14, h3 >> 18 | h4 << 8,
	};
	uint64_t f = 0;
	for (int i = 0; i < 4; i++) {
		f = (uint64_t)w[i] + p->pad[i] + (f >> 32);
		put32(tag + 4 * i, (uint32_t)f);
	}
}

void poly1305(const uint8_t key[32], const uint8_t *msg, size_t n, uint8_t tag[16])
{
	struct poly p;
	poly_init(&p, key);
	poly_update(&p, msg, n);
	poly_final(&p, tag);
}

/* ---- the AEAD --------------------------------------------------------------- */

static void aead_tag(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                     size_t alen, const uint8_t *ct, size_t n, uint8_t tag[16])
{
	uint8_t otk[64] = { 0 };
	chacha20_xor(key, nonce, 0, otk, otk, 64);     /* the one-time key: block 0 */
	struct poly p;
	poly_init(&p, otk);
	poly_update(&p, aad, alen);
	poly_pad16(&p);
	poly_update(&p, ct, n);
	poly_pad16(&p);
	uint8_t lens[16];
	put32(lens, (uint32_t)alen);
	put32(lens + 4, (uint32_t)((uint64_t)alen >> 32));
	put32(lens + 8, (uint32_t)n);
	put32(lens + 12, (uint32_t)((uint64_t)n >> 32));
	poly_update(&p, lens, 16);
	poly_final(&p, tag);
}

void aead_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t alen,
               const uint8_t *pt, size_t n, uint8_t *ct, uint8_t tag[16])
{
	chacha20_xor(key, nonce, 1, pt, ct, n);
	aead_tag(key, nonce, aad, alen, ct, n, tag);
}

int aead_open(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t alen,
              const uint8_t *ct, size_t n, const uint8_t tag[16], uint8_t *pt)
{
	uint8_t want[16];
	aead_tag(key, nonce, aad, alen, ct, n, want);
	if (!crypto_equal(want, tag, 16))
		return -1;
	chacha20_xor(key, nonce, 1, ct, pt, n);
	return 0;
}

int crypto_equal(const void *a, const void *b, size_t n)
{
	const uint8_t *x = a, *y = b;
	uint8_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}
