/*
 * test_fssuite.c - the generic libFS suite (userfs/fssuite.c) on the host,
 * run on unixfs mounted at / and kvfs mounted at /kv of the same mount
 * table, on one disk; "remount" is a clean reboot of the machine.  Also:
 * a rename between the two is -EXDEV, and each lists the other's mount
 * point correctly.
 */
#include <errno.h>
#include <string.h>
#include "tests/host/userfs/fscut.h"
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

/* kvfs across power cuts, at every disk request of a workload of puts,
 * unlinks and renames: every value closed before the cut is there, whole;
 * the one being put is wholly old or wholly new. */
static void kvfs_cut(void)
{
	struct fscut c = { .type = "kvfs", .opts = "key=cut,slots=8", .mkfs = kvfs_mkfs,
	                   .rename = 1, .atomic = 1 };
	CHECK_EQ(fscut_run(&c, 30, 1, 31), 0);
}

int main(void)
{
	kvfs_cut();
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
