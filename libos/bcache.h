/*
 * bcache.h - an application-level buffer cache for library file systems.
 *
 * The exokernel caches no file data (thesis section 2.3.4): a libFS keeps
 * its own.  This one holds fixed-size blocks named by (owner, logical
 * block) - for unixfs the owner is a file, so blocks are cached by file
 * offset and a file's blocks need no disk address until they are written
 * (delayed allocation).  Replacement is LRU among clean, unpinned blocks;
 * dirty blocks stay until the libFS writes them and calls bc_clean, so
 * when every block is dirty bc_get returns NULL and the libFS must write
 * some back first.  Nothing here touches the disk.  Portable C11.
 *
 * Every operation costs what it touches, not the cache's size: a block is
 * found through a hash table, an owner's blocks through a list of their
 * own, dirty blocks through a list of their own (they are not on the LRU
 * list, so finding a block to replace never walks past them).  So the
 * cache can be made large enough to hold a whole file - what a program
 * reading a file in a random order needs, as Linux's page cache gives it.
 */
#ifndef LIBOS_BCACHE_H
#define LIBOS_BCACHE_H

#include <stddef.h>
#include <stdint.h>

#define BC_BSIZE 4096u

#define BB_VALID  0x1      /* data holds the block's contents            */
#define BB_DIRTY  0x2      /* newer than the disk                        */

struct bown;

struct bbuf {
	uint64_t owner, lblk;
	uint8_t *data;         /* BC_BSIZE bytes                             */
	uint32_t flags;        /* BB_*                                       */
	int32_t  pins;         /* pinned blocks are never replaced           */
	struct bbuf *hnext;    /* hash chain                                 */
	struct bbuf *prev, *next;   /* LRU list (most recent first) if clean,
	                               else the dirty list                   */
	struct bbuf *oprev, *onext; /* its owner's blocks                    */
	struct bown *own;
	uint32_t idx;          /* its number (which slab holds its bytes)    */
	int16_t  used;         /* names a block (else free)                  */
	int16_t  parked;       /* no memory could be had for it: on the parked
	                          list, not the LRU list, until there is   */
};

/* One owner with blocks in the cache. */
struct bown {
	uint64_t owner;
	struct bbuf *first;    /* its blocks, in no order                    */
	uint32_t n, ndirty;
	struct bown *hnext;    /* hash chain, or the free list               */
};

#define BC_CHUNKS 24

struct bcache {
	uint32_t nbufs;                  /* at most                          */
	uint32_t cap, nhash;             /* buffers made so far; hash size   */
	struct bbuf *chunk[BC_CHUNKS];   /* the buffers, made as needed      */
	struct bown *ochunk[BC_CHUNKS];  /* an owner record per buffer       */
	uint32_t nchunks;
	struct bbuf **hash;
	struct bbuf *head, *tail;        /* LRU list: clean and free buffers */
	struct bbuf *dhead, *dtail;      /* dirty buffers, oldest first      */
	struct bown **ohash, *ofree;
	uint8_t **slabs;                 /* buffer memory, BC_SLAB blocks each */
	uint32_t nused, ndirty;          /* buffers holding a block; dirty ones */
	struct bbuf *parked;             /* free buffers without memory (next) */
	uint32_t nparked;
	uint32_t park_wait;              /* replacements before asking again */
	void *(*alloc)(size_t);          /* slab memory: malloc (tests fail it) */
	uint64_t hits, misses, evictions;
	uint64_t visits;                 /* buffers looked at, in all: what the
	                                    operations cost (tests, profiles) */
};

/* Up to nbufs blocks of BC_BSIZE bytes.  The cache starts small and
 * grows (doubling) while every buffer holds a block, up to nbufs; block
 * memory is allocated a few blocks at a time when first used.  So a large
 * cache costs only what a program fills of it, at mount too.  When memory
 * runs out the cache works with what it has (replacing blocks; no more
 * buffers are made), and takes the rest again once memory can be had:
 * it asks again every BC_PARK_WAIT replacements.  0 or -ENOMEM. */
int  bc_init(struct bcache *bc, uint32_t nbufs);
void bc_destroy(struct bcache *bc);
/* The cached block, or NULL.  Counts as a use (moves it to the front). */
struct bbuf *bc_lookup(struct bcache *bc, uint64_t owner, uint64_t lblk);
/* The cached block, or a fresh one (flags 0: not VALID) taking the place
 * of the least recently used clean unpinned block; NULL if there is none
 * (every block dirty or pinned, or no memory for a new one). */
struct bbuf *bc_get(struct bcache *bc, uint64_t owner, uint64_t lblk);
void bc_pin(struct bbuf *b);
void bc_unpin(struct bbuf *b);
void bc_dirty(struct bcache *bc, struct bbuf *b);
void bc_clean(struct bcache *bc, struct bbuf *b);
/* Forget every block of owner with lblk >= from, dirty or not (truncate,
 * delete).  Pinned blocks are forgotten too: the caller must not hold any. */
void bc_drop(struct bcache *bc, uint64_t owner, uint64_t from);
/* The same for blocks in [from, to) (their contents are being replaced). */
void bc_drop_range(struct bcache *bc, uint64_t owner, uint64_t from, uint64_t to);
/* Up to max dirty blocks of owner (any owner if all is set) with lblk >=
 * from, in (owner, lblk) order; returns how many. */
uint32_t bc_dirty_list(struct bcache *bc, int all, uint64_t owner, uint64_t from,
                       struct bbuf **out, uint32_t max);
/* Blocks of owner cached (dirty or not) in [from, to). */
uint32_t bc_count(struct bcache *bc, uint64_t owner, uint64_t from, uint64_t to, int dirty_only);
/* Blocks of owner cached, dirty ones in *ndirty (may be NULL). */
uint32_t bc_owner_blocks(struct bcache *bc, uint64_t owner, uint32_t *ndirty);

#endif
