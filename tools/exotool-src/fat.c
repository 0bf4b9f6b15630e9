/*
 * fat.c - exotool's FAT subcommands: move FAT volumes between an exodisk
 * image and the rest of the world.  The same code as the guest runs: the
 * exodisk core, the client over the host transport, the virtual volume
 * and fatfs (libos/, userfs/fatfs/).
 *
 *   exotool fat-import DISK.img IN.img [-o OPTS] [-c CHUNK] [-k KEYHEX] [-f]
 *       IN.img, a plain FAT image (mkfs.fat, mcopy, a camera's card...),
 *       becomes a fatfs volume on DISK.img that `mount /dos fatfs OPTS`
 *       finds.  Only the image's chunks that are not all zeros are stored.
 *       It is checked first (fatfs's fsck, what fsck.fat checks); with
 *       problems it is not imported, unless -f.
 *   exotool fat-export DISK.img OUT.img [-o OPTS] [-k KEYHEX]
 *       the fatfs volume on DISK.img written out as a plain FAT image
 *       (sparse: chunks never written are holes), for fsck.fat, mdir,
 *       mcopy, or a loop mount.
 *   exotool fat-check DISK.img [-o OPTS] [-k KEYHEX] [-r]
 *       fatfs's fsck on the volume (-r: repair); exit status 1 on problems.
 *
 * OPTS is the fatfs option string (key=, unit=, sb=; userfs/fatfs/fatfs.h),
 * CHUNK the virtual volume's chunk in bytes (4K .. 1M, default 64K), KEYHEX
 * the exodisk's boot key as for the other subcommands.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tools/exotool-src/exotool_fat.h"
#include "tools/exotool-src/exotool_explain.h"
#include "tests/host/exodisk/edharness.h"
#include "tests/host/exodisk/hostdisk.h"
#include "libos/edc_host.h"
#include "libos/vfs.h"
#include "userfs/fatfs/fatfs.h"

static struct harness H;
static struct hostdisk HD;
static struct exodisk *ED;
static struct edc_host P;
static char key[16];

static const char *disk_image = "";

static void die(const char *what, long code)
{
	exotool_die(disk_image, key, ED, what, code);
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: exotool fat-import DISK.img IN.img [-o OPTS] [-c CHUNK] [-k KEYHEX] [-f]\n"
	        "       exotool fat-export DISK.img OUT.img [-o OPTS] [-k KEYHEX]\n"
	        "       exotool fat-check  DISK.img [-o OPTS] [-k KEYHEX] [-r]\n");
	return 2;
}

/* Load the disk image and mount its exodisk; our process is P. */
static void boot(const char *image)
{
	disk_image = image;
	uint64_t n = exotool_image_sectors(image);
	blk_reset();
	h_init(&H, 0x66617474ull);
	if (hostdisk_init(&HD, n, HD_SYNC, false, 1) != 0 || hostdisk_load(&HD, image) != 0)
		die("cannot read the disk image", -(errno ? errno : EIO));
	ED = h_core(&H, NULL, key);
	int e = ed_mount(ED, 0);
	if (e != 0)
		die("cannot mount the exodisk on the disk image", e);
	edc_host_init(&P, &H, ED);
	edc_set_default(&P.edc);
}

/* Checkpoint the exodisk (as a shutdown does) and write the image back. */
static void save(const char *image)
{
	volatile int32_t w;
	if (edc_shutdown(&P.edc, 0, &w) < 0 || edc_wait(&P.edc, &w) != 0)
		die("cannot checkpoint the exodisk", 0);
	edc_host_exit(&P);
	ed_destroy(ED);
	if (hostdisk_save(&HD, image) != 0)
		die("cannot write the disk image", -errno);
}

static void say(void *arg, const char *what)
{
	(void)arg;
	printf("fatfs: %s\n", what);
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int import(const char *disk, const char *in, const char *opts, uint64_t chunk, int force)
{
	int fd = open(in, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		die("cannot read the FAT image", -errno);
	if (st.st_size < 64 * 512 || st.st_size % 512 != 0)
		die("the FAT image is not a whole number of 512-byte sectors", 0);
	uint64_t nsect = (uint64_t)st.st_size / 512;
	boot(disk);
	struct fatfs_vol *v;
	int e = fatfs_vol_open(opts, 1, nsect, (uint32_t)(chunk / 512), &v);
	if (e == -EEXIST)
		die("the disk already has a fatfs volume for this key (give another key=)", 0);
	if (e < 0)
		die("cannot make the volume", e);
	uint8_t *buf = malloc(chunk);
	if (buf == NULL)
		die("out of memory", -ENOMEM);
	uint64_t stored = 0;
	for (uint64_t at = 0; at < nsect; at += chunk / 512) {
		uint64_t n = nsect - at < chunk / 512 ? nsect - at : chunk / 512;
		ssize_t r = pread(fd, buf, n * 512, (off_t)(at * 512));
		if (r != (ssize_t)(n * 512))
			die("cannot read the FAT image", r < 0 ? -errno : -EIO);
		if (all_zero(buf, n * 512))
			continue;
		if ((e = fatfs_vol_write(v, at, buf, n)) < 0)
			die("cannot write the volume", e);
		stored += n;
	}
	free(buf);
	close(fd);
	if ((e = fatfs_vol_close(v)) < 0)
		die("cannot write the volume back", e);
	/* Check it as the guest will see it. */
	struct fatfs_stats fs;
	e = fatfs_fsck(opts, say, NULL, &fs);
	if (e < 0) {
		fprintf(stderr, "exotool: %s: not a FAT volume fatfs can use (%s): not imported\n", in,
		        strerror(-e));
		return 1;
	}
	printf("%s: %llu files, %llu directories, %llu bytes; %llu of %llu clusters free; "
	       "%llu problem%s\n", in, (unsigned long long)fs.files, (unsigned long long)fs.dirs,
	       (unsigned long long)fs.bytes, (unsigned long long)fs.free,
	       (unsigned long long)fs.clusters, (unsigned long long)fs.problems,
	       fs.problems == 1 ? "" : "s");
	if (fs.problems && !force) {
		fprintf(stderr, "exotool: %s has problems: not imported (repair it with fsck.fat -a, "
		        "or import it with -f and run fsck -t fatfs -r)\n", in);
		return 1;
	}
	save(disk);
	printf("%s: imported %s, %llu MiB volume, %llu KiB stored\n", disk, in,
	       (unsigned long long)(nsect / 2048), (unsigned long long)stored / 2);
	return 0;
}

static int export(const char *disk, const char *out, const char *opts)
{
	boot(disk);
	struct fatfs_vol *v;
	int e = fatfs_vol_open(opts, 0, 0, 0, &v);
	if (e == -ENODEV)
		die("no fatfs volume for this key on the disk (give -o key=... as it was imported "
		    "with, or import one with exotool fat-import)", 0);
	if (e < 0)
		die("cannot open the volume", e);
	uint64_t nsect = fatfs_vol_size(v), chunk = fatfs_vol_chunk(v);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(nsect * 512)) != 0)
		die("cannot write the FAT image", -errno);
	uint8_t *buf = malloc(chunk * 512);
	if (buf == NULL)
		die("out of memory", -ENOMEM);
	uint64_t written = 0;
	for (uint64_t at = 0; at < nsect; at += chunk) {
		uint64_t n = nsect - at < chunk ? nsect - at : chunk;
		int m = fatfs_vol_mapped(v, at);
		if (m < 0)
			die("cannot read the volume's map", m);
		if (m == 0)
			continue;
		if ((e = fatfs_vol_read(v, at, buf, n)) < 0)
			die("cannot read the volume", e);
		if (pwrite(fd, buf, n * 512, (off_t)(at * 512)) != (ssize_t)(n * 512))
			die("cannot write the FAT image", -errno);
		written += n;
	}
	free(buf);
	if (close(fd) != 0)
		die("cannot write the FAT image", -errno);
	fatfs_vol_close(v);
	printf("%s: %llu MiB FAT image, %llu KiB of it written\n", out,
	       (unsigned long long)(nsect / 2048), (unsigned long long)written / 2);
	return 0;
}

static int check(const char *disk, const char *opts, int repair)
{
	boot(disk);
	char o[1024];
	snprintf(o, sizeof o, "%s%s%s", opts, opts[0] && repair ? "," : "", repair ? "repair" : "");
	struct fatfs_stats st;
	int e = fatfs_fsck(o, say, NULL, &st);
	if (e == -ENODEV)
		die("no fatfs volume for this key on the disk (give -o key=... as it was imported "
		    "with, or import one with exotool fat-import)", 0);
	if (e < 0)
		die("cannot check the volume", e);
	printf("fatfs: %llu files, %llu directories, %llu bytes, %llu of %llu clusters free: %llu "
	       "problem%s%s\n", (unsigned long long)st.files, (unsigned long long)st.dirs,
	       (unsigned long long)st.bytes, (unsigned long long)st.free,
	       (unsigned long long)st.clusters, (unsigned long long)st.problems,
	       st.problems == 1 ? "" : "s", repair && st.problems ? " (repaired)" : "");
	if (repair)
		save(disk);
	return st.problems > st.repaired;
}

int exotool_fat(int argc, char **argv)
{
	const char *cmd = argv[1], *opts = "", *args[2] = { NULL, NULL };
	uint64_t chunk = 65536;
	int nargs = 0, force = 0, repair = 0;
	memcpy(key, ED_DEV_KEY, 16);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			opts = argv[++i];
		} else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
			char *end;
			chunk = strtoull(argv[++i], &end, 0);
			if (*end == 'k' || *end == 'K')
				chunk <<= 10, end++;
			else if (*end == 'm' || *end == 'M')
				chunk <<= 20, end++;
			if (*end || chunk < 4096 || chunk > (1u << 20) || (chunk & (chunk - 1)))
				die("-c: a chunk is a power of two from 4K to 1M", 0);
		} else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
			const char *hex = argv[++i];
			for (int k = 0; k < 16; k++) {
				unsigned v;
				if (strlen(hex) != 32 || sscanf(hex + 2 * k, "%2x", &v) != 1)
					die("the key is 32 hex digits", 0);
				key[k] = (char)v;
			}
		} else if (strcmp(argv[i], "-f") == 0) {
			force = 1;
		} else if (strcmp(argv[i], "-r") == 0) {
			repair = 1;
		} else if (nargs < 2) {
			args[nargs++] = argv[i];
		} else {
			return usage();
		}
	}
	if (strcmp(cmd, "fat-import") == 0 && nargs == 2)
		return import(args[0], args[1], opts, chunk, force);
	if (strcmp(cmd, "fat-export") == 0 && nargs == 2)
		return export(args[0], args[1], opts);
	if (strcmp(cmd, "fat-check") == 0 && nargs == 1)
		return check(args[0], opts, repair);
	return usage();
}
