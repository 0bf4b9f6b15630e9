/*
 * test_ed_crypto.c - known-answer tests for SipHash-2-4 (64- and 128-bit
 * output, against the reference vectors published with the algorithm), and
 * the properties the exodisk relies on: a MAC changes with the disk, the
 * sector, the domain and every byte; capability encryption round-trips and
 * differs per sector, version and slot; stamps are distinct per counter and
 * per nonce; comparisons are exact.
 */
#include <string.h>
#include "tests/host/exodisk/edharness.h"
#include "kernel/exodisk/siphash.h"
#include "kernel/exodisk/edcrypt.h"
#include "kernel/exodisk/ondisk.h"

/* Reference vectors: key 00 01 .. 0f, message 00 01 .. (len-1). */
static const struct { int len; uint64_t tag; } kat64[] = {
	{ 0, 0x726fdb47dd0e0e31ull }, { 1, 0x74f839c593dc67fdull }, { 7, 0xab0200f58b01d137ull },
	{ 8, 0x93f5f5799a932462ull }, { 15, 0xa129ca6149be45e5ull }, { 16, 0x3f2acc7f57c29bdbull },
	{ 63, 0x958a324ceb064572ull },
};

static const struct { int len; uint8_t tag[16]; } kat128[] = {
	{ 0, { 0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93 } },
	{ 1, { 0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b, 0x22, 0xfc, 0x45 } },
	{ 7, { 0xa1, 0xf1, 0xeb, 0xbe, 0xd8, 0xdb, 0xc1, 0x53, 0xc0, 0xb8, 0x4a, 0xa6, 0x1f, 0xf0, 0x82, 0x39 } },
	{ 15, { 0x54, 0x93, 0xe9, 0x99, 0x33, 0xb0, 0xa8, 0x11, 0x7e, 0x08, 0xec, 0x0f, 0x97, 0xcf, 0xc3, 0xd9 } },
	{ 63, { 0x51, 0x50, 0xd1, 0x77, 0x2f, 0x50, 0x83, 0x4a, 0x50, 0x3e, 0x06, 0x9a, 0x97, 0x3f, 0xbd, 0x7c } },
};

static void test_siphash(void)
{
	uint8_t key[16], msg[64], out[16];
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(kat64) / sizeof(kat64[0]); i++)
		CHECK(siphash64(key, msg, (size_t)kat64[i].len) == kat64[i].tag);
	for (size_t i = 0; i < sizeof(kat128) / sizeof(kat128[0]); i++) {
		siphash128(key, msg, (size_t)kat128[i].len, out);
		CHECK(memcmp(out, kat128[i].tag, 16) == 0);
	}
	/* Feeding in pieces of every size gives the same answer. */
	for (int len = 0; len <= 63; len++)
		for (int step = 1; step <= 9; step++) {
			struct siphash s;
			sip_init(&s, key, true);
			for (int off = 0; off < len; off += step)
				sip_update(&s, msg + off, (size_t)(len - off < step ? len - off : step));
			uint8_t a[16], b[16];
			sip_final128(&s, a);
			siphash128(key, msg, (size_t)len, b);
			CHECK(memcmp(a, b, 16) == 0);
			sip_init(&s, key, false);
			for (int off = 0; off < len; off += step)
				sip_update(&s, msg + off, (size_t)(len - off < step ? len - off : step));
			CHECK(sip_final64(&s) == siphash64(key, msg, (size_t)len));
		}
}

static void mac(const struct ed_keys *k, enum ed_domain dom, const uint8_t uuid[16], uint64_t sector,
                const uint8_t *bytes, size_t n, uint8_t tag[16])
{
	struct siphash s;
	ed_mac_begin(&s, k, dom, uuid, sector);
	sip_update(&s, bytes, n);
	ed_mac_end(&s, tag);
}

static void test_bindings(void)
{
	struct ed_keys k, k2;
	ed_keys_derive(&k, (const uint8_t *)ED_DEV_KEY);
	ed_keys_derive(&k2, (const uint8_t *)"another-key-1234");
	CHECK(memcmp(k.mac, k.enc, 16) != 0 && memcmp(k.mac, k.stamp, 16) != 0);
	uint8_t uuid[16] = { 1, 2, 3 }, uuid2[16] = { 1, 2, 4 };
	uint8_t block[512], t0[16], t[16];
	for (int i = 0; i < 512; i++)
		block[i] = (uint8_t)(i * 13);
	mac(&k, ED_DOM_XNBLK, uuid, 1000, block, 512, t0);
	mac(&k, ED_DOM_XNBLK, uuid, 1001, block, 512, t);
	CHECK(!ed_tag_equal(t0, t));                      /* another sector */
	mac(&k, ED_DOM_XNBLK, uuid2, 1000, block, 512, t);
	CHECK(!ed_tag_equal(t0, t));                      /* another disk */
	mac(&k, ED_DOM_EXTENT, uuid, 1000, block, 512, t);
	CHECK(!ed_tag_equal(t0, t));                      /* another kind of object */
	mac(&k2, ED_DOM_XNBLK, uuid, 1000, block, 512, t);
	CHECK(!ed_tag_equal(t0, t));                      /* another key */
	for (int i = 0; i < 512; i += 37) {
		block[i] ^= 0x10;
		mac(&k, ED_DOM_XNBLK, uuid, 1000, block, 512, t);
		CHECK(!ed_tag_equal(t0, t));                  /* any changed byte */
		block[i] ^= 0x10;
	}
	mac(&k, ED_DOM_XNBLK, uuid, 1000, block, 512, t);
	CHECK(ed_tag_equal(t0, t));

	/* Capability encryption. */
	struct ed_cap cap = h_cap(0x1122334455667788ull, 0x99aabbccddeeff00ull), enc, enc2, dec;
	ed_cap_crypt(&k, uuid, 1000, 77, 3, 'r', &cap, &enc);
	CHECK(!ed_cap_equal(&cap, &enc));
	ed_cap_crypt(&k, uuid, 1000, 77, 3, 'r', &enc, &dec);
	CHECK(ed_cap_equal(&cap, &dec));
	ed_cap_crypt(&k, uuid, 1000, 78, 3, 'r', &cap, &enc2);
	CHECK(!ed_cap_equal(&enc, &enc2));                /* another version */
	ed_cap_crypt(&k, uuid, 1001, 77, 3, 'r', &cap, &enc2);
	CHECK(!ed_cap_equal(&enc, &enc2));                /* another sector */
	ed_cap_crypt(&k, uuid, 1000, 77, 4, 'r', &cap, &enc2);
	CHECK(!ed_cap_equal(&enc, &enc2));                /* another slot */
	ed_cap_crypt(&k, uuid, 1000, 77, 3, 'w', &cap, &enc2);
	CHECK(!ed_cap_equal(&enc, &enc2));                /* the other capability */

	/* Stamps. */
	CHECK(ed_stamp(&k, 5, 1) != ed_stamp(&k, 5, 2));
	CHECK(ed_stamp(&k, 5, 1) != ed_stamp(&k, 6, 1));
	CHECK(ed_stamp(&k, 5, 1) == ed_stamp(&k, 5, 1));
	for (uint64_t i = 0; i < 10000; i++)
		CHECK(ed_stamp(&k, 9, i) != 0);

	/* Comparisons see every bit. */
	struct ed_cap a = h_cap(1, 2), b = h_cap(1, 2);
	CHECK(ed_cap_equal(&a, &b));
	for (int bit = 0; bit < 128; bit++) {
		b = a;
		b.w[bit / 64] ^= 1ull << (bit % 64);
		CHECK(!ed_cap_equal(&a, &b));
	}
}

/* Sealed structures reject their own copy at another sector and any flip. */
static void test_sealing(void)
{
	struct ed_keys k;
	ed_keys_derive(&k, (const uint8_t *)ED_DEV_KEY);
	uint8_t uuid[16] = { 9 };
	struct ed_exthdr plain, disk, out;
	memset(&plain, 0, sizeof(plain));
	plain.nsectors = 10;
	plain.rc = h_cap(1, 1);
	plain.wc = h_cap(2, 2);
	ed_ext_encode(&k, uuid, 500, &plain, 1234, &disk);
	CHECK(memcmp(&disk.rc, &plain.rc, 16) != 0);     /* stored encrypted */
	CHECK_EQ(ed_ext_decode(&k, uuid, 500, &disk, 1234, &out), 0);
	CHECK(ed_cap_equal(&out.rc, &plain.rc) && ed_cap_equal(&out.wc, &plain.wc));
	CHECK_EQ(out.nsectors, 10);
	CHECK_EQ(ed_ext_decode(&k, uuid, 501, &disk, 1234, &out), ED_E_BADMAC);
	CHECK_EQ(ed_ext_decode(&k, uuid, 500, &disk, 1235, &out), ED_E_STALE);
	for (size_t i = 0; i < sizeof(disk); i++) {
		struct ed_exthdr t = disk;
		((uint8_t *)&t)[i] ^= 0x80;
		CHECK(ed_ext_decode(&k, uuid, 500, &t, 1234, &out) != 0);
	}
	struct ed_super sb;
	memset(&sb, 0, sizeof(sb));
	sb.magic = ED_SB_MAGIC;
	sb.fmt = ED_SB_FMT;
	sb.log_len = 64;
	ed_super_seal(&k, &sb, ED_SB_A);
	CHECK_EQ(ed_super_check(&k, &sb, ED_SB_A), 0);
	/* A superblock of another format version is recognised as one. */
	sb.fmt = 1;
	ed_super_seal(&k, &sb, ED_SB_A);
	CHECK_EQ(ed_super_check(&k, &sb, ED_SB_A), ED_E_VERSION);
	sb.fmt = ED_SB_FMT;
	ed_super_seal(&k, &sb, ED_SB_A);
	CHECK_EQ(ed_super_check(&k, &sb, ED_SB_B), ED_E_BADMAC);
	sb.gen++;
	CHECK_EQ(ed_super_check(&k, &sb, ED_SB_A), ED_E_BADMAC);
}

int main(void)
{
	test_siphash();
	test_bindings();
	test_sealing();
	printf("test_ed_crypto: ok\n");
	return 0;
}
