/*
 * fatfix.h - helpers for the fatfs host tests: files through fatfs_ops on
 * a mounted image, patterns (vfsio.h), fatfs's own fsck on an image, and the host's
 * dosfstools and mtools on the same image (written to a temporary file),
 * for the byte-compatibility checks.
 */
#ifndef TESTS_USERFS_FATFIX_H
#define TESTS_USERFS_FATFIX_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tests/host/userfs/ufsfix.h"
#include "tests/host/userfs/vfsio.h"
#include "userfs/fatfs/fat.h"

static inline long file_put(void *fs, const char *path, const uint8_t *data, size_t n)
{
	void *f;
	int e = fatfs_ops.open(fs, path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f);
	if (e < 0)
		return e;
	long w = n ? fatfs_ops.write(fs, f, data, n, 0) : 0;
	int c = fatfs_ops.close(fs, f);
	return w < 0 ? w : w != (long)n ? -EIO : c;
}

static inline long file_get(void *fs, const char *path, uint8_t *buf, size_t cap)
{
	void *f;
	int e = fatfs_ops.open(fs, path, LIBFS_O_READ, 0, &f);
	if (e < 0)
		return e;
	long r = fatfs_ops.read(fs, f, buf, cap, 0);
	fatfs_ops.close(fs, f);
	return r;
}

static inline int fat_type_of(void *fs)
{
	return ((struct fatfs *)fs)->type;
}

static inline int fat_root_entry(void *p, const char *name, uint8_t *ent)
{
	struct fatfs *fs = p;
	int i = fat_dir_find(fs, fs->root, name);
	return i < 0 ? i : fat_dir_read(fs, fs->root, i, ent);
}

static inline int fat_root_lfn_parts(void *p, const char *name)
{
	struct fatfs *fs = p;
	int i = fat_dir_find(fs, fs->root, name);
	return i < 0 ? i : fs->root->e[i].nlfn;
}

static inline int fat_lists(void *fs, const char *dir, const char *name)
{
	void *d;
	if (fatfs_ops.open(fs, dir, LIBFS_O_READ | LIBFS_O_DIR, 0, &d) < 0)
		return 0;
	uint64_t cookie = 0;
	struct libfs_dirent de;
	int found = 0;
	while (!found && fatfs_ops.readdir(fs, d, &cookie, &de) == 1)
		found = strcmp(de.name, name) == 0;
	fatfs_ops.close(fs, d);
	return found;
}

static inline void fix_say(void *arg, const char *what)
{
	if (arg == NULL)
		printf("  fsck: %s\n", what);
}

/* fatfs's fsck on the image: the number of problems (or -errno). */
static inline long fsck_clean(uint8_t *img, uint64_t n)
{
	struct fatfs_stats st;
	int e = fatfs_fsck_image(img, n, 0, fix_say, NULL, &st);
	return e < 0 ? e : (long)st.problems;
}

/* ---- the host's tools ---------------------------------------------------------- */

static inline int have_dosfstools(void)
{
	return access("/usr/sbin/fsck.fat", X_OK) == 0 && access("/usr/bin/mdir", X_OK) == 0;
}

static inline const char *img_file(const uint8_t *img, uint64_t n)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/fatfix-%d.img", (int)getpid());
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	CHECK_EQ(fwrite(img, ED_SECTOR, n, f), n);
	fclose(f);
	return path;
}

/* fsck.fat -n's exit status (0: no errors), its output shown if not and
 * FAT_SHOW_FSCK is set (or, always, when expect_clean). */
static inline int host_fsck_fat_as(const uint8_t *img, uint64_t n, int expect_clean)
{
	const char *p = img_file(img, n);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "fsck.fat -n %s > %s.out 2>&1", p, p);
	int r = system(cmd);
	if (r != 0 && (expect_clean || getenv("FAT_SHOW_FSCK"))) {
		snprintf(cmd, sizeof cmd, "sed 's/^/  fsck.fat: /' %s.out", p);
		if (system(cmd) != 0)
			fprintf(stderr, "(no output)\n");
	}
	snprintf(cmd, sizeof cmd, "%s.out", p);
	unlink(cmd);
	if (getenv("FAT_KEEP_IMAGE") == NULL)
		unlink(p);
	return r;
}

static inline int host_fsck_fat(const uint8_t *img, uint64_t n)
{
	return host_fsck_fat_as(img, n, 1);
}

/* Does `mdir -b DIR` list DIR/name? */
static inline int host_mdir_has(const uint8_t *img, uint64_t n, const char *dir, const char *name)
{
	const char *p = img_file(img, n);
	char cmd[512], line[1024], want[1024];
	snprintf(cmd, sizeof cmd, "MTOOLS_SKIP_CHECK=1 mdir -i %s -b '%s' 2>&1", p, dir);
	snprintf(want, sizeof want, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", name);
	FILE *f = popen(cmd, "r");
	int found = 0;
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = 0;
		size_t l = strlen(line);
		if (l > 0 && line[l - 1] == '/')
			line[l - 1] = 0;
		found |= strcmp(line, want) == 0;
	}
	if (f)
		pclose(f);
	unlink(p);
	return found;
}

/* Does `mtype PATH` give n bytes of pattern seed? */
static inline int host_mtype_is(const uint8_t *img, uint64_t n, const char *path, size_t size,
                                uint32_t seed)
{
	const char *p = img_file(img, n);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "MTOOLS_SKIP_CHECK=1 mtype -i %s '%s'", p, path);
	FILE *f = popen(cmd, "r");
	uint8_t *want = malloc(size + 1), *got = malloc(size + 1);
	size_t r = f ? fread(got, 1, size + 1, f) : 0;
	if (f)
		pclose(f);
	pattern_fill(want, size, seed);
	int ok = r == size && memcmp(want, got, size) == 0;
	free(want);
	free(got);
	unlink(p);
	return ok;
}

#endif
