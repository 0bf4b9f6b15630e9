/*
 * lfs.h - lfs, the log-structured library file system (thesis section
 * 4.1; after Sprite LFS): every change - data, inodes, directories - is
 * appended to a log of segments, many files' worth in one large
 * sequential write; an inode map says where each inode's newest copy is;
 * checkpoints at two alternating places say where the map is, and
 * roll-forward replays the log written after the last one; a cleaner
 * (cost-benefit, as in Sprite) copies the live blocks out of mostly empty
 * segments so they can be given back.  Segments are extent entries of the
 * file system's exonodes (a virtual volume's chunks, libos/vvol), taken
 * from the exodisk when needed and released to it when cleaned, so lfs
 * shares a disk with unixfs and fatfs.  docs/lfs.md is the design, the
 * on-disk format (format.h) and the crash argument.
 *
 * Options (mount and mkfs): unit=N, key=TEXT or keyhex=HEX, sb=SECTOR,
 * wait=MS (the kit's, libos/kit/kit.h), and
 *   mkfs:  seg=KIB   segment size, a power of two from 64 to 1024 (512)
 *          segs=N    segments the file system may ever hold (the disk's
 *                    size in segments, plus 64)
 *          cp=N      sectors per checkpoint copy (64: room for a million
 *                    inodes)
 *   mount: ro        read only
 *          pool=N    empty segments kept mapped rather than released (4)
 *          cpkib=N   KiB of log between checkpoints (32768): bounds how
 *                    much a mount after a crash rolls forward
 *          cleanlo=N the cleaner starts when fewer than this many
 *                    segments are free (on the disk, or empty ones of
 *                    ours), or fewer on a small volume (8), and cleans a
 *                    round at a time until one more is; cleanhi=N is
 *                    accepted (at least cleanlo) and no longer used
 *          autoclean=0  never clean on its own (lfsclean does it)
 */
#ifndef USERFS_LFS_H
#define USERFS_LFS_H

#include <stddef.h>
#include <stdint.h>
#include "libos/libfs.h"
#include "kernel/uapi/exodisk.h"

extern const struct libfs_ops lfs_ops;

/* Make an empty lfs; its anchor's sector in *sb.  0 or a negative errno. */
int lfs_mkfs(const char *opts, uint64_t *sb);

struct lfs;

/* Mount and unmount one directly (lfsclean, lfs-share): the same as
 * lfs_ops.mount and .unmount; the other operations of lfs_ops take fs. */
int lfs_mount(const char *opts, struct lfs **fs);
int lfs_unmount(struct lfs *fs);

/* What it did, for lfsclean, benchmarks and tests.  Write cost, as Sprite
 * LFS defines it: (new + clean_read + clean_moved) / new - the disk's
 * traffic per byte of new data, cleaning included. */
struct lfs_stats {
	uint64_t new_bytes;       /* log bytes written for the file system          */
	uint64_t clean_read;      /* bytes the cleaner read                         */
	uint64_t clean_moved;     /* live bytes the cleaner wrote again             */
	uint64_t clean_live;      /* live bytes of the segments it chose, as chosen */
	uint64_t segs_cleaned, segs_released, segs_mapped;
	uint64_t clean_rounds;    /* cleaning rounds (each ends with a checkpoint)  */
	uint64_t ps_written, commits, checkpoints, flushes;
	uint64_t cp_held;         /* rounds' checkpoints the program did not wait for */
	uint64_t rd_reqs, rd_sect, wr_reqs, wr_sect;
	uint64_t rc_hits, rc_misses;
	uint64_t share_pubs;      /* share maps published                           */
	uint64_t cp_bytes;        /* bytes checkpoints wrote: table blocks, records */
	uint64_t cp_sut_blocks;   /* usage table blocks among them                  */
	uint64_t cp_imap_blocks;  /* inode map blocks among them                    */
	uint64_t sut_reads;       /* usage table blocks read (as they were wanted)  */
	uint64_t ra_reqs;         /* reads ahead of a sequential reader (in rd_reqs) */
	/* the last mount */
	uint64_t roll_ps;         /* partial segments read by roll-forward          */
	uint64_t roll_groups;     /* commits it applied                             */
	uint64_t roll_sect;       /* sectors it read                                */
	uint64_t tail_sect;       /* sectors read past the log's end (torn or not?) */
	uint64_t mount_ns;
	uint64_t cp_rd_sect;      /* checkpoint record sectors it read (both copies) */
	uint64_t proof_sect;      /* log sectors it read for the record's proof     */
	uint64_t cp_unproved;     /* records it did not believe: their proof failed */
	uint64_t sut_mem;         /* bytes of usage table entries in memory (now)    */
};
struct lfs_usage {
	uint64_t segs;            /* segments the volume has room for               */
	uint64_t seg_bytes;
	uint64_t mapped;          /* segments holding disk sectors                  */
	uint64_t inuse;           /* ... with live bytes                            */
	uint64_t live;            /* live bytes                                     */
	uint64_t free_segs;       /* segments it could still write (disk included)  */
	uint64_t files;
};
void lfs_get_stats(struct lfs *fs, struct lfs_stats *st, struct lfs_usage *u);

/* Clean at most max segments (0: round after round while a round gains
 * something), each round ending with a checkpoint that lets the emptied
 * segments be reused or given back.  Returns the room gained in segments
 * (with max > 0: a part of a segment counts as one; with 0: whole segments
 * newly free), or a negative errno. */
int lfs_clean_now(struct lfs *fs, int max);
/* Commit and checkpoint now. */
int lfs_checkpoint_now(struct lfs *fs);

/* ---- sharing one file (share.c, shareread.c; docs/lfs.md "Sharing") -------
 * lfs_share lends the file at path (inside the mount) to other programs,
 * read-only, through proxy exonodes; the token names the share's map (a
 * proxy id, its sector, its read capability).  The share follows the file
 * as it is written and cleaned, until lfs_unshare, the unmount, or the
 * owner's exit: proxies never outlive their creator.  Another program
 * reads the file with lfs_share_read and the token: the exodisk alone, no
 * mount, no key. */
struct lfs_token {
	uint32_t unit;
	uint64_t id;              /* the map's proxy                                */
	uint64_t sector;          /* the map's first sector                         */
	struct ed_cap rc;         /* the read capability of every proxy of the share */
};
int lfs_share(struct lfs *fs, const char *path, struct lfs_token *t);
int lfs_unshare(struct lfs *fs, const struct lfs_token *t);

struct edc;
/* Read the shared file into buf (cap bytes; it must hold the size rounded
 * up to 512): its size in *size and the map's generation in *gen.  0;
 * -ENOENT when the share is gone (revoked, the owner exited, the file
 * deleted); -EFBIG when buf is too small (*size says how much); -EIO. */
int lfs_share_read(struct edc *c, const struct lfs_token *t, void *buf, size_t cap,
                   uint64_t *size, uint64_t *gen);
/* The token as text ("unit:id:sector:32 hex digits") and back (0, -EINVAL). */
void lfs_token_str(const struct lfs_token *t, char out[96]);
int  lfs_token_parse(const char *s, struct lfs_token *t);

#endif
