/*
 * fsck.c - the checker: mounts the file system read-only (so it checks
 * what a mount after a crash sees: the checkpoint plus roll-forward) and
 * recomputes everything the tables claim.
 *
 *   - every inode the map names reads back whole (its checksum, number and
 *     generation), with a believable type and size, and pointers inside the
 *     log, none past the file's end;
 *   - every directory's blocks parse, every name points at an allocated
 *     inode of the type the name says, every inode but the root has exactly
 *     one name, a directory's link count is 2 plus its subdirectories;
 *   - the free inode list holds only free entries, without a loop, and the
 *     file count is the allocated inodes;
 *   - the live bytes of every segment - inodes, data and indirect blocks,
 *     table blocks - equal what the segment usage table says, and nothing
 *     points into a segment without sectors.  The cleaner and the rule
 *     about reusing segments rest on these counts.
 *
 * Repairs: none (report only).  Everything lfs writes is a new copy, so
 * what fsck would repair a crash cannot cause; what it finds is damage or
 * a bug.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

struct ck {
	struct lfs *fs;
	struct libfs_fsck *out;
	uint64_t *live;           /* [nsegs] recounted                             */
	uint32_t *names;          /* [max_ino] names pointing at each inode        */
	uint32_t *subdirs;        /* [max_ino]                                     */
	uint64_t files, dirs, bytes;
};

static void problem(struct ck *c, uint64_t ino, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void problem(struct ck *c, uint64_t ino, const char *fmt, ...)
{
	char path[32], what[160];
	va_list ap;
	va_start(ap, fmt);
	snprintf(path, sizeof path, ino ? "inode %llu" : "tables", (unsigned long long)ino);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	c->out->problems++;
	if (c->out->report)
		c->out->report(c->out->arg, path, what);
}

/* Count a pointer's bytes; is it inside the log and in a mapped segment? */
static void count(struct ck *c, uint64_t ino, uint64_t lba, uint32_t bytes)
{
	struct lfs *fs = c->fs;
	uint64_t s = lfs_seg_of(fs, lba);
	if (s == 0 || s >= fs->sb.nsegs) {
		problem(c, ino, "points outside the log (sector %llu)", (unsigned long long)lba);
		return;
	}
	if (!(lfs_seg_peek(fs, s)->e.flags & LFS_SEG_MAPPED))
		problem(c, ino, "points into segment %llu, which has no sectors", (unsigned long long)s);
	c->live[s] += bytes;
}

static void count_ptrs(struct ck *c, uint64_t ino, const uint64_t *p, uint32_t n, uint64_t first,
                       uint64_t nblk)
{
	for (uint32_t i = 0; i < n; i++) {
		if (p[i] == 0)
			continue;
		if (first + i >= nblk)
			problem(c, ino, "block %llu is past the end (%llu blocks)", (unsigned long long)(first + i), (unsigned long long)nblk);
		count(c, ino, LFS_PTR_LBA(p[i]), LFS_PTR_NSECT(p[i]) * LFS_SECT);
	}
}

/* Every block of the file, indirect blocks included. */
static int check_blocks(struct ck *c, struct lnode *n)
{
	struct lfs *fs = c->fs;
	uint64_t nblk = (n->d.size + LFS_BSIZE - 1) / LFS_BSIZE;
	count_ptrs(c, n->ino, n->d.direct, LFS_NDIRECT, 0, nblk);
	uint64_t *blk = malloc(LFS_BSIZE);
	if (blk == NULL)
		return -ENOMEM;
	int e = 0;
	if (n->d.ind != 0) {
		count(c, n->ino, LFS_PTR_LBA(n->d.ind), LFS_BSIZE);
		if ((e = lfs_read_block(fs, n->d.ind, blk)) == 0 &&
		    !lfs_sealed(blk, LFS_IND_SEAL, n->ino, LFS_IND_SINGLE))
			problem(c, n->ino, "its indirect block fails its checksum");
		else if (e == 0)
			count_ptrs(c, n->ino, blk, LFS_NPTR, LFS_NDIRECT, nblk);
	}
	if (e == 0 && n->d.dind != 0) {
		count(c, n->ino, LFS_PTR_LBA(n->d.dind), LFS_BSIZE);
		uint64_t *top = malloc(LFS_BSIZE);
		if (top == NULL || (e = lfs_read_block(fs, n->d.dind, top)) < 0) {
			free(top);
			free(blk);
			return top == NULL ? -ENOMEM : e;
		}
		if (!lfs_sealed(top, LFS_IND_SEAL, n->ino, LFS_IND_DOUBLE)) {
			problem(c, n->ino, "its double indirect block fails its checksum");
			memset(top, 0, LFS_BSIZE);
		}
		for (uint32_t i = 0; i < LFS_NPTR && e == 0; i++) {
			if (top[i] == 0)
				continue;
			count(c, n->ino, LFS_PTR_LBA(top[i]), LFS_BSIZE);
			if ((e = lfs_read_block(fs, top[i], blk)) == 0 &&
			    !lfs_sealed(blk, LFS_IND_SEAL, n->ino, LFS_IND_CHILD(i)))
				problem(c, n->ino, "indirect block %u fails its checksum", i);
			else if (e == 0)
				count_ptrs(c, n->ino, blk, LFS_NPTR,
				           LFS_NDIRECT + LFS_NPTR + (uint64_t)i * LFS_NPTR, nblk);
		}
		free(top);
	}
	free(blk);
	if (e < 0)
		problem(c, n->ino, "an indirect block cannot be read (%d)", e);
	return 0;
}

static void check_dir(struct ck *c, struct lnode *n)
{
	struct lfs *fs = c->fs;
	if (lfs_dir_load(fs, n) < 0) {
		problem(c, n->ino, "directory blocks do not parse");
		return;
	}
	uint64_t cookie = 0;
	struct libfs_dirent de;
	int r;
	while ((r = lfs_dir_next(fs, n, &cookie, &de)) == 1) {
		int e;
		struct lfs_imapent *m = lfs_imap(fs, (uint32_t)de.ino, &e);
		if (m == NULL || m->loc == 0) {
			problem(c, n->ino, "a name points at inode %llu, which is free", (unsigned long long)de.ino);
			continue;
		}
		c->names[de.ino]++;
		if (de.type == LIBFS_T_DIR)
			c->subdirs[n->ino]++;
		struct lnode *t;
		if (lfs_get(fs, (uint32_t)de.ino, &t) == 0) {
			if (t->d.type != de.type)
				problem(c, n->ino, "the name of inode %llu says type %u", (unsigned long long)de.ino, de.type);
			lfs_put(fs, t);
		}
	}
	if (r < 0)
		problem(c, n->ino, "directory listing fails (%d)", r);
}

static int run(struct ck *c)
{
	struct lfs *fs = c->fs;
	for (uint32_t i = 0; i < fs->nimblk; i++)
		if (fs->imaddr[i] != 0)
			count(c, 0, LFS_PTR_LBA(fs->imaddr[i]), LFS_BSIZE);
	for (uint32_t i = 0; i < fs->nsutblk; i++)
		if (fs->sutaddr[i] != 0)
			count(c, 0, LFS_PTR_LBA(fs->sutaddr[i]), LFS_BSIZE);
	uint64_t allocated = 0;
	for (uint32_t ino = 1; ino < fs->max_ino; ino++) {
		int e;
		struct lfs_imapent *m = lfs_imap(fs, ino, &e);
		if (m == NULL) {
			problem(c, ino, "its inode map block cannot be read (%d)", e);
			continue;
		}
		if (m->loc == 0)
			continue;
		allocated++;
		count(c, ino, LFS_LOC_LBA(m->loc), LFS_ISIZE);
		struct lnode *n;
		if ((e = lfs_get(fs, ino, &n)) < 0) {
			problem(c, ino, "the inode cannot be read (%d)", e);
			continue;
		}
		if (n->d.type == LIBFS_T_DIR) {
			c->dirs++;
			check_dir(c, n);
		} else {
			c->files++;
			c->bytes += n->d.size;
		}
		if (n->d.size > LFS_MAXFILE)
			problem(c, ino, "size %llu is too large", (unsigned long long)n->d.size);
		else
			check_blocks(c, n);
		lfs_put(fs, n);
	}
	/* Names and links. */
	for (uint32_t ino = 1; ino < fs->max_ino; ino++) {
		int e;
		struct lfs_imapent *m = lfs_imap(fs, ino, &e);
		if (m == NULL || m->loc == 0)
			continue;
		uint32_t want = ino == LFS_ROOT_INO ? 0 : 1;
		if (c->names[ino] != want)
			problem(c, ino, "has %u names, not %u", c->names[ino], want);
		struct lnode *n;
		if (lfs_get(fs, ino, &n) < 0)
			continue;
		if (n->d.type == LIBFS_T_DIR && n->d.nlink != 2 + c->subdirs[ino])
			problem(c, ino, "directory link count %u, not %u", (unsigned)n->d.nlink, 2 + c->subdirs[ino]);
		lfs_put(fs, n);
	}
	if (allocated != fs->nfiles)
		problem(c, 0, "the file count is %llu, %llu inodes are in use", (unsigned long long)fs->nfiles, (unsigned long long)allocated);
	/* The free list. */
	uint64_t steps = 0;
	for (uint32_t f = fs->free_head; f != 0; steps++) {
		int e;
		struct lfs_imapent *m = lfs_imap(fs, f, &e);
		if (m == NULL || m->loc != 0 || steps > fs->max_ino) {
			problem(c, f, "the free inode list is damaged here");
			break;
		}
		f = m->next_free;
	}
	/* The segment usage table against the count. */
	for (uint64_t s = 1; s < fs->sb.nsegs; s++)
		if (c->live[s] != lfs_seg_peek(fs, s)->e.live) {
			char what[120];
			snprintf(what, sizeof what, "segment %llu: the usage table says %llu live bytes, "
			         "the file system points at %llu", (unsigned long long)s,
			         (unsigned long long)lfs_seg_peek(fs, s)->e.live, (unsigned long long)c->live[s]);
			c->out->problems++;
			if (c->out->report)
				c->out->report(c->out->arg, "segment usage", what);
		}
	return 0;
}

int lfs_fsck(const char *opts, struct libfs_fsck *ck)
{
	size_t n = strlen(opts) + 8;
	char *o = malloc(n);
	if (o == NULL)
		return -ENOMEM;
	snprintf(o, n, "%s%sro", opts, *opts ? "," : "");
	struct lfs *fs;
	int e = lfs_open_fs(o, 0, &fs);
	free(o);
	if (e < 0)
		return e;
	struct ck c = { .fs = fs, .out = ck };
	lfs_sut_load_all(fs);             /* a mount reads it as wanted: all of it here */
	c.live = calloc(fs->sb.nsegs, sizeof *c.live);
	c.names = calloc(fs->max_ino + 1, sizeof *c.names);
	c.subdirs = calloc(fs->max_ino + 1, sizeof *c.subdirs);
	if (fs->sutbad)
		problem(&c, 0, "%u blocks of the segment usage table cannot be read", fs->sutbad);
	if (fs->logbad.seq)
		problem(&c, 0, "the log is damaged at partial segment %llu (segment %llu): the commits "
		        "after it, up to partial segment %llu at least, are not applied",
		        (unsigned long long)fs->logbad.seq,
		        (unsigned long long)lfs_seg_of(fs, fs->logbad.lba),
		        (unsigned long long)fs->logbad.later_seq);
	e = c.live && c.names && c.subdirs ? run(&c) : -ENOMEM;
	uint64_t segs = 0, live = 0;
	for (uint64_t s = 1; s < fs->sb.nsegs; s++) {
		segs += (lfs_seg_peek(fs, s)->e.flags & LFS_SEG_MAPPED) != 0;
		live += lfs_seg_peek(fs, s)->e.live;
	}
	snprintf(ck->summary, sizeof ck->summary,
	         "%llu files, %llu directories, %llu bytes, %llu segments of %u KiB, %llu live bytes, "
	         "%llu commits rolled forward", (unsigned long long)c.files, (unsigned long long)c.dirs,
	         (unsigned long long)c.bytes, (unsigned long long)segs, fs->sb.seg_sect / 2,
	         (unsigned long long)live, (unsigned long long)fs->st.roll_groups);
	free(c.live);
	free(c.names);
	free(c.subdirs);
	lfs_close_fs(fs);
	return e;
}
