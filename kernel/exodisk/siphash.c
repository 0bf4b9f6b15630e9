/*
 * siphash.c - SipHash-2-4, written from the algorithm description in the
 * SipHash paper: four 64-bit words of state initialised from the key and
 * four constants, two "SipRounds" per 8-byte message word, a final word that
 * carries the message length, then four rounds (and for the 128-bit variant,
 * four more) to produce the output.  Checked against the reference test
 * vectors by tests/host/exodisk/test_crypto.c.
 */
#include "kernel/exodisk/siphash.h"
#include "kernel/exodisk/edlib.h"

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

static void sipround(struct siphash *s)
{
	s->v0 += s->v1; s->v1 = rotl(s->v1, 13); s->v1 ^= s->v0; s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3; s->v3 = rotl(s->v3, 16); s->v3 ^= s->v2;
	s->v0 += s->v3; s->v3 = rotl(s->v3, 21); s->v3 ^= s->v0;
	s->v2 += s->v1; s->v1 = rotl(s->v1, 17); s->v1 ^= s->v2; s->v2 = rotl(s->v2, 32);
}

/* Absorb one message word: c = 2 compression rounds. */
static void absorb(struct siphash *s, uint64_t m)
{
	s->v3 ^= m;
	sipround(s);
	sipround(s);
	s->v0 ^= m;
}

void sip_init(struct siphash *s, const uint8_t key[16], bool wide)
{
	uint64_t k0 = ed_load64(key), k1 = ed_load64(key + 8);
	/* The constants spell "somepseudorandomlygeneratedbytes". */
	s->v0 = k0 ^ 0x736f6d6570736575ull;
	s->v1 = k1 ^ 0x646f72616e646f6dull;
	s->v2 = k0 ^ 0x6c7967656e657261ull;
	s->v3 = k1 ^ 0x7465646279746573ull;
	if (wide)
		s->v1 ^= 0xee;
	s->tail = 0;
	s->ntail = 0;
	s->len = 0;
	s->wide = wide;
}

void sip_update(struct siphash *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	s->len += n;
	/* Top up a partial word first. */
	while (n > 0 && s->ntail != 0) {
		s->tail |= (uint64_t)*p++ << (8 * s->ntail);
		n--;
		if (++s->ntail == 8) {
			absorb(s, s->tail);
			s->tail = 0;
			s->ntail = 0;
		}
	}
	for (; n >= 8; n -= 8, p += 8)
		absorb(s, ed_load64(p));
	for (; n > 0; n--)
		s->tail |= (uint64_t)*p++ << (8 * s->ntail++);
}

void sip_update64(struct siphash *s, uint64_t v)
{
	uint8_t b[8];
	ed_store64(b, v);
	sip_update(s, b, 8);
}

/* Absorb the last word (leftover bytes plus the length in the top byte) and
 * run the first finalisation. */
static uint64_t finish_first(struct siphash *s)
{
	absorb(s, s->tail | (s->len << 56));
	s->v2 ^= s->wide ? 0xee : 0xff;
	for (int i = 0; i < 4; i++)
		sipround(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t sip_final64(struct siphash *s)
{
	return finish_first(s);
}

void sip_final128(struct siphash *s, uint8_t out[16])
{
	ed_store64(out, finish_first(s));
	s->v1 ^= 0xdd;
	for (int i = 0; i < 4; i++)
		sipround(s);
	ed_store64(out + 8, s->v0 ^ s->v1 ^ s->v2 ^ s->v3);
}

uint64_t siphash64(const uint8_t key[16], const void *data, size_t n)
{
	struct siphash s;
	sip_init(&s, key, false);
	sip_update(&s, data, n);
	return sip_final64(&s);
}

void siphash128(const uint8_t key[16], const void *data, size_t n, uint8_t out[16])
{
	struct siphash s;
	sip_init(&s, key, true);
	sip_update(&s, data, n);
	sip_final128(&s, out);
}
