/*
 * format.h - the FAT on-disk format, as fatfs reads and writes it: the
 * boot sector (BPB), the FSInfo sector, the file allocation table's
 * entries, 32-byte directory entries and VFAT long-name entries.  Every
 * field is little-endian at a fixed byte offset, read and written through
 * the accessors below (no packed structures), so the same code is right
 * on any host.  The layout is Microsoft's FAT32 File System Specification
 * (1.03, 2000) as dosfstools and mtools implement it; docs/fatfs.md has
 * the summary.
 */
#ifndef USERFS_FATFS_FORMAT_H
#define USERFS_FATFS_FORMAT_H

#include <stdint.h>

/* ---- little-endian accessors ------------------------------------------------ */
static inline uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* ---- the boot sector (sector 0) ---------------------------------------------------- */
#define BS_JMP          0     /* EB xx 90 or E9 xx xx                                    */
#define BS_OEM          3     /* 8 bytes                                                 */
#define BPB_BYTSPERSEC  11    /* 2: 512 (the only size fatfs takes)                      */
#define BPB_SECPERCLUS  13    /* 1: a power of two, 1..128                               */
#define BPB_RSVDSECCNT  14    /* 2: sectors before the first FAT                         */
#define BPB_NUMFATS     16    /* 1: copies of the FAT                                    */
#define BPB_ROOTENTCNT  17    /* 2: FAT12/16 root directory entries; 0 on FAT32          */
#define BPB_TOTSEC16    19    /* 2                                                       */
#define BPB_MEDIA       21    /* 1: F0, F8..FF                                           */
#define BPB_FATSZ16     22    /* 2: sectors per FAT; 0 on FAT32                          */
#define BPB_SECPERTRK   24
#define BPB_NUMHEADS    26
#define BPB_HIDDSEC     28
#define BPB_TOTSEC32    32    /* 4                                                       */
/* FAT12/16 from byte 36 */
#define BS16_DRVNUM     36
#define BS16_BOOTSIG    38    /* 0x29: the three fields after it are valid               */
#define BS16_VOLID      39
#define BS16_VOLLAB     43    /* 11 bytes                                                */
#define BS16_FILSYSTYPE 54    /* 8 bytes: "FAT12   ", "FAT16   "                         */
#define BS16_CODE       62
/* FAT32 from byte 36 */
#define BPB32_FATSZ32   36    /* 4                                                       */
#define BPB32_EXTFLAGS  40    /* 2: bit 7 mirroring off, bits 0-3 the active FAT         */
#define BPB32_FSVER     42    /* 2: 0                                                    */
#define BPB32_ROOTCLUS  44    /* 4                                                       */
#define BPB32_FSINFO    48    /* 2                                                       */
#define BPB32_BKBOOTSEC 50    /* 2: the backup boot sector (6)                           */
#define BS32_DRVNUM     64
#define BS32_BOOTSIG    66
#define BS32_VOLID      67
#define BS32_VOLLAB     71
#define BS32_FILSYSTYPE 82    /* "FAT32   "                                          */
#define BS32_CODE       90
#define BS_SIG          510   /* 0x55 0xAA                                               */

/* ---- FSInfo (FAT32) ------------------------------------------------------------------ */
#define FSI_LEADSIG     0
#define FSI_STRUCSIG    484
#define FSI_FREE_COUNT  488   /* free clusters, 0xFFFFFFFF: unknown                      */
#define FSI_NXT_FREE    492   /* where to look first, 0xFFFFFFFF: unknown                */
#define FSI_TRAILSIG    508
#define FSI_LEAD        0x41615252u
#define FSI_STRUC       0x61417272u
#define FSI_TRAIL       0xAA550000u

/* ---- FAT entries ------------------------------------------------------------------------ */
/* Cluster numbers 2 .. nclusters+1 are data clusters.  Entry values: 0
 * free, BAD (type's 0x..7) a bad cluster, >= EOC (type's 0x..8) the end of
 * a chain, anything else the next cluster.  FAT32 entries are 28 bits
 * (the top four are kept as found). */
#define FAT12_BAD  0xFF7u
#define FAT16_BAD  0xFFF7u
#define FAT32_BAD  0x0FFFFFF7u
#define FAT32_MASK 0x0FFFFFFFu

/* ---- directory entries ---------------------------------------------------------------- */
#define DIR_NAME        0     /* 11: 8 + 3, space padded; [0] = 0xE5 deleted, 0 end     */
#define DIR_ATTR        11
#define DIR_NTRES       12    /* 0x08: base shown in lower case, 0x10: extension      */
#define DIR_CRTTIMETENTH 13
#define DIR_CRTTIME     14
#define DIR_CRTDATE     16
#define DIR_LSTACCDATE  18
#define DIR_FSTCLUSHI   20
#define DIR_WRTTIME     22
#define DIR_WRTDATE     24
#define DIR_FSTCLUSLO   26
#define DIR_FILESIZE    28
#define DIRENT          32    /* bytes of one entry                                   */

#define ATTR_RO     0x01
#define ATTR_HIDDEN 0x02
#define ATTR_SYSTEM 0x04
#define ATTR_VOLID  0x08
#define ATTR_DIR    0x10
#define ATTR_ARCH   0x20
#define ATTR_LFN    0x0F      /* RO | HIDDEN | SYSTEM | VOLID: a long-name entry       */
#define ATTR_LFN_MASK 0x3F

#define NTRES_LBASE 0x08
#define NTRES_LEXT  0x10

#define DIR_FREE    0xE5      /* name[0] of a deleted entry                             */
#define DIR_KANJI   0x05      /* name[0] standing for a real 0xE5                       */

/* ---- long-name entries ------------------------------------------------------------------ */
#define LDIR_ORD       0      /* sequence number 1..20, 0x40 on the last (first stored) */
#define LDIR_NAME1     1      /* 5 UCS-2 characters                                      */
#define LDIR_ATTR      11     /* ATTR_LFN                                               */
#define LDIR_TYPE      12     /* 0                                                      */
#define LDIR_CHKSUM    13     /* checksum of the short name it belongs to              */
#define LDIR_NAME2     14     /* 6 characters                                          */
#define LDIR_FSTCLUSLO 26     /* 0                                                      */
#define LDIR_NAME3     28     /* 2 characters                                          */
#define LFN_LAST       0x40
#define LFN_CHARS      13     /* characters per entry                                  */
#define LFN_MAX        255    /* characters in a long name                             */

static inline uint32_t dir_first(const uint8_t *d)
{
	return (uint32_t)le16(d + DIR_FSTCLUSHI) << 16 | le16(d + DIR_FSTCLUSLO);
}

static inline void dir_set_first(uint8_t *d, uint32_t c)
{
	put16(d + DIR_FSTCLUSHI, c >> 16);
	put16(d + DIR_FSTCLUSLO, c & 0xffff);
}

#endif
