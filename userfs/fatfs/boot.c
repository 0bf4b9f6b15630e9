/*
 * boot.c - the boot sector: reading and checking it at mount (the
 * geometry every other file uses: where the FATs, the root directory and
 * cluster 2 are, how many clusters there are and so which FAT type it is),
 * and writing a new FAT (fat_format, what mkfs does).
 *
 * The FAT type is decided by the number of data clusters alone, as the
 * specification says: fewer than 4085 is FAT12, fewer than 65525 FAT16,
 * else FAT32.  Anything fatfs cannot take (a sector size other than 512,
 * a cluster over 64 KiB, a FAT too small for the clusters, a file system
 * larger than its volume) is refused with a message saying which field.
 *
 * fat_format lays a volume out as mkfs.fat does: reserved sectors (32 on
 * FAT32, with FSInfo at 1 and the backup boot sector at 6), the FATs, the
 * FAT12/16 root directory, then the clusters, with the data area aligned
 * to the cluster size (at least 4 KiB) so a cluster never straddles a
 * cache block.  A FAT only says where things are: on a fresh virtual
 * volume everything else is zeros already and costs nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fat.h"
#include "libos/clock.h"

static int pow2(uint32_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

static int bad(const char *what, uint32_t v)
{
	fat_say("fatfs: not a FAT volume fatfs can use: %s (%u)", what, v);
	return -EINVAL;
}

int fat_boot(struct fatfs *fs)
{
	uint8_t b[ED_SECTOR];
	int e = vvol_read(&fs->vol, 0, b, 1, 0);
	if (e < 0)
		return e;
	uint32_t bps = le16(b + BPB_BYTSPERSEC);
	if (bps != ED_SECTOR)
		return bad(bps == 0 ? "no BIOS parameter block: bytes per sector 0" :
		           "bytes per sector is not 512", bps);
	fs->spc = b[BPB_SECPERCLUS];
	if (!pow2(fs->spc) || fs->spc > 128)
		return bad("sectors per cluster", fs->spc);
	fs->csize = fs->spc * ED_SECTOR;
	fs->rsvd = le16(b + BPB_RSVDSECCNT);
	if (fs->rsvd == 0)
		return bad("no reserved sectors", 0);
	fs->nfats = b[BPB_NUMFATS];
	if (fs->nfats == 0 || fs->nfats > 4)
		return bad("number of FATs", fs->nfats);
	fs->rootents = le16(b + BPB_ROOTENTCNT);
	uint32_t t16 = le16(b + BPB_TOTSEC16), t32 = le32(b + BPB_TOTSEC32);
	fs->totsec = t16 ? t16 : t32;
	if (fs->totsec == 0)
		return bad("total sectors", 0);
	if (fs->totsec > fs->vol.d.nsectors)
		return bad("the file system is larger than its volume (sectors)", (uint32_t)fs->totsec);
	fs->media = b[BPB_MEDIA];
	if (fs->media != 0xF0 && fs->media < 0xF8)
		return bad("media byte", fs->media);
	uint32_t fat16sz = le16(b + BPB_FATSZ16);
	fs->fatsz = fat16sz ? fat16sz : le32(b + BPB32_FATSZ32);
	if (fs->fatsz == 0)
		return bad("sectors per FAT", 0);
	fs->rootnsec = ((uint64_t)fs->rootents * DIRENT + ED_SECTOR - 1) / ED_SECTOR;
	fs->rootsec = fs->rsvd + (uint64_t)fs->nfats * fs->fatsz;
	fs->datasec = fs->rootsec + fs->rootnsec;
	if (fs->datasec >= fs->totsec)
		return bad("no room for data after the FATs (data starts at sector)", (uint32_t)fs->datasec);
	uint64_t ncl = (fs->totsec - fs->datasec) / fs->spc;
	if (ncl > 0x0FFFFFF5u)
		return bad("too many clusters", (uint32_t)ncl);
	fs->nclusters = (uint32_t)ncl;
	fs->type = ncl < 4085 ? 12 : ncl < 65525 ? 16 : 32;
	if ((fs->type == 32) != (fat16sz == 0))
		return bad(fs->type == 32 ? "FAT32 cluster count with a FAT16 BPB (clusters)"
		                          : "FAT12/16 cluster count with a FAT32 BPB (clusters)",
		           fs->nclusters);
	uint64_t bits = fs->type == 12 ? 12 : fs->type == 16 ? 16 : 32;
	if (((uint64_t)fs->nclusters + 2) * bits > (uint64_t)fs->fatsz * ED_SECTOR * 8)
		return bad("the FAT is too small for the clusters (sectors per FAT)", fs->fatsz);
	fs->bad = fs->type == 12 ? FAT12_BAD : fs->type == 16 ? FAT16_BAD : FAT32_BAD;
	fs->eoc = fs->bad + 1;
	fs->active = 0;
	fs->mirror = 1;
	fs->rootclus = 0;
	fs->fsinfo = 0;
	fs->nfree = -1;
	fs->hint = 2;
	if (fs->type == 32) {
		if (fs->rootents != 0)
			return bad("FAT32 with a root directory region (entries)", fs->rootents);
		uint32_t ext = le16(b + BPB32_EXTFLAGS);
		if (ext & 0x80) {
			fs->mirror = 0;
			fs->active = (int)(ext & 0xF);
			if ((uint32_t)fs->active >= fs->nfats)
				return bad("the active FAT", (uint32_t)fs->active);
		}
		if (le16(b + BPB32_FSVER) != 0)
			return bad("FAT32 version", le16(b + BPB32_FSVER));
		fs->rootclus = le32(b + BPB32_ROOTCLUS);
		if (!fat_valid_clus(fs, fs->rootclus))
			return bad("root directory cluster", fs->rootclus);
		fs->bkboot = le16(b + BPB32_BKBOOTSEC);
		uint32_t fi = le16(b + BPB32_FSINFO);
		fs->volid = le32(b + BS32_VOLID);
		if (fi != 0 && fi != 0xFFFF && fi < fs->rsvd) {
			uint8_t s[ED_SECTOR];
			if ((e = vvol_read(&fs->vol, fi, s, 1, 0)) < 0)
				return e;
			if (le32(s + FSI_LEADSIG) == FSI_LEAD && le32(s + FSI_STRUCSIG) == FSI_STRUC &&
			    le32(s + FSI_TRAILSIG) == FSI_TRAIL) {
				fs->fsinfo = fi;
				uint32_t fc = le32(s + FSI_FREE_COUNT), nx = le32(s + FSI_NXT_FREE);
				if (fc <= fs->nclusters)
					fs->nfree = fc;
				if (fat_valid_clus(fs, nx))
					fs->hint = nx;
			}
		}
	} else {
		if (fs->rootents == 0)
			return bad("FAT12/16 without root directory entries", 0);
		fs->volid = b[BS16_BOOTSIG] == 0x29 ? le32(b + BS16_VOLID) : 0;
	}
	return 0;
}

/* ---- making a FAT ------------------------------------------------------------------ */

static int opt_size(const char *opts, const char *key, uint64_t def, uint64_t *out)
{
	char v[32];
	int r = libfs_opt(opts, key, v, sizeof v);
	*out = def;
	if (r == 0)
		return 0;
	char *end;
	if (r < 0 || v[0] < '0' || v[0] > '9')
		return -EINVAL;
	uint64_t n = strtoull(v, &end, 0);
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	case 't': case 'T': n <<= 40; end++; break;
	default: break;
	}
	if (*end != 0)
		return -EINVAL;
	*out = n;
	return 0;
}

int fat_parse_size(const char *opts, const char *key, uint64_t def, uint64_t *out)
{
	return opt_size(opts, key, def, out);
}

/* The layout for nsect sectors, type `type` and spc sectors per cluster:
 * the FAT size (iterated until it covers the clusters it leaves), and the
 * reserved sectors grown so the data area starts on a cluster boundary. */
static void layout(uint64_t nsect, int type, uint32_t spc, uint32_t nfats, uint32_t rootnsec,
                   uint32_t *rsvd, uint32_t *fatsz, uint64_t *ncl)
{
	uint32_t base = type == 32 ? 32 : 1;
	uint32_t align = spc < 8 ? 8 : spc;
	uint32_t bits = type == 12 ? 12 : type == 16 ? 16 : 32;
	*rsvd = base;
	*fatsz = 1;
	for (int round = 0; round < 64; round++) {
		uint64_t meta = *rsvd + (uint64_t)nfats * *fatsz + rootnsec;
		uint64_t data = nsect > meta ? nsect - meta : 0;
		*ncl = data / spc;
		uint32_t need = (uint32_t)(((*ncl + 2) * bits + 8 * ED_SECTOR - 1) / (8 * ED_SECTOR));
		uint32_t r = base;
		while ((r + (uint64_t)nfats * need + rootnsec) % align)
			r++;
		if (need <= *fatsz && r == *rsvd)
			break;
		*fatsz = need > *fatsz ? need : *fatsz;
		*rsvd = r;
	}
}

static int fits(int type, uint64_t ncl)
{
	return type == 12 ? ncl >= 1 && ncl < 4085 :
	       type == 16 ? ncl >= 4085 && ncl < 65525 : ncl >= 65525 && ncl <= 0x0FFFFFF5u;
}

static uint32_t default_cluster(uint64_t bytes, int type)
{
	if (type == 32)
		return bytes <= (260ull << 20) ? 512 : bytes <= (8ull << 30) ? 4096 :
		       bytes <= (16ull << 30) ? 8192 : bytes <= (32ull << 30) ? 16384 : 32768;
	return bytes <= (128ull << 20) ? 2048 : bytes <= (256ull << 20) ? 4096 : 8192;
}

int fat_format(struct fatfs *fs, const char *opts)
{
	/* On the exodisk the metadata's checksums take the volume's end
	 * (csum.c); the FAT is the rest. */
	uint64_t vsect = fs->vol.d.nsectors, fat, cl, nf, re;
	uint64_t nsect = fs->vol.k ? vsect - fat_ck_area_size(vsect) : vsect;
	char label[16];
	memcpy(label, "NO NAME    ", 12);
	int haslabel = 0;
	if (opt_size(opts, "fat", 0, &fat) < 0 || opt_size(opts, "cluster", 0, &cl) < 0 ||
	    opt_size(opts, "fats", 2, &nf) < 0 || opt_size(opts, "root", 512, &re) < 0)
		return -EINVAL;
	int r = libfs_opt(opts, "label", label, sizeof label);
	if (r < 0 || (r == 1 && strlen(label) > 11)) {
		fat_say("fatfs: mkfs: a label has at most 11 characters");
		return -EINVAL;
	}
	if (r == 1) {
		haslabel = 1;
		for (size_t i = 0; i < 11; i++) {
			char c = i < strlen(label) ? label[i] : ' ';
			label[i] = c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
		}
	}
	if ((fat != 0 && fat != 12 && fat != 16 && fat != 32) || nf < 1 || nf > 4 ||
	    (cl != 0 && (!pow2((uint32_t)cl) || cl < 512 || cl > 65536)) || re == 0 || re > 65520 ||
	    nsect > 0xFFFFFFFFull) {
		fat_say("fatfs: mkfs: options are fat=12|16|32, cluster=512..65536 (a power of two), "
		        "fats=1..4, root=1..65520, size below 2T");
		return -EINVAL;
	}
	uint64_t bytes = vsect * ED_SECTOR;     /* the size asked for decides the type */
	int type = (int)fat;
	if (type == 0)
		type = bytes >= (512ull << 20) ? 32 : 16;
	uint32_t spc = cl ? (uint32_t)cl / ED_SECTOR : default_cluster(bytes, type) / ED_SECTOR;
	uint32_t rootnsec = type == 32 ? 0 : (uint32_t)((re * DIRENT + ED_SECTOR - 1) / ED_SECTOR);
	uint32_t rsvd, fatsz;
	uint64_t ncl;
	layout(nsect, type, spc, (uint32_t)nf, rootnsec, &rsvd, &fatsz, &ncl);
	if (fat == 0 && type == 16 && ncl < 4085) {
		type = 12;
		layout(nsect, type, spc, (uint32_t)nf, rootnsec, &rsvd, &fatsz, &ncl);
	}
	/* Without a cluster size given, adjust it to what the type needs. */
	while (cl == 0 && !fits(type, ncl) && spc > 1 && ncl < (type == 32 ? 65525u : 4085u)) {
		spc /= 2;
		layout(nsect, type, spc, (uint32_t)nf, rootnsec, &rsvd, &fatsz, &ncl);
	}
	while (cl == 0 && !fits(type, ncl) && spc < 128 && ncl >= (type == 12 ? 4085u : 65525u)) {
		spc *= 2;
		layout(nsect, type, spc, (uint32_t)nf, rootnsec, &rsvd, &fatsz, &ncl);
	}
	if (!fits(type, ncl)) {
		fat_say("fatfs: mkfs: %llu clusters of %u bytes cannot be FAT%d (FAT12 < 4085, "
		        "FAT16 4085..65524, FAT32 >= 65525)", (unsigned long long)ncl,
		        spc * ED_SECTOR, type);
		return -EINVAL;
	}
	uint16_t date, time;
	uint8_t tenth;
	fat_now(&date, &time, &tenth);
	uint32_t volid = (uint32_t)libos_time_ns() ^ (uint32_t)(libos_time_ns() >> 32) ^ date << 16;

	uint8_t b[ED_SECTOR];
	memset(b, 0, sizeof b);
	b[BS_JMP] = 0xEB;
	b[BS_JMP + 1] = type == 32 ? BS32_CODE - 2 : BS16_CODE - 2;
	b[BS_JMP + 2] = 0x90;
	memcpy(b + BS_OEM, "EXODISK ", 8);
	put16(b + BPB_BYTSPERSEC, ED_SECTOR);
	b[BPB_SECPERCLUS] = (uint8_t)spc;
	put16(b + BPB_RSVDSECCNT, rsvd);
	b[BPB_NUMFATS] = (uint8_t)nf;
	put16(b + BPB_ROOTENTCNT, type == 32 ? 0 : rootnsec * ED_SECTOR / DIRENT);
	if (type != 32 && nsect < 65536)
		put16(b + BPB_TOTSEC16, (uint32_t)nsect);
	else
		put32(b + BPB_TOTSEC32, (uint32_t)nsect);
	b[BPB_MEDIA] = 0xF8;
	put16(b + BPB_SECPERTRK, 63);
	put16(b + BPB_NUMHEADS, 255);
	int code;
	if (type == 32) {
		put32(b + BPB32_FATSZ32, fatsz);
		put32(b + BPB32_ROOTCLUS, 2);
		put16(b + BPB32_FSINFO, 1);
		put16(b + BPB32_BKBOOTSEC, 6);
		b[BS32_DRVNUM] = 0x80;
		b[BS32_BOOTSIG] = 0x29;
		put32(b + BS32_VOLID, volid);
		memcpy(b + BS32_VOLLAB, label, 11);
		memcpy(b + BS32_FILSYSTYPE, "FAT32   ", 8);
		code = BS32_CODE;
	} else {
		put16(b + BPB_FATSZ16, fatsz);
		b[BS16_DRVNUM] = 0x80;
		b[BS16_BOOTSIG] = 0x29;
		put32(b + BS16_VOLID, volid);
		memcpy(b + BS16_VOLLAB, label, 11);
		memcpy(b + BS16_FILSYSTYPE, type == 12 ? "FAT12   " : "FAT16   ", 8);
		code = BS16_CODE;
	}
	/* Not bootable: halt, forever. */
	b[code] = 0xFA;
	b[code + 1] = 0xF4;
	b[code + 2] = 0xEB;
	b[code + 3] = 0xFD;
	b[BS_SIG] = 0x55;
	b[BS_SIG + 1] = 0xAA;

	/* A volume that is not fresh (an image) gets its FATs and root zeroed. */
	int e = 0;
	if (fs->vol.k == NULL) {
		uint64_t meta = rsvd + (uint64_t)nf * fatsz + rootnsec;
		e = vvol_write(&fs->vol, 0, NULL, meta, CL_FAT);
		if (e == 0 && type == 32)
			e = vvol_write(&fs->vol, rsvd + (uint64_t)nf * fatsz, NULL, spc, CL_FAT);
	}
	if (e == 0)
		e = vvol_write(&fs->vol, 0, b, 1, CL_FAT);
	if (e == 0 && type == 32) {
		e = vvol_write(&fs->vol, 6, b, 1, CL_FAT);
		uint8_t fi[ED_SECTOR];
		memset(fi, 0, sizeof fi);
		put32(fi + FSI_LEADSIG, FSI_LEAD);
		put32(fi + FSI_STRUCSIG, FSI_STRUC);
		put32(fi + FSI_FREE_COUNT, (uint32_t)ncl - 1);
		put32(fi + FSI_NXT_FREE, 3);
		put32(fi + FSI_TRAILSIG, FSI_TRAIL);
		if (e == 0)
			e = vvol_write(&fs->vol, 1, fi, 1, CL_FAT);
		if (e == 0)
			e = vvol_write(&fs->vol, 7, fi, 1, CL_FAT);
	}
	if (e < 0)
		return e;
	if ((e = fat_boot(fs)) < 0)
		return e;
	/* FAT[0]: the media byte; FAT[1]: all ones; FAT32's root cluster. */
	for (uint32_t k = 0; k < fs->nfats && e == 0; k++) {
		e = fat_set_copy(fs, (int)k, 0, (fs->type == 32 ? FAT32_MASK & ~0xFFu :
		                 fs->type == 16 ? 0xFF00u : 0xF00u) | 0xF8, CL_FAT);
		if (e == 0)
			e = fat_set_copy(fs, (int)k, 1, fs->type == 32 ? FAT32_MASK : fs->type == 16 ?
			                 0xFFFFu : 0xFFFu, CL_FAT);
		if (e == 0 && fs->type == 32)
			e = fat_set_copy(fs, (int)k, 2, FAT32_MASK, CL_FAT);
	}
	if (e == 0 && haslabel) {
		uint8_t d[DIRENT];
		memset(d, 0, sizeof d);
		memcpy(d + DIR_NAME, label, 11);
		d[DIR_ATTR] = ATTR_VOLID;
		put16(d + DIR_WRTTIME, time);
		put16(d + DIR_WRTDATE, date);
		uint64_t lba = fs->type == 32 ? fat_clus_lba(fs, fs->rootclus) : fs->rootsec;
		uint8_t s[ED_SECTOR];
		e = vvol_read(&fs->vol, lba, s, 1, 0);
		memcpy(s, d, DIRENT);
		if (e == 0)
			e = vvol_write(&fs->vol, lba, s, 1, CL_FAT);
	}
	if (e == 0 && fs->type == 32)
		fs->nfree = fs->nclusters - 1;
	return e;
}
