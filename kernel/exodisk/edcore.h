/*
 * edcore.h - the exodisk core's internal state and the functions its files
 * share.  Nothing outside kernel/exodisk/ includes this; the kernel and the
 * tests use ed_env.h.
 *
 * The pieces, each in its own file:
 *   pvec.c      vectors of pages (all large tables live in single pages)
 *   bitmap.c    sparse bitmaps (uniform runs cost no memory), sparse arrays
 *   freemap.c   the free map (conservative, exported) and the durable one;
 *               room for the exodisk's own pages (mspace)
 *   btree.c     the binding tree: bound sector -> kind, size, version stamp,
 *               a B+tree paged in from disk as lookups touch it
 *   fmtree.c    the free map on disk: a radix tree over its leaves
 *   rangeset.c  sorted sector-range lists: coverage, differences
 *   cache.c     the exodisk cache: entries, hash, LRU, holders, replacement
 *   iob.c       control blocks of asynchronous operations, result posting
 *   commit.c    the commit log: batching write-backs into log records
 *   home.c      writing committed blocks back to their home sectors
 *   ckpt.c      checkpoints: the trees' changed pages, copy-on-write, and a
 *               superblock naming them, which empty the log
 *   mount.c     format and mount (log replay, redo)
 *   refs.c      which sectors a header / exonode block references
 *   objects.c   resolving a protector, capability checks, change hooks
 *   extops.c    extent operations;  xnops.c exonode operations
 *   dataio.c    ED_OP_IO;  proxy.c proxies;  xnmap.c exonode maps
 *   unwritten.c application sectors not written since allocated (they read as zeros)
 *   zero.c      zeroing the unwritten runs a checkpoint cannot carry
 *   exodisk.c   creation, clients, the request dispatcher
 *   check.c     the invariant checker (check.h)
 */
#ifndef ED_EDCORE_H
#define ED_EDCORE_H

#include <stdint.h>
#include <stdbool.h>
#include "drivers/blk.h"
#include "kernel/uapi/exodisk.h"
#include "kernel/exodisk/ed_env.h"
#include "kernel/exodisk/edlib.h"
#include "kernel/exodisk/edcrypt.h"
#include "kernel/exodisk/ondisk.h"

/* An internal result, never returned to a caller of ed_request(): a page of
 * the binding tree is being read in; the request is retried once it is. */
#define ED_E_WAIT  (-255)

/* ---- page vectors ---------------------------------------------------------- */
/* Up to 512 * 512 pages, reached through a directory page of leaf pages. */
struct ed_pvec {
	void ***dir;
	uint32_t npages;
};

int   ed_pvec_alloc(const struct ed_env *env, struct ed_pvec *v, uint32_t npages);
void  ed_pvec_free(const struct ed_env *env, struct ed_pvec *v);
static inline void *ed_pvec_page(const struct ed_pvec *v, uint32_t i)
{
	return v->dir[i >> 9][i & 511];
}
/* Element i of an array of fixed-size elements packed into the pages. */
static inline void *ed_pvec_elem(const struct ed_pvec *v, uint32_t size, uint32_t i)
{
	uint32_t per = ED_PAGE / size;
	return (uint8_t *)ed_pvec_page(v, i / per) + (i % per) * size;
}
static inline uint32_t ed_pvec_pages_for(uint32_t n, uint32_t size)
{
	uint32_t per = ED_PAGE / size;
	return (n + per - 1) / per;
}

/* ---- sparse bitmaps and arrays (bitmap.c) ------------------------------------ */
#define ED_BM_LEAF_BITS  (ED_PAGE * 8ull)      /* 32768 sectors per leaf page */
#define ED_BM_ZERO       ((void *)0)           /* a leaf or subtree of zeros */
#define ED_BM_ONES       ((void *)1)           /* ... of ones */
#define ED_BM_SHARED     ((void *)2)           /* ... as in the base bitmap */

struct ed_bm {
	void    *root;             /* radix of pointer pages above the leaf pages */
	uint64_t nbits;
	uint64_t count;            /* bits set below nbits */
	struct ed_bm *base;        /* what ED_BM_SHARED refers to */
	struct ed_bm *dep;         /* the bitmap sharing this one's leaves */
	const struct ed_env *env;
	uint64_t *pages;           /* a counter of pages held (memory accounting) */
	void (*changed)(void *arg, uint64_t leaf);   /* a leaf's page was replaced */
	void *arg;
};

void ed_bm_init(struct ed_bm *m, const struct ed_env *env, uint64_t nbits, void *fill,
                uint64_t *pages);
void ed_bm_free(struct ed_bm *m);
void ed_bm_zero(struct ed_bm *m);        /* every bit clear, pages kept (ONES leaves: freed) */
uint64_t ed_bm_nleaves(const struct ed_bm *m);
const uint64_t *ed_bm_leaf(const struct ed_bm *m, uint64_t li, void **mk);
bool ed_bm_test(const struct ed_bm *m, uint64_t bit);
bool ed_bm_any(const struct ed_bm *m, uint64_t start, uint64_t count);
bool ed_bm_all(const struct ed_bm *m, uint64_t start, uint64_t count);
uint64_t ed_bm_next(const struct ed_bm *m, uint64_t from, bool val);
bool ed_bm_run(const struct ed_bm *m, uint64_t *from, uint64_t *len);  /* next run of set bits */
uint64_t ed_bm_prev(const struct ed_bm *m, uint64_t before, bool val);
uint64_t ed_bm_next_leaf(const struct ed_bm *m, uint64_t li);
int  ed_bm_prepare(struct ed_bm *m, uint64_t start, uint64_t count, bool val);
int  ed_bm_set(struct ed_bm *m, uint64_t start, uint64_t count);
int  ed_bm_clear(struct ed_bm *m, uint64_t start, uint64_t count);
int  ed_bm_clear_unless(struct ed_bm *m, const struct ed_bm *keep, uint64_t start, uint64_t count);
void ed_bm_reshare(struct ed_bm *m, uint64_t li);
void ed_bm_compact(struct ed_bm *m, uint64_t li);
int  ed_bm_install(struct ed_bm *m, uint64_t li, uint64_t *page);
/* Give leaf li of m a page of its own (not shared, not a marker). */
uint64_t *ed_bm_own(struct ed_bm *m, uint64_t li);

/* A sparse array of pointers by 64-bit index (below 2^27), NULL = absent. */
struct ed_spa {
	void *root;
	const struct ed_env *env;
	uint64_t *pages;
};
void **ed_spa_slot(struct ed_spa *a, uint64_t i, bool make);
/* Free the array; fn (if not NULL) is called for every pointer stored. */
void  ed_spa_free(struct ed_spa *a, void (*fn)(void *arg, void *p), void *arg);

/* ---- range lists ------------------------------------------------------------- */
struct ed_rl {
	struct ed_range *r;
	uint32_t n, cap;
	bool overflow;             /* an add did not fit */
};

void ed_rl_init(struct ed_rl *l, struct ed_range *store, uint32_t cap);
void ed_rl_add(struct ed_rl *l, uint64_t start, uint64_t count);
void ed_rl_norm(struct ed_rl *l);                           /* sort and merge */
bool ed_rl_covers(const struct ed_rl *l, uint64_t start, uint64_t count);   /* normalised l */
bool ed_rl_overlaps(const struct ed_rl *l, uint64_t start, uint64_t count);
void ed_rl_diff(const struct ed_rl *a, const struct ed_rl *b, struct ed_rl *out);  /* a \ b */
void ed_rl_intersect(const struct ed_rl *a, const struct ed_rl *b, struct ed_rl *out);
uint64_t ed_rl_total(const struct ed_rl *l);

/* Most ranges one block can reference: every slot full of 16-byte extent
 * entries, plus the block itself. */
#define ED_MAX_REFS  ((ED_XN_MAX_SECT * ED_SECTOR) / ED_XN_EXTENT_BYTES + 2)

/* Range lists for temporary use come from a small pool of pages (kernel
 * stacks are too small for them), taken and returned in LIFO order. */
#define ED_NSCRATCH  16
struct exodisk;
struct ed_rl *ed_rl_get(struct exodisk *ed);
void ed_rl_put(struct exodisk *ed, struct ed_rl *l);

/* ---- cache entries ----------------------------------------------------------- */
#define EF_VALID      0x001   /* contents are valid (read in, or allocated here)    */
#define EF_READING    0x002   /* being read in                                      */
#define EF_DIRTY      0x004   /* cur differs from what is committed                 */
#define EF_WRITING    0x008   /* write-back queued or in the log write in flight    */
#define EF_HOME_NEED  0x010   /* committed, but the home sector(s) are not current  */
#define EF_HOME_IO    0x020   /* home write in flight                               */
#define EF_DEALLOC    0x040   /* deallocated; the write-back will drop the binding  */
#define EF_STAGE      0x080   /* the header sector's stage buffer is in use         */
#define EF_PIN        0x100   /* not replaceable for the moment (an op uses it)     */
#define EF_ORPHAN     0x200   /* dirty, and every holder has exited                 */

struct ed_io;
struct ed_xnmap;

struct ed_entry {
	uint32_t idx;
	uint16_t unit;
	uint8_t  kind;            /* ED_KIND_*, 0 = free entry */
	uint8_t  nsect;
	uint64_t sector;          /* header sector / first sector of the block */
	uint32_t flags;           /* EF_* */
	int32_t  hnext;           /* hash chain */
	int32_t  lprev, lnext;    /* LRU list (head = most recent) or free list */
	uint64_t holders;         /* one bit per client slot */
	uint64_t com_stamp;       /* version of com; 0 = never committed */
	uint64_t home_stamp;      /* version known to be at home; 0 = unknown */
	uint64_t embed_stamp;     /* a never-committed header written with data */
	uint32_t modgen;          /* counts changes to cur */
	uint32_t embed_modgen;    /* modgen when embed_stamp was drawn */
	uint64_t inflight_stamp;  /* version carried by the home-sector write in flight */
	uint64_t read_stamp;      /* being read in: the version the binding names */
	uint32_t nmaps;           /* exonode maps of this block */
	uint8_t *cur;             /* working copy, plain (capabilities in the clear) */
	uint8_t *com;             /* the committed image exactly as on disk */
	uint8_t *stage;           /* extent headers: the sector image a write carries */
	struct ed_io *waiters;    /* read-in requests waiting on this entry */
	struct ed_io *sg_wait, *sg_wait_tail;   /* header-sector writes waiting for the stage */
	struct blkreq req;        /* read-in and home writes */
	struct blk_seg seg;
	struct exodisk *ed;
};

/* cur, com and stage share the entry's page. */
#define ED_ENT_CUR    0
#define ED_ENT_STAGE  (ED_SECTOR)
#define ED_ENT_COM    (ED_PAGE / 2)

static inline struct ed_exthdr *ed_ext(const struct ed_entry *e)
{
	return (struct ed_exthdr *)e->cur;
}

/* ---- asynchronous operations --------------------------------------------------- */
enum ed_iotype { IO_FREE = 0, IO_DATA, IO_READIN, IO_COMMIT, IO_SHUTDOWN, IO_FLUSH, IO_CKPT };

struct ed_bounce {
	struct ed_pvec pages;
	struct blk_seg *seg;       /* one per page, in a page of its own */
	uint32_t npages;
	bool busy;
};

struct ed_io {
	uint32_t idx;
	uint8_t  type;             /* enum ed_iotype */
	uint8_t  phase;
	uint16_t unit;
	struct exodisk *ed;
	struct ed_client *client;  /* NULL once the client has exited */
	int32_t  cslot;
	int32_t *result;
	void    *pin;
	struct ed_io *next;        /* waiter lists and queues */
	struct ed_entry *ent;
	struct ed_bnode *bt_pin;   /* write-back: the binding leaf its record changes ... */
	bool     bt_pinned;        /* ... pinned (bt_pin is NULL for an empty tree) */
	/* ED_OP_IO */
	bool     write;
	bool     fua;              /* a write that is durable when it completes */
	uint64_t sector;           /* requested range */
	uint32_t nsect;
	uint8_t  pkind;            /* protector, kept to re-check at completion */
	uint16_t xn_num;
	uint64_t blkno;
	struct ed_cap cap;
	struct blk_seg *seg;       /* the application's segments (args.seg) */
	uint32_t nseg, segcap;
	struct blk_seg head[3];    /* application bytes of the header sector */
	uint32_t nhead;
	bool     hdr_read;         /* reads the header sector into sec (below) */
	struct ed_bounce *bounce;
	struct ed_vtrec bind;      /* bounce read: the binding when the read started */
	uint64_t rd_start;         /* bounce read: first sector read */
	uint32_t rd_nsect;
	/* a read that met unwritten sectors (unwritten.c) goes run by run: */
	bool     stepped;
	uint64_t st_pos;           /* the next sector to hand out */
	uint32_t st_run;           /* sectors of the run being read */
	uint32_t st_cut, st_cutlen;   /* the segment the run ends in, its length */
	/* write-back */
	uint64_t stamp;            /* the version a PUT commits */
	uint32_t img_off;          /* sector of its image in the record */
	uint8_t  logop;            /* ED_LOGOP_* */
	struct blkreq req;
	/* Last, and not cleared by ed_io_alloc (every use fills it first): the
	 * header sector of a read that covers it, so no header byte reaches
	 * the application, or the image of a write that covers it. */
	uint8_t  sec[ED_SECTOR];
};

/* Append io to a FIFO of ed_io linked through next (head, tail). */
static inline void ed_io_append(struct ed_io **head, struct ed_io **tail, struct ed_io *io)
{
	io->next = NULL;
	if (*tail != NULL)
		(*tail)->next = io;
	else
		*head = io;
	*tail = io;
}

/* ---- proxies and maps --------------------------------------------------------- */
struct ed_proxy {
	bool     used;
	uint32_t gen;
	uint16_t unit;
	uint8_t  rights;           /* ED_PROXY_READ | ED_PROXY_WRITE */
	uint8_t  okind;            /* origin: ED_PK_EXTENT / EXONODE / PROXY */
	uint64_t osector;          /* origin's sector, or proxy id */
	uint16_t oslot;
	uint64_t obirth;           /* origin exonode's birth */
	int32_t  creator;          /* client slot */
	struct ed_cap rc, wc;
	uint32_t nrange;
	struct ed_range r[ED_PROXY_MAX_RANGES];
};

struct ed_xnmap {
	bool     used;
	struct ed_client *client;
	int32_t  cslot;
	uint16_t unit;
	uint16_t slot;
	uint64_t sector;
	uint64_t birth;
	void    *page;
	uint64_t uaddr;
};

/* ---- the binding tree's nodes in memory (btree.c) ----------------------------- */
#define BN_DIRTY    0x01   /* changed since the last checkpoint (so are its ancestors) */
#define BN_LOADING  0x02   /* being read in */
#define BN_FAILED   0x04   /* the read failed or did not verify: err says why */
#define BN_LRU      0x08   /* on the list of clean nodes eviction looks at */

struct ed_disk;
struct ed_bnode {
	uint8_t *page;             /* the node exactly as on disk */
	struct ed_bnode *parent;   /* NULL for the root */
	struct ed_bnode **kid;     /* inner nodes: the resident child of each entry */
	struct ed_bnode *lprev, *lnext;   /* LRU of clean nodes; free list */
	struct ed_disk *d;
	uint16_t flags;
	uint16_t nkids;            /* resident (or loading) children */
	uint32_t pins;             /* a change will be applied here at a completion */
	int32_t  err;
	struct ed_mptr old;        /* a checkpoint: where it was ... */
	uint64_t new_sector;       /* ... and where it goes (0: not being written) */
	struct blkreq req;         /* reading it in */
	struct blk_seg seg;
};

/* ---- one checkpoint's plan (ckpt.c) ---------------------------------------------- */
enum { CKI_BT = 1, CKI_FMLEAF, CKI_FMINNER, CKI_GONE };
#define CKI_ALLOCATED  0x1     /* item flags: a new place was claimed ... */
#define CKI_FREED      0x2     /* ... its old place released in dfm ...    */
#define CKI_SEALED     0x4     /* ... and the pointer to it replaced       */
struct ck_item {
	uint8_t  type;             /* CKI_* */
	uint8_t  flags;
	uint8_t  level;            /* CKI_FMINNER */
	uint64_t index;            /* free-map leaf or inner node */
	struct ed_bnode *node;     /* CKI_BT */
	struct ed_mptr old;        /* where it was: freed when the checkpoint is durable */
	uint64_t sector;           /* where it is written (0: nowhere - a uniform leaf, or gone) */
	uint64_t marker;           /* not written: the ZERO/ONES pointer that stands for it */
	const void *src;           /* the page written */
};

/* ---- one mounted unit ------------------------------------------------------------ */
enum ed_ckstate { CK_IDLE = 0, CK_WAIT, CK_FLUSH1, CK_WRITE, CK_CARRY, CK_ZERO, CK_FLUSH2, CK_SUPER };

struct ed_disk {
	struct exodisk *ed;
	bool     mounted;
	bool     closing;          /* shutdown requested: no new operations */
	bool     closed;
	uint16_t unit;
	struct ed_super sb;        /* the superblock as last written */
	uint64_t nsectors, data_start;
	uint64_t mem_pages;        /* kernel pages this unit holds */
	struct ed_bm fm;           /* conservative free map (exported): 1 = allocated */
	struct ed_bm dfm;          /* what the disk says: a delta against fm */
	uint64_t nonce, nstamps;   /* version stamps of this mount */
	/* the binding tree */
	struct ed_bnode *bt;       /* its root, always resident (NULL: empty tree) */
	struct ed_mptr bt_root;    /* where the root is on disk */
	uint32_t bt_height;
	uint64_t bt_count;         /* records */
	uint32_t bt_resident, bt_dirty, bt_loading;
	uint32_t bt_budget;        /* clean nodes kept in memory */
	struct ed_bnode *bt_lru_head, *bt_lru_tail;
	struct ed_bnode *bt_free;  /* unused descriptors */
	void    *bt_descpages;     /* pages of descriptors, chained through their first word */
	struct ed_bnode *bt_spare; /* whole nodes kept for splits made at a completion */
	uint32_t bt_nspare;
	/* the free map on disk */
	uint32_t fmt_height;
	struct ed_mptr fmt_root;
	struct ed_spa fmt_img[ED_FMT_MAX_HEIGHT + 1];   /* inner pages by level, by index */
	struct ed_bm fm_dirty;     /* leaves whose durable bits changed since the checkpoint */
	struct ed_bm unw;          /* application sectors not written since allocated (unwritten.c) */
	struct ed_bm unw_done;     /* ... written since, not yet logged durable */
	struct ed_bm unw_fl;       /* ... which the running flush cycle makes durable */
	/* Flush cycles (exodisk.c): requests waiting for the next cycle, those
	 * the running one answers, its state, where its `written` ranges have
	 * got to, and the device flush. */
	struct ed_io *fl_q, *fl_cur;
	int      fl_state;         /* FL_IDLE, FL_FLUSH, FL_LOG */
	bool     fl_took;          /* the cycle took the writes done before it began */
	uint64_t fl_pos;           /* next sector of unw_fl to name in a record (below it,
	                            * what the cycle named is durable as written) */
	uint64_t fl_pos_next;      /* ... once the record in flight is durable */
	bool     log_fl;           /* the record in flight names `written` ranges */
	uint64_t ck_carry_pos;     /* a checkpoint's carry records: next sector of the view, */
	uint64_t ck_carry_used;    /* ... the log sectors they took, */
	uint32_t ck_ncarry;        /* ... how many, */
	int      ck_carry_err;     /* ... and the error of the last (ed_ckpt_sync) */
	bool     log_carry;        /* the record in flight is a carry record */
	bool     log_unsure;       /* the last record written failed, and may be on the disk
	                            * all the same: until a later one is durable, a crash
	                            * could replay it (commit.c) */
	struct ed_bm held;         /* sectors let go meanwhile, kept allocated (freemap.c) */
	bool     ck_took_fl;       /* the checkpoint's first flush took unw_done as unw_fl */
	uint64_t ck_carry_min;     /* the carry plan (unwritten.c): runs this long are carried, */
	uint64_t ck_carry_room;    /* ... and this many more half as long, */
	uint64_t z_room0;          /* ... (that many at the plan) */
	/* zeroing what the carry records have no room for (zero.c) */
	bool     zgate;            /* writes to application sectors wait (zwait) */
	bool     z_started;        /* ... none was in flight: the zeros are being written */
	bool     z_later;          /* a home write or a header sector's write was put off */
	uint32_t app_wr;           /* writes to application sectors in flight */
	struct ed_io *zwait, *zwait_tail;
	uint64_t z_carry_end, z_room, z_scan, z_start, z_sub, z_end;
	void    *z_page;           /* a page of zeros */
	uint64_t st_unw_zeroed;    /* sectors checkpoints zeroed */
	uint64_t st_unw_zero_ckpts; /* checkpoints that zeroed some */
	uint64_t st_carried;       /* carry records the mount read (st_replayed counts the others) */
	struct blkreq fl_req;
	uint64_t st_unw_records;   /* records that named `written` ranges or carried the set */
	uint64_t st_unw_reads;     /* reads that met some: run by run (dataio.c) */
	uint64_t fm_over[ED_FM_MAX_OVER];   /* leaves whose pointer only the superblock has: */
	uint32_t fm_nover;         /* the inner pages above them on disk are older */
	uint64_t meta_pages;       /* tree pages on disk */
	uint64_t meta_cursor;      /* where the next tree page is looked for */
	/* commit log */
	uint64_t log_head;         /* offset where the next record goes */
	uint64_t log_used;         /* sectors of live records since the checkpoint */
	uint64_t log_seq;
	uint8_t  log_chain[16];
	struct ed_io *commitq, *commitq_tail;
	struct ed_io *batch;       /* the records' operations, in flight */
	bool     log_busy;
	uint8_t *loghdr;           /* a page: the record header */
	struct ed_pvec logimg;     /* the record's images */
	struct blk_seg *logseg;    /* a page of segments */
	struct blkreq logreq;
	uint32_t batch_nsect;
	uint64_t batch_cost;        /* log sectors the record uses, wrap gap included */
	uint64_t batch_next;        /* log_head after it */
	uint8_t *tmp;              /* a page: images being encoded, records being parsed */
	/* home writes still needed or in flight */
	uint32_t nhome;
	/* checkpoint */
	int      ck;               /* enum ed_ckstate */
	bool     ck_wanted;
	bool     ck_clean;         /* this checkpoint ends a shutdown */
	bool     ck_nospace;       /* the last one found no room for the trees' pages */
	uint32_t ck_hold;          /* the checker is looking: no commit or checkpoint starts */
	struct ed_pvec ck_items;   /* the plan: struct ck_item */
	uint32_t ck_nitems, ck_next;
	struct ed_mptr ck_gone[16];   /* pages dropped by a checkpoint that failed */
	uint32_t ck_gone_n;
	uint64_t ck_written;       /* sectors this checkpoint wrote */
	struct ed_super ck_sb;
	struct blkreq ckreq;
	struct blk_seg *ckseg;     /* a page of segments */
	uint8_t *cksec;            /* a page: superblock staging */
	struct ed_io *ck_waiters;  /* shutdown and checkpoint requests this checkpoint ends */
	struct ed_io *ck_later;    /* checkpoint requests made while it was running: the next one */
	int32_t  ck_error;
	/* statistics */
	uint64_t st_commits, st_records, st_homes, st_ckpts, st_ckpt_sectors, st_ckpt_last;
	uint64_t st_replayed, st_redone;   /* at mount: log records applied, homes rewritten */
	uint64_t st_mount_reads, st_mount_ticks, st_meta_reads;
	/* A damaged log record found at mount (find_lost in mount.c): its
	 * number and sector, and the valid records after it that could not be
	 * applied, with the blocks and ranges they named. */
	struct {
		uint64_t seq, at, later, last_seq, blocks, ranges;
	} lost;
	/* The newest checkpoint did not verify and the mount fell back to the
	 * one before it (open_disk in mount.c): the superblock not used, the
	 * sector that failed (that superblock, or a tree page it names), its
	 * generation and the first log record it did not cover (both
	 * 0 if the superblock itself failed), and the generation used.  After
	 * replay, lost: records only the newer checkpoint held (the log no
	 * longer has them; UINT64_MAX if the newer superblock is unreadable).
	 * io: the sector could not be read at all, ED_MOUNT_READ_TRIES times. */
	struct {
		bool fell;
		bool io;        /* the newer's page could not be read (a media error) */
		uint64_t sb, at, gen, seq, used_gen, lost;
	} fell;
};

/* ---- the core ---------------------------------------------------------------------- */
struct exodisk {
	struct ed_env env;
	struct ed_config cfg;
	struct ed_keys keys;
	struct ed_disk *disk[BLK_MAX_UNITS];
	/* cache */
	struct ed_pvec ents;       /* struct ed_entry[cache_entries] */
	struct ed_pvec entpages;   /* the entries' data pages */
	struct ed_pvec hashv;      /* int32_t buckets, cache_entries of them */
	int32_t  lru_head, lru_tail, free_head;
	/* operations */
	struct ed_pvec ios;
	int32_t  io_free;
	struct ed_bounce *bounce;  /* cfg.nbounce of them, in a page */
	struct ed_io *bounce_waiters, *bounce_waiters_tail;
	/* clients */
	struct ed_client *clients[ED_MAX_CLIENTS];
	/* proxies and maps */
	struct ed_pvec proxies;
	struct ed_pvec maps;
	uint32_t nmaps_live;
	/* the exported pages of free-map leaves that are all free / all allocated */
	void    *zero_page, *ones_page;
	/* scratch range lists */
	struct ed_pvec scratch;
	uint32_t scratch_top;
	/* binding-tree pages read in so far: a request that waited for one
	 * retries at once if this moved meanwhile */
	uint64_t meta_loads;
	/* callers asleep until no checkpoint or log write is under way (the
	 * live checker): the completions that end one wake them */
	uint32_t idle_waiters;
	/* an orphaned entry waits for data I/O to sectors its undo frees */
	bool orphan_wait;
	/* where the last metadata that failed to verify (or to read) was */
	uint64_t bad_sector;
	/* counters for tests and the tool */
	uint64_t st_bounce_reads, st_cached_reads, st_sg_writes, st_format_sectors;
	uint64_t st_formatted[BLK_MAX_UNITS];   /* sectors formatting each unit wrote */
};

/* Tables all clients share - cache entries, proxies, exonode map windows -
 * (issue 17 A3): a client holding fewer than ED_SHARE_GUARANTEED of one
 * may take another while any is left; past that, only while more than
 * ed_share_reserve() of the table are left.  So however much other clients
 * take, a client that needs a few always gets them. */
#define ED_SHARE_GUARANTEED 4
static inline uint32_t ed_share_reserve(uint32_t table)
{
	return table / 8;
}

/* ---- shared helpers ------------------------------------------------------------------ */
void ed_lock(struct exodisk *ed);
void ed_unlock(struct exodisk *ed);

struct ed_disk *ed_disk_get(struct exodisk *ed, uint32_t unit, int *err);
bool ed_range_ok(const struct ed_disk *d, uint64_t start, uint64_t count);
uint64_t ed_new_stamp(struct ed_disk *d, const struct ed_keys *k);

/* freemap.c: the two free maps of a unit, and room for the trees' pages.
 * fm is what applications see and allocations check; dfm is the durable
 * map.  Claims and releases are checked (and memory taken) before anything
 * changes: ed_fm_claim_check() then ed_fm_claim(). */
int  ed_fm_init(struct exodisk *ed, struct ed_disk *d);
void ed_fm_destroy(struct ed_disk *d);
bool ed_fm_any(struct ed_disk *d, uint64_t start, uint64_t count);
int  ed_fm_claim_check(struct ed_disk *d, uint64_t start, uint64_t count);
void ed_fm_claim(struct ed_disk *d, uint64_t start, uint64_t count);
/* Release what only the conservative map holds over the range (fm &= dfm). */
void ed_fm_release_uncommitted(struct ed_disk *d, uint64_t start, uint64_t count);
void ed_fm_release_held(struct ed_disk *d);
/* Memory for a committed record's changes, then the changes (at completion). */
int  ed_fm_commit_prepare(struct ed_disk *d, const struct ed_range *r, uint32_t nalloc,
                          uint32_t nfree);
void ed_fm_commit(struct ed_disk *d, const struct ed_range *r, uint32_t nalloc, uint32_t nfree);
/* The durable map alone (mount replay, checkpoints): marks leaves dirty. */
int  ed_dfm_set(struct ed_disk *d, uint64_t start, uint64_t count);
int  ed_dfm_clear(struct ed_disk *d, uint64_t start, uint64_t count);
uint64_t ed_fm_free_sectors(const struct ed_disk *d);
/* Free sectors applications cannot have: what the next checkpoint may need
 * (with `more` dirty pages), and the slack that lets write-backs go on. */
uint64_t ed_fm_ckpt_need(const struct ed_disk *d, uint64_t more);
uint64_t ed_fm_slack(const struct ed_disk *d);
uint64_t ed_fm_ckpt_cap(const struct ed_disk *d);
uint64_t ed_fm_reserve(const struct ed_disk *d);
void ed_fm_link(struct ed_disk *d);
/* Uniform leaves of the range become markers again (memory follows what is stored). */
void ed_fm_tidy(struct ed_disk *d, uint64_t start, uint64_t count);
/* Mount: a change to both maps while they are one (dfm shares fm). */
int  ed_fm_mount_change(struct ed_disk *d, uint64_t start, uint64_t count, bool set);
/* A free run of n pages (8 sectors each) for the trees: its first sector,
 * claimed in both maps, or 0. */
uint64_t ed_mspace_alloc(struct ed_disk *d, uint32_t n, uint32_t *got);
/* The exported page i of the map (a shared zero or ones page for uniform leaves). */
void *ed_fm_export_page(struct exodisk *ed, struct ed_disk *d, uint64_t i);

/* btree.c: the binding tree.  Lookups in a request return ED_E_WAIT when
 * they need a page that is being read (the request is retried); _sync forms
 * wait (format, mount, check). */
int  ed_bt_init(struct ed_disk *d);
void ed_bt_destroy(struct ed_disk *d);
int  ed_bt_get(struct ed_disk *d, uint64_t sector, struct ed_vtrec *out);
int  ed_bt_get_sync(struct ed_disk *d, uint64_t sector, struct ed_vtrec *out);
/* The first binding at or after `from`: 0, or ED_E_NOTBOUND at the end. */
int  ed_bt_next_sync(struct ed_disk *d, uint64_t from, struct ed_vtrec *out);
/* Before a record goes to the log: the leaf of each changed binding is
 * resident and pinned (WAIT if a read had to start), and spare nodes are
 * kept for splits, so that applying the record at its completion cannot
 * fail.  ed_bt_unpin after applying. */
int  ed_bt_pin(struct ed_disk *d, uint64_t sector, struct ed_bnode **leaf);
void ed_bt_unpin(struct ed_disk *d, struct ed_bnode *leaf);
void ed_bt_spares_trim(struct ed_disk *d);
int  ed_bt_reserve(struct ed_disk *d, uint32_t inserts);
void ed_bt_put(struct ed_disk *d, uint64_t sector, uint64_t stamp, uint8_t kind, uint8_t nsect);
void ed_bt_del(struct ed_disk *d, uint64_t sector);
int  ed_bt_put_sync(struct ed_disk *d, uint64_t sector, uint64_t stamp, uint8_t kind, uint8_t nsect);
int  ed_bt_del_sync(struct ed_disk *d, uint64_t sector);
void ed_bt_evict(struct ed_disk *d);
/* Every page of the tree, read in as needed: fn(arg, sector, 0), or the
 * error of a page that does not verify (the checker). */
int  ed_bt_walk_sync(struct ed_disk *d, void (*fn)(void *arg, uint64_t sector, int err), void *arg);
/* Checkpoints: drop emptied nodes, list what to write (children first),
 * seal a node written at a sector into its parent, and finish. */
void ed_bt_cleanup(struct ed_disk *d, void (*gone)(struct ed_disk *, const struct ed_mptr *));
int  ed_bt_plan(struct ed_disk *d, int (*add)(struct ed_disk *, struct ed_bnode *));
void ed_bt_seal(struct ed_disk *d, struct ed_bnode *n, const uint8_t tag[16]);
void ed_bt_restore(struct ed_disk *d, struct ed_bnode *n);
void ed_bt_clean(struct ed_disk *d, struct ed_bnode *n);
struct ed_mptr *ed_bt_ptr_of(struct ed_disk *d, struct ed_bnode *n);

/* fmtree.c: the free map's tree on disk. */
uint32_t ed_fmt_height(uint64_t nleaves);
int  ed_fmt_load(struct ed_disk *d);
void ed_fmt_destroy(struct ed_disk *d);
/* The pointer to node (level, index): level 0 are leaves; a pointer in a
 * level-(level+1) image, or the root.  make: create images on the way. */
struct ed_mptr *ed_fmt_ptr(struct ed_disk *d, uint32_t level, uint64_t index, bool make);
uint8_t *ed_fmt_image(struct ed_disk *d, uint32_t level, uint64_t index, bool make);
void ed_fmt_each_page(struct ed_disk *d, void (*fn)(void *arg, uint64_t sector, int err), void *arg);
uint64_t ed_fmt_level_nodes(const struct ed_disk *d, uint32_t level);
/* An inner node became a ZERO/ONES pointer: its image goes. */
void ed_fmt_drop_image(struct ed_disk *d, uint32_t level, uint64_t index);

/* cache.c */
int  ed_cache_init(struct exodisk *ed);
void ed_cache_free(struct exodisk *ed);
struct ed_entry *ed_cache_ent(struct exodisk *ed, uint32_t i);
struct ed_entry *ed_cache_lookup(struct exodisk *ed, uint16_t unit, uint64_t sector);
/* Find the entry whose block contains `sector` (exonode blocks span sectors). */
struct ed_entry *ed_cache_lookup_cover(struct exodisk *ed, uint16_t unit, uint64_t sector);
struct ed_entry *ed_cache_alloc(struct exodisk *ed, struct ed_client *c, uint16_t unit,
                                uint64_t sector, uint8_t kind, uint8_t nsect, int *err);
void ed_cache_touch(struct exodisk *ed, struct ed_entry *e);
void ed_cache_mark(struct exodisk *ed, struct ed_entry *e);
int  ed_cache_hold(struct exodisk *ed, struct ed_entry *e, struct ed_client *c);
void ed_cache_unhold(struct exodisk *ed, struct ed_entry *e, int32_t cslot);
void ed_cache_evict(struct exodisk *ed, struct ed_entry *e);
bool ed_cache_evictable(const struct ed_entry *e);

/* iob.c */
/* An operation's life: alloc (no side effects yet), start (takes the pin,
 * posts ED_PENDING, counts as pending), then exactly one finish (posts the
 * status, releases the pin).  abort returns an io that was never started. */
struct ed_io *ed_io_alloc(struct exodisk *ed, struct ed_client *c, int type, int *err);
void ed_io_start(struct exodisk *ed, struct ed_io *io, struct ed_args *a);
void ed_io_finish(struct exodisk *ed, struct ed_io *io, int32_t status);
void ed_io_abort(struct exodisk *ed, struct ed_io *io);
struct ed_io *ed_io_at(struct exodisk *ed, uint32_t i);
/* An asynchronous operation that completed at once: post, keep no pin. */
void ed_post_now(struct exodisk *ed, struct ed_args *a, int32_t status);
/* Is data I/O in flight to any sector of the range? */
bool ed_io_busy_range(struct exodisk *ed, uint16_t unit, uint64_t start, uint64_t count);
int  ed_sync_io(struct exodisk *ed, int unit, int op, int flags, uint64_t sector,
                uint32_t nsect, struct blk_seg *seg, uint32_t nseg);
int  ed_sync_rw(struct exodisk *ed, int unit, int op, uint64_t sector, uint32_t nsect, void *buf);
/* Up to ED_SYNC_MANY transfers at once (the queue can sort them), waited for. */
#define ED_SYNC_MANY 32
/* Log sectors kept free for a checkpoint's carry records (unwritten.c):
 * up to 4 records of 250 runs of unwritten sectors on a log of 512 sectors
 * or more, 1 record on a smaller one. */
#define ED_LOG_CARRY_RESERVE(d) ((d)->sb.log_len >= 512 ? 40u : 16u)
#define ED_LOG_CARRY_MAX(d)     ((d)->sb.log_len >= 512 ? 4u : 1u)
enum { FL_IDLE = 0, FL_FLUSH, FL_LOG };
#define ED_MOUNT_READ_TRIES 3   /* a tree page the disk fails to read, tried again (mount.c) */
#define ED_MOUNT_RETRY_MS  50   /* ... after a pause of this, doubled each time */
struct ed_xfer {
	uint64_t sector;
	uint32_t nsect;
	void    *buf;
};
int  ed_sync_many(struct exodisk *ed, int unit, int op, const struct ed_xfer *x, uint32_t n);

/* refs.c */
void ed_refs(const struct ed_entry *e, const uint8_t *img, bool dealloc, struct ed_rl *out);
void ed_refs_slot(struct ed_xnhdr *x, struct ed_rl *out);

/* commit.c, home.c, ckpt.c */
void ed_commit_queue(struct exodisk *ed, struct ed_disk *d, struct ed_io *io);
void ed_commit_kick(struct exodisk *ed, struct ed_disk *d);
void ed_home_need(struct exodisk *ed, struct ed_disk *d, struct ed_entry *e);
void ed_home_try(struct exodisk *ed, struct ed_entry *e);
void ed_stage_release(struct exodisk *ed, struct ed_entry *e);
void ed_sg_next(struct exodisk *ed, struct ed_entry *e);
void ed_ckpt_request(struct exodisk *ed, struct ed_disk *d);
void ed_ckpt_progress(struct exodisk *ed, struct ed_disk *d);
int  ed_ckpt_sync(struct exodisk *ed, struct ed_disk *d, bool clean);
int  ed_super_sync(struct exodisk *ed, struct ed_disk *d);
/* Would the changes of this many more dirty tree pages still fit the disk? */
bool ed_ckpt_room(struct ed_disk *d, uint64_t more_pages);
/* Dirty pages beyond which a checkpoint is started. */
bool ed_ckpt_due(const struct ed_disk *d);
/* Pages of one unit, counted (memory per unit). */
void *ed_dpage_alloc(struct ed_disk *d);
void  ed_dpage_free(struct ed_disk *d, void *p);
/* Wake requests waiting for a tree page; kick what waited. */
void ed_meta_loaded(struct exodisk *ed, struct ed_disk *d);
/* A checkpoint or log write ended: wake whoever sleeps until none is under way. */
void ed_idle_wake(struct exodisk *ed);
/* With the lock held: let it go, sleep until a completion (env.sleep, or
 * env.wait where the environment has no sleep), take it again.  Nonzero
 * when the sleep was cut short (the caller stops). */
int ed_block(struct exodisk *ed);

/* unwritten.c: application sectors not written since they were allocated */
void ed_unw_init(struct ed_disk *d);
void ed_unw_destroy(struct ed_disk *d);
int  ed_unw_prepare(struct ed_disk *d, uint64_t start, uint64_t count);
void ed_unw_mark(struct ed_disk *d, uint64_t start, uint64_t count);
bool ed_unw_any(const struct ed_disk *d, uint64_t start, uint64_t count);
bool ed_unw_pending(const struct ed_disk *d, uint64_t start, uint64_t count);
void ed_unw_written(struct ed_disk *d, uint64_t start, uint64_t count);
void ed_unw_gone(struct ed_disk *d, uint64_t start, uint64_t count);
void ed_unw_free(struct ed_disk *d, uint64_t start, uint64_t count);
uint64_t ed_unw_run(const struct ed_disk *d, uint64_t from, uint64_t end, bool *unwritten);
bool ed_unw_durable_runs(struct ed_disk *d, uint64_t start, uint64_t count, uint64_t fl_from,
                         struct ed_rl *out);
void ed_unw_flushed_runs(struct ed_disk *d, uint64_t *pos, struct ed_rl *out);
uint64_t ed_unw_carry_run(const struct ed_disk *d, uint64_t s, bool *in);
bool ed_unw_carried(const struct ed_disk *d, uint64_t len, uint64_t *room);
void ed_unw_carry_plan(struct ed_disk *d, uint64_t cap);
void ed_unw_carry_runs(struct ed_disk *d, uint64_t *pos, struct ed_rl *out);
bool ed_unw_cycle_begin(struct ed_disk *d);
void ed_unw_tidy_all(struct ed_disk *d);
void ed_unw_cycle_end(struct ed_disk *d);
int  ed_unw_replay(struct ed_disk *d, uint64_t start, uint64_t count, bool unwritten);
/* exodisk.c: flush cycles (ED_OP_FLUSH, and FUA writes that met unwritten
 * sectors): a device flush, then a record of what it made durable. */
void ed_flush_queue(struct exodisk *ed, struct ed_disk *d, struct ed_io *io);
void ed_flush_kick(struct exodisk *ed, struct ed_disk *d);
void ed_flush_logged(struct exodisk *ed, struct ed_disk *d, int status);
/* commit.c / ckpt.c: a checkpoint's carry records */
bool ed_log_carry(struct exodisk *ed, struct ed_disk *d);
uint32_t ed_log_carry_cap(void);     /* runs one carry record holds */
void ed_ckpt_carried(struct exodisk *ed, struct ed_disk *d, int status);
/* zero.c: the runs carry records have no room for are zeroed */
bool ed_zero_begin(struct exodisk *ed, struct ed_disk *d);
void ed_zero_kick(struct exodisk *ed, struct ed_disk *d);
void ed_zero_open(struct exodisk *ed, struct ed_disk *d);
int  ed_zero_sync(struct exodisk *ed, struct ed_disk *d);
void ed_ckpt_zeroed(struct exodisk *ed, struct ed_disk *d, int status);
/* dataio.c: writes that waited at the gate go */
void ed_io_unpark(struct exodisk *ed, struct ed_disk *d);

/* mount.c: looking at a disk without mounting it (the checker) */
struct ed_logview {
	struct exodisk *ed;
	struct ed_disk *d;
	struct ed_pvec pages;      /* the log region, a page per 8 sectors ... */
	uint8_t *loaded;           /* ... read in chunks when first needed */
	uint64_t len;              /* sectors */
	uint64_t nrec;             /* valid records from the checkpoint on */
	uint64_t used;             /* log sectors they take, wrap gap included */
	int      err;              /* a read of the log failed */
};
uint8_t *ed_log_sector(struct ed_logview *lv, uint64_t s);
struct ed_logrec_iter {
	uint64_t pos, seq, left;
	uint8_t  chain[16];
	uint32_t nimg;
	struct ed_logimg img[ED_LOG_MAX_IMG];
	uint64_t img_sector[ED_LOG_MAX_IMG];   /* offsets in the log region */
};
int  ed_disk_inspect(struct exodisk *ed, int unit, struct ed_disk **out, struct ed_logview *lv);
void ed_disk_release(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv);
void ed_log_iter_begin(struct ed_disk *d, const struct ed_logview *lv, struct ed_logrec_iter *it);
bool ed_log_iter_next(struct exodisk *ed, struct ed_disk *d, struct ed_logview *lv,
                      struct ed_logrec_iter *it);

/* objects.c */
struct ed_obj {
	uint8_t kind;              /* ED_PK_* */
	struct ed_entry *e;        /* extent header / exonode block (not for proxies) */
	struct ed_xnhdr *x;        /* the exonode's slot in e->cur */
	uint16_t slot;
	struct ed_proxy *p;
	struct ed_vtrec bind;      /* ED_E_NOTCACHED: the binding found */
};
int  ed_obj_find(struct exodisk *ed, const struct ed_protector *prot, struct ed_obj *o);
int  ed_obj_access(struct exodisk *ed, const struct ed_obj *o, const struct ed_protector *prot,
                   bool write);
int  ed_xn_access(struct exodisk *ed, struct ed_entry *e, uint16_t slot, const struct ed_cap *cap,
                  bool write);
int  ed_ent_modifiable(const struct ed_entry *e);
void ed_ent_changed(struct exodisk *ed, struct ed_entry *e, struct ed_client *c);
int  ed_obj_coverage(struct exodisk *ed, const struct ed_obj *o, struct ed_rl *out);
/* Releasing an uncommitted (never durable) allocation and forgetting an
 * entry that was never committed. */
void ed_ent_discard(struct exodisk *ed, struct ed_entry *e);
void ed_ent_revert(struct exodisk *ed, struct ed_entry *e);
void ed_ent_orphan(struct exodisk *ed, struct ed_entry *e);
/* Orphans waiting for data I/O to their sectors: try them again. */
void ed_orphans_retry(struct exodisk *ed);

/* extops.c, xnops.c, dataio.c, proxy.c, xnmap.c */
int64_t ed_op_extent(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a);
int64_t ed_op_exonode(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a);
int64_t ed_op_readin(struct exodisk *ed, struct ed_client *c, struct ed_args *a, uint8_t kind);
int64_t ed_op_writeback(struct exodisk *ed, struct ed_client *c, struct ed_args *a, uint8_t kind);
int64_t ed_op_io(struct exodisk *ed, struct ed_client *c, struct ed_args *a);
void    ed_bounce_kick(struct exodisk *ed);
int64_t ed_op_proxy(struct exodisk *ed, struct ed_client *c, struct ed_args *a);
int     ed_proxy_find(struct exodisk *ed, const struct ed_protector *prot, struct ed_proxy **pp);
int64_t ed_proxy_op(struct exodisk *ed, struct ed_client *c, int op, struct ed_args *a,
                    struct ed_proxy *p);
void    ed_proxy_sync(struct exodisk *ed, struct ed_entry *e);
void    ed_proxy_drop_client(struct exodisk *ed, int32_t cslot);
int64_t ed_op_map(struct exodisk *ed, struct ed_client *c, struct ed_args *a);
void    ed_map_sync(struct exodisk *ed, struct ed_entry *e, uint16_t state);
void    ed_map_drop_client(struct exodisk *ed, struct ed_client *c);

#endif
