/*
 * lfs_int.h - what lfs's files share: the mounted file system's state and
 * each file's functions.  Not for programs (lfs.h is the interface).
 *
 *   sum.c    checksums and the keyed MAC
 *   log.c    the log writer: partial segments, commits
 *   read.c   reading the log: the segment buffers, a read cache
 *   seg.c    segments: the usage table, the pool, space, release
 *   ckpt.c   checkpoints, mount and roll-forward, mkfs
 *   imap.c   the inode map, inodes in memory
 *   file.c   a file's blocks: pointers, reads, writes, truncation
 *   dir.c    directories
 *   ops.c    struct libfs_ops
 *   clean.c  the cleaner
 *   fsck.c   the checker
 *   multi.c  many processes on one lfs: the lock, handing the log over
 */
#ifndef USERFS_LFS_INT_H
#define USERFS_LFS_INT_H

#include <stddef.h>
#include <stdint.h>
#include "libos/kit/kit.h"
#include "libos/share.h"
#include "libos/vvol/vvol.h"
#include "userfs/lfs/format.h"
#include "userfs/lfs/lfs.h"

/* Return from the function if e failed. */
#define TRY(e) do { int e_ = (e); if (e_ < 0) return e_; } while (0)

#define LFS_ANCHOR_LEN  480u        /* the anchor exonode                        */
#define LFS_ENT_SUPER   1
#define LFS_ENT_VOL     2           /* and 3: the volume's descriptor and map    */
#define LFS_ENT_CP      4           /* and 5: the checkpoint copies              */
#define LFS_RC_SECT     128u        /* a read-cache chunk: 64 KiB                */
#define LFS_RC_N        64          /* chunks cached: 4 MiB                      */
#define LFS_DELTA_MAX   255u        /* sectors in one commit record              */
#define LFS_MAXBLK      (LFS_NDIRECT + LFS_NPTR + (uint64_t)LFS_NPTR * LFS_NPTR)
#define LFS_MAXFILE     (LFS_MAXBLK * LFS_BSIZE)

/* ---- the segment buffers -------------------------------------------------- */
struct lfs_lbuf {
	uint8_t *mem;             /* seg_sect sectors                               */
	uint64_t seg;             /* the segment it holds, 0: none                  */
	uint32_t base, valid;     /* sectors [base, valid) are the segment's contents
	                             (base: where the log was when it was mounted)   */
	struct vvol_place pl;     /* where the segment is on the disk               */
	struct edc_batch b;       /* its writes in flight                           */
	struct edc_slot slots[4];
};

/* ---- segments in memory ----------------------------------------------------- */
struct lfs_seg {
	struct lfs_sutent e;
	uint32_t tag;             /* cpseq durable when it was last written: kept
	                             while roll-forward from that one may read it    */
	uint8_t changed;          /* since the last commit                          */
	uint8_t dirty;            /* on the checkpoint's list (fs->cpl)             */
	uint16_t nsut;            /* usage table blocks in it, per fs->sutaddr: its
	                             table entry is e.live less their bytes        */
	uint8_t reserved;         /* the current or next segment                    */
	uint8_t cpzero;           /* live 0 in the newest durable checkpoint, and
	                             not written since: it may be written again      */
	uint8_t stuck;            /* in no candidate set (LFS_STUCK_*)              */
	uint8_t where;            /* which set it is in (seg.c: LFS_IN_*)           */
	uint32_t pos;             /* and its place there                            */
};
_Static_assert(sizeof(struct lfs_seg) == 32, "lfs_seg");
#define LFS_STUCK_LIVE     1      /* cleaned, yet still live: not chosen again      */
#define LFS_STUCK_CLEANING 2      /* chosen by the round under way                  */

/* The sets seg.c keeps the segments in, so that nothing that runs while
 * the file system works looks at every segment: the reusable ones, mapped
 * and not (lfs_seg_reusable), and the cleaner's candidates, a heap by age
 * (oldest first) per band of utilization. */
#define LFS_IN_NONE     0
#define LFS_IN_FREE     1         /* reusable, not mapped                      */
#define LFS_IN_POOL     2         /* reusable, mapped                          */
#define LFS_IN_CAND     3         /* + band: a cleaning candidate               */
#define LFS_NBAND       32
struct lfs_segset {
	uint32_t *v;
	uint32_t n, cap;
};

/* ---- the inode map in memory ------------------------------------------------ */
#define LFS_IMBITS ((LFS_PER_BLK + 63) / 64)   /* words of a block's entry bitmap */
struct lfs_imblk {
	struct lfs_imapent e[LFS_PER_BLK];
	uint64_t changed[LFS_IMBITS];  /* entries changed since the last commit     */
	uint64_t cpchg[LFS_IMBITS];    /* entries newer than the block's copy in the
	                                  log: the checkpoint record carries them
	                                  (ckpt.c)                                 */
	uint8_t inlist;           /* on the changed list                            */
	uint8_t dirty;            /* newer than its copy in the log                 */
	uint8_t move;             /* that copy is in a segment being cleaned: the
	                             next checkpoint writes the block              */
};

/* How many entries a block's bitmap (changed, cpchg) marks; and which:
 * their numbers within the block, into out.  By the set bits: a block has
 * few, and every commit and checkpoint of a cleaning round looks at each
 * changed block's. */
static inline uint32_t lfs_imbits_count(const uint64_t *bits)
{
	uint32_t c = 0;
	for (uint32_t w = 0; w < LFS_IMBITS; w++)
		c += (uint32_t)__builtin_popcountll(bits[w]);
	return c;
}
static inline uint32_t lfs_imbits_list(const uint64_t *bits, uint32_t *out)
{
	uint32_t n = 0;
	for (uint32_t w = 0; w < LFS_IMBITS; w++)
		for (uint64_t b = bits[w]; b != 0; b &= b - 1)
			out[n++] = w * 64 + (uint32_t)__builtin_ctzll(b);
	return n;
}

/* ---- an inode in memory ------------------------------------------------------------ */
struct lmap {                     /* an indirect block, loaded                 */
	uint64_t p[LFS_BSIZE / 8];    /* LFS_NPTR pointers, then the seal          */
	uint64_t dirty;
};

struct ldir;

struct lnode {
	uint32_t ino, gen;
	struct lfs_dinode d;
	uint8_t dirty;            /* d changed since written                        */
	uint8_t mapdirty;         /* an indirect block changed                      */
	uint8_t indirty;          /* on the dirty list                              */
	uint8_t freed;            /* unlinked and unopened: gone at the next commit */
	uint8_t gone;             /* open here, removed by another process: a
	                             stand-in, out of the hash, never written      */
	int32_t nref;             /* open handles and holds                         */
	struct lmap *ind, *dind;
	struct lmap **dc;         /* dind's children, LFS_NPTR of them             */
	struct ldir *dir;         /* a directory's contents and index               */
	struct lnode *hnext;      /* hash chain                                     */
	struct lnode *dnext;      /* dirty list                                     */
	struct lnode *lprev, *lnext;   /* LRU of the unreferenced, clean            */
};

/* ---- the file system --------------------------------------------------------------- */
struct lfs_rcent {
	uint64_t chunk;           /* lba / LFS_RC_SECT + 1; 0: empty               */
	uint32_t nsect;
	uint32_t age;
	uint8_t *mem;
	uint8_t pending;          /* read ahead: its read may be in flight         */
	uint8_t ahead;            /* read ahead and not used yet                   */
	struct edc_batch b;       /* ... here                                      */
	struct edc_slot slots[2];
};
#define LFS_RA_CHUNKS   4           /* chunks read ahead of a sequential reader   */

struct lfs {
	struct kit k;
	struct vvol v;
	struct lfs_super sb;
	uint8_t mackey[16];
	int rdonly;               /* mounted ro, or damage was found                */
	int err;                  /* a write failed: nothing more is committed       */
	int mounting, cleaning, in_commit, in_ckpt;
	/* options (lfs.h) */
	uint32_t pool_target;
	uint32_t clean_low;       /* cleanlo: the low mark's ceiling (clean.c)     */
	uint64_t cp_interval;     /* bytes of log between checkpoints               */
	int autoclean;
	uint64_t ac_mark;         /* new_bytes when autoclean last looked           */
	uint32_t clean_keep;      /* empty segments kept mapped while cleaning      */
	uint64_t clean_at;        /* new_bytes when autoclean last cleaned          */
	uint8_t ac_more;          /* autoclean stopped short: look at the next op   */
	uint8_t ac_going;         /* ... and go on to the high mark                 */
	uint8_t av_disk_short;    /* the disk has less room than the volume (seg.c)  */
	/* checkpoints */
	uint64_t cp_disk[2];      /* the copies' disk sectors (anchor extents)      */
	uint64_t cpseq;           /* of the newest durable checkpoint               */
	uint64_t since_cp;        /* log bytes since it                             */
	/* the log writer */
	struct lfs_lbuf buf[2];
	uint8_t *cleanbuf;        /* the cleaner's segments (clean.c), or NULL      */
	uint32_t clean_per;       /* segments in each half of cleanbuf              */
	struct edc_batch clean_b[2];   /* the reads of each half                    */
	struct edc_slot clean_slots[2][8];
	int cur;                  /* buf[cur] holds the current segment             */
	uint64_t seg, next;       /* the current segment and the one after it       */
	uint32_t ps, fill;        /* the open PS's header sector; its next free one  */
	struct lfs_psent *ent;    /* the open PS's trailer                          */
	uint32_t nent, entcap;
	uint64_t seq, prev, nonce;
	int group;                /* PSs closed since the last commit               */
	int unflushed;            /* ... some of them not yet flushed               */
	int undurable;            /* the last commit's PS is not yet flushed        */
	/* a checkpoint's proof (ckpt.c): what is written from proof_lba on */
	uint8_t cp_prove;         /* the commit starts it after its flush           */
	uint8_t proving;          /* close_ps sums each PS into proof_hash          */
	uint8_t proof_segs;       /* segments the log entered meanwhile             */
	uint64_t proof_lba, proof_hash;
	uint64_t pend;            /* bytes to be appended at the next commit (an
	                             estimate: inodes, directory and indirect blocks) */
	/* segments */
	struct lfs_seg **sutb;    /* [nsutblk]: each usage table block's segments
	                             (LFS_PER_BLK), allocated when first wanted:
	                             memory follows the segments used            */
	uint64_t *sutaddr;        /* where each SUT block is, per the last checkpoint */
	uint32_t nsutblk;
	uint8_t *sutdirty;        /* [nsutblk]: the block changed since the last
	                             checkpoint ...                                  */
	uint32_t *sutchg;         /* ... and the list of those (nsutchg)          */
	uint32_t nsutchg;
	uint32_t *cpl;            /* segments whose state changed since the last
	                             checkpoint (which then settles their cpzero) */
	uint32_t ncpl, cplcap;
	int cpl_all;              /* the list ran out of memory: look at all      */
	/* a cleaning round's checkpoint still on its way (ckpt.c, lfs_cp_settle) */
	uint8_t cp_pending;
	uint8_t cpf_sent;         /* its record's flush (cpf) is sent               */
	struct kit_flush cpf;
	uint8_t *cprec;           /* its record until written: bytes, sectors, copy */
	uint32_t cprec_n;
	uint8_t cprec_copy;
	uint32_t *cpw;            /* the segments it empties: reusable after cpf    */
	uint32_t ncpw, cpwcap;
	/* its COMMIT PS, held back while the flush of its group is on its way
	 * (log.c, lfs_dfr_issue): sectors [from, from + n) of buf[dfr_buf],
	 * written once that flush (dff) is done */
	uint8_t cp_defer;         /* this checkpoint's commit may be held back      */
	uint8_t dfr_next;         /* the next COMMIT PS closed is held back         */
	uint8_t dfr, dfr_buf;     /* one is held back, in that buffer               */
	uint32_t dfr_from, dfr_n;
	struct kit_flush dff;
	uint32_t *schg;           /* segments changed since the last commit         */
	uint32_t nschg, schgcap;
	uint8_t *sutload;         /* [nsutblk]: the block's entries are in sut[]    */
	uint32_t nsutload;        /* how many are                                    */
	uint32_t sutbad;          /* blocks that could not be read (fsck says so)    */
	/* Roll-forward ended at a PS that fails its checks, yet a valid
	 * commit lies beyond it: damage, not a torn tail (ckpt.c, "was it
	 * the tail?").  seq 0: none found.  fsck says so. */
	struct { uint64_t seq, lba, later_seq, later_lba; } logbad;
	uint64_t roll_end;        /* a head another process left durable (multi.c):
	                             the log ending there is its end; 0: unknown  */
	uint64_t hwm;             /* segments from here on were never used: not in
	                             any set, free (the checkpoint keeps it)        */
	struct lfs_segset free, pool;        /* reusable: unmapped, mapped   */
	struct lfs_segset cand[LFS_NBAND];   /* candidates, heaps by mtime   */
	uint64_t live_total;      /* the sum of the segments' live bytes            */
	uint64_t optime;          /* the time of the operation under way (begin);
	                             0: none (lfs_optime reads the clock)           */
	struct ed_protector prot; /* the protector of the last exonode the log used  */
	uint64_t prot_leaf;       /* ... (leaf, slot): 0, none yet (lfs_prot)       */
	uint16_t prot_slot;
	uint64_t av_segs;         /* lfs_avail's count of writable segments ...     */
	int av_valid;             /* ... while this says it is current              */
	/* the inode map */
	struct lfs_imblk **im;    /* [imcap]: loaded blocks                          */
	uint64_t *imaddr;         /* [imcap]: where each is, per the last checkpoint */
	uint32_t nimblk, imcap;   /* blocks in use (max_ino's), room                */
	uint32_t nimdirty;        /* blocks with dirty set (lfs_imap_dirty)         */
	uint32_t nimcp;           /* cpchg bits set in the loaded blocks            */
	struct lfs_dimap *imin;   /* entries the checkpoint record carried whose
	                             blocks are not loaded yet (imap_read applies
	                             them)                                          */
	uint32_t nimin;
	uint32_t *imchg;          /* blocks with changed entries                    */
	uint32_t nimchg, imchgcap;
	uint32_t max_ino, free_head;
	uint64_t nfiles;
	/* inodes in memory */
	struct lnode **ih;        /* hash by number                                 */
	uint32_t nih;
	uint32_t nnodes;
	struct lnode *dirty;      /* changed inodes                                 */
	struct lnode *lru, *lru_tail;
	struct lnode *root;       /* held from the first walk (ops.c) on          */
	struct lfs_nslab *slabs;  /* inodes in memory come from these ...           */
	struct lnode *nfree;      /* ... and go back here (a node per create, and C
	                             libraries' malloc is slow with many blocks)   */
	/* the read cache */
	struct lfs_rcent rc[LFS_RC_N];
	uint32_t rcage;
	uint64_t recent[4];       /* where recent reads ended: reads near them read ahead */
	int nrecent;
	struct lfs_share *shares;
	uint64_t nshares_made, sharehint;
	struct lfs_stats st;
	/* other processes (multi.c) */
	struct share sh;
	int sh_stale;             /* catching up failed: read everything again      */
	uint64_t sh_jepoch, sh_jpos;   /* the shared journal of commit records,
	                             as far as we have applied it (multi.c)        */
	uint64_t sh_deaths;       /* holders seen dead, as the area counts them     */
	uint8_t scratch[LFS_BSIZE];
};

/* One file lent through proxies (share.c). */
struct lfs_share {
	uint32_t ino, gen;        /* the file                                       */
	uint64_t xn;              /* the exonode holding the map's extent (never
	                             written back)                                  */
	uint16_t slot;
	int dead;                 /* the file went: nothing more is published       */
	uint64_t map;             /* the map's first sector                         */
	uint64_t mapid;           /* its proxy: the token                           */
	struct ed_cap rc, wc;     /* every proxy of the share has these             */
	uint64_t *ids;            /* the data proxies now published                 */
	uint32_t nids;
	uint64_t pubgen;          /* the map's generation                           */
	uint64_t sig;             /* what the runs were when published              */
	struct lfs_share *next;
};

/* The state of one open file (struct libfs_ops.file_size). */
struct lfile {
	struct lnode *n;
	int flags;
	uint64_t dircookie;
};

static inline uint64_t lfs_segbytes(const struct lfs *fs)
{
	return (uint64_t)fs->sb.seg_sect * LFS_SECT;
}

static inline uint64_t lfs_seg_of(const struct lfs *fs, uint64_t lba)
{
	return lba / fs->sb.seg_sect;
}

/* ---- sum.c ---------------------------------------------------------------------- */
uint64_t lfs_sum64(const void *p, size_t n, uint64_t seed);   /* n a multiple of 8 */
uint32_t lfs_sum32(const void *p, size_t n);
uint64_t lfs_mac(const struct lfs *fs, const void *p, size_t n);
void lfs_derive_keys(struct lfs *fs);
void lfs_seal_block(void *blk, uint32_t magic, uint32_t index);   /* IMAP, SUT */
int  lfs_check_block(const void *blk, uint32_t magic, uint32_t index);
int  lfs_inode_ok(const struct lfs_dinode *d, uint32_t ino);
/* The seal of a directory or indirect block (format.h) of inode ino, block
 * (or indirect block) num; and is blk's seal right? */
uint64_t lfs_seal(const void *blk, uint32_t magic, uint32_t ino, uint64_t num);
int  lfs_sealed(const void *blk, uint32_t magic, uint32_t ino, uint64_t num);
void lfs_inode_seal(struct lfs_dinode *d);

/* ---- log.c ------------------------------------------------------------------------ */
int  lfs_log_init(struct lfs *fs);
void lfs_log_free(struct lfs *fs);
/* Room in the open PS for a block of nsect sectors, described by e: its
 * bytes (to fill in) and log address.  May close the PS and move to the
 * next segment.  NULL and *err on failure. */
uint8_t *lfs_log_append(struct lfs *fs, const struct lfs_psent *e, uint64_t *lba, int *err);
/* If the block e describes is the last one appended (at lba, oldn
 * sectors), grow it in place to newn sectors: its bytes; else NULL. */
uint8_t *lfs_log_extend(struct lfs *fs, const struct lfs_psent *e, uint64_t lba, uint32_t oldn,
                        uint32_t newn);
/* Close the open PS (write it), flags LFS_PS_*. */
int  lfs_log_close(struct lfs *fs, int flags);
/* From the open PS on, sum what the log writes into fs->proof_hash (a
 * checkpoint's proof: ckpt.c). */
void lfs_proof_start(struct lfs *fs);
/* Start the log at sector pos of segment seg (mkfs, mount); next: the
 * segment the log goes to after it (0: take one). */
int  lfs_log_start(struct lfs *fs, uint64_t seg, uint32_t pos, uint64_t next);
uint32_t lfs_trail_sect(uint32_t nent);
/* Write every dirty inode, block and table change, then a commit record:
 * durable when it returns. */
int  lfs_commit(struct lfs *fs);
/* The same; durable 0: written, not yet flushed (the next commit's first
 * flush covers it). */
int  lfs_commit_mode(struct lfs *fs, int durable);
/* What a commit appends before its record - directory and indirect
 * blocks, inodes, so that the inode map points at every inode - without
 * the record and the COMMIT PS: they are part of the group the next
 * commit ends (until then a mount does not see them). */
int  lfs_log_stage(struct lfs *fs);
/* Wait for the log's writes (a COMMIT PS held back is not one yet). */
int  lfs_log_wait(struct lfs *fs);
/* Write the COMMIT PS held back, once the flush before it is done (wait:
 * waiting for it; else only if it is done). */
int  lfs_dfr_issue(struct lfs *fs, int wait);
/* A flush, and the volume's map if it changed. */
int  lfs_harden(struct lfs *fs);
/* lfs_harden if anything written (a PS, a commit, a segment taken) is not
 * durable yet. */
int  lfs_harden_pending(struct lfs *fs);
uint64_t lfs_now(void);
/* The time for what an operation changes: one clock read per operation. */
static inline uint64_t lfs_optime(const struct lfs *fs)
{
	return fs->optime ? fs->optime : lfs_now();
}

/* ---- read.c ---------------------------------------------------------------------------- */
/* Read nsect sectors at log address lba into dst. */
int  lfs_read(struct lfs *fs, uint64_t lba, uint32_t nsect, void *dst);
/* The block ptr points at: LFS_BSIZE bytes (zeros past what was written). */
int  lfs_read_block(struct lfs *fs, uint64_t ptr, void *dst);
/* A segment's sectors [0, n) into dst, not through the cache (the cleaner). */
int  lfs_read_seg(struct lfs *fs, uint64_t seg, uint32_t n, void *dst);
/* Start reading segment seg whole into dst through batch b: 1 started
 * (edc_batch_wait ends it), 0 not (a log buffer may still write part of
 * it, or the request was refused: lfs_read_seg then). */
int  lfs_read_seg_start(struct lfs *fs, struct edc_batch *b, uint64_t seg, void *dst);
/* Forget cached chunks of segment seg (it is being reused or released). */
void lfs_rc_drop(struct lfs *fs, uint64_t seg);
void lfs_rc_free(struct lfs *fs);
/* Disk I/O at log address lba through the segment's leaf. */
int  lfs_io(struct lfs *fs, int write, uint64_t lba, void *mem, uint32_t nsect);
/* The protector of the volume's leaf exonode (leaf, slot): the last one is
 * kept, since deriving one hashes twice and the log's and the cleaner's
 * requests go through the same few leaves again and again. */
const struct ed_protector *lfs_prot(struct lfs *fs, uint64_t leaf, uint16_t slot);

/* ---- seg.c ---------------------------------------------------------------------------------- */
int  lfs_sut_init(struct lfs *fs);
/* Memory for block i of the table's entries (zeros until it is read). */
int  lfs_sut_mem(struct lfs *fs, uint32_t i);
void lfs_sut_free(struct lfs *fs);
/* Bytes became live (+) or dead (-) in the segment of lba. */
void lfs_seg_use_slow(struct lfs *fs, uint64_t lba, int64_t bytes);
static inline void lfs_seg_use(struct lfs *fs, uint64_t lba, int64_t bytes);
void lfs_seg_touch(struct lfs *fs, uint64_t seg);
/* The segment's table entry changed (its table block is written at the
 * next checkpoint), not for the commit record. */
void lfs_sut_dirty(struct lfs *fs, uint64_t seg);
/* Its reuse state may have changed: the next checkpoint looks at it. */
void lfs_seg_mark(struct lfs *fs, uint64_t seg);
/* Segment s's entry, its usage table block read first if it was not yet
 * (a mount reads none: they come in as they are wanted). */
struct lfs_seg *lfs_seg_load(struct lfs *fs, uint64_t s);
/* Segment s's entry in memory, as it is: its block must be there. */
static inline struct lfs_seg *lfs_sg(const struct lfs *fs, uint64_t s)
{
	return &fs->sutb[s / LFS_PER_BLK][s % LFS_PER_BLK];
}
static inline struct lfs_seg *lfs_seg(struct lfs *fs, uint64_t s)
{
	if (s < fs->hwm && fs->sutload[s / LFS_PER_BLK])
		return lfs_sg(fs, s);
	return lfs_seg_load(fs, s);
}
/* Most blocks go to the log's own segment, already on every list
 * (changed, checkpoint, dirty table block) and in no set: its bytes are
 * all that changes (lfs_seg_use_slow does the rest). */
static inline void lfs_seg_use(struct lfs *fs, uint64_t lba, int64_t bytes)
{
	uint64_t s = lfs_seg_of(fs, lba);
	if (bytes > 0 && s == fs->seg && fs->sutload[s / LFS_PER_BLK]) {
		struct lfs_seg *g = lfs_sg(fs, s);
		if (g->changed && g->dirty && g->reserved && g->where == LFS_IN_NONE &&
		    fs->sutdirty[s / LFS_PER_BLK]) {
			g->e.live += (uint32_t)bytes;
			fs->live_total += (uint64_t)bytes;
			g->e.mtime = lfs_optime(fs);
			g->cpzero = 0;
			return;
		}
	}
	lfs_seg_use_slow(fs, lba, bytes);
}
/* Segment s's entry to look at (reports, fsck): zeros for one never used. */
const struct lfs_seg *lfs_seg_peek(const struct lfs *fs, uint64_t s);
/* Have all the table's blocks that can matter been read (those below the
 * high-water mark)? */
int  lfs_sut_all_loaded(const struct lfs *fs);
/* Every block of the table in memory (fsck, the cleaner's marks, statfs). */
void lfs_sut_load_all(struct lfs *fs);
/* Something of the segment changed (live bytes, flags, mtime, reserved,
 * cpzero, tag, stuck): put it in the set it belongs to now. */
void lfs_seg_changed(struct lfs *fs, uint64_t seg);
/* Take it out of every set (before changing its mtime behind its back). */
void lfs_seg_unlist(struct lfs *fs, uint64_t seg);
/* Put every segment in its set (mkfs, mount: after the table is read). */
int  lfs_seg_sets_build(struct lfs *fs);
/* The sets against a look at every segment: mismatches (tests). */
uint64_t lfs_seg_sets_check(struct lfs *fs);
/* Tests set it: every checkpoint checks the sets (wrong: -EIO, read-only). */
extern int lfs_debug_sets;
/* The best candidates to clean, at most max, whose live bytes (with their
 * summaries' share) fit budget; taken out of the candidate sets. */
int  lfs_seg_choose(struct lfs *fs, uint64_t now, uint64_t budget, uint64_t *out, int max);
/* Segments emptied since the last checkpoint (it would make them reusable). */
uint64_t lfs_seg_waiting(struct lfs *fs, uint64_t *mapped);
/* Can the segment be written again (empty, and out of every roll-forward)? */
int  lfs_seg_reusable(const struct lfs *fs, uint64_t s);
/* A mapped, reusable segment for the log to go to next (0: none). */
uint64_t lfs_seg_take(struct lfs *fs);
/* Make sure `bytes` more can be written, and the commit and checkpoint
 * after them, cleaning if need be.  0 or -ENOSPC.  freeing: the change
 * frees space (unlink), and may use the last segment of slack. */
static inline int lfs_reserve(struct lfs *fs, uint64_t bytes, int freeing);
/* Segments the file system could still write: free on the disk, plus
 * reusable ones of its own. */
uint64_t lfs_free_segs(struct lfs *fs);
/* Count the writable segments again (fs->av_segs: lfs_avail). */
void lfs_avail_count(struct lfs *fs);
/* Log bytes that can be written before a checkpoint frees anything: the
 * rest of the current segment, the next one, and the writable segments
 * counted when the log last entered one (or a checkpoint freed some). */
static inline uint64_t lfs_avail(struct lfs *fs)
{
	if (!fs->av_valid)
		lfs_avail_count(fs);
	uint64_t sb = lfs_segbytes(fs);
	return (uint64_t)(fs->sb.seg_sect - fs->fill) * LFS_SECT + (fs->next ? sb : 0) +
	       fs->av_segs * sb;
}
/* What the next commit and checkpoint may take, with `bytes` more, in the
 * worst case: headers and trailers (1/16), a block's worth lost at each
 * segment's end, the inode map blocks changed and two more, every SUT
 * block, and a segment to spare. */
static inline uint64_t lfs_worst(struct lfs *fs, uint64_t bytes)
{
	uint64_t sb = lfs_segbytes(fs);
	uint64_t b = fs->pend + bytes;
	b += b / 16 + (b / sb + 2) * LFS_BSIZE;
	b += (fs->nimdirty + 2 + fs->nsutblk) * LFS_BSIZE + 8 * LFS_SECT;
	return b + sb;
}
/* lfs_reserve when the room is not there as counted: look again, clean. */
int  lfs_reserve_slow(struct lfs *fs, uint64_t bytes, int freeing);
static inline int lfs_reserve(struct lfs *fs, uint64_t bytes, int freeing)
{
	/* A change that frees space may use the last segment of slack that
	 * every other keeps, so that a full file system can be emptied. */
	if (!fs->rdonly && !fs->err &&
	    lfs_avail(fs) >= lfs_worst(fs, bytes) + (freeing ? 0 : lfs_segbytes(fs)))
		return 0;
	return lfs_reserve_slow(fs, bytes, freeing);
}
/* Give reusable segments beyond the pool back to the exodisk. */
int  lfs_release(struct lfs *fs);
/* The SUT block for checkpoints: 0, or -ENOMEM if its entries could not
 * be read into memory (then the file system is read-only). */
int  lfs_sut_block(struct lfs *fs, uint32_t i, void *blk);
/* Tests set it: while it is not 0, allocations of a usage table block's
 * entries fail, as without memory (each failure adds one to it). */
extern int lfs_debug_sut_nomem;
/* Tests: proof_ok finds no memory (the mount must say so, not blame the
 * records). */
extern int lfs_debug_proof_nomem;

/* ---- ckpt.c ------------------------------------------------------------------------------------ */
int  lfs_checkpoint(struct lfs *fs, int clean);
/* A cleaning round's checkpoint returns with the flush before its held
 * COMMIT PS on its way and its record in memory; this carries it on
 * (waiting, or with wait 0 only as far as the flushes are done): the
 * COMMIT PS and the record written, the second flush sent and ended, and
 * then the segments the round emptied are reusable.  Everything that needs
 * the disk ordered after the record - a commit, a flush, a round, a
 * checkpoint, handing the lock to another process, the log taking a
 * segment - calls it first.  0 or the flush's error. */
int  lfs_cp_settle(struct lfs *fs, int wait);
/* Forget a checkpoint in flight (the file system is going away): wait for
 * the flushes the kernel will report into this struct, write nothing. */
void lfs_cp_abandon(struct lfs *fs);
int  lfs_load(struct lfs *fs);              /* read the checkpoint, roll forward */
int  lfs_format(struct lfs *fs);            /* mkfs's part after the anchor  */
/* Roll forward from the PS at lba (its seq, the MAC before it; the log's
 * segment there and the next one): apply every commit found, and start
 * the log after the last. */
int  lfs_roll(struct lfs *fs, uint64_t lba, uint64_t seq, uint64_t prev, uint64_t seg,
              uint64_t next);
/* Apply commit records (each padded to whole sectors), as roll-forward does. */
int  lfs_apply_deltas(struct lfs *fs, const uint8_t *delta, size_t n);
/* The checkpoint copies as read at mount (fsck): which one is used. */
int  lfs_cp_read(struct lfs *fs, int copy, struct lfs_cp *cp, uint64_t **ptrs);

/* ---- imap.c --------------------------------------------------------------------------------- */
int  lfs_imap_init(struct lfs *fs, uint32_t nblk);
void lfs_imap_free(struct lfs *fs);
/* The map entry of ino (loading its block); NULL past max_ino or on error. */
struct lfs_imapent *lfs_imap_load(struct lfs *fs, uint32_t ino, int *err);
static inline struct lfs_imapent *lfs_imap(struct lfs *fs, uint32_t ino, int *err)
{
	uint32_t i = ino / LFS_PER_BLK;
	if (ino != 0 && ino < fs->max_ino && i < fs->nimblk && fs->im[i] != NULL) {
		*err = 0;
		return &fs->im[i]->e[ino % LFS_PER_BLK];
	}
	return lfs_imap_load(fs, ino, err);        /* (its block read first) */
}
/* Entry ino changed: it goes in the next commit record (its block must be
 * in memory).  The first change since the last commit is noted. */
void lfs_imap_note(struct lfs *fs, uint32_t ino);
static inline void lfs_imap_changed(struct lfs *fs, uint32_t ino)
{
	const struct lfs_imblk *m = fs->im[ino / LFS_PER_BLK];
	uint32_t j = ino % LFS_PER_BLK;
	if (!m->inlist || !m->dirty || !(m->changed[j / 64] >> (j % 64) & 1))
		lfs_imap_note(fs, ino);
}
/* Block m of the map is newer than its copy in the log. */
static inline void lfs_imap_dirty(struct lfs *fs, struct lfs_imblk *m)
{
	if (!m->dirty) {
		m->dirty = 1;
		fs->nimdirty++;
	}
}
/* Its entry j is: the next checkpoint's record carries it, unless that
 * checkpoint writes the block (ckpt.c). */
static inline void lfs_imap_cpmark(struct lfs *fs, struct lfs_imblk *m, uint32_t j)
{
	lfs_imap_dirty(fs, m);
	if (!(m->cpchg[j / 64] >> (j % 64) & 1)) {
		m->cpchg[j / 64] |= 1ull << (j % 64);
		fs->nimcp++;
	}
}
int  lfs_imap_block(struct lfs *fs, uint32_t i, struct lfs_imblk **out);
/* Room for block i of the map (a new one past the end). */
int  lfs_imap_grow(struct lfs *fs, uint32_t i);
/* Inode ino in memory, held (lfs_put when done). */
int  lfs_get(struct lfs *fs, uint32_t ino, struct lnode **out);
static inline void lfs_hold(struct lnode *n)
{
	n->nref++;
}
/* The last hold went (lfs_put). */
void lfs_put_last(struct lfs *fs, struct lnode *n);
static inline void lfs_put(struct lfs *fs, struct lnode *n)
{
	if (--n->nref <= 0)
		lfs_put_last(fs, n);
}
/* A new inode of this type, held and dirty. */
int  lfs_ialloc(struct lfs *fs, uint32_t type, uint32_t perm, struct lnode **out);
/* Its last name is gone: free it once nobody holds it. */
void lfs_iunlink(struct lfs *fs, struct lnode *n);
void lfs_dirty(struct lfs *fs, struct lnode *n);
/* Write the dirty inodes to the log (commit).  */
int  lfs_flush_inodes(struct lfs *fs);
void lfs_nodes_free(struct lfs *fs);
/* Forget a freed inode's memory (its number may be reused). */
void lfs_node_drop(struct lfs *fs, struct lnode *n);

/* ---- file.c --------------------------------------------------------------------------------------- */
int  lfs_bmap(struct lfs *fs, struct lnode *n, uint64_t lbn, uint64_t *ptr);
/* Point block lbn at ptr; the old pointer's bytes become dead. */
int  lfs_bset(struct lfs *fs, struct lnode *n, uint64_t lbn, uint64_t ptr);
long lfs_fread(struct lfs *fs, struct lnode *n, void *buf, size_t len, uint64_t off);
long lfs_fwrite(struct lfs *fs, struct lnode *n, const void *buf, size_t len, uint64_t off);
int  lfs_ftrunc(struct lfs *fs, struct lnode *n, uint64_t len);
/* Append a whole block's new contents for lbn (the cleaner, directories). */
int  lfs_bput(struct lfs *fs, struct lnode *n, uint64_t lbn, const void *data, uint32_t nsect,
              int cleaner);
/* Write the inode's dirty indirect blocks to the log. */
int  lfs_flush_maps(struct lfs *fs, struct lnode *n);
/* Free the file's blocks and indirect blocks (it is being freed). */
int  lfs_free_blocks(struct lfs *fs, struct lnode *n);
void lfs_maps_free(struct lnode *n);
/* Does ptr hold indirect block `which` of n (the cleaner)?  1, 0, or -errno */
int  lfs_map_live(struct lfs *fs, struct lnode *n, uint32_t which, uint64_t ptr);
/* Mark indirect block `which` dirty, to be written again (the cleaner). */
int  lfs_map_move(struct lfs *fs, struct lnode *n, uint32_t which);

/* ---- dir.c ----------------------------------------------------------------------------------------- */
int  lfs_dir_load(struct lfs *fs, struct lnode *d);
/* Look a name up: its inode number and type, or -ENOENT. */
int  lfs_dir_lookup(struct lfs *fs, struct lnode *d, const char *name, size_t len,
                    uint32_t *ino, uint32_t *type);
int  lfs_dir_add(struct lfs *fs, struct lnode *d, const char *name, size_t len, uint32_t ino,
                 uint32_t type);
/* The same two, the lookup giving the name's hash to the insertion (a
 * create looks its name up first, then adds it). */
int  lfs_dir_lookup_hashed(struct lfs *fs, struct lnode *d, const char *name, size_t len,
                           uint32_t *ino, uint32_t *type, uint32_t *hash);
int  lfs_dir_add_hashed(struct lfs *fs, struct lnode *d, const char *name, size_t len, uint32_t ino,
                        uint32_t type, uint32_t hash);
int  lfs_dir_remove(struct lfs *fs, struct lnode *d, const char *name, size_t len);
/* Point an existing name at another inode (rename over it). */
int  lfs_dir_replace(struct lfs *fs, struct lnode *d, const char *name, size_t len, uint32_t ino,
                     uint32_t type);
int  lfs_dir_next(struct lfs *fs, struct lnode *d, uint64_t *cookie, struct libfs_dirent *de);
int  lfs_dir_empty(struct lfs *fs, struct lnode *d);
int  lfs_dir_init(struct lfs *fs, struct lnode *d);     /* a new, empty one */
int  lfs_dir_flush(struct lfs *fs, struct lnode *d);    /* dirty blocks to the log */
/* The directory's block lbn was moved by the cleaner: write it again. */
int  lfs_dir_move(struct lfs *fs, struct lnode *d, uint64_t lbn);
void lfs_dir_free(struct lnode *d);

/* ---- ops.c ---------------------------------------------------------------------------------------- */
int  lfs_open_fs(const char *opts, int create, struct lfs **out);
void lfs_close_fs(struct lfs *fs);
/* Walk a path: the inode it names (held), or its parent and last name. */
int  lfs_walk(struct lfs *fs, const char *path, struct lnode **out);
int  lfs_walk_parent(struct lfs *fs, const char *path, struct lnode **dir, const char **name,
                     size_t *len);
void lfs_damaged(struct lfs *fs, const char *what, uint64_t where);
/* The same, naming the inode and the block. */
void lfs_damaged_at(struct lfs *fs, const char *what, uint32_t ino, uint64_t block);

/* ---- clean.c -------------------------------------------------------------------------------------- */
/* Clean up to max segments (cost-benefit); how many were cleaned. */
int  lfs_clean(struct lfs *fs, int max);
/* Called at operation boundaries: clean when free segments are few. */
int  lfs_autoclean(struct lfs *fs);

/* ---- share.c --------------------------------------------------------------------------------------- */
/* After a commit: the shares whose files moved publish where they are now. */
int  lfs_share_publish(struct lfs *fs);
/* Unmount (revoke: 1) or abandon (0: the process dies, the kernel drops them). */
void lfs_share_free(struct lfs *fs, int revoke);

/* ---- multi.c (docs/sharing.md) ------------------------------------------------------------------ */
/* At mount: open the kit, find the anchor, join the shared area and take
 * its lock (held on return); without a shared segment, the mount lock. */
int  lfs_multi_attach(struct lfs *fs, const char *opts);
/* The VFS's mount: let go until the first operation. */
void lfs_multi_mounted(struct lfs *fs);
/* Unmount (alive) or the process's death (not): let go, leave the area. */
void lfs_multi_detach(struct lfs *fs, int alive);
/* struct libfs_ops.enter and .leave. */
int  lfs_multi_enter(void *fs, int change);
void lfs_multi_leave(void *fs);
/* At mount, after the checkpoint is read: the commits since, from the
 * other processes' journal.  1 done, 0 roll forward instead, or -errno. */
int  lfs_multi_load(struct lfs *fs);
/* A commit record of nsect sectors was appended: the others get a copy. */
void lfs_multi_delta(struct lfs *fs, const uint8_t *rec, uint32_t nsect);
/* A checkpoint is durable: the journal of commits starts again. */
void lfs_multi_checkpointed(struct lfs *fs);

/* ---- fsck.c --------------------------------------------------------------------------------------- */
int  lfs_fsck(const char *opts, struct libfs_fsck *ck);

#endif
