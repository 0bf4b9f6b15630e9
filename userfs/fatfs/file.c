/*
 * file.c - regular files: a size in the short entry and a cluster chain in
 * the FAT.  An open file is one struct ffile however many handles share it
 * (the VFS keeps offsets); its chain is read once, as runs of contiguous
 * clusters, so finding a byte costs a binary search, not a walk.
 *
 * FAT has no holes and no guarantee about bytes past the end of a file:
 * a cluster freed by one file and taken by another still holds the old
 * file's bytes, and a file cut short keeps its old bytes past the new end
 * in its last cluster.  So nothing past a file's end is ever read, and
 * whenever a file grows, every byte between its old end and the new data
 * is written as zeros first (a write past the end, a truncate upwards); a
 * partly written sector that lay wholly past the old end is not read from
 * the disk but zeroed.  A file never shows bytes it was not given.
 *
 * Data is class CL_DATA; the short entry (size, first cluster, times) is
 * updated in the cache at every change and goes out with the directory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/fatfs/fat.h"

#define RA_SECTORS 256u          /* read ahead from a file's start: 128 KiB           */
#define RA_FAR     2048u         /* read ahead when reading on: 1 MiB                 */
#define AROUND     VV_BLOCK      /* read around a random miss: 64 KiB, aligned        */
#define WRITE_PIECE (1u << 20)   /* the cache is relieved between pieces of a write  */

struct ffile *fat_file_find(struct fatfs *fs, struct fdir *d, uint32_t slot)
{
	for (struct ffile *f = fs->files; f; f = f->next)
		if (f->dir == d && f->slot == slot && !f->unlinked)
			return f;
	return NULL;
}

int fat_file_open(struct fatfs *fs, struct fdir *d, int idx, struct ffile **out)
{
	uint32_t slot = d->e[idx].slot;
	struct ffile *f = fat_file_find(fs, d, slot);
	if (f != NULL) {
		f->refs++;
		*out = f;
		return 0;
	}
	uint8_t ent[DIRENT];
	int e = fat_dir_read(fs, d, idx, ent);
	if (e < 0)
		return e;
	f = calloc(1, sizeof *f);
	if (f == NULL)
		return -ENOMEM;
	f->size = le32(ent + DIR_FILESIZE);
	f->attr = ent[DIR_ATTR];
	memcpy(f->sfn, ent, 11);
	uint32_t first = dir_first(ent);
	uint32_t need = (uint32_t)(((uint64_t)f->size + fs->csize - 1) / fs->csize);
	e = fat_chain_load(fs, &f->ch, first, fat_share_unrepaired(fs) ? need : need + 1);
	if (e == 0 && f->ch.len > need)
		e = fat_damaged(fs, "a file's chain is longer than its size, starting at cluster", first);
	if (e == 0 && (uint64_t)f->ch.len * fs->csize < f->size)
		e = fat_damaged(fs, "a file is larger than its chain, starting at cluster", first);
	if (e < 0 && e != -EIO) {
		fat_chain_free(&f->ch);
		free(f);
		return e;
	}
	/* Damage: the file can still be read as far as its chain goes. */
	f->refs = 1;
	f->dir = d;
	f->slot = slot;
	d->refs++;
	f->next = fs->files;
	fs->files = f;
	*out = f;
	return 0;
}

static void file_free(struct fatfs *fs, struct ffile *f)
{
	struct ffile **pp = &fs->files;
	while (*pp && *pp != f)
		pp = &(*pp)->next;
	if (*pp)
		*pp = f->next;
	fat_dir_put(fs, f->dir);
	fat_chain_free(&f->ch);
	free(f);
}

int fat_file_close(struct fatfs *fs, struct ffile *f)
{
	if (--f->refs > 0)
		return 0;
	int e = 0;
	if (f->unlinked && !f->gone)
		fat_share_orphan(fs, 0);
	if (f->unlinked && !fs->ro)
		e = fat_free_later(fs, f->ch.first);
	file_free(fs, f);
	return e;
}

void fat_files_free(struct fatfs *fs)
{
	while (fs->files)
		file_free(fs, fs->files);
}

/* The short entry says what the file is now. */
static int update_entry(struct fatfs *fs, struct ffile *f)
{
	if (f->unlinked)
		return 0;
	int e;
	uint8_t *p = fat_dir_entry(fs, f->dir, f->slot, &e);
	if (p == NULL)
		return e;
	uint16_t date, time;
	uint8_t tenth;
	fat_now(&date, &time, &tenth);
	put32(p + DIR_FILESIZE, f->size);
	dir_set_first(p, f->ch.first);
	put16(p + DIR_WRTTIME, time);
	put16(p + DIR_WRTDATE, date);
	put16(p + DIR_LSTACCDATE, date);
	p[DIR_ATTR] |= ATTR_ARCH;
	f->attr = p[DIR_ATTR];
	fat_dir_done(fs, f->dir, f->slot, 1);
	return 0;
}

/* The window to read around a random read of sectors [lba, lba + n) of
 * a run of clusters [lo, hi): the aligned AROUND sectors holding it, no
 * further than the run (what lies beyond may be another file's). */
static void around(uint64_t lba, uint64_t n, uint64_t lo, uint64_t hi, uint64_t *w0, uint64_t *w1)
{
	uint64_t a0 = lba - lba % AROUND, a1 = (lba + n + AROUND - 1) / AROUND * AROUND;
	*w0 = a0 > lo ? a0 : lo;
	*w1 = a1 < hi ? a1 : hi;
}

long fat_file_read(struct fatfs *fs, struct ffile *f, void *buf, size_t n, uint64_t off)
{
	if (off >= f->size)
		return 0;
	if (n > f->size - off)
		n = (size_t)(f->size - off);
	/* Read ahead: a file's start (small files are read whole, one after
	 * another, and lie one after another), or far when reading on. */
	uint32_t ra = off == 0 ? RA_SECTORS : off == f->last_end ? RA_FAR : 0;
	/* Elsewhere, a read at random: a miss reads the 64 KiB around it when
	 * the cache can hold the whole file, so that a file read all over
	 * ends up cached whole, in a sixteenth of the requests, each byte
	 * read once (as Linux's page cache holds it).  A file larger than
	 * that would push the window out before it was used: then only what
	 * is asked is read. */
	int rnd = ra == 0 && (uint64_t)f->size <= vvol_cache_bytes(&fs->vol) / 2;
	uint8_t *out = buf;
	uint64_t pos = off, end = off + n;
	while (pos < end) {
		uint32_t run, before;
		uint32_t c = fat_chain_span(&f->ch, (uint32_t)(pos / fs->csize), &before, &run);
		if (c == 0)
			return fat_damaged(fs, "a file's chain ends before its size, first cluster",
			                   f->ch.first);
		uint64_t in = pos % fs->csize;
		uint64_t m = (uint64_t)run * fs->csize - in;
		if (m > end - pos)
			m = end - pos;
		uint64_t lba = fat_clus_lba(fs, c) + in / ED_SECTOR;
		uint64_t lo = fat_clus_lba(fs, c - before), hi = fat_clus_lba(fs, c) + (uint64_t)run * fs->spc;
		uint32_t so = (uint32_t)(pos % ED_SECTOR);
		int e;
		/* Read ahead no further than this file's run of clusters goes
		 * (a small file's run may be followed by the next file's). */
		uint64_t left = ((uint64_t)run * fs->csize - in) / ED_SECTOR;
		uint64_t after = left > (m + ED_SECTOR - 1) / ED_SECTOR ? left - (m + ED_SECTOR - 1) / ED_SECTOR : 0;
		if (ra == RA_FAR && ra > after)
			ra = (uint32_t)after;
		uint8_t sec[ED_SECTOR];
		uint8_t *to = out;
		uint64_t ns;
		if (so != 0 || m < ED_SECTOR) {
			m = ED_SECTOR - so < m ? ED_SECTOR - so : m;
			to = sec;
			ns = 1;
		} else {
			m -= m % ED_SECTOR;
			ns = m / ED_SECTOR;
		}
		if (rnd) {
			uint64_t w0, w1;
			around(lba, ns, lo, hi, &w0, &w1);
			e = vvol_read_around(&fs->vol, lba, to, ns, w0, w1);
		} else {
			e = vvol_read(&fs->vol, lba, to, ns, ra);
		}
		if (e < 0)
			return e;
		if (to == sec)
			memcpy(out, sec + so, (size_t)m);
		out += m;
		pos += m;
	}
	f->last_end = end;
	return (long)n;
}

/* Write n bytes of buf (NULL: zeros) at off (not past the end: the caller
 * fills a gap first).  Clusters are added as needed; a sector at or past
 * the old end is never read, and its bytes this write does not cover are
 * zeroed. */
static int wr(struct fatfs *fs, struct ffile *f, const uint8_t *buf, uint64_t n, uint64_t off)
{
	static const uint8_t zeros[ED_SECTOR];
	uint64_t end = off + n, old = f->size;
	uint32_t have = f->ch.len, need = (uint32_t)((end + fs->csize - 1) / fs->csize);
	int e = 0;
	if (need > have) {
		uint32_t last = have ? fat_chain_at(&f->ch, have - 1, NULL) : 0;
		e = fat_chain_grow(fs, &f->ch, need - have, last ? last + 1 : 0);
		if (e < 0) {
			/* No room: give back what was taken; the file is as it was. */
			fat_chain_cut(fs, &f->ch, have);
			return e;
		}
		/* The new clusters' sectors past `end` are past the file's end:
		 * nothing reads them, and growing the file later writes them
		 * first.  Those this write covers only in part are zeroed below
		 * (`fresh`).  (What the disk holds there is the virtual volume's
		 * business: a chunk it maps for the first time is written whole,
		 * zeros where nothing was written.) */
	}
	uint64_t pos = off;
	while (e == 0 && pos < end) {
		uint32_t ci = (uint32_t)(pos / fs->csize), run;
		uint32_t c = fat_chain_at(&f->ch, ci, &run);
		if (c == 0)
			return fat_damaged(fs, "a file's chain is shorter than its size, first cluster",
			                   f->ch.first);
		uint64_t in = pos % fs->csize;
		uint64_t m = (uint64_t)run * fs->csize - in;
		if (m > end - pos)
			m = end - pos;
		uint64_t lba = fat_clus_lba(fs, c) + in / ED_SECTOR;
		uint32_t so = (uint32_t)(pos % ED_SECTOR);
		if (so != 0 || m < ED_SECTOR) {
			uint64_t k = ED_SECTOR - so < m ? ED_SECTOR - so : m;
			uint64_t sec0 = pos - so;
			int fresh = ci >= have || sec0 >= old;
			uint8_t *p = vvol_sector(&fs->vol, lba, fresh ? VV_NOFILL : 0, &e);
			if (p == NULL)
				return e;
			if (fresh)
				memset(p, 0, ED_SECTOR);
			else if (sec0 + ED_SECTOR > old)
				memset(p + (old - sec0), 0, (size_t)(sec0 + ED_SECTOR - old));
			memcpy(p + so, buf ? buf + (pos - off) : zeros, (size_t)k);
			vvol_dirty(&fs->vol, lba, 1, CL_DATA);
			vvol_unpin(&fs->vol, lba);
			m = k;
		} else {
			m -= m % ED_SECTOR;
			e = vvol_write(&fs->vol, lba, buf ? buf + (pos - off) : NULL, m / ED_SECTOR, CL_DATA);
		}
		pos += m;
	}
	if (e < 0)
		return e;
	if (end > f->size)
		f->size = (uint32_t)end;
	return 0;
}

long fat_file_write(struct fatfs *fs, struct ffile *f, const void *buf, size_t n, uint64_t off)
{
	if (fs->ro)
		return -EROFS;
	if (f->gone)
		return (long)n;         /* another process removed it: nowhere to go */
	if (off + n > 0xFFFFFFFFull)
		return -EFBIG;          /* FAT holds sizes below 4 GiB */
	int e = 0;
	/* A gap between the end and off reads as zeros: write them. */
	for (uint64_t at = f->size; e == 0 && at < off;) {
		uint64_t k = off - at < WRITE_PIECE ? off - at : WRITE_PIECE;
		if ((e = fat_relieve(fs)) == 0)
			e = wr(fs, f, NULL, k, at);
		at += k;
	}
	for (size_t done = 0; e == 0 && done < n;) {
		size_t k = n - done < WRITE_PIECE ? n - done : WRITE_PIECE;
		if ((e = fat_relieve(fs)) == 0)
			e = wr(fs, f, (const uint8_t *)buf + done, k, off + done);
		done += k;
	}
	if (e == 0)
		e = update_entry(fs, f);
	return e < 0 ? e : (long)n;
}

int fat_file_truncate(struct fatfs *fs, struct ffile *f, uint64_t len)
{
	if (fs->ro)
		return -EROFS;
	if (len > 0xFFFFFFFFull)
		return -EFBIG;
	if (f->gone)
		return 0;
	int e = 0;
	if (len > f->size) {
		for (uint64_t at = f->size; e == 0 && at < len;) {
			uint64_t k = len - at < WRITE_PIECE ? len - at : WRITE_PIECE;
			if ((e = fat_relieve(fs)) == 0)
				e = wr(fs, f, NULL, k, at);
			at += k;
		}
	} else if (len < f->size) {
		e = fat_chain_cut(fs, &f->ch, (uint32_t)((len + fs->csize - 1) / fs->csize));
		if (e == 0)
			f->size = (uint32_t)len;
	}
	if (e == 0)
		e = update_entry(fs, f);
	return e;
}
