/*
 * vvol.h - the virtual volume: a fixed-size array of logical sectors for a
 * library file system with a fixed layout (FAT, ext2, a database's pages),
 * stored on the exodisk only where it has been written.
 *
 * A file system formats and uses the volume as if it were a whole disk of
 * any size it likes (a 4 GiB FAT, say), while the exodisk holds only what
 * was written: the volume is cut into chunks (a power of two of sectors,
 * chosen at creation: the chunk knob), and a chunk gets physical sectors
 * only when it is first written - allocate-on-write, after Kang and
 * Reddy's virtual allocation (seed 001) and thesis Figure 4-2, the
 * exonode as a logical-to-physical map.  A chunk never written reads as
 * zeros without touching the disk; vvol_discard gives chunks the file
 * system no longer uses back to the exodisk.  So the space a volume takes
 * grows with what is written, not with its size.
 *
 * The map is a tree of exonodes hanging off the file system's anchor
 * (libos/kit): anchor entry `ent` holds the volume's descriptor, entry
 * ent+1 is a descendant exonode, the root.  Interior nodes hold up to 80
 * descendant entries, leaves up to 120 extent entries; in a leaf, entry i
 * is chunk base+i, an extent of exactly one chunk.  docs/vvol.md has the
 * format, and the order in which the map is hardened: a chunk's data is
 * written (whole: what the file system did not write is written as zeros)
 * and flushed before the leaf entry that maps it is committed, so a
 * durable map entry never points at sectors that were not written - not
 * another file's remains, not old garbage.
 *
 * Above the map sits a cache of 64 KiB blocks with a valid and a dirty bit
 * per sector.  A file system reads and writes through it (vvol_read,
 * vvol_write, or a pinned pointer to one sector: vvol_sector), and writes
 * back with vvol_sync.  Each dirty sector carries a class (0..3), which
 * the file system uses to order its write-back: vvol_sync(mask) writes
 * only the sectors of the classes in mask and makes them durable, so the
 * file system can write data, then what points at it.  A sector dirtied
 * again keeps the lowest class it was dirtied with until it is written
 * (number the classes in the order you write them back).
 *
 * The same cache also runs over a plain image in memory (vvol_open_image:
 * no exodisk, no map), which host tools and tests use to run a file
 * system's code on an ordinary disk image.
 *
 * Portable C11: guest programs, host tests and tools/exotool.
 */
#ifndef LIBOS_VVOL_VVOL_H
#define LIBOS_VVOL_VVOL_H

#include <stddef.h>
#include <stdint.h>
#include "libos/kit/kit.h"

#define VV_BLOCK      128u          /* sectors in a cache block (64 KiB)           */
#define VV_NCLASS     4             /* write-back classes                           */
#define VV_ALL        0xfu          /* every class                                  */
#define VV_LEAF_FAN   120u          /* chunks one leaf maps                         */
#define VV_NODE_FAN   80u           /* children of an interior node                 */
#define VV_NODE_LEN   2016u         /* bytes of a map node (one 4-sector block)     */
#define VV_MAX_DEPTH  4             /* interior levels: up to 120*80^4 chunks        */
#define VV_CHUNK_MIN  8u            /* sectors (4 KiB)                              */
#define VV_CHUNK_MAX  2048u         /* sectors (1 MiB)                              */
#define VV_CHUNK_DEF  128u          /* sectors (64 KiB): the default chunk          */
#define VV_DESC_MAGIC 0x314c4f5656ull  /* "VVOL1" */

/* Anchor entry `ent`: the volume's descriptor. */
struct vv_desc {
	uint64_t magic;               /* VV_DESC_MAGIC                                 */
	uint64_t nsectors;            /* logical sectors                               */
	uint32_t chunk;               /* sectors per chunk, a power of two             */
	uint16_t depth;               /* interior levels above the leaves (>= 1)       */
	uint16_t version;             /* 1                                             */
	uint64_t created;             /* libos_time_ns() at creation                   */
};

struct vv_node;
struct vv_blk;

struct vvol_stats {
	uint64_t allocs, discards;    /* chunks allocated, given back (vvol_footprint
	                                 counts what the volume holds)                  */
	uint64_t rd_reqs, rd_sect;    /* disk reads, and their sectors                 */
	uint64_t wr_reqs, wr_sect;    /* disk writes, and their sectors                */
	uint64_t zero_sect;           /* of those, zeros written to fill new chunks    */
	uint64_t hits, misses;        /* cache lookups                                 */
	uint64_t syncs, commits;      /* vvol_sync calls that wrote, map commits      */
};

struct vvol {
	struct kit *k;                /* the file system's kit; NULL: an image         */
	uint8_t *img;                 /* image mode: nsectors * 512 bytes              */
	int ent;                      /* the anchor entries we use: ent and ent+1      */
	struct vv_desc d;
	int readonly;
	uint64_t nchunks;
	struct vv_node *root;
	uint64_t hint;                /* where the next chunk goes on the disk         */
	struct kit_dirty dirty;       /* map nodes changed since the last commit        */
	uint64_t fresh;               /* chunks mapped since the last commit           */
	struct edc_batch *batch;      /* writes in flight (during vvol_sync)           */
	/* the cache */
	uint32_t maxblk, nblk;        /* blocks allowed, blocks made                   */
	uint32_t nhash;
	struct vv_blk **hash;
	struct vv_blk *lru, *lru_tail;   /* most recent first                          */
	uint32_t ndirty;              /* blocks with a dirty sector                    */
	uint64_t dsect[VV_NCLASS];    /* dirty sectors of each class                   */
	int err;                      /* the last write-back error (sticky until sync succeeds) */
	struct vvol_stats st;
	/* Blocks written, for other processes' caches (vvol_track). */
	uint64_t *wlog;
	uint32_t nwlog;
	int wover;                    /* more than VV_WLOG since the last vvol_written */
};

#define VV_WLOG 1024u                /* blocks vvol_track remembers                  */

/* ---- making and opening ---------------------------------------------------- */

/* A new volume of nsectors logical sectors in chunks of `chunk` sectors (a
 * power of two, VV_CHUNK_MIN..VV_CHUNK_MAX; 0: VV_CHUNK_DEF), under the
 * kit's anchor (allocated by kit_mkfs, not yet committed; entries ent and
 * ent+1 free).  Every sector reads as zeros.  Nothing is durable until
 * vvol_sync.  Then use it as after vvol_open. */
int  vvol_make(struct vvol *v, struct kit *k, int ent, uint64_t nsectors, uint32_t chunk,
               size_t cache_bytes);
/* Open the volume under the mounted kit's anchor.  cache_bytes: the most
 * the cache may hold (rounded to 64 KiB blocks; at least 8 blocks). */
int  vvol_open(struct vvol *v, struct kit *k, int ent, size_t cache_bytes);
/* The same cache over a plain image of nsectors sectors in memory: reads
 * and writes go straight to it, vvol_sync does nothing more, vvol_discard
 * zeros.  The caller owns img. */
int  vvol_open_image(struct vvol *v, uint8_t *img, uint64_t nsectors, size_t cache_bytes);
/* A cache size for a file system that lets the machine decide: a quarter
 * of the memory free now (the guest; host programs: the least), within
 * [VV_CACHE_AUTO_MIN, VV_CACHE_AUTO_MAX].  Blocks are allocated only as
 * they are used, so a large limit costs nothing until data is read. */
#define VV_CACHE_AUTO_MIN (32ull << 20)
#define VV_CACHE_AUTO_MAX (512ull << 20)
size_t vvol_cache_auto(void);
/* Free memory in bytes, 0 if unknown (libos/vvol/ram_sys.c in the guest). */
uint64_t vvol_ram_free(void);
/* The most the cache may hold, in bytes. */
size_t vvol_cache_bytes(const struct vvol *v);
/* Free the memory (whatever is dirty is lost: vvol_sync first). */
void vvol_close(struct vvol *v);

/* ---- through the cache ----------------------------------------------------------- */

#define VV_NOFILL 0x1               /* vvol_sector: the caller overwrites it whole  */
#define VV_RA     0x2               /* vvol_sector: read ahead to the block's end   */

/* n sectors at lba into buf; ra more sectors may be read ahead into the
 * cache (up to the end of the cache block).  0 or a negative errno. */
int  vvol_read(struct vvol *v, uint64_t lba, void *buf, uint64_t n, uint32_t ra);
/* The same, and on a miss the sectors of [w0, w1) around it (which must
 * hold [lba, lba + n)) that are not cached come into the cache in the
 * same requests: read-around, for a file system that knows the window is
 * worth it (fatfs: a random read in a file the cache can hold whole). */
int  vvol_read_around(struct vvol *v, uint64_t lba, void *buf, uint64_t n, uint64_t w0, uint64_t w1);
/* n sectors from buf (NULL: zeros) at lba, dirty in class cls. */
int  vvol_write(struct vvol *v, uint64_t lba, const void *buf, uint64_t n, int cls);
/* A pointer to sector lba in the cache, pinned until vvol_unpin.  Read from
 * the disk if it is not cached, unless VV_NOFILL.  NULL with *err set. */
uint8_t *vvol_sector(struct vvol *v, uint64_t lba, int flags, int *err);
void vvol_unpin(struct vvol *v, uint64_t lba);
/* Sectors [lba, lba + n) were changed through vvol_sector: dirty in cls. */
void vvol_dirty(struct vvol *v, uint64_t lba, uint64_t n, int cls);

/* Write back every dirty sector of the classes in mask and make it durable:
 * writes (new chunks whole), one flush, then the map nodes that changed.
 * 0 or a negative errno (the sectors stay dirty). */
int  vvol_sync(struct vvol *v, unsigned mask);
/* The same writes without the flush and the map's commit: the sectors are
 * on the disk (clean in the cache) but durable only with the next
 * vvol_sync or vvol_harden.  To make room in the cache. */
int  vvol_writeout(struct vvol *v, unsigned mask);
/* Dirty sectors (of the classes in mask) in the cache. */
uint64_t vvol_dirty_sectors(const struct vvol *v, unsigned mask);
/* Map nodes changed and not yet committed (a vvol_sync or vvol_harden
 * commits them): chunks given out, or given back, or a node taken over
 * from a process that died (below). */
static inline int vvol_map_changed(const struct vvol *v)
{
	return v->dirty.n != 0;
}
/* Is the cache this full (percent) of blocks holding dirty sectors? */
int  vvol_pressed(const struct vvol *v, unsigned percent);

/* The chunks lying wholly in [lba, lba + n) are no longer used: they read
 * as zeros from now on, and their sectors go back to the exodisk once the
 * map nodes are committed (vvol_sync).  Call it only once nothing durable
 * uses those sectors any more (for FAT: once the names of the files whose
 * clusters were freed are durably gone). */
int  vvol_discard(struct vvol *v, uint64_t lba, uint64_t n);

/* ---- sharing: another process changed the volume -------------------------------------------- */

/* Forget what the cache holds of [lba, lba + n): it is read again from the
 * disk when next used.  -EBUSY (nothing forgotten past that block) if a
 * block there is dirty or pinned. */
int  vvol_forget(struct vvol *v, uint64_t lba, uint64_t n);
/* Forget everything cached, the map's nodes too, and read the map again
 * as it is now on the exodisk (another process changed it, and committed:
 * docs/sharing.md).  -EBUSY if anything is dirty or pinned, unless force
 * (dirty sectors are then lost: changes that could not be published). */
int  vvol_reload(struct vvol *v, int force);
/* Only the map (the cache's sectors still good): -EBUSY if the map has
 * changes not committed. */
int  vvol_reload_map(struct vvol *v);

/* A process sharing the volume died (docs/sharing.md): map nodes it
 * changed and never committed - a chunk it was given and had not yet
 * written, say - stay changed in the exodisk's cache while others hold
 * them, and the others see those chunks mapped and write into them; but
 * nobody would ever commit the change, and when the last holder lets go
 * the exodisk undoes it, and what the others wrote there reads as zeros.
 * A process that loads such a node (its map page says dirty) while
 * writable takes it as its own and commits it with its next changes
 * (map.c); vvol_adopt does that for every node now: it reads the map
 * again, loads all of it and commits what it took (a cost only after a
 * death).  A chunk adopted so may hold sectors never written; only
 * sectors the file system never reads before writing (free space). */
int  vvol_adopt(struct vvol *v);

/* Remember the cache blocks (lba / VV_BLOCK) written to the disk from now
 * on, so that other processes can forget just those (vvol_forget).  The
 * list (up to VV_WLOG, in the order written; *over when more were) is
 * taken and emptied by vvol_written.  0 or -ENOMEM. */
int  vvol_track(struct vvol *v);
uint32_t vvol_written(struct vvol *v, const uint64_t **blocks, int *over);
void vvol_written_clear(struct vvol *v);

/* Sector lba reads as buf from now on, clean (never written back), until
 * it is forgotten or dropped from the cache: a read-only process's view of
 * what a dead one left for the next writer to write (fatfs's journal,
 * docs/sharing.md).  Works on a read-only volume; -EBUSY if the sector is
 * dirty. */
int  vvol_overlay(struct vvol *v, uint64_t lba, const void *buf);

/* ---- checks of what is read ------------------------------------------------------------- */

/* Did cached sector lba come from the disk (or read as zeros, its chunk
 * never written) without being checked or written since?  A file system
 * keeping checksums of its metadata (fatfs: docs/fatfs.md) checks such a
 * sector before it trusts it, and says so with vvol_checked. */
int  vvol_unchecked(struct vvol *v, uint64_t lba);
void vvol_checked(struct vvol *v, uint64_t lba);
/* fn(arg, lba, class) for every dirty sector of the classes in mask
 * (listed first, so fn may use the cache); stops at the first error. */
int  vvol_each_dirty(struct vvol *v, unsigned mask, int (*fn)(void *arg, uint64_t lba, int cls),
                     void *arg);

/* ---- the map, for tools and tests ----------------------------------------------------- */

/* Is the chunk holding lba mapped?  1, 0, or a negative errno.  *phys gets
 * the disk sector of lba. */
int  vvol_mapped(struct vvol *v, uint64_t lba, uint64_t *phys);
/* Where chunk c is, for a file system that does its own I/O on whole
 * chunks (lfs: its segments are the chunks): its first disk sector and the
 * leaf exonode to do I/O through (and to make proxies of).  Returns 1 and
 * fills *pl if the chunk is mapped; 0 if not (and alloc is 0); with alloc,
 * an unmapped chunk first gets sectors, durable at the next vvol_harden.
 * Such a chunk bypasses the cache and its zero-filling: the caller must
 * never read there what it did not write, and must harden before anything
 * durable points into it. */
struct vvol_place {
	uint64_t phys;                /* the chunk's first disk sector                 */
	uint64_t leaf;                /* the leaf exonode: its sector and slot         */
	uint16_t slot;
};
int  vvol_chunk(struct vvol *v, uint64_t c, int alloc, struct vvol_place *pl);
/* Sectors the volume holds on the exodisk: chunks and map nodes. */
uint64_t vvol_footprint(const struct vvol *v);

/* Finish the writes in flight, flush, and commit the map nodes that
 * changed.  Safe at any moment, so a file system whose only exonodes are
 * the volume's calls it from the kit's writeback hook (k->writeback). */
int  vvol_harden(struct vvol *v);

#endif
