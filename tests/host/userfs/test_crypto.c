/*
 * test_crypto.c - the crypt layer's cryptography (libos/stack/crypto.h)
 * against the published test vectors: SHA-256 (FIPS 180-4's examples),
 * HMAC-SHA-256 (RFC 4231, test case 1 and the long-key case 6), HKDF
 * (RFC 5869, test case 1), ChaCha20's block function (RFC 8439, 2.3.2),
 * Poly1305 (2.5.2) and the AEAD (2.8.2); then properties the vectors do
 * not reach: streaming in pieces equals one call, any flipped bit of
 * ciphertext, tag, nonce or associated data is refused, and a refused
 * open writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/stack/crypto.h"

static int failures;
#define CHECK(cond, what) do { if (!(cond)) { failures++; \
	printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, what); } } while (0)

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;
	for (; h[0] && h[1]; h += 2) {
		unsigned v;
		sscanf(h, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

static int same_hex(const uint8_t *got, size_t n, const char *want)
{
	uint8_t w[512];
	return unhex(want, w) == n && memcmp(got, w, n) == 0;
}

static void sha(void)
{
	uint8_t d[32];
	sha256("abc", 3, d);
	CHECK(same_hex(d, 32, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
	      "SHA-256 abc");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256(two, strlen(two), d);
	CHECK(same_hex(d, 32, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
	      "SHA-256 two blocks");
	/* Streaming in awkward pieces gives the same digest. */
	uint8_t big[1000], d1[32], d2[32];
	for (int i = 0; i < 1000; i++)
		big[i] = (uint8_t)(i * 7);
	sha256(big, sizeof big, d1);
	struct sha256 c;
	sha256_init(&c);
	for (size_t at = 0, k = 1; at < sizeof big; at += k, k = k * 3 % 97 + 1)
		sha256_update(&c, big + at, at + k > sizeof big ? sizeof big - at : k);
	sha256_final(&c, d2);
	CHECK(memcmp(d1, d2, 32) == 0, "SHA-256 in pieces");
}

static void hmac_hkdf(void)
{
	uint8_t key[131], d[32];
	memset(key, 0x0b, 20);
	hmac256(key, 20, "Hi There", 8, d);
	CHECK(same_hex(d, 32, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
	      "HMAC RFC 4231 case 1");
	memset(key, 0xaa, 131);
	const char *m = "Test Using Larger Than Block-Size Key - Hash Key First";
	hmac256(key, 131, m, strlen(m), d);
	CHECK(same_hex(d, 32, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
	      "HMAC RFC 4231 case 6");

	uint8_t ikm[22], salt[13], info[10], prk[32], okm[42];
	memset(ikm, 0x0b, sizeof ikm);
	for (int i = 0; i < 13; i++)
		salt[i] = (uint8_t)i;
	for (int i = 0; i < 10; i++)
		info[i] = (uint8_t)(0xf0 + i);
	hkdf_extract(salt, sizeof salt, ikm, sizeof ikm, prk);
	CHECK(same_hex(prk, 32, "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"),
	      "HKDF RFC 5869 case 1 PRK");
	CHECK(hkdf_expand(prk, info, sizeof info, okm, sizeof okm) == 0, "HKDF expand");
	CHECK(same_hex(okm, 42, "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
	                        "34007208d5b887185865"), "HKDF RFC 5869 case 1 OKM");
}

static void chacha_poly(void)
{
	uint8_t key[32], nonce[12], out[64] = { 0 };
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	unhex("000000090000004a00000000", nonce);
	chacha20_xor(key, nonce, 1, out, out, 64);
	CHECK(same_hex(out, 64, "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
	                        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"),
	      "ChaCha20 block, RFC 8439 2.3.2");

	uint8_t pk[32], tag[16];
	unhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b", pk);
	const char *msg = "Cryptographic Forum Research Group";
	poly1305(pk, (const uint8_t *)msg, strlen(msg), tag);
	CHECK(same_hex(tag, 16, "a8061dc1305136c6c22b8baf0c0127a9"), "Poly1305, RFC 8439 2.5.2");

	uint8_t aad[12], ct[114], pt[114];
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(0x80 + i);
	unhex("070000004041424344454647", nonce);
	unhex("50515253c0c1c2c3c4c5c6c7", aad);
	const char *p = "Ladies and Gentlemen of the class of '99: If I could offer you only one "
	                "tip for the future, sunscreen would be it.";
	CHECK(strlen(p) == 114, "plaintext length");
	aead_seal(key, nonce, aad, 12, (const uint8_t *)p, 114, ct, tag);
	CHECK(same_hex(ct, 114, "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
	                        "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
	                        "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
	                        "3ff4def08e4b7a9de576d26586cec64b6116"), "AEAD ciphertext, 2.8.2");
	CHECK(same_hex(tag, 16, "1ae10b594f09e26a7e902ecbd0600691"), "AEAD tag, 2.8.2");
	CHECK(aead_open(key, nonce, aad, 12, ct, 114, tag, pt) == 0 && memcmp(pt, p, 114) == 0,
	      "AEAD opens");

	/* Every single flipped bit anywhere is refused, and nothing written. */
	int refused = 0, total = 0;
	for (int where = 0; where < 4; where++) {
		int bits = 8 * (where == 0 ? 114 : where == 1 ? 16 : 12);
		for (int b = 0; b < bits; b += 3, total++) {
			uint8_t *v = where == 0 ? ct : where == 1 ? tag : where == 2 ? nonce : aad;
			v[b / 8] ^= (uint8_t)(1 << (b % 8));
			memset(pt, 0x55, sizeof pt);
			int r = aead_open(key, nonce, aad, 12, ct, 114, tag, pt);
			refused += r == -1 && pt[0] == 0x55 && pt[113] == 0x55;
			v[b / 8] ^= (uint8_t)(1 << (b % 8));
		}
	}
	CHECK(refused == total, "a flipped bit of ciphertext, tag, nonce or AAD is refused");
	CHECK(aead_open(key, nonce, aad, 12, ct, 114, tag, pt) == 0, "and the original still opens");

	/* Lengths around the 16- and 64-byte boundaries round-trip. */
	uint8_t buf[300], enc[300], dec[300];
	for (int i = 0; i < 300; i++)
		buf[i] = (uint8_t)(i * 13 + 1);
	int ok = 1;
	for (size_t n = 0; n < 300; n += (n < 70 ? 1 : 37)) {
		aead_seal(key, nonce, aad, n % 13, buf, n, enc, tag);
		ok &= aead_open(key, nonce, aad, n % 13, enc, n, tag, dec) == 0 && memcmp(buf, dec, n) == 0;
	}
	CHECK(ok, "round trips at every length");
}

int main(void)
{
	sha();
	hmac_hkdf();
	chacha_poly();
	if (failures) {
		printf("test_crypto: %d failures\n", failures);
		return 1;
	}
	printf("test_crypto: ok (SHA-256, HMAC, HKDF, ChaCha20, Poly1305, AEAD vectors)\n");
	return 0;
}
