/*
 * siphash.h - SipHash-2-4 (Aumasson and Bernstein, 2012), the keyed
 * pseudo-random function behind every integrity check and every keystream in
 * the exodisk (see edcrypt.h).  Both output sizes of the published design
 * are provided: 64 bits and the 128-bit variant.  The state can be fed
 * incrementally, so a MAC can cover a disk identity, a sector number and a
 * sector's bytes without first copying them together.
 */
#ifndef ED_SIPHASH_H
#define ED_SIPHASH_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

struct siphash {
	uint64_t v0, v1, v2, v3;
	uint64_t tail;      /* up to 7 bytes not yet absorbed, little-endian */
	uint32_t ntail;
	uint64_t len;       /* total bytes fed */
	bool wide;          /* 128-bit output */
};

void     sip_init(struct siphash *s, const uint8_t key[16], bool wide);
void     sip_update(struct siphash *s, const void *data, size_t n);
void     sip_update64(struct siphash *s, uint64_t v);   /* 8 bytes, little-endian */
uint64_t sip_final64(struct siphash *s);                /* s was initialised !wide */
void     sip_final128(struct siphash *s, uint8_t out[16]);   /* s was initialised wide */

uint64_t siphash64(const uint8_t key[16], const void *data, size_t n);
void     siphash128(const uint8_t key[16], const void *data, size_t n, uint8_t out[16]);

#endif
