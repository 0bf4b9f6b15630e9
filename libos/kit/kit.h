/*
 * kit.h - the libFS kit: the pieces every library file system needs, so
 * that a new one is its own format and policy and little else.  Each piece
 * is one small file in libos/kit/, described at its top:
 *
 *   kit.c     struct kit: the unit, the owner's key and the free map of one
 *             file system; options; errors; mount and mkfs in one call
 *   caps.c    capabilities from the owner's secret (over libos/capkey.h)
 *   xn.c      exonode calls and I/O with the retries every call needs
 *   anchor.c  the superblock finder: where the file system is after a reboot
 *   lock.c    the mount lock (one mounting process at a time), or the
 *             shared area of a file system many processes use at once
 *   alloc.c   allocation over the exported free map, absorbing rivals' races
 *   bytes.c   the byte store: a file's bytes at any offset, on extents
 *   flat.c    the directory of a flat file system (optional)
 *   commit.c  ordered commit: flush barrier, then the metadata
 *
 * Tests: tests/host/userfs/test_kit.c (each piece, races included) and the
 * power-cut harness tests/host/userfs/powercut.h.  docs/libfs.md ("The
 * libFS kit") explains the pieces; docs/writing-a-libfs.md builds kvfs and
 * flatfs from them.
 *
 * Conventions.  kit_xn_* and kit_io return 0 (kit_xn_get: the bytes read)
 * or what the exodisk said: a negative ED_E_* (or BLK_E_*) code, so a
 * caller can tell ED_E_SLOT from ED_E_CAP; kit_err() turns that into an
 * errno.  Every other function returns 0 (or a count) or a negative errno.  Portable C11: the
 * guest links the kit into every program, the host tests and tools too.
 */
#ifndef LIBOS_KIT_KIT_H
#define LIBOS_KIT_KIT_H

#include <stddef.h>
#include <stdint.h>
#include "libos/edc.h"
#include "libos/capkey.h"
#include "libos/libfs.h"
#include "libos/share.h"

/* ---- kit.c: one file system's handle ------------------------------------ */

/* What the anchor exonode's entry 0 holds (anchor.c). */
struct kit_anchor {
	uint64_t magic;           /* KIT_ANCHOR_MAGIC                                 */
	uint64_t self;            /* the anchor's own sector: a copy elsewhere is not one */
	uint64_t lock;            /* the lock sector (lock.c)                         */
	uint64_t fsid;            /* different for every mkfs                         */
	uint64_t created;         /* libos_time_ns() at mkfs                          */
	char     type[16];        /* the file system's type name                      */
};

struct kit {
	struct edc *c;            /* edc_default() when opened                        */
	int unit;                 /* option unit= (default 0)                         */
	char type[16];
	struct capkey key;        /* from key= / keyhex= (capkey.h)                   */
	struct edc_fm fm;         /* the unit's free map                              */
	uint64_t anchor;          /* the anchor exonode's sector (slot 0); 0: none     */
	struct kit_anchor a;      /* its record                                       */
	int locked;
	uint64_t unflushed;       /* data writes since the last barrier (commit.c)    */
	/* Optional: write back every exonode block you have changed.  The kit
	 * calls it when the exodisk cache is full of dirty entries
	 * (ED_E_CACHEDIRTY, ED_E_QUOTA) or a block waits for its write-back
	 * (ED_E_DEALLOC), then tries again.  Only safe if whatever your
	 * exonodes say may become durable at any moment (commit.c). */
	int (*writeback)(struct kit *k);
	void *fs;                 /* the file system's own, for writeback          */
	struct { uint64_t flushes, commits, retries, raced, probes; } st;
	/* A block the kit could not read in (damaged, unreadable) and the
	 * exodisk's code: a well-known place the anchor search met (the error
	 * kit_anchor_find returned when it found no anchor after it), or the
	 * block kit_again last failed to read in for a call (kit_why). */
	uint64_t bad_place;
	int64_t bad_code;
};

/* Open the unit and key named by opts (unit=N, key=TEXT or keyhex=HEX) for
 * a file system of `type`: 0, -ENODEV (no client or unit), -EINVAL. */
int kit_open(struct kit *k, const char *type, const char *opts);
/* kit_open, find the anchor (anchor.c: sb=SECTOR, else the well-known
 * places) and take the lock (lock.c: wait=MS, default KIT_LOCK_WAIT_MS).
 * -ENODEV when there is no such file system, -EBUSY when another process
 * has it mounted. */
int kit_mount(struct kit *k, const char *type, const char *opts);
/* Release the lock.  (The file system makes itself durable first.) */
void kit_unmount(struct kit *k);
/* kit_open and kit_anchor_make: a new, not yet durable, anchor exonode of
 * xnlen bytes.  The file system adds its superblock (entries 1..255) and
 * calls kit_commit(k, k->anchor, 0). */
int kit_mkfs(struct kit *k, const char *type, const char *opts, uint32_t xnlen);
/* A number option: *out = its value, or def when absent.  0 or -EINVAL. */
int kit_opt_num(const char *opts, const char *key, uint64_t def, uint64_t *out);
/* An exodisk result as an errno: r >= 0 unchanged (as int), else -errno. */
int kit_err(int64_t r);
/* statfs's type and space, from the free map (the file system adds files). */
void kit_statfs(struct kit *k, struct libfs_statfs *st);

/* ---- caps.c: capabilities from the secret ---------------------------------- */

/* The protector of exonode (sector, slot): capabilities derived from the
 * owner's key and the place, so they need never be stored. */
struct ed_protector kit_prot(const struct kit *k, uint64_t sector, uint16_t slot);
/* The protector of a self-protected extent whose header is at sector. */
struct ed_protector kit_prot_extent(const struct kit *k, uint64_t sector);

/* ---- xn.c: exonode calls with their retries ---------------------------------- */

/* Should a call that returned r be made again?  It fixes what it can first:
 * ED_E_NOTCACHED reads the exonode's block in, ED_E_BUSY and ED_E_NOIO
 * wait, ED_E_CACHEDIRTY/ED_E_QUOTA/ED_E_DEALLOC call k->writeback.
 * *tries counts the attempts (a few at most). */
int kit_again(struct kit *k, int64_t r, uint64_t sector, uint16_t slot, int *tries);
/* What a call that kit_again gave up on failed with: ED_E_NOTCACHED
 * becomes the exodisk's answer to reading the block in (ED_E_BADMAC for a
 * damaged block: EIO, not "try again"), k->bad_place naming the block;
 * any other r is itself. */
int64_t kit_why(const struct kit *k, int64_t r);
/* r = call, repeated while kit_again says so, for calls the kit does not
 * wrap (any edc_* on exonode (sector, slot)); then r = kit_why(k, r). */
#define KIT_RETRY(k, sector, slot, r, call) \
	for (int kit_tries_ = 0; (r) = (call), kit_again((k), (r), (sector), (slot), &kit_tries_) || \
	                         ((r) = kit_why((k), (r)), 0);)
/* "TYPE: exonode block at sector N: why; not mounted" on stderr when a
 * mount failed (e) because a block could not be read in (k->bad_code);
 * returns e.  For a file system's mount's error path. */
int kit_say_unmountable(const struct kit *k, int e);

int64_t kit_xn_alloc(struct kit *k, uint64_t sector, uint16_t slot, uint32_t len);
int64_t kit_xn_free(struct kit *k, uint64_t sector, uint16_t slot);
/* Add or replace application data entry `ent` (len need not be a multiple
 * of 8: it is padded with zeros). */
int64_t kit_xn_put(struct kit *k, uint64_t sector, uint16_t slot, int ent, const void *data,
                   uint32_t len);
/* Read data entry `ent` into buf (at most len bytes); returns bytes read. */
int64_t kit_xn_get(struct kit *k, uint64_t sector, uint16_t slot, int ent, void *buf,
                   uint32_t len);
/* Allocate sectors [start, start + nsect) as extent entry `ent`. */
int64_t kit_xn_extent(struct kit *k, uint64_t sector, uint16_t slot, int ent, uint64_t start,
                      uint64_t nsect);
int64_t kit_xn_remove(struct kit *k, uint64_t sector, uint16_t slot, int ent);
int64_t kit_xn_combine(struct kit *k, uint64_t sector, uint16_t slot, int first, int second);
/* Write the exonode's block back and wait: the commit point (commit.c has
 * the ordered forms).  ED_E_CLEAN when there was nothing to write. */
int64_t kit_xn_write(struct kit *k, uint64_t sector, uint16_t slot);
/* A copy of the exonode's map page (struct ed_xnmap_hdr and entries) in
 * page[4096]: what it holds, extents included. */
int64_t kit_xn_map(struct kit *k, uint64_t sector, uint16_t slot, void *page);
/* The same through a protector the caller already derived (p names the
 * exonode): a libFS that keeps one per cached exonode saves the
 * derivation's hashing on every call. */
int64_t kit_xn_map_prot(struct kit *k, const struct ed_protector *p, void *page);
/* Synchronous I/O through exonode (sector, slot): bytes (a multiple of
 * 512) at disk sector blkno.  Writes count towards the next barrier. */
int64_t kit_io(struct kit *k, uint64_t sector, uint16_t slot, int write, uint64_t blkno,
               void *buf, uint64_t bytes);
/* The same through a protector the caller already derived (kit_prot). */
int64_t kit_io_prot(struct kit *k, const struct ed_protector *p, int write, uint64_t blkno,
                    void *buf, uint64_t bytes);

/* ---- anchor.c: the superblock finder ------------------------------------- */

#define KIT_ANCHOR_MAGIC   0x31524f48434e414bull   /* "KANCHOR1" */
#define KIT_ANCHOR_ENTRY   0        /* the anchor exonode's entry the kit uses  */
#define KIT_ANCHOR_MAX_LEN 480u     /* a one-sector block: the lock goes next   */
#define KIT_ANCHOR_PLACES  64       /* well-known places tried, in order        */

/* The i-th well-known place for this owner, type and disk: a multiple of 8
 * derived from the key, so others cannot know it. */
uint64_t kit_anchor_place(const struct kit *k, unsigned i);
/* Make an anchor exonode (slot 0, xnlen bytes, at most KIT_ANCHOR_MAX_LEN)
 * at the first well-known place whose sector and the next are free (or at
 * sb=SECTOR), with its record in entry 0; not yet written back.  -EEXIST if
 * this owner already has a file system of this type on the unit, -ENOSPC
 * if every place is taken (give sb=). */
int kit_anchor_make(struct kit *k, const char *opts, uint32_t xnlen);
/* Find this owner's anchor: at sb=SECTOR if given, else the first
 * well-known place holding one.  Sets k->anchor and k->a.  -ENODEV if
 * there is none. */
int kit_anchor_find(struct kit *k, const char *opts);

/* ---- lock.c: one mounting process at a time -------------------------------- */

#define KIT_LOCK_LEN      64u       /* the lock exonode's length */
#define KIT_LOCK_WAIT_MS  5000u

/* Take the lock: allocate an exonode at k->a.lock and never write it back.
 * Waits up to wait_ms while another process holds it, then -EBUSY.  A
 * process that dies holding it loses it (the exodisk undoes what a process
 * did not write back), so a crash never leaves it taken. */
int kit_lock(struct kit *k, uint64_t wait_ms);
void kit_unlock(struct kit *k);

/* Sharing instead (docs/sharing.md): attach to this file system's shared
 * area, of at least `bytes` bytes, named from its key and anchor, so only
 * holders of the key can find it.  share_enter/_leave around every
 * operation then take its lock. */
int kit_share(struct kit *k, struct share *s, size_t bytes);
/* A file system that caches in its own process takes that lock as a lease
 * (share_lease_*, share_op_* in libos/share.h; docs/sharing.md): attach
 * to its area of `bytes` bytes and take the lock, publishing through
 * publish(arg) whenever it lets go.  Returns share_lease_enter's answer
 * (SHARE_SAME, SHARE_CHANGED, SHARE_DEAD: the lock is held), or a
 * negative errno with nothing held.  With no shared segment to be had
 * (the system's are all in use) it takes the one-process mount lock
 * instead (kit_lock, waiting up to opts' wait=MS) and leaves s->a NULL. */
int kit_lease_attach(struct kit *k, struct share *s, size_t bytes, const char *opts,
                     int (*publish)(void *arg), void *arg);
/* Let go of the lock (bumping the change count if the hold changed
 * anything: s->change; publishing is the caller's) and of the area.  The
 * mount lock it may have fallen back to goes with kit_unlock, as any
 * kit mount's does. */
void kit_lease_detach(struct share *s);
/* A host test's dying process: the lock is left as the kernel leaves a
 * dead holder's (SHSEG_LOCK_DEAD), then the area. */
void kit_lease_abandon(struct share *s);

/* ---- alloc.c: the free map, and rivals ----------------------------------------- */

#define KIT_UNIT 8u                 /* sectors: data is allocated in aligned 4 KiB */

/* Did an allocation fail because another process allocated there first
 * (between our look at the free map and our request)?  ED_E_ALLOCATED,
 * ED_E_SLOT, ED_E_XNSIZE, ED_E_NOTCACHED, ED_E_KIND, ED_E_DEALLOC: look
 * elsewhere.  docs/libfs.md says what each means. */
int kit_taken(int64_t r);
/* A free run of n sectors aligned to align at or after goal (wrapping
 * once), never starting at sector 1 of an aligned group of 8 (where
 * anchors keep their lock sector); UINT64_MAX if none. */
uint64_t kit_find(const struct kit *k, uint64_t goal, uint64_t n, uint64_t align);
/* The same, but only a run starting at most reach sectors past goal, no
 * wrapping: a look near a goal whose cost follows reach, not the unit (on
 * a full stretch of disk kit_find walks all of it).  Callers that find
 * nothing near then look from a cursor of their own (unixfs: alloc.c). */
uint64_t kit_find_near(const struct kit *k, uint64_t goal, uint64_t reach, uint64_t n,
                       uint64_t align);
/* Allocate between min and want sectors (rounded up to KIT_UNIT, aligned
 * to it; as long a run as the free map has, halving down to min) at or
 * after goal, as extent entry `ent` of exonode (sector, slot).  Returns the
 * number of sectors and their start in *start; -ENOSPC if no run of min
 * is free; other errors (ED_E_XNFULL: -ENOSPC, ...) as errno. */
int64_t kit_alloc_extent(struct kit *k, uint64_t sector, uint16_t slot, int ent, uint64_t goal,
                         uint64_t want, uint64_t min, uint64_t *start);

/* Exonodes of one length, packed into blocks. */
struct kit_pool {
	uint32_t len;             /* exonode length in bytes (a multiple of 8)       */
	uint64_t hint;            /* a block of ours that may have a free slot, or 0  */
};
/* A new exonode of p->len bytes: in a free slot of the hinted block, else
 * in a new block near goal.  0, or -ENOSPC. */
int kit_alloc_xn(struct kit *k, struct kit_pool *p, uint64_t goal, uint64_t *sector,
                 uint16_t *slot);

/* ---- bytes.c: the byte store ------------------------------------------------------ */

#define KIT_BYTES_EXT  64           /* extents one store keeps track of          */

/* A file's bytes, in the extent entries first, first+1, ... of one exonode,
 * in file order.  Reads past size give nothing; writes past the end
 * allocate and make the gap read as zeros (freed sectors are not scrubbed:
 * the gap is written).  Only size changes in memory: the file system keeps
 * it in its metadata and commits it after a barrier (commit.c). */
struct kit_bytes {
	uint64_t sector;          /* the exonode                                     */
	uint16_t slot;
	int first;                /* its first extent entry                          */
	int n;                    /* extents in use                                  */
	uint64_t size;            /* bytes                                           */
	uint64_t nsect;           /* sectors held                                    */
	struct { uint64_t start, nsect; } ext[KIT_BYTES_EXT];
};

/* Set b up for exonode (sector, slot), entries from `first`, holding size
 * bytes: its extents are read from the exonode (kit_xn_map). */
int  kit_bytes_open(struct kit *k, struct kit_bytes *b, uint64_t sector, uint16_t slot,
                    int first, uint64_t size);
/* An empty store (a new file: nothing to read). */
void kit_bytes_init(struct kit_bytes *b, uint64_t sector, uint16_t slot, int first);
long kit_bytes_read(struct kit *k, struct kit_bytes *b, void *buf, size_t n, uint64_t off);
/* Write n bytes at off, growing the store; -EFBIG when the exonode has no
 * room for another extent, -ENOSPC when the disk is full. */
long kit_bytes_write(struct kit *k, struct kit_bytes *b, const void *buf, size_t n,
                     uint64_t off);
/* Change the size: growing allocates and zero-fills; shrinking only
 * changes b->size (the bytes past it become garbage, zeroed if it grows
 * again). */
int  kit_bytes_truncate(struct kit *k, struct kit_bytes *b, uint64_t len);
/* Remove the extents wholly past the size (the exodisk frees their sectors
 * once the commit that drops them is durable).  Record the smaller size in
 * the exonode first: a write-back may come at any moment. */
int  kit_bytes_trim(struct kit *k, struct kit_bytes *b);

/* ---- flat.c: the directory of a flat file system ------------------------------- */

#define KIT_NAME_MAX 39
#define KIT_ROOT     (-1000)        /* lookup: the root directory              */
#define KIT_NEW      (-1001)        /* lookup: absent, to be created (errors are
                                       -errno, all above -1000)               */

struct kit_name {                 /* one 64-byte record of the table            */
	char     name[KIT_NAME_MAX + 1];   /* "" = a free record                    */
	uint64_t sector;              /* the file: exonode (sector, slot)           */
	uint16_t slot, pad;
	uint32_t gen;                 /* different for every file created           */
	uint32_t from;                /* renamed over another name: the record it
	                                 came from, + 1 (flat.c)                    */
	uint32_t spare;
};

/* The state an open file shares with the other opens of the same file
 * (kit_flat_hold); a file system's own begins with it. */
struct kit_open {
	struct kit_open *next;
	struct kit_name r;            /* the file's record when it was opened       */
	int refs;
	int gone;                     /* unlinked or replaced: freed, touch nothing */
	int dirty;                    /* changed since the file system last
	                                 published it (fl->publish)                 */
};

/* What the processes sharing a flat file system share: its name table. */
struct kit_flat_area {
	struct share_area h;
	struct kit_bytes table;       /* the table's byte store, on the anchor      */
	uint32_t n;                   /* records                                    */
	uint32_t spare;
	struct kit_name v[];          /* the records                                */
};
#define KIT_FLAT_MAX_NAMES ((SHSEG_MAX_PAGES * 4096u - sizeof(struct kit_flat_area)) / \
                            sizeof(struct kit_name) / 64 * 64)

/* The state of a flat file system begins with this (so the kit_flat_*
 * operations below can take its pointer).  Every process that mounts it
 * shares one table, in a shared area (docs/sharing.md); v, n and table
 * are this process's view of it while it holds the lock (kit_flat_enter). */
struct kit_flat {
	struct kit k;
	struct kit_pool pool;         /* the files' exonodes                        */
	struct kit_bytes table;       /* the name table, on the anchor              */
	struct kit_name *v;           /* ... in memory (the shared area's)          */
	uint32_t n;                   /* records, used or free                      */
	struct kit_open *open;        /* open files' shared state                   */
	struct share sh;
	struct kit_flat_area *s;
	/* Optional, for open files whose changes others must see before they
	 * are closed (flatfs's; not kvfs's copies).  reload: another process
	 * changed the file system since this one last held it; bring open
	 * file o (still named) up to date.  publish: at the end of an
	 * operation while others have the file system mounted, make what
	 * this process changed in o (o->dirty) visible to them (an fsync). */
	int (*reload)(struct kit_flat *fl, struct kit_open *o);
	int (*publish)(void *fs, void *file);
};

/* mkfs: an anchor of anchor_len bytes and an empty table (option slots=N:
 * its first size, default 64).  Durable when it returns. */
int  kit_flat_mkfs(struct kit_flat *fl, const char *type, const char *opts,
                   uint32_t anchor_len);
/* mount: find the anchor, join the shared area (reading the table into it
 * if this is its first process); files are exonodes of file_len. */
int  kit_flat_mount(struct kit_flat *fl, const char *type, const char *opts,
                    uint32_t file_len);
void kit_flat_free(struct kit_flat *fl);       /* open files' memory; leave the area */
/* struct libfs_ops's enter and leave: the shared lock around an operation.
 * enter catches up with other processes' changes: open files whose name
 * went are marked gone, the others reloaded (fl->reload); after a process
 * died holding the lock it reads the table again from the disk (finishing
 * a rename it left half done). */
int  kit_flat_enter(void *fs, int change);
void kit_flat_leave(void *fs);
/* The shared state of the file record r names: size bytes (at least a
 * struct kit_open), zeroed when the file is not open yet (then refs is 1).
 * NULL: no memory.  kit_flat_drop lets go of it: 1 when it was the last. */
void *kit_flat_hold(struct kit_flat *fl, const struct kit_name *r, size_t size);
int  kit_flat_drop(struct kit_flat *fl, void *state);
/* Look a path up the way open() does, with LIBFS_O_* flags (0 for stat):
 * the record's index; KIT_ROOT for ""; KIT_NEW when absent and O_CREAT is
 * set; else -ENOENT (also for a name with a '/': no directories),
 * -ENAMETOOLONG, -EEXIST (O_CREAT|O_EXCL), -ENOTDIR (O_DIR on a file),
 * -EISDIR (the root for writing). */
int  kit_flat_lookup(struct kit_flat *fl, const char *path, int flags);
/* kit_flat_lookup, creating a new file when it says KIT_NEW: an exonode
 * whose entry 0 is meta (len bytes), written back, then named (durably).
 * Returns the record's index, KIT_ROOT, or an error. */
int  kit_flat_open(struct kit_flat *fl, const char *path, int flags, const void *meta,
                   uint32_t len);
/* A struct libfs_stat for the file a record names (NULL: the root). */
void kit_flat_stat(struct kit_flat *fl, const struct kit_name *r, uint64_t size,
                   uint64_t mtime, struct libfs_stat *st);
/* The record naming file (sector, slot) of generation gen, or -1: an open
 * file uses it to tell whether it is still named (renames move it). */
int  kit_flat_named(struct kit_flat *fl, uint64_t sector, uint16_t slot, uint32_t gen);
/* Operations of struct libfs_ops, for a state that begins with struct
 * kit_flat.  unlink erases the name durably, then frees the file's
 * exonode (and with it its extents) and commits that; rename is atomic,
 * also over an existing name (flat.c). */
int  kit_flat_statfs(void *fs, struct libfs_statfs *st);
int  kit_flat_readdir(void *fs, void *dir, uint64_t *cookie, struct libfs_dirent *de);
int  kit_flat_unlink(void *fs, const char *path);
int  kit_flat_rename(void *fs, const char *from, const char *to);

/* ---- commit.c: ordered commit ---------------------------------------------------- */

/* The flush barrier: every data write made through the kit before it is
 * durable when it returns (skipped when there has been none). */
int kit_barrier(struct kit *k);
/* The barrier in two halves, for a caller with something to do while the
 * disk flushes (what needs no barrier before it): kit_barrier_start sends
 * the flush (nothing, when there is nothing to flush), kit_barrier_end
 * waits for it - then every write made before the start is durable.  One
 * start, one end, with the same struct kit_flush. */
struct kit_flush {
	volatile int32_t word;     /* the flush's result (edc_wait)               */
	uint64_t pending;          /* k->unflushed at the start; 0: none sent    */
};
int kit_barrier_start(struct kit *k, struct kit_flush *f);
int kit_barrier_end(struct kit *k, struct kit_flush *f);
/* Write exonode (sector, slot)'s block back: durable when it returns. */
int kit_commit(struct kit *k, uint64_t sector, uint16_t slot);
/* Barrier, then commit: the metadata becomes durable only after the data
 * it points to.  The usual end of an fsync. */
int kit_publish(struct kit *k, uint64_t sector, uint16_t slot);

/* A set of changed exonode blocks, committed deepest first so that a
 * durable descendant entry never names a block that is not.  Adding is
 * O(1) (an index by sector beside the list), so a file system may note
 * every change it makes.  A block's depth only rises: noted at several
 * depths, it is written at the deepest. */
struct kit_dirty {
	struct kit_dblk { uint64_t sector; uint16_t slot; int16_t depth; } *v;
	uint32_t n, cap;
	uint32_t *idx;             /* open addressing: position in v + 1, 0 empty */
	uint32_t icap;             /* a power of two; 0: to be built             */
};
int  kit_dirty_add(struct kit_dirty *d, uint64_t sector, uint16_t slot, int depth);
/* Is exonode block `sector` in the set?  O(1), like adding. */
int  kit_dirty_has(struct kit_dirty *d, uint64_t sector);
/* Write back every block, one depth at a time, deepest first, each level
 * durable before the next; the set is then empty (on error it keeps the
 * blocks not known to be written). */
int  kit_dirty_commit(struct kit *k, struct kit_dirty *d);
void kit_dirty_free(struct kit_dirty *d);

#endif
