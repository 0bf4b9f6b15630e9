/*
 * capkey.c - capabilities derived from a secret (see capkey.h), with the
 * exodisk's own SipHash (kernel/exodisk/siphash.c, linked into the libOS).
 */
#include <string.h>
#include "libos/capkey.h"
#include "libos/libfs.h"
#include "kernel/exodisk/siphash.h"

/* Public and fixed: it only separates these keys from every other use of
 * SipHash.  The secret is what must stay secret. */
static const uint8_t salt[16] = {
	0x65, 0x78, 0x6f, 0x64, 0x69, 0x73, 0x6b, 0x2d,
	0x63, 0x61, 0x70, 0x6b, 0x65, 0x79, 0x2d, 0x31,
};

void capkey_derive(struct capkey *ck, const char *type, const void *secret, size_t len)
{
	struct siphash s;
	sip_init(&s, salt, true);
	sip_update(&s, "exodisk-capkey-1", 16);
	/* Lengths first, so (type, secret) pairs cannot run into each other. */
	sip_update64(&s, strlen(type));
	sip_update(&s, type, strlen(type));
	sip_update64(&s, len);
	sip_update(&s, secret, len);
	sip_final128(&s, ck->k);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

int capkey_from_opts(struct capkey *ck, const char *type, const char *opts)
{
	char v[256];
	if (libfs_opt(opts, "keyhex", v, sizeof v) == 1) {
		uint8_t bin[128];
		size_t n = strlen(v);
		if (n % 2 != 0 || n / 2 > sizeof bin)
			return -1;
		for (size_t i = 0; i < n / 2; i++) {
			int hi = hexval(v[2 * i]), lo = hexval(v[2 * i + 1]);
			if (hi < 0 || lo < 0)
				return -1;
			bin[i] = (uint8_t)(hi << 4 | lo);
		}
		capkey_derive(ck, type, bin, n / 2);
		return 0;
	}
	int r = libfs_opt(opts, "key", v, sizeof v);
	if (r < 0)
		return -1;
	if (r == 0)
		strcpy(v, CAPKEY_DEV_SECRET);
	capkey_derive(ck, type, v, strlen(v));
	return 0;
}

struct ed_cap capkey_cap(const struct capkey *ck, char purpose, uint64_t a, uint64_t b)
{
	struct siphash s;
	uint8_t out[16];
	sip_init(&s, ck->k, true);
	sip_update(&s, &purpose, 1);
	sip_update64(&s, a);
	sip_update64(&s, b);
	sip_final128(&s, out);
	struct ed_cap c;
	memcpy(c.w, out, 16);
	return c;
}
