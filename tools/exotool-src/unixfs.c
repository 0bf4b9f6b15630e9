/*
 * unixfs.c - exotool's unixfs subcommands: build a disk image holding a
 * unixfs filled from a host directory, list it, copy files out and in, and
 * check it.  The image is mounted exactly as in the guest - the exodisk
 * core (kernel/exodisk/), the exodisk client over the host transport, the
 * mount table and unixfs (libos/, userfs/): one implementation.
 *
 *   exotool ufs-mkfs  IMAGE [-o OPTS] [-d HOSTDIR]   make a unixfs (on an
 *                     image `exotool format` made), filled from HOSTDIR
 *   exotool ufs-ls    IMAGE [-o OPTS] [PATH]         list a tree
 *   exotool ufs-get   IMAGE [-o OPTS] PATH [HOSTFILE] copy a file out (to stdout)
 *   exotool ufs-put   IMAGE [-o OPTS] HOSTFILE PATH  copy a file in
 *   exotool ufs-check IMAGE [-o OPTS]                exodisk invariants, then
 *                     unixfs consistency; exit status 1 on any problem
 *
 * OPTS is the unixfs option string (userfs/unixfs/unixfs.h: key=, sb=, ...);
 * -k KEYHEX is the exodisk's boot key, as for the other subcommands.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tools/exotool-src/exotool_unixfs.h"
#include "tools/exotool-src/exotool_explain.h"
#include "tests/host/exodisk/edharness.h"
#include "tests/host/exodisk/hostdisk.h"
#include "kernel/exodisk/check.h"
#include "libos/edc_host.h"
#include "libos/vfs.h"
#include "userfs/unixfs/unixfs.h"

static struct harness H;
static struct hostdisk HD;
static struct exodisk *ED;
static struct edc_host P;
static const char *image, *opts = "";
static char key[16];

static void die(const char *what, long code)
{
	exotool_die(image, key, ED, what, code);
}

/* A libFS's mount failed: ENODEV means none for this key (explain.c words
 * the rest). */
static void die_mount(const char *what, int e)
{
	if (e == -ENODEV)
		die("no unixfs on this exodisk under this unixfs key (give -o key=... as it was made with, or "
		    "make one with exotool ufs-mkfs)", 0);
	die(what, e);
}

static int usage(void)
{
	fprintf(stderr,
	        "usage: exotool ufs-mkfs  IMAGE [-o OPTS] [-d HOSTDIR] [-k KEYHEX]\n"
	        "       exotool ufs-ls    IMAGE [-o OPTS] [PATH]\n"
	        "       exotool ufs-get   IMAGE [-o OPTS] PATH [HOSTFILE]\n"
	        "       exotool ufs-put   IMAGE [-o OPTS] HOSTFILE PATH\n"
	        "       exotool ufs-check IMAGE [-o OPTS]\n");
	return 2;
}

/* Load the image and mount its exodisk; our process is P. */
static void boot(void)
{
	uint64_t n = exotool_image_sectors(image);
	blk_reset();
	h_init(&H, 0x75667374ull);
	if (hostdisk_init(&HD, n, HD_SYNC, false, 1) != 0 || hostdisk_load(&HD, image) != 0)
		die("cannot read the image", -(errno ? errno : EIO));
	ED = h_core(&H, NULL, key);
	int e = ed_mount(ED, 0);
	if (e != 0)
		die("cannot mount the exodisk on the image", e);
	edc_host_init(&P, &H, ED);
	edc_set_default(&P.edc);
}

/* Checkpoint the exodisk (as a shutdown does) and write the image back. */
static void save(void)
{
	volatile int32_t w;
	if (edc_shutdown(&P.edc, 0, &w) < 0 || edc_wait(&P.edc, &w) != 0)
		die("cannot checkpoint the exodisk", 0);
	edc_host_exit(&P);
	ed_destroy(ED);
	if (hostdisk_save(&HD, image) != 0)
		die("cannot write the image", -errno);
}

static void mount_it(void)
{
	int e = vfs_mount("/", "unixfs", opts, 1);
	if (e < 0)
		die_mount("cannot mount the unixfs", e);
}

static void umount_it(void)
{
	int e = vfs_umount("/");
	if (e < 0)
		die("unmount (writing back) failed", e);
}

static int put_file(const char *host, const char *path)
{
	FILE *in = fopen(host, "rb");
	if (in == NULL) {
		fprintf(stderr, "exotool: %s: %s\n", host, strerror(errno));
		return 1;
	}
	struct vfile *f;
	int e = vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f);
	if (e < 0) {
		fprintf(stderr, "exotool: %s: %s\n", path, strerror(-e));
		fclose(in);
		return 1;
	}
	static char buf[1 << 16];
	size_t n;
	long w = 0;
	while (w >= 0 && (n = fread(buf, 1, sizeof buf, in)) > 0)
		w = vfs_write(f, buf, n);
	fclose(in);
	e = vfs_close(f);
	if (w < 0 || e < 0) {
		fprintf(stderr, "exotool: %s: %s\n", path, strerror((int)-(w < 0 ? w : e)));
		return 1;
	}
	return 0;
}

/* Copy host directory `host` into directory `path` of the unixfs. */
static int put_tree(const char *host, const char *path)
{
	DIR *d = opendir(host);
	if (d == NULL) {
		fprintf(stderr, "exotool: %s: %s\n", host, strerror(errno));
		return 1;
	}
	int status = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char h[4096], p[LIBFS_PATH_MAX];
		snprintf(h, sizeof h, "%s/%s", host, de->d_name);
		if (snprintf(p, sizeof p, "%s/%s", strcmp(path, "/") ? path : "", de->d_name) >= (int)sizeof p) {
			fprintf(stderr, "exotool: %s: name too long\n", h);
			status = 1;
			continue;
		}
		struct stat st;
		if (stat(h, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			int e = vfs_mkdir(p, 0755);
			if (e < 0 && e != -EEXIST) {
				fprintf(stderr, "exotool: %s: %s\n", p, strerror(-e));
				status = 1;
				continue;
			}
			status |= put_tree(h, p);
		} else if (S_ISREG(st.st_mode)) {
			status |= put_file(h, p);
		}
	}
	closedir(d);
	return status;
}

static int list(const char *path, int depth)
{
	struct libfs_stat st;
	int e = vfs_stat(path, &st);
	if (e < 0) {
		fprintf(stderr, "exotool: %s: %s\n", path, strerror(-e));
		return 1;
	}
	printf("%c %10llu %10llu  %s%s\n", st.type == LIBFS_T_DIR ? 'd' : '-',
	       (unsigned long long)st.size, (unsigned long long)st.ino, path,
	       st.type == LIBFS_T_DIR && strcmp(path, "/") ? "/" : "");
	if (st.type != LIBFS_T_DIR || depth > 64)
		return 0;
	struct vfile *f;
	if ((e = vfs_open(path, LIBFS_O_READ | LIBFS_O_DIR, 0, &f)) < 0) {
		fprintf(stderr, "exotool: %s: %s\n", path, strerror(-e));
		return 1;
	}
	int status = 0;
	struct libfs_dirent de;
	while ((e = vfs_readdir(f, &de)) == 1) {
		if (strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0)
			continue;
		char p[LIBFS_PATH_MAX];
		snprintf(p, sizeof p, "%s/%s", strcmp(path, "/") ? path : "", de.name);
		status |= list(p, depth + 1);
	}
	if (e < 0) {
		fprintf(stderr, "exotool: %s: %s\n", path, strerror(-e));
		status = 1;
	}
	vfs_close(f);
	return status;
}

static int get(const char *path, const char *host)
{
	struct vfile *f;
	int e = vfs_open(path, LIBFS_O_READ, 0, &f);
	if (e < 0) {
		fprintf(stderr, "exotool: %s: %s\n", path, strerror(-e));
		return 1;
	}
	FILE *out = host ? fopen(host, "wb") : stdout;
	if (out == NULL) {
		fprintf(stderr, "exotool: %s: %s\n", host, strerror(errno));
		vfs_close(f);
		return 1;
	}
	static char buf[1 << 16];
	long n;
	while ((n = vfs_read(f, buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)n, out);
	vfs_close(f);
	if (host)
		fclose(out);
	if (n < 0) {
		fprintf(stderr, "exotool: %s: %s\n", path, strerror((int)-n));
		return 1;
	}
	return 0;
}

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	printf("unixfs: %s: %s\n", path, what);
}

static void ed_say(void *arg, int sev, const char *what, uint64_t sector, uint64_t detail)
{
	(void)arg;
	if (sev == ED_CHK_VIOLATION)
		printf("exodisk: VIOLATION: %s (sector %llu, %llu)\n", what, (unsigned long long)sector,
		       (unsigned long long)detail);
}

static int check(void)
{
	/* The exodisk as the next mount would see it, read only. */
	uint64_t n = exotool_image_sectors(image);
	blk_reset();
	h_init(&H, 0x75667374ull);
	if (hostdisk_init(&HD, n, HD_SYNC, false, 1) != 0 || hostdisk_load(&HD, image) != 0)
		die("cannot read the image", -(errno ? errno : EIO));
	ED = h_core(&H, NULL, key);
	struct ed_check_stats es;
	int e = ed_check_disk(ED, 0, ed_say, NULL, NULL, &es);
	if (e != 0)
		die("the exodisk cannot be read", e);
	printf("exodisk: %llu bindings, %llu exonodes, %llu sectors allocated: %llu violations\n",
	       (unsigned long long)es.bindings, (unsigned long long)es.exonodes,
	       (unsigned long long)es.allocated, (unsigned long long)es.violations);
	ed_destroy(ED);
	hostdisk_free(&HD);
	/* Then unixfs, through a real mount (nothing is written back). */
	boot();
	struct ufs_fsck_stats us;
	int r = unixfs_fsck(opts, say, NULL, &us);
	if (r < 0)
		die_mount("cannot check the unixfs", r);
	printf("unixfs: %llu files, %llu directories, %llu bytes, %llu extents: %llu problems\n",
	       (unsigned long long)us.files, (unsigned long long)us.dirs,
	       (unsigned long long)us.bytes, (unsigned long long)us.extents,
	       (unsigned long long)us.problems);
	edc_host_exit(&P);
	ed_destroy(ED);
	return es.violations != 0 || us.problems != 0;
}

int exotool_unixfs(int argc, char **argv)
{
	const char *cmd = argv[1], *dir = NULL, *args[2] = { NULL, NULL };
	int nargs = 0;
	memcpy(key, ED_DEV_KEY, 16);
	if (argc < 3)
		return usage();
	image = argv[2];
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
			opts = argv[++i];
		} else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
			dir = argv[++i];
		} else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
			const char *hex = argv[++i];
			for (int k = 0; k < 16; k++) {
				unsigned v;
				if (strlen(hex) != 32 || sscanf(hex + 2 * k, "%2x", &v) != 1)
					die("the key is 32 hex digits", 0);
				key[k] = (char)v;
			}
		} else if (nargs < 2) {
			args[nargs++] = argv[i];
		} else {
			return usage();
		}
	}
	int status = 0;
	if (strcmp(cmd, "ufs-check") == 0)
		return nargs == 0 ? check() : usage();
	if (strcmp(cmd, "ufs-mkfs") == 0) {
		if (nargs != 0)
			return usage();
		boot();
		uint64_t sb;
		int e = unixfs_mkfs(opts, &sb);
		if (e < 0)
			die("mkfs failed", e);
		printf("%s: unixfs made, superblock at sector %llu\n", image, (unsigned long long)sb);
		if (dir) {
			mount_it();
			status = put_tree(dir, "/");
			umount_it();
		}
		save();
		return status;
	}
	boot();
	mount_it();
	if (strcmp(cmd, "ufs-ls") == 0 && nargs <= 1) {
		status = list(nargs ? args[0] : "/", 0);
	} else if (strcmp(cmd, "ufs-get") == 0 && nargs >= 1) {
		status = get(args[0], args[1]);
	} else if (strcmp(cmd, "ufs-put") == 0 && nargs == 2) {
		status = put_file(args[0], args[1]);
		umount_it();
		save();
		return status;
	} else {
		return usage();
	}
	umount_it();
	edc_host_exit(&P);
	ed_destroy(ED);
	return status;
}
