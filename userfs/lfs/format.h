/*
 * format.h - lfs's on-disk format: every structure the log-structured
 * library file system writes, field by field.  docs/lfs.md is the prose
 * version (with the crash argument); this header is the authority.
 *
 * Where things are.  The file system is the kit's anchor exonode (found
 * from the owner's key, libos/kit/anchor.c) and what hangs off it:
 *
 *   anchor entry 0   the kit's struct kit_anchor
 *   anchor entry 1   struct lfs_super (below)
 *   anchor entry 2   the virtual volume's descriptor (libos/vvol/vvol.h)
 *   anchor entry 3   the volume's map: a tree of exonodes whose leaves'
 *                    extent entries are the segments (vvol's chunks)
 *   anchor entry 4   extent: checkpoint copy A (cp_sect sectors)
 *   anchor entry 5   extent: checkpoint copy B
 *
 * Log addresses are sectors of the virtual volume ("lba"): segment s
 * covers [s * seg_sect, (s + 1) * seg_sect).  A segment has disk sectors
 * only while its chunk is mapped (allocated from the exodisk; released to
 * it when the cleaner has emptied it).  Segment 0 is never used, so 0 is
 * never a log address.
 *
 * The log is a chain of partial segments (PS): a header sector, blocks,
 * and a trailer describing the blocks.  PSs follow each other inside a
 * segment; when fewer than LFS_PS_MIN sectors are left, the log continues
 * at sector 0 of the segment the headers name as next_seg.  Roll-forward
 * follows the chain from a checkpoint's head: a PS belongs to it only if
 * its header's MAC verifies, it names its own position, and its sequence
 * number and `prev` continue the chain.
 *
 * Everything is little-endian (the targets are).  Every structure's size
 * is fixed and checked by _Static_assert below.
 */
#ifndef USERFS_LFS_FORMAT_H
#define USERFS_LFS_FORMAT_H

#include <stdint.h>

#define LFS_VERSION     2                 /* 2: directory and indirect blocks carry sums */
#define LFS_CP_VERSION  4                 /* a checkpoint record's: 3 may carry inode
                                             map entries (nimin), 4 a proof; 2 and 3
                                             are read too                          */
#define LFS_SECT        512u
#define LFS_BSIZE       4096u             /* a data block                      */
#define LFS_BSECT       8u                /* sectors per block                 */
#define LFS_NDIRECT     8                 /* direct pointers in an inode       */
#define LFS_NPTR        511u              /* pointers in an indirect block; its
                                             last word is its seal (below)     */
#define LFS_ISIZE       128u              /* an inode                          */
#define LFS_IPERSECT    4u                /* inodes per sector                 */
#define LFS_PS_MIN      3u                /* header + one sector + trailer     */
#define LFS_ROOT_INO    1u                /* inode 0 is never used             */

/* ---- anchor entry 1: the superblock (never changes after mkfs) --------- */
#define LFS_SB_MAGIC    0x3153464cu       /* "LFS1" */
struct lfs_super {
	uint32_t magic;
	uint32_t version;         /* LFS_VERSION                                   */
	uint64_t fsid;            /* the kit anchor's fsid: in every MAC            */
	uint32_t seg_sect;        /* sectors per segment (= the volume's chunk)    */
	uint32_t cp_sect;         /* sectors per checkpoint copy                    */
	uint64_t nsegs;           /* segments the volume has room for              */
	uint64_t created;         /* ns                                             */
	uint64_t cp_disk[2];      /* disk sectors of the checkpoint copies (anchor
	                             extent entries 4 and 5 hold them)               */
};

/* ---- block pointers and inode locations ---------------------------------- */
/* A block pointer: 0 = a hole; else the block's log address and how many
 * sectors of it were written (1..8: a file's last block is stored only as
 * far as the file goes; the rest reads as zeros). */
#define LFS_PTR(lba, nsect)   (((uint64_t)(lba) << 3) | ((uint64_t)(nsect) - 1))
#define LFS_PTR_LBA(p)        ((p) >> 3)
#define LFS_PTR_NSECT(p)      ((uint32_t)((p) & 7) + 1)
/* An inode's location: 0 = free; else its sector and slot (0..3). */
#define LFS_LOC(lba, slot)    (((uint64_t)(lba) << 2) | (uint64_t)(slot))
#define LFS_LOC_LBA(l)        ((l) >> 2)
#define LFS_LOC_SLOT(l)       ((uint32_t)((l) & 3))

/* ---- inodes: 4 to a sector, written to the log -------------------------- */
struct lfs_dinode {
	uint32_t ino;             /* its own number (0: an empty slot)              */
	uint32_t gen;             /* generation: the imap's when it was written     */
	uint16_t type;            /* LIBFS_T_REG, LIBFS_T_DIR                       */
	uint16_t nlink;
	uint32_t perm;
	uint64_t size;            /* bytes                                          */
	uint64_t mtime, ctime;    /* ns                                             */
	uint64_t direct[LFS_NDIRECT];   /* blocks 0..7                              */
	uint64_t ind;             /* blocks 8..519: an indirect block of pointers   */
	uint64_t dind;            /* then 512 more indirect blocks                  */
	uint32_t flags;           /* 0                                              */
	uint32_t csum;            /* lfs_sum32 of the inode with csum 0             */
};

/* ---- the inode map: ino -> where its newest inode is --------------------- */
struct lfs_imapent {
	uint64_t loc;             /* LFS_LOC, 0: free                               */
	uint32_t gen;             /* bumped when the inode is freed                 */
	uint32_t next_free;       /* free: the next free inode number (0: none)     */
};

/* IMAP and SUT blocks (LFS_BSIZE): a header, then LFS_PER_BLK entries. */
#define LFS_IMAP_MAGIC  0x50414d49u       /* "IMAP" */
#define LFS_SUT_MAGIC   0x20545553u       /* "SUT " */
#define LFS_PER_BLK     255u
struct lfs_blkhdr {
	uint32_t magic;
	uint32_t index;           /* which block of the table                       */
	uint32_t csum;            /* lfs_sum32 of the block with csum 0             */
	uint32_t pad;
};

/* ---- the segment usage table --------------------------------------------- */
struct lfs_sutent {
	uint32_t live;            /* bytes of the segment that are live             */
	uint32_t flags;           /* LFS_SEG_*                                      */
	uint64_t mtime;           /* ns: the newest block written to it             */
};
#define LFS_SEG_MAPPED  0x1       /* its chunk is allocated (has disk sectors)  */

/* ---- a partial segment's header (the first of its sectors) -------------- */
#define LFS_PS_MAGIC    0x5053464cu       /* "LFSP" */
#define LFS_PS_COMMIT   0x1       /* ends a group: roll-forward applies it       */
#define LFS_PS_CKPT     0x2       /* holds a checkpoint's IMAP and SUT blocks    */
struct lfs_pshdr {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;           /* LFS_PS_*                                       */
	uint64_t fsid;
	uint64_t seq;             /* one more than the previous PS's                */
	uint64_t lba;             /* where this header is                           */
	uint64_t prev;            /* the previous PS header's mac                   */
	uint32_t nsect;           /* sectors of the PS, header and trailer included */
	uint32_t nent;            /* block entries in the trailer                   */
	uint32_t ntrail;          /* trailer sectors (the PS's last ones)           */
	uint32_t pad;
	uint64_t next_seg;        /* where the log goes when this segment is full   */
	uint64_t trail_hash;      /* lfs_sum64 of the trailer sectors               */
	uint64_t data_hash;       /* COMMIT: lfs_sum64 of every sector after this   */
	uint64_t time;            /* ns                                             */
	uint64_t nonce;           /* different for every mount                      */
	uint64_t mac;             /* keyed SipHash of the fields above              */
};

/* The trailer: one entry per block, in the order the blocks follow the
 * header (each block right after the one before). */
struct lfs_psent {
	uint32_t ino;             /* DATA, IND: the file; INODE: the first inode    */
	uint32_t gen;             /* DATA, IND: the file's generation               */
	uint32_t lbn;             /* DATA: block number; IND: LFS_IND_*; IMAP, SUT:
	                             the table block; DELTA: 0                       */
	uint8_t  kind;            /* LFS_K_*                                        */
	uint8_t  nsect;           /* sectors of the block                           */
	uint16_t pad;
};
#define LFS_K_DATA      1         /* a file's or directory's block               */
#define LFS_K_IND       2         /* an indirect block                           */
#define LFS_K_INODE     3         /* one sector of inodes                        */
#define LFS_K_IMAP      4         /* a block of the inode map (checkpoint)       */
#define LFS_K_SUT       5         /* a block of the segment usage table (ckpt)   */
#define LFS_K_DELTA     6         /* a commit record                             */
/* Which indirect block: the inode's ind, its dind, or dind's child i. */
#define LFS_IND_SINGLE  0u
#define LFS_IND_DOUBLE  1u
#define LFS_IND_CHILD(i) (2u + (uint32_t)(i))

/* ---- a commit record (LFS_K_DELTA): what changed since the last commit --- */
#define LFS_DELTA_MAGIC 0x41544c44u       /* "DLTA" */
struct lfs_delta {
	uint32_t magic;
	uint32_t nimap;           /* struct lfs_dimap entries follow                */
	uint32_t nsut;            /* then struct lfs_dsut entries                   */
	uint32_t csum;            /* lfs_sum32 of the record (its sectors) with 0   */
	uint32_t max_ino;         /* absolute values after the commit               */
	uint32_t free_head;
	uint64_t nfiles;
	uint64_t part;            /* record number within its commit (0, 1, ...)     */
};
struct lfs_dimap {
	uint32_t ino;
	uint32_t pad;
	struct lfs_imapent e;     /* the entry's new value                          */
};
struct lfs_dsut {
	uint32_t seg;
	uint32_t pad;
	struct lfs_sutent e;      /* the entry's new value                          */
};

/* ---- a checkpoint copy (anchor extent 4 or 5) -------------------------- */
#define LFS_CP_MAGIC    0x5043464cu       /* "LFCP" */
struct lfs_cp {
	uint32_t magic;
	uint16_t version;
	uint16_t copy;            /* 0: A, 1: B                                     */
	uint64_t fsid;
	uint64_t cpseq;           /* the newer of two valid copies wins             */
	uint64_t time;
	uint32_t nbytes;          /* bytes that count: this and the two arrays      */
	uint32_t clean;           /* written by an unmount                          */
	/* where roll-forward starts */
	uint64_t head_lba;        /* the next PS's header                           */
	uint64_t head_seq;
	uint64_t head_prev;
	uint64_t cur_seg;         /* the segment holding head_lba                   */
	uint64_t next_seg;        /* the one after it                               */
	/* the file system */
	uint32_t max_ino;
	uint32_t free_head;
	uint64_t nfiles;
	uint32_t nimap;           /* uint64_t block pointers: IMAP blocks, then     */
	uint32_t nsut;            /* SUT blocks (0: an all-zero block)              */
	/* the cleaner's counters, for its write cost */
	uint64_t st_new;          /* bytes written to the log, cleaner's excluded   */
	uint64_t st_clean_read;   /* bytes the cleaner read                         */
	uint64_t st_clean_moved;  /* live bytes it wrote again                      */
	uint64_t hwm;             /* segments from here on were never used (their
	                             usage entries are zero, nothing points there);
	                             0: not kept (an older record): any may be     */
	uint32_t nimin;           /* struct lfs_dimap entries after the pointers:
	                             inode map entries newer than their blocks'
	                             copies in the log (version 3; 0 before)       */
	uint32_t pad;
	/* Version 4: the PSs the record was flushed with (0: none; the record
	 * followed a flush of everything it names).  From proof_lba the log's
	 * PSs up to head_lba, their written sectors summed in order (lfs_sum64,
	 * seeded with proof_lba), give proof_hash, or the record does not
	 * count (ckpt.c, proof_ok).  Spare and zero before version 4. */
	uint64_t proof_lba;
	uint64_t proof_hash;
	uint64_t mac;             /* keyed SipHash of nbytes with mac 0             */
};

_Static_assert(sizeof(struct lfs_super) == 56, "lfs_super");
_Static_assert(sizeof(struct lfs_dinode) == LFS_ISIZE, "lfs_dinode");
_Static_assert(sizeof(struct lfs_imapent) == 16, "lfs_imapent");
_Static_assert(sizeof(struct lfs_sutent) == 16, "lfs_sutent");
_Static_assert(sizeof(struct lfs_blkhdr) + LFS_PER_BLK * 16 == LFS_BSIZE, "table block");
_Static_assert(sizeof(struct lfs_pshdr) == 104, "lfs_pshdr");
_Static_assert(sizeof(struct lfs_psent) == 16, "lfs_psent");
_Static_assert(sizeof(struct lfs_delta) == 40, "lfs_delta");
_Static_assert(sizeof(struct lfs_dimap) == 24, "lfs_dimap");
_Static_assert(sizeof(struct lfs_dsut) == 24, "lfs_dsut");
_Static_assert(sizeof(struct lfs_cp) == 168, "lfs_cp");

/* ---- a share's map (share.c): not on the log, in memory-only sectors ------ */
/* What a program lent one file reads first, through the share's map proxy:
 * where the file's bytes are now, and through which proxy exonodes.  The
 * owner rewrites it in place (a new generation) whenever the file moves;
 * a reader checks the sum, reads the runs, and reads the header again to
 * see the generation did not change.  Bytes of the file no run covers are
 * zeros (holes, and the tail of a last block). */
#define LFS_SHARE_MAGIC 0x48534c46u       /* "FLSH" */
#define LFS_SHARE_SECT  16u               /* sectors of a share's map       */
struct lfs_sharehdr {
	uint32_t magic;
	uint32_t nrun;            /* struct lfs_sharerun entries, after the proxies */
	uint64_t gen;             /* one more at every publication                   */
	uint64_t size;            /* the file's bytes                                */
	uint32_t nproxy;          /* uint64_t proxy ids follow this header          */
	uint32_t csum;            /* lfs_sum32-compatible sum of the whole map with
	                             csum 0 (shareread.c computes it the same way)  */
};
struct lfs_sharerun {
	uint64_t off;             /* file offset of the run (a multiple of 512)      */
	uint64_t sector;          /* its first disk sector                           */
	uint32_t nsect;
	uint32_t proxy;           /* which of the proxy ids covers it                */
};
_Static_assert(sizeof(struct lfs_sharehdr) == 32, "lfs_sharehdr");
_Static_assert(sizeof(struct lfs_sharerun) == 24, "lfs_sharerun");

/* ---- seals: the sums of directory and indirect blocks --------------------- */
/* An indirect block's last 8 bytes, and a directory block's: a magic and
 * a sum of the block's other bytes seeded with the inode number and the
 * block's number (for an indirect block, which one: LFS_IND_*), so a block
 * that is damaged, or another file's, or another block of this file, is
 * refused.  (Inodes, inode map and usage table blocks, partial segments'
 * summaries and checkpoints carry their own sums.) */
#define LFS_IND_SEAL    0x444e4946u       /* "FIND" */
#define LFS_DIR_SEAL    0x52444946u       /* "FIDR" */
#define LFS_SEAL(magic, sum)  (((uint64_t)(magic) << 32) | (uint32_t)(sum))

/* ---- directories: a file of LFS_BSIZE blocks of records ------------------ */
/* A record never crosses a block's first LFS_DIRSPACE bytes (the last 8
 * are the block's seal).  reclen is a multiple of 8 and covers the space
 * up to the next record (the last one reaches LFS_DIRSPACE); ino 0 marks
 * free space. */
#define LFS_DIRSPACE    (LFS_BSIZE - 8u)
struct lfs_dirent {
	uint32_t ino;
	uint16_t reclen;
	uint8_t  namelen;
	uint8_t  type;            /* LIBFS_T_*                                      */
	/* the name, namelen bytes, not terminated */
};
#define LFS_DIRENT_HDR  8u
_Static_assert(sizeof(struct lfs_dirent) == LFS_DIRENT_HDR, "lfs_dirent");

#endif
