/*
 * ufs_format.h - unixfs on disk, version 4 (version 3 and a file count;
 * 3 is version 2 and holes).  docs/unixfs.md ("On disk")
 * draws the pictures and gives the crash argument; this header is the
 * reference for every number and layout.
 *
 * Everything unixfs stores is an exonode, or sectors an exonode of its own
 * lists as an extent; it never writes a sector the exodisk has not given
 * it.  Capabilities are never stored: both of every exonode's are computed
 * from the owner's secret and where the exonode is (libos/capkey.h).
 *
 *  superblock  the file system's anchor (libos/kit/anchor.c): an exonode,
 *              slot 0 of a one-sector block at the first free one of a
 *              sequence of places derived from the owner's key, whose
 *              entry 0 is the kit's struct kit_anchor (type "unixfs", the
 *              lock sector after it) and entry 1 struct ufs_super: where
 *              the root directory is, the file id counter, renames in
 *              progress, the number of files (version 4).  A mount
 *              tries the places in order (or is told: sb=SECTOR); the
 *              mount lock is an exonode at the lock sector, never written
 *              back (libos/kit/lock.c).
 *  dnode       a directory: an exonode of UFS_XN_BYTES (two to a 2-sector
 *              block, with fnodes).  Entry 0 is struct ufs_xmeta (its id,
 *              attributes, and where its head block is, with the head's
 *              checksum); entries UFS_E_EXT.. list the directory's extents,
 *              its "space".
 *  dspace      a directory's space holds its directory blocks (a head
 *              block, table blocks and record blocks, 4 KiB each) and the
 *              bytes of its small files, packed sector by sector.  A reader
 *              takes the whole space in one request when it is small.
 *  record      one name in a record block: struct ufs_drec, an embedded
 *              inode - type, id, size, times, and where the bytes are:
 *              nowhere (empty), in the directory's space (small files, up
 *              to UFS_SMALL_MAX bytes), or in an exonode of its own (a
 *              directory's dnode, or a large file's fnode).
 *  fnode       a large file: an exonode of UFS_XN_BYTES whose extents, in
 *              entry order and then through map nodes, hold the file's
 *              bytes (its size and attributes are in its record); ranges
 *              no extent holds are holes (version 3: position tables).
 *  map node    a descendant exonode of UFS_MAP_BYTES (one per 4-sector
 *              block) listing more extents of an fnode: a leaf lists
 *              extents, the double node lists leaves.
 *
 * Directory blocks are copy-on-write: a commit writes every changed block
 * of a directory to free sectors of its space, then makes the new head the
 * directory's by replacing its dnode's entry 0 (the exodisk commits that
 * atomically).  Each block carries a CRC-32C, and so does the pointer to
 * it, so a damaged, misplaced or stale block is never taken for the right
 * one.
 */
#ifndef UFS_FORMAT_H
#define UFS_FORMAT_H

#include <stdint.h>

#define UFS_VERSION        2                        /* dnodes' and fnodes' layout */
/* The file system's version, in its superblock: 3 lets large files have
 * holes (position tables, below); a version 2 file system has none, mounts
 * as it is, and becomes version 3 when its first hole is made.  4 keeps
 * the number of files in the superblock (struct ufs_super's files); a
 * version 2 or 3 file system has none there, mounts as it is, and is
 * counted afresh (a walk of the tree) the first time a mount is asked.  5
 * keeps in each dnode the number of records its blocks hold (struct
 * ufs_xmeta's nrec), so the superblock can name a directory whose count
 * is its dnode's (pend_kind UFS_PEND_DNODE): that directory's commits
 * then change the count with no write of the superblock.  A version 4
 * file system mounts as it is and stays 4 (nrec zero, pending changes
 * only as deltas); builds before 5 refuse a version 5 one. */
#define UFS_SB_VERSION     5
#define UFS_SB_VERSION_MIN 2
#define UFS_SB_HOLES       3                        /* the first with holes      */
#define UFS_SB_FILES       4                        /* the first with the count  */
#define UFS_SB_NREC        5                        /* the first with dnodes' nrec */
#define UFS_SUPER_MAGIC    0x32534658494e55ull      /* "UNIXFS2" little-endian */
#define UFS_XMETA_MAGIC    0x58534655u              /* "UFSX" */
#define UFS_DBLK_MAGIC     0x42534655u              /* "UFSB" */

#define UFS_BSIZE          4096u                    /* allocation unit          */
#define UFS_BSECT          8u                       /* sectors in one           */
#define UFS_SECT           512u

/* Exonode sizes. */
#define UFS_SB_BYTES       352u                     /* the anchor exonode       */
#define UFS_E_SUPER        1                        /* its entry for ufs_super  */
/* The exodisk sizes an exonode block for one exonode of the block's length
 * (header 32 bytes + length, rounded up to sectors) and fits as many as
 * that holds: 496 bytes is the longest that gives two to a block. */
#define UFS_XN_BYTES       496u                     /* dnodes and fnodes, 2 per 2-sector block */
#define UFS_XBLK_SECT      2u
#define UFS_XPB            2u
#define UFS_MAP_BYTES      2016u                    /* 1 per 4-sector block     */
#define UFS_MAP_SECT       4u

/* A reference to a dnode or fnode: its block's sector * 8 + its slot. */
static inline uint64_t ufs_xref(uint64_t sector, uint32_t slot) { return sector * 8 + slot; }
static inline uint64_t ufs_xref_sector(uint64_t x) { return x / 8; }
static inline uint32_t ufs_xref_slot(uint64_t x) { return (uint32_t)(x % 8); }

/* ---- the superblock ------------------------------------------------------ */

/* A rename from one directory to another in progress: the new name is made
 * durable first, then the old one is removed, so a crash can leave both.
 * The record lets the next mount remove the old one (the record in sdir
 * naming file id; there is one file with each id).  id 0: an empty slot. */
#define UFS_NINTENT        4

struct ufs_intent {
	uint64_t id;
	uint64_t sdir;            /* the old name's directory (xref of its dnode) */
	uint64_t ddir;            /* the new name's                                */
};
_Static_assert(sizeof(struct ufs_intent) == 24, "rename record size");

struct ufs_super {
	uint64_t magic;           /* UFS_SUPER_MAGIC                                 */
	uint32_t version;         /* UFS_SB_VERSION (or UFS_SB_VERSION_MIN)          */
	uint32_t bsize;           /* UFS_BSIZE                                       */
	uint64_t root;            /* the root directory's dnode (xref)               */
	uint64_t root_id;         /* and its id                                      */
	uint64_t next_id;         /* no file has an id at or above this              */
	uint64_t files;           /* version 4: the file count (below); before: zero */
	char     label[32];
	struct ufs_intent intent[UFS_NINTENT];
	/* Version 4 on (the entry of versions 2 and 3 ends here).  files:
	 * the files and directories the durable tree holds, the root included
	 * (its records + 1), once what pend_dir says is added:
	 *  - pend_dir 0: nothing pending;
	 *  - pend_kind UFS_PEND_DELTA: the commit of one directory that changes
	 *    the count: if the dnode at pend_dir has a commit number (struct
	 *    ufs_xmeta seq) of at least pend_seq, that commit is durable and
	 *    pend_delta is to be added;
	 *  - pend_kind UFS_PEND_DNODE (version 5): files counts all but the
	 *    records of the directory whose dnode is at pend_dir; that dnode's
	 *    nrec is to be added (pend_seq and pend_delta zero).
	 * files 0: not known (a commit of several directories that changes it
	 * was under way, or the count was never made): count the tree. */
	uint64_t pend_dir;
	uint64_t pend_seq;
	int32_t  pend_delta;
	uint32_t pend_kind;       /* UFS_PEND_*; version 4: zero                      */
};
#define UFS_PEND_DELTA 0u
#define UFS_PEND_DNODE 1u
#define UFS_SUPER_V3_BYTES 176u                     /* the entry before version 4 */
_Static_assert(sizeof(struct ufs_super) == 104 + UFS_NINTENT * 24 &&
               UFS_SUPER_V3_BYTES == 80 + UFS_NINTENT * 24, "superblock size");
/* The anchor exonode holds the kit's record (80 bytes) and this, each with
 * an 8-byte entry header, after the 56-byte exonode header. */
_Static_assert(56 + 8 + 80 + 8 + sizeof(struct ufs_super) <= UFS_SB_BYTES, "superblock fits its exonode");

/* ---- dnodes and fnodes ----------------------------------------------------- */

#define UFS_K_DIR          1
#define UFS_K_FILE         2

/* Entry 0 of a dnode or fnode.  The id must be the one the record naming
 * it carries: a stale record then never opens another object. */
struct ufs_xmeta {
	uint32_t magic;           /* UFS_XMETA_MAGIC                                 */
	uint8_t  kind;            /* UFS_K_*                                         */
	uint8_t  version;         /* UFS_VERSION                                     */
	uint16_t flags;           /* zero                                            */
	uint32_t perm;            /* dnode: the directory's permissions              */
	uint32_t nblocks;         /* dnode: directory blocks in the tree (head included) */
	uint64_t id;
	uint64_t mtime, ctime;    /* dnode                                           */
	uint64_t head;            /* dnode: sector of the head block; 0: no names    */
	uint32_t head_csum;       /* dnode: the head block's CRC-32C                 */
	uint32_t nrec;            /* dnode, version 5: records in its blocks; else 0 */
	uint64_t seq;             /* dnode: commits so far; the head carries the same */
};
_Static_assert(sizeof(struct ufs_xmeta) == 64, "node metadata size");

#define UFS_E_META         0
#define UFS_E_EXT          2                        /* first extent entry       */
/* dnode: the directory's extents are entries 2 .. 2+UFS_DNODE_EXT-1, in any
 * order (records point at disk sectors, not at offsets in the space). */
#define UFS_DNODE_EXT      23
/* fnode: direct extents 2..20 in file order, then map nodes. */
#define UFS_NDIRECT        19
#define UFS_E_SINGLE       250
#define UFS_E_DOUBLE       251
#define UFS_LEAF_MAX       121                      /* extents in a leaf        */
#define UFS_INNER_MAX      81                       /* leaves in the double node*/
/* Each list of extents keeps room for one entry more than it fills:
 * cutting an extent in two (truncate, trimming a space) needs it. */
#define UFS_MAX_EXTENTS    (UFS_NDIRECT + UFS_LEAF_MAX + UFS_INNER_MAX * UFS_LEAF_MAX)

/* Holes (version 3).  A large file's lists, taken in order (the fnode's,
 * the single leaf's, each leaf of the double node's; within a list by
 * entry number, which may skip numbers), give its extents; each extent
 * starts in the file where the one before it in that order ends (the
 * first at 0) - unless its list's position table says where it starts.
 * The table is a data entry of the list's exonode (UFS_E_POS_FNODE in the
 * fnode, UFS_E_POS_LEAF in a leaf), an array of 64-bit positions
 *     logical block (4 KiB) << 8 | extent entry number
 * in entry-number order, at most one per extent.  Logical ranges between
 * extents (and past the last one, below the size) are holes: they read as
 * zero and take no space.  Extents must not overlap in the file.  A table
 * line naming no extent means nothing (the change that removed an extent
 * can become durable before the one that drops its line).  Table bytes
 * count against the list's room: UFS_LIST_BYTES for the extent entries
 * (16 bytes each) and the table (8 bytes of header and 8 a line), with
 * 16 bytes always kept free (cutting an extent in two needs them). */
#define UFS_E_POS_FNODE    252
#define UFS_E_POS_LEAF     255
#define UFS_E_LAST_FNODE   249                      /* highest extent entry, fnode */
#define UFS_E_LAST_LEAF    254                      /* and in a leaf              */
#define UFS_POS_BYTES      8u
#define UFS_FNODE_LIST_BYTES ((UFS_NDIRECT + 1) * 16u)
#define UFS_LEAF_LIST_BYTES  ((UFS_LEAF_MAX + 1) * 16u)
static inline uint64_t ufs_pos(uint64_t lblk, uint32_t entry) { return lblk << 8 | entry; }
static inline uint64_t ufs_pos_lblk(uint64_t p) { return p >> 8; }
static inline uint32_t ufs_pos_entry(uint64_t p) { return (uint32_t)(p & 0xff); }

_Static_assert(56 + 8 + 64 + UFS_DNODE_EXT * 16 <= UFS_XN_BYTES, "dnode fits");
_Static_assert((32 + UFS_XN_BYTES + 511) / 512 == UFS_XBLK_SECT &&
               (UFS_XBLK_SECT * 512 - 32) / UFS_XN_BYTES == UFS_XPB, "node block geometry");
_Static_assert(56 + 8 + 64 + (UFS_NDIRECT + 1) * 16 + 2 * 24 <= UFS_XN_BYTES, "fnode fits");

/* ---- directory blocks --------------------------------------------------------- */

#define UFS_DB_HEAD        1
#define UFS_DB_TABLE       2
#define UFS_DB_RECORDS     3

/* A pointer to a directory block. */
struct ufs_dptr {
	uint64_t sector;          /* first of its 8 sectors                          */
	uint32_t csum;            /* its CRC-32C                                     */
	uint8_t  kind;            /* UFS_DB_TABLE or UFS_DB_RECORDS                  */
	uint8_t  pad[3];          /* zero                                            */
};
_Static_assert(sizeof(struct ufs_dptr) == 16, "directory pointer size");

/* The first 32 bytes of every directory block.  csum is the CRC-32C of the
 * whole block computed with csum itself zero. */
struct ufs_dblk {
	uint32_t magic;           /* UFS_DBLK_MAGIC                                  */
	uint32_t csum;
	uint64_t dir_id;          /* the directory's id                              */
	uint64_t seq;             /* the commit that wrote it                        */
	uint8_t  kind;            /* UFS_DB_*                                        */
	uint8_t  pad;
	uint16_t nptr;            /* pointers after the header                       */
	uint16_t rec_off;         /* where records start (0: none)                   */
	uint16_t rec_len;         /* bytes of records there                          */
};
_Static_assert(sizeof(struct ufs_dblk) == 32, "directory block header size");

/* head:    header, up to UFS_HEAD_PTRS pointers (all to record blocks, or
 *          all to table blocks), records in [UFS_HEAD_REC, 4096).
 * table:   header, up to UFS_TABLE_PTRS pointers to record blocks.
 * records: header, records in [32, 4096). */
#define UFS_HEAD_REC       2048u
#define UFS_HEAD_PTRS      ((UFS_HEAD_REC - 32u) / 16u)             /* 126 */
#define UFS_TABLE_PTRS     ((UFS_BSIZE - 32u) / 16u)                /* 254 */
#define UFS_REC_SPACE      (UFS_BSIZE - 32u)

/* One name: an embedded inode.  Records are packed one after another
 * (reclen, a multiple of 8, is the record's whole size). */
#define UFS_T_REG          1
#define UFS_T_DIR          2

#define UFS_W_NONE         0        /* an empty file: no bytes anywhere         */
#define UFS_W_SMALL        1        /* bytes in sectors [loc, loc + ceil(size/512)) of
                                       the directory's space; the rest of the
                                       last sector is zero                       */
#define UFS_W_NODE         2        /* loc is the xref of the dnode or fnode     */

#define UFS_SMALL_MAX      (32u * 1024)             /* largest small file       */
#define UFS_NAME_MAX       240u

struct ufs_drec {
	uint16_t reclen;
	uint8_t  namelen;         /* 1..UFS_NAME_MAX; no '/' or NUL, not . or ..     */
	uint8_t  type;            /* UFS_T_*                                         */
	uint8_t  where;           /* UFS_W_* (directories: always NODE)              */
	uint8_t  persist;         /* LIBFS_P_WRITEBACK or LIBFS_P_WRITETHROUGH       */
	uint16_t flags;           /* zero                                            */
	uint32_t perm;            /* files (a directory's are in its dnode)          */
	uint32_t reserved;        /* zero                                            */
	uint64_t id;              /* unique in the file system, never reused         */
	uint64_t size;            /* files: bytes                                    */
	uint64_t mtime, ctime;    /* files                                           */
	uint64_t loc;             /* see UFS_W_*                                     */
	/* char name[namelen], not NUL-terminated, then zeros to reclen */
};
_Static_assert(sizeof(struct ufs_drec) == 56, "record header size");

static inline uint32_t ufs_reclen(uint32_t namelen)
{
	return (uint32_t)((sizeof(struct ufs_drec) + namelen + 7) & ~7u);
}
_Static_assert(56 + 248 <= UFS_HEAD_REC, "a longest record fits a head");

#endif
