/*
 * xnode.h - reading and changing exonodes inside a plain (decrypted) exonode
 * block image.  Pure functions over bytes: no disk, no cache, no
 * capabilities checks.  The operations in xnops.c use these after they have
 * checked rights; the on-disk decoder and the checker use ed_xn_check().
 *
 * An exonode is a 56-byte header (struct ed_xnhdr) followed by its entries,
 * packed in increasing entry number (struct ed_xnrec and its payload).
 */
#ifndef ED_XNODE_H
#define ED_XNODE_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/exodisk/ondisk.h"

static inline uint32_t ed_xn_nslots(uint32_t nsect, uint32_t slot_bytes)
{
	return (nsect * ED_SECTOR - ED_XNBLK_HDR_BYTES) / slot_bytes;
}

/* Sectors a new block needs for exonodes of this length. */
static inline uint32_t ed_xn_nsect_for(uint64_t length)
{
	return (uint32_t)((ED_XNBLK_HDR_BYTES + length + ED_SECTOR - 1) / ED_SECTOR);
}

static inline struct ed_xnhdr *ed_xn_slot(uint8_t *blk, uint32_t slot)
{
	const struct ed_xnblk *b = (const struct ed_xnblk *)blk;
	return (struct ed_xnhdr *)(blk + ED_XNBLK_HDR_BYTES + slot * b->slot_bytes);
}

static inline uint32_t ed_xn_area(uint32_t slot_bytes)
{
	return slot_bytes - ED_XN_HDR_BYTES;
}

static inline uint8_t *ed_xn_entries(struct ed_xnhdr *x)
{
	return (uint8_t *)x + ED_XN_HDR_BYTES;
}

/* Bytes an entry takes, given its type and `a`. */
static inline uint32_t ed_xn_recsize(uint8_t type, uint32_t a)
{
	switch (type) {
	case ED_ENT_EXTENT:  return ED_XN_EXTENT_BYTES;
	case ED_ENT_EXONODE: return ED_XN_CHILD_BYTES;
	case ED_ENT_DATA:    return ED_XN_DATA_HDR + ((a + 7) & ~7u);
	default:             return 0;
	}
}

/* Walking entries: for (r = ed_xn_first(x); r; r = ed_xn_next(x, r)). */
struct ed_xnrec *ed_xn_first(struct ed_xnhdr *x);
struct ed_xnrec *ed_xn_next(struct ed_xnhdr *x, struct ed_xnrec *r);

static inline uint64_t ed_xnrec_u64(const struct ed_xnrec *r, int i)
{
	return ed_load64((const uint8_t *)(r + 1) + 8 * i);
}
static inline void ed_xnrec_set_u64(struct ed_xnrec *r, int i, uint64_t v)
{
	ed_store64((uint8_t *)(r + 1) + 8 * i, v);
}
static inline uint8_t *ed_xnrec_data(struct ed_xnrec *r)
{
	return (uint8_t *)(r + 1);
}

/* Check one slot's shape (states, padding, entries).  0 or ED_E_CORRUPT. */
int ed_xn_check(const struct ed_xnhdr *x, uint32_t slot_bytes);

struct ed_xnrec *ed_xn_find(struct ed_xnhdr *x, int idx);
/* The lowest entry number not in use, or -1 if all are. */
int ed_xn_free_idx(struct ed_xnhdr *x);
/* Insert an entry; payload is recsize - 8 bytes (data is zero-padded).
 * Returns the new entry, or NULL with *err = ED_E_ENTRY / ED_E_XNFULL. */
struct ed_xnrec *ed_xn_insert(struct ed_xnhdr *x, uint32_t slot_bytes, int idx, uint8_t type,
                              uint32_t a, const void *payload, uint32_t paylen, int *err);
void ed_xn_remove(struct ed_xnhdr *x, struct ed_xnrec *r);
/* Remove the `bytes` of entries that start at r (whole entries, in a row). */
void ed_xn_remove_span(struct ed_xnhdr *x, struct ed_xnrec *r, uint32_t bytes);
/* Replace a DATA entry's bytes (it may grow or shrink).  0 or ED_E_XNFULL. */
int ed_xn_set_data(struct ed_xnhdr *x, uint32_t slot_bytes, struct ed_xnrec *r,
                   const void *data, uint32_t len);
/* Counts of extent and exonode entries. */
uint32_t ed_xn_count(struct ed_xnhdr *x, uint8_t type);

#endif
