/*
 * explain.c - exotool's errors in words.  When an image cannot be used,
 * the exodisk core answers with a code (ED_E_FORMAT, ED_E_BADMAC, a block
 * layer's BLK_E_RANGE...); a person needs to know what is wrong with the
 * image and what to do.  The core's code says what failed; the raw
 * superblocks at sectors 0 and 8 often say why (another program's image,
 * a blank file, a format version from another exodisk, a file cut short,
 * the wrong key), and the exodisk's checker names the first damaged
 * sector.  Used by exotool.c, unixfs.c and fat.c (docs/exodisk.md,
 * "exotool").
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tools/exotool-src/exotool_explain.h"
#include "tests/host/exodisk/edharness.h"
#include "tests/host/exodisk/hostdisk.h"
#include "kernel/exodisk/check.h"
#include "kernel/exodisk/ondisk.h"
#include "libos/edc.h"
#include "kernel/uapi/errno.h"

static char text[512];

uint64_t exotool_image_sectors(const char *image)
{
	struct stat st;
	if (stat(image, &st) != 0) {
		fprintf(stderr, "exotool: cannot open %s: %s\n", image, strerror(errno));
		exit(1);
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "exotool: %s: not a disk image (not a regular file)\n", image);
		exit(1);
	}
	if (st.st_size == 0) {
		fprintf(stderr, "exotool: %s: the image is empty (make one with exotool format)\n",
		        image);
		exit(1);
	}
	if (st.st_size % 512 != 0) {
		fprintf(stderr, "exotool: %s: %lld bytes is not a whole number of 512-byte sectors "
		        "(a truncated image, or not a disk image)\n", image, (long long)st.st_size);
		exit(1);
	}
	return (uint64_t)st.st_size / 512;
}

/* Sector `s` of the image, raw; false if it cannot be read whole. */
static bool read_raw(const char *image, uint64_t s, void *buf)
{
	int fd = open(image, O_RDONLY);
	if (fd < 0)
		return false;
	ssize_t n = pread(fd, buf, 512, (off_t)(s * 512));
	close(fd);
	return n == 512;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/* What the first sectors look like when they hold no exodisk. */
static const char *foreign(const char *image)
{
	uint8_t s0[512], s8[512];
	if (!read_raw(image, 0, s0) || !read_raw(image, 8, s8))
		return "";
	if (all_zero(s0, 512) && all_zero(s8, 512))
		return "; sectors 0 and 8 are all zeros: a blank image (make an exodisk on it with "
		       "exotool format)";
	if (s0[510] == 0x55 && s0[511] == 0xaa)
		return "; sector 0 holds a PC boot sector: a FAT file system or a partitioned disk? "
		       "(exotool fat-import puts a FAT image on an exodisk)";
	if (memcmp(s0, "\x7f" "ELF", 4) == 0)
		return "; it is an ELF program, not a disk image";
	return "";
}

/* The raw superblock copies: how many carry the exodisk's magic. */
static int raw_supers(const char *image, struct ed_super sb[2])
{
	int n = 0;
	for (int i = 0; i < 2; i++) {
		if (!read_raw(image, i == 0 ? ED_SB_A : ED_SB_B, &sb[i]))
			memset(&sb[i], 0, sizeof sb[i]);
		n += sb[i].magic == ED_SB_MAGIC;
	}
	return n;
}

static const char *blk_words(long code)
{
	switch (code) {
	case BLK_E_RANGE: return "a read past the end of the image: the image is truncated";
	case BLK_E_IO:    return "the image file could not be read or written";
	case BLK_E_MEDIUM: return "the image could not be read there";
	case BLK_E_PROTECT: return "the image is read-only";
	default:          return NULL;
	}
}

const char *exotool_why(const char *image, long code, struct exodisk *ed)
{
	struct ed_super sb[2];
	int nsb = raw_supers(image, sb);
	uint64_t bad = ed != NULL ? ed_bad_sector(ed) : UINT64_MAX;
	struct stat st;
	uint64_t have = stat(image, &st) == 0 ? (uint64_t)st.st_size / 512 : 0;
	const char *w;
	switch (code) {
	case ED_E_FORMAT:
		snprintf(text, sizeof text, "not an exodisk image (no exodisk superblock at sector 0 "
		         "or 8)%s", foreign(image));
		break;
	case ED_E_VERSION: {
		unsigned v = sb[0].magic == ED_SB_MAGIC ? sb[0].fmt : sb[1].fmt;
		snprintf(text, sizeof text, "an exodisk of format version %u; this exotool reads "
		         "versions %u and %u only (use the exotool of the exodisk that made it, or "
		         "format it again, losing what is on it)", v, (unsigned)ED_SB_FMT_OLD,
		         (unsigned)ED_SB_FMT);
		break;
	}
	case ED_E_TOOBIG: {
		uint64_t want = 0;
		for (int i = 0; i < 2; i++)
			if (sb[i].magic == ED_SB_MAGIC && sb[i].nsectors > want)
				want = sb[i].nsectors;
		if (want > have)
			snprintf(text, sizeof text, "the image is truncated: its superblock says the exodisk "
			         "has %llu sectors, the file holds %llu (copy it whole, or grow it back "
			         "with truncate -s %llu)", (unsigned long long)want,
			         (unsigned long long)have, (unsigned long long)want * 512);
		else
			snprintf(text, sizeof text, "too big: an exodisk addresses at most 32 TiB, and its "
			         "log at most %u sectors", (unsigned)ED_LOG_MAX);
		break;
	}
	case ED_E_BADMAC:
		if (bad != UINT64_MAX && bad > ED_SB_B)
			snprintf(text, sizeof text, "damaged at sector %llu: the exodisk's tree page at "
			         "sectors %llu..%llu fails its integrity check (changed outside the "
			         "exodisk)", (unsigned long long)bad, (unsigned long long)bad,
			         (unsigned long long)(bad + ED_SECT_PER_PAGE - 1));
		else if (nsb == 2)
			snprintf(text, sizeof text, "neither superblock (sectors 0 and 8) verifies with "
			         "this key: the wrong key (give the boot key with -k KEYHEX), or both "
			         "copies are damaged");
		else
			snprintf(text, sizeof text, "the superblock at sector %llu does not verify with this "
			         "key: most likely the wrong key (give the boot key with -k KEYHEX); if the "
			         "key is right, that sector is damaged",
			         (unsigned long long)(sb[0].magic == ED_SB_MAGIC ? ED_SB_A : ED_SB_B));
		break;
	case ED_E_CORRUPT:
	case ED_E_STALE:
		w = code == ED_E_CORRUPT ? "authentic but malformed metadata"
		                         : "an older version of its metadata than the exodisk wrote "
		                           "last (rolled back or replayed)";
		if (bad != UINT64_MAX)
			snprintf(text, sizeof text, "damaged at sector %llu (%s): %s",
			         (unsigned long long)bad, bad <= ED_SB_B ? "a superblock" : "a tree page", w);
		else
			snprintf(text, sizeof text, "damaged: %s", w);
		break;
	case ED_E_RANGE:
		snprintf(text, sizeof text, "the image is too small for an exodisk");
		break;
	case ED_E_NOMEM:
		snprintf(text, sizeof text, "out of memory");
		break;
	default:
		if ((w = blk_words(code)) != NULL)
			snprintf(text, sizeof text, "%s", w);
		else if ((w = ed_strerror(code)) != NULL)
			snprintf(text, sizeof text, "%s", w);
		else if (code < 0 && code > -64)
			snprintf(text, sizeof text, "%s", strerror((int)-code));
		else
			snprintf(text, sizeof text, "unexpected error code %ld", code);
		break;
	}
	return text;
}

static char found[256];

static void first_violation(void *arg, int sev, const char *what, uint64_t sector, uint64_t detail)
{
	(void)arg;
	(void)detail;
	if (sev == ED_CHK_VIOLATION && found[0] == '\0')
		snprintf(found, sizeof found, "damaged at sector %llu: %s", (unsigned long long)sector,
		         what);
}

const char *exotool_find_damage(const char *image, const char key[16])
{
	static struct harness h;
	static struct hostdisk hd;
	struct stat st;
	if (stat(image, &st) != 0 || st.st_size < 512)
		return NULL;
	blk_reset();
	h_init(&h, 0x6578706c61696eull);
	if (hostdisk_init(&hd, (uint64_t)st.st_size / 512, HD_SYNC, false, 1) != 0 ||
	    hostdisk_load(&hd, image) != 0)
		return NULL;
	struct exodisk *ed = h_core(&h, NULL, key);
	struct ed_check_stats cs;
	found[0] = '\0';
	int e = ed_check_disk(ed, 0, first_violation, NULL, NULL, &cs);
	if (e != 0)
		return exotool_why(image, e, ed);
	return found[0] != '\0' ? found : NULL;
}

void exotool_die(const char *image, const char key[16], struct exodisk *ed, const char *what,
                 long code)
{
	fflush(stdout);
	if (code == 0) {
		fprintf(stderr, "exotool: %s\n", what);
	} else if (code < 0 && code > K_E_FIRST_BLK) {
		/* An errno: a file system's.  Damage the checker sees explains it. */
		char err[128];
		snprintf(err, sizeof err, "%s", strerror((int)-code));
		const char *dmg = code == -ENOMEM || code == -ENOENT || code == -EEXIST ||
		                  code == -EINVAL || code == -ENOSPC || code == -ENAMETOOLONG
		                  ? NULL : exotool_find_damage(image, key);
		if (dmg != NULL)
			fprintf(stderr, "exotool: %s: %s is %s (the file system said: %s)\n", what, image,
			        dmg, err);
		else
			fprintf(stderr, "exotool: %s: %s\n", what, err);
	} else {
		fprintf(stderr, "exotool: %s: %s\n", what, exotool_why(image, code, ed));
	}
	exit(1);
}
