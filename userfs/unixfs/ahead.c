/*
 * ahead.c - directory read-ahead.  A program that loads one subdirectory
 * of a directory usually goes on to its siblings (ls -R, find, rm -r, du,
 * a benchmark's round robin).  Loading a directory alone is two waits in a
 * row: its dnode (an exonode read), then its group (dspace.c: the whole
 * space, names and small files, in one request) when a file of it is
 * being read, or its head and record blocks otherwise.  Here, when a cold
 * subdirectory is about to be loaded, the dnodes of it and of the next few
 * cold siblings are read in together, and when files are being read their
 * groups too, together, so a walk reading N directories' files waits a few
 * times instead of 2N.
 *
 * A group read ahead is kept aside (a stash: the dnode's id, commit
 * sequence and head, its extents, and the bytes) until its directory is
 * loaded, and used then only if the dnode still says the same: the same id
 * (a dnode freed and made again at the same place has a new one), the same
 * commit, the same extents.  Copy-on-write makes that enough: the sectors a
 * commit names are never written while it is the directory's latest
 * (docs/unixfs.md, "Making things durable", rule 2), so bytes read under
 * it are still its bytes; the load checks every block as always.
 *
 * The window starts at RA_MIN directories and doubles while what was read
 * ahead gets used (back to RA_MIN when it was not), up to RA_DIRS
 * directories and RA_BYTES of groups; stashes not used by the time the
 * next read-ahead starts are dropped, so that is all the memory it holds.
 */
#include <stdlib.h>
#include <string.h>
#include "userfs/unixfs/ufs.h"

#define RA_MIN    4                  /* directories in a first read-ahead    */
#define RA_DIRS   64                 /* at most                              */
#define RA_BYTES  (4u << 20)         /* group bytes in flight and kept, at most */
#define RA_SLOTS  32                 /* requests in flight                   */
#define RA_SCAN   8192               /* siblings looked at, at most          */

struct ustash {
	uint64_t xref, id, seq, head;
	uint8_t *buf;                    /* the group (NULL: none kept)          */
	uint32_t next;                   /* extents                              */
	struct { uint64_t sector, nsect; } ext[UFS_DNODE_EXT];
};

struct uahead {
	struct ustash st[RA_DIRS];
	uint32_t n;                      /* directories of the last read-ahead   */
	uint32_t taken;                  /* of them, loaded since                */
	uint32_t win;
};

static void forget(struct ufs *fs, struct uahead *a)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (a->st[i].buf != NULL)
			upool_big_free(fs, a->st[i].buf);
	a->n = 0;
	a->taken = 0;
}

void ufs_ahead_drop(struct ufs *fs)
{
	ufs_stream_drop(fs, 0);
	if (fs->ahead == NULL)
		return;
	forget(fs, fs->ahead);
	free(fs->ahead);
	fs->ahead = NULL;
}

static struct ustash *find(struct uahead *a, uint64_t xref)
{
	for (uint32_t i = 0; a != NULL && i < a->n; i++)
		if (a->st[i].xref == xref)
			return &a->st[i];
	return NULL;
}

/* From the dnode's map page: its id, commit and head, and its extents;
 * 0, or -1 if it is not a dnode as unixfs makes them (the load proper will
 * say what is wrong, if the program ever gets there). */
static int parse(const uint8_t *page, struct ustash *s)
{
	const struct ed_xnmap_hdr *h = (const void *)page;
	const struct ed_xnmap_ent *ent = (const void *)(h + 1);
	struct ufs_xmeta m = { 0 };
	int have = 0;
	if (h->length != UFS_XN_BYTES)
		return -1;
	s->next = 0;
	for (uint32_t i = 0; i < h->nent; i++) {
		if (ent[i].type == ED_ENT_EXTENT) {
			if (s->next == UFS_DNODE_EXT || ent[i].b == 0 || ent[i].b > UFS_GROUP_MAX / ED_SECTOR)
				return -1;
			s->ext[s->next].sector = ent[i].a;
			s->ext[s->next].nsect = ent[i].b;
			s->next++;
		} else if (ent[i].type == ED_ENT_DATA && ent[i].idx == UFS_E_META &&
		           ent[i].len == sizeof m && ent[i].a + sizeof m <= 4096) {
			memcpy(&m, page + ent[i].a, sizeof m);
			have = 1;
		}
	}
	if (!have || m.magic != UFS_XMETA_MAGIC || m.kind != UFS_K_DIR || m.id != s->id || m.head == 0)
		return -1;
	s->seq = m.seq;
	s->head = m.head;
	return 0;
}

void ufs_ahead(struct ufs *fs, struct udir *p, struct uent *first)
{
	struct uahead *a = fs->ahead;
	if (find(a, first->r.loc) != NULL)
		return;                          /* read ahead already */
	if (a == NULL) {
		if ((a = calloc(1, sizeof *a)) == NULL)
			return;
		a->win = RA_MIN;
		fs->ahead = a;
	} else if (a->n > 0) {
		/* Was the last one worth it? */
		a->win = a->taken * 2 >= a->n ? (a->win * 2 < RA_DIRS ? a->win * 2 : RA_DIRS) : RA_MIN;
		forget(fs, a);
	}
	/* first, and the cold subdirectories whose dnodes come next on disk:
	 * made in a burst, dnodes sit together in the order they were made,
	 * which is the order a program naming them in turn, or a walk,
	 * tends to take (readdir order is the records' order, unrelated). */
	memset(&a->st[0], 0, sizeof a->st[0]);
	a->st[0].xref = first->r.loc;
	a->st[0].id = first->r.id;
	uint32_t n = 1;
	for (uint32_t k = 1; k < p->npos && k <= RA_SCAN; k++) {
		const struct uent *e = p->pos[(first->pos + k) % p->npos];
		if (e == NULL || e->r.type != UFS_T_DIR || e->r.where != UFS_W_NODE || e->ip != NULL ||
		    e->dir != p || e->r.loc <= first->r.loc)
			continue;
		if (n == a->win && e->r.loc >= a->st[n - 1].xref)
			continue;
		/* Into the list, kept sorted by place, the farthest dropped. */
		uint32_t i = n < a->win ? n++ : n - 1;
		while (i > 1 && a->st[i - 1].xref > e->r.loc) {
			a->st[i] = a->st[i - 1];
			i--;
		}
		memset(&a->st[i], 0, sizeof a->st[i]);
		a->st[i].xref = e->r.loc;
		a->st[i].id = e->r.id;
	}
	if (n < 2)
		return;                          /* only first: nothing to overlap */
	a->n = n;
	/* 1. Their dnodes, in flight together (two to a block: each block
	 * once).  Failures do not matter here: the load reads it in again. */
	struct edc_slot slots[RA_SLOTS];
	struct edc_batch b;
	edc_batch_init(&b, fs->k.c, slots, RA_SLOTS);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t sector = ufs_xref_sector(a->st[i].xref);
		uint32_t j = 0;
		while (j < i && ufs_xref_sector(a->st[j].xref) != sector)
			j++;
		if (j < i)
			continue;
		struct uxn x;
		ufs_xn_set(&x, sector, (uint16_t)ufs_xref_slot(a->st[i].xref));
		(void)edc_batch_xn_read(&b, ufs_xn_prot(fs, &x));
	}
	(void)edc_batch_wait(&b);
	/* 2. Their groups, in flight together, when the program is reading
	 * files (a walk that only needs names, a removal, gets the dnodes:
	 * a group's small files cost transfer time on a real disk). */
	uint64_t bytes = 0;
	int failed = 0;
	for (uint32_t i = 0; i < n && fs->want_data; i++) {
		struct ustash *s = &a->st[i];
		struct uxn x;
		ufs_xn_set(&x, ufs_xref_sector(s->xref), (uint16_t)ufs_xref_slot(s->xref));
		if (ufs_xn_snapshot(fs, &x, fs->page) < 0 || parse(fs->page, s) < 0)
			continue;
		uint64_t total = 0;
		for (uint32_t k = 0; k < s->next; k++)
			total += s->ext[k].nsect * ED_SECTOR;
		if (total == 0 || total > UFS_GROUP_MAX || bytes + total > RA_BYTES)
			continue;
		if ((s->buf = upool_big_alloc(fs, total)) == NULL)
			break;
		bytes += total;
		uint64_t off = 0;
		for (uint32_t k = 0; k < s->next; k++) {
			if (edc_batch_io(&b, ufs_xn_prot(fs, &x), 0, s->ext[k].sector, s->buf + off,
			                 s->ext[k].nsect * ED_SECTOR) != 0) {
				/* Refused outright (not added): this one is no good.
				 * The reads of it already made finish before the
				 * wait below returns, so its memory stays till then. */
				s->id = 0;
			}
			off += s->ext[k].nsect * ED_SECTOR;
		}
	}
	if (edc_batch_wait(&b) != 0)
		failed = 1;
	for (uint32_t i = 0; i < n; i++) {
		struct ustash *s = &a->st[i];
		if (s->buf != NULL && (failed || s->id == 0)) {
			upool_big_free(fs, s->buf);
			s->buf = NULL;
		}
	}
	fs->cnt.ahead_dirs += n;
}

int ufs_ahead_take(struct ufs *fs, struct udir *d)
{
	struct ustash *s = find(fs->ahead, ufs_xref(d->x.sector, d->x.slot));
	if (s == NULL)
		return 0;
	fs->ahead->taken++;
	uint8_t *buf = s->buf;
	s->buf = NULL;
	s->xref = UINT64_MAX;
	if (buf == NULL)
		return 0;
	const struct udspace *sp = &d->sp;
	int same = s->id == d->m.id && s->seq == d->m.seq && s->head == d->m.head && s->next == sp->next &&
	           sp->gbuf == NULL;
	for (uint32_t i = 0; same && i < sp->next; i++)
		same = s->ext[i].sector == sp->ext[i].sector && s->ext[i].nsect == sp->ext[i].nsect;
	if (!same) {
		upool_big_free(fs, buf);
		return 0;
	}
	ds_group_room(fs, sp->total * ED_SECTOR);
	ds_group_attach(fs, d, buf);
	fs->cnt.ahead_used++;
	return 1;
}

/* ---- a large file read in order --------------------------------------------------
 *
 * A program reading a large file from start to end in big pieces (cp,
 * cat, a checksum) waits for the disk once per piece, and the disk idles
 * while the program works on what it got.  When such a reader is seen
 * (its read starts where its last one ended), the next ST_NWIN windows of
 * ST_WIN bytes are read in flight together into memory of the stream's
 * own, and each read is served from there, starting a new window as each
 * one is used up: ST_NWIN requests stay in flight, each ST_WIN / 64 KiB
 * times the size of a reader's piece.  One stream per mount (the file
 * being copied); any write or truncate of its file, a reload of the
 * caches (sharing) and the file's end drop it: what it holds is what the
 * disk held when it was read, the same bytes read_direct would give,
 * since blocks dirty in the cache are never served from it.
 */

#define ST_WIN   (256u * 1024)             /* bytes per read-ahead request     */
#define ST_NWIN  4                         /* windows in flight                */

struct ustream {
	uint64_t id;                     /* the file (0: none)                 */
	uint64_t base;                   /* byte offset of window `first`      */
	uint32_t first;                  /* the window holding `base`          */
	uint32_t nwin;                   /* windows started, from `first`      */
	struct {
		struct uio w;
		uint64_t off;            /* the file's bytes [off, off + len)  */
		uint32_t len;
		int busy;                /* requests in flight                 */
		int err;                 /* its reads failed                   */
	} win[ST_NWIN];
	uint8_t *mem;                    /* ST_NWIN * ST_WIN bytes             */
};

/* Wait for every window's requests; the stream holds nothing after. */
static void st_settle(struct ustream *s)
{
	for (uint32_t i = 0; i < ST_NWIN; i++)
		if (s->win[i].busy) {
			s->win[i].err = uio_finish(&s->win[i].w) < 0;
			s->win[i].busy = 0;
		}
	s->id = 0;
	s->nwin = 0;
}

void ufs_stream_drop(struct ufs *fs, uint64_t id)
{
	struct ustream *s = fs->stream;
	if (s != NULL && (id == 0 || s->id == id))
		st_settle(s);
	if (s != NULL && id == 0) {
		free(s->mem);
		free(s);
		fs->stream = NULL;
	}
}

/* Start window k's read: the file's bytes [off, off + len) (len a whole
 * number of blocks but at the end), from its extents, zeros where it
 * maps none. */
static void st_start(struct ufs *fs, struct uinode *ip, struct ustream *s, uint32_t k, uint64_t off,
                     uint32_t len)
{
	struct ubig *B = ip->b;
	uint8_t *mem = s->mem + (size_t)k * ST_WIN;
	uio_init(&s->win[k].w, fs, 0);
	s->win[k].off = off;
	s->win[k].len = len;
	s->win[k].err = 0;
	s->win[k].busy = 1;
	uint64_t lb = off / UFS_BSIZE, nb = (len + UFS_BSIZE - 1) / UFS_BSIZE;
	for (uint64_t i = 0; i < nb && !s->win[k].err;) {
		uint64_t run;
		int cut = lb + i >= B->zero_from;
		uint64_t sector = cut ? 0 : ufs_map_lookup(ip, (lb + i) * UFS_BSECT, &run);
		/* An extent as far as it goes; a hole too (run 0: to the end of
		 * the file), and blocks cut off by a truncate are all the rest:
		 * zeros, one memset for each. */
		uint64_t n = cut || run == 0 ? nb - i : run / UFS_BSECT;
		if (n == 0)
			n = 1;
		if (n > nb - i)
			n = nb - i;
		if (sector != 0 && B->zero_from != UINT64_MAX && lb + i + n > B->zero_from)
			n = B->zero_from - (lb + i);
		if (sector == 0)
			memset(mem + i * UFS_BSIZE, 0, n * UFS_BSIZE);
		else if (uio_direct(&s->win[k].w, ufs_map_prot(fs, ip, sector), sector, mem + i * UFS_BSIZE,
		                    n * UFS_BSIZE, NULL) < 0)
			s->win[k].err = 1;
		i += n;
	}
	fs->cnt.ahead_stream++;
}

long ufs_stream_read(struct ufs *fs, struct uinode *ip, uint8_t *out, uint64_t off, size_t n)
{
	struct ubig *B = ip->b;
	uint64_t size = ip->ent->r.size;
	struct ustream *s = fs->stream;
	if (off % UFS_BSIZE != 0 || off >= size)
		return 0;
	if (s != NULL && s->id == ip->id && s->base != off)
		st_settle(s);                     /* it went elsewhere */
	if (s == NULL || s->id != ip->id) {
		/* A reader going in order: from the start, or where it left off. */
		if (off != 0 && off / UFS_BSIZE != B->ra_next)
			return 0;
		if (size - off <= n)
			return 0;                 /* this read is the last: nothing to gain */
		if (s == NULL) {
			if ((s = calloc(1, sizeof *s)) == NULL || (s->mem = malloc(ST_NWIN * ST_WIN)) == NULL) {
				free(s);
				return 0;
			}
			fs->stream = s;
		}
		st_settle(s);
		s->id = ip->id;
		s->base = off;
		s->first = 0;
	}
	/* Blocks written and not yet written back are not in the windows. */
	if (bc_count(&fs->bc, ip->id, off / UFS_BSIZE, (off + n + UFS_BSIZE - 1) / UFS_BSIZE, 1) != 0) {
		st_settle(s);
		return 0;
	}
	size_t done = 0;
	while (done < n && s->base < size) {
		/* Keep ST_NWIN windows started ahead of the reader. */
		while (s->nwin < ST_NWIN) {
			uint64_t woff = s->base + (uint64_t)s->nwin * ST_WIN;
			if (woff >= size)
				break;
			uint64_t len = size - woff < ST_WIN ? size - woff : ST_WIN;
			st_start(fs, ip, s, (s->first + s->nwin) % ST_NWIN, woff, (uint32_t)len);
			s->nwin++;
		}
		uint32_t k = s->first;
		if (s->win[k].busy) {
			s->win[k].err |= uio_finish(&s->win[k].w) < 0;
			s->win[k].busy = 0;
		}
		if (s->win[k].err) {
			st_settle(s);             /* the caller's path reports it */
			break;
		}
		/* Serve from window k: its bytes from base on. */
		uint64_t at = s->base - s->win[k].off;
		uint64_t wend = s->win[k].off + s->win[k].len;
		size_t c = (size_t)(wend - s->base < n - done ? wend - s->base : n - done);
		memcpy(out + done, s->mem + (size_t)k * ST_WIN + at, c);
		done += c;
		s->base += c;
		if (s->base == wend) {
			s->first = (s->first + 1) % ST_NWIN;
			s->nwin--;
		}
	}
	if (s->base >= size)
		st_settle(s);                     /* the end: nothing more to read ahead */
	return (long)done;
}
