/*
 * multi.c - one lfs used by many processes at once (docs/sharing.md).
 *
 * Every process that mounts an lfs attaches to one shared area named from
 * its key (kit_share, libos/share.h) and takes its lock around every
 * operation (the VFS calls lfs_multi_enter and lfs_multi_leave).  lfs keeps
 * changes in memory until a commit, so the lock is a lease, as for unixfs:
 * a process keeps it between operations while it holds changes nobody else
 * has seen, and before letting go it publishes them - a durable commit.
 *
 * The log is one chain of partial segments, whoever writes them: each
 * header names the one before it (seq, prev) and the segment after the
 * current one.  So handing the log over is handing over its head: after
 * its last commit a holder leaves in the shared area where the log is
 * (segment, sector, seq, prev, the next segment) and which checkpoint is
 * the newest.  The next holder, told the file system changed, catches up:
 *
 *  - no checkpoint since it last held the lock: it applies the commit
 *    records the others appended (inode map and segment usage entries) -
 *    what a mount's roll-forward does with them - from a copy each holder
 *    also leaves in the shared area (the journal: since the last
 *    checkpoint, as far as it has room), or else by rolling forward
 *    through the log from its own head; the log then goes on from the
 *    head the last holder left, so the current segment's tail is its own;
 *  - a checkpoint since (its tables moved, segments may have gone back to
 *    the exodisk), or the last holder died holding the lock: it reads
 *    everything again as a mount does - the newest checkpoint, then
 *    roll-forward to the last commit on the disk.  After a death that is
 *    exactly a mount after a crash: what the dead process committed is
 *    there, what it had not is lost.
 *
 * Either way it then compares each inode it has in memory with the map:
 * one whose entry moved was changed by another process and is forgotten -
 * or, if it is open here, read again in place; an open file another
 * process removed becomes a stand-in (struct lnode.gone: empty, out of the
 * hash, never written), as unixfs does.  The read cache and the virtual
 * volume's map (others may have mapped segments) are read again.
 *
 * A mount takes the lock for the VFS and lets go when it returns
 * (lfs_multi_mounted); programs that mount lfs directly (lfsclean,
 * lfs-share, fsck) hold it until they unmount.  Without a shared segment
 * to be had, a mount falls back to the one-process mount lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

/* The shared area: the lock, then the log's head as the last holder left
 * it (after a commit), then the journal: a copy of every commit record
 * written since checkpoint jcp, each after a struct jent saying how long
 * it is and which segment it went to (a segment the log entered may hold
 * nothing else, and must not be reused before the next checkpoint either).
 * Records past jdone were not handed over (a turn in progress, or one
 * whose commit failed): the next writer cuts them off.
 *
 * The journal is only of use if it holds EVERY commit since jcp: a mount
 * or a full catch-up that finds jcp current applies it instead of rolling
 * forward, and starts the log where the last holder left it, so a commit
 * missing from it would be lost (the records after it go on from a state
 * that never had it: a free inode list naming an inode in use, names of
 * files whose inodes are free).  So only a moment when the log is known to
 * hold no commit since the checkpoint starts it, empty: a checkpoint
 * (lfs_multi_checkpointed), or a load that rolled forward through none.
 * A death, a failed publish or an unmount with changes not written may
 * have left commits in the log that the journal does not hold: they set
 * jcp to 0, and it stays unused until it is started again. */
#define JOURNAL (256u * 1024)
struct lfs_multi_area {
	struct share_area h;
	uint64_t cpseq;           /* the newest durable checkpoint                  */
	uint64_t seq, prev;       /* the next PS's sequence number, the last's MAC  */
	uint64_t seg, next;       /* the log's segment, and the one after it        */
	uint64_t ps;              /* where in seg the next PS goes                  */
	uint64_t since_cp;        /* log bytes since that checkpoint                */
	uint64_t jcp;             /* the journal's checkpoint (0: not to be used)   */
	uint64_t jepoch;          /* bumped each time it starts again               */
	uint64_t jlen, jdone;     /* bytes in it; bytes handed over                 */
	uint32_t jfull, pad;      /* it ran out of room: incomplete                 */
	uint64_t deaths;          /* holders that died (see catch_up)               */
	uint8_t j[JOURNAL];
};
struct jent {
	uint64_t seg;             /* where the record is in the log                 */
	uint64_t len;             /* its bytes, whole sectors                       */
};

static struct lfs_multi_area *area(struct lfs *fs)
{
	return (struct lfs_multi_area *)fs->sh.a;
}

/* Changes in this process's memory that are not yet durable in the log.
 * (PSs written since the last commit count, except a checkpoint's own:
 * its record says where the log goes on, and since_cp is 0 right after -
 * unless it is a round's checkpoint still on its way, whose COMMIT PS may
 * not be written yet: ckpt.c, lfs_cp_settle.) */
static int dirty(const struct lfs *fs)
{
	return fs->dirty != NULL || fs->nimchg != 0 || fs->nschg != 0 || fs->nent != 0 ||
	       (fs->group != 0 && fs->since_cp != 0) || fs->undurable || fs->v.dirty.n != 0 ||
	       fs->cp_pending || fs->dfr;
}

/* Where the log is, for the next holder. */
static void note_head(struct lfs *fs)
{
	struct lfs_multi_area *a = area(fs);
	a->cpseq = fs->cpseq;
	a->seq = fs->seq;
	a->prev = fs->prev;
	a->seg = fs->seg;
	a->next = fs->next;
	a->ps = fs->ps;
	a->since_cp = fs->since_cp;
	if (a->jcp == fs->cpseq)
		a->jdone = a->jlen;       /* our records are handed over with it */
	fs->sh_jepoch = a->jepoch;
	fs->sh_jpos = a->jdone;
}

/* The log holds no commit since checkpoint fs->cpseq (we hold the lock):
 * the journal starts again from here, empty, complete. */
static void journal_start(struct lfs *fs)
{
	struct lfs_multi_area *a = area(fs);
	a->jcp = fs->cpseq;
	a->jepoch++;
	a->jlen = a->jdone = 0;
	a->jfull = 0;
}

void lfs_multi_checkpointed(struct lfs *fs)
{
	if (fs->sh.a != NULL && fs->sh.held)
		journal_start(fs);
}

void lfs_multi_delta(struct lfs *fs, const uint8_t *rec, uint32_t nsect)
{
	struct lfs_multi_area *a = area(fs);
	/* Not in use (see the area): never started again here, as it would
	 * then lack the commits made before this one. */
	if (!fs->sh.held || a->jcp != fs->cpseq)
		return;
	struct jent je = { fs->seg, (uint64_t)nsect * LFS_SECT };
	if (a->jfull || a->jlen + sizeof je + je.len > JOURNAL) {
		a->jfull = 1;                 /* the others roll forward instead */
		return;
	}
	memcpy(a->j + a->jlen, &je, sizeof je);
	memcpy(a->j + a->jlen + sizeof je, rec, je.len);
	a->jlen += sizeof je + je.len;
}

/* Records past what the last holder handed over were never committed
 * for the others (it died, or its commit failed): they go. */
static void took_lock(struct lfs *fs)
{
	struct lfs_multi_area *a = area(fs);
	a->jlen = a->jdone;
}

static int publish(void *arg)
{
	struct lfs *fs = arg;
	lfs_cp_settle(fs, 1);             /* (what we note is durable) */
	if (fs->rdonly || !dirty(fs)) {
		if (!fs->sh_stale)
			note_head(fs);     /* (kept alone, it was not noted) */
		return 0;
	}
	share_touch(&fs->sh);
	int e = lfs_commit(fs);
	if (e < 0) {
		/* What could not be written must not stay only here: the next
		 * holder appends where we stopped.  It is lost, as in a crash. */
		fprintf(stderr, "lfs: changes lost: could not write them for other processes (%s)\n",
		        strerror(-e));
		fs->sh_stale = 1;
		return e;
	}
	note_head(fs);
	return 0;
}

int lfs_multi_attach(struct lfs *fs, const char *opts)
{
	int e = kit_open(&fs->k, "lfs", opts);
	if (e == 0)
		e = kit_anchor_find(&fs->k, opts);
	if (e < 0)
		return e;
	e = kit_lease_attach(&fs->k, &fs->sh, sizeof(struct lfs_multi_area), opts, publish, fs);
	if (e < 0 || fs->sh.a == NULL)
		return e < 0 ? e : 0;     /* (no shared segment: the mount lock) */
	took_lock(fs);
	if (e == SHARE_DEAD) {
		area(fs)->jcp = 0;        /* the dead one's commits may not be there */
		area(fs)->deaths++;
	}
	fs->sh_deaths = area(fs)->deaths;
	/* The mount reads everything from the disk, which is all a death
	 * (SHARE_DEAD) asks of it. */
	return 0;
}

void lfs_multi_mounted(struct lfs *fs)
{
	/* The mount rolled forward through no commit: the journal may start
	 * (it is not in use after a death, or in a new area). */
	if (fs->sh.a != NULL && fs->sh.held && area(fs)->jcp != fs->cpseq &&
	    fs->st.roll_groups == 0)
		journal_start(fs);
	lfs_multi_leave(fs);
}

void lfs_multi_detach(struct lfs *fs, int alive)
{
	if (fs->sh.a == NULL)
		return;
	if (!alive) {
		kit_lease_abandon(&fs->sh);   /* a host test's dying process */
		return;
	}
	if (fs->sh.held) {
		if (!fs->rdonly)
			share_touch(&fs->sh);
		if (!dirty(fs) && !fs->sh_stale) {
			note_head(fs);
		} else {
			/* The next holder reads it all; commits of ours the
			 * journal holds past what was handed over are cut. */
			area(fs)->cpseq = 0;
			area(fs)->jcp = 0;
		}
	}
	kit_lease_detach(&fs->sh);
}

/* ---- catching up -------------------------------------------------------------------------- */

struct seen {
	struct lnode *n;
	uint64_t loc;
	uint32_t gen;
	int lost;                 /* it held changes that were never written        */
};

/* The inodes in memory and their map entries now; the ones nobody holds
 * are simply dropped when `held_only`. */
static int snapshot(struct lfs *fs, int held_only, struct seen **out, uint32_t *count)
{
	uint32_t n = 0, cap = 64;
	struct seen *v = malloc(cap * sizeof *v);
	if (v == NULL)
		return -ENOMEM;
	for (uint32_t h = 0; h < fs->nih; h++)
		for (struct lnode *x = fs->ih[h], *nx; x != NULL; x = nx) {
			nx = x->hnext;
			if (held_only && x->nref == 0 && !x->indirty) {
				lfs_node_drop(fs, x);
				continue;
			}
			int e;
			struct lfs_imapent *m = lfs_imap(fs, x->ino, &e);
			if (n == cap) {
				struct seen *w = realloc(v, 2 * cap * sizeof *v);
				if (w == NULL) {
					free(v);
					return -ENOMEM;
				}
				v = w;
				cap *= 2;
			}
			v[n].n = x;
			v[n].loc = m ? m->loc : 0;
			v[n].gen = m ? m->gen : 0;
			v[n].lost = x->indirty;
			n++;
		}
	*out = v;
	*count = n;
	return 0;
}

static void unhash(struct lfs *fs, struct lnode *n)
{
	for (uint32_t h = 0; h < fs->nih; h++)
		for (struct lnode **pp = &fs->ih[h]; *pp != NULL; pp = &(*pp)->hnext)
			if (*pp == n) {
				*pp = n->hnext;
				n->hnext = NULL;
				return;
			}
}

/* An open file another process removed (or whose number it reused): an
 * empty stand-in that reads nothing and is never written. */
static void stand_in(struct lfs *fs, struct lnode *n)
{
	unhash(fs, n);
	lfs_maps_free(n);
	lfs_dir_free(n);
	uint16_t type = n->d.type;
	memset(&n->d, 0, sizeof n->d);
	n->d.type = type;
	n->gone = 1;
	n->freed = 0;
	n->dirty = n->mapdirty = 0;
}

/* Read an open inode again in place: another process changed it. */
static int reread(struct lfs *fs, struct lnode *n, const struct lfs_imapent *m)
{
	uint8_t sec[LFS_SECT];
	TRY(lfs_read(fs, LFS_LOC_LBA(m->loc), 1, sec));
	struct lfs_dinode d;
	memcpy(&d, sec + LFS_LOC_SLOT(m->loc) * LFS_ISIZE, sizeof d);
	if (!lfs_inode_ok(&d, n->ino) || d.gen != m->gen || d.type != n->d.type) {
		lfs_damaged(fs, "inode fails its check", n->ino);
		return -EIO;
	}
	lfs_maps_free(n);
	lfs_dir_free(n);
	n->d = d;
	return 0;
}

/* After the map changed: forget or read again what others changed. */
static int revalidate(struct lfs *fs, struct seen *v, uint32_t count)
{
	int err = 0;
	for (uint32_t i = 0; i < count; i++) {
		struct lnode *n = v[i].n;
		int e;
		struct lfs_imapent *m = lfs_imap(fs, n->ino, &e);
		if (m != NULL && m->loc == v[i].loc && m->gen == v[i].gen && m->loc != 0 && !v[i].lost)
			continue;                  /* as it was */
		if (m == NULL && e != -ENOENT) {
			err = e;
			continue;
		}
		if (n->nref == 0 && !n->indirty) {
			lfs_node_drop(fs, n);      /* a cache: read again when wanted */
			continue;
		}
		if (m != NULL && m->loc != 0 && m->gen == n->gen) {
			if (v[i].lost)
				n->freed = 0;      /* its unlink, if any, was lost too */
			e = reread(fs, n, m);
			if (e < 0)
				err = e;
		} else {
			stand_in(fs, n);
		}
	}
	return err;
}

/* Changes we could not publish are gone (they are not on the disk). */
static void forget_changes(struct lfs *fs)
{
	if (fs->dirty != NULL)
		fprintf(stderr, "lfs: changes not written are lost: reading the file system again\n");
	for (struct lnode *n = fs->dirty, *nx; n != NULL; n = nx) {
		nx = n->dnext;
		n->dirty = n->mapdirty = 0;
		n->indirty = 0;
		n->dnext = NULL;
	}
	fs->dirty = NULL;
}

/* Forget what was read, and what the segment buffers hold: a segment we
 * wrote may have been cleaned and written again by another process since
 * (lfs_log_start gives the log its buffer again). */
static void drop_cache(struct lfs *fs)
{
	for (int i = 0; i < LFS_RC_N; i++)     /* (waiting for reads ahead) */
		if (fs->rc[i].chunk != 0)
			lfs_rc_drop(fs, (fs->rc[i].chunk - 1) * LFS_RC_SECT / fs->sb.seg_sect);
	fs->nrecent = 0;
	fs->buf[0].seg = fs->buf[1].seg = 0;
}

static void drop_cache_only(struct lfs *fs)
{
	for (int i = 0; i < LFS_RC_N; i++)
		if (fs->rc[i].chunk != 0)
			lfs_rc_drop(fs, (fs->rc[i].chunk - 1) * LFS_RC_SECT / fs->sb.seg_sect);
}

/* The virtual volume's map again: others may have mapped segments, or
 * given some back. */
static int reopen_volume(struct lfs *fs)
{
	vvol_close(&fs->v);
	int e = vvol_open(&fs->v, &fs->k, LFS_ENT_VOL, 0);
	fs->v.readonly = fs->rdonly;
	return e;
}

/* Everything again from the disk, as a mount: the newest checkpoint, then
 * roll-forward.  The inodes held open stay (revalidate looks at them). */
static int reload(struct lfs *fs)
{
	lfs_log_wait(fs);
	forget_changes(fs);
	struct lnode **ih = fs->ih;
	uint32_t nih = fs->nih;
	fs->ih = NULL;
	lfs_imap_free(fs);
	lfs_sut_free(fs);
	fs->free.n = fs->pool.n = 0;
	fs->nsutload = 0;
	fs->nimchg = fs->nschg = fs->ncpl = fs->nsutchg = 0;
	fs->cpl_all = 0;
	fs->group = fs->unflushed = fs->undurable = 0;
	fs->pend = 0;
	fs->nent = 0;
	fs->err = 0;
	fs->since_cp = 0;
	fs->av_valid = 0;
	drop_cache(fs);
	int e = lfs_sut_init(fs);
	if (e == 0)
		e = reopen_volume(fs);
	if (e == 0)
		e = lfs_load(fs);
	free(fs->ih);
	fs->ih = ih;
	fs->nih = nih;
	return e;
}

/* The segments we were writing are no longer the log's unless it goes on
 * in them (lfs_log_start marks those again). */
static void leave_head(struct lfs *fs)
{
	if (fs->seg == 0)
		return;                   /* (a mount: no log yet) */
	lfs_seg(fs, fs->seg)->reserved = 0;
	lfs_seg_mark(fs, fs->seg);
	lfs_seg_changed(fs, fs->seg);
	if (fs->next != 0) {
		lfs_seg(fs, fs->next)->reserved = 0;
		lfs_seg_mark(fs, fs->next);
		lfs_seg_changed(fs, fs->next);
	}
}

/* Does our copy of the volume's map have segment s?  (The usage table's
 * MAPPED flag is not enough: a segment given back at an unmount keeps it
 * until it is written again.) */
static int mapped_here(struct lfs *fs, uint64_t s)
{
	struct vvol_place pl;
	return vvol_chunk(&fs->v, s, 0, &pl) == 1;
}

/* Apply the others' commit records from the journal, and go on where the
 * last holder left the log.  1 if done; 0 if the records are not fit to
 * use (then roll forward instead), or an error. */
static int from_journal(struct lfs *fs)
{
	struct lfs_multi_area *a = area(fs);
	uint64_t from = fs->sh_jpos, to = a->jdone;
	if (a->jcp != fs->cpseq || fs->sh_jepoch != a->jepoch || a->jfull || from > to ||
	    to > JOURNAL)
		return 0;
	/* Each record whole inside the journal (a key holder wrote it: it
	 * could be wrong, not harmful), and whether others mapped segments. */
	int remap = 0;
	for (uint64_t off = from; off < to;) {
		struct jent je;
		struct lfs_delta d;
		if (to - off < sizeof je + sizeof d)
			return 0;
		memcpy(&je, a->j + off, sizeof je);
		memcpy(&d, a->j + off + sizeof je, sizeof d);
		uint64_t bytes = sizeof d + ((uint64_t)d.nimap + d.nsut) * sizeof(struct lfs_dimap);
		if (d.magic != LFS_DELTA_MAGIC || je.len % LFS_SECT || bytes > je.len ||
		    je.len > to - off - sizeof je || je.seg == 0 || je.seg >= fs->sb.nsegs)
			return 0;
		const struct lfs_dsut *ds = (const void *)(a->j + off + sizeof je + sizeof d +
		                                           (size_t)d.nimap * sizeof(struct lfs_dimap));
		for (uint32_t i = 0; i < d.nsut; i++) {
			if (ds[i].seg == 0 || ds[i].seg >= fs->sb.nsegs)
				return 0;
			remap |= (ds[i].e.flags & LFS_SEG_MAPPED) && !mapped_here(fs, ds[i].seg);
		}
		off += sizeof je + je.len;
	}
	/* The segment the log is in and the next one may have been mapped
	 * after the last record was written. */
	if (a->seg == 0 || a->seg >= fs->sb.nsegs || a->next >= fs->sb.nsegs)
		return 0;
	remap |= !mapped_here(fs, a->seg) || (a->next != 0 && !mapped_here(fs, a->next));
	TRY(lfs_log_wait(fs));
	leave_head(fs);
	drop_cache(fs);
	if (remap)
		TRY(reopen_volume(fs));   /* others mapped segments */
	/* The records, in order; the segments the others wrote are kept from
	 * reuse until the next checkpoint, as roll-forward keeps those it
	 * passes. */
	for (uint64_t off = from; off < to;) {
		struct jent je;
		memcpy(&je, a->j + off, sizeof je);
		const uint8_t *rec = a->j + off + sizeof je;
		TRY(lfs_apply_deltas(fs, rec, (size_t)je.len));
		const struct lfs_delta *d = (const void *)rec;
		const struct lfs_dsut *ds = (const void *)((const uint8_t *)(d + 1) +
		                                           (size_t)d->nimap * sizeof(struct lfs_dimap));
		for (uint32_t i = 0; i < d->nsut; i++) {
			lfs_seg(fs, ds[i].seg)->tag = (uint32_t)fs->cpseq;
			lfs_seg_changed(fs, ds[i].seg);
		}
		struct lfs_seg *g = lfs_seg(fs, je.seg);
		g->tag = (uint32_t)fs->cpseq;
		g->cpzero = 0;
		lfs_seg_mark(fs, je.seg);
		lfs_seg_changed(fs, je.seg);
		off += sizeof je + je.len;
	}
	fs->seq = a->seq;
	fs->prev = a->prev;
	TRY(lfs_log_start(fs, a->seg, (uint32_t)a->ps, a->next));
	return 1;
}

int lfs_multi_load(struct lfs *fs)
{
	struct lfs_multi_area *a = area(fs);
	if (!fs->sh.held || a->cpseq != fs->cpseq || a->jcp != fs->cpseq || a->seq == 0)
		return 0;
	/* The journal holds every commit since this checkpoint: it starts
	 * again with the first record after one, and anything that could
	 * leave it short (a death, a failed publish) set jcp to 0. */
	fs->sh_jepoch = a->jepoch;
	fs->sh_jpos = 0;
	int e = from_journal(fs);
	if (e > 0)
		fs->since_cp = a->since_cp;
	return e;
}

/* Roll forward from our own head through what others appended. */
static int roll_on(struct lfs *fs)
{
	TRY(lfs_log_wait(fs));
	leave_head(fs);
	drop_cache(fs);
	TRY(reopen_volume(fs));
	struct lfs_stats keep = fs->st;
	/* (Its holder left the head durable: the log ending there is no
	 * torn tail to look past.) */
	fs->roll_end = area(fs)->seq;
	int e = lfs_roll(fs, fs->seg * fs->sb.seg_sect + fs->ps, fs->seq, fs->prev, fs->seg, fs->next);
	fs->roll_end = 0;
	fs->st.roll_ps = keep.roll_ps;            /* those are the mount's */
	fs->st.roll_groups = keep.roll_groups;
	fs->st.roll_sect = keep.roll_sect;
	fs->av_valid = 0;
	return e;
}

static int catch_up(struct lfs *fs, int dead)
{
	struct lfs_multi_area *a = area(fs);
	lfs_cp_settle(fs, 1);
	/* A holder that died may have changed more than the log: the
	 * volume's map in the exodisk's shared cache (a segment it mapped,
	 * one it gave back), which no record and no head says.  Whoever
	 * takes the lock from it reads everything again - and so does every
	 * other process, when it next catches up: the one that found the
	 * lock DEAD may have been a new mount, which told nobody. */
	if (dead)
		a->deaths++;
	dead |= a->deaths != fs->sh_deaths;
	fs->sh_deaths = a->deaths;
	int stale = fs->sh_stale || dirty(fs) || fs->err;
	int full = dead || stale || a->cpseq != fs->cpseq;
	/* After a death or our own failed publish the log may hold commits
	 * the journal does not: nobody uses it until the next checkpoint
	 * starts it again (nor does the reload below). */
	if (dead || stale)
		a->jcp = 0;
	if (!full && a->seq == fs->seq && a->prev == fs->prev)
		return 0;                  /* nothing appended since we let go */
	struct seen *v;
	uint32_t count;
	TRY(snapshot(fs, full, &v, &count));
	/* (reload forgets changes not written: snapshot marked their inodes
	 * lost first, so revalidate reads them again or drops them.) */
	int e = full ? 0 : from_journal(fs);
	uint64_t rolled = fs->st.roll_groups;
	if (e == 0 && full) {
		e = reload(fs);
		/* No commit since the checkpoint: the journal may start. */
		if (e == 0 && a->jcp != fs->cpseq && fs->st.roll_groups == rolled)
			journal_start(fs);
	} else if (e == 0) {
		e = roll_on(fs);
	} else if (e > 0) {
		e = 0;
	}
	if (e == 0 && !full && fs->seq < a->seq) {
		/* The chain ended before where the last holder left it. */
		e = reload(fs);
	}
	/* What was read (and read ahead) while catching up, before the log
	 * had its head again, may lie where the log goes next. */
	drop_cache_only(fs);
	if (e == 0)
		e = revalidate(fs, v, count);
	free(v);
	fs->sh_stale = e < 0;
	if (e == 0) {
		/* Where the others are: the journal as far as it was handed
		 * over (everything up to there is in what we read), the log's
		 * length since the checkpoint. */
		fs->sh_jepoch = a->jepoch;
		fs->sh_jpos = a->jdone;
		if (a->cpseq == fs->cpseq)
			fs->since_cp = a->since_cp;
	}
	return e;
}

/* Taking the lock when we do not hold it, and catching up (the slow path:
 * out of line, so the fast paths below save no registers for it). */
static __attribute__((noinline)) int enter_slow(struct lfs *fs, int change)
{
	int r = share_op_take(&fs->sh, change);
	if (r < 0)
		return r;
	took_lock(fs);
	if (r != SHARE_SAME || fs->sh_stale) {
		int e = catch_up(fs, r == SHARE_DEAD);
		if (e < 0) {
			lfs_multi_leave(fs);
			return e;
		}
	}
	return 0;
}

static __attribute__((noinline)) void leave_slow(struct lfs *fs)
{
	lfs_cp_settle(fs, 1);
	int d = dirty(fs);
	if (fs->sh.held && !d && !fs->sh_stale)
		note_head(fs);
	share_lease_leave(&fs->sh, d);
}

/* A process alone keeps the lock between operations (share_lease_keep),
 * so an operation's enter and leave are a few tests each. */
int lfs_multi_enter(void *p, int change)
{
	struct lfs *fs = p;
	if (share_op_again(&fs->sh, change, !fs->sh_stale))
		return 0;
	return enter_slow(fs, change);
}

void lfs_multi_leave(void *p)
{
	struct lfs *fs = p;
	if (share_op_end(&fs->sh))
		return;                    /* (alone: publish notes the head) */
	leave_slow(fs);
}
