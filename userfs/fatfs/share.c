/*
 * share.c - one fatfs volume used by many processes at once
 * (docs/sharing.md).
 *
 * Every process that mounts the volume attaches to one shared area named
 * from its key (kit_share), and the VFS takes its lock around every
 * operation (fat_share_enter, fat_share_leave), so operations of
 * different processes never overlap.  fatfs caches in the process's own
 * memory - the virtual volume's cache of sectors (FAT, directories,
 * data) and its map, directories' indexes, open files' chains - so, as
 * unixfs does, it keeps the lock as a lease, through the kit's helpers
 * (kit_lease_attach, share_op_* in libos/share.h):
 *
 *  - while a process holds changes nobody else has seen (dirty sectors,
 *    chains waiting to be freed), it keeps the lock between operations:
 *    working alone costs what it did before sharing;
 *  - it lets go when another process has waited SHARE_LEASE_NS, when it
 *    is about to block, and at unmount; before letting go it publishes:
 *    a sync (fat_sync: the volume's usual ordered write-back, every step
 *    durable, the map committed), then the list of the cache blocks it
 *    wrote goes into the shared area's log;
 *  - the next holder, told the volume changed (SHARE_CHANGED), forgets
 *    the blocks the log names since it last looked (all of its cache if
 *    the log has wrapped since), reads the map again; of the directories
 *    it knows, those whose clusters or FAT entries lie in those blocks
 *    are forgotten, or read again if it holds them (one another process
 *    removed becomes empty); its open files whose entry or chain lies
 *    there are found again: at
 *    their slot if the entry is still theirs (the same first cluster; an
 *    empty file: the same short name), else by first cluster in the same
 *    directory (a rename there), else the file is gone - an empty stand-in that
 *    reads nothing, takes writes nowhere and frees nothing;
 *  - a holder that died (SHARE_DEAD, seen by whoever takes the lock next,
 *    a process just mounting too) left the volume as a crash at that
 *    moment would (the sync's order keeps it one fsck.fat repairs, and
 *    the exodisk undoes its uncommitted map entries), but what it wrote is
 *    in nobody's log: every process forgets everything (died); the first
 *    writer makes the metadata checksums again and counts the free
 *    clusters again (settle), writes again the directory sectors the dead
 *    one was writing (its journal in the shared area: redo), and repairs
 *    what a death inside a sync leaves (repair).  A read-only process reads
 *    the journal's sectors in place of the disk's until a writer has come.
 *
 * The checksum area's "open" state belongs to the volume, not to one
 * process: a mount that joins others does not take it for a crash, and
 * only the last process out marks the volume closed cleanly.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "userfs/fatfs/fat.h"

#define LOG 2048u                 /* cache blocks the shared log remembers */
#define JMAX 256u                 /* directory sectors one sync can journal */

struct fat_sharea {
	struct share_area h;
	uint64_t seq;                 /* blocks ever logged                       */
	uint32_t writing;             /* a sync is between its FAT and its frees  */
	uint32_t unsettled;           /* a holder died: count and checksum again   */
	uint32_t orphans;             /* open files without a name, in any process */
	uint64_t log[LOG];            /* block seq % LOG: one that was written     */
	/* The directory sectors a sync is writing (fat_share_journal). */
	uint32_t jn, jpad;
	uint64_t jlba[JMAX];
	uint8_t jdata[JMAX][ED_SECTOR];
};

static struct fat_sharea *area(struct fatfs *fs)
{
	return (struct fat_sharea *)fs->sh.a;
}

/* Changes in this process's memory that nobody else has seen (a map node
 * too: one a dead process left uncommitted, taken over when loaded). */
static int dirty(struct fatfs *fs)
{
	return vvol_dirty_sectors(&fs->vol, VV_ALL) != 0 || vvol_map_changed(&fs->vol) ||
	       fs->pending.n != 0 || fs->cuts.n != 0 ||
	       fs->freed.n != 0 || fs->info_dirty || fs->ck_unsealed.n != 0;
}

/* The blocks this process wrote go into the shared log. */
static void log_written(struct fatfs *fs)
{
	struct fat_sharea *a = area(fs);
	const uint64_t *b;
	int over;
	uint32_t n = vvol_written(&fs->vol, &b, &over);
	if (over || n > LOG)
		a->seq += LOG + 1;        /* too many: everyone forgets everything */
	else
		for (uint32_t i = 0; i < n; i++)
			a->log[a->seq++ % LOG] = b[i];
	vvol_written_clear(&fs->vol);
	fs->sh_seq = a->seq;          /* ours: nothing to forget */
}

/* Before letting go: everything changed becomes durable, and the others
 * learn which blocks to read again. */
static int publish(void *arg)
{
	struct fatfs *fs = arg;
	if (fs->ro || fs->root == NULL || !dirty(fs)) {
		if (fs->vol.nwlog || fs->vol.wover)
			log_written(fs);      /* written out early (fat_relieve) */
		return 0;
	}
	share_touch(&fs->sh);
	int e = fat_sync(fs);
	log_written(fs);
	if (e < 0) {
		/* What could not be written must not stay only here while
		 * others change the same sectors: it is lost, as in a crash, and
		 * this process goes on read-only. */
		fprintf(stderr, "fatfs: changes lost: could not write them for other processes (%s); "
		        "read-only from now on\n", strerror(-e));
		fs->ro = 1;
		fs->vol.readonly = 1;
		vvol_reload(&fs->vol, 1);
		fs->sh_seq = 0;
		area(fs)->seq += LOG + 1;
	}
	return e;
}

static int repair(struct fatfs *fs);
static int redo(struct fatfs *fs);

/* The last holder died holding the lock.  The kernel announces a death
 * only once the dead process's exodisk operations have completed
 * (exodisk_exit), so what it wrote is on the disk now - but in nobody's
 * log: it had not published.  Every other process must forget all it
 * cached (the log "wraps" for them), or it would go on from a FAT that
 * shows the dead one's new chains free, and allocate them again. */
static void died(struct fatfs *fs)
{
	area(fs)->seq += LOG + 1;
	area(fs)->unsettled = 1;
	share_touch(&fs->sh);
}

/* After a death, the free count in FSInfo and the metadata checksums may
 * be as the dead process left them, half written: the first writer to
 * come counts the free clusters again and makes the checksums again (as a
 * mount after a crash does) - whoever saw the death, which may have been
 * a read-only process.  A read-only process cannot: it stops checking
 * sectors against the checksums until a writer has made them again.  The
 * writer also commits the map nodes the dead one changed and never
 * committed (vvol_adopt): chunks it was given and others now write into.
 * rebuilt: this mount made them already (fat_ck_open). */
static int settle(struct fatfs *fs, int rebuilt)
{
	struct fat_sharea *a = area(fs);
	if (!a->unsettled) {
		if (fs->sh_distrust) {
			fs->ck_trust = 1;
			fs->sh_distrust = 0;
		}
		return 0;
	}
	if (fs->ro) {
		if (fs->ck_trust) {
			fs->ck_trust = 0;
			fs->sh_distrust = 1;
		}
		return 0;
	}
	fs->nfree = -1;
	fs->info_dirty = fs->fsinfo != 0;
	int e = vvol_adopt(&fs->vol);
	if (e == 0 && !rebuilt) {
		fset_clear(&fs->ck_unsealed);
		e = fat_ck_rebuild(fs);
	}
	if (e == 0)
		a->unsettled = 0;
	return e;
}

int fat_share_attach(struct fatfs *fs, const char *opts)
{
	/* The kit's lease: the shared area and its lock, or, with no shared
	 * segment to be had, one process at a time (sh.a NULL). */
	int r = kit_lease_attach(&fs->kit, &fs->sh, sizeof(struct fat_sharea), opts, publish, fs);
	if (r < 0 || fs->sh.a == NULL)
		return r < 0 ? r : 0;
	/* Others have it mounted (and none died in the middle of a change,
	 * or a writer has settled since): the checksums' "open" is theirs,
	 * not a crash's. */
	fs->sh_joined = r != SHARE_DEAD && fs->sh.a->ready && !area(fs)->unsettled;
	if (r == SHARE_DEAD)
		died(fs);
	fs->sh_seq = area(fs)->seq;
	/* The map was opened before the lock was ours: read it again now
	 * that nobody is changing it. */
	int e = vvol_reload_map(&fs->vol);
	if (e == 0)
		e = vvol_track(&fs->vol);
	char v[8];
	if (libfs_opt(opts, "ro", v, sizeof v) == 1)
		fs->vol.readonly = 1;     /* (as the mount will make it) */
	if (e == 0 && area(fs)->jn)
		e = redo(fs);
	if (e < 0)
		fat_share_detach(fs);
	return e;
}

void fat_share_mounted(struct fatfs *fs)
{
	if (fs->sh.a == NULL)
		return;
	fs->sh.a->ready = 1;
	if (settle(fs, fs->st.ck_rebuilds > 0) < 0)
		fat_say("fatfs: could not count free space and make the checksums again after a "
		        "process died");
	if (area(fs)->writing && !fs->ro && repair(fs) < 0)
		fat_say("fatfs: could not finish what a process that died left half written");
	/* fsck's mount stays inside until its unmount: nothing else in this
	 * process takes the lock from it (share_lease_enter, share_idle). */
	if (!fs->sh_hold)
		fat_share_leave(fs);
}

void fat_share_detach(struct fatfs *fs)
{
	kit_unlock(&fs->kit);         /* (only if it fell back to the lock) */
	if (fs->sh.a != NULL && fs->sh.held && (fs->vol.nwlog || fs->vol.wover))
		log_written(fs);
	kit_lease_detach(&fs->sh);
}

/* What a dead writer left - its journal of directory sectors, a sync it
 * died in, the free count and checksums to make again - waits in the
 * shared area for the next writer.  If only read-only processes come
 * after it, none ever does, and the area goes when the last of them
 * leaves: the volume would keep a half rename (two names on one chain)
 * and lost clusters, as after a power cut.  So a read-only process that
 * leaves while such work waits does it, as a writer would on entering -
 * recovery, not a change of its own, as a journaling file system's
 * read-only mount replays its journal.  Not on a volume read-only because
 * of damage.  (Every read-only process leaving does it, not only the
 * last: which one is last cannot be known under the lock.) */
int fat_share_leaving(struct fatfs *fs)
{
	if (fs->sh.a == NULL || !fs->ro || !fs->ro_asked || fs->broken || fs->ck_state == CK_DAMAGED)
		return 0;
	struct fat_sharea *a = area(fs);
	if (!a->jn && !a->unsettled && !a->writing)
		return 0;
	fs->ro = 0;
	fs->vol.readonly = 0;
	fs->sh.change = 1;
	int e = redo(fs);
	if (e == 0)
		e = settle(fs, 0);
	if (e == 0 && a->writing)
		e = repair(fs);
	if (e == 0)
		e = fat_sync(fs);
	fs->ro = 1;
	fs->vol.readonly = 1;
	if (e < 0)
		fat_say("fatfs: could not finish what a process that died left half written (%s)",
		        strerror(-e));
	return e;
}

void fat_share_abandon(struct fatfs *fs)
{
	/* A host test's dying process: the lock is left as the kernel leaves
	 * a dead holder's. */
	kit_lease_abandon(&fs->sh);
}

uint32_t fat_share_users(struct fatfs *fs)
{
	return share_sharers(&fs->sh);
}

int fat_share_unrepaired(struct fatfs *fs)
{
	return fs->sh.a != NULL && fs->ro && area(fs)->writing;
}

void fat_share_writing(struct fatfs *fs, int on)
{
	if (fs->sh.a != NULL)
		area(fs)->writing = (uint32_t)on;
}

/* A sync's directory step writes several sectors, and a process killed
 * in the middle leaves some new and some old: a rename whose two entries
 * lie in different sectors then has both names on one chain, or neither.
 * So before the step, the sectors go into the shared area; a process
 * that dies leaves them there, and the next writer writes them again
 * (redo) before anything reads a directory.  Cleared once they are
 * durable.  More than JMAX: no journal (a death there is a power cut's
 * outcome: fsck's repair). */
static int jadd(void *arg, uint64_t lba, int cls)
{
	struct fatfs *fs = arg;
	struct fat_sharea *a = area(fs);
	(void)cls;
	if (fs->sh_jn >= JMAX)
		return -ENOSPC;
	int e = vvol_read(&fs->vol, lba, a->jdata[fs->sh_jn], 1, 0);
	if (e < 0)
		return e;
	a->jlba[fs->sh_jn++] = lba;
	return 0;
}

/* A rename (ops.c) makes its new name durable with a sync and removes the
 * old name only after it, so that a power cut leaves both names rather
 * than neither.  For the processes sharing the volume the rename must be
 * whole: the sync's journal shows the old name's slots free, and stays
 * after the sync (until the next one) - a process that dies anywhere
 * after the journal is made leaves the next writer the whole rename to
 * write.  The sectors the journal holds are the new name's, durable by
 * then, and the old name's, whose removal changes nothing else: no chain
 * is freed by it, so the journal never names a free cluster. */
void fat_share_unname(struct fatfs *fs, struct fdir *d, uint32_t s0, uint32_t s1)
{
	fs->sh_ud = fs->sh.a != NULL ? d : NULL;
	fs->sh_us0 = s0;
	fs->sh_us1 = s1;
}

static int unname(struct fatfs *fs)
{
	struct fat_sharea *a = area(fs);
	for (uint32_t s = fs->sh_us0; s <= fs->sh_us1; s++) {
		uint64_t lba;
		uint32_t off, j = 0;
		int e = fat_dir_slot(fs, fs->sh_ud, s, &lba, &off);
		if (e < 0)
			return e;
		while (j < fs->sh_jn && a->jlba[j] != lba)
			j++;
		if (j == fs->sh_jn && (e = jadd(fs, lba, CL_DIR)) < 0)
			return e;
		a->jdata[j][off] = DIR_FREE;
	}
	return 0;
}

void fat_share_journal(struct fatfs *fs, int on)
{
	if (fs->sh.a == NULL)
		return;
	struct fat_sharea *a = area(fs);
	if (!on && fs->sh_ud != NULL)
		return;                   /* a rename's old name is still to go */
	__atomic_store_n(&a->jn, 0, __ATOMIC_RELEASE);
	if (!on)
		return;
	fs->sh_jn = 0;
	if (vvol_each_dirty(&fs->vol, 1u << CL_DIR, jadd, fs) < 0 ||
	    (fs->sh_ud != NULL && unname(fs) < 0))
		return;                   /* none: as without sharing */
	__atomic_store_n(&a->jn, fs->sh_jn, __ATOMIC_RELEASE);
}

/* A dead process's journal: a writer writes it again (it stays until that
 * writer's next sync has made it durable; a writer that dies first leaves
 * it to the next).  A read-only process cannot: it reads the sectors as
 * the journal has them (vvol_overlay), at every entry while the journal
 * is there - the cache may have dropped them between two operations. */
static int redo(struct fatfs *fs)
{
	struct fat_sharea *a = area(fs);
	int e = 0;
	for (uint32_t i = 0; i < a->jn && i < JMAX && e == 0; i++)
		e = fs->vol.readonly ? vvol_overlay(&fs->vol, a->jlba[i], a->jdata[i])
		                     : vvol_write(&fs->vol, a->jlba[i], a->jdata[i], 1, CL_DIR);
	return e;
}

void fat_share_orphan(struct fatfs *fs, int on)
{
	if (fs->sh.a == NULL)
		return;
	if (on)
		area(fs)->orphans++;
	else if (area(fs)->orphans > 0)
		area(fs)->orphans--;
}

/* ---- catching up ------------------------------------------------------------------------ */

/* Is the short entry ent still open file f's? */
static int still_ours(const struct ffile *f, const uint8_t *ent)
{
	if (ent[0] == 0 || ent[0] == DIR_FREE || (ent[DIR_ATTR] & ATTR_LFN_MASK) == ATTR_LFN ||
	    (ent[DIR_ATTR] & (ATTR_DIR | ATTR_VOLID)))
		return 0;
	/* A file with clusters is its first cluster (a slot, even a short
	 * name, may be another file's now: renamed away, made again); an
	 * empty one has only its name to go by. */
	if (f->ch.first != 0)
		return dir_first(ent) == f->ch.first;
	return memcmp(ent, f->sfn, 11) == 0;
}

/* Another process removed f (or moved it to another directory): an empty
 * stand-in.  Its clusters are not ours to free any more. */
static void stand_in(struct ffile *f)
{
	fat_chain_free(&f->ch);
	memset(&f->ch, 0, sizeof f->ch);
	f->size = 0;
	f->unlinked = 1;
	f->gone = 1;
}

/* Open file f as its directory now says. */
static int find_again(struct fatfs *fs, struct ffile *f)
{
	struct fdir *d = f->dir;
	if (!d->root && d->first == 0xFFFFFFFFu) {
		stand_in(f);
		return 0;
	}
	uint8_t ent[DIRENT];
	int e = 0, found = 0;
	if (f->slot < d->nslots) {
		const uint8_t *p = fat_dir_entry(fs, d, f->slot, &e);
		if (p == NULL)
			return e;
		memcpy(ent, p, DIRENT);
		fat_dir_done(fs, d, f->slot, 0);
		found = still_ours(f, ent);
	}
	if (!found && f->ch.first != 0) {
		/* Renamed within its directory: the entry with its first
		 * cluster (the index is built from what the disk says now). */
		if ((e = fat_dir_index(fs, d)) < 0)
			return e;
		for (uint32_t k = 0; k < d->ne && !found; k++) {
			if (d->e[k].name == NULL || (d->e[k].attr & ATTR_DIR))
				continue;
			if ((e = fat_dir_read(fs, d, (int)k, ent)) < 0)
				return e;
			if (dir_first(ent) == f->ch.first) {
				f->slot = d->e[k].slot;
				found = 1;
			}
		}
	}
	if (!found) {
		stand_in(f);
		return 0;
	}
	memcpy(f->sfn, ent, 11);
	f->attr = ent[DIR_ATTR];
	f->size = le32(ent + DIR_FILESIZE);
	uint32_t first = dir_first(ent);
	uint32_t need = (uint32_t)(((uint64_t)f->size + fs->csize - 1) / fs->csize);
	fat_chain_free(&f->ch);
	memset(&f->ch, 0, sizeof f->ch);
	/* A chain longer than its file is damage, except where a writer that
	 * died left it for the next one to cut (repair): a read-only process
	 * cannot, and takes what the size covers. */
	int cut = fat_share_unrepaired(fs);
	e = fat_chain_load(fs, &f->ch, first, cut ? need : need + 1);
	if (e == 0 && f->ch.len > need)
		e = fat_damaged(fs, "a file's chain is longer than its size, starting at cluster", first);
	return e;
}

/* ---- what others wrote ------------------------------------------------------------------ */

/* The cache blocks others wrote since we last looked: a small open hash
 * set (at most LOG of them). */
struct bset {
	uint64_t v[2 * LOG];          /* block + 1; 0: empty */
	int all;                      /* everything may have changed            */
};

static void bset_add(struct bset *b, uint64_t blk)
{
	uint32_t h = (uint32_t)((blk * 0x9e3779b97f4a7c15ull) >> 40) % (2 * LOG);
	while (b->v[h] != 0 && b->v[h] != blk + 1)
		h = (h + 1) % (2 * LOG);
	b->v[h] = blk + 1;
}

static int bset_has(const struct bset *b, uint64_t blk)
{
	if (b->all)
		return 1;
	uint32_t h = (uint32_t)((blk * 0x9e3779b97f4a7c15ull) >> 40) % (2 * LOG);
	while (b->v[h] != 0) {
		if (b->v[h] == blk + 1)
			return 1;
		h = (h + 1) % (2 * LOG);
	}
	return 0;
}

/* Did others write any of sectors [lba, lba + n)? */
static int span_changed(const struct bset *b, uint64_t lba, uint64_t n)
{
	for (uint64_t k = lba / VV_BLOCK; n > 0 && k <= (lba + n - 1) / VV_BLOCK; k++)
		if (bset_has(b, k))
			return 1;
	return 0;
}

/* The byte of the active FAT holding cluster c's entry. */
static uint64_t fat_byte(const struct fatfs *fs, uint32_t c)
{
	uint64_t off = fs->type == 12 ? c + c / 2 : fs->type == 16 ? 2ull * c : 4ull * c;
	return ((uint64_t)fs->rsvd + (uint64_t)fs->active * fs->fatsz) * ED_SECTOR + off;
}

/* Did others write the clusters of a chain, or its FAT entries (a chain
 * that grew, was cut or freed changes the entry of a cluster it had)? */
static int chain_changed(const struct fatfs *fs, const struct fchain *ch, const struct bset *b)
{
	for (uint32_t i = 0; i < ch->nr; i++) {
		const struct frun *r = &ch->r[i];
		if (span_changed(b, fat_clus_lba(fs, r->clus), (uint64_t)r->n * fs->spc))
			return 1;
		uint64_t f0 = fat_byte(fs, r->clus) / ED_SECTOR,
		         f1 = (fat_byte(fs, r->clus + r->n - 1) + 3) / ED_SECTOR;
		if (span_changed(b, f0, f1 - f0 + 1))
			return 1;
	}
	return 0;
}

static int dir_changed(struct fatfs *fs, struct fdir *d, void *arg)
{
	const struct bset *b = arg;
	if (d->root && fs->type != 32)
		return span_changed(b, fs->rootsec, fs->rootnsec);
	return !d->ch.known || chain_changed(fs, &d->ch, b);
}

static int file_changed(struct fatfs *fs, struct ffile *f, const struct bset *b)
{
	uint64_t lba;
	uint32_t off;
	if (b->all || fat_dir_slot(fs, f->dir, f->slot, &lba, &off) < 0 || span_changed(b, lba, 1))
		return 1;
	/* An empty file's entry did not change: still empty.  Else its
	 * chain's FAT entries (the last one's too: growth) and clusters. */
	return chain_changed(fs, &f->ch, b);
}

static int dir_all(struct fatfs *fs, struct fdir *d, void *arg)
{
	(void)fs;
	(void)d;
	(void)arg;
	return 1;
}

/* A holder died inside a sync, between the FAT's new links and its frees
 * (sync.c): the volume is as a power cut there leaves it - chains nobody
 * names (new ones whose names were not written, or removed files' not yet
 * freed), chains longer than their files.  Nothing points at a free
 * cluster, so nothing is lost; but the space is, until repaired, and the
 * checker calls it a problem.  The next writer repairs it as fsck does,
 * then makes its repairs durable before anyone else looks.  A chain
 * without a name may also be an open file's that lost its name in a live
 * process (freed at its last close): while any exists, lost clusters
 * stay allocated - space kept, never a chain freed under its user.
 * Costs a walk of the volume's metadata, as the checksums made again do:
 * only after a process died writing. */
static int repair(struct fatfs *fs)
{
	struct fatfs_stats st;
	fs->keep_lost = area(fs)->orphans != 0;
	int e = fat_fsck_vol(fs, 1, NULL, NULL, &st);
	fs->keep_lost = 0;
	if (e == 0)
		e = fat_sync(fs);         /* (clears `writing`) */
	if (e == 0)
		e = fat_dirs_catch_up(fs, dir_all, NULL);
	if (e == 0 && st.repaired > 0)
		fprintf(stderr, "fatfs: a process died while writing the volume back: %llu problem%s "
		        "it left repaired\n", (unsigned long long)st.repaired, st.repaired == 1 ? "" : "s");
	return e;
}

static int reload(struct fatfs *fs, int dead)
{
	struct fat_sharea *a = area(fs);
	int e;
	static struct bset b;         /* (large: not on the stack) */
	memset(&b, 0, sizeof b);
	/* The volume: the blocks others wrote, or everything. */
	if (dead || a->seq - fs->sh_seq > LOG) {
		b.all = 1;
		e = vvol_reload(&fs->vol, 0);
	} else {
		e = 0;
		for (uint64_t i = fs->sh_seq; i < a->seq && e == 0; i++) {
			bset_add(&b, a->log[i % LOG]);
			e = vvol_forget(&fs->vol, a->log[i % LOG] * VV_BLOCK, VV_BLOCK);
		}
		if (e == 0)
			e = vvol_reload_map(&fs->vol);
	}
	fs->sh_seq = a->seq;
	if (e == 0 && a->jn)
		e = redo(fs);
	if (e < 0)
		return e;
	/* What the boot sector's neighbours say now: FSInfo's free count and
	 * hint (kept exact at every sync).  A holder that died may have left
	 * them behind (settle). */
	uint32_t hint = fs->hint;
	if ((e = fat_boot(fs)) < 0)
		return e;
	if (fs->fsinfo == 0)
		fs->hint = hint;          /* FAT12/16: ours is as good as any */
	if ((e = settle(fs, 0)) < 0)
		return e;
	/* Directories others changed: forgotten if nobody holds them, read
	 * again if someone does; then the open files whose entry or chain
	 * others changed. */
	if ((e = fat_dirs_catch_up(fs, dir_changed, &b)) < 0)
		return e;
	if (a->writing && !fs->ro && (e = repair(fs)) < 0)
		return e;
	for (struct ffile *f = fs->files; f && e == 0; f = f->next)
		if (!f->unlinked && file_changed(fs, f, &b))
			e = find_again(fs, f);
	return e;
}

int fat_share_enter(void *p, int change)
{
	struct fatfs *fs = p;
	/* Still ours since the last operation: nothing to catch up on -
	 * unless a read-only process must lay a dead writer's journal over
	 * its cache again. */
	int fast = fs->sh.a == NULL || !fs->sh.held || !fs->vol.readonly || !area(fs)->jn;
	if (share_op_again(&fs->sh, change, fast))
		return 0;
	int r = share_op_take(&fs->sh, change);
	if (r < 0)
		return r;
	if (r == SHARE_DEAD)
		died(fs);
	int e = 0;
	if (r == SHARE_CHANGED || r == SHARE_DEAD)
		e = reload(fs, r == SHARE_DEAD);
	else if (fs->vol.readonly && area(fs)->jn)
		e = redo(fs);
	if (e < 0) {
		fat_share_leave(fs);
		return e;
	}
	return 0;
}

void fat_share_leave(void *p)
{
	struct fatfs *fs = p;
	/* Alone: the lease is kept, whatever it holds; blocks written are
	 * logged when it goes (publish, detach). */
	if (share_op_end(&fs->sh))
		return;
	int d = dirty(fs);
	/* Nothing unpublished, but written (a sync the caller asked for, a
	 * close of a file opened O_SYNC): the lock may go now without a
	 * publish, so the others must learn here which blocks to read again.
	 * (Without this they kept stale FAT sectors, saw clusters in use as
	 * free and gave them out again: a cross-link.) */
	if (!d && fs->sh.held && (fs->vol.nwlog || fs->vol.wover))
		log_written(fs);
	share_lease_leave(&fs->sh, d);
}
