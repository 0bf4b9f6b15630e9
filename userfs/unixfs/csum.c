/*
 * csum.c - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, initial
 * value and final XOR 0xFFFFFFFF: the checksum of iSCSI, ext4 and btrfs),
 * the checksum of unixfs directory blocks.
 *
 * Computed eight bytes at a time with eight 256-entry tables ("slicing by
 * eight"), made on first use: under an emulator every instruction counts,
 * and a 4 KiB block costs about two instructions a byte this way instead
 * of eight a byte one byte at a time.
 */
#include <string.h>
#include "userfs/unixfs/ufs.h"

static uint32_t tab[8][256];
static int made;

static void make_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			tab[t][i] = (tab[t - 1][i] >> 8) ^ tab[0][tab[t - 1][i] & 0xff];
	made = 1;
}

uint32_t ufs_crc32c(uint32_t crc, const void *p, size_t n)
{
	if (!made)
		make_tables();
	const uint8_t *s = p;
	crc = ~crc;
	while (n > 0 && ((uintptr_t)s & 7) != 0) {
		crc = (crc >> 8) ^ tab[0][(crc ^ *s++) & 0xff];
		n--;
	}
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		/* Little-endian: the first byte is the low one (both targets). */
		uint32_t lo = (uint32_t)w ^ crc, hi = (uint32_t)(w >> 32);
		crc = tab[7][lo & 0xff] ^ tab[6][(lo >> 8) & 0xff] ^ tab[5][(lo >> 16) & 0xff] ^
		      tab[4][lo >> 24] ^ tab[3][hi & 0xff] ^ tab[2][(hi >> 8) & 0xff] ^
		      tab[1][(hi >> 16) & 0xff] ^ tab[0][hi >> 24];
		s += 8;
		n -= 8;
	}
	while (n-- > 0)
		crc = (crc >> 8) ^ tab[0][(crc ^ *s++) & 0xff];
	return ~crc;
}

uint32_t ufs_dblk_csum(const uint8_t *blk)
{
	/* The header's csum field (bytes 4..7) counts as zero. */
	static const uint8_t zero[4];
	uint32_t c = ufs_crc32c(0, blk, 4);
	c = ufs_crc32c(c, zero, 4);
	return ufs_crc32c(c, blk + 8, UFS_BSIZE - 8);
}
