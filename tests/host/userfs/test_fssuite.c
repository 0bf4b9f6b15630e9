/*
 * test_fssuite.c - the generic libFS suite (userfs/fssuite.c) on the host,
 * run on unixfs mounted at / and kvfs mounted at /kv of the same mount
 * table, on one disk; "remount" is a clean reboot of the machine.  Also:
 * a rename between the two is -EXDEV, and each lists the other's mount
 * point correctly.
 */
#include <errno.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include "userfs/fssuite.h"
#include "userfs/kvfs/kvfs.h"

static struct ufx u;

static int mount_both(void)
{
	int r = vfs_mount("/", "unixfs", "key=suite", 1);
	if (r == 0)
		r = vfs_mount("/kv", "kvfs", "key=suite", 1);
	return r;
}

static int remount(void *arg)
{
	(void)arg;
	int r = vfs_umount("/kv");
	if (r == 0)
		r = vfs_umount("/");
	if (r < 0)
		return r;
	ufx_reboot(&u);
	return mount_both();
}

/* kvfs writes a value back when it is closed: after the close returns it
 * survives a power failure, whatever was still unwritten elsewhere. */
static void kvfs_crash(void)
{
	struct ufx c;
	ufx_new(&c, 65536, HD_POLLED, 31);
	uint64_t sb;
	CHECK_EQ(kvfs_mkfs("key=crash,slots=64", &sb), 0);
	static uint8_t v[30000];
	for (int round = 0; round < 6; round++) {
		CHECK_EQ(vfs_mount("/kv", "kvfs", "key=crash", 1), 0);
		for (int i = 0; i < 10; i++) {
			char p[32];
			snprintf(p, sizeof p, "/kv/v%d", i);
			memset(v, 'a' + round + i, sizeof v);
			struct vfile *f;
			CHECK_EQ(vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f), 0);
			size_t n = 1000 + (size_t)(round * 4000 + i * 700) % 29000;
			CHECK_EQ(vfs_write(f, v, n), (long)n);
			CHECK_EQ(vfs_close(f), 0);
		}
		/* One more left open and unwritten when the power goes. */
		struct vfile *f;
		CHECK_EQ(vfs_open("/kv/open", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
		CHECK_EQ(vfs_write(f, v, 100), 100);
		vfs_abandon();
		ufx_crash(&c);
		CHECK_EQ(vfs_mount("/kv", "kvfs", "key=crash", 1), 0);
		for (int i = 0; i < 10; i++) {
			char p[32];
			snprintf(p, sizeof p, "/kv/v%d", i);
			size_t n = 1000 + (size_t)(round * 4000 + i * 700) % 29000;
			uint8_t got[30001];
			CHECK_EQ(vfs_open(p, LIBFS_O_READ, 0, &f), 0);
			CHECK_EQ(vfs_read(f, got, sizeof got), (long)n);
			for (size_t k = 0; k < n; k++)
				CHECK_EQ(got[k], 'a' + round + i);
			CHECK_EQ(vfs_close(f), 0);
		}
		CHECK_EQ(vfs_umount("/kv"), 0);
	}
	ufx_free(&c);
}

int main(void)
{
	kvfs_crash();
	ufx_new(&u, 131072, HD_POLLED, 21);
	uint64_t sb;
	CHECK_EQ(unixfs_mkfs("key=suite", &sb), 0);
	CHECK_EQ(kvfs_mkfs("key=suite", &sb), 0);
	CHECK_EQ(mount_both(), 0);
	CHECK_EQ(vfs_mkdir("/work", 0755), 0);

	struct fssuite us = { .root = "/work", .dirs = 1, .rename = 1, .name_max = 240,
	                      .big = 3 * 1024 * 1024 + 123, .remount = remount };
	struct fssuite ks = { .root = "/kv", .dirs = 0, .rename = 1, .name_max = 39,
	                      .big = 1024 * 1024 + 5, .remount = remount };
	int failed = fssuite_run(&us) + fssuite_run(&ks);
	CHECK_EQ(failed, 0);
	CHECK(us.passed == 10 && ks.passed == 9);

	/* Two libFSes in one table: no renames between them; / lists /kv. */
	struct vfile *f;
	CHECK_EQ(vfs_open("/kv/value", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_rename("/kv/value", "/work/value"), -EXDEV);
	CHECK_EQ(vfs_mkdir("/kv/dir", 0755), -ENOTSUP);
	CHECK_EQ(vfs_open("/", LIBFS_O_READ | LIBFS_O_DIR, 0, &f), 0);
	struct libfs_dirent de;
	int kv = 0;
	while (vfs_readdir(f, &de) == 1)
		kv += strcmp(de.name, "kv") == 0;
	CHECK_EQ(kv, 1);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_umount("/kv"), 0);
	CHECK_EQ(vfs_umount("/"), 0);
	ufx_free(&u);
	printf("test_fssuite: ok\n");
	return 0;
}
