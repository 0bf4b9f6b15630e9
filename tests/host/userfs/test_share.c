/*
 * test_share.c - two processes using one flat file system of the kit
 * (kvfs, flatfs) at once, on the host (docs/sharing.md): two exodisk
 * clients, two mounts, one shared area (libos/share_host.c), each call
 * bracketed by enter/leave as the VFS does.
 *
 *   - no -EBUSY: the second mount succeeds while the first is mounted;
 *   - names: what one creates, renames or unlinks, the other sees at once;
 *   - flatfs: a write through one process's open file is read through the
 *     other's, size included; a file the other unlinked reads as gone;
 *   - death: a process that dies holding the lock with its table half
 *     changed in memory (a name it never wrote) leaves the lock DEAD; the
 *     other reads the table again from the disk, and the half change is
 *     not there, while every durable file is;
 *   - the files are there after a clean reboot.
 *
 * And, with one body for all three (lease_case, a row per type), unixfs,
 * lfs and fatfs, which take the lock as a lease (userfs/unixfs/share.c,
 * userfs/lfs/multi.c: lfs hands its log over; userfs/fatfs/share.c: a log
 * of the volume's blocks written): a process alone keeps the lock between
 * operations even with nothing to publish, and lets go once another has
 * attached; what one process changed the other sees once it takes the
 * lock, both ways; an open file the other renames is the same file, one it
 * removes reads as empty and a write to it goes nowhere (not onto the file
 * that takes its place); an open directory the other empties and removes
 * lists nothing; large files written by one and read by the other;
 * a third process's mount, change and unmount - and for lfs the cleaner
 * and a checkpoint - under an open file; a process that dies holding the
 * lease loses what it had not published, and nothing else; fsck clean
 * after a reboot.
 *
 * And the virtual volume's map (libos/vvol): a change a dying process
 * never committed is committed by the next process that finds it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include "libos/kit/kit.h"
#include "userfs/lfs/lfs_int.h"
#include "userfs/unixfs/ufs.h"
#include "userfs/fatfs/fat.h"
#include "libos/vvol/vvol.h"

extern uint32_t share_host_pid;
void share_host_kill(uint32_t pid);

static struct ufx u;

struct process {
	struct edc_host h;
	uint32_t pid;
	void *fs;
};

static void as(struct process *p)
{
	edc_set_default(&p->h.edc);
	share_host_pid = p->pid;
}

/* One open file of type t; its handle allocated as the VFS does. */
static void *open_file(const struct libfs_ops *t, void *fs, const char *name, int flags)
{
	void *f = t->file_size ? calloc(1, t->file_size) : NULL;
	CHECK_EQ(t->enter(fs, 1), 0);
	int e = t->open(fs, name, flags, 0644, &f);
	t->leave(fs);
	CHECK_EQ(e, 0);
	return f;
}

static void close_file(const struct libfs_ops *t, void *fs, void *f)
{
	CHECK_EQ(t->enter(fs, 1), 0);
	CHECK_EQ(t->close(fs, f), 0);
	t->leave(fs);
	if (t->file_size)
		free(f);
}

static void put(const struct libfs_ops *t, void *fs, const char *name, const char *data)
{
	void *f = open_file(t, fs, name, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC);
	CHECK_EQ(t->enter(fs, 1), 0);
	CHECK_EQ(t->write(fs, f, data, strlen(data), 0), (long)strlen(data));
	t->leave(fs);
	close_file(t, fs, f);
}

/* The file's contents ("" with -ENOENT's size -1 when absent). */
static long get(const struct libfs_ops *t, void *fs, const char *name, char *buf)
{
	struct libfs_stat st;
	CHECK_EQ(t->enter(fs, 0), 0);
	int e = t->stat(fs, name, &st);
	t->leave(fs);
	if (e == -ENOENT)
		return -1;
	CHECK_EQ(e, 0);
	void *f = open_file(t, fs, name, LIBFS_O_READ);
	CHECK_EQ(t->enter(fs, 0), 0);
	long n = t->read(fs, f, buf, 100, 0);
	t->leave(fs);
	close_file(t, fs, f);
	CHECK_EQ(n, (long)st.size);
	buf[n] = 0;
	return n;
}

static int call(const struct libfs_ops *t, void *fs, int (*fn)(void *, const char *, const char *),
                const char *a, const char *b)
{
	CHECK_EQ(t->enter(fs, 1), 0);
	int e = fn(fs, a, b);
	t->leave(fs);
	return e;
}

static int unlink2(void *fs, const char *a, const char *b)
{
	(void)b;
	return kit_flat_unlink(fs, a);
}

static void one_type(const struct libfs_ops *t)
{
	char buf[128];
	struct process a = { .pid = 11 }, b = { .pid = 22 };
	ufx_new(&u, 65536, HD_POLLED, 5);
	uint64_t sb;
	CHECK_EQ(t->mkfs("key=share", &sb), 0);
	edc_host_init(&a.h, &u.f.h, u.f.ed);
	edc_host_init(&b.h, &u.f.h, u.f.ed);
	as(&a);
	CHECK_EQ(t->mount("key=share", &a.fs), 0);
	as(&b);
	CHECK_EQ(t->mount("key=share", &b.fs), 0);      /* no -EBUSY */
	CHECK_EQ(share_sharers(&((struct kit_flat *)a.fs)->sh), 2);

	/* Names, both ways. */
	as(&a);
	put(t, a.fs, "x", "hello");
	as(&b);
	CHECK_EQ(get(t, b.fs, "x", buf), 5);
	CHECK(strcmp(buf, "hello") == 0);
	CHECK_EQ(call(t, b.fs, kit_flat_rename, "x", "y"), 0);
	as(&a);
	CHECK_EQ(get(t, a.fs, "x", buf), -1);
	CHECK_EQ(get(t, a.fs, "y", buf), 5);
	put(t, a.fs, "z", "zz");
	CHECK_EQ(call(t, a.fs, kit_flat_rename, "z", "y"), 0);   /* over an existing name */
	as(&b);
	CHECK_EQ(get(t, b.fs, "y", buf), 2);
	CHECK_EQ(get(t, b.fs, "z", buf), -1);

	if (!(t->features & LIBFS_F_ATOMIC)) {
		/* One file open in both: a write in one is read in the other. */
		as(&a);
		void *fa = open_file(t, a.fs, "y", LIBFS_O_READ | LIBFS_O_WRITE);
		as(&b);
		void *fb = open_file(t, b.fs, "y", LIBFS_O_READ | LIBFS_O_WRITE);
		CHECK_EQ(t->enter(b.fs, 1), 0);
		CHECK_EQ(t->write(b.fs, fb, "world", 5, 2), 5);
		t->leave(b.fs);                                  /* published: a shares it */
		as(&a);
		struct libfs_stat st;
		CHECK_EQ(t->enter(a.fs, 0), 0);
		CHECK_EQ(t->fstat(a.fs, fa, &st), 0);
		CHECK_EQ(st.size, 7);
		CHECK_EQ(t->read(a.fs, fa, buf, 100, 0), 7);
		t->leave(a.fs);
		CHECK(memcmp(buf, "zzworld", 7) == 0);
		/* b unlinks it: a's open file is gone, not another's. */
		as(&b);
		close_file(t, b.fs, fb);
		CHECK_EQ(call(t, b.fs, unlink2, "y", NULL), 0);
		put(t, b.fs, "w", "www");                        /* may reuse its exonode */
		as(&a);
		CHECK_EQ(t->enter(a.fs, 0), 0);
		CHECK(t->read(a.fs, fa, buf, 100, 0) < 0);
		t->leave(a.fs);
		close_file(t, a.fs, fa);
		CHECK_EQ(get(t, a.fs, "w", buf), 3);
	} else {
		put(t, b.fs, "w", "www");
	}

	/* a dies holding the lock, its table half changed in memory. */
	as(&a);
	struct kit_flat *fl = a.fs;
	CHECK_EQ(t->enter(a.fs, 1), 0);
	uint32_t i = 0;
	while (fl->v[i].name[0])
		i++;
	strcpy(fl->v[i].name, "ghost");
	fl->v[i].sector = fl->v[0].sector;
	fl->v[i].slot = fl->v[0].slot;
	share_host_kill(a.pid);
	edc_host_exit(&a.h);
	t->abandon(a.fs);
	as(&b);
	CHECK_EQ(get(t, b.fs, "ghost", buf), -1);        /* the disk's table */
	CHECK_EQ(get(t, b.fs, "w", buf), 3);
	CHECK(strcmp(buf, "www") == 0);
	put(t, b.fs, "v", "after");
	CHECK_EQ(t->unmount(b.fs), 0);
	edc_host_exit(&b.h);

	/* A clean reboot: what both made durable is there. */
	ufx_reboot(&u);
	void *fs;
	CHECK_EQ(t->mount("key=share", &fs), 0);
	CHECK_EQ(get(t, fs, "w", buf), 3);
	CHECK_EQ(get(t, fs, "v", buf), 5);
	CHECK_EQ(get(t, fs, "ghost", buf), -1);
	CHECK_EQ(t->unmount(fs), 0);
	ufx_free(&u);
	printf("test_share: %s: two processes, names, open files, a death: ok\n", t->name);
}

static void say(void *arg, const char *path, const char *what)
{
	(void)arg;
	printf("  fsck: %s: %s\n", path, what);
}

/* ---- unixfs and lfs: the lock taken as a lease --------------------------------------- */

/* The type under test, for the wrappers that call it through call(). */
static const struct libfs_ops *lt;

static int rename_l(void *fs, const char *a, const char *b)
{
	return lt->rename(fs, a, b);
}

static int unlink_l(void *fs, const char *a, const char *b)
{
	(void)b;
	return lt->unlink(fs, a);
}

static int mkdir_l(void *fs, const char *a, const char *b)
{
	(void)b;
	return lt->mkdir(fs, a, 0755);
}

static int rmdir_l(void *fs, const char *a, const char *b)
{
	(void)b;
	return lt->rmdir(fs, a);
}

/* The names open directory de lists. */
static int count_names(struct process *p, void *de)
{
	struct libfs_dirent ent;
	uint64_t cookie = 0;
	int n = 0;
	as(p);
	CHECK_EQ(lt->enter(p->fs, 0), 0);
	while (lt->readdir(p->fs, de, &cookie, &ent) == 1)
		n++;
	lt->leave(p->fs);
	return n;
}

/* A large file of byte k + i, written whole by p, read whole by q. */
static void big_round(struct process *p, struct process *q, int k)
{
	static char big[150000], back[150000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)(k + i % 251);
	as(p);
	void *fa = open_file(lt, p->fs, "d/big", LIBFS_O_WRITE | LIBFS_O_CREAT);
	CHECK_EQ(lt->enter(p->fs, 1), 0);
	CHECK_EQ(lt->write(p->fs, fa, big, sizeof big, 0), (long)sizeof big);
	lt->leave(p->fs);
	close_file(lt, p->fs, fa);
	as(q);
	void *fb = open_file(lt, q->fs, "d/big", LIBFS_O_READ);
	CHECK_EQ(lt->enter(q->fs, 0), 0);
	CHECK_EQ(lt->read(q->fs, fb, back, sizeof back, 0), (long)sizeof back);
	lt->leave(q->fs);
	close_file(lt, q->fs, fb);
	CHECK(memcmp(big, back, sizeof big) == 0);
}

/* A file system that keeps the lock as a lease, and what its design adds
 * to the case. */
struct lease_fs {
	const char *type, *opts;
	struct share *(*sh)(void *fs);          /* its shared area's lock        */
	const char *what;                       /* for the report                */
	/* While another process holds a file open: work that makes the
	 * others read everything again (lfs: the cleaner, a checkpoint). */
	void (*upheaval)(struct process *p);
};

static struct share *ufs_sh(void *fs)
{
	return &((struct ufs *)fs)->sh;
}

static struct share *lfs_sh(void *fs)
{
	return &((struct lfs *)fs)->sh;
}

static struct share *fat_sh(void *fs)
{
	return &((struct fatfs *)fs)->sh;
}

static void lfs_upheaval(struct process *p)
{
	struct lfs *fs = p->fs;
	as(p);
	CHECK_EQ(lt->enter(p->fs, 1), 0);
	uint64_t cp0 = fs->cpseq;
	CHECK(lfs_clean(fs, 8) >= 0);
	CHECK_EQ(lfs_checkpoint(fs, 0), 0);
	CHECK(fs->cpseq > cp0);
	lt->leave(p->fs);
}

static void lease_case(const struct lease_fs *L)
{
	const struct libfs_ops *t = lt = libfs_type(L->type);
	const char *o = L->opts;
	char buf[128];
	struct process a = { .pid = 11 }, b = { .pid = 22 }, c = { .pid = 33 };
	ufx_new(&u, 65536, HD_POLLED, 6);
	uint64_t sb;
	CHECK_EQ(t->mkfs(o, &sb), 0);
	edc_host_init(&a.h, &u.f.h, u.f.ed);
	edc_host_init(&b.h, &u.f.h, u.f.ed);
	edc_host_init(&c.h, &u.f.h, u.f.ed);
	as(&a);
	CHECK_EQ(t->mount(o, &a.fs), 0);
	/* Alone, a keeps the lock even after an operation that changed
	 * nothing (the lone fast path); with b attached it lets go. */
	struct share *sa = L->sh(a.fs);
	CHECK_EQ(get(t, a.fs, "nothing", buf), -1);
	CHECK(sa->held && (sa->a->k.lock & SHSEG_LOCK_PID) == a.pid);
	as(&b);
	CHECK_EQ(t->mount(o, &b.fs), 0);      /* no -EBUSY */
	as(&a);
	CHECK_EQ(get(t, a.fs, "nothing", buf), -1);
	CHECK(!sa->held);

	/* a works alone (keeping the lease), b then sees all of it. */
	as(&a);
	CHECK_EQ(call(t, a.fs, mkdir_l, "d", NULL), 0);
	put(t, a.fs, "d/x", "hello");
	put(t, a.fs, "d/k", "kept");
	as(&b);
	CHECK_EQ(get(t, b.fs, "d/x", buf), 5);
	CHECK(strcmp(buf, "hello") == 0);
	/* ... and the other way round. */
	put(t, b.fs, "d/fromb", "bbb");
	as(&a);
	CHECK_EQ(get(t, a.fs, "d/fromb", buf), 3);

	/* b has d/x open; a renames it within d: b's file is the same file. */
	as(&b);
	void *fb = open_file(t, b.fs, "d/x", LIBFS_O_READ);
	as(&a);
	CHECK_EQ(call(t, a.fs, rename_l, "d/x", "d/y"), 0);
	put(t, a.fs, "d/x", "another");
	as(&b);
	CHECK_EQ(t->enter(b.fs, 0), 0);
	CHECK_EQ(t->read(b.fs, fb, buf, 100, 0), 5);
	t->leave(b.fs);
	CHECK(memcmp(buf, "hello", 5) == 0);
	CHECK_EQ(get(t, b.fs, "d/x", buf), 7);
	CHECK_EQ(get(t, b.fs, "d/y", buf), 5);
	/* a removes it: b's open file reads as empty, and a write to it goes
	 * nowhere (it must not land on whatever takes the file's place). */
	as(&a);
	CHECK_EQ(call(t, a.fs, unlink_l, "d/y", NULL), 0);
	put(t, a.fs, "d/w", "www");
	as(&b);
	CHECK_EQ(t->enter(b.fs, 1), 0);
	CHECK_EQ(t->read(b.fs, fb, buf, 100, 0), 0);
	CHECK_EQ(t->write(b.fs, fb, "zz", 2, 0), 2);
	t->leave(b.fs);
	close_file(t, b.fs, fb);
	CHECK_EQ(get(t, b.fs, "d/y", buf), -1);
	CHECK_EQ(get(t, b.fs, "d/w", buf), 3);
	as(&a);
	put(t, a.fs, "d/reuse", "mine");     /* (lfs: takes the freed inode number) */
	as(&b);
	CHECK_EQ(get(t, b.fs, "d/reuse", buf), 4);
	CHECK(strcmp(buf, "mine") == 0);

	/* b lists a directory; a empties and removes it: b's open directory
	 * lists nothing (not another directory's names, nor stale ones). */
	as(&a);
	CHECK_EQ(call(t, a.fs, mkdir_l, "e", NULL), 0);
	put(t, a.fs, "e/f1", "1");
	as(&b);
	void *de = open_file(t, b.fs, "e", LIBFS_O_READ | LIBFS_O_DIR);
	CHECK_EQ(count_names(&b, de), 1);
	as(&a);
	CHECK_EQ(call(t, a.fs, unlink_l, "e/f1", NULL), 0);
	CHECK_EQ(call(t, a.fs, rmdir_l, "e", NULL), 0);
	CHECK_EQ(count_names(&b, de), 0);
	close_file(t, b.fs, de);

	/* Large files (lfs: across segments, with checkpoints along the way;
	 * unixfs: their own extents, the buffer cache), written by one, read
	 * by the other, rewritten in place. */
	for (int k = 0; k < 4; k++)
		big_round(k & 1 ? &b : &a, k & 1 ? &a : &b, k);

	/* b holds d/k open while a third process mounts, changes and
	 * unmounts, and (lfs) a cleans and checkpoints: b's open file still
	 * reads right. */
	as(&b);
	fb = open_file(t, b.fs, "d/k", LIBFS_O_READ);
	as(&c);
	CHECK_EQ(t->mount(o, &c.fs), 0);
	put(t, c.fs, "d/fromc", "cc");
	CHECK_EQ(t->unmount(c.fs), 0);
	edc_host_exit(&c.h);
	if (L->upheaval)
		L->upheaval(&a);
	as(&b);
	CHECK_EQ(t->enter(b.fs, 0), 0);
	CHECK_EQ(t->read(b.fs, fb, buf, 100, 0), 4);
	t->leave(b.fs);
	CHECK(memcmp(buf, "kept", 4) == 0);
	close_file(t, b.fs, fb);
	CHECK_EQ(get(t, b.fs, "d/fromc", buf), 2);
	big_round(&a, &b, 9);

	/* a changes more, keeping the lease, and dies: that change is lost,
	 * the rest is there. */
	as(&a);
	put(t, a.fs, "d/ghost", "boo");
	share_host_kill(a.pid);
	edc_host_exit(&a.h);
	t->abandon(a.fs);
	as(&b);
	CHECK_EQ(get(t, b.fs, "d/ghost", buf), -1);
	CHECK_EQ(get(t, b.fs, "d/k", buf), 4);
	CHECK_EQ(get(t, b.fs, "d/w", buf), 3);
	put(t, b.fs, "d/v", "after");
	CHECK_EQ(t->unmount(b.fs), 0);
	edc_host_exit(&b.h);

	ufx_reboot(&u);
	void *fs;
	CHECK_EQ(t->mount(o, &fs), 0);
	CHECK_EQ(get(t, fs, "d/v", buf), 5);
	CHECK_EQ(get(t, fs, "d/x", buf), 7);
	CHECK_EQ(get(t, fs, "d/fromb", buf), 3);
	CHECK_EQ(get(t, fs, "d/fromc", buf), 2);
	CHECK_EQ(get(t, fs, "d/ghost", buf), -1);
	CHECK_EQ(t->unmount(fs), 0);
	struct libfs_fsck ck = { .report = say };
	CHECK_EQ(t->fsck(o, &ck), 0);
	printf("  fsck: %s: %llu problems\n", ck.summary, (unsigned long long)ck.problems);
	CHECK_EQ(ck.problems, 0);
	ufx_free(&u);
	printf("test_share: %s: two processes, %s, open files, a death: ok\n", L->type, L->what);
}

static const struct lease_fs leases[] = {
	{ "unixfs", "key=share", ufs_sh, "the lease published as a sync", NULL },
	{ "lfs", "key=share,seg=64,cpkib=256", lfs_sh, "the log handed over", lfs_upheaval },
	{ "fatfs", "key=share", fat_sh, "the lease published as a sync and a log of blocks", NULL },
};

/* ---- the virtual volume's map: a change its maker never committed -------------------- */

/* One process's view of a volume (no mount lock: as lfs attaches). */
struct vview {
	struct kit k;
	struct vvol v;
};

static void vview_open(struct process *p, struct vview *w)
{
	as(p);
	CHECK_EQ(kit_open(&w->k, "vvt", "key=orphan"), 0);
	CHECK_EQ(kit_anchor_find(&w->k, "key=orphan"), 0);
	CHECK_EQ(vvol_open(&w->v, &w->k, 1, 1u << 20), 0);
}

/* Chunk 5 is mapped and holds what a wrote there. */
static void chunk_holds(struct process *p, struct vview *w, const uint8_t *want)
{
	static uint8_t got[4096];
	struct vvol_place pl;
	as(p);
	CHECK_EQ(vvol_chunk(&w->v, 5, 0, &pl), 1);
	CHECK_EQ(kit_io(&w->k, pl.leaf, pl.slot, 0, pl.phys, got, sizeof got), 0);
	CHECK(memcmp(got, want, sizeof got) == 0);
}

/* Process a maps a chunk, writes it (durably) and dies before committing
 * the map.  Process b, which found the volume's map with a's change in it,
 * reads the chunk (as lfs processes go on writing the log in a segment a
 * dead process mapped).  The exodisk keeps an uncommitted change only while
 * someone holds the map node: when b exits too it would be undone under
 * b's use - unless b, having found the node changed and not committed,
 * commits it with its own.  Then a third process, and a reboot, find the
 * chunk mapped with its bytes. */
static void vvol_orphan_case(void)
{
	struct process a = { .pid = 41 }, b = { .pid = 42 }, c = { .pid = 43 };
	ufx_new(&u, 65536, HD_POLLED, 9);
	struct vview w0, wa, wb, wc;
	CHECK_EQ(kit_mkfs(&w0.k, "vvt", "key=orphan", 480), 0);
	CHECK_EQ(vvol_make(&w0.v, &w0.k, 1, 64 * 128, 128, 1u << 20), 0);
	CHECK_EQ(vvol_sync(&w0.v, VV_ALL), 0);
	vvol_close(&w0.v);
	ufx_stop(&u);
	edc_host_init(&a.h, &u.f.h, u.f.ed);
	edc_host_init(&b.h, &u.f.h, u.f.ed);
	vview_open(&a, &wa);
	static uint8_t data[4096];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	struct vvol_place pl;
	CHECK_EQ(vvol_chunk(&wa.v, 5, 1, &pl), 1);
	CHECK_EQ(kit_io(&wa.k, pl.leaf, pl.slot, 1, pl.phys, data, sizeof data), 0);
	CHECK_EQ(kit_barrier(&wa.k), 0);
	vview_open(&b, &wb);
	chunk_holds(&b, &wb, data);
	CHECK_EQ(vvol_harden(&wb.v), 0);
	as(&a);
	vvol_close(&wa.v);
	edc_host_exit(&a.h);                 /* dies: its map change not written back */
	as(&b);
	vvol_close(&wb.v);
	edc_host_exit(&b.h);
	edc_host_init(&c.h, &u.f.h, u.f.ed);
	vview_open(&c, &wc);
	chunk_holds(&c, &wc, data);
	vvol_close(&wc.v);
	edc_host_exit(&c.h);
	fx_remount(&u.f);
	edc_host_init(&c.h, &u.f.h, u.f.ed);
	vview_open(&c, &wc);
	chunk_holds(&c, &wc, data);
	vvol_close(&wc.v);
	edc_host_exit(&c.h);
	fx_free(&u.f);
	printf("test_share: vvol: a map change left by a dead process is committed by the next\n");
}

int main(void)
{
	one_type(libfs_type("kvfs"));
	one_type(libfs_type("flatfs"));
	lfs_debug_sets = 1;               /* every lfs checkpoint checks the segment sets */
	for (size_t i = 0; i < sizeof leases / sizeof leases[0]; i++)
		lease_case(&leases[i]);
	vvol_orphan_case();
	printf("test_share: ok\n");
	return 0;
}
