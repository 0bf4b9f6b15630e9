/*
 * crc32c.c - CRC-32C (crc32c.h).
 *
 * Eight bytes a step with eight 256-entry tables ("slicing by eight"),
 * made on first use: under an emulator every instruction counts, and a
 * sector or block costs about two instructions a byte this way instead of
 * eight a byte one byte at a time.  Table t maps a byte to its CRC after
 * t more zero bytes, so the eight lookups of a step cover its eight bytes
 * at once.  tests/host/libos/test_crc32c.c checks it against the
 * published check values and a bit-at-a-time reference.
 */
#include <string.h>
#include "libos/crc32c.h"

#define POLY 0x82F63B78u          /* x^32 + x^28 + ... reflected */

static uint32_t tab[8][256];
static int made;

static void make_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		tab[0][i] = c;
	}
	for (int t = 1; t < 8; t++)
		for (uint32_t i = 0; i < 256; i++)
			tab[t][i] = (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xff];
	made = 1;
}

/* A step reads its eight bytes as one little-endian word (one load). */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "crc32c.c reads words little-endian");

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
	if (!made)
		make_tables();
	const uint8_t *s = p;
	crc = ~crc;
	/* Byte by byte to an 8-byte boundary: RISC-V may trap (and emulate
	 * slowly) a misaligned load. */
	for (; n > 0 && ((uintptr_t)s & 7) != 0; n--)
		crc = (crc >> 8) ^ tab[0][(crc ^ *s++) & 0xff];
	for (; n >= 8; s += 8, n -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		uint32_t lo = (uint32_t)w ^ crc, hi = (uint32_t)(w >> 32);
		crc = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^ tab[5][(lo >> 16) & 0xff] ^
		      tab[4][lo >> 24] ^ tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		      tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
	}
	for (; n > 0; n--)
		crc = (crc >> 8) ^ tab[0][(crc ^ *s++) & 0xff];
	return ~crc;
}
