/*
 * lz.h - a small LZ77 compressor for the compress layer
 * (userfs/layers/compress.c): greedy matching through a hash of 4-byte
 * sequences, written for this project.  Its format is a run of sequences,
 * each a token byte (literal count in the high four bits, match length
 * minus 4 in the low four; 15 in either means more length bytes follow,
 * each adding up to 255), the literals, then a 2-byte little-endian
 * distance back; the last sequence has literals only.  The decoder checks
 * every length and distance, so damaged input is refused, never followed
 * out of its buffers.  Portable C11, no allocation.
 */
#ifndef LIBOS_STACK_LZ_H
#define LIBOS_STACK_LZ_H

#include <stddef.h>
#include <stdint.h>

/* Compress n <= 65535 bytes into out (room bytes): the compressed size, or
 * 0 when it would not be smaller than room. */
size_t lz_compress(const uint8_t *in, size_t n, uint8_t *out, size_t room);
/* Decompress into out, which must come out exactly `want` bytes: 0, or -1
 * for input that is damaged or does not make `want` bytes. */
int lz_decompress(const uint8_t *in, size_t n, uint8_t *out, size_t want);

#endif
