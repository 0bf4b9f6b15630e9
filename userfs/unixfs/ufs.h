/*
 * ufs.h - unixfs inside: the in-memory state of a mount and the functions
 * its files share.  Nothing outside userfs/unixfs/ includes this.
 *
 *   csum.c    CRC-32C, the checksum of directory blocks
 *   xops.c    exodisk calls with the retries every caller needs (read a
 *             block back in, make room in the exodisk cache), the set of
 *             exonode blocks we changed and their write-back, barriers,
 *             and batched I/O (struct uio: many requests in flight,
 *             neighbouring writes gathered into one)
 *   alloc.c   where things go: exonode slots, runs of the free map, and
 *             the sectors promised to writes not yet placed
 *   dspace.c  a directory's space: its extents, which sectors are in use,
 *             growing, trimming, reading blocks of it through the cache
 *   dir.c     directories: loading one (its blocks, checked), names and
 *             records, and preparing a commit (copy-on-write blocks)
 *   ahead.c   directory read-ahead: siblings' dnodes and groups together
 *   inode.c   in-memory objects (struct uinode) for files and directories:
 *             the table, creating, loading fnodes, freeing
 *   map.c     a large file's extents: find, grow, shrink, map nodes
 *   data.c    file bytes: small files in memory and in the space, large
 *             files through the buffer cache
 *   sync.c    making things durable in an order that never lets a durable
 *             pointer name something that is not (docs/unixfs.md)
 *   super.c   mkfs, mount, unmount, the lock, finding the superblock
 *   ops.c     the libFS operations table
 *   share.c   many processes on one unixfs: the lock around operations,
 *             publishing before letting go, catching up after others
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
#include "libos/kit/kit.h"
#include "libos/share.h"
#include "userfs/unixfs/ufs_format.h"
#include "userfs/unixfs/unixfs.h"

struct ufs;
struct udir;
struct uinode;

/* An exonode of ours, with its protector computed once. */
struct uxn {
	uint64_t sector;
	uint16_t slot;
	uint8_t  have;            /* p is computed                               */
	struct ed_protector p;
};

/* ---- large files ---------------------------------------------------------- */

/* One extent of a large file, in logical order. */
struct uext {
	uint64_t lstart;          /* first logical sector it holds               */
	uint64_t sector;
	uint32_t nsect;
	uint8_t  node;            /* which exonode lists it (struct ubig.node)   */
	uint8_t  pos;             /* its list's position table names it          */
	uint16_t idx;             /* its entry number there                      */
};

/* The exonodes of one large file: node 0 is the fnode, 1 the single leaf,
 * 2 the double node, 3 + k the k-th leaf of the double node. */
#define UN_INODE   0
#define UN_SINGLE  1
#define UN_DOUBLE  2
#define UN_LEAF0   3
#define UN_MAX     (UN_LEAF0 + UFS_INNER_MAX)
struct unode {
	struct uxn x;
	uint16_t nent;            /* extents (or leaves) it lists  */
	uint8_t  used;
};

/* One list's extents by entry number, kept beside the array so that no
 * question about a list (is an entry free, what is its table, which
 * extent is last in list order) looks at every extent of the file. */
struct ulist {
	uint64_t has[4];          /* entry numbers holding an extent             */
	uint64_t pos[4];          /* ... of them, those with a table line        */
	uint64_t *line;           /* its table in entry order, npos[] long:
	                             logical block << 8 | entry (ufs_pos)        */
	uint16_t linecap;
};

struct ubig {
	struct uext *ext;
	uint32_t next, extcap;
	uint64_t mapped;          /* where the last extent ends (logical sector) */
	uint64_t held;            /* sectors the extents hold (less: holes)      */
	uint32_t stale_pos;       /* position lines naming no extent (fsck)     */
	uint64_t zero_from;       /* logical blocks from here were cut off by a
	                             truncate not yet committed: they read as zero
	                             unless written again (UINT64_MAX: none)      */
	uint64_t ra_next;         /* block a sequential reader would read next   */
	struct unode node[UN_MAX];
	uint16_t top[UN_MAX];     /* a list's highest extent entry + 1 (0: none) */
	uint16_t npos[UN_MAX];    /* lines in a list's position table            */
	struct ulist *list[UN_MAX]; /* NULL: a list never used (map.c)       */
	uint32_t hint;            /* the extent ufs_map_lookup found last        */
};

/* ---- directories ------------------------------------------------------------ */

/* One name: the record (an embedded inode) as it is now, and as the last
 * commit of its directory left it. */
struct uent {
	struct uent *hnext;       /* the directory's name hash chain             */
	struct uent *bprev, *bnext;   /* entries of the same record block        */
	struct udir *dir;         /* NULL once removed                           */
	struct uinode *ip;        /* the object, if one is in memory             */
	uint32_t pos;             /* readdir position                            */
	uint32_t hash;
	int32_t  blk;             /* record block it is in (-1: none)            */
	uint8_t  memonly;         /* LIBFS_P_MEMORY: never written               */
	uint8_t  committed;       /* dr is what the durable directory says       */
	uint8_t  moved;           /* removed as a rename's old name: 1 within the
	                             directory (the new name has its bytes too),
	                             2 from another (only what a node holds moved) */
	uint8_t  failed;          /* its data could not be written this sync: the
	                             errno (close reports it)                    */
	uint8_t  ongone;          /* on its directory's gone list                */
	struct ufs_drec r;        /* now (reclen, namelen: of this name)         */
	struct ufs_drec dr;       /* as committed                                */
	struct uent *gnext;       /* the gone list (removed, awaiting commit)    */
	char name[];              /* NUL-terminated                              */
};

/* A record block (index 0: the head's record area). */
struct ublk {
	uint64_t sector;          /* its committed copy (0: none)                */
	uint32_t csum;
	uint32_t used;            /* record bytes of the entries in it now       */
	uint8_t  dirty;
	struct uent *first;
	/* while a commit is prepared */
	uint64_t nsector;         /* the new copy                                */
	uint32_t ncsum;
};

/* A range of sectors. */
struct urange {
	uint64_t start, n;
};

/* One extent of a directory's space. */
struct dsext {
	uint64_t sector;
	uint32_t nsect;
	uint16_t idx;             /* its entry in the dnode                      */
	uint8_t  fresh;           /* grown this mount with room to spare: trimmed
	                             at the next commit                           */
	uint8_t *used;            /* one bit per sector                          */
	uint32_t nused;
	uint8_t *g;               /* its bytes in the directory's group, or NULL */
	uint32_t gn;              /* sectors of it there                         */
};

struct udspace {
	struct dsext *ext;
	uint32_t next, extcap;
	uint64_t total, nused;    /* sectors                                     */
	uint64_t hint;            /* where the last allocation ended             */
	struct urange *later;     /* freed once the next commit is durable       */
	uint32_t nlater, latercap;
	struct urange *tmp;       /* allocated for a commit being prepared       */
	uint32_t ntmp, tmpcap;
	/* The group: the whole space as read at load, kept in memory while
	 * the directory is (and while the mount's budget allows). */
	uint8_t *gbuf;
	size_t gbytes;
	struct udir *gprev, *gnext;   /* the mount's groups, most recent first  */
	uint8_t gtried;           /* read whole once already (not again on a miss) */
};

struct udir {
	struct uinode *self;
	struct uxn x;             /* the dnode                                   */
	struct ufs_xmeta m;       /* now (attributes; head as committed)         */
	struct ufs_xmeta pm;      /* what the dnode's entry 0 holds               */
	uint8_t  isnew;           /* the dnode was never written back            */
	uint8_t  dirty;           /* on the dirty list: needs a commit           */
	uint8_t  damaged;         /* a block failed its check: read-only         */
	uint8_t  loaded;
	int      err;             /* this sync: what went wrong                  */
	struct uent **hash;
	uint32_t nhash, nents;
	struct uent **pos;        /* readdir order, with holes                   */
	uint32_t npos, poscap;
	struct ublk *blk;
	uint32_t nblk, blkcap;
	uint32_t fill;            /* a record block that may have room           */
	int      ntables;         /* table blocks the last commit wrote          */
	struct ufs_dptr *tables;  /* and where (freed after the next commit)     */
	struct udspace sp;
	struct uent *gone;        /* removed names, awaiting commit              */
	uint32_t nlive;           /* objects of its entries in memory            */
	uint32_t nsubdirs;
	struct udir *dnext;       /* dirty list                                  */
	struct udir **dprev;      /* and what points at it there                 */
	uint8_t  leave;           /* the end of a commit: 1 leaves the list      */
	uint64_t newhead;         /* the commit being prepared                   */
	uint32_t newcsum, newnblocks;
	uint32_t newnrec;         /* and the records it holds                    */
	/* The file count (super.c): records its durable version holds; the
	 * durable records of removed directories below it that are gone from
	 * memory, to drop at its next commit; a name added, removed or made
	 * memory-only since its last commit. */
	uint32_t ndisk;
	uint64_t dropw;
	uint8_t  cntchg;
};

/* ---- objects ------------------------------------------------------------------ */

struct uinode {
	uint64_t id;
	int type;                 /* UFS_T_*                                     */
	uint32_t refs;            /* open files and code working on it           */
	struct uent *ent;         /* its name and record (the root's is its own)  */
	struct udir *parent;      /* the directory it is counted in (nlive)      */
	struct uinode *hnext;     /* object table                                */
	/* directories */
	struct udir *d;
	/* regular files: small and memory-only files' bytes while in memory */
	uint8_t *ibuf;
	size_t icap;
	uint8_t ibig;             /* ibuf is a large buffer (upool_big_alloc)      */
	uint8_t idirty;           /* ibuf is newer than the disk                 */
	uint8_t ondirty;          /* on the dirty file list                      */
	uint8_t unlinked;         /* no name: freed at the last close            */
	uint8_t bigdirty;         /* large file: blocks or extents to write      */
	struct uinode *fnext;     /* dirty file list                             */
	struct uinode **fprev;    /* and what points at it there                 */
	/* large files */
	struct uxn x;             /* the fnode                                   */
	struct ubig *b;
	uint64_t resv;            /* sectors promised to it, not yet allocated   */
	uint64_t counted;         /* its bytes in fs->dirty_bytes                */
	uint64_t wloc;            /* small: where the write in flight puts it    */
};

/* ---- I/O in flight ---------------------------------------------------------- */

#define UIO_SLOTS   8
#define UIO_STAGE   (256u * 1024)

struct uio {
	struct ufs *fs;
	int write;
	struct {
		volatile int32_t word;
		int busy;
		struct udir *owner;
		uint8_t *stage;
	} s[UIO_SLOTS];
	int next;
	int32_t err;
	/* the run being gathered (writes) */
	struct ed_protector p;
	struct udir *owner;
	uint64_t sector;
	uint32_t len;
	int gather;               /* a run is open in slot `next`                */
};

/* ---- memory (pool.c) ------------------------------------------------------------------ */

#define UPOOL_SPAN    (32u * 1024)  /* a span: objects of one class        */
#define UPOOL_SMALL   4096u         /* the largest object from a span      */
#define UPOOL_CLASSES 48
struct uspan;
struct uchunk;
struct upool {
	size_t bytes;             /* held: spans' chunks, and large buffers   */
	size_t live;              /* in objects given out of spans            */
	struct uspan *part[UPOOL_CLASSES];  /* per class, spans with room    */
	struct uspan *empty;      /* spans with no object, for any class      */
	struct uchunk *chunks;
	uint32_t nempty;
	uint32_t next_chunk;      /* spans in the next chunk                  */
};

/* The dirty lists (fs->dirty, fs->dfiles) link each member both ways - its
 * next, and the pointer that points at it - so taking one off is O(1). */
#define UFS_LIST_PUSH(head, x, next, prev) do {                                 \
		(x)->next = *(head);                                            \
		if ((x)->next != NULL)                                          \
			(x)->next->prev = &(x)->next;                           \
		(x)->prev = (head);                                             \
		*(head) = (x);                                                  \
	} while (0)
#define UFS_LIST_TAKE(x, next, prev) do {                                       \
		*(x)->prev = (x)->next;                                         \
		if ((x)->next != NULL)                                          \
			(x)->next->prev = (x)->prev;                            \
		(x)->next = NULL;                                               \
		(x)->prev = NULL;                                               \
	} while (0)

/* ---- the mount -------------------------------------------------------------------- */

#define UFS_OHASH 1024

struct ufs {
	struct kit k;             /* unit, key, free map, anchor, lock (libos/kit) */
	uint64_t sb_sector;       /* the anchor                                  */
	struct ufs_super sb;
	struct bcache bc;
	int readonly;             /* fsck                                        */
	struct uinode *otab[UFS_OHASH];
	uint32_t nobj, ndirs;
	/* The file count (super.c): of the durable tree (its records + 1, if
	 * count_known), and how many more there are now (names added less
	 * removed since, memory-only ones included).  count_exact: no commit
	 * failed since the last whole sync that went well, so nfiles is the
	 * durable tree's and may go to the superblock. */
	uint64_t nfiles;
	int64_t  pending;
	int      count_known, count_exact;
	struct udir *pend_d;      /* the one directory whose commit changes it, */
	int64_t  pend_delta;      /* by this much, in the sync under way        */
	int      count_stale;     /* the disk's superblock names a pending change
	                           * the mount resolved: rewrite it before any
	                           * directory commits again                     */
	uint64_t trim_syncs;      /* ufs_itrim: syncs when it last walked,       */
	uint32_t trim_left;       /* and the objects it left                     */
	struct uinode *root;
	struct udir *dirty;       /* directories to commit                       */
	struct uinode *dfiles;    /* files with data to write                    */
	uint32_t ndfiles;         /* ... how many                                */
	uint64_t dirty_bytes;     /* small files' bytes waiting in memory        */
	uint64_t dirty_max;
	/* Changed exonode blocks, each with its depth in write-back order
	 * (the kit's set: libos/kit/commit.c). */
	struct kit_dirty dx;
	/* Objects whose names are gone, to free once that is durable:
	 * xrefs of dnodes and fnodes. */
	uint64_t *doomed;
	uint32_t ndoomed, doomedcap;
	/* Allocation. */
	struct kit_pool xpool;    /* dnodes and fnodes                           */
	uint64_t xnear;           /* the place the last one was wanted near      */
	uint64_t data_goal;
	uint64_t next_fit;        /* where a run not found near its goal is looked for */
	uint64_t resv;            /* sectors promised to writes not yet placed    */
	uint64_t free_est;        /* free sectors when last counted              */
	uint64_t id_next, id_limit;   /* ids handed out from here                */
	uint64_t clock;           /* last time handed out (monotonic)            */
	int sb_dirty;
	/* What the I/O in flight carries, settled when it is done (sync.c). */
	struct uinode **wfiles;   /* small files whose bytes are being written   */
	uint32_t nwfiles, wfilescap;
	struct wbuf { struct bbuf *b; struct udir *owner; } *wbufs;
	uint32_t nwbufs, wbufscap;
	int intent_done[UFS_NINTENT];   /* old name removed: clear once durable  */
	uint64_t seq;             /* commits made                                */
	struct ufile *files;      /* open files (ops.c), for abandon              */
	struct ufs_counters cnt;
	int in_sync;
	uint8_t *page;            /* a 4 KiB scratch page (exonode maps)         */
	struct upool pool;
	struct udir *ghead, *gtail;   /* directories' groups, most recent first  */
	uint64_t gbytes, gmax;
	struct uahead *ahead;     /* directory read-ahead (ahead.c)              */
	struct ustream *stream;   /* a large file read in order (ahead.c)        */
	int want_data;            /* a path walk for a read: load groups whole    */
	char damage[160];         /* the last damage found, for messages         */
	struct share sh;          /* the processes sharing it (share.c)          */
};

/* An open file (ops.c). */
struct ufile {
	struct ufile *next, *prev;   /* the mount's open files */
	struct uinode *ip;
	int flags;                /* LIBFS_O_* */
	int created;              /* this handle made the file (see u_persist) */
};

/* ---- pool.c ----------------------------------------------------------------------- */
/* n zeroed bytes from the mount's spans (NULL if n is over UPOOL_SMALL or
 * memory ran out). */
void *upool_alloc(struct ufs *fs, size_t n);
/* The same, not zeroed. */
void *upool_alloc_raw(struct ufs *fs, size_t n);
void  upool_free(struct ufs *fs, void *obj);
/* The bytes obj (from upool_alloc) can hold. */
size_t upool_size(const void *obj);
/* Larger buffers, from malloc, counted in the mount's pool_bytes. */
void *upool_big_alloc(struct ufs *fs, size_t n);
void *upool_big_realloc(struct ufs *fs, void *old, size_t n);
void  upool_big_free(struct ufs *fs, void *p);
void  upool_destroy(struct ufs *fs);

/* ---- csum.c ----------------------------------------------------------------------- */
/* The checksum a directory block's header should carry. */
uint32_t ufs_dblk_csum(const uint8_t *blk);

/* ---- xops.c ------------------------------------------------------------------------ */
void ufs_xn_set(struct uxn *x, uint64_t sector, uint16_t slot);
const struct ed_protector *ufs_xn_prot(struct ufs *fs, struct uxn *x);
/* Note a changed block (slot names an exonode whose capabilities we have). */
int  ufs_touch(struct ufs *fs, uint64_t sector, uint16_t slot, int depth);
/* Exonode operations with recovery: ED_E_NOTCACHED reads the block in and
 * retries; a full exodisk cache makes us write back and retry.  Results as
 * the client library's (>= 0, or an ED_E_* code).  depth: where the block
 * comes in write-back order (2 leaf of a double node, 1 map node, 0 dnode
 * and fnode, -1 superblock). */
int64_t ufs_xn_alloc(struct ufs *fs, struct uxn *x, uint32_t length, int depth);
int64_t ufs_xn_dealloc(struct ufs *fs, struct uxn *x);
int64_t ufs_xn_add_extent(struct ufs *fs, struct uxn *x, int entry, uint64_t start, uint64_t nsect,
                          int depth);
int64_t ufs_xn_add_child(struct ufs *fs, struct uxn *x, int entry, uint64_t csector, int depth);
int64_t ufs_xn_add_data(struct ufs *fs, struct uxn *x, int entry, const void *data, uint32_t len,
                        int depth);
int64_t ufs_xn_read_data(struct ufs *fs, struct uxn *x, int entry, void *buf, uint32_t len);
int64_t ufs_xn_remove(struct ufs *fs, struct uxn *x, int entry, int depth);
/* Extent entries first .. first + n - 1 (n <= 256) in one request. */
int64_t ufs_xn_remove_range(struct ufs *fs, struct uxn *x, int first, int n, int depth);
int64_t ufs_xn_combine(struct ufs *fs, struct uxn *x, int first, int second, int depth);
int64_t ufs_xn_split(struct ufs *fs, struct uxn *x, int entry, uint64_t off, int newent, int depth);
/* Copy out an exonode's map page (entries and data) into buf (4096 bytes). */
int64_t ufs_xn_snapshot(struct ufs *fs, struct uxn *x, void *buf);
/* Write back every changed block, deepest first; 0 or an error. */
int  ufs_writeback_all(struct ufs *fs);
/* Make every completed write durable. */
int  ufs_barrier(struct ufs *fs);
/* Batched I/O.  Writes of whole sectors are gathered with the one before
 * when they continue it through the same exonode, up to UIO_STAGE bytes;
 * up to UIO_SLOTS requests are in flight.  owner (may be NULL) gets
 * owner->err set if the request carrying its bytes fails. */
void uio_init(struct uio *w, struct ufs *fs, int write);
int  uio_write(struct uio *w, const struct ed_protector *p, uint64_t sector, const void *data,
               uint32_t bytes, struct udir *owner);
/* A transfer straight from or into mem (no staging; split at ED_IO_MAX);
 * mem must stay until uio_finish. */
int  uio_direct(struct uio *w, const struct ed_protector *p, uint64_t sector, void *mem,
                uint64_t bytes, struct udir *owner);
/* Wait for everything; the first error, or 0. */
/* Start the run being gathered now, without waiting for anything. */
void uio_send(struct uio *w);
int  uio_finish(struct uio *w);
/* One synchronous transfer. */
int  ufs_io_sync(struct ufs *fs, const struct ed_protector *p, int write, uint64_t sector,
                 void *mem, uint64_t bytes);

/* ---- alloc.c -------------------------------------------------------------------------- */
/* A new dnode or fnode exonode (UFS_XN_BYTES), near `near` (a sector). */
int  ufs_alloc_xn(struct ufs *fs, uint64_t near, struct uxn *x);
void ufs_xn_freed(struct ufs *fs, uint64_t sector, uint16_t slot);
/* Up to want sectors (at least min; both rounded up to multiples of unit,
 * where the run also starts) in one run, preferably at goal.  Returns the
 * run's length and its start in *start, or -ENOSPC.  (Only a proposal: the
 * allocation itself decides; kit_taken says when to look again.) */
int64_t ufs_alloc_run(struct ufs *fs, uint64_t goal, uint64_t want, uint64_t min, uint64_t unit,
                      uint64_t *start);
/* Free sectors right after `start`, up to want, in whole blocks. */
uint64_t ufs_room_after(struct ufs *fs, uint64_t start, uint64_t want);

/* Promise sectors to a write, so a full disk is -ENOSPC now rather than a
 * failed write-back later; give them back (unpromise) once allocated. */
int  ufs_promise(struct ufs *fs, struct uinode *ip, uint64_t sectors);
void ufs_unpromise(struct ufs *fs, struct uinode *ip, uint64_t sectors);
/* A new file id. */
int  ufs_new_id(struct ufs *fs, uint64_t *id);


/* ---- dspace.c --------------------------------------------------------------------------- */
/* The space's extents from the dnode's map page. */
int  ds_load(struct ufs *fs, struct udir *d, const void *page);
void ds_destroy(struct udspace *sp);
/* Mark sectors used; -EIO if they are not in the space or already used. */
int  ds_claim(struct udspace *sp, uint64_t sector, uint64_t n);
/* Allocate n sectors (a run starting at a multiple of align), growing the
 * space if it has no such run; slack: grow by more than needed (write-
 * behind, so later files of the directory come next to these). */
int  ds_alloc(struct ufs *fs, struct udir *d, uint64_t n, uint64_t align, int slack,
              uint64_t *sector);
/* Make sure the space has n free sectors (growing it in one run): files
 * about to be placed together then land together. */
int  ds_reserve(struct ufs *fs, struct udir *d, uint64_t n, int slack);
void ds_free(struct udspace *sp, uint64_t sector, uint64_t n);
/* Free once the next commit of the directory is durable. */
int  ds_free_later(struct udspace *sp, uint64_t sector, uint64_t n);
/* Remember an allocation made for a commit being prepared (ds_abort gives
 * them back if the commit fails). */
int  ds_note_tmp(struct udspace *sp, uint64_t sector, uint64_t n);
void ds_abort(struct udspace *sp);
/* The commit is durable: what waited is free. */
void ds_committed(struct udspace *sp);
/* Give back space the directory does not use: extents wholly free, and
 * the unused tails of extents grown with slack.  After a commit. */
int  ds_trim(struct ufs *fs, struct udir *d);
/* The extent holding sector, or NULL. */
struct dsext *ds_find(struct udspace *sp, uint64_t sector);
/* bytes from byte pos of the disk (inside the space) into buf, through
 * the buffer cache; reading a missing block brings in `ahead` more sectors
 * of its extent with it. */
int  ds_read(struct ufs *fs, struct udir *d, uint64_t sector, void *buf, uint64_t bytes,
             uint64_t ahead);
/* Keep cached blocks of the space the same as what was just written. */
void ds_written(struct ufs *fs, struct udir *d, uint64_t sector, const void *data, uint64_t bytes);
/* A small space is read whole at load (the directory's names and small
 * files, in a request or two) and kept as its group. */
#define UFS_GROUP_MAX   (256u * 1024)
int  ds_read_all(struct ufs *fs, struct udir *d);
void ds_group_drop(struct ufs *fs, struct udir *d);
/* Make room in the mount's budget for a group of `bytes`; make buf (the
 * whole space, extents in order, from upool_big_alloc) d's group. */
void ds_group_room(struct ufs *fs, size_t bytes);
void ds_group_attach(struct ufs *fs, struct udir *d, uint8_t *buf);
/* The group's copy of [sector, sector + n), or NULL. */
const uint8_t *ds_group(struct udir *d, uint64_t sector, uint64_t n);
uint64_t ds_owner(const struct udir *d);

/* ---- ahead.c ------------------------------------------------------------------------------ */
/* first (a cold subdirectory of p) is about to be loaded: read it and the
 * next cold siblings' dnodes and groups in, together. */
void ufs_ahead(struct ufs *fs, struct udir *p, struct uent *first);
/* d's dnode is loaded (ds_load done): make what was read ahead for it its
 * group if it is still what the dnode names; 1 if so, else 0. */
int  ufs_ahead_take(struct ufs *fs, struct udir *d);
/* A read of ip's bytes [off, off + n) from the windows read ahead of a
 * reader going through the file in order: the bytes served (from off
 * on), or 0 when this read is not one (the caller reads as usual). */
long ufs_stream_read(struct ufs *fs, struct uinode *ip, uint8_t *out, uint64_t off, size_t n);
/* Forget what was read ahead of file id (0: of any, and free the memory). */
void ufs_stream_drop(struct ufs *fs, uint64_t id);
/* Forget everything read ahead (unmount). */
void ufs_ahead_drop(struct ufs *fs);

/* ---- dir.c ----------------------------------------------------------------------------- */
/* Load a directory's dnode and names (dir->d must be set up with its dnode). */
int  ufs_dir_load(struct ufs *fs, struct udir *d, uint64_t id);
void ufs_dir_free(struct ufs *fs, struct udir *d);
struct uent *ufs_dir_find(struct udir *d, const char *name, size_t len);
/* A new name with record r (its reclen and namelen are set here). */
int  ufs_dir_add(struct ufs *fs, struct udir *d, const char *name, const struct ufs_drec *r,
                 struct uent **out);
/* Remove e's name: it goes to the gone list until the next commit. */
void ufs_dir_remove(struct ufs *fs, struct udir *d, struct uent *e);
/* A removed name's nodes (as now and as committed) are to be freed once
 * the removal is durable. */
void ufs_doom_ent(struct ufs *fs, struct uent *e);
/* e's file becomes memory-only: its name leaves the record blocks. */
void ufs_dir_memonly(struct ufs *fs, struct udir *d, struct uent *e);
/* Rename e within its directory. */
int  ufs_dir_rename(struct ufs *fs, struct udir *d, struct uent *e, const char *name,
                    struct uent **out);
/* The entry after position *cookie; 1, or 0 at the end. */
int  ufs_dir_next(struct udir *d, uint64_t *cookie, struct uent **out);
/* Mark the directory as needing a commit. */
void ufs_dir_dirty(struct ufs *fs, struct udir *d);
/* A record changed: its block must be rewritten. */
void ufs_ent_dirty(struct ufs *fs, struct uent *e);
/* Commit, step 1: write every changed block of the directory to new
 * sectors of its space (through w); step 2, after the barrier: make the
 * new head the directory's (a new dnode: at once, it is not yet named).
 * ufs_dir_done after the write-back; ufs_dir_abort if it failed. */
int  ufs_dir_prepare(struct ufs *fs, struct udir *d, struct uio *w);
int  ufs_dir_publish(struct ufs *fs, struct udir *d);
void ufs_dir_done(struct ufs *fs, struct udir *d);
void ufs_dir_abort(struct ufs *fs, struct udir *d);
/* Note damage ("unixfs: file id ID, sector S: what") for messages
 * (fs->damage, unixfs_damage) and return -EIO. */
int  ufs_damage(struct ufs *fs, const char *what, uint64_t sector, uint64_t id);

/* ---- inode.c ------------------------------------------------------------------------------ */
/* The object of entry e (loading it: a directory's names, a large file's
 * extents), with a reference. */
int  ufs_iget(struct ufs *fs, struct uent *e, struct uinode **ipp);
/* A directory known only by its dnode (rename recovery): the root's
 * object, or one with a name of its own that no directory holds. */
int  ufs_iget_xref(struct ufs *fs, uint64_t xref, struct uinode **ipp);
void ufs_idrop_detached(struct ufs *fs);
void ufs_iref(struct uinode *ip);
void ufs_iput(struct ufs *fs, struct uinode *ip);
struct uinode *ufs_ifind(struct ufs *fs, uint64_t id);
/* Create a file or directory named name in dir. */
int  ufs_create(struct ufs *fs, struct uinode *dir, const char *name, int type, uint32_t perm,
                struct uinode **ipp);
/* Free what a removed name's object holds, once the removal is durable:
 * the dnode or fnode at xref. */
int  ufs_free_node(struct ufs *fs, uint64_t xref);
void ufs_doom(struct ufs *fs, uint64_t xref);
/* Let unused clean objects go when there are many. */
void ufs_itrim(struct ufs *fs);
void ufs_idrop_all(struct ufs *fs);
uint64_t ufs_now(struct ufs *fs);
/* Give a file a large-file exonode (its bytes move later). */
int  ufs_make_big(struct ufs *fs, struct uinode *ip);
/* Put a file on the dirty file list (fs->dfiles, counted in ndfiles), and
 * mark its name dirty (ufs_ent_dirty) ... */
void ufs_file_dirty(struct ufs *fs, struct uinode *ip);
/* ... and off it (nothing of it is left to write, or it is gone). */
void ufs_file_undirty(struct ufs *fs, struct uinode *ip);

/* ---- map.c ---------------------------------------------------------------------------------- */
int  ufs_map_load(struct ufs *fs, struct uinode *ip, const void *fnode_page);
uint64_t ufs_map_lookup(const struct uinode *ip, uint64_t lsec, uint64_t *run);
/* Give every hole in logical sectors [from, upto) extents; returns the
 * sectors newly mapped. */
int64_t ufs_map_fill(struct ufs *fs, struct uinode *ip, uint64_t from, uint64_t upto);
/* Rewrite position tables holding lines that name no extent. */
int ufs_map_tidy(struct ufs *fs, struct uinode *ip);
/* Sectors in [from, upto) that no extent holds. */
uint64_t ufs_map_holes(const struct uinode *ip, uint64_t from, uint64_t upto);
int  ufs_map_shrink(struct ufs *fs, struct uinode *ip, uint64_t keep);
/* The protector of the exonode listing the extent that holds sector. */
const struct ed_protector *ufs_map_prot(struct ufs *fs, struct uinode *ip, uint64_t sector);
/* Free what ufs_map_load and the changes after it allocated (not b). */
void ufs_map_free(struct ubig *b);
/* Extents, entry words and table lines map.c has looked at, all files:
 * host tests bound it to show work grows with the change, not the file. */
extern uint64_t ufs_map_steps;

/* ---- data.c ------------------------------------------------------------------------------------ */
long ufs_read(struct ufs *fs, struct uinode *ip, void *buf, size_t n, uint64_t off);
long ufs_write(struct ufs *fs, struct uinode *ip, const void *buf, size_t n, uint64_t off);
int  ufs_truncate(struct ufs *fs, struct uinode *ip, uint64_t len);
/* Write the file's dirty bytes out (placing a small file's in its
 * directory's space; allocating a large file's blocks) through w.  Not yet
 * durable; the record is not changed on disk.  slack: write-behind. */
int  ufs_flush_data(struct ufs *fs, struct uinode *ip, struct uio *w, int slack);
/* After a commit: what the large file no longer needs. */
int  ufs_big_committed(struct ufs *fs, struct uinode *ip);
/* The write of a small file's bytes finished: ok, or its place goes back. */
void ufs_small_settled(struct ufs *fs, struct uinode *ip, int ok);
int  ufs_set_persist(struct ufs *fs, struct uinode *ip, int model);
/* A small file becomes memory-only (its bytes in ibuf). */
int  ufs_to_memory(struct ufs *fs, struct uinode *ip);
void ufs_ibuf_free(struct ufs *fs, struct uinode *ip);
/* The bytes of a small file, wherever they are, into ibuf. */
int  ufs_load_small(struct ufs *fs, struct uinode *ip);

/* ---- share.c (docs/sharing.md) ---------------------------------------------------------- */
/* At mount: attach to the shared area and take its lock (held on return);
 * without a shared segment, the one-process mount lock (opts: wait=). */
int  ufs_share_attach(struct ufs *fs, const char *opts);
/* The VFS brackets every call from now on: let go. */
void ufs_share_mounted(struct ufs *fs);
/* At unmount, after the last sync (or a failed mount): let go, detach. */
void ufs_share_detach(struct ufs *fs);
int  ufs_share_enter(void *fs, int change);
void ufs_share_leave(void *fs);
/* Drop every cache and read again what others changed (dead: one died
 * mid-operation); open files are found again by path and id. */
int  ufs_share_reload(struct ufs *fs, int dead);
/* Pieces share.c reuses: super.c, ops.c, inode.c. */
int  ufs_read_sb(struct ufs *fs);
int  ufs_load_root(struct ufs *fs);
int  ufs_namei(struct ufs *fs, const char *path, struct uinode **ipp);
struct uinode *ufs_onew(struct ufs *fs, struct uent *e, int type);
void ufs_odestroy(struct ufs *fs, struct uinode *ip);

/* The file count (super.c; ufs_format.h, struct ufs_super's files). */
/* Files and directories now (statfs): the durable count plus what is
 * pending; counted afresh (a sync, then a walk of the tree) when not known. */
int  ufs_files(struct ufs *fs, uint64_t *out);
/* A commit of list (n directories) is about to be made durable: if any of
 * them changes its number of records, the superblock says "not known"
 * until the commit is over (before the barrier of sync.c step 3). */
int  ufs_count_begin(struct ufs *fs, struct udir **list, uint32_t n);
/* After the commit's step 6: ok, every listed directory committed; whole,
 * a whole sync (every dirty directory was listed).  The superblock gets the
 * count when it is the durable tree's. */
int  ufs_count_end(struct ufs *fs, int ok, int whole);
/* Directory d's commit is durable: its records went from d->ndisk to n,
 * and removed directories' records (gone) with it. */
void ufs_count_dir(struct ufs *fs, struct udir *d, uint32_t n, uint64_t gone);
/* What the commit being prepared will change the count by (sync.c step 2,
 * after its files are written). */
int64_t ufs_dir_count_change(const struct udir *d);
/* The durable records in and below d that go when its name's removal commits. */
static inline uint64_t ufs_dir_weight(const struct udir *d) { return d->ndisk + d->dropw; }

/* ---- sync.c ------------------------------------------------------------------------------------- */
int  ufs_sync(struct ufs *fs);
int  ufs_fsync(struct ufs *fs, struct uinode *ip);
/* Is d's name durable, and every ancestor's? */
int  ufs_dir_named(struct ufs *fs, struct udir *d);
/* Small files' bytes (and large files' blocks) out without a commit: memory
 * or the buffer cache is full. */
int  ufs_writebehind(struct ufs *fs);
/* Renames in progress (ufs_format.h). */
int  ufs_intent_reserve(struct ufs *fs);
int  ufs_intent_set(struct ufs *fs, int slot, const struct ufs_intent *in);
int  ufs_intent_recover(struct ufs *fs);
int  ufs_intent_explains(struct ufs *fs, uint64_t id);
int  ufs_push_sb(struct ufs *fs);
/* The superblock with the nodes of depth (not after them): what it says
 * then must not depend on their being durable first (sync.c step 2). */
int  ufs_push_sb_at(struct ufs *fs, int depth);

#endif
