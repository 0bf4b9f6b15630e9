/*
 * ufs_format.h - unixfs on disk.  docs/unixfs.md draws the pictures; this
 * header is the reference for numbers and layouts.
 *
 * unixfs is thesis section 4.1's Unix file system on exonodes.  Everything
 * it stores is an exonode or a sector run an exonode lists; it never writes
 * a sector the exodisk has not given it.
 *
 *  superblock  an exonode (slot 0 of a one-sector block) whose data entry 0
 *              is struct ufs_super.  mkfs puts it at the first free sector
 *              of the disk, so a mount finds it by looking, in order, at the
 *              allocated sectors for the first exonode that opens with the
 *              owner's capabilities; or the mount names it (sb=SECTOR).
 *  inode       an exonode of UFS_INODE_BYTES, four to a 4-sector block.
 *              Entry 0 is the metadata (struct ufs_dinode); entry 1, for an
 *              immediate file, holds the file's bytes; otherwise entries
 *              2.. are direct extents, entry 250 a single-indirect map node
 *              and entry 251 a double-indirect one.  Inode number =
 *              block sector * 8 + slot.
 *  map node    a descendant exonode of UFS_MAP_BYTES (one per 4-sector
 *              block).  A leaf lists extents (entries 0..121); the double
 *              node lists leaves (entries 0..80).
 *  file data   extents of whole 4 KiB blocks.  Byte i of a file lives in
 *              the extents taken in order: direct entries by number, then
 *              the single node's, then each leaf of the double node's.
 *              Bytes at or past `size` mean nothing; bytes below `size`
 *              past the last extent read as zero.
 *  directory   a file of 256-byte chunks of records (struct ufs_dirent);
 *              records tile each chunk exactly, free ones have ino 0.
 *  lock        mounts allocate (and never write back) an exonode at
 *              lock_sector: a second mount finds it taken and waits.
 *  renames     the superblock also records renames in progress
 *              (struct ufs_intent), which a mount after a crash finishes.
 *
 * Capabilities are never stored: both of every exonode's capabilities are
 * computed from the owner's secret and where the exonode is (libos/capkey.h).
 */
#ifndef UFS_FORMAT_H
#define UFS_FORMAT_H

#include <stdint.h>

#define UFS_VERSION        1
#define UFS_SUPER_MAGIC    0x31534658494e55ull      /* "UNIXFS1" little-endian */
#define UFS_DINODE_MAGIC   0x49534655u              /* "UFSI" */

#define UFS_BSIZE          4096u                    /* allocation unit          */
#define UFS_BSECT          8u                       /* sectors in one           */

#define UFS_SB_BYTES       352u                     /* superblock exonode       */
#define UFS_LOCK_BYTES     64u                      /* lock exonode             */
#define UFS_INODE_BYTES    504u                     /* 4 per 4-sector block     */
#define UFS_IBLK_SECT      4u
#define UFS_IPB            4u
#define UFS_MAP_BYTES      2016u                    /* 1 per 4-sector block     */
#define UFS_MAP_SECT       4u

/* Entries of an inode exonode. */
#define UFS_E_META         0
#define UFS_E_IMM          1
#define UFS_E_DIRECT       2
#define UFS_NDIRECT        19                       /* entries 2 .. 20          */
#define UFS_E_SINGLE       250
#define UFS_E_DOUBLE       251
/* Map nodes. */
#define UFS_LEAF_MAX       121                      /* extents in a leaf        */
#define UFS_INNER_MAX      81                       /* leaves in the double node*/
/* Each list of extents (the inode's, a leaf's) keeps room for one entry
 * more than it fills: cutting an extent in two (truncate) needs it. */
#define UFS_MAX_EXTENTS    (UFS_NDIRECT + UFS_LEAF_MAX + UFS_INNER_MAX * UFS_LEAF_MAX)

/* The most an immediate file holds: the inode's entry area less the
 * metadata entry, the immediate entry's own header, and room for one
 * extent entry (a file that outgrows the exonode first gets one block,
 * written, before its bytes leave the exonode: sync.c). */
#define UFS_IMM_MAX        (UFS_INODE_BYTES - 56u - (8u + 64u) - 8u - 16u)   /* 352 */

#define UFS_T_REG          1
#define UFS_T_DIR          2

#define UFS_DF_IMMEDIATE   0x1                      /* data in entry 1          */

/* A rename in progress: the new name (ddir, doff) is written and made
 * durable before the old one (sdir, soff) is removed, so a crash can leave
 * both.  The superblock records the rename first; a mount that finds the
 * record and both names removes the old one (super.c). */
#define UFS_NINTENT        4

struct ufs_intent {
	uint64_t ino;             /* 0: an empty slot                                */
	uint32_t gen;
	uint32_t pad;
	uint64_t sdir, soff;      /* old name: directory inode, record offset        */
	uint64_t ddir, doff;      /* new name                                        */
};
_Static_assert(sizeof(struct ufs_intent) == 48, "rename record size");

struct ufs_super {
	uint64_t magic;
	uint32_t version;
	uint32_t inode_bytes;     /* UFS_INODE_BYTES                                */
	uint64_t fsid;            /* chosen at mkfs                                  */
	uint64_t root;            /* the root directory's inode number               */
	uint32_t root_gen;
	uint32_t bsize;           /* UFS_BSIZE                                       */
	uint64_t lock_sector;
	uint64_t created;         /* ns, from the clock of whoever ran mkfs          */
	uint64_t reserved;        /* zero                                            */
	char     label[32];
	struct ufs_intent intent[UFS_NINTENT];
};
_Static_assert(sizeof(struct ufs_super) == 96 + 4 * 48, "superblock size");
_Static_assert(56 + 8 + sizeof(struct ufs_super) <= UFS_SB_BYTES, "superblock fits its exonode");

struct ufs_dinode {
	uint32_t magic;           /* UFS_DINODE_MAGIC                                */
	uint8_t  type;            /* UFS_T_*                                         */
	uint8_t  persist;         /* LIBFS_P_WRITEBACK or LIBFS_P_WRITETHROUGH       */
	uint16_t flags;           /* UFS_DF_*                                        */
	uint32_t gen;             /* must match the directory entry naming it        */
	uint32_t perm;
	uint64_t size;            /* bytes; only ever says what is on disk           */
	uint64_t mtime, ctime;
	uint64_t parent;          /* directories: parent's inode number (root: its own) */
	uint32_t nlink;
	uint32_t pad;
	uint64_t reserved;
};
_Static_assert(sizeof(struct ufs_dinode) == 64, "inode metadata size");

#define UFS_DIRCHUNK       256u
#define UFS_DIRENT_HDR     16u
#define UFS_NAME_MAX       240u                     /* a record fits a chunk    */

struct ufs_dirent {
	uint64_t ino;             /* 0: a free record                                */
	uint32_t gen;
	uint16_t reclen;          /* bytes to the next record, a multiple of 8       */
	uint8_t  namelen;
	uint8_t  type;            /* UFS_T_*                                         */
	/* char name[namelen], not NUL-terminated, then padding */
};
_Static_assert(sizeof(struct ufs_dirent) == UFS_DIRENT_HDR, "directory record header");

static inline uint64_t ufs_ino(uint64_t sector, uint32_t slot) { return sector * 8 + slot; }
static inline uint64_t ufs_ino_sector(uint64_t ino) { return ino / 8; }
static inline uint32_t ufs_ino_slot(uint64_t ino) { return (uint32_t)(ino % 8); }

#endif
