/*
 * test_crypto.c - the crypt layer's cryptography (libos/stack/crypto.h)
 * against the published test vectors: SHA-256 (FIPS 180-4's examples),
 * HMAC-SHA-256 (RFC 4231, test case 1 and the long-key case 6), HKDF
 * (RFC 5869, test case 1), ChaCha20's block function (RFC 8439, 2.3.2),
 * Poly1305 (2.5.2 and the edge cases of appendix A.3: carries, partial
 * reduction, s overflowing) and the AEAD (2.8.2), ChaCha8 and ChaCha12
 * (draft-strombergson-chacha-test-vectors-01: two blocks each of TC1, TC7
 * and TC8, 256-bit keys); then properties the vectors do
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

/* RFC 8439 appendix A.3, vectors 5 to 11: the corners of the arithmetic
 * mod 2^130 - 5 that a limb implementation can get wrong. */
static void poly_edges(void)
{
	static const struct {
		const char *key, *msg, *tag;
	} v[] = {
		{ "02000000000000000000000000000000" "00000000000000000000000000000000",
		  "ffffffffffffffffffffffffffffffff", "03000000000000000000000000000000" },
		{ "02000000000000000000000000000000" "ffffffffffffffffffffffffffffffff",
		  "02000000000000000000000000000000", "03000000000000000000000000000000" },
		{ "01000000000000000000000000000000" "00000000000000000000000000000000",
		  "ffffffffffffffffffffffffffffffff" "f0ffffffffffffffffffffffffffffff"
		  "11000000000000000000000000000000", "05000000000000000000000000000000" },
		{ "01000000000000000000000000000000" "00000000000000000000000000000000",
		  "ffffffffffffffffffffffffffffffff" "fbfefefefefefefefefefefefefefefe"
		  "01010101010101010101010101010101", "00000000000000000000000000000000" },
		{ "02000000000000000000000000000000" "00000000000000000000000000000000",
		  "fdffffffffffffffffffffffffffffff", "faffffffffffffffffffffffffffffff" },
		{ "01000000000000000400000000000000" "00000000000000000000000000000000",
		  "e33594d7505e43b90000000000000000" "3394d7505e4379cd0100000000000000"
		  "00000000000000000000000000000000" "01000000000000000000000000000000",
		  "14000000000000005500000000000000" },
		{ "01000000000000000400000000000000" "00000000000000000000000000000000",
		  "e33594d7505e43b90000000000000000" "3394d7505e4379cd0100000000000000"
		  "00000000000000000000000000000000", "13000000000000000000000000000000" },
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint8_t key[32], msg[64], tag[16];
		unhex(v[i].key, key);
		size_t n = unhex(v[i].msg, msg);
		poly1305(key, msg, n, tag);
		char what[64];
		snprintf(what, sizeof what, "Poly1305, RFC 8439 A.3 vector %zu", i + 5);
		CHECK(same_hex(tag, 16, v[i].tag), what);
	}
}

/* ChaCha8 and ChaCha12: the first two blocks of key stream (so the
 * counter's step is checked too) from draft-strombergson-chacha-test-
 * vectors-01, whose 64-bit IV is our nonce after four zero bytes. */
static void chacha_rounds(void)
{
	static const struct {
		int rounds;
		const char *key, *iv, *stream;
	} v[] = {
		{ 8, "0000000000000000000000000000000000000000000000000000000000000000", "0000000000000000",
		  "3e00ef2f895f40d67f5bb8e81f09a5a12c840ec3ce9a7f3b181be188ef711a1e"
		  "984ce172b9216f419f445367456d5619314a42a3da86b001387bfdb80e0cfe42"
		  "d2aefa0deaa5c151bf0adb6c01f2a5adc0fd581259f9a2aadcf20f8fd566a26b"
		  "5032ec38bbc5da98ee0c6f568b872a65a08abf251deb21bb4b56e5d8821e68aa" },
		{ 12, "0000000000000000000000000000000000000000000000000000000000000000", "0000000000000000",
		  "9bf49a6a0755f953811fce125f2683d50429c3bb49e074147e0089a52eae155f"
		  "0564f879d27ae3c02ce82834acfa8c793a629f2ca0de6919610be82f411326be"
		  "0bd58841203e74fe86fc71338ce0173dc628ebb719bdcbcc151585214cc089b4"
		  "42258dcda14cf111c602b8971b8cc843e91e46ca905151c02744a6b017e69316" },
		{ 8, "00112233445566778899aabbccddeeffffeeddccbbaa99887766554433221100", "0f1e2d3c4b5a6978",
		  "db43ad9d1e842d1272e4530e276b3f568f8859b3f7cf6d9d2c74fa53808cb515"
		  "7a8ebf46ad3dcc4b6c7dadde131784b0120e0e22f6d5f9ffa7407d4a21b695d9"
		  "c5dd30bf55612fab9bdd118920c19816470c7f5dcd42325dbbed8c57a56281c1"
		  "44cb0f03e81b3004624e0650a1ce5afaf9a7cd8163f6dbd72602257dd96e471e" },
		{ 12, "00112233445566778899aabbccddeeffffeeddccbbaa99887766554433221100", "0f1e2d3c4b5a6978",
		  "7ed12a3a63912ae941ba6d4c0d5e862e568b0e5589346935505f064b8c2698db"
		  "f7d850667d8e67be639f3b4f6a16f92e65ea80f6c7429445da1fc2c1b9365040"
		  "e32e50c4106f3b3da1ce7ccb1e7140b153493c0f3ad9a9bcff077ec4596f1d0f"
		  "29bf9cbaa502820f732af5a93c49eee33d1c4f12af3b4297af91fe41ea9e94a2" },
		{ 8, "c46ec1b18ce8a878725a37e780dfb7351f68ed2e194c79fbc6aebee1a667975d", "1ada31d5cf688221",
		  "838751b42d8ddd8a3d77f48825a2ba752cf4047cb308a5978ef274973be374c9"
		  "6ad848065871417b08f034e681fe46a93f7d5c61d1306614d4aaf257a7cff08b"
		  "16f2fda170cc18a4b58a2667ed962774af792a6e7f3c77992540711a7a136d7e"
		  "8a2f8d3f93816709d45a3fa5f8ce72fde15be7b841acba3a2abd557228d9fe4f" },
		{ 12, "c46ec1b18ce8a878725a37e780dfb7351f68ed2e194c79fbc6aebee1a667975d", "1ada31d5cf688221",
		  "1482072784bc6d06b4e73bdc118bc0103c7976786ca918e06986aa251f7e9cc1"
		  "b2749a0a16ee83b4242d2e99b08d7c20092b80bc466c87283b61b1b39d0ffbab"
		  "d94b116bc1ebdb329b9e4f620db695544a8e3d9b68473d0c975a46ad966ed631"
		  "e42aff530ad5eac7d8047adfa1e5113c91f3e3b883f1d189ac1c8fe07ba5a42b" },
	};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint8_t key[32], nonce[12] = { 0 }, out[128] = { 0 }, odd[128] = { 0 };
		unhex(v[i].key, key);
		unhex(v[i].iv, nonce + 4);
		chacha_xor(v[i].rounds, key, nonce, 0, out, out, sizeof out);
		char what[64];
		snprintf(what, sizeof what, "ChaCha%d, draft-strombergson vector %zu", v[i].rounds, i);
		CHECK(same_hex(out, 128, v[i].stream), what);
		/* The same stream through buffers that are not word-aligned. */
		chacha_xor(v[i].rounds, key, nonce, 0, odd + 1, odd + 1, 127);
		CHECK(memcmp(odd + 1, out, 127) == 0, "unaligned buffers give the same stream");
	}
	/* Rounds 20 through chacha_xor is ChaCha20. */
	uint8_t key[32] = { 0 }, nonce[12] = { 0 }, a[64] = { 0 }, b[64] = { 0 };
	chacha_xor(20, key, nonce, 0, a, a, 64);
	chacha20_xor(key, nonce, 0, b, b, 64);
	CHECK(same_hex(a, 64, "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7"
	                      "da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586") &&
	      memcmp(a, b, 64) == 0, "ChaCha20, draft-strombergson TC1");
}

/* The AEAD over 8 and 12 rounds: round trips, refusals, and a different
 * result from every other round count (the rounds are really used, in the
 * one-time key as in the stream). */
static void aead_rounds(void)
{
	uint8_t key[32], nonce[12], aad[25], pt[4096], ct[3][4096], tag[3][16], back[4096];
	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 29 + 3);
	for (int i = 0; i < 12; i++)
		nonce[i] = (uint8_t)(i + 100);
	for (int i = 0; i < 25; i++)
		aad[i] = (uint8_t)(i ^ 0x5a);
	for (int i = 0; i < 4096; i++)
		pt[i] = (uint8_t)(i * 31 + (i >> 8));
	static const int rounds[3] = { 8, 12, 20 };
	for (int r = 0; r < 3; r++) {
		chacha_aead_seal(rounds[r], key, nonce, aad, 25, pt, 4096, ct[r], tag[r]);
		CHECK(chacha_aead_open(rounds[r], key, nonce, aad, 25, ct[r], 4096, tag[r], back) == 0 &&
		      memcmp(back, pt, 4096) == 0, "ChaCha-Poly1305 round trip");
		ct[r][4000] ^= 0x10;
		CHECK(chacha_aead_open(rounds[r], key, nonce, aad, 25, ct[r], 4096, tag[r], back) == -1,
		      "a flipped bit refused");
		ct[r][4000] ^= 0x10;
		CHECK(chacha_aead_open(rounds[(r + 1) % 3], key, nonce, aad, 25, ct[r], 4096, tag[r], back) == -1,
		      "opening with other rounds is refused");
	}
	CHECK(memcmp(ct[0], ct[1], 4096) != 0 && memcmp(tag[0], tag[1], 16) != 0 &&
	      memcmp(ct[1], ct[2], 4096) != 0, "8, 12 and 20 rounds differ");
	uint8_t t20[16];
	aead_seal(key, nonce, aad, 25, pt, 4096, back, t20);
	CHECK(memcmp(back, ct[2], 4096) == 0 && memcmp(t20, tag[2], 16) == 0,
	      "aead_seal is ChaCha-Poly1305 with 20 rounds");
}

/* The fast ChaCha (chacha_impl(): four blocks at a time, or Zbb's
 * rotates) against the portable code: lengths to 1,100 bytes and some
 * long ones, every alignment of input and output, in place or not,
 * counters that wrap in the middle of a group of four, all round counts. */
static uint8_t agree_src[4096 + 600], agree_a[4096 + 600], agree_b[4096 + 600];

static int agree_one(int rounds, size_t n, size_t k)
{
	const uint8_t *src = agree_src;
	static const uint32_t counters[] = { 0, 1, 0xfffffffeu, 0xffffffffu };
	uint8_t key[32], nonce[12];
	for (int i = 0; i < 32; i++)
		key[i] = src[(k + i) % 97];
	for (int i = 0; i < 12; i++)
		nonce[i] = src[(k * 3 + i) % 89];
	size_t ia = k % 4, oa = (k / 4) % 4;
	uint32_t ctr = counters[(k / 16) % 4];
	int inplace = k % 5 == 0;
	uint8_t *a = agree_a + oa, *b = agree_b + oa;
	chacha_force_portable(1);
	memcpy(a, src + ia, n);
	chacha_xor(rounds, key, nonce, ctr, inplace ? a : src + ia, a, n);
	chacha_force_portable(0);
	memcpy(b, src + ia, n);
	chacha_xor(rounds, key, nonce, ctr, inplace ? b : src + ia, b, n);
	return memcmp(a, b, n) == 0;
}

static void impl_agree(void)
{
	uint32_t seed = 12345;
	for (size_t i = 0; i < sizeof agree_src; i++) {
		seed = seed * 1103515245 + 12345;
		agree_src[i] = (uint8_t)(seed >> 16);
	}
	static const size_t longs[] = { 4096, 4096 + 64, 4096 + 255, 4096 + 513 };
	int bad = 0, runs = 0;
	for (int rounds = 8; rounds <= 20; rounds += 4) {
		size_t k = 0;
		for (size_t n = 0; n < 1100; n += n < 300 ? 1 : 7, k++, runs++)
			bad += !agree_one(rounds, n, k);
		for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++, k++, runs++)
			bad += !agree_one(rounds, longs[i], k);
	}
	char what[96];
	snprintf(what, sizeof what, "ChaCha %s equals the portable code (%d streams)", chacha_impl(), runs);
	CHECK(bad == 0, what);
}

/* Everything above: 0 when it all passed (apps/cryptotest.c runs this in
 * the guest, where the fast code is the guest CPU's). */
static int run_tests(void)
{
	/* Every vector through the fast code, then through the portable. */
	for (int portable = 0; portable < 2; portable++) {
		chacha_force_portable(portable);
		sha();
		hmac_hkdf();
		chacha_poly();
		poly_edges();
		chacha_rounds();
		aead_rounds();
	}
	chacha_force_portable(0);
	impl_agree();
	if (failures) {
		printf("test_crypto: %d failures\n", failures);
		return 1;
	}
	printf("test_crypto: ok (SHA-256, HMAC, HKDF, ChaCha8/12/20, Poly1305, AEAD vectors; "
	       "ChaCha by %s and portable)\n", chacha_impl());
	return 0;
}

#ifndef CRYPTO_TEST_NO_MAIN
int main(void)
{
	return run_tests();
}
#endif
