/*
 * test_ufs_count.c - unixfs's file count (statfs's files; the superblock's
 * count, format version 4; version 5's dnodes counting their records):
 * exact after creates, removals, renames, memory-only files, a directory
 * removed before its removals were committed, reboots and crashes;
 * recounted on a file system of version 3 (which keeps none, and stays
 * 3); version 4 kept as it is (no dnode counts); a sync of the directory
 * the superblock leaves its count to writes one log record fewer than on
 * version 4; a wrong count and a wrong dnode count found by fsck and set
 * by fsck -r; and a power cut at every request of a workload that makes,
 * removes and moves files and directories: after each, fsck finds the
 * count right (or "not known"), and statfs gives the number of names a
 * walk of the tree finds.
 *
 *   test_ufs_count            everything
 *   test_ufs_count cut        the power-cut part alone, every request
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/powercut.h"
#include "userfs/unixfs/ufs.h"

int ufs_mount_common(const char *opts, int readonly, struct ufs **out);
int ufs_unmount_common(struct ufs *fs);

#define OPTS "unit=0,key=count"

static uint64_t files_now(void)
{
	struct libfs_statfs st;
	CHECK_EQ(vfs_statfs("/", &st), 0);
	return st.files;
}

static int show_names;

/* Names in the tree below dir, by listing it. */
static uint64_t walk(const char *dir)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(dir, LIBFS_O_READ | LIBFS_O_DIR, 0, &f), 0);
	struct libfs_dirent de;
	uint64_t n = 0;
	int r;
	while ((r = vfs_readdir(f, &de)) == 1) {
		if (strcmp(de.name, ".") == 0 || strcmp(de.name, "..") == 0)
			continue;
		n++;
		if (show_names)
			fprintf(stderr, "  %s/%s\n", dir, de.name);
		if (de.type == LIBFS_T_DIR) {
			char p[300];
			snprintf(p, sizeof p, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", de.name);
			n += walk(p);
		}
	}
	CHECK_EQ(r, 0);
	CHECK_EQ(vfs_close(f), 0);
	return n;
}

static void put(const char *path, size_t n)
{
	static uint8_t buf[9000];
	memset(buf, 0x3c, sizeof buf);
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f), 0);
	CHECK_EQ(vfs_write(f, buf, n), (long)n);
	CHECK_EQ(vfs_close(f), 0);
}

static void say(void *arg, const char *path, const char *what)
{
	int *bad = arg;
	if (strstr(what, "orphan") != NULL)
		return;                  /* (a cut removal may leave one) */
	if (bad != NULL)
		(*bad)++;
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

/* fsck (read-only): no problem but orphans; the superblock's count. */
static struct ufs_fsck_stats fsck_ok(const char *opts)
{
	struct ufs_fsck_stats st;
	int bad = 0;
	int r = unixfs_fsck(opts, say, &bad, &st);
	CHECK(r >= 0);
	CHECK_EQ(bad, 0);
	return st;
}

/* The count follows every way a name comes and goes, and is on disk. */
static void test_ops(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 3);
	ufx_mkfs(&u, OPTS);
	struct ufs_fsck_stats st = fsck_ok(OPTS);
	CHECK_EQ(st.version, UFS_SB_VERSION);
	CHECK_EQ(st.sb_files, 1);                 /* the root */
	ufx_mount(OPTS);
	CHECK_EQ(files_now(), 1);
	CHECK_EQ(vfs_mkdir("/a", 0755), 0);
	CHECK_EQ(vfs_mkdir("/b", 0755), 0);
	char p[64];
	for (int i = 0; i < 10; i++) {
		snprintf(p, sizeof p, "/a/f%d", i);
		put(p, i * 900);
	}
	for (int i = 0; i < 5; i++) {
		snprintf(p, sizeof p, "/b/g%d", i);
		put(p, 100);
	}
	CHECK_EQ(files_now(), 18);                /* not yet durable: counted */
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(files_now(), 18);
	CHECK_EQ(vfs_unlink("/a/f1"), 0);
	CHECK_EQ(vfs_unlink("/a/f2"), 0);
	CHECK_EQ(files_now(), 16);
	CHECK_EQ(vfs_rename("/a/f3", "/b/moved"), 0);      /* across: an intent */
	CHECK_EQ(vfs_rename("/b/g0", "/b/g0-renamed"), 0);
	CHECK_EQ(vfs_rename("/b/g1", "/b/g2"), 0);          /* replaces g2 */
	CHECK_EQ(files_now(), 15);
	/* A memory-only file counts while it is there, never on disk. */
	struct vfile *m;
	CHECK_EQ(vfs_open("/b/mem", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &m), 0);
	CHECK_EQ(vfs_persist(m, LIBFS_P_MEMORY), 0);
	CHECK_EQ(vfs_write(m, "x", 1), 1);
	CHECK_EQ(vfs_close(m), 0);
	CHECK_EQ(files_now(), 16);
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(files_now(), 16);
	/* A directory whose files' removal was durable before it went, and
	 * one whose was not (rm -r with no sync between): their durable
	 * records leave the count with them. */
	CHECK_EQ(vfs_mkdir("/c", 0755), 0);
	CHECK_EQ(vfs_mkdir("/c/d", 0755), 0);
	for (int i = 0; i < 7; i++) {
		snprintf(p, sizeof p, "/c/d/h%d", i);
		put(p, 10);
		snprintf(p, sizeof p, "/c/k%d", i);
		put(p, 10);
	}
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(files_now(), 32);
	for (int i = 0; i < 7; i++) {
		snprintf(p, sizeof p, "/c/d/h%d", i);
		CHECK_EQ(vfs_unlink(p), 0);
		snprintf(p, sizeof p, "/c/k%d", i);
		CHECK_EQ(vfs_unlink(p), 0);
	}
	CHECK_EQ(vfs_rmdir("/c/d"), 0);
	CHECK_EQ(vfs_rmdir("/c"), 0);
	CHECK_EQ(files_now(), 16);
	CHECK_EQ(vfs_sync(), 0);
	CHECK_EQ(files_now(), 16);
	CHECK_EQ(walk("/") + 1, 16);
	ufx_umount();
	/* The memory-only file is gone; the superblock has the rest. */
	st = fsck_ok(OPTS);
	CHECK_EQ(st.names, 15);
	CHECK_EQ(st.sb_files, 15);
	ufx_reboot(&u);
	ufx_mount(OPTS);
	CHECK_EQ(files_now(), 15);
	/* A crash: what was synced stays counted, the rest is not there. */
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof p, "/a/n%d", i);
		put(p, 300);
	}
	CHECK_EQ(vfs_sync(), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(p, sizeof p, "/b/late%d", i);
		put(p, 300);
	}
	CHECK_EQ(vfs_unlink("/a/n0"), 0);
	CHECK_EQ(files_now(), 54);
	vfs_abandon();
	ufx_crash(&u);
	st = fsck_ok(OPTS);
	CHECK(st.sb_files == 0 || st.sb_files == st.names);
	ufx_mount(OPTS);
	uint64_t n = walk("/") + 1;
	CHECK(n >= 35 && n <= 54);
	CHECK_EQ(files_now(), n);
	ufx_umount();
	st = fsck_ok(OPTS);
	CHECK_EQ(st.sb_files, n);
	ufx_free(&u);
}

/* Version 3 keeps no count: it is counted when asked, and stays 3. */
static void test_version3(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 4);
	ufx_mkfs(&u, OPTS ",version=3");
	ufx_mount(OPTS);
	CHECK_EQ(vfs_mkdir("/a", 0755), 0);
	put("/a/x", 10);
	put("/y", 10);
	ufx_umount();
	struct ufs_fsck_stats st = fsck_ok(OPTS);
	CHECK_EQ(st.version, 3);
	CHECK_EQ(st.sb_files, 0);
	CHECK_EQ(st.names, 4);
	ufx_mount(OPTS);
	CHECK_EQ(files_now(), 4);                 /* a walk */
	put("/z", 10);
	CHECK_EQ(files_now(), 5);
	ufx_umount();
	st = fsck_ok(OPTS);
	CHECK_EQ(st.version, 3);
	CHECK_EQ(st.sb_files, 0);
	ufx_free(&u);
}

/* A new file system holding /one and /two, mounted outside the mount
 * table, to be damaged. */
static struct ufs *two_files(struct ufx *u, uint64_t seed)
{
	ufx_fresh(u, 65536, HD_SYNC, seed, OPTS);
	put("/one", 10);
	put("/two", 10);
	ufx_umount();
	struct ufs *fs;
	CHECK_EQ(ufs_mount_common(OPTS, 0, &fs), 0);
	return fs;
}

/* The damage done to fs: fsck finds that many problems and reads a count
 * of sb_files; fsck -r sets it all; then the count is the 3 names. */
static void found_and_set(struct ufx *u, struct ufs *fs, int problems, uint64_t sb_files)
{
	CHECK_EQ(ufs_unmount_common(fs), 0);
	struct ufs_fsck_stats st;
	int bad = 0;
	CHECK_EQ(unixfs_fsck(OPTS, say, &bad, &st), problems);
	CHECK_EQ(bad, problems);
	CHECK_EQ(st.sb_files, sb_files);
	CHECK_EQ(st.names, 3);
	CHECK_EQ(unixfs_fsck(OPTS ",repair", say, NULL, &st), problems);
	st = fsck_ok(OPTS);
	CHECK_EQ(st.sb_files, 3);
	ufx_mount(OPTS);
	CHECK_EQ(files_now(), 3);
	ufx_umount();
	ufx_free(u);
}

/* A wrong count on disk: fsck says so, fsck -r sets it. */
static void test_fsck(void)
{
	struct ufx u;
	struct ufs *fs = two_files(&u, 5);
	fs->nfiles = fs->sb.files = 12345;        /* as a bug or bad disk would */
	fs->sb.pend_dir = 0;
	fs->sb.pend_kind = UFS_PEND_DELTA;
	CHECK_EQ(ufs_push_sb(fs), 0);
	found_and_set(&u, fs, 1, 12345);
}

/* A dnode's count of its records that is wrong (version 5): fsck says
 * so (and the superblock's count that rests on it is wrong too), fsck -r
 * sets both. */
static void test_fsck_nrec(void)
{
	struct ufx u;
	struct ufs *fs = two_files(&u, 6);
	/* The last sync changed the root's records alone: the count rests on
	 * its dnode. */
	struct udir *root = fs->root->d;
	CHECK_EQ(fs->sb.pend_kind, UFS_PEND_DNODE);
	CHECK_EQ(fs->sb.pend_dir, ufs_xref(root->x.sector, root->x.slot));
	CHECK_EQ(root->m.nrec, 2);
	root->m.nrec = 7;
	CHECK(ufs_xn_add_data(fs, &root->x, UFS_E_META, &root->m, sizeof root->m, 0) >= 0);
	CHECK_EQ(ufs_writeback_all(fs), 0);
	found_and_set(&u, fs, 2, 8);
}

/* The log records (FUA writes) of: a file made in /y and a sync, a file
 * removed from /y and a sync, on a file system of the version given. */
static void fold_records(int version, uint64_t *rec)
{
	struct ufx u;
	char opts[64];
	snprintf(opts, sizeof opts, OPTS ",version=%d", version);
	ufx_new(&u, 65536, HD_SYNC, 8);
	ufx_mkfs(&u, opts);
	ufx_mount(OPTS);
	CHECK_EQ(vfs_mkdir("/y", 0755), 0);
	put("/y/a", 10);
	put("/y/b", 10);
	CHECK_EQ(vfs_sync(), 0);
	put("/y/c", 10);                          /* (names /y, on version 5) */
	CHECK_EQ(vfs_sync(), 0);
	uint64_t f0 = u.f.hd.nfua;
	put("/y/d", 10);
	CHECK_EQ(vfs_sync(), 0);
	uint64_t f1 = u.f.hd.nfua;
	CHECK_EQ(vfs_unlink("/y/a"), 0);
	CHECK_EQ(vfs_sync(), 0);
	rec[0] = f1 - f0;
	rec[1] = u.f.hd.nfua - f1;
	CHECK_EQ(files_now(), 5);
	ufx_umount();
	struct ufs_fsck_stats st = fsck_ok(OPTS);
	CHECK_EQ(st.version, version);
	CHECK_EQ(st.sb_files, 5);
	struct ufs *fs;
	CHECK_EQ(ufs_mount_common(OPTS, 1, &fs), 0);
	struct uinode *ip;
	CHECK_EQ(ufs_namei(fs, "/y", &ip), 0);
	CHECK_EQ(ip->d->m.nrec, version >= UFS_SB_NREC ? 3 : 0);
	ufs_iput(fs, ip);
	CHECK_EQ(ufs_unmount_common(fs), 0);
	ufx_free(&u);
}

/* Version 5 folds the count into the dnode's commit; version 4 stays 4
 * and writes the superblock with each such sync. */
static void test_fold(void)
{
	uint64_t v4[2], v5[2];
	fold_records(4, v4);
	fold_records(5, v5);
	printf("test_ufs_count: log records of a create+sync, a remove+sync in one directory: "
	       "version 4 %llu, %llu; version 5 %llu, %llu\n", (unsigned long long)v4[0],
	       (unsigned long long)v4[1], (unsigned long long)v5[0], (unsigned long long)v5[1]);
	CHECK_EQ(v5[0] + 1, v4[0]);
	CHECK_EQ(v5[1] + 1, v4[1]);
}

/* ---- power cuts ---------------------------------------------------------------------------- */

static int cut_prepare(struct pcut *pc)
{
	(void)pc;
	ufx_mkfs(&pc->u, OPTS);
	if (vfs_mount("/", "unixfs", OPTS, 1) != 0)
		return 1;
	char p[64];
	vfs_mkdir("/x", 0755);
	vfs_mkdir("/x/sub", 0755);
	for (int i = 0; i < 12; i++) {
		snprintf(p, sizeof p, "/x/%s%d", i % 2 ? "sub/" : "", i);
		put(p, 200 + 600 * (i % 3));
	}
	return vfs_sync() != 0 || vfs_umount("/") != 0;
}

/* Makes, removes and moves; each sync acknowledged.  Stops at the first
 * error (the power is gone). */
static int cut_work(struct pcut *pc)
{
	char p[64], q[64];
	if (vfs_mount("/", "unixfs", OPTS, 1) != 0)
		return 1;
	if (vfs_mkdir("/y", 0755) != 0)
		return 1;
	for (int i = 0; i < 10; i++) {
		snprintf(p, sizeof p, "/y/f%d", i);
		struct vfile *f;
		if (vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f) != 0 || vfs_write(f, p, 8) != 8 ||
		    vfs_close(f) != 0)
			return 1;
	}
	if (vfs_sync() != 0)
		return 1;
	pc_ack(pc, 1);
	/* rm -r /x, no sync until the end */
	for (int i = 0; i < 12; i++) {
		snprintf(p, sizeof p, "/x/%s%d", i % 2 ? "sub/" : "", i);
		if (vfs_unlink(p) != 0)
			return 1;
	}
	if (vfs_rmdir("/x/sub") != 0 || vfs_rmdir("/x") != 0 || vfs_sync() != 0)
		return 1;
	pc_ack(pc, 2);
	if (vfs_mkdir("/z", 0755) != 0)
		return 1;
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof p, "/y/f%d", i);
		snprintf(q, sizeof q, "/z/m%d", i);
		if (vfs_rename(p, q) != 0)
			return 1;
	}
	if (vfs_sync() != 0)
		return 1;
	pc_ack(pc, 3);
	struct vfile *f;
	if (vfs_open("/z/last", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f) != 0 || vfs_write(f, "z", 1) != 1 ||
	    vfs_fsync(f) != 0 || vfs_close(f) != 0)
		return 1;
	pc_ack(pc, 4);
	/* One directory's commit alone changes the count: the superblock
	 * names it (a pending change), written with the sync, no more. */
	if (vfs_unlink("/y/f5") != 0 || vfs_unlink("/y/f6") != 0 || vfs_sync() != 0)
		return 1;
	pc_ack(pc, 5);
	if (vfs_open("/y/new", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f) != 0 || vfs_write(f, "n", 1) != 1 ||
	    vfs_fsync(f) != 0 || vfs_close(f) != 0)
		return 1;
	pc_ack(pc, 6);
	/* /y again (version 5: the count rests on its dnode now, so no
	 * superblock is written), then /z (the superblock names /z). */
	if (vfs_unlink("/y/f7") != 0 || vfs_unlink("/y/f8") != 0 || vfs_sync() != 0)
		return 1;
	pc_ack(pc, 7);
	if (vfs_open("/z/k", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f) != 0 || vfs_write(f, "k", 1) != 1 ||
	    vfs_close(f) != 0 || vfs_sync() != 0)
		return 1;
	pc_ack(pc, 8);
	return vfs_umount("/") != 0;
}

/* Renames the first file of dir (if dir and a file exist) within dir. */
static int rename_inside(const char *dir)
{
	struct vfile *f;
	if (vfs_open(dir, LIBFS_O_READ | LIBFS_O_DIR, 0, &f) != 0)
		return 0;
	struct libfs_dirent de;
	char from[300] = "", to[300];
	while (vfs_readdir(f, &de) == 1)
		if (de.type != LIBFS_T_DIR && from[0] == 0)
			snprintf(from, sizeof from, "%s/%s", dir, de.name);
	if (vfs_close(f) != 0)
		return 1;
	if (from[0] == 0)
		return 0;
	snprintf(to, sizeof to, "%s/renamed%d", dir, (int)strlen(from));
	return vfs_rename(from, to);
}

static int cut_check(struct pcut *pc)
{
	/* The names each acknowledged state has (the root included). */
	static const uint64_t want[] = { 15, 26, 12, 13, 14, 12, 13, 11, 12 };
	int bad = 0;
	struct ufs_fsck_stats st;
	int r = unixfs_fsck(OPTS, say, &bad, &st);
	if (r < 0 || bad != 0)
		return 1;
	if (st.sb_files != 0 && st.sb_files != st.names) {
		fprintf(stderr, "  count %llu, names %llu\n", (unsigned long long)st.sb_files,
		        (unsigned long long)st.names);
		return 1;
	}
	if (vfs_mount("/", "unixfs", OPTS, 1) != 0)
		return 1;
	uint64_t n = walk("/") + 1, f = files_now();
	if (f != n) {
		fprintf(stderr, "  statfs %llu, names %llu\n", (unsigned long long)f, (unsigned long long)n);
		return 1;
	}
	/* Not fewer than the last acknowledged state had: nothing it had is
	 * gone (a rename cut off may show a file under both names). */
	uint64_t a = pc->acked;
	if (n < want[a] && !(a + 1 < sizeof want / sizeof want[0] && want[a + 1] < want[a] && n >= want[a + 1])) {
		fprintf(stderr, "  %llu names after state %llu:\n", (unsigned long long)n,
		        (unsigned long long)pc->acked);
		show_names = 1;
		walk("/");
		show_names = 0;
		return 1;
	}
	/* A commit of /y that leaves the count alone (a rename inside it),
	 * then a clean remount: the mount above may have resolved a change
	 * the superblock names for /y as not made, and that commit must not
	 * make the disk's stale copy look made (the count would be off by
	 * that change for good). */
	if (rename_inside("/y") != 0 || vfs_sync() != 0 || vfs_umount("/") != 0)
		return 1;
	if (vfs_mount("/", "unixfs", OPTS, 1) != 0)
		return 1;
	n = walk("/") + 1;
	f = files_now();
	if (vfs_umount("/") != 0)
		return 1;
	if (f != n) {
		fprintf(stderr, "  after a rename in /y and a remount: statfs %llu, names %llu\n",
		        (unsigned long long)f, (unsigned long long)n);
		return 1;
	}
	st = fsck_ok(OPTS);
	return st.sb_files != 0 && st.sb_files != st.names;
}

static void test_cuts(int64_t stride)
{
	struct pcut pc = {
		.name = "test_ufs_count cut", .nsectors = 65536, .seed = 7,
		.prepare = cut_prepare, .work = cut_work, .check = cut_check,
	};
	int failed = pc_run(&pc, 0, -1, stride);
	printf("test_ufs_count: %llu power cuts over %llu requests, %d failed\n",
	       (unsigned long long)pc.runs - 1, (unsigned long long)pc.requests, failed);
	CHECK_EQ(failed, 0);
	pc_free(&pc);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "cut") == 0) {
		test_cuts(1);
		return 0;
	}
	test_ops();
	test_version3();
	test_fsck();
	test_fsck_nrec();
	test_fold();
	test_cuts(1);
	printf("test_ufs_count: ok\n");
	return 0;
}
