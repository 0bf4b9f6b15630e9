/*
 * crypto.h - the cryptography of the crypt layer (userfs/layers/crypt.c),
 * written for this project from the specifications and checked against
 * their published test vectors (tests/host/stack/test_crypto.c):
 *
 *   SHA-256        FIPS 180-4
 *   HMAC-SHA-256   RFC 2104 (vectors: RFC 4231)
 *   HKDF-SHA-256   RFC 5869: per-file keys from the mount's secret
 *   ChaCha20, Poly1305 and the AEAD ChaCha20-Poly1305   RFC 8439
 *   ChaCha8 and ChaCha12 (Bernstein's ChaCha with 8 and 12 rounds; vectors:
 *   draft-strombergson-chacha-test-vectors-01), and the same AEAD built
 *   on them (RFC 8439's construction with the rounds changed)
 *
 * Portable C11, no allocation; constant-time where secrets meet data
 * (tag comparison).  Not hardened against side channels beyond that.
 */
#ifndef LIBOS_STACK_CRYPTO_H
#define LIBOS_STACK_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;             /* bytes so far */
	uint8_t  buf[64];
	size_t   nbuf;
};
void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t n);
void sha256_final(struct sha256 *c, uint8_t out[32]);
void sha256(const void *data, size_t n, uint8_t out[32]);

struct hmac256 {
	struct sha256 in, out;
};
void hmac256_init(struct hmac256 *c, const void *key, size_t klen);
void hmac256_update(struct hmac256 *c, const void *data, size_t n);
void hmac256_final(struct hmac256 *c, uint8_t out[32]);
void hmac256(const void *key, size_t klen, const void *data, size_t n, uint8_t out[32]);

/* HKDF: extract a pseudorandom key from input keying material and a salt,
 * then expand it with `info` into olen <= 255 * 32 bytes. */
void hkdf_extract(const void *salt, size_t slen, const void *ikm, size_t ilen, uint8_t prk[32]);
int  hkdf_expand(const uint8_t prk[32], const void *info, size_t ilen, uint8_t *out, size_t olen);

/* ChaCha with `rounds` rounds (8, 12 or 20) in RFC 8439's layout (a
 * 32-bit block counter, a 96-bit nonce): out = in XOR the key stream for
 * (key, nonce) starting at block `counter`.  in may equal out.  The
 * original ChaCha's 64-bit counter and 64-bit nonce are the same thing
 * while the counter is below 2^32: nonce = 4 zero bytes, then the 8. */
void chacha_xor(int rounds, const uint8_t key[32], const uint8_t nonce[12], uint32_t counter,
                const uint8_t *in, uint8_t *out, size_t n);
/* Which code computes ChaCha here: "zbb" (RV64 whose CPU has the Zbb
 * rotates) or "portable" (plain C; x86-64 too, whose rol is one
 * instruction already).  All give the same stream; chacha_force_portable(1)
 * makes the portable code run (the tests compare them). */
const char *chacha_impl(void);
void chacha_force_portable(int on);
/* ChaCha20 (RFC 8439, section 2.4). */
void chacha20_xor(const uint8_t key[32], const uint8_t nonce[12], uint32_t counter,
                  const uint8_t *in, uint8_t *out, size_t n);
/* Poly1305 (section 2.5) of msg under a one-time key. */
void poly1305(const uint8_t key[32], const uint8_t *msg, size_t n, uint8_t tag[16]);

/* The AEAD (section 2.8): seal encrypts pt into ct (may be the same
 * buffer) and writes the 16-byte tag; open checks the tag first and only
 * then decrypts: 0, or -1 when the tag does not match (nothing written). */
void aead_seal(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t alen,
               const uint8_t *pt, size_t n, uint8_t *ct, uint8_t tag[16]);
int  aead_open(const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad, size_t alen,
               const uint8_t *ct, size_t n, const uint8_t tag[16], uint8_t *pt);
/* The same construction over ChaCha with `rounds` rounds (20: the above). */
void chacha_aead_seal(int rounds, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                      size_t alen, const uint8_t *pt, size_t n, uint8_t *ct, uint8_t tag[16]);
int  chacha_aead_open(int rounds, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                      size_t alen, const uint8_t *ct, size_t n, const uint8_t tag[16], uint8_t *pt);
/* Only the check of open: 0 when the tag matches, else -1 (no decryption). */
int  chacha_aead_check(int rounds, const uint8_t key[32], const uint8_t nonce[12], const uint8_t *aad,
                       size_t alen, const uint8_t *ct, size_t n, const uint8_t tag[16]);

/* Equal in time that does not depend on where they differ: 1 or 0. */
int  crypto_equal(const void *a, const void *b, size_t n);

#endif
