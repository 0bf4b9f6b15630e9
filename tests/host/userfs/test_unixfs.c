/*
 * test_unixfs.c - unixfs through the mount table on a host test disk:
 * files small (in their directory's space) and large (fnodes, map nodes),
 * directories, rename (and power cut at every request of the sync after
 * one), persistence across a clean reboot, the three persistence models,
 * the mount lock, a wrong key, two owners on one disk, another process
 * taking the sectors unixfs chose, a small exodisk cache, and bad input
 * (long names, missing files, a full disk, damaged, stale and misplaced
 * directory blocks, malformed nodes), directory read-ahead, and holes
 * (sparse files, across remounts and power cuts), the objects in memory
 * when many directories are made, and a sync that grows a directory
 * costing the exodisk no `written` log record.  The on-disk format is read here
 * independently of unixfs, from ufs_format.h, to find what to damage.
 * test_unixfs_model.c does the long randomized runs against a model.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include "tests/host/userfs/fscut.h"
#include "userfs/unixfs/ufs_format.h"
#include "libos/capkey.h"

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

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	fprintf(stderr, "  fsck: %s: %s\n", path, what);
}

/* Files of many sizes: immediate, one block, several, past the direct
 * extents into map nodes.  Survives a reboot. */
static void test_sizes(struct ufx *u)
{
	static const size_t sizes[] = { 0, 1, 100, 352, 353, 4096, 4097, 10240, 65536, 300000,
	                                2 * 1024 * 1024 + 17 };
	const int n = (int)(sizeof sizes / sizeof sizes[0]);
	uint8_t *buf = malloc(3 * 1024 * 1024);
	ufx_mount(OPTS);
	CHECK_EQ(vfs_mkdir("/d", 0755), 0);
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/d/f%d", i);
		pattern(buf, sizes[i], (uint64_t)i);
		put(path, buf, sizes[i]);
		expect(path, buf, sizes[i]);
	}
	ufx_umount();
	ufx_reboot(u);
	ufx_mount(OPTS);
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
	ufx_umount();
	ufx_reboot(u);
	ufx_mount(OPTS);
	expect("/d/f9", buf, 9000);
	ufx_umount();
	free(buf);
}

/* A full disk is -ENOSPC at write(), files written before are intact,
 * and removing one makes room again. */
static void test_enospc(void)
{
	struct ufx u;
	ufx_fresh(&u, 8192, HD_SYNC, 2, OPTS);
	static uint8_t buf[256 * 1024];
	int n = 0;
	long r = 0;
	for (; n < 100; n++) {
		char path[32];
		snprintf(path, sizeof path, "/f%d", n);
		struct vfile *f;
		CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
		pattern(buf, sizeof buf, (uint64_t)n);
		r = vfs_write(f, buf, sizeof buf);
		CHECK_EQ(vfs_close(f), 0);
		if (r != (long)sizeof buf)
			break;
	}
	CHECK(n > 2 && n < 100);
	CHECK_EQ(r, -ENOSPC);
	CHECK_EQ(vfs_sync(), 0);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	for (int i = 0; i < n; i++) {
		char path[32];
		snprintf(path, sizeof path, "/f%d", i);
		pattern(buf, sizeof buf, (uint64_t)i);
		expect(path, buf, sizeof buf);
	}
	/* The file that did not fit is there, empty. */
	char path[32];
	snprintf(path, sizeof path, "/f%d", n);
	expect(path, buf, 0);
	CHECK_EQ(vfs_unlink("/f0"), 0);
	pattern(buf, sizeof buf, 77);
	put("/again", buf, sizeof buf);
	expect("/again", buf, sizeof buf);
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

/* Directories nested as deep as a path can name (510 levels of "/d"
 * within LIBFS_PATH_MAX) are a legal tree: fsck finds nothing wrong and
 * fsck -r changes nothing (issue 17, F4: fsck took depth 256 for a loop and
 * -r freed everything deeper). */
static void test_deep_tree(void)
{
	struct ufx u;
	ufx_fresh(&u, 65536, HD_SYNC, 9, OPTS);
	static char path[LIBFS_PATH_MAX];
	size_t n = 0;
	int levels = 0;
	while (n + 2 + 2 < LIBFS_PATH_MAX - 1) {       /* room for "/f" below it */
		memcpy(path + n, "/d", 3);
		n += 2;
		CHECK_EQ(vfs_mkdir(path, 0755), 0);
		levels++;
	}
	CHECK(levels >= 510);
	memcpy(path + n, "/f", 3);
	put(path, "bottom", 6);
	ufx_umount();
	ufx_reboot(&u);
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	CHECK_EQ(st.problems, 0);
	CHECK(st.dirs >= (uint64_t)levels);
	CHECK_EQ(unixfs_fsck(OPTS ",repair", say, NULL, &st), 0);
	CHECK_EQ(st.problems, 0);
	ufx_mount(OPTS);
	expect(path, "bottom", 6);
	ufx_umount();
	ufx_free(&u);
}

/* A small exodisk cache (31 entries, 23 per process): unixfs keeps working
 * by writing back, also while another process holds what it may - many
 * directories and large files, each a node of its own, in one sync.
 * Memory-only files take nothing of the exodisk at all. */
static void test_cache_full(void)
{
	struct ufx u;
	struct ed_config cfg = { .cache_entries = 31 };
	memset(&u, 0, sizeof u);
	fx_new(&u.f, 65536, HD_SYNC, &cfg, 3);
	ufx_start(&u);
	ufx_mkfs(&u, OPTS);
	ufx_mount(OPTS);
	/* Another process holds entries with changes of its own. */
	struct edc_host b;
	edc_host_init(&b, &u.f.h, u.f.ed);
	struct ed_cap rc = h_cap(1, 2), wc = h_cap(3, 4);
	int held = 0;
	for (uint64_t s = 60000; held < 40; held++, s += 8) {
		struct ed_protector p = edc_prot_xn(0, s, 0, &rc, &wc);
		p.length = 128;
		if (edc_xn_alloc(&b.edc, &p) != 0)
			break;
	}
	CHECK(held >= 4);
	static uint8_t buf[40000];
	for (int d = 0; d < 30; d++) {
		char path[64];
		snprintf(path, sizeof path, "/d%d", d);
		CHECK_EQ(vfs_mkdir(path, 0755), 0);
		for (int i = 0; i < 3; i++) {
			snprintf(path, sizeof path, "/d%d/f%d", d, i);
			pattern(buf, sizeof buf, (uint64_t)(d * 100 + i));
			put(path, buf, i == 0 ? sizeof buf : 600);
		}
	}
	CHECK_EQ(vfs_sync(), 0);
	/* Memory-only files: as many as memory holds. */
	for (int n = 0; n < 200; n++) {
		char path[64];
		snprintf(path, sizeof path, "/d5/m%d", n);
		struct vfile *f;
		CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
		CHECK_EQ(vfs_persist(f, LIBFS_P_MEMORY), 0);
		CHECK_EQ(vfs_write(f, buf, 100), 100);
		CHECK_EQ(vfs_close(f), 0);
	}
	edc_host_exit(&b);
	put("/d5/after", buf, 600);
	CHECK_EQ(vfs_sync(), 0);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	for (int d = 0; d < 30; d++)
		for (int i = 0; i < 3; i++) {
			char path[64];
			snprintf(path, sizeof path, "/d%d/f%d", d, i);
			pattern(buf, sizeof buf, (uint64_t)(d * 100 + i));
			expect(path, buf, i == 0 ? sizeof buf : 600);
		}
	expect("/d5/after", buf, 600);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/d5/m7", &st), -ENOENT);
	ufx_umount();
	struct ufs_fsck_stats fst;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	ufx_free(&u);
}

/* ---- the format, read from ufs_format.h alone ------------------------------
 * Where things are, found the way the format document says: the
 * superblock names the root dnode, a dnode's entry 0 its head block, the
 * head its record blocks (or table blocks), a record its bytes or node. */
static struct ed_protector xprot(const char *opts, uint64_t sector, uint16_t slot)
{
	struct capkey k;
	CHECK_EQ(capkey_from_opts(&k, "unixfs", opts), 0);
	struct ed_cap rc = capkey_cap(&k, 'r', sector, slot), wc = capkey_cap(&k, 'w', sector, slot);
	return edc_prot_xn(0, sector, slot, &rc, &wc);
}

static struct ed_protector xref_prot(const char *opts, uint64_t xref)
{
	return xprot(opts, ufs_xref_sector(xref), (uint16_t)ufs_xref_slot(xref));
}

/* The anchor (found by trying every place, not by the key's sequence)
 * whose entry UFS_E_SUPER is a unixfs superblock. */
static uint64_t find_super(struct edc *c, const char *opts, struct ufs_super *sb)
{
	for (uint64_t s = 0; s < 131072; s += 8) {
		struct ed_protector p = xprot(opts, s, 0);
		if (edc_xn_read_data(c, &p, UFS_E_SUPER, sb, sizeof *sb) == (int64_t)sizeof *sb &&
		    sb->magic == UFS_SUPER_MAGIC)
			return s;
	}
	CHECK(!"no superblock");
	return 0;
}

/* A directory's blocks: the head's sector first, then record blocks. */
static int dir_blocks(struct edc *c, const char *opts, uint64_t dnode, uint64_t *out, int max)
{
	struct ed_protector p = xref_prot(opts, dnode);
	struct ufs_xmeta m;
	CHECK_EQ(edc_xn_read_data(c, &p, UFS_E_META, &m, sizeof m), sizeof m);
	CHECK_EQ(m.kind, UFS_K_DIR);
	if (m.head == 0)
		return 0;
	static uint8_t b[UFS_BSIZE];
	CHECK_EQ(edc_read(c, &p, m.head, b, UFS_BSIZE), 0);
	const struct ufs_dblk *h = (const void *)b;
	CHECK_EQ(h->magic, UFS_DBLK_MAGIC);
	const struct ufs_dptr *ptr = (const void *)(b + 32);
	int n = 0;
	out[n++] = m.head;
	for (int i = 0; i < h->nptr && n < max; i++)
		out[n++] = ptr[i].sector;        /* (record blocks: these tests make no tables) */
	return n;
}

/* The record of `name` in directory dnode; 0 if found. */
static int find_rec(struct edc *c, const char *opts, uint64_t dnode, const char *name,
                    struct ufs_drec *out, uint64_t *blk)
{
	uint64_t bl[300];
	int n = dir_blocks(c, opts, dnode, bl, 300);
	struct ed_protector p = xref_prot(opts, dnode);
	static uint8_t b[UFS_BSIZE];
	for (int i = 0; i < n; i++) {
		CHECK_EQ(edc_read(c, &p, bl[i], b, UFS_BSIZE), 0);
		const struct ufs_dblk *h = (const void *)b;
		for (uint32_t off = h->rec_off; off < (uint32_t)h->rec_off + h->rec_len;) {
			const struct ufs_drec *r = (const void *)(b + off);
			if (r->namelen == strlen(name) && memcmp(r + 1, name, r->namelen) == 0) {
				*out = *r;
				if (blk)
					*blk = bl[i];
				return 0;
			}
			off += r->reclen;
		}
	}
	return -1;
}

/* Walk an absolute path: the record of its last component, and the dnode
 * of the directory holding it. */
static void find_path(struct edc *c, const char *opts, const char *path, struct ufs_drec *r,
                      uint64_t *dir, uint64_t *blk)
{
	struct ufs_super sb;
	find_super(c, opts, &sb);
	uint64_t d = sb.root;
	char buf[256];
	strcpy(buf, path);
	char *save, *comp = strtok_r(buf, "/", &save);
	while (comp != NULL) {
		CHECK_EQ(find_rec(c, opts, d, comp, r, blk), 0);
		char *next = strtok_r(NULL, "/", &save);
		if (next == NULL)
			break;
		CHECK_EQ(r->type, UFS_T_DIR);
		d = r->loc;
		comp = next;
	}
	if (dir)
		*dir = d;
}

/* Damaged, stale and misplaced directory blocks, and a node with authentic
 * but malformed metadata: -EIO for what needs them (with the damage named),
 * nothing else disturbed, never a wrong name or another file's bytes. */
static void test_corruption(void)
{
	struct ufx u;
	ufx_fresh(&u, 65536, HD_SYNC, 4, OPTS);
	static uint8_t buf[50000];
	CHECK_EQ(vfs_mkdir("/big", 0755), 0);
	CHECK_EQ(vfs_mkdir("/ok", 0755), 0);
	CHECK_EQ(vfs_mkdir("/stale", 0755), 0);
	for (int i = 0; i < 60; i++) {            /* past the head: record blocks */
		char path[64];
		snprintf(path, sizeof path, "/big/file-with-a-long-name-%d", i);
		put(path, "x", 1);
	}
	pattern(buf, sizeof buf, 5);
	put("/ok/keep", buf, 5000);
	put("/victim", buf, 40000);               /* large: an fnode */
	put("/stale/a", buf, 100);
	CHECK_EQ(vfs_sync(), 0);
	ufx_umount();
	struct edc *c = &u.p.edc;
	/* /big: flip a byte in a record block (not the head). */
	struct ufs_drec r;
	uint64_t bigdir, bl[8];
	find_path(c, OPTS, "/big", &r, NULL, NULL);
	bigdir = r.loc;
	CHECK(dir_blocks(c, OPTS, bigdir, bl, 8) >= 2);
	/* /stale: its head as it is now, put back after another commit. */
	uint64_t stale, sbl[2];
	find_path(c, OPTS, "/stale", &r, NULL, NULL);
	stale = r.loc;
	CHECK_EQ(dir_blocks(c, OPTS, stale, sbl, 2), 1);
	static uint8_t oldhead[UFS_BSIZE];
	memcpy(oldhead, hostdisk_sector(&u.f.hd, sbl[0]), UFS_BSIZE);
	/* The victim's fnode gets authentic but malformed metadata (we have
	 * its keys). */
	find_path(c, OPTS, "/victim", &r, NULL, NULL);
	CHECK_EQ(r.where, UFS_W_NODE);
	struct ed_protector v = xref_prot(OPTS, r.loc);
	struct ufs_xmeta junk;
	memset(&junk, 0x5a, sizeof junk);
	CHECK_EQ(edc_xn_add_data(c, &v, UFS_E_META, &junk, sizeof junk), UFS_E_META);
	CHECK_EQ(edc_xn_write_sync(c, &v), 0);
	ufx_mount(OPTS);
	put("/stale/b", buf, 200);                /* a new head for /stale */
	ufx_umount();
	uint64_t nsbl[2];
	CHECK_EQ(dir_blocks(c, OPTS, stale, nsbl, 2), 1);
	CHECK(nsbl[0] != sbl[0]);
	ufx_reboot(&u);
	hostdisk_sector(&u.f.hd, bl[1])[700] ^= 0x10;
	memcpy(hostdisk_sector(&u.f.hd, nsbl[0]), oldhead, UFS_BSIZE);   /* stale, but once valid */

	ufx_mount(OPTS);
	struct libfs_stat st;
	struct vfile *f;
	CHECK_EQ(vfs_stat("/big/file-with-a-long-name-3", &st), -EIO);
	CHECK_EQ(vfs_open("/big/new", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), -EIO);
	CHECK_EQ(vfs_open("/big", LIBFS_O_READ | LIBFS_O_DIR, 0, &f), -EIO);
	CHECK_EQ(vfs_stat("/stale/a", &st), -EIO);   /* not the old names */
	CHECK_EQ(vfs_stat("/victim", &st), -EIO);
	expect("/ok/keep", buf, 5000);              /* the rest is fine */
	put("/ok/new", buf, 10);
	CHECK_EQ(vfs_unlink("/ok/new"), 0);
	ufx_umount();
	struct ufs_fsck_stats fst;
	CHECK(unixfs_fsck(OPTS, say, NULL, &fst) >= 3);
	ufx_free(&u);
}

static int exists(const char *path, const uint8_t *data, size_t n)
{
	struct libfs_stat st;
	int r = vfs_stat(path, &st);
	if (r == -ENOENT)
		return 0;
	CHECK_EQ(r, 0);
	expect(path, data, n);
	return 1;
}

static void no_orphan_report(void *arg, const char *path, const char *what)
{
	if (strstr(what, "orphan") == NULL) {
		fprintf(stderr, "  fsck: %s: %s\n", path, what);
		(*(int *)arg)++;
	}
}

/* Power cut at every disk request from a rename to the end of the sync
 * after it - across directories and within one, of a small file and of a
 * large one: after the next mount the file has exactly one name, the old
 * or the new, with its bytes, and fsck finds nothing but orphans (which
 * -r frees).  Issue 17's F1. */
static void test_rename_cuts(void)
{
	static uint8_t buf[40000];
	pattern(buf, sizeof buf, 61);
	int tried = 0;
	for (int within = 0; within < 2; within++)
		for (int big = 0; big < 2; big++) {
			size_t n = big ? sizeof buf : 3000;
			const char *to = within ? "/d1/b" : "/d2/b";
			for (int cut = 0;; cut++) {
				struct ufx u;
				ufx_fresh(&u, 65536, HD_SYNC, 100 + (uint64_t)cut, OPTS);
				CHECK_EQ(vfs_mkdir("/d1", 0755), 0);
				CHECK_EQ(vfs_mkdir("/d2", 0755), 0);
				put("/d1/a", buf, n);
				put("/d1/keep", buf, 100);
				put("/d2/other", buf, 10);
				CHECK_EQ(vfs_sync(), 0);
				u.f.hd.die_countdown = cut;
				int r = vfs_rename("/d1/a", to);
				CHECK(r == 0 || u.f.hd.dead);
				vfs_sync();
				int died = u.f.hd.dead;
				vfs_abandon();
				ufx_crash(&u);
				int bad = 0;
				struct ufs_fsck_stats st;
				CHECK(unixfs_fsck(OPTS ",repair", no_orphan_report, &bad, &st) >= 0);
				CHECK_EQ(bad, 0);
				CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
				ufx_mount(OPTS);
				int names = exists("/d1/a", buf, n) + exists(to, buf, n);
				if (names != 1)
					fprintf(stderr, "rename %s cut at request %d: %d names\n", to, cut, names);
				CHECK_EQ(names, 1);
				expect("/d1/keep", buf, 100);
				expect("/d2/other", buf, 10);
				ufx_umount();
				ufx_free(&u);
				tried++;
				if (!died)
					break;              /* no request left to cut */
			}
		}
	printf("test_unixfs: rename: %d power cuts, one name each time\n", tried);
}

/* The libFS kit's power-cut workload (fscut.h) on unixfs alone, cut at up
 * to max_runs of its requests (test_fssuite runs it with 250 in make test;
 * `test_unixfs cut [N]` cuts at every request). */
static void test_fscut(int max_runs)
{
	struct fscut c = { .ops = &unixfs_ops, .opts = "key=cut" };
	CHECK_EQ(fscut_run(&c, 30, max_runs, 41), 0);
}

/* Write-through, write-back and memory-only files across a power failure. */
static void test_persistence(void)
{
	struct ufx u;
	ufx_fresh(&u, 65536, HD_POLLED, 5, OPTS);
	CHECK_EQ(vfs_mkdir("/p", 0755), 0);
	CHECK_EQ(vfs_sync(), 0);
	static uint8_t buf[20000];
	pattern(buf, sizeof buf, 6);
	struct vfile *wt, *wb, *mem;
	CHECK_EQ(vfs_open("/p/through", LIBFS_O_WRITE | LIBFS_O_READ | LIBFS_O_CREAT, 0644, &wt), 0);
	CHECK_EQ(vfs_persist(wt, LIBFS_P_WRITETHROUGH), 0);
	CHECK_EQ(vfs_write(wt, buf, sizeof buf), (long)sizeof buf);
	CHECK_EQ(vfs_open("/p/back", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &wb), 0);
	CHECK_EQ(vfs_write(wb, buf, sizeof buf), (long)sizeof buf);
	CHECK_EQ(vfs_open("/p/mem", LIBFS_O_WRITE | LIBFS_O_READ | LIBFS_O_CREAT, 0644, &mem), 0);
	CHECK_EQ(vfs_persist(mem, LIBFS_P_MEMORY), 0);
	CHECK_EQ(vfs_write(mem, buf, sizeof buf), (long)sizeof buf);
	struct libfs_stat st;
	CHECK_EQ(vfs_fstat(mem, &st), 0);
	CHECK(st.persist == LIBFS_P_MEMORY && st.size == sizeof buf && st.blocks == 0);
	CHECK_EQ(vfs_fstat(wt, &st), 0);
	CHECK(st.persist == LIBFS_P_WRITETHROUGH);
	/* The memory-only file is an ordinary file while mounted. */
	expect("/p/mem", buf, sizeof buf);
	CHECK_EQ(vfs_rename("/p/mem", "/p/mem2"), 0);
	expect("/p/mem2", buf, sizeof buf);
	/* An existing file cannot become memory-only. */
	CHECK_EQ(vfs_persist(wt, LIBFS_P_MEMORY), -EINVAL);
	/* Power fails: the write-through file is there in full. */
	vfs_abandon();
	ufx_crash(&u);
	ufx_mount(OPTS);
	expect("/p/through", buf, sizeof buf);
	CHECK_EQ(vfs_stat("/p/through", &st), 0);
	CHECK(st.persist == LIBFS_P_WRITETHROUGH);   /* the choice is kept */
	CHECK_EQ(vfs_stat("/p/mem2", &st), -ENOENT);  /* never on disk */
	/* Memory-only files are gone after an unmount too, and leave nothing. */
	CHECK_EQ(vfs_open("/p/tmp", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &mem), 0);
	CHECK_EQ(vfs_persist(mem, LIBFS_P_MEMORY), 0);
	CHECK_EQ(vfs_write(mem, buf, 100), 100);
	CHECK_EQ(vfs_close(mem), 0);
	expect("/p/tmp", buf, 100);
	ufx_umount();
	ufx_mount(OPTS);
	CHECK_EQ(vfs_stat("/p/tmp", &st), -ENOENT);
	ufx_umount();
	struct ufs_fsck_stats fst;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	ufx_free(&u);
}

/* Many processes at once (docs/sharing.md): a second mount takes the
 * lock from the first, which publishes what it changed; a process that
 * dies holding it leaves the file system as a crash would. */
static void test_lock(void)
{
	struct ufx u;
	ufx_fresh(&u, 65536, HD_SYNC, 6, OPTS);
	put("/x", "hello", 5);
	/* A second process on the same machine. */
	struct edc_host b;
	edc_host_init(&b, &u.f.h, u.f.ed);
	edc_set_default(&b.edc);
	void *fs2;
	struct libfs_stat st;
	CHECK_EQ(unixfs_ops.mount(OPTS ",wait=0", &fs2), 0);     /* no -EBUSY */
	CHECK_EQ(unixfs_ops.stat(fs2, "x", &st), 0);
	CHECK_EQ(st.size, 5);
	CHECK_EQ(unixfs_ops.unmount(fs2), 0);
	/* The first changes more, and dies holding the lock without
	 * unmounting: what it had not published is lost, as in a crash. */
	edc_set_default(&u.p.edc);
	put("/y", "lost", 4);
	vfs_abandon();
	edc_host_exit(&u.p);
	u.running = 0;
	edc_set_default(&b.edc);
	CHECK_EQ(unixfs_ops.mount(OPTS ",wait=0", &fs2), 0);
	CHECK_EQ(unixfs_ops.stat(fs2, "x", &st), 0);
	CHECK_EQ(unixfs_ops.stat(fs2, "y", &st), -ENOENT);
	CHECK_EQ(unixfs_ops.unmount(fs2), 0);
	edc_host_exit(&b);
	ufx_start(&u);
	/* A wrong key opens nothing: its places hold no anchor of its own. */
	CHECK_EQ(vfs_mount("/", "unixfs", "unit=0,key=wrong", 1), -ENODEV);
	ufx_mount(OPTS);
	ufx_umount();
	ufx_free(&u);
}

/* Two owners with separate file systems interleaved on one disk: neither
 * can read or write the other's data, even knowing exactly where it is. */
static void test_two_owners(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 7);
	struct edc_host a, b;
	edc_host_init(&a, &u.f.h, u.f.ed);
	edc_host_init(&b, &u.f.h, u.f.ed);
	edc_set_default(&a.edc);
	ufx_mkfs(&u, "key=alice");
	edc_set_default(&b.edc);
	ufx_mkfs(&u, "key=bob");
	edc_set_default(&a.edc);
	CHECK_EQ(vfs_mount("/a", "unixfs", "key=alice", 1), 0);
	edc_set_default(&b.edc);
	CHECK_EQ(vfs_mount("/b", "unixfs", "key=bob", 1), 0);
	static uint8_t abuf[40000], bbuf[40000];
	pattern(abuf, sizeof abuf, 10);
	pattern(bbuf, sizeof bbuf, 11);
	/* Interleaved creation, so their blocks interleave on the disk. */
	for (int i = 0; i < 12; i++) {
		char pa[32], pb[32];
		snprintf(pa, sizeof pa, "/a/f%d", i);
		snprintf(pb, sizeof pb, "/b/f%d", i);
		put(pa, abuf, sizeof abuf);
		CHECK_EQ(vfs_sync(), 0);
		put(pb, bbuf, sizeof bbuf);
		CHECK_EQ(vfs_sync(), 0);
	}
	CHECK_EQ(vfs_rename("/a/f0", "/b/f0x"), -EXDEV);
	CHECK_EQ(vfs_umount("/a"), 0);
	CHECK_EQ(vfs_umount("/b"), 0);
	/* Where bob's f3 lives, learned with bob's key... */
	struct ufs_drec br, ar;
	find_path(&b.edc, "key=bob", "/f3", &br, NULL, NULL);
	find_path(&a.edc, "key=alice", "/f3", &ar, NULL, NULL);
	CHECK(br.where == UFS_W_NODE && ar.where == UFS_W_NODE);
	uint64_t sec = ufs_xref_sector(br.loc);
	uint16_t slot = (uint16_t)ufs_xref_slot(br.loc);
	struct ed_protector bp = xprot("key=bob", sec, slot);
	int64_t addr = edc_xn_map(&b.edc, &bp);
	CHECK(addr > 0);
	const struct ed_xnmap_hdr *h = (const void *)(uintptr_t)addr;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	uint64_t data = 0;
	for (uint32_t i = 0; i < h->nent; i++)
		if (ent[i].type == ED_ENT_EXTENT && data == 0)
			data = ent[i].a;
	CHECK(data != 0);
	CHECK(ufs_xref_sector(ar.loc) != sec);
	/* ...alice (whose key derives other capabilities) gets nowhere. */
	struct ed_protector ap = xprot("key=alice", sec, slot);
	uint8_t got[512];
	CHECK_EQ(edc_read(&a.edc, &ap, data, got, 512), ED_E_CAP);
	CHECK_EQ(edc_write(&a.edc, &ap, data, abuf, 512), ED_E_CAP);
	CHECK_EQ(edc_xn_map(&a.edc, &ap), ED_E_CAP);
	CHECK_EQ(edc_xn_read_data(&a.edc, &ap, UFS_E_META, got, 64), ED_E_CAP);
	CHECK_EQ(edc_xn_add_data(&a.edc, &ap, UFS_E_META, got, 64), ED_E_CAP);
	CHECK_EQ(edc_xn_remove(&a.edc, &ap, UFS_E_EXT), ED_E_CAP);
	CHECK_EQ(edc_xn_dealloc(&a.edc, &ap), ED_E_CAP);
	/* Nor can she take bob's sectors into an exonode of her own. */
	struct ed_protector mine = xprot("key=alice", 65000, 0);
	mine.length = 128;
	CHECK_EQ(edc_xn_alloc(&a.edc, &mine), 0);
	CHECK_EQ(edc_xn_add_extent(&a.edc, &mine, -1, data, 512), ED_E_ALLOCATED);
	CHECK_EQ(edc_xn_dealloc(&a.edc, &mine), 0);
	/* Nor mount bob's file system with her key. */
	char o[64];
	struct ufs_super bsb;
	snprintf(o, sizeof o, "key=alice,sb=%llu", (unsigned long long)find_super(&b.edc, "key=bob", &bsb));
	edc_set_default(&a.edc);
	CHECK(vfs_mount("/x", "unixfs", o, 1) < 0);
	/* Bob's data is untouched. */
	edc_set_default(&b.edc);
	CHECK_EQ(vfs_mount("/b", "unixfs", "key=bob", 1), 0);
	for (int i = 0; i < 12; i++) {
		char pb[32];
		snprintf(pb, sizeof pb, "/b/f%d", i);
		expect(pb, bbuf, sizeof bbuf);
	}
	CHECK_EQ(vfs_umount("/b"), 0);
	edc_set_default(&a.edc);
	CHECK_EQ(vfs_mount("/a", "unixfs", "key=alice", 1), 0);
	expect("/a/f5", abuf, sizeof abuf);
	CHECK_EQ(vfs_umount("/a"), 0);
	edc_host_exit(&a);
	edc_host_exit(&b);
	edc_set_default(&u.p.edc);
	ufx_free(&u);
}

/* A file of hundreds of extents: the inode's direct entries, the single
 * indirect node and leaves of the double one, grown, read, shrunk back
 * through each, across a reboot. */
static void test_fragmented(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 8);
	ufx_mkfs(&u, OPTS ",cache=32");
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS ",cache=32", 1), 0);
	/* Two files written a block at a time, in turn, with a sync between:
	 * delayed allocation gives each its next block then, so they
	 * interleave and neither gets two neighbouring blocks. */
	const int nb = 320;
	static uint8_t a[320 * 4096], b[4096];
	pattern(a, sizeof a, 21);
	struct vfile *fa, *fb;
	CHECK_EQ(vfs_open("/frag", LIBFS_O_READ | LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fa), 0);
	CHECK_EQ(vfs_open("/other", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fb), 0);
	for (int i = 0; i < nb; i++) {
		CHECK_EQ(vfs_pwrite(fa, a + (size_t)i * 4096, 4096, (uint64_t)i * 4096), 4096);
		CHECK_EQ(vfs_sync(), 0);
		CHECK_EQ(vfs_pwrite(fb, b, 4096, (uint64_t)i * 4096), 4096);
		CHECK_EQ(vfs_sync(), 0);
	}
	CHECK_EQ(vfs_close(fa), 0);
	CHECK_EQ(vfs_close(fb), 0);
	expect("/frag", a, sizeof a);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/frag", &st), 0);
	CHECK(st.blocks > (uint64_t)nb * 8 + 3 * 4);      /* map nodes as well as data */
	ufx_umount();
	struct ufs_fsck_stats fst;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	CHECK(fst.extents >= (uint64_t)nb && fst.mapnodes >= 3);
	ufx_reboot(&u);
	ufx_mount(OPTS);
	expect("/frag", a, sizeof a);
	/* Shrink back through the double node's leaves, the single node, the
	 * direct entries, mid-extent each time. */
	static const size_t sizes[] = { 300 * 4096 + 100, 150 * 4096, 130 * 4096 + 1, 20 * 4096,
	                                 10 * 4096 + 5, 4097, 0 };
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		CHECK_EQ(vfs_open("/frag", LIBFS_O_WRITE, 0, &fa), 0);
		CHECK_EQ(vfs_ftruncate(fa, sizes[k]), 0);
		CHECK_EQ(vfs_close(fa), 0);
		CHECK_EQ(vfs_sync(), 0);
		expect("/frag", a, sizes[k]);
	}
	/* Nothing left but the inode: no extents, no map nodes. */
	CHECK_EQ(vfs_stat("/frag", &st), 0);
	CHECK_EQ(st.blocks, 1);
	ufx_umount();
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	CHECK(fst.mapnodes >= 3);                           /* /other's */
	/* Deleting /other (320 extents in the inode, the single node and
	 * leaves of the double node) gives each node's extents back in one
	 * request (ED_OP_EXONODE_REMOVE_RANGE), not one each. */
	ufx_reboot(&u);
	ufx_mount(OPTS);
	struct libfs_statfs sf0, sf1;
	CHECK_EQ(vfs_statfs("/", &sf0), 0);
	uint64_t r0 = u.p.edc.nrequests;
	CHECK_EQ(vfs_unlink("/other"), 0);
	CHECK_EQ(vfs_sync(), 0);
	uint64_t reqs = u.p.edc.nrequests - r0;
	printf("test_unixfs: deleting a file of %d extents: %lu exodisk requests\n", nb,
	       (unsigned long)reqs);
	CHECK(reqs < 80);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	CHECK_EQ(vfs_statfs("/", &sf1), 0);
	CHECK(sf1.bfree >= sf0.bfree + (uint64_t)nb * 4096 / sf0.bsize);   /* its blocks are free again */
	ufx_umount();
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &fst), 0);
	CHECK_EQ(fst.mapnodes, 0);
	ufx_free(&u);
}

/* Shrinking a file and growing it again shows zeros, never the old bytes -
 * also when reading the block the new end falls in brings the blocks after
 * it into the cache (read-ahead, from a cold cache). */
static void test_shrink_regrow(void)
{
	struct ufx u;
	ufx_fresh(&u, 65536, HD_SYNC, 9, OPTS);
	static uint8_t buf[70000], model[70000];
	pattern(buf, sizeof buf, 31);
	put("/f", buf, 64861);
	ufx_umount();
	ufx_mount(OPTS);                              /* a cold cache */
	struct vfile *f;
	CHECK_EQ(vfs_open("/f", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, 3141), 0);
	CHECK_EQ(vfs_pwrite(f, buf, 5000, 15006), 5000);
	CHECK_EQ(vfs_close(f), 0);
	memset(model, 0, sizeof model);
	memcpy(model, buf, 3141);
	memcpy(model + 15006, buf, 5000);
	expect("/f", model, 20006);
	/* Growing by truncation, and across a remount. */
	CHECK_EQ(vfs_open("/f", LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, 1000), 0);
	CHECK_EQ(vfs_ftruncate(f, 60000), 0);
	CHECK_EQ(vfs_close(f), 0);
	memset(model + 1000, 0, sizeof model - 1000);
	expect("/f", model, 60000);
	ufx_umount();
	ufx_mount(OPTS);
	expect("/f", model, 60000);
	ufx_umount();
	ufx_free(&u);
}

/* ---- a rival that takes the place unixfs chose ---------------------------
 * The free map is live, but between unixfs's look at it and its request
 * another process may allocate there.  This transport sits between unixfs
 * and the core and, on chosen allocations, lets a rival process take the
 * sectors first: an extent, an exonode block like an inode block, or one
 * with exonodes of another size.  unixfs must look elsewhere, not fail. */
struct rival {
	struct edc_host *inner;     /* unixfs's process */
	struct edc_host *other;     /* the rival */
	int every, n;               /* steal at every `every`th chance */
	int stolen[3];              /* by kind */
};

static int steal(struct rival *rv, uint64_t at)
{
	static const struct ed_cap junk = { { 0x5eed, 0xbad } };
	int kind = (rv->stolen[0] + rv->stolen[1] + rv->stolen[2]) % 3;
	struct ed_protector p = kind == 0 ? edc_prot_extent(0, at, &junk, &junk)
	                                  : edc_prot_xn(0, at, 0, &junk, &junk);
	p.length = kind == 0 ? 512 : kind == 1 ? UFS_XN_BYTES : 64;
	int64_t r = kind == 0 ? edc_extent_alloc(&rv->other->edc, &p)
	                      : edc_xn_alloc(&rv->other->edc, &p);
	if (r == 0)
		rv->stolen[kind]++;
	return r == 0;
}

static int64_t rival_request(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
                             struct ed_operation *stuff)
{
	struct rival *rv = ctx;
	uint64_t at = UINT64_MAX;
	if (op == ED_OP_EXONODE_ALLOCATE && prot->xn_num == 0)
		at = prot->blkno;
	else if (op == ED_OP_EXONODE_ADD_EXTENT || op == ED_OP_EXONODE_ADD_EXONODE)
		at = stuff->one;
	if (at != UINT64_MAX && rv->every > 0 && ++rv->n % rv->every == 0)
		steal(rv, at);
	return rv->inner->edc.t->request(rv->inner, op, prot, buf, stuff);
}

/* The rest is unixfs's process's own transport. */
static struct edc_host *in(void *ctx) { return ((struct rival *)ctx)->inner; }
static void rival_idle(void *ctx) { in(ctx)->edc.t->idle(in(ctx)); }
static const uint64_t *rival_fm(void *ctx, int unit, uint32_t i)
{
	return in(ctx)->edc.t->fm_page(in(ctx), unit, i);
}
static uint64_t rival_nsect(void *ctx, int unit) { return in(ctx)->edc.t->nsectors(in(ctx), unit); }

static const struct edc_transport rival_transport = {
	rival_request, rival_idle, rival_fm, rival_nsect,
};

static void test_alloc_race(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 10);
	ufx_mkfs(&u, OPTS);
	struct edc_host other;
	edc_host_init(&other, &u.f.h, u.f.ed);
	struct rival rv = { .inner = &u.p, .other = &other };
	struct edc wrapped;
	edc_init(&wrapped, &rival_transport, &rv);
	edc_set_default(&wrapped);
	ufx_mount(OPTS);
	rv.every = 3;                  /* the mount's lock is left alone */
	static uint8_t buf[300000];
	pattern(buf, sizeof buf, 41);
	CHECK_EQ(vfs_mkdir("/d", 0755), 0);
	/* Files of every shape, and one large file grown in pieces between
	 * them so that it needs many extents and map nodes. */
	struct vfile *big;
	CHECK_EQ(vfs_open("/big", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &big), 0);
	for (int i = 0; i < 40; i++) {
		char path[32];
		snprintf(path, sizeof path, i % 2 ? "/d/f%d" : "/f%d", i);
		put(path, buf + i, (size_t)(i * 997) % 20000);
		CHECK_EQ(vfs_write(big, buf + i * 7000, 7000), 7000);
		CHECK_EQ(vfs_fsync(big), 0);
	}
	CHECK_EQ(vfs_close(big), 0);
	CHECK_EQ(vfs_sync(), 0);
	rv.every = 0;
	for (int k = 0; k < 3; k++)
		CHECK(rv.stolen[k] > 0);
	ufx_umount();
	edc_host_exit(&other);          /* what the rival took is given back */
	edc_set_default(&u.p.edc);
	ufx_reboot(&u);
	ufx_mount(OPTS);
	for (int i = 0; i < 40; i++) {
		char path[32];
		snprintf(path, sizeof path, i % 2 ? "/d/f%d" : "/f%d", i);
		expect(path, buf + i, (size_t)(i * 997) % 20000);
	}
	expect("/big", buf, 280000);
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

/* Directory read-ahead (ahead.c): subdirectories loaded in the order they
 * were made use what was read ahead, in reverse order or at random they
 * are still right, and a directory changed after its group was read ahead
 * is read again. */
static int ahead_used(void)
{
	struct vfs_lower lo;
	struct ufs_counters c;
	CHECK_EQ(vfs_pin("/", &lo), 0);
	unixfs_counters(lo.fs, &c);
	vfs_unpin(&lo);
	return (int)c.ahead_used;
}

static void ahead_path(char *p, size_t n, int d, int f)
{
	snprintf(p, n, "/t/s%02d/f%d", d, f);
}

static void test_dir_ahead(void)
{
	enum { NDIR = 40, NFILE = 5 };
	struct ufx u;
	ufx_fresh(&u, 65536, HD_POLLED, 12, OPTS);
	static uint8_t buf[NDIR * NFILE + 40000];
	pattern(buf, sizeof buf, 77);
	CHECK_EQ(vfs_mkdir("/t", 0755), 0);
	char p[48];
	for (int d = 0; d < NDIR; d++) {
		snprintf(p, sizeof p, "/t/s%02d", d);
		CHECK_EQ(vfs_mkdir(p, 0755), 0);
		for (int f = 0; f < NFILE; f++) {
			ahead_path(p, sizeof p, d, f);
			put(p, buf + d * NFILE + f, 100 + (size_t)(d * 131 + f * 17) % 3000);
		}
	}
	put("/t/s07/big", buf, 40000);           /* a large file among them */
	ufx_umount();
	ufx_reboot(&u);
	/* In the order they were made: nearly all from the read-ahead. */
	ufx_mount(OPTS);
	for (int f = 0; f < NFILE; f++)
		for (int d = 0; d < NDIR; d++) {
			ahead_path(p, sizeof p, d, f);
			expect(p, buf + d * NFILE + f, 100 + (size_t)(d * 131 + f * 17) % 3000);
		}
	expect("/t/s07/big", buf, 40000);
	CHECK(ahead_used() >= NDIR - 4);
	ufx_umount();
	/* Backwards, and then every other one, changing some on the way. */
	ufx_mount(OPTS);
	for (int d = NDIR - 1; d >= 0; d--) {
		ahead_path(p, sizeof p, d, 1);
		expect(p, buf + d * NFILE + 1, 100 + (size_t)(d * 131 + 17) % 3000);
	}
	ufx_umount();
	ufx_mount(OPTS);
	for (int d = 0; d < NDIR; d += 2) {
		ahead_path(p, sizeof p, d, 0);
		put(p, buf + 1000 + d, 500);     /* loads s(d), whose siblings were read ahead */
		ahead_path(p, sizeof p, d + 1, 0);
		expect(p, buf + (d + 1) * NFILE, 100 + (size_t)((d + 1) * 131) % 3000);
	}
	CHECK_EQ(vfs_sync(), 0);
	ufx_umount();
	ufx_reboot(&u);
	/* Round-robin deletes, as the benchmark does, then the directories. */
	ufx_mount(OPTS);
	for (int d = 0; d < NDIR; d += 2) {
		ahead_path(p, sizeof p, d, 0);
		expect(p, buf + 1000 + d, 500);
	}
	for (int f = 0; f < NFILE; f++)
		for (int d = 0; d < NDIR; d++) {
			ahead_path(p, sizeof p, d, f);
			CHECK_EQ(vfs_unlink(p), 0);
		}
	CHECK_EQ(vfs_unlink("/t/s07/big"), 0);
	for (int d = 0; d < NDIR; d++) {
		snprintf(p, sizeof p, "/t/s%02d", d);
		CHECK_EQ(vfs_rmdir(p), 0);
	}
	CHECK_EQ(vfs_rmdir("/t"), 0);
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

/* Random 4 KiB reads of a large file read their 64 KiB cluster around
 * them (data.c): every block right, blocks cut off by a truncate not yet
 * committed read as zeros, and the cache stays consistent with writes. */
static void test_read_around(void)
{
	enum { NB = 640 };                       /* 2.5 MiB: past the cache below */
	struct ufx u;
	ufx_new(&u, 65536, HD_POLLED, 13);
	ufx_mkfs(&u, OPTS);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS ",cache=256", 1), 0);
	static uint8_t data[NB * 4096], b[4096];
	static const uint8_t zero[4096];
	pattern(data, sizeof data, 99);
	put("/r", data, sizeof data);
	ufx_umount();
	ufx_reboot(&u);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS ",cache=256", 1), 0);
	static uint32_t order[NB];
	for (uint32_t i = 0; i < NB; i++)
		order[i] = i;
	uint64_t seed = 5;
	for (uint32_t i = NB - 1; i > 0; i--) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t j = (uint32_t)((seed >> 33) % (i + 1)), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	struct vfile *f;
	CHECK_EQ(vfs_open("/r", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	for (uint32_t i = 0; i < NB; i++) {
		CHECK_EQ(vfs_pread(f, b, 4096, (uint64_t)order[i] * 4096), 4096);
		CHECK(memcmp(b, data + (size_t)order[i] * 4096, 4096) == 0);
	}
	/* Rewrite some blocks, cut the file and grow it back: the cut part
	 * reads as zeros, the rest as last written. */
	for (uint32_t i = 0; i < NB; i += 37) {
		pattern(data + (size_t)i * 4096, 4096, 1000 + i);
		CHECK_EQ(vfs_pwrite(f, data + (size_t)i * 4096, 4096, (uint64_t)i * 4096), 4096);
	}
	CHECK_EQ(vfs_ftruncate(f, 300 * 4096 + 100), 0);
	CHECK_EQ(vfs_ftruncate(f, sizeof data), 0);
	memset(data + 300 * 4096 + 100, 0, sizeof data - (300 * 4096 + 100));
	for (uint32_t i = 0; i < NB; i++) {
		uint32_t k = order[(i * 7) % NB];
		CHECK_EQ(vfs_pread(f, b, 4096, (uint64_t)k * 4096), 4096);
		CHECK(memcmp(b, data + (size_t)k * 4096, 4096) == 0);
		CHECK(k < 301 || memcmp(b, zero, 4096) == 0);
	}
	CHECK_EQ(vfs_close(f), 0);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	expect("/r", data, sizeof data);
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

static uint64_t data_reads(void)
{
	struct vfs_lower lo;
	struct ufs_counters c;
	CHECK_EQ(vfs_pin("/", &lo), 0);
	unixfs_counters(lo.fs, &c);
	vfs_unpin(&lo);
	return c.data_reads;
}

/* Read-around in a file whose extents break inside its 64 KiB clusters
 * (two files written 3 blocks at a time in turn, each piece made durable,
 * so neither extent can grow in place), in a cache that holds it whole:
 * a random miss reads back to the cluster's start only as far as its
 * extent goes and nothing is cached, and forward likewise (data.c,
 * extent_back).  Every block right, in fewer requests than blocks. */
static void test_read_around_fragments(void)
{
	enum { NB = 96, PIECE = 3 };
	struct ufx u;
	ufx_fresh(&u, 65536, HD_POLLED, 17, OPTS);
	static uint8_t a[NB * 4096], b[NB * 4096], got[4096];
	pattern(a, sizeof a, 7);
	pattern(b, sizeof b, 8);
	struct vfile *fa, *fb;
	CHECK_EQ(vfs_open("/a", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fa), 0);
	CHECK_EQ(vfs_open("/b", LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &fb), 0);
	/* Past the small-file size first, so both are large files. */
	for (uint32_t k = 0; k < NB; k += PIECE) {
		uint64_t off = (uint64_t)k * 4096;
		CHECK_EQ(vfs_pwrite(fa, a + off, PIECE * 4096, off), PIECE * 4096);
		CHECK_EQ(vfs_fsync(fa), 0);
		CHECK_EQ(vfs_pwrite(fb, b + off, PIECE * 4096, off), PIECE * 4096);
		CHECK_EQ(vfs_fsync(fb), 0);
	}
	CHECK_EQ(vfs_close(fa), 0);
	CHECK_EQ(vfs_close(fb), 0);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	CHECK_EQ(vfs_open("/a", LIBFS_O_READ, 0, &fa), 0);
	uint64_t r0 = data_reads();
	/* Some blocks first, so that later misses meet cached ones. */
	for (uint32_t k = 5; k < NB; k += 16) {
		CHECK_EQ(vfs_pread(fa, got, 4096, (uint64_t)k * 4096), 4096);
		CHECK(memcmp(got, a + (size_t)k * 4096, 4096) == 0);
	}
	for (uint32_t i = 0; i < NB; i++) {
		uint32_t k = (i * 37 + 11) % NB;
		CHECK_EQ(vfs_pread(fa, got, 4096, (uint64_t)k * 4096), 4096);
		CHECK(memcmp(got, a + (size_t)k * 4096, 4096) == 0);
	}
	uint64_t reads = data_reads() - r0;
	CHECK(reads <= NB / 2);
	CHECK_EQ(vfs_close(fa), 0);
	ufx_umount();
	ufx_mount(OPTS);
	expect("/b", b, sizeof b);
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

static uint64_t stream_windows(void)
{
	struct vfs_lower lo;
	struct ufs_counters c;
	CHECK_EQ(vfs_pin("/", &lo), 0);
	unixfs_counters(lo.fs, &c);
	vfs_unpin(&lo);
	return c.ahead_stream;
}

/* A large file read in order in big pieces is read ahead (ahead.c,
 * "a large file read in order"): every byte right, and what is read
 * ahead never outlives a change - a write ahead of the reader, a
 * truncate under it, a jump elsewhere, another file read in order in
 * between, blocks still dirty in the cache. */
static void test_read_in_order(void)
{
	enum { SIZE = 3 * 1024 * 1024 + 1000, PIECE = 64 * 1024 };
	struct ufx u;
	ufx_fresh(&u, 65536, HD_POLLED, 17, OPTS);
	static uint8_t data[SIZE], other[SIZE], b[PIECE];
	pattern(data, sizeof data, 7);
	pattern(other, sizeof other, 8);
	put("/a", data, sizeof data);
	put("/b", other, sizeof other);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	struct vfile *f, *g;
	CHECK_EQ(vfs_open("/a", LIBFS_O_READ | LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_open("/b", LIBFS_O_READ, 0, &g), 0);
	uint64_t w0 = stream_windows();
	uint64_t off = 0;
	for (int i = 0; off < SIZE; i++) {
		if (i == 5) {
			/* Write ahead of the reader, where a window is in flight,
			 * and make it durable (no longer dirty in the cache). */
			pattern(data + off + 3 * PIECE, 4096, 70);
			CHECK_EQ(vfs_pwrite(f, data + off + 3 * PIECE, 4096, off + 3 * PIECE), 4096);
			CHECK_EQ(vfs_fsync(f), 0);
		}
		if (i == 9) {
			/* Another file read in order, twice, in between. */
			CHECK_EQ(vfs_pread(g, b, PIECE, 0), PIECE);
			CHECK(memcmp(b, other, PIECE) == 0);
			CHECK_EQ(vfs_pread(g, b, PIECE, PIECE), PIECE);
			CHECK(memcmp(b, other + PIECE, PIECE) == 0);
		}
		if (i == 14) {
			/* A jump back, then on in order from there. */
			off -= 5 * PIECE;
		}
		if (i == 20) {
			/* Dirty blocks ahead, never written back yet. */
			pattern(data + off + PIECE, 8192, 71);
			CHECK_EQ(vfs_pwrite(f, data + off + PIECE, 8192, off + PIECE), 8192);
		}
		long want = SIZE - off < PIECE ? (long)(SIZE - off) : PIECE;
		CHECK_EQ(vfs_pread(f, b, PIECE, off), want);
		CHECK(memcmp(b, data + off, (size_t)want) == 0);
		off += (uint64_t)want;
	}
	CHECK(stream_windows() - w0 >= 8);          /* it was read ahead */
	/* A truncate while read ahead: the cut part reads as zeros after
	 * the file grows again. */
	for (off = 0; off < 4 * PIECE; off += PIECE)
		CHECK_EQ(vfs_pread(f, b, PIECE, off), PIECE);
	CHECK_EQ(vfs_ftruncate(f, 6 * PIECE + 10), 0);
	CHECK_EQ(vfs_ftruncate(f, SIZE), 0);
	memset(data + 6 * PIECE + 10, 0, SIZE - (6 * PIECE + 10));
	for (off = 4 * PIECE; off < SIZE; off += PIECE) {
		long want = SIZE - off < PIECE ? (long)(SIZE - off) : PIECE;
		CHECK_EQ(vfs_pread(f, b, PIECE, off), want);
		CHECK(memcmp(b, data + off, (size_t)want) == 0);
	}
	CHECK_EQ(vfs_close(g), 0);
	CHECK_EQ(vfs_close(f), 0);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	expect("/a", data, sizeof data);
	expect("/b", other, sizeof other);
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

/* A damaged anchor (the superblock exonode) makes the mount fail with
 * EIO and a message naming unixfs, the block and what was wrong - not
 * EAGAIN, as if trying again could help (issue 17). */
static void test_damaged_anchor(void)
{
	for (int how = 0; how < 3; how++) {
		struct ufx u;
		ufx_new(&u, 65536, HD_SYNC, 21 + (uint64_t)how);
		uint64_t sb;
		CHECK_EQ(unixfs_mkfs(OPTS, &sb), 0);
		ufx_mount(OPTS);
		put("/f", "hello", 5);
		ufx_umount();
		ufx_reboot(&u);
		uint8_t *blk = hostdisk_sector(&u.f.hd, sb);
		if (how == 0)
			blk[100] ^= 0x40;                  /* a bit in the middle */
		else if (how == 1)
			memset(blk, 0, 512);               /* the first sector zeroed */
		else
			memset(blk, 0xff, 4096);           /* the whole block garbage */
		CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), -EIO);
		/* fsck says the same (it mounts read-only). */
		struct ufs_fsck_stats st;
		CHECK(unixfs_fsck(OPTS, say, NULL, &st) < 0);
		ufx_free(&u);
	}
}

/* ---- holes ------------------------------------------------------------------------------
 * Sparse files: a write far past the end leaves a hole (no sectors, reads
 * as zeros) instead of filling the gap, on a disk far smaller than the
 * file; holes at the start, in the middle and at the end; writes into a
 * hole (small, unaligned, and large enough to go straight to the disk);
 * truncation into a hole and into an extent, then growing; hundreds of
 * holes (position tables in the fnode, the single leaf and leaves of the
 * double node), filled in backwards; a format 2 image mounting, then
 * becoming format 3 at its first hole; all across remounts, with fsck. */

/* Read [off, off + n) of path and compare it with `want` (NULL: zeros). */
static void expect_at(const char *path, uint64_t off, const uint8_t *want, size_t n)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_READ, 0, &f), 0);
	uint8_t *buf = malloc(n);
	CHECK_EQ(vfs_pread(f, buf, n, off), (long)n);
	if (want != NULL) {
		for (size_t i = 0; i < n; i++)
			if (buf[i] != want[i]) {
				fprintf(stderr, "%s: byte %llu reads %u, not %u\n", path,
				        (unsigned long long)(off + i), buf[i], want[i]);
				exit(1);
			}
	} else {
		for (size_t i = 0; i < n; i++)
			if (buf[i] != 0) {
				fprintf(stderr, "%s: byte %llu of a hole reads %u\n", path,
				        (unsigned long long)(off + i), buf[i]);
				exit(1);
			}
	}
	free(buf);
	CHECK_EQ(vfs_close(f), 0);
}

static void pwrite_at(const char *path, uint64_t off, const void *data, size_t n)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_WRITE | LIBFS_O_CREAT, 0644, &f), 0);
	CHECK_EQ(vfs_pwrite(f, data, n, off), (long)n);
	CHECK_EQ(vfs_close(f), 0);
}

static void truncate_to(const char *path, uint64_t len)
{
	struct vfile *f;
	CHECK_EQ(vfs_open(path, LIBFS_O_WRITE, 0, &f), 0);
	CHECK_EQ(vfs_ftruncate(f, len), 0);
	CHECK_EQ(vfs_close(f), 0);
}

static struct ufs_fsck_stats fsck_clean(void)
{
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	CHECK_EQ(st.problems, 0);
	return st;
}

static uint64_t free_blocks(void)
{
	struct libfs_statfs sf;
	CHECK_EQ(vfs_statfs("/", &sf), 0);
	return sf.bfree;
}

#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

static void check_sparse(const uint8_t *a, const uint8_t *b, const uint8_t *c, const uint8_t *d)
{
	expect_at("/s", 0, NULL, 8192);                       /* hole at the start */
	expect_at("/s", 3 * MiB - 4096, NULL, 4096 + 100);
	expect_at("/s", 3 * MiB + 100, a, 5000);
	expect_at("/s", 3 * MiB + 5100, NULL, 20000);
	expect_at("/s", 256 * MiB - 10, NULL, 10);             /* holes in the middle */
	expect_at("/s", 256 * MiB, c, 4096);
	expect_at("/s", 256 * MiB + 4096, NULL, 4096);
	expect_at("/s", 700 * MiB + 123, d, 70000);
	expect_at("/s", 700 * MiB, NULL, 123);
	expect_at("/s", 800 * MiB, b, 1 * MiB);
	expect_at("/s", 1 * GiB - 10, NULL, 10);
	expect_at("/s", 1 * GiB, a, 9000);
	expect_at("/s", 2 * GiB, NULL, 65536);                 /* hole at the end */
	expect_at("/s", 3 * GiB - 4096, NULL, 4096);
}

static void test_holes(void)
{
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 17);                       /* 32 MiB */
	ufx_mkfs(&u, OPTS ",version=2");
	ufx_mount(OPTS);
	static uint8_t a[MiB], b[MiB], c[4096], d[70000];
	pattern(a, sizeof a, 41);
	pattern(b, sizeof b, 42);
	pattern(c, sizeof c, 43);
	pattern(d, sizeof d, 44);
	/* Format 2 holds dense files and mounts as it is. */
	put("/dense", a, 200000);
	ufx_umount();
	CHECK_EQ(fsck_clean().version, 2);
	ufx_mount(OPTS);
	expect("/dense", a, 200000);
	uint64_t free0 = free_blocks();

	/* Far past the end, on a disk of 32 MiB: a hole, not ENOSPC. */
	pwrite_at("/s", 3 * MiB + 100, a, 5000);
	pwrite_at("/s", 1 * GiB, a, 9000);
	truncate_to("/s", 3 * GiB);
	struct libfs_stat st;
	CHECK_EQ(vfs_stat("/s", &st), 0);
	CHECK_EQ(st.size, 3 * GiB);
	CHECK(st.blocks < 64);
	/* Into the holes: a block, a large write (straight to the disk), an
	 * unaligned one across blocks. */
	pwrite_at("/s", 256 * MiB, c, 4096);
	pwrite_at("/s", 800 * MiB, b, 1 * MiB);
	pwrite_at("/s", 700 * MiB + 123, d, 70000);
	check_sparse(a, b, c, d);
	CHECK_EQ(vfs_sync(), 0);
	CHECK(free0 - free_blocks() < 2 * MiB / 4096);          /* what was written, not 3 GiB */
	CHECK_EQ(vfs_stat("/s", &st), 0);
	CHECK(st.blocks >= (5000 + 9000 + 4096 + MiB + 70000) / 512 && st.blocks < 2 * MiB / 512 + 64);
	ufx_umount();
	struct ufs_fsck_stats fs1 = fsck_clean();
	CHECK_EQ(fs1.version, 3);                               /* its first hole made it 3 */
	CHECK_EQ(fs1.sparse, 1);
	CHECK(fs1.hole_bytes > 3 * GiB - 2 * MiB);
	ufx_mount(OPTS);
	check_sparse(a, b, c, d);
	expect("/dense", a, 200000);

	/* Truncate into an extent, then into a hole, then grow. */
	truncate_to("/s", 700 * MiB + 5000);
	truncate_to("/s", 900 * MiB);
	expect_at("/s", 700 * MiB + 123, d, 5000 - 123);
	expect_at("/s", 700 * MiB + 5000, NULL, 70000);
	expect_at("/s", 800 * MiB, NULL, 4096);
	truncate_to("/s", 600 * MiB);
	truncate_to("/s", 1 * GiB);
	expect_at("/s", 256 * MiB, c, 4096);
	expect_at("/s", 700 * MiB, NULL, 100000);
	ufx_umount();
	fsck_clean();
	ufx_mount(OPTS);
	expect_at("/s", 3 * MiB + 100, a, 5000);
	expect_at("/s", 256 * MiB, c, 4096);
	expect_at("/s", 700 * MiB, NULL, 100000);
	CHECK_EQ(vfs_stat("/s", &st), 0);
	CHECK_EQ(st.size, 1 * GiB);

	/* Hundreds of holes: one block every 64 KiB, synced now and then,
	 * then the holes between filled in backwards. */
	enum { N = 300 };
	for (int i = 0; i < N; i++) {
		pwrite_at("/m", (uint64_t)i * 65536, a + i * 4096 % (MiB - 4096), 4096);
		if (i % 50 == 49)
			CHECK_EQ(vfs_sync(), 0);
	}
	for (int i = N - 1; i >= 0; i--) {
		pwrite_at("/m", (uint64_t)i * 65536 + 32768, b + i * 4096 % (MiB - 4096), 4096);
		if (i % 64 == 0)
			CHECK_EQ(vfs_sync(), 0);
	}
	ufx_umount();
	struct ufs_fsck_stats fs2 = fsck_clean();
	CHECK_EQ(fs2.sparse, 2);
	ufx_mount(OPTS);
	for (int i = 0; i < N; i++) {
		expect_at("/m", (uint64_t)i * 65536, a + i * 4096 % (MiB - 4096), 4096);
		expect_at("/m", (uint64_t)i * 65536 + 4096, NULL, 28672);
		expect_at("/m", (uint64_t)i * 65536 + 32768, b + i * 4096 % (MiB - 4096), 4096);
	}
	CHECK_EQ(vfs_stat("/m", &st), 0);
	CHECK_EQ(st.size, (uint64_t)(N - 1) * 65536 + 32768 + 4096);
	CHECK(st.blocks >= 2 * N * 8 && st.blocks < 2 * N * 8 + 64);

	/* Everything goes back. */
	CHECK_EQ(vfs_unlink("/m"), 0);
	CHECK_EQ(vfs_unlink("/s"), 0);
	CHECK_EQ(vfs_sync(), 0);
	CHECK(free_blocks() + 2 >= free0);
	ufx_umount();
	fsck_clean();
	ufx_free(&u);
}

/* A power cut while holes are being filled: what was synced before stays
 * exactly, and fsck finds nothing but orphans. */
static void test_holes_cut(void)
{
	for (int seed = 1; seed <= 4; seed++) {
		struct ufx u;
		ufx_fresh(&u, 65536, HD_SYNC, 100 + seed, OPTS);
		static uint8_t a[65536], b[65536];
		pattern(a, sizeof a, 51 + seed);
		pattern(b, sizeof b, 61 + seed);
		pwrite_at("/h", 0, a, 4096);
		pwrite_at("/h", 64 * MiB, a + 4096, 8192);
		pwrite_at("/h", 16 * MiB, a + 12288, 4096);
		CHECK_EQ(vfs_sync(), 0);
		/* Unsynced: holes filled, the end moved, a truncate. */
		pwrite_at("/h", 8 * MiB, b, 65536);
		pwrite_at("/h", 32 * MiB + 100, b, 5000);
		if (seed % 2)
			truncate_to("/h", 20 * MiB);
		pwrite_at("/h", 128 * MiB, b, 4096);
		if (seed > 2)
			CHECK_EQ(vfs_sync(), 0);       /* and a cut after that sync's writes */
		vfs_abandon();
		ufx_crash(&u);
		struct ufs_fsck_stats st;
		int r = unixfs_fsck(OPTS, say, NULL, &st);
		CHECK(r >= 0);
		ufx_mount(OPTS);
		struct libfs_stat fst;
		CHECK_EQ(vfs_stat("/h", &fst), 0);
		CHECK(fst.size == 64 * MiB + 8192 || fst.size == 20 * MiB || fst.size == 128 * MiB + 4096);
		if (seed > 2) {
			CHECK_EQ(fst.size, 128 * MiB + 4096);
			expect_at("/h", 8 * MiB, b, 65536);
			expect_at("/h", 32 * MiB + 100, seed % 2 ? NULL : b, 5000);
			expect_at("/h", 64 * MiB, seed % 2 ? NULL : a + 4096, 8192);
			expect_at("/h", 128 * MiB, b, 4096);
		}
		expect_at("/h", 0, a, 4096);
		expect_at("/h", 4096, NULL, 4096);
		expect_at("/h", 16 * MiB, a + 12288, 4096);
		expect_at("/h", 16 * MiB - 4096, NULL, 4096);
		if (fst.size > 64 * MiB && !(seed % 2))
			expect_at("/h", 64 * MiB, a + 4096, 8192);
		ufx_umount();
		ufx_free(&u);
	}
}

/* Memory follows what is in use, not what was made (issue 11): files made
 * in 1,200 directories, a few at a time in each, with a sync now and then
 * (as a write-behind makes one), leave about the object cache's worth of
 * objects in memory - each directory's object holds all its names - not
 * one per directory made.  Every file is still there after a remount. */
static void test_many_dirs(void)
{
	struct ufx u;
	ufx_fresh(&u, 1 << 20, HD_SYNC, 12, OPTS);
	enum { DIRS = 1200, PER = 4 };
	char path[48];
	uint64_t most = 0;
	for (int d = 0; d < DIRS; d++) {
		snprintf(path, sizeof path, "/d%d", d);
		CHECK_EQ(vfs_mkdir(path, 0755), 0);
		for (int f = 0; f < PER; f++) {
			snprintf(path, sizeof path, "/d%d/f%d", d, f);
			put(path, path, strlen(path));
		}
		if (d % 100 == 99)
			CHECK_EQ(vfs_sync(), 0);
		struct vfs_lower lo;
		struct ufs_counters c;
		CHECK_EQ(vfs_pin("/", &lo), 0);
		unixfs_counters(lo.fs, &c);
		vfs_unpin(&lo);
		if (c.objects > most)
			most = c.objects;
	}
	/* The cache is 512 objects; between syncs, 100 directories and their
	 * files wait for their commit.  Before the fix: all 1,200 stayed. */
	CHECK(most <= 1000);
	ufx_umount();
	ufx_reboot(&u);
	ufx_mount(OPTS);
	for (int d = 0; d < DIRS; d += 7)
		for (int f = 0; f < PER; f++) {
			snprintf(path, sizeof path, "/d%d/f%d", d, f);
			expect(path, path, strlen(path));
		}
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	CHECK_EQ(st.files, (uint64_t)DIRS * PER);
	CHECK_EQ(st.dirs, (uint64_t)DIRS + 1);
	ufx_free(&u);
}

/* A sync that grows a directory already on disk: its dnode's new extent
 * becomes durable with the commit point, after the barrier (sync.c,
 * writeback_early), so the barrier's flush finds the new sectors'
 * allocation not durable yet and logs no `written` record for them (the
 * exodisk's remanence bookkeeping, docs/exodisk.md); before, step 2 wrote
 * the extent back first and every such sync cost that record.  The files
 * read back after a reboot, and after a power cut losing what was not
 * flushed. */
static void test_grow_unlogged(void)
{
	struct ufx u;
	ufx_fresh(&u, 65536, HD_SYNC, 13, OPTS);
	CHECK_EQ(vfs_mkdir("/g", 0755), 0);
	put("/g/first", "first", 5);
	CHECK_EQ(vfs_sync(), 0);
	struct ed_unit_info info;
	CHECK(edc_unit_info(&u.p.edc, 0, &info) >= 0);
	uint64_t before = info.unw_records;
	enum { N = 40, SZ = 3000 };
	uint8_t buf[SZ];
	char path[32];
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof path, "/g/f%d", i);
		pattern(buf, sizeof buf, (uint64_t)i);
		put(path, buf, sizeof buf);
	}
	put("/top", "top", 3);
	CHECK_EQ(vfs_sync(), 0);
	CHECK(edc_unit_info(&u.p.edc, 0, &info) >= 0);
	CHECK_EQ(info.unw_records, before);
	vfs_abandon();
	ufx_crash(&u);
	ufx_mount(OPTS);
	for (int i = 0; i < N; i++) {
		snprintf(path, sizeof path, "/g/f%d", i);
		pattern(buf, sizeof buf, (uint64_t)i);
		expect(path, buf, sizeof buf);
	}
	expect("/g/first", "first", 5);
	expect("/top", "top", 3);
	ufx_umount();
	struct ufs_fsck_stats st;
	CHECK_EQ(unixfs_fsck(OPTS, say, NULL, &st), 0);
	ufx_free(&u);
}

int main(int argc, char **argv)
{
	/* test_unixfs cut [N]: the power-cut workload alone, cut at N of its
	 * requests (default: every one). */
	if (argc > 1 && strcmp(argv[1], "cut") == 0) {
		test_fscut(argc > 2 ? atoi(argv[2]) : 1000000);
		return 0;
	}
	struct ufx u;
	ufx_new(&u, 65536, HD_SYNC, 1);
	ufx_mkfs(&u, OPTS);
	test_sizes(&u);
	ufx_free(&u);
	test_shrink_regrow();
	test_fragmented();
	test_enospc();
	test_cache_full();
	test_corruption();
	test_persistence();
	test_lock();
	test_two_owners();
	test_alloc_race();
	test_rename_cuts();
	test_deep_tree();
	test_dir_ahead();
	test_read_around();
	test_read_around_fragments();
	test_read_in_order();
	test_damaged_anchor();
	test_holes();
	test_holes_cut();
	test_many_dirs();
	test_grow_unlogged();
	printf("test_unixfs: ok\n");
	return 0;
}
