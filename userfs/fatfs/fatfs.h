/*
 * fatfs.h - the FAT library file system: FAT12, FAT16 and FAT32 with VFAT
 * long names, on an allocate-on-write virtual volume (libos/vvol/vvol.h).
 * The volume's sectors are a FAT image byte for byte, so dosfstools and
 * mtools read what programs wrote (tools/exotool fat-export, fat-import).
 * docs/fatfs.md is the design.
 *
 * Mount options (`mount /dos fatfs key=...`):
 *   unit=N, key=TEXT | keyhex=HEX, sb=SECTOR, wait=MS   as for every kit libFS
 *   ro          read-only
 *   check       run the checker first; mount read-only if it finds damage
 *   cache=MIB   the volume cache (default: a quarter of the free memory,
 *               32 to 512 MiB: vvol_cache_auto)
 *
 * mkfs options (fatfs_mkfs, `mkfs -t fatfs ...`), besides unit/key/sb:
 *   size=BYTES  the volume (K, M, G suffixes; default 1G); it takes disk
 *               space only where written
 *   fat=12|16|32  the FAT type (default: from the size, as mkfs.fat does)
 *   cluster=BYTES  512 .. 65536, a power of two (default: from the size)
 *   chunk=BYTES    the virtual volume's allocation unit, 4K .. 1M (64K)
 *   label=NAME     the volume label (11 characters at most)
 *   fats=N         copies of the FAT (2)
 *   root=N         FAT12/16 root directory entries (512)
 */
#ifndef USERFS_FATFS_FATFS_H
#define USERFS_FATFS_FATFS_H

#include <stdint.h>
#include "libos/libfs.h"

extern const struct libfs_ops fatfs_ops;

/* Make a FAT volume on the unit named by opts.  *sb gets the anchor's
 * sector.  -EEXIST if this key already has one there. */
int fatfs_mkfs(const char *opts, uint64_t *sb);

struct fatfs_stats {
	uint64_t files, dirs, bytes;      /* fsck: what it found                 */
	uint64_t clusters, free;          /* data clusters, free ones             */
	uint64_t problems;                /* fsck: problems found                 */
	uint64_t repairable;              /* of those, ones the repair mode fixes */
	uint64_t repaired;                /* fsck -r: problems repaired           */
	uint64_t syncs;
	uint64_t ck_checked, ck_bad;      /* metadata sectors checked against their
	                                     checksums, and found damaged         */
	uint64_t ck_rebuilds;             /* times every checksum was made again  */
};

/* Check the FAT volume named by opts (not mounted by anyone).  `say` gets
 * one line per problem.  With the option "repair", fix what can be fixed
 * (docs/fatfs.md lists what).  0, or -errno if it could not be checked. */
int fatfs_fsck(const char *opts, void (*say)(void *arg, const char *what), void *arg,
               struct fatfs_stats *st);

/* The same checker on a plain FAT image in memory (host tools: import). */
int fatfs_fsck_image(uint8_t *img, uint64_t nsectors, int repair,
                     void (*say)(void *arg, const char *what), void *arg,
                     struct fatfs_stats *st);

/* Make a FAT on a plain image in memory (the mkfs options above but
 * size, chunk, unit, key). */
int fatfs_mkfs_image(uint8_t *img, uint64_t nsectors, const char *opts);

/* Mount a plain FAT image in memory as a libFS (host tools and tests):
 * *fs is then used with fatfs_ops' operations, and fatfs_ops.unmount. */
int fatfs_mount_image(uint8_t *img, uint64_t nsectors, const char *opts, void **fs);

/* A volume's size and where its chunks are, for exotool fat-export:
 * open (kit mount + volume), then read sectors; 1 if the chunk holding
 * lba holds data on the disk, 0 if it reads as zeros. */
struct fatfs_vol;
int  fatfs_vol_open(const char *opts, int make, uint64_t nsectors, uint32_t chunk,
                    struct fatfs_vol **v);
uint64_t fatfs_vol_size(struct fatfs_vol *v);
uint32_t fatfs_vol_chunk(struct fatfs_vol *v);
int  fatfs_vol_mapped(struct fatfs_vol *v, uint64_t lba);
int  fatfs_vol_read(struct fatfs_vol *v, uint64_t lba, void *buf, uint64_t n);
int  fatfs_vol_write(struct fatfs_vol *v, uint64_t lba, const void *buf, uint64_t n);
/* Sectors the volume takes on the disk. */
uint64_t fatfs_vol_footprint(struct fatfs_vol *v);
/* Write back (if it was made or written) and close. */
int  fatfs_vol_close(struct fatfs_vol *v);

#endif
