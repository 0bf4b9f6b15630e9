/*
 * lz.c - the compress layer's LZ77 coder (lz.h).
 */
#include <string.h>
#include "libos/stack/lz.h"

#define HBITS 12
#define MINMATCH 4

static uint32_t hash4(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return (v * 2654435761u) >> (32 - HBITS);
}

/* Append a length's extra bytes (after the 15 in the token). */
static int put_len(uint8_t **o, uint8_t *end, size_t len)
{
	for (; len >= 255; len -= 255) {
		if (*o >= end)
			return -1;
		*(*o)++ = 255;
	}
	if (*o >= end)
		return -1;
	*(*o)++ = (uint8_t)len;
	return 0;
}

static int put_seq(uint8_t **o, uint8_t *end, const uint8_t *lit, size_t nlit, size_t mlen,
                   size_t dist)
{
	if (*o >= end)
		return -1;
	uint8_t *token = (*o)++;
	size_t m = mlen ? mlen - MINMATCH : 0;
	*token = (uint8_t)((nlit < 15 ? nlit : 15) << 4 | (m < 15 ? m : 15));
	if (nlit >= 15 && put_len(o, end, nlit - 15) < 0)
		return -1;
	if ((size_t)(end - *o) < nlit)
		return -1;
	memcpy(*o, lit, nlit);
	*o += nlit;
	if (mlen == 0)
		return 0;
	if (end - *o < 2)
		return -1;
	*(*o)++ = (uint8_t)dist;
	*(*o)++ = (uint8_t)(dist >> 8);
	if (m >= 15 && put_len(o, end, m - 15) < 0)
		return -1;
	return 0;
}

size_t lz_compress(const uint8_t *in, size_t n, uint8_t *out, size_t room)
{
	uint16_t table[1 << HBITS];
	memset(table, 0xff, sizeof table);          /* 0xffff: empty */
	uint8_t *o = out, *end = out + room;
	size_t i = 0, lit = 0;
	while (n >= MINMATCH && i + MINMATCH <= n) {
		uint32_t h = hash4(in + i);
		size_t cand = table[h];
		table[h] = (uint16_t)i;
		if (cand != 0xffff && cand < i && i - cand <= 65535 &&
		    memcmp(in + cand, in + i, MINMATCH) == 0) {
			size_t len = MINMATCH;
			while (i + len < n && in[cand + len] == in[i + len])
				len++;
			if (put_seq(&o, end, in + lit, i - lit, len, i - cand) < 0)
				return 0;
			/* Index a few positions inside the match for later ones. */
			for (size_t k = i + 1; k + MINMATCH <= n && k < i + len; k += 3)
				table[hash4(in + k)] = (uint16_t)k;
			i += len;
			lit = i;
		} else {
			i++;
		}
	}
	if (put_seq(&o, end, in + lit, n - lit, 0, 0) < 0 || o >= end)
		return 0;
	return (size_t)(o - out);
}

static int get_len(const uint8_t **p, const uint8_t *end, size_t *len)
{
	uint8_t b;
	do {
		if (*p >= end)
			return -1;
		b = *(*p)++;
		*len += b;
	} while (b == 255);
	return 0;
}

int lz_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t want)
{
	const uint8_t *p = in, *end = in + n;
	size_t o = 0;
	while (p < end) {
		uint8_t token = *p++;
		size_t nlit = token >> 4;
		if (nlit == 15 && get_len(&p, end, &nlit) < 0)
			return -1;
		if ((size_t)(end - p) < nlit || want - o < nlit)
			return -1;
		memcpy(out + o, p, nlit);
		p += nlit;
		o += nlit;
		if (p == end)
			break;                             /* the last sequence */
		if (end - p < 2)
			return -1;
		size_t dist = (size_t)p[0] | (size_t)p[1] << 8;
		p += 2;
		size_t mlen = token & 15;
		if (mlen == 15 && get_len(&p, end, &mlen) < 0)
			return -1;
		mlen += MINMATCH;
		if (dist == 0 || dist > o || want - o < mlen)
			return -1;
		for (size_t k = 0; k < mlen; k++, o++)  /* may overlap: byte by byte */
			out[o] = out[o - dist];
	}
	return o == want ? 0 : -1;
}
