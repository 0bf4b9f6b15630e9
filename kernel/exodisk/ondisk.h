/*
 * ondisk.h - the exodisk's on-disk formats.  docs/exodisk.md ("On-disk
 * format") has the pictures; this header is the reference.
 *
 * A disk formatted for the exodisk starts with a small fixed region only the
 * kernel uses, marked allocated in the free map:
 *
 *   sector 0            superblock copy A
 *   sector 8            superblock copy B   (separate 4 KiB page from A)
 *   log_start ..        the commit log: records of committed metadata writes
 *   data_start ..       everything else: applications' sectors, and the
 *                       pages of the exodisk's own two trees
 *
 * The exodisk's durable state beyond the log is two trees of 4 KiB pages,
 * written copy-on-write by checkpoints and named by the superblock: the
 * binding tree (a B+tree of every bound header and exonode block, by
 * sector) and the free-map tree (a radix tree over the free map's 4 KiB
 * leaves, each 32768 sectors' bits).  Their pages are allocated on demand
 * from the data area like any other sectors, so the trees grow with what is
 * stored, not with the disk; a checkpoint writes only the pages that
 * changed, and a mount reads the superblock, the free map's mixed leaves
 * and the log, and the binding tree only as lookups touch it.  Every tree
 * pointer carries the MAC of the page it points to (a Merkle tree): a page
 * moved, replayed or altered does not verify.
 *
 * Two kinds of metadata live among application data, at places applications
 * choose:
 *
 *   extent header   the first ED_EXT_HDR_BYTES of a self-protected extent's
 *                   first sector; the rest of that sector is data.
 *   exonode block   1..4 sectors holding a block header and equal-sized
 *                   slots, each a free slot or one exonode.
 *
 * Each is bound in the binding tree (its sector, kind, size and current
 * version stamp) and carries a MAC that covers the disk's identity and its
 * own sector, so a copy at another sector, on another disk, or of an older
 * version is rejected.  Capabilities are stored encrypted.
 */
#ifndef ED_ONDISK_H
#define ED_ONDISK_H

#include <stdint.h>
#include "kernel/uapi/exodisk.h"
#include "kernel/exodisk/edcrypt.h"
#include "kernel/exodisk/edlib.h"

#define ED_FMT            1       /* headers, exonode blocks */
#define ED_LOG_FMT        2       /* log records: 2 = unwritten and written ranges (below) */
#define ED_LOG_FMT_OLD    1       /* a record without them, still replayed */
#define ED_SB_FMT         4       /* superblock: 4 = its log may hold format-2 records */
#define ED_SB_FMT_V3      3       /* free-map overrides, format-1 records only: read too */
#define ED_SB_FMT_OLD     2       /* a superblock without overrides, upgraded at mount */
#define ED_TREE_FMT       2       /* the trees' pages */
#define ED_SB_A           0       /* sector of superblock copy A */
#define ED_SB_B           8       /* sector of superblock copy B */
#define ED_LOG_FIRST      16      /* the log begins here */
#define ED_LOG_MAX        32768   /* most sectors of log (16 MiB) */
#define ED_SECT_PER_PAGE  8

#define ED_SB_MAGIC       0x314b5349444f5845ull   /* "EXODISK1" */
#define ED_EXT_MAGIC      0x48545845u             /* "EXTH" */
#define ED_XNBLK_MAGIC    0x4b4c4e58u             /* "XNLK" */
#define ED_LOG_MAGIC      0x52474f4cu             /* "LOGR" */

/* Kinds of bound metadata (binding table, log). */
#define ED_KIND_EXTENT  1
#define ED_KIND_XNBLK   2

/* ---- tree pointers ------------------------------------------------------- */
/* Where a tree page lives and the MAC it must have there.  Two sectors can
 * never hold a page (they are superblock A), so they mean whole subtrees:
 * ED_MPTR_ZERO - nothing (an empty binding tree; a free-map subtree that is
 * all free), ED_MPTR_ONES - a free-map subtree that is all allocated. */
#define ED_MPTR_ZERO  0
#define ED_MPTR_ONES  1

struct ed_mptr {
	uint64_t sector;
	uint8_t  tag[16];
};

/* ---- superblock ---------------------------------------------------------- */
#define ED_FM_MAX_OVER   9
#define ED_SBF_CLEAN   0x1   /* written by a shutdown: the log holds nothing */

struct ed_super {
	uint64_t magic;
	uint32_t fmt;           /* ED_SB_FMT */
	uint32_t flags;         /* ED_SBF_* */
	uint8_t  uuid[16];      /* the disk's identity, chosen at format */
	uint64_t nsectors;      /* sectors the format covers */
	uint64_t data_start;
	uint64_t log_start;
	uint64_t log_len;       /* sectors */
	uint64_t gen;           /* checkpoint generation: the valid copy with the higher wins */
	uint64_t log_pos;       /* replay begins at log_start + log_pos ... */
	uint64_t log_seq;       /* ... with a record numbered log_seq ... */
	uint8_t  log_chain[16]; /* ... whose "previous tag" is this */
	uint64_t mounts;        /* mount count, one input of the mount nonce */
	struct ed_mptr bt_root; /* the binding tree (ZERO: no bindings) */
	struct ed_mptr fm_root; /* the free-map tree */
	uint32_t bt_height;     /* levels of the binding tree: 0 empty, 1 the root is a leaf */
	uint32_t fm_height;     /* levels of inner pages above the free map's leaves (>= 1) */
	uint64_t bindings;      /* records in the binding tree */
	uint64_t allocated;     /* sectors the free map marks allocated */
	uint64_t meta_pages;    /* pages the two trees occupy */
	/* Free-map leaves whose pointer is here rather than in the tree's inner
	 * pages (which still name an older page, freed since): a checkpoint that
	 * changed only a few leaves writes them and this list, not the path of
	 * inner pages above each (fmtree.c). */
	uint32_t fm_nover;
	uint32_t pad2;
	struct ed_fmover {
		uint64_t leaf;
		struct ed_mptr ptr;
	} fm_over[ED_FM_MAX_OVER];
	uint8_t  reserved[8];
	uint8_t  tag[16];
};
_Static_assert(sizeof(struct ed_super) == 512, "superblock is one sector");

/* ---- extent header ------------------------------------------------------- */
struct ed_exthdr {
	uint32_t magic;
	uint8_t  fmt;
	uint8_t  nsect;         /* 1 */
	uint16_t flags;         /* 0 */
	uint64_t stamp;         /* version */
	uint64_t nsectors;      /* the extent's length, header sector included */
	uint64_t reserved;      /* 0 */
	struct ed_cap rc, wc;   /* encrypted on disk; plain in the cache */
	uint8_t  tag[16];
};
_Static_assert(sizeof(struct ed_exthdr) == ED_EXT_HDR_BYTES, "extent header size");

/* ---- exonode block ------------------------------------------------------- */
struct ed_xnblk {
	uint32_t magic;
	uint8_t  fmt;
	uint8_t  nsect;         /* block length, 1..ED_XN_MAX_SECT */
	uint16_t slot_bytes;    /* every slot's length: the exonodes' length */
	uint64_t stamp;
	uint8_t  tag[16];       /* covers the whole block */
};
_Static_assert(sizeof(struct ed_xnblk) == ED_XNBLK_HDR_BYTES, "block header size");

/* Slot states.  DEAD exists only in memory: a deallocated exonode whose
 * block has not been written back yet; it is written as FREE, and its slot
 * cannot be reused until that write is durable. */
#define ED_SLOT_FREE  0
#define ED_SLOT_LIVE  1
#define ED_SLOT_DEAD  2

struct ed_xnhdr {
	uint8_t  state;         /* ED_SLOT_* */
	uint8_t  pad;
	uint16_t used;          /* bytes of the entry area in use */
	uint16_t parent_slot;
	uint16_t pad2;
	uint64_t birth;         /* unique id: a stamp drawn at allocation */
	uint64_t parent;        /* parent exonode's block, 0 for a root exonode */
	struct ed_cap rc, wc;   /* encrypted on disk; plain in the cache */
};
_Static_assert(sizeof(struct ed_xnhdr) == ED_XN_HDR_BYTES, "exonode header size");

/* Entries follow the exonode header, packed, in increasing entry number.
 * Each starts with this 8-byte header. */
struct ed_xnrec {
	uint8_t  type;          /* ED_ENT_* (uapi) */
	uint8_t  flags;         /* 0 */
	uint16_t idx;           /* entry number */
	uint32_t a;             /* EXTENT: sectors; EXONODE: slot; DATA: bytes */
	/* EXTENT:  uint64_t start
	 * EXONODE: uint64_t sector, uint64_t birth
	 * DATA:    the bytes, padded to a multiple of 8 */
};

/* ---- log record ---------------------------------------------------------- */
/* A record is hdr_sect header sectors, then img_sect sectors of images.  One
 * record is one disk write, and it is the commit point of every metadata
 * block it carries. */
#define ED_LOG_MAX_HDR_SECT  8
#define ED_LOG_MAX_IMG       32

#define ED_LOGOP_PUT   1    /* the block's new version is the image that follows */
#define ED_LOGOP_DROP  2    /* the binding is gone (deallocated) */

struct ed_loghdr {
	uint32_t magic;
	uint16_t fmt;
	uint16_t hdr_sect;
	uint32_t nimg;
	uint32_t img_sect;
	uint64_t seq;           /* consecutive */
	uint64_t pos;           /* this record's offset in the log region */
	uint64_t next;          /* pos + length: the next record starts here, or at
	                         * offset 0 if it did not fit before the end */
	uint32_t nalloc;        /* ranges that became allocated */
	uint32_t nfree;         /* ranges that became free */
	uint8_t  prev[16];      /* the previous record's tag: the records form a chain */
	/* struct ed_logimg img[nimg];
	 * format 2 only: struct ed_logext ext;
	 * struct ed_logrange alloc[nalloc], free[nfree];
	 * format 2 only: struct ed_logrange unw[ext.nunw], written[ext.nwritten];
	 * the tag is the last 16 bytes of the header sectors. */
};
_Static_assert(sizeof(struct ed_loghdr) == 64, "log header size");

/* Remanence (docs/exodisk.md section 10, unwritten.c).  `unw` ranges are
 * application sectors allocated and not written yet: a read returns zeros
 * for them until a later record names them `written` (a flush made their
 * data durable).  Replay applies, in a record: allocations, frees, unw,
 * written. */
struct ed_logext {
	uint32_t nunw;
	uint32_t nwritten;
};

struct ed_logimg {
	uint64_t home;          /* where the block lives */
	uint64_t stamp;         /* its new version (PUT) */
	uint8_t  op;            /* ED_LOGOP_* */
	uint8_t  kind;          /* ED_KIND_* */
	uint8_t  nsect;
	uint8_t  pad[5];
};

struct ed_logrange {
	uint64_t start;
	uint64_t count;
};

/* ---- binding tree (a B+tree keyed by sector) --------------------------- */
/* In memory and in the tree's leaves a binding is a record; kind and nsect
 * ride in the top bits of the key word (sectors are below 2^48). */
struct ed_vtrec {
	uint64_t sector;
	uint64_t stamp;
	uint8_t  kind;          /* ED_KIND_* */
	uint8_t  nsect;
	uint8_t  pad[6];
};

#define ED_BT_MAGIC      0x45455254u    /* "TREE" */
#define ED_BT_SECTOR_MASK ((1ull << 48) - 1)

struct ed_bthdr {
	uint32_t magic;
	uint8_t  fmt;           /* ED_TREE_FMT */
	uint8_t  level;         /* 0: a leaf of records; >0: children one level down */
	uint16_t n;             /* records or children */
	uint64_t reserved;
};
struct ed_btrec {            /* leaf record */
	uint64_t key;           /* sector | (nsect << 48) | (kind << 56) */
	uint64_t stamp;
};
struct ed_btent {            /* inner entry: the child holds keys >= key (< the next) */
	uint64_t key;
	struct ed_mptr ptr;
};
#define ED_BT_LEAF_MAX   ((ED_PAGE - sizeof(struct ed_bthdr)) / sizeof(struct ed_btrec))   /* 255 */
#define ED_BT_INNER_MAX  ((ED_PAGE - sizeof(struct ed_bthdr)) / sizeof(struct ed_btent))   /* 127 */
#define ED_BT_MAX_HEIGHT 12

/* ---- free-map tree ------------------------------------------------------- */
/* Leaves are the free map itself, 4096 bytes = 32768 sectors' bits (1 =
 * allocated), with no header; inner pages hold ED_FMT_FANOUT pointers. */
#define ED_FMT_MAGIC     0x50414d46u    /* "FMAP" */
#define ED_FMT_FANOUT    170u
#define ED_FMT_MAX_HEIGHT 8

struct ed_fmhdr {
	uint32_t magic;
	uint8_t  fmt;
	uint8_t  level;         /* 1: children are leaves */
	uint16_t pad;
	uint64_t index;         /* which node of its level */
};
_Static_assert(sizeof(struct ed_fmhdr) + ED_FMT_FANOUT * sizeof(struct ed_mptr) <= 4096,
               "a free-map inner page fits 4 KiB");

/* ---- sealing and checking ------------------------------------------------ */
/* "seal" computes and stores a tag; "check" verifies magic, MAC and shape.
 * Checks return 0 or ED_E_BADMAC / ED_E_STALE / ED_E_CORRUPT / ED_E_FORMAT. */
void ed_super_seal(const struct ed_keys *k, struct ed_super *sb, uint64_t sector);
int  ed_super_check(const struct ed_keys *k, const struct ed_super *sb, uint64_t sector);

/* Tree pages: the tag a page of the given domain (ED_DOM_BTREE, ED_DOM_FMAP)
 * must carry in the pointer to it, at that sector of that disk. */
void ed_mpage_tag(const struct ed_keys *k, int dom, const uint8_t uuid[16], uint64_t sector,
                  const void *page, uint8_t tag[16]);

/* Extent headers: plain (capabilities in the clear) <-> disk. */
void ed_ext_encode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                   const struct ed_exthdr *plain, uint64_t stamp, struct ed_exthdr *disk);
int  ed_ext_decode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                   const struct ed_exthdr *disk, uint64_t want_stamp, struct ed_exthdr *plain);

/* Exonode blocks of nsect sectors: plain <-> disk.  Encoding writes DEAD
 * slots as FREE; decoding checks every slot's shape. */
void ed_xnblk_encode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                     const uint8_t *plain, uint64_t stamp, uint8_t *disk);
int  ed_xnblk_decode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                     const uint8_t *disk, uint32_t nsect, uint64_t want_stamp, uint8_t *plain);

/* Log record headers (hdr points at hdr_sect * 512 contiguous bytes). */
void ed_log_seal(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector, uint8_t *hdr);
int  ed_log_check(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                  const uint8_t *hdr, uint32_t max_hdr_bytes);
/* Where the tag of a record header of hdr_sect sectors lives. */
/* The record's range lists (after ed_log_check): alloc, free, unw, written
 * follow one another from the returned pointer. */
static inline const struct ed_logrange *ed_log_ranges(const uint8_t *hdr, uint32_t *nunw,
                                                      uint32_t *nwritten)
{
	const struct ed_loghdr *h = (const struct ed_loghdr *)hdr;
	const uint8_t *p = hdr + sizeof(*h) + h->nimg * sizeof(struct ed_logimg);
	*nunw = *nwritten = 0;
	if (h->fmt == ED_LOG_FMT_OLD)
		return (const struct ed_logrange *)p;
	const struct ed_logext *x = (const struct ed_logext *)p;
	*nunw = x->nunw;
	*nwritten = x->nwritten;
	return (const struct ed_logrange *)(p + sizeof(*x));
}

static inline uint8_t *ed_log_tag(uint8_t *hdr)
{
	return hdr + ((struct ed_loghdr *)hdr)->hdr_sect * ED_SECTOR - ED_TAG_BYTES;
}

#endif
