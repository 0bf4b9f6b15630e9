/*
 * exodisk.h - the exodisk ABI: the one system call through which applications
 * reach the disk, its operations, argument structures and error codes.
 * Shared by the kernel (kernel/sys_exodisk.c, the portable core in
 * kernel/exodisk/) and library operating systems (libos/).
 *
 *   long exodisk_request(int op, struct ed_protector *prot,
 *                        struct ed_buf *reqbp, struct ed_operation *stuff);
 *
 * The design follows R. Grimm's exodisk thesis (chapters 2 and 3, Tables
 * 3.1-3.5): disk sectors are protected either as self-protected extents (the
 * capabilities live in a header in the extent's first sector) or through
 * exonodes (small in-kernel i-nodes listing extents, descendant exonodes and
 * application data).  The kernel decides nothing about layout, caching or
 * persistence; it only checks capabilities and keeps the free map honest.
 * docs/exodisk.md documents every operation, its arguments and outputs; this
 * header is the reference for sizes and numbers.
 *
 * Widened from the 1996 prototype: capabilities are 128 bits, sectors and
 * lengths are 64 bits, user pointers travel as 64-bit integers, and the
 * protector says explicitly which kind of object it names.
 */
#ifndef UAPI_EXODISK_H
#define UAPI_EXODISK_H

#include <stdint.h>

/* ---- operations (thesis Table 3.2, same order) -------------------------- */
#define ED_OP_IO                    0   /* read/write data (asynchronous)            */
#define ED_OP_EXTENT_ALLOCATE       1   /* allocate a self-protected extent          */
#define ED_OP_EXTENT_DEALLOCATE     2
#define ED_OP_EXTENT_GROW           3
#define ED_OP_EXTENT_SHRINK         4
#define ED_OP_EXTENT_READ           5   /* read a header into the cache (async)      */
#define ED_OP_EXTENT_WRITE          6   /* write back a dirty header (async)         */
#define ED_OP_EXONODE_ALLOCATE      7
#define ED_OP_EXONODE_DEALLOCATE    8
#define ED_OP_EXONODE_READ          9   /* read an exonode block into the cache (async) */
#define ED_OP_EXONODE_WRITE        10   /* write back a dirty exonode block (async)  */
#define ED_OP_EXONODE_ADD_EXTENT   11   /* allocate sectors and add an extent entry  */
#define ED_OP_EXONODE_ADD_EXONODE  12   /* allocate a descendant exonode, add entry  */
#define ED_OP_EXONODE_ADD_DATA     13   /* add or replace application-defined data   */
#define ED_OP_EXONODE_READ_DATA    14
#define ED_OP_EXONODE_REMOVE_ENTRY 15
#define ED_OP_EXONODE_COMBINE      16   /* merge two adjacent extent entries         */
#define ED_OP_EXONODE_SPLIT        17   /* split one extent entry in two             */
#define ED_OP_EXONODE_MAP          18   /* map an exonode's entries read-only        */
#define ED_OP_EXONODE_PROXY        19   /* make a proxy exonode                      */
#define ED_OP_EXONODE_CAP_DISCOVER 20   /* capabilities of a descendant exonode      */
#define ED_OP_MARK_REPLACEMENT     21   /* let a cache entry be replaced first       */
#define ED_OP_POLL                 22   /* number of the caller's pending operations (stuff: sleep; two: until that result word is final) */
#define ED_OP_IN_CACHE             23   /* is a header / exonode block cached?       */
#define ED_OP_GET_FREE_MAP         24   /* where the free map is mapped              */
#define ED_OP_SHUTDOWN             25   /* checkpoint the unit and stop it (async)   */
#define ED_OP_FLUSH                26   /* make the unit's completed writes durable (async) */
#define ED_OP_DROP_CACHE           27   /* evict the unit's clean entries nobody else holds */
#define ED_OP_UNIT_INFO            28   /* what a unit holds, what can run out (struct ed_unit_info) */
#define ED_OP_CHECKPOINT           29   /* a checkpoint of the unit that starts after this (async) */
#define ED_OP_EXONODE_REMOVE_RANGE 30   /* remove the extent entries numbered in a range */
#define ED_OP_COUNT                31

/* ---- capabilities ------------------------------------------------------- */
/* Application-chosen, 128 bits.  Compared in constant time; stored encrypted. */
struct ed_cap {
	uint64_t w[2];
};

/* ---- struct ed_protector (thesis Table 3.3) ----------------------------- */
/* What prot names. */
#define ED_PK_EXTENT   0   /* self-protected extent: blkno = its first sector      */
#define ED_PK_EXONODE  1   /* exonode: blkno = first sector of its block, xn_num    */
#define ED_PK_PROXY    2   /* proxy exonode: blkno = the id ED_OP_EXONODE_PROXY gave */

struct ed_protector {
	uint16_t unit;        /* disk unit                                            */
	uint16_t xn_num;      /* exonode slot within its block (ED_PK_EXONODE)         */
	uint8_t  kind;        /* ED_PK_*                                               */
	uint8_t  pad[3];      /* must be zero                                          */
	uint64_t blkno;       /* sector, or proxy id                                   */
	uint64_t length;      /* bytes; allocation only                                */
	int32_t  xn_entry;    /* entry number in the exonode; -1 = none / first free   */
	uint32_t pad2;        /* must be zero                                          */
	struct ed_cap rc;     /* read capability                                       */
	struct ed_cap wc;     /* write capability                                      */
};

/* ---- struct ed_buf (the thesis's struct buf, Table 3.4) ----------------- */
#define ED_B_READ   0x1
#define ED_B_WRITE  0x2
#define ED_B_FUA    0x4   /* with ED_B_WRITE: durable when it completes           */

struct ed_buf {
	uint32_t b_flags;     /* ED_B_READ, ED_B_WRITE or ED_B_WRITE|ED_B_FUA (ED_OP_IO) */
	uint16_t b_dev;       /* disk unit; must equal prot->unit                      */
	uint16_t b_pad;       /* must be zero                                          */
	uint64_t b_blkno;     /* first sector to transfer                              */
	uint64_t b_bcount;    /* bytes: a multiple of 512, at most ED_IO_MAX           */
	uint64_t b_memaddr;   /* buffer in the application's memory                    */
	uint64_t b_resptr;    /* address of an int32_t result word, or 0               */
};

/* The result word: the kernel stores ED_PENDING when an asynchronous
 * operation is queued, then 0 or a negative error code when it completes.
 * For ED_OP_EXTENT_READ/WRITE, ED_OP_EXONODE_READ/WRITE, ED_OP_SHUTDOWN and
 * ED_OP_FLUSH only b_resptr of reqbp is used (reqbp may be NULL: no notification). */
#define ED_PENDING  1

/* ---- struct ed_operation (thesis Table 3.5) ----------------------------- */
struct ed_operation {
	uint64_t buf;         /* application memory: data, or a range list (PROXY)     */
	uint64_t one;         /* first parameter                                       */
	uint64_t two;         /* second parameter                                      */
	uint64_t three;       /* third parameter                                       */
	struct ed_cap rc;     /* capabilities of a descendant exonode / proxy          */
	struct ed_cap wc;
};

/* A sector range, used by ED_OP_EXONODE_PROXY (stuff->buf points to an array). */
struct ed_range {
	uint64_t start;
	uint64_t nsectors;
};

/* ---- sizes and limits --------------------------------------------------- */
#define ED_SECTOR          512u
#define ED_IO_MAX          (1024u * 1024u)  /* most bytes one ED_OP_IO transfers      */
#define ED_EXT_HDR_BYTES   80u    /* bytes of an extent's first sector the header takes:
                                   * they read as zero and writes to them are ignored */
#define ED_XNBLK_HDR_BYTES 32u    /* block header before the first exonode slot      */
#define ED_XN_HDR_BYTES    56u    /* an exonode's own header (caps, links)            */
#define ED_XN_ALIGN        8u     /* exonode lengths and data lengths: multiples of 8 */
#define ED_XN_MAX_SECT     4u     /* an exonode block is 1..4 sectors                 */
#define ED_XN_MAX_BYTES    (ED_XN_MAX_SECT * ED_SECTOR - ED_XNBLK_HDR_BYTES)   /* 2016 */
#define ED_XN_MAX_ENTRIES  256    /* entry numbers are 0 .. 255                       */
#define ED_XN_EXTENT_BYTES 16u    /* space one extent entry takes in an exonode        */
#define ED_XN_CHILD_BYTES  24u    /* space one descendant-exonode entry takes          */
#define ED_XN_DATA_HDR     8u     /* plus the data, for an application-data entry      */
#define ED_PROXY_MAX_RANGES 16    /* ranges one proxy exonode may hold                 */
#define ED_MAX_DEPTH       16     /* ancestor hops checked for descendant access       */

/* ED_OP_EXONODE_PROXY: stuff->two */
#define ED_PROXY_READ   0x1
#define ED_PROXY_WRITE  0x2

/* ED_OP_EXONODE_MAP: stuff->one */
#define ED_MAP_MAP      0   /* map the exonode; returns the user address          */
#define ED_MAP_UNMAP    1   /* remove the mapping at address stuff->two           */

/* ED_OP_IN_CACHE returns a mask of these (0: not cached). */
#define ED_IC_CACHED     0x01
#define ED_IC_DIRTY      0x02   /* modified since it was last written back          */
#define ED_IC_BUSY       0x04   /* being read in or written back                    */
#define ED_IC_HELD       0x08   /* the caller holds it (read it in, allocated it...)*/
#define ED_IC_COMMITTED  0x10   /* a version of it is on disk                       */
#define ED_IC_EXONODE    0x20   /* an exonode block (else an extent header)         */

/* ---- the exonode map page (ED_OP_EXONODE_MAP) --------------------------- */
/* A read-only page showing one exonode: its entries and application data,
 * never its capabilities nor any other exonode's bytes.  The kernel rewrites
 * it on every change; gen is odd while a rewrite is in progress (read it,
 * copy, re-read: accept if even and unchanged). */
#define ED_XNMAP_MAGIC   0x50414d4e58444500ull   /* "\0EDXNMAP" */
#define ED_XNMAP_LIVE      1   /* the exonode is cached; the page follows it      */
#define ED_XNMAP_DETACHED  2   /* the exonode left the cache; the page shows its
                                  last state until it is read in again          */
#define ED_XNMAP_GONE      3   /* the exonode was deallocated                     */

#define ED_ENT_EXTENT   1
#define ED_ENT_EXONODE  2
#define ED_ENT_DATA     3

struct ed_xnmap_ent {
	uint8_t  type;        /* ED_ENT_*                                                */
	uint8_t  pad;
	uint16_t idx;         /* entry number                                            */
	uint32_t len;         /* DATA: bytes of data                                     */
	uint64_t a;           /* EXTENT: first sector; EXONODE: block sector; DATA: offset
	                         of the data from the start of the page                  */
	uint64_t b;           /* EXTENT: sectors; EXONODE: slot                          */
};

struct ed_xnmap_hdr {
	uint64_t magic;       /* ED_XNMAP_MAGIC                                          */
	uint64_t gen;         /* sequence counter, odd while being rewritten             */
	uint64_t sector;      /* the exonode's block                                     */
	uint64_t parent_sector;   /* ancestor's block, or 0 for a root exonode           */
	uint16_t unit;
	uint16_t xn_num;
	uint16_t parent_slot;
	uint16_t state;       /* ED_XNMAP_*                                              */
	uint32_t length;      /* the exonode's length in bytes                           */
	uint16_t nent;        /* entries that follow                                     */
	uint16_t dirty;       /* 1 if modified since last written back                   */
	/* struct ed_xnmap_ent ent[nent] follows; data is placed after the entries. */
};

/* ---- ED_OP_UNIT_INFO ---------------------------------------------------- */
/* Filled in at stuff->buf (stuff->one = its size, at least sizeof); returns
 * the bytes written.  Everything a `df` or a benchmark wants to know about a
 * unit without reading its free map.  Counters ("since mount") start at 0
 * when the unit is mounted. */
struct ed_unit_info {
	uint64_t nsectors;        /* the unit's size in sectors                                */
	uint64_t data_start;      /* first sector applications may allocate                    */
	uint64_t allocated;       /* sectors the exported free map marks allocated (the
	                             exodisk's own region and tree pages included)              */
	uint64_t reserved;        /* free sectors kept for the exodisk's metadata: an
	                             allocation that would dip into them is ED_E_NOSPACE       */
	uint64_t meta_sectors;    /* sectors the exodisk's own region and trees take           */
	uint64_t bindings;        /* bound extent headers and exonode blocks (durable)         */
	uint64_t log_sectors;     /* the commit log's size ...                                 */
	uint64_t log_used;        /* ... and how much of it the next checkpoint frees          */
	uint64_t cache_entries;   /* the exodisk cache (shared by all units) ...               */
	uint64_t cache_free;      /* ... entries holding nothing ...                           */
	uint64_t cache_dirty;     /* ... entries with changes not written back                 */
	uint64_t client_quota;    /* entries one process may hold, and how many the caller ... */
	uint64_t client_held;     /* ... holds                                                  */
	uint64_t kmem_bytes;      /* kernel memory this unit takes now                          */
	uint64_t fm_bytes;        /* the exported free map: its size and address               */
	uint64_t fm_addr;
	uint64_t mount_ticks;     /* time the mount took (timer ticks; kinfo timebase_hz)      */
	uint64_t mount_reads;     /* sectors the mount read                                    */
	uint64_t replayed;        /* log records the mount applied (less `carried`)             */
	uint64_t checkpoints;     /* since mount: checkpoints ...                              */
	uint64_t ckpt_sectors;    /* ... and the sectors they wrote (pages and superblocks)    */
	uint64_t ckpt_last;       /* sectors the last checkpoint wrote                         */
	uint64_t commits;         /* blocks committed through the log ...                      */
	uint64_t records;         /* ... in this many records                                  */
	uint64_t meta_reads;      /* binding-tree pages read since mount (lookups that missed) */
	uint64_t meta_resident;   /* binding-tree pages in memory now                          */
	uint64_t format_sectors;  /* sectors written to format the unit at this boot (0: it was
	                             formatted before)                                          */
	/* A damaged commit-log record found at mount: the changes from it on
	 * were not applied (docs/exodisk.md, "A damaged log").  0 if none. */
	uint64_t lost_seq;        /* the damaged record's number ...                           */
	uint64_t lost_at;         /* ... and sector                                              */
	uint64_t lost_records;    /* records not applied: the damaged one and those after it     */
	uint64_t lost_blocks;     /* exonode blocks and extent headers the valid later ones wrote */
	/* The newest checkpoint did not verify and the mount used the one
	 * before it (docs/exodisk.md, "A damaged checkpoint").  fell 0 if not. */
	uint64_t fell;            /* 1: it fell back                                             */
	uint64_t fell_sb;         /* the superblock not used (sector 0 or 8) ...                 */
	uint64_t fell_at;         /* ... the sector that failed: it, or a tree page it names ...  */
	uint64_t fell_gen;        /* ... its generation (0: the superblock itself does not verify) */
	uint64_t fell_used_gen;   /* the generation mounted instead                              */
	uint64_t fell_lost;       /* log records only the damaged checkpoint still covered, lost
	                             with it (UINT64_MAX: unknown, its superblock is unreadable)  */
	uint64_t fell_io;         /* 1: fell_at could not be read at all (a media error, every try) */
	uint64_t unw_records;     /* since mount: records naming sectors written (a flush cycle's)
	                             or carrying the unwritten set (a checkpoint's)             */
	uint64_t carried;         /* records the mount read that only carry the unwritten set
	                             (a checkpoint's, docs/exodisk.md section 10); `replayed`
	                             counts the others                                          */
	uint64_t unw_zeroed;      /* since mount: sectors checkpoints wrote with zeros, the
	                             unwritten runs their carry records had no room for
	                             (docs/exodisk.md section 10) ...                           */
	uint64_t unw_zero_ckpts;  /* ... and how many checkpoints did                           */
};

/* ---- errors: -128 .. -255 (kernel/uapi/errno.h splits the space) -------- */
#define ED_E_OP          (-128)  /* unknown operation                                      */
#define ED_E_UNIT        (-129)  /* no such unit, or it holds no mounted exodisk           */
#define ED_E_ARG         (-130)  /* malformed argument: missing struct, bad kind or flags,
                                    a reserved field not zero                             */
#define ED_E_ALIGN       (-131)  /* length or offset not a multiple of 512 (sectors) or
                                    of 8 (exonode and data lengths)                       */
#define ED_E_TOOBIG      (-132)  /* absurd length or count: past the disk, over ED_IO_MAX,
                                    over a table's size                                   */
#define ED_E_RANGE       (-133)  /* sectors not covered by the extent, exonode or proxy, or
                                    outside the disk's data area                          */
#define ED_E_CAP         (-134)  /* wrong capability                                       */
#define ED_E_ALLOCATED   (-135)  /* allocation overlaps an allocated sector                */
#define ED_E_NOTCACHED   (-136)  /* the header or exonode (or a needed ancestor) is not in
                                    the exodisk cache: read it first                      */
#define ED_E_BUSY        (-137)  /* the entry is being read in or written back, or a write
                                    of its header sector is in flight                     */
#define ED_E_IOBUSY      (-138)  /* would drop sectors that have I/O in flight             */
#define ED_E_CACHEDIRTY  (-139)  /* no replaceable cache entry: dirty ones exist, write
                                    some back                                             */
#define ED_E_CACHEFULL   (-140)  /* no replaceable cache entry: all are held by other
                                    clients or busy                                       */
#define ED_E_QUOTA       (-141)  /* the caller holds its quota of cache entries            */
#define ED_E_NOTBOUND    (-142)  /* no header or exonode is bound at that sector           */
#define ED_E_KIND        (-143)  /* the sector holds the other kind of object              */
#define ED_E_BADMAC      (-144)  /* on-disk metadata failed its MAC: tampered, moved from
                                    another sector or disk, or damaged                    */
#define ED_E_STALE       (-145)  /* authentic metadata, but an older version: replayed     */
#define ED_E_CORRUPT     (-146)  /* authentic but malformed metadata                       */
#define ED_E_SLOT        (-147)  /* exonode slot out of range, in use, or not live         */
#define ED_E_XNSIZE      (-148)  /* exonode length invalid, or not the block's slot size   */
#define ED_E_ENTRY       (-149)  /* no such entry, entry number out of range or in use     */
#define ED_E_ENTTYPE     (-150)  /* the entry is of the wrong type for the operation       */
#define ED_E_XNFULL      (-151)  /* not enough room left in the exonode                    */
#define ED_E_NOTEMPTY    (-152)  /* the descendant exonode still holds extents or exonodes */
#define ED_E_CLEAN       (-153)  /* write-back of an entry that is not dirty               */
#define ED_E_NOIO        (-154)  /* too many operations in flight                          */
#define ED_E_NOPROXY     (-155)  /* no such proxy, or the proxy table is full              */
#define ED_E_PROXY       (-156)  /* not allowed on a proxy (adding sectors or data)        */
#define ED_E_NOTSUBSET   (-157)  /* proxy ranges not within what the origin covers         */
#define ED_E_NOMEM       (-158)  /* kernel memory exhausted                                */
#define ED_E_NOMAP       (-159)  /* no map window left, or no mapping at that address      */
#define ED_E_NOSPACE     (-160)  /* no room: the free sectors left are what the exodisk
                                    keeps for its own metadata (allocation), or the disk
                                    cannot take the metadata a write-back needs          */
#define ED_E_SHUTDOWN    (-161)  /* the unit's exodisk has been shut down                  */
#define ED_E_DEPTH       (-162)  /* descendant chain deeper than ED_MAX_DEPTH              */
#define ED_E_STALEREF    (-163)  /* the descendant entry names an exonode that is gone     */
#define ED_E_NOCLIENT    (-164)  /* too many processes use the exodisk                     */
#define ED_E_DEALLOC     (-165)  /* the object is deallocated (write it back to finish)    */
#define ED_E_FORMAT      (-166)  /* no valid exodisk on the unit (mount, format)           */
#define ED_E_EXITING     (-167)  /* the operation was dropped: its process exited          */
#define ED_E_VERSION     (-168)  /* the unit holds an exodisk of another format version    */
#define ED_E_LAST        (-168)

#endif /* UAPI_EXODISK_H */
