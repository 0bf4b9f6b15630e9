/*
 * ufs.h - unixfs inside: the in-memory state of a mount and the functions
 * its files share.  Nothing outside userfs/unixfs/ includes this.
 *
 *   xops.c    exodisk operations with the retries every caller needs
 *             (read a block back in, make room in the exodisk cache), the
 *             set of exonode blocks we changed, write-back, barriers
 *   alloc.c   where things go: inode slots and data runs, from the free map
 *   inode.c   in-memory inodes: load from an exonode, create, free
 *   map.c     a file's extents: find, grow, shrink, and their map nodes
 *   data.c    reading and writing file bytes through the buffer cache
 *   dir.c     directory records: look up, add, remove, list; path walks
 *   sync.c    making things durable in an order that never lets a durable
 *             pointer name something that is not (docs/unixfs.md)
 *   super.c   mkfs, mount, unmount, the lock, finding the superblock
 *   ops.c     the libFS operations table
 *   fsck.c    the consistency checker
 */
#ifndef UFS_H
#define UFS_H

#include <stddef.h>
#include <stdint.h>
#include "libos/libfs.h"
#include "libos/edc.h"
#include "libos/bcache.h"
#include "libos/capkey.h"
#include "userfs/unixfs/ufs_format.h"
#include "userfs/unixfs/unixfs.h"

/* One extent of a file, in logical order. */
struct uext {
	uint64_t lstart;          /* first logical sector it holds               */
	uint64_t sector;
	uint32_t nsect;
	uint16_t node;            /* which exonode lists it (struct unode index) */
	uint16_t idx;             /* its entry number there                      */
};

/* The exonodes of one file: node 0 is the inode itself, 1 the single
 * leaf, 2 the double node, 3 + k the k-th leaf of the double node. */
#define UN_INODE   0
#define UN_SINGLE  1
#define UN_DOUBLE  2
#define UN_LEAF0   3
struct unode {
	uint64_t sector;
	uint16_t slot;
	uint16_t nent;            /* extents (or leaves) it lists  */
	uint8_t  used;
};

struct udirindex;

/* A name of a memory-only file: kept only here, never in directory data. */
struct umemname {
	struct umemname *next;
	uint64_t ino;
	char name[UFS_NAME_MAX + 1];
};

struct uinode {
	uint64_t ino, sector;
	uint16_t slot;
	uint32_t refs;             /* open files and the code working on it      */
	struct ufs_dinode d;       /* current metadata                           */
	struct ufs_dinode dd;      /* what the exonode says now                  */
	int persist;               /* LIBFS_P_*                                  */
	/* Contents.  An immediate file's bytes live in imm (the exonode's copy
	 * is pushed at sync); a memory-only file's in mem; others in extents,
	 * with dirty blocks in the buffer cache. */
	uint8_t imm[UFS_IMM_MAX];
	int imm_dirty;
	uint8_t *mem;
	size_t memcap;
	struct uext *ext;
	uint32_t next, extcap;
	uint64_t mapped;           /* sectors the extents cover                  */
	uint64_t resv;             /* sectors promised to it, not yet allocated   */
	uint64_t ra_next;          /* block a sequential reader would read next  */
	struct unode node[UN_LEAF0 + UFS_INNER_MAX];
	/* State. */
	int loaded;
	int dirty;                 /* on the dirty list                          */
	int isnew;                 /* exonode not yet written back once          */
	int unlinked;              /* has no name: freed at the last close       */
	struct umemname *memnames; /* directories: memory-only entries          */
	struct udirindex *dx;      /* directories: name hash -> record (dir.c)   */
	uint64_t addhint;          /* directories: a chunk that may have room    */
	struct uinode *hnext;      /* inode table chain                          */
	struct uinode *dnext;      /* dirty list                                 */
};

struct ufile;

/* An exonode block we changed and have not written back. */
struct udblk {
	uint64_t sector;
	uint16_t slot;             /* a slot whose write capability we hold      */
	int8_t   depth;            /* write-back order: deeper first             */
};

#define UFS_IHASH 256
#define UFS_MEMBLKS 16       /* 4 memory-only inodes each */

struct ufs {
	struct edc *c;
	int unit;
	struct capkey key;
	uint64_t sb_sector;
	struct ufs_super sb;
	struct edc_fm fm;
	struct bcache bc;
	int locked;
	int readonly;             /* fsck                                        */
	struct uinode *itab[UFS_IHASH];
	struct uinode *dirty;     /* inodes with unsynced changes                */
	struct uinode *root;
	/* Changed exonode blocks. */
	struct udblk *dblk;
	uint32_t ndblk, dblkcap;
	/* Inodes whose names are gone, to free once that is durable. */
	uint64_t *doomed;
	uint32_t ndoomed, doomedcap;
	/* Allocation hints. */
	uint64_t iblk_hint;       /* a block of inodes that may have a free slot */
	uint64_t data_goal;
	uint64_t memblk[UFS_MEMBLKS];   /* blocks of memory-only inodes          */
	uint8_t  memused[UFS_MEMBLKS];  /* inodes in each                        */
	uint32_t nmemblk;
	uint64_t clock;           /* last time handed out (monotonic)            */
	uint64_t resv;            /* sectors promised to delayed allocations     */
	uint64_t free_est;        /* free sectors when last counted              */
	int intent_done[UFS_NINTENT];   /* old name removed: clear at next sync   */
	struct ufile *files;      /* open files (ops.c), for abandon              */
	struct ufs_counters cnt;
	uint32_t ninodes;         /* in the table                                */
	int in_sync;
};

/* ---- xops.c ------------------------------------------------------------- */
struct ed_protector ufs_prot(struct ufs *fs, uint64_t sector, uint16_t slot);
/* Note a changed block (slot names an exonode whose capabilities we have). */
int  ufs_touch(struct ufs *fs, uint64_t sector, uint16_t slot, int depth);
/* Exonode operations with recovery: ED_E_NOTCACHED reads the block in and
 * retries; a full exodisk cache makes us write back and retry.  Results as
 * the client library's (>= 0, or an ED_E_* code). */
int64_t ufs_xn_alloc(struct ufs *fs, uint64_t sector, uint16_t slot, uint32_t length);
int64_t ufs_xn_dealloc(struct ufs *fs, uint64_t sector, uint16_t slot);
/* depth: where the block comes in write-back order (0 inode, 1 map node
 * of the inode, 2 leaf of the double node). */
int64_t ufs_xn_add_extent(struct ufs *fs, uint64_t sector, uint16_t slot, int entry,
                          uint64_t start, uint64_t nsect, int depth);
int64_t ufs_xn_add_child(struct ufs *fs, uint64_t sector, uint16_t slot, int entry,
                         uint64_t csector, int depth);
int64_t ufs_xn_add_data(struct ufs *fs, uint64_t sector, uint16_t slot, int entry,
                        const void *data, uint32_t len);
int64_t ufs_xn_read_data(struct ufs *fs, uint64_t sector, uint16_t slot, int entry, void *buf,
                         uint32_t len);
int64_t ufs_xn_remove(struct ufs *fs, uint64_t sector, uint16_t slot, int entry, int depth);
int64_t ufs_xn_combine(struct ufs *fs, uint64_t sector, uint16_t slot, int first, int second,
                       int depth);
int64_t ufs_xn_split(struct ufs *fs, uint64_t sector, uint16_t slot, int entry, uint64_t off,
                     int newent, int depth);
/* Copy out an exonode's map page (entries and data) into buf (4096 bytes). */
int64_t ufs_xn_snapshot(struct ufs *fs, uint64_t sector, uint16_t slot, void *buf);
/* Data I/O on a file's extent: added to batch b, or started with its own
 * result word.  The immediate result (0 or an exodisk code). */
int32_t ufs_io(struct ufs *fs, struct edc_batch *b, const struct uinode *ip, int write,
               uint64_t sector, void *mem, uint64_t bytes);
int32_t ufs_io_start(struct ufs *fs, const struct uinode *ip, int write, uint64_t sector,
                     void *mem, uint64_t bytes, volatile int32_t *word);
/* Write back every changed block, deepest first; 0 or an error. */
int  ufs_writeback_all(struct ufs *fs);
/* Make every completed write durable. */
int  ufs_barrier(struct ufs *fs);
/* An exodisk code (or a negative errno) as a negative errno. */
int  ufs_err(int64_t r);

/* ---- alloc.c ------------------------------------------------------------ */
/* A free inode slot near `near` (a sector), allocated; its exonode is
 * empty.  0 or a negative errno. */
int  ufs_alloc_inode(struct ufs *fs, uint64_t near, int memory, uint64_t *sector, uint16_t *slot);
/* Up to want sectors (at least min; both rounded up to multiples of unit,
 * where the run also starts) in one run, preferably at goal.  Returns the
 * run's length and its start in *start, or -ENOSPC. */
int64_t ufs_alloc_run(struct ufs *fs, uint64_t goal, uint64_t want, uint64_t min, uint64_t unit,
                      uint64_t *start);
/* Did an allocation fail because another program took the place between
 * our look at the free map and our request (so looking further helps)? */
int  ufs_taken(int64_t r);
/* Promise the sectors a write ending at byte `end` of ip will need when
 * its blocks are allocated (delayed allocation): -ENOSPC now rather than
 * a failed write-back later.  unreserve gives back what ip holds beyond
 * what it needs now. */
int  ufs_reserve(struct ufs *fs, struct uinode *ip, uint64_t end);
void ufs_unreserve(struct ufs *fs, struct uinode *ip);
/* Does [sector, sector + count) hold the lock sector? */
int  ufs_reserved(struct ufs *fs, uint64_t sector, uint64_t count);
/* Is sector a block of memory-only inodes? */
int  ufs_is_memblk(struct ufs *fs, uint64_t sector);
/* A memory-only inode of that block was freed. */
void ufs_memblk_put(struct ufs *fs, uint64_t sector);

/* ---- inode.c -------------------------------------------------------------- */
int  ufs_iget(struct ufs *fs, uint64_t ino, uint32_t gen, struct uinode **ipp);
void ufs_iput(struct ufs *fs, struct uinode *ip);
struct uinode *ufs_ifind(struct ufs *fs, uint64_t ino);
int  ufs_icreate(struct ufs *fs, struct uinode *dir, int type, uint32_t perm, struct uinode **ipp);
void ufs_idirty(struct ufs *fs, struct uinode *ip);
/* Free an inode's exonodes and extents (it has no name and no users). */
int  ufs_ifree(struct ufs *fs, struct uinode *ip);
void ufs_idrop_all(struct ufs *fs);
uint64_t ufs_now(struct ufs *fs);
uint32_t ufs_newgen(struct ufs *fs);

/* ---- map.c ---------------------------------------------------------------- */
/* Parse the inode's exonode tree into ip->ext / ip->node. */
int  ufs_map_load(struct ufs *fs, struct uinode *ip, const void *inode_page);
/* The sector holding logical sector lsec, and how many sectors follow it
 * contiguously (within the extent); 0 if unmapped. */
uint64_t ufs_map_lookup(const struct uinode *ip, uint64_t lsec, uint64_t *run);
/* Give the file extents up to logical sector `upto` (a multiple of
 * UFS_BSECT). */
int  ufs_map_grow(struct ufs *fs, struct uinode *ip, uint64_t upto);
/* Drop extents past logical sector `keep` (a multiple of UFS_BSECT). */
int  ufs_map_shrink(struct ufs *fs, struct uinode *ip, uint64_t keep);

/* ---- data.c --------------------------------------------------------------- */
long ufs_read(struct ufs *fs, struct uinode *ip, void *buf, size_t n, uint64_t off);
long ufs_write(struct ufs *fs, struct uinode *ip, const void *buf, size_t n, uint64_t off);
int  ufs_truncate(struct ufs *fs, struct uinode *ip, uint64_t len);
/* Write the file's dirty data out (allocating as needed; not yet durable:
 * the caller flushes).  Immediate files push their bytes into the exonode. */
int  ufs_flush_data(struct ufs *fs, struct uinode *ip);
/* After the data is durable: bring the exonode's metadata up to date. */
int  ufs_push_meta(struct ufs *fs, struct uinode *ip);
int  ufs_set_persist(struct ufs *fs, struct uinode *ip, int model);

/* ---- dir.c ---------------------------------------------------------------- */
struct udirent {
	uint64_t ino;
	uint32_t gen;
	uint8_t  type;
	uint64_t off;             /* record offset in the directory  */
	char     name[UFS_NAME_MAX + 1];
};
int  ufs_dir_lookup(struct ufs *fs, struct uinode *dir, const char *name, struct udirent *de);
/* Add a name; *off (if not NULL) receives the record's offset. */
int  ufs_dir_add(struct ufs *fs, struct uinode *dir, const char *name, struct uinode *ip,
                 uint64_t *off);
/* The live record at offset off, or -ENOENT. */
int  ufs_dir_at(struct ufs *fs, struct uinode *dir, uint64_t off, struct udirent *de);
int  ufs_dir_remove(struct ufs *fs, struct uinode *dir, const char *name);
int  ufs_dir_next(struct ufs *fs, struct uinode *dir, uint64_t *cookie, struct udirent *de);
int  ufs_dir_empty(struct ufs *fs, struct uinode *dir);
void ufs_dir_forget_index(struct uinode *dir);
/* Walk path (libfs.h form) to its inode; with parent set, to its parent
 * directory and the last component instead. */
int  ufs_namei(struct ufs *fs, const char *path, struct uinode **ipp);
int  ufs_nameiparent(struct ufs *fs, const char *path, struct uinode **dirp, char *name);

/* ---- sync.c --------------------------------------------------------------- */
int  ufs_sync(struct ufs *fs);
/* Write regular files' dirty data out without a full sync (the buffer cache
 * is full): their metadata still waits for the next sync. */
int  ufs_writebehind(struct ufs *fs);
/* Renames in progress (ufs_format.h): take a free slot (syncing to free
 * one if needed; -EBUSY if none), then fill it. */
int  ufs_intent_reserve(struct ufs *fs);
int  ufs_intent_set(struct ufs *fs, int slot, const struct ufs_intent *in);
/* Finish renames a crash interrupted (mount). */
int  ufs_intent_recover(struct ufs *fs);
/* Does a recorded rename explain inode ino having two names (fsck)? */
int  ufs_intent_explains(struct ufs *fs, uint64_t ino);
int  ufs_fsync(struct ufs *fs, struct uinode *ip);
void ufs_doom(struct ufs *fs, struct uinode *ip);
void ufs_doom_ino(struct ufs *fs, uint64_t ino);

#endif
