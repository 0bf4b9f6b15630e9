/*
 * test_crc32c.c - libos/crc32c.c: the published check values (the CRC
 * catalogue's "123456789", and RFC 3720's iSCSI vectors, appendix B.4),
 * then every length up to 300 at every alignment against a bit-at-a-time
 * reference, and a CRC continued over any split equal to the whole one.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "libos/crc32c.h"

static int failed;

static void check(const char *what, uint32_t got, uint32_t want)
{
	if (got != want) {
		printf("test_crc32c: %s: %08x, expected %08x\n", what, got, want);
		failed = 1;
	}
}

/* One bit at a time, straight from the definition. */
static uint32_t slow(const uint8_t *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
	}
	return c ^ 0xFFFFFFFFu;
}

int main(void)
{
	uint8_t b[32];
	check("\"123456789\"", crc32c(0, "123456789", 9), 0xE3069283u);
	check("empty", crc32c(0, "", 0), 0);
	memset(b, 0, sizeof b);
	check("32 zero bytes", crc32c(0, b, 32), 0x8A9136AAu);
	memset(b, 0xFF, sizeof b);
	check("32 bytes of 0xFF", crc32c(0, b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	check("32 bytes 0x00..0x1F", crc32c(0, b, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	check("32 bytes 0x1F..0x00", crc32c(0, b, 32), 0x113FDB5Cu);

	static uint8_t buf[512 + 8];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof buf; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	char what[64];
	for (size_t off = 0; off < 8 && !failed; off++)
		for (size_t n = 0; n <= 300 && !failed; n++) {
			uint32_t want = slow(buf + off, n);
			snprintf(what, sizeof what, "%zu bytes at offset %zu", n, off);
			check(what, crc32c(0, buf + off, n), want);
			for (size_t cut = 0; cut <= n && !failed; cut += 1 + n / 7) {
				snprintf(what, sizeof what, "%zu bytes at offset %zu, split at %zu", n, off, cut);
				check(what, crc32c(crc32c(0, buf + off, cut), buf + off + cut, n - cut), want);
			}
		}
	check("a 512-byte sector", crc32c(0, buf, 512), slow(buf, 512));
	if (!failed)
		printf("test_crc32c: ok\n");
	return failed;
}
