/*
 * fat.h - fatfs's insides, shared by its files:
 *
 *   boot.c    the boot sector: reading and checking it, the geometry;
 *             making a new FAT (fat_format)
 *   table.c   the file allocation table: entries, allocation, chains,
 *             frees put off until the names are gone
 *   name.c    long names and short names: UTF-8 <-> UCS-2, checksums,
 *             8.3 names with ~N tails, what is allowed
 *   clock.c   DOS dates and times
 *   dir.c     directories: the index of names, lookup, adding and
 *             removing entries, listing
 *   file.c    files: reading, writing, truncating
 *   sync.c    write-back in the order that keeps the volume repairable
 *   ops.c     struct libfs_ops, mounting by name, mkfs
 *   fsck.c    the checker (what fsck.fat checks) and its repairs
 *   share.c   many processes on one volume: the lock as a lease, and
 *             catching up with what the others changed
 *
 * fatfs works on a virtual volume (libos/vvol/vvol.h): the FAT image is
 * the volume's logical sectors, so what a program writes is exactly what
 * dosfstools and mtools read after `exotool fat-export`.  Every sector it
 * changes is marked with a write-back class, and sync.c writes the classes
 * in order (docs/fatfs.md, "Crash safety").
 */
#ifndef USERFS_FATFS_FAT_H
#define USERFS_FATFS_FAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "libos/libfs.h"
#include "libos/kit/kit.h"
#include "libos/share.h"
#include "libos/vvol/vvol.h"
#include "userfs/fatfs/format.h"
#include "userfs/fatfs/fatfs.h"

/* Write-back classes (vvol_dirty), in the order sync.c writes them. */
#define CL_DATA 0     /* file data; directory clusters made since the last sync */
#define CL_FAT  1     /* the FAT: new chains, cut chains; the boot sector        */
#define CL_DIR  2     /* directory entries in directories that were reachable    */
#define CL_FREE 3     /* the FAT: chains freed once their names are gone; FSInfo */

#define FAT_ENT_MAX 65536u    /* entries a directory may hold (2 MiB)              */

/* One run of a chain: clusters [clus, clus + n) are the file's clusters
 * [idx, idx + n). */
struct frun {
	uint32_t idx, clus, n;
};

/* A chain in memory (a file's or a directory's). */
struct fchain {
	uint32_t first;           /* 0: empty                                            */
	struct frun *r;
	uint32_t nr, cap;
	uint32_t len;             /* clusters                                           */
	int known;                /* r[] holds the whole chain                          */
};

/* The index of a directory's names, built the first time it is searched. */
struct fdent {
	uint32_t slot;            /* its short entry's slot (32-byte entries from 0)      */
	uint8_t nlfn;             /* long-name slots before it                           */
	uint8_t attr;
	uint8_t sfn[11];
	char *name;               /* UTF-8: the long name, or the short one as shown       */
	uint32_t hl, hs;          /* hashes of the folded long name and of the short name   */
	int32_t nl, ns;           /* next in the long and short hash chains (-1)           */
};

struct fdir {
	struct fdir *next, *prev; /* the directories fatfs knows (most recent first)       */
	uint32_t first;           /* first cluster; 0: the FAT12/16 root region           */
	int root;
	int refs;                 /* open handles, files open in it                       */
	struct fchain ch;
	uint32_t nslots;          /* slots it has room for                                 */
	uint32_t end;             /* slot of its end marker (first never-used entry)       */
	uint32_t holes;           /* deleted slots below end                               */
	uint32_t hole_at;         /* no deleted slot below this one                        */
	int indexed;
	struct fdent *e;
	uint32_t ne, cap, live;
	int32_t *bucket;          /* hash heads (-1)                                       */
	uint32_t nbucket;
	uint64_t ino;
};

/* An open regular file (shared by every handle on it). */
struct ffile {
	struct ffile *next;
	int refs;
	struct fdir *dir;         /* the directory holding its entry (referenced)          */
	uint32_t slot;            /* its short entry's slot there                          */
	uint32_t size;
	uint8_t attr;
	int unlinked;             /* its name is gone: freed at the last close             */
	int gone;                 /* another process removed it: a stand-in, nothing freed */
	uint8_t sfn[11];          /* its short name (to find it again: share.c)            */
	struct fchain ch;
	uint64_t last_end;        /* where the last read ended (read-ahead)                */
};

struct fhandle {
	int isdir;
	int flags;
	struct ffile *f;
	struct fdir *d;
};

/* Cluster numbers made into directories since the last sync: their whole
 * contents go out with the data (CL_DATA), before anything links them. */
struct fset {
	uint32_t *v;
	uint32_t n, cap;
};

struct fatfs {
	struct kit kit;
	struct vvol vol;
	int kit_mounted;
	/* geometry (boot.c) */
	int type;                 /* 12, 16, 32                                            */
	uint32_t spc;             /* sectors per cluster                                  */
	uint32_t csize;           /* bytes per cluster                                    */
	uint32_t rsvd, nfats, fatsz;
	uint32_t rootents;        /* FAT12/16                                             */
	uint64_t rootsec, rootnsec;   /* FAT12/16 root region                              */
	uint64_t datasec;         /* first sector of cluster 2                           */
	uint64_t totsec;
	uint32_t nclusters;       /* data clusters: 2 .. nclusters + 1                     */
	uint32_t rootclus;        /* FAT32                                               */
	uint32_t fsinfo;          /* FAT32: its sector, 0 if none                         */
	uint32_t bkboot;
	int active;               /* the FAT read from                                   */
	int mirror;               /* every copy is written                               */
	uint8_t media;
	uint32_t bad, eoc;        /* this type's bad-cluster mark and end of chain         */
	uint32_t volid;
	/* allocation (table.c) */
	uint32_t hint;            /* where the next search starts                        */
	int64_t nfree;            /* free clusters, -1 unknown                            */
	int info_dirty;           /* FSInfo needs writing                                 */
	struct fset pending;      /* first clusters of chains to free at the next sync    */
	struct fset cuts;         /* chains cut short: pairs (last cluster, old next)      */
	struct fset freed;        /* clusters freed by the last sync: chunks to give back  */
	struct fset newdir;       /* see struct fset                                      */
	/* names and files (dir.c, file.c) */
	struct fdir *root;
	struct fdir *dirs;        /* known directories, most recent first                 */
	uint32_t ndirs;
	struct ffile *files;
	/* metadata checksums (csum.c) */
	uint64_t ck_area;         /* first sector of their area; 0: none                   */
	uint64_t ck_nsect;
	uint32_t ck_state;        /* the header's state                                    */
	int ck_trust;             /* the slots are checked against                         */
	struct fset ck_unsealed;  /* table sectors (numbers) whose own CRC is not made     */
	/* state */
	int ro;                   /* mounted read-only, or made so by damage found         */
	int broken;               /* damage was found (said once)                         */
	int ro_asked;             /* read-only because the mount said `ro`, not damage    */
	size_t cache;             /* bytes of volume cache                                */
	struct fatfs_stats st;
	/* sharing (share.c) */
	struct share sh;          /* sh.a NULL: not shared (the kit's lock, or an image)  */
	int sh_joined;            /* mounted while others had it mounted                  */
	int sh_hold;              /* keep the lock from mount to unmount (fsck)           */
	uint64_t sh_seq;          /* the shared log of written blocks, as far as we read it */
	int keep_lost;            /* fsck's repair leaves lost clusters be (share.c)       */
	uint32_t sh_jn;           /* directory sectors journaled so far (share.c)          */
	int sh_distrust;          /* checksums not checked until a writer settles (share.c) */
	/* A rename's old name, to be removed right after the sync that makes
	 * the new one durable: the journal holds the directory without it
	 * (share.c, fat_share_unname). */
	struct fdir *sh_ud;
	uint32_t sh_us0, sh_us1;
};

/* An array grown to `cap` elements of `size` bytes (the first `n` kept),
 * by malloc, copy and free: picolibc's realloc zeroes the whole free chunk
 * it grows into, which next to a freed 64 KiB cache block costs more than
 * the copy.  NULL (and the old array kept) when out of memory. */
static inline void *fat_grow(void *p, size_t n, size_t cap, size_t size)
{
	void *q = malloc(cap * size);
	if (q != NULL) {
		if (p != NULL && n > 0)
			memcpy(q, p, n * size);
		free(p);
	}
	return q;
}

/* ---- boot.c ---- */
/* A size option with K, M, G, T suffixes. */
int  fat_parse_size(const char *opts, const char *key, uint64_t def, uint64_t *out);
/* Read and check the boot sector and FSInfo; fill in the geometry.
 * -EINVAL (with a message through fat_say) if it is not a FAT we take. */
int  fat_boot(struct fatfs *fs);
/* Write a new FAT on the volume (fatfs.h: the mkfs options). */
int  fat_format(struct fatfs *fs, const char *opts);
/* The first sector of cluster c. */
static inline uint64_t fat_clus_lba(const struct fatfs *fs, uint32_t c)
{
	return fs->datasec + (uint64_t)(c - 2) * fs->spc;
}
static inline int fat_valid_clus(const struct fatfs *fs, uint32_t c)
{
	return c >= 2 && c <= fs->nclusters + 1;
}

/* ---- table.c ---- */
/* Entry c of the active FAT (copy `copy` if >= 0).  0 or -errno; *v. */
int  fat_get(struct fatfs *fs, uint32_t c, uint32_t *v);
int  fat_get_copy(struct fatfs *fs, int copy, uint32_t c, uint32_t *v);
/* Set entry c in every copy written, dirty in class cls. */
int  fat_set(struct fatfs *fs, uint32_t c, uint32_t v, int cls);
int  fat_set_copy(struct fatfs *fs, int copy, uint32_t c, uint32_t v, int cls);
static inline int fat_is_eoc(const struct fatfs *fs, uint32_t v) { return v >= fs->eoc; }
/* A free cluster, preferably `near` (0: the hint); marked the end of a
 * chain.  -ENOSPC when the volume is full. */
int  fat_alloc(struct fatfs *fs, uint32_t near, uint32_t *c);
/* Read a chain from its first cluster, checking it: a chain leaving the
 * volume, running into a free or bad cluster, or longer than `limit`
 * clusters (a loop, or a file's chain longer than its size) is damage. */
int  fat_chain_load(struct fatfs *fs, struct fchain *ch, uint32_t first, uint32_t limit);
void fat_chain_free(struct fchain *ch);
/* The volume cluster holding chain cluster i; 0 if past its end.  *run
 * gets how many follow it contiguously in the chain. */
uint32_t fat_chain_at(const struct fchain *ch, uint32_t i, uint32_t *run);
/* The same, and *before: clusters of the same run before cluster i. */
uint32_t fat_chain_span(const struct fchain *ch, uint32_t i, uint32_t *before, uint32_t *run);
/* Add n clusters at the end of the chain (new ones, linked in the FAT). */
int  fat_chain_grow(struct fatfs *fs, struct fchain *ch, uint32_t n, uint32_t near);
/* Keep the first n clusters: the rest becomes a pending free. */
int  fat_chain_cut(struct fatfs *fs, struct fchain *ch, uint32_t n);
/* A whole chain (from first) to free at the next sync, after its name. */
int  fat_free_later(struct fatfs *fs, uint32_t first);
/* Free the pending chains (sync.c calls it after the names are durable);
 * the clusters freed are remembered for fat_discard. */
int  fat_free_pending(struct fatfs *fs);
/* A chain cut short must stay whole on the disk until its file's smaller
 * size is: before the FAT goes out, undo the cuts in the cache (1), and
 * after it, make them again to go out with the frees (0). */
int  fat_cuts_hold(struct fatfs *fs, int undo);
/* Give the chunks wholly covered by free clusters back to the exodisk. */
int  fat_discard(struct fatfs *fs);
/* Free clusters, counted if unknown. */
int  fat_count_free(struct fatfs *fs, uint32_t *n);
int  fset_add(struct fset *s, uint32_t v);
int  fset_has(const struct fset *s, uint32_t v);
void fset_clear(struct fset *s);

/* ---- name.c ---- */
/* UTF-8 name -> UCS-2 (up to LFN_MAX units); count, -EINVAL (bad UTF-8 or
 * a character FAT does not allow), -ENAMETOOLONG. */
int  fat_name_ucs2(const char *name, uint16_t *u);
/* UCS-2 -> UTF-8 (out: at least 3 * n + 1 bytes). */
void fat_ucs2_name(const uint16_t *u, int n, char *out);
uint8_t fat_sfn_sum(const uint8_t sfn[11]);
/* The name shown for a short entry (NT case bits applied), UTF-8. */
void fat_sfn_show(const uint8_t sfn[11], uint8_t ntres, char *out);
/* Does name fit a short entry as it is?  1 with sfn and the NT case bits. */
int  fat_sfn_fits(const char *name, uint8_t sfn[11], uint8_t *ntres);
/* The basis of a generated short name (uppercase, unfit characters as
 * '_'), to which fat_sfn_tail adds ~N. */
void fat_sfn_basis(const uint16_t *u, int n, uint8_t sfn[11]);
void fat_sfn_tail(const uint8_t basis[11], uint32_t num, uint8_t sfn[11]);
/* Is this a valid short name as stored (what fsck checks)? */
int  fat_sfn_ok(const uint8_t sfn[11]);
/* Case-folded hash of a UTF-8 name (ASCII letters folded). */
uint32_t fat_name_hash(const char *name);
int  fat_name_eq(const char *a, const char *b);

/* ---- clock.c ---- */
/* Now as DOS date, time and hundredths of a second (0..199). */
void fat_now(uint16_t *date, uint16_t *time, uint8_t *tenth);
/* DOS date and time -> nanoseconds since 1970 (UTC, as FAT keeps local time). */
uint64_t fat_dos_ns(uint16_t date, uint16_t time, uint8_t tenth);

/* ---- dir.c ---- */
int  fat_dir_root(struct fatfs *fs);
/* The directory whose first cluster is `first` (0: the root). */
int  fat_dir_get(struct fatfs *fs, uint32_t first, uint64_t ino, struct fdir **d);
void fat_dir_put(struct fatfs *fs, struct fdir *d);
void fat_dirs_free(struct fatfs *fs);
/* The sector holding slot s of d, and the entry's offset in it. */
int  fat_dir_slot(struct fatfs *fs, struct fdir *d, uint32_t s, uint64_t *lba, uint32_t *off);
/* A pinned pointer to slot s's 32 bytes; fat_dir_done unpins it, marking
 * it dirty if changed. */
uint8_t *fat_dir_entry(struct fatfs *fs, struct fdir *d, uint32_t s, int *err);
void fat_dir_done(struct fatfs *fs, struct fdir *d, uint32_t s, int changed);
/* Look name up in d (long or short name, ASCII case ignored): the index
 * of its entry in d->e (which stays valid, d->e itself may move), or
 * -ENOENT. */
int  fat_dir_find(struct fatfs *fs, struct fdir *d, const char *name);
/* Add an entry for name with the short entry's other fields from `proto`
 * (32 bytes; name and NT bits are made here).  *slot gets its slot. */
int  fat_dir_add(struct fatfs *fs, struct fdir *d, const char *name, const uint8_t *proto,
                 int *idx);
/* Remove entry idx (its long-name slots too). */
int  fat_dir_remove(struct fatfs *fs, struct fdir *d, int idx);
/* The next live entry at or after slot *cookie (readdir): 1 and the name,
 * the short entry copied to sfn32; 0 at the end. */
int  fat_dir_next(struct fatfs *fs, struct fdir *d, uint64_t *cookie, char *name,
                  uint8_t *sfn32, uint32_t *slot);
/* Does d hold nothing but "." and ".."? */
int  fat_dir_empty(struct fatfs *fs, struct fdir *d);
/* Walk a path (not "") from the root: the directory holding its last
 * component, referenced (fat_dir_put), and that component's index (-1 if
 * it does not exist; *last points at it in path). */
int  fat_walk(struct fatfs *fs, const char *path, struct fdir **dir, int *idx, const char **last);
/* The short entry of index entry idx copied into sfn32. */
int  fat_dir_read(struct fatfs *fs, struct fdir *d, int idx, uint8_t *sfn32);
/* Make a new directory cluster, "." and "..", for a directory in parent. */
int  fat_dir_make(struct fatfs *fs, struct fdir *parent, uint32_t *first);
uint64_t fat_ino(const struct fdir *d, uint32_t slot);
/* The directory starting at `first` is being removed: forget its index. */
void fat_dir_forget(struct fatfs *fs, uint32_t first);

/* ---- file.c ---- */
int  fat_file_open(struct fatfs *fs, struct fdir *d, int idx, struct ffile **f);
int  fat_file_close(struct fatfs *fs, struct ffile *f);
long fat_file_read(struct fatfs *fs, struct ffile *f, void *buf, size_t n, uint64_t off);
long fat_file_write(struct fatfs *fs, struct ffile *f, const void *buf, size_t n, uint64_t off);
int  fat_file_truncate(struct fatfs *fs, struct ffile *f, uint64_t len);
struct ffile *fat_file_find(struct fatfs *fs, struct fdir *d, uint32_t slot);
void fat_files_free(struct fatfs *fs);

/* ---- sync.c ---- */
int  fat_sync(struct fatfs *fs);
/* Write back early when the cache is filling up (between operations). */
int  fat_relieve(struct fatfs *fs);

/* ---- fsck.c ---- */
/* Check the mounted volume; with repair, fix what can be fixed (the
 * caller syncs).  One line per problem to say(arg, line) if not NULL. */
int  fat_fsck_vol(struct fatfs *fs, int repair, void (*say)(void *arg, const char *what),
                  void *arg, struct fatfs_stats *st);

/* ---- ops.c ---- */
/* Mount the FAT on a volume already open (fs->vol); options ro, check. */
int  fat_mount_vol(struct fatfs *fs, const char *opts);
void fat_release(struct fatfs *fs);
/* Damage found while working: said once, and the mount becomes read-only.
 * Returns -EIO. */
int  fat_damaged(struct fatfs *fs, const char *what, uint32_t where);

/* ---- share.c ---- */
/* Join the others using this volume (or take the kit's one-process lock
 * when no shared area can be had), holding the lock. */
int  fat_share_attach(struct fatfs *fs, const char *opts);
/* The mount is done: from now on the VFS takes the lock for each call. */
void fat_share_mounted(struct fatfs *fs);
void fat_share_detach(struct fatfs *fs);
/* Unmount, holding the lock: a read-only process leaving while what a dead
 * writer left waits for a writer that never came makes it whole itself
 * (the shared area holding it goes with the last process out). */
int  fat_share_leaving(struct fatfs *fs);
/* struct libfs_ops.enter/leave. */
int  fat_share_enter(void *fs, int change);
void fat_share_leave(void *fs);
/* A process dies holding what it had (host tests: the lock left dead). */
void fat_share_abandon(struct fatfs *fs);
/* Processes with the volume mounted (1 when not shared). */
uint32_t fat_share_users(struct fatfs *fs);
/* sync.c: a sync is (1) or is no longer (0) changing links and frees in
 * the FAT and names in directories: a holder that dies in between leaves
 * work for the next writer (share.c: repair). */
void fat_share_writing(struct fatfs *fs, int on);
/* A read-only process while a writer's death inside a sync waits for the
 * next writer's repair: a chain longer than its file is that, not damage
 * (file.c, share.c take what the size covers). */
int  fat_share_unrepaired(struct fatfs *fs);
/* sync.c: the directory sectors about to be written go into (1) or, now
 * durable, leave (0) the shared area's journal. */
void fat_share_journal(struct fatfs *fs, int on);
/* ops.c: the next sync's journal shows slots s0..s1 of d free (a
 * rename's old name, removed only after that sync; d NULL: none). */
void fat_share_unname(struct fatfs *fs, struct fdir *d, uint32_t s0, uint32_t s1);
/* ops.c, file.c: an open file lost (1) or, closed, gave up (0) its name;
 * its chain belongs to nobody on the disk. */
void fat_share_orphan(struct fatfs *fs, int on);

/* ---- dir.c, for share.c ---- */
/* Another process may have changed d: read its chain and names again; a
 * directory that is no longer there becomes empty and unfindable. */
int  fat_dir_reload(struct fatfs *fs, struct fdir *d);
/* Build d's index of names if it is not built (d->e). */
int  fat_dir_index(struct fatfs *fs, struct fdir *d);
/* Each known directory for which changed(fs, d, arg) says so: forgotten
 * if nobody holds it, else read again (fat_dir_reload). */
int  fat_dirs_catch_up(struct fatfs *fs, int (*changed)(struct fatfs *, struct fdir *, void *),
                       void *arg);

/* ---- csum.c ---- */
#define CK_CLEAN   1u         /* the checksum area's state: closed cleanly           */
#define CK_OPEN    2u         /* mounted read-write (or not closed: rebuilt at mount) */
#define CK_DAMAGED 3u         /* damage found: fsck -t fatfs -r makes them again       */
/* Sectors the checksum area takes at the end of a volume of this size. */
uint64_t fat_ck_area_size(uint64_t vol_sectors);
/* Metadata sector lba, at p, just got from the vvol: if it came from the
 * disk unchecked, check it.  0, or -EIO (said, and the volume read-only). */
int  fat_ck_check(struct fatfs *fs, uint64_t lba, const uint8_t *p);
/* The slots of the dirty metadata of the classes in mask (and of new
 * directory clusters with CL_DATA), from what the cache holds. */
int  fat_ck_update(struct fatfs *fs, unsigned mask);
/* Mount: find the area, make the slots again after an unclean close, and
 * mark the volume open (fsck: find it, check nothing).  Unmount: mark it
 * clean. */
int  fat_ck_open(struct fatfs *fs, int fsck);
int  fat_ck_close(struct fatfs *fs);
/* Every slot from the disk's contents (after a crash, or fsck's repairs);
 * fat_ck_make also marks the volume clean (mkfs, import). */
int  fat_ck_rebuild(struct fatfs *fs);
int  fat_ck_make(struct fatfs *fs);
void fat_ck_mark_damaged(struct fatfs *fs);
/* fsck: every metadata sector against its checksum, report() for each
 * that does not match.  How many did not, or -errno. */
int  fat_ck_verify(struct fatfs *fs, void (*report)(void *arg, const char *line), void *arg);
/* vvol_sector for a metadata sector (a FAT, directory or reserved one):
 * checked against its checksum when it comes from the disk. */
uint8_t *fat_meta_sector(struct fatfs *fs, uint64_t lba, int flags, int *err);
void fat_say(const char *fmt, ...);
extern int fat_quiet;         /* fat_say says nothing (a tool trying a volume) */

#endif
