/*
 * edcrypt.c - subkey derivation, metadata MACs, capability encryption and
 * version stamps, all built on SipHash-2-4 (see edcrypt.h for why each
 * exists and what each binds).
 */
#include "kernel/exodisk/edcrypt.h"
#include "kernel/exodisk/edlib.h"

/* Each subkey is the PRF of the master key over a distinct label. */
void ed_keys_derive(struct ed_keys *k, const uint8_t master[16])
{
	siphash128(master, "exodisk/mac-key", 15, k->mac);
	siphash128(master, "exodisk/enc-key", 15, k->enc);
	siphash128(master, "exodisk/stamp-key", 17, k->stamp);
}

void ed_mac_begin(struct siphash *s, const struct ed_keys *k, enum ed_domain dom,
                  const uint8_t uuid[16], uint64_t sector)
{
	sip_init(s, k->mac, true);
	sip_update64(s, (uint64_t)dom);
	sip_update(s, uuid, 16);
	sip_update64(s, sector);
}

void ed_mac_end(struct siphash *s, uint8_t tag[ED_TAG_BYTES])
{
	sip_final128(s, tag);
}

bool ed_tag_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;
	for (int i = 0; i < ED_TAG_BYTES; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

bool ed_cap_equal(const struct ed_cap *a, const struct ed_cap *b)
{
	uint64_t d = (a->w[0] ^ b->w[0]) | (a->w[1] ^ b->w[1]);
	return d == 0;
}

void ed_cap_crypt(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                  uint64_t stamp, uint32_t slot, uint8_t field,
                  const struct ed_cap *in, struct ed_cap *out)
{
	/* A capability is exactly one 16-byte keystream block, so the counter
	 * is always 0; it is in the input so the construction stays plain
	 * counter mode should a field ever grow. */
	struct siphash s;
	uint8_t ks[16];
	sip_init(&s, k->enc, true);
	sip_update(&s, uuid, 16);
	sip_update64(&s, sector);
	sip_update64(&s, stamp);
	sip_update64(&s, ((uint64_t)slot << 8) | field);
	sip_update64(&s, 0);
	sip_final128(&s, ks);
	out->w[0] = in->w[0] ^ ed_load64(ks);
	out->w[1] = in->w[1] ^ ed_load64(ks + 8);
}

uint64_t ed_stamp(const struct ed_keys *k, uint64_t nonce, uint64_t counter)
{
	uint8_t in[16];
	ed_store64(in, nonce);
	ed_store64(in + 8, counter);
	uint64_t v = siphash64(k->stamp, in, 16);
	/* 0 means "no version" everywhere; the chance is 2^-64 but be exact. */
	return v != 0 ? v : 1;
}
