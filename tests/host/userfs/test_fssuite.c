/*
 * test_fssuite.c - every library file system in the tree (each type named in
 * LIBFS_TYPES, userfs/userfs.mk, found through the registry) on the host:
 *
 *   - its operations table states what it supports consistently, and it
 *     can be made by mkfs;
 *   - the power-cut workload (fscut.h) with the power failing at up to 250
 *     of its disk requests, evenly spread (every request for a small one):
 *     after each, every file is as last acknowledged or as the step in
 *     flight left it, and it walks clean;
 *   - the generic suite (userfs/fssuite.c), adapted to what it states, all
 *     of them mounted in one mount table on one disk ("remount" is
 *     a clean reboot of the machine), then its fsck (or the walk);
 *   - two libFSes in one table: a rename between them is -EXDEV, and the
 *     root (the first type with directories) lists the others' mount
 *     points.
 */
#include <errno.h>
#include <string.h>
#include "tests/host/userfs/fscut.h"
#include "userfs/fssuite.h"

static struct ufx u;
static const struct libfs_ops *at_root;      /* the first with directories */

/* Where type t is mounted, and the directory the suite works in. */
static void where(const struct libfs_ops *t, char *prefix, char *root)
{
	snprintf(prefix, 32, "/%s", t == at_root ? "" : t->name);
	snprintf(root, 48, "%s%s", t == at_root ? "" : prefix,
	         (t->features & LIBFS_F_DIRS) ? "/work" : "");
}

static int mount_all(void)
{
	const struct libfs_ops *t;
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++) {
		char prefix[32], root[48];
		where(t, prefix, root);
		int r = vfs_mount(prefix, t->name, "key=suite", 1);
		if (r < 0)
			return r;
	}
	return 0;
}

static int remount(void *arg)
{
	(void)arg;
	const struct libfs_ops *t;
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++) {
		char prefix[32], root[48];
		where(t, prefix, root);
		int r = vfs_umount(prefix);
		if (r < 0)
			return r;
	}
	ufx_reboot(&u);
	return mount_all();
}

static void say(void *arg, const char *path, const char *what)
{
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

int main(void)
{
	const struct libfs_ops *t;
	int ntypes = 0;
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++, ntypes++) {
		CHECK_EQ(libfs_check_ops(t), 0);
		CHECK(t->mkfs != NULL);
		if (at_root == NULL && (t->features & LIBFS_F_DIRS))
			at_root = t;
	}
	CHECK(ntypes >= 2 && at_root != NULL);

	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++) {
		struct fscut c = { .ops = t, .opts = "key=cut,slots=8" };
		CHECK_EQ(fscut_run(&c, 30, 250, 31 + (uint64_t)i), 0);
	}

	ufx_new(&u, 131072, HD_POLLED, 21);
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++) {
		uint64_t sb;
		CHECK_EQ(t->mkfs("key=suite", &sb), 0);
	}
	CHECK_EQ(mount_all(), 0);
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++) {
		char prefix[32], root[48];
		where(t, prefix, root);
		if (t->features & LIBFS_F_DIRS)
			CHECK_EQ(vfs_mkdir(root, 0755), 0);
		struct fssuite s = { .root = root, .remount = remount };
		fssuite_adapt(&s, t, 3 * 1024 * 1024 + 123);
		CHECK_EQ(fssuite_run(&s), 0);
		int skipped = !(t->features & LIBFS_F_DIRS) + !(t->features & LIBFS_F_RENAME) +
		              !!(t->features & LIBFS_F_ATOMIC);
		CHECK_EQ(s.passed, 11 - skipped);
	}

	/* Two libFSes in one table: no renames between them; the root lists
	 * its own directory and the other mount points. */
	const struct libfs_ops *a = at_root, *b = libfs_type_at(at_root == libfs_type_at(0));
	char pa[32], ra[48], pb[32], rb[48], fa[80], fb[80];
	where(a, pa, ra);
	where(b, pb, rb);
	snprintf(fa, sizeof fa, "%s/value", ra);
	snprintf(fb, sizeof fb, "%s/value", rb);
	struct vfile *f;
	CHECK_EQ(vfs_open(fb, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_close(f), 0);
	CHECK_EQ(vfs_rename(fb, fa), -EXDEV);
	CHECK_EQ(vfs_unlink(fb), 0);
	CHECK_EQ(vfs_open("/", LIBFS_O_READ | LIBFS_O_DIR, 0, &f), 0);
	struct libfs_dirent de;
	int listed = 0;
	while (vfs_readdir(f, &de) == 1)
		listed += de.name[0] != '.';
	CHECK_EQ(listed, ntypes);
	CHECK_EQ(vfs_close(f), 0);

	/* Each checks clean afterwards, with its own fsck or the walk. */
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++) {
		char prefix[32], root[48];
		where(t, prefix, root);
		CHECK_EQ(vfs_umount(prefix), 0);
		struct libfs_fsck ck = { .report = say };
		CHECK_EQ(t->fsck ? t->fsck("key=suite", &ck) : libfs_check(t, "key=suite", &ck), 0);
		printf("fsck %s: %s: %llu problems\n", t->name, ck.summary,
		       (unsigned long long)ck.problems);
		CHECK_EQ(ck.problems, 0);
	}
	ufx_free(&u);
	printf("test_fssuite: ok\n");
	return 0;
}
