/*
 * libfs_check.c - a check any library file system gets through its own
 * operations: fsck -t NAME uses it for a libFS that has no fsck of its own
 * (struct libfs_ops.fsck NULL), and the host power-cut tests after every
 * cut.  It mounts the file system, walks every directory from the root,
 * stats every name it lists and reads every file to its end, and unmounts.
 *
 * What it finds is what a program would trip over: a listed name that does
 * not stat, or stats as another type than its listing says; a name listed
 * twice; a file whose bytes do not read back (an error, or fewer or more
 * than its size).  What it cannot find is what only the format knows
 * (space no name reaches, sectors owned twice): that needs the libFS's own
 * fsck.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/libfs.h"

#define CHUNK    65536
#define MAXNAMES 4096          /* names per directory checked for repeats */
#define MAXDEPTH 64

struct walk {
	const struct libfs_ops *o;
	void *fs;
	struct libfs_fsck *ck;
	uint64_t files, dirs, bytes;
	uint8_t *buf;
};

static void problem(struct walk *w, const char *path, const char *what)
{
	w->ck->problems++;
	if (w->ck->report != NULL)
		w->ck->report(w->ck->arg, path[0] ? path : "/", what);
}

/* open/close the way the mount table does (it allocates handles when the
 * libFS asks it to). */
static int wopen(struct walk *w, const char *path, int flags, void **fh)
{
	*fh = NULL;
	if (w->o->file_size != 0 && (*fh = calloc(1, w->o->file_size)) == NULL)
		return -ENOMEM;
	int r = w->o->open(w->fs, path, flags, 0, fh);
	if (r < 0 && w->o->file_size != 0)
		free(*fh);
	return r;
}

static void wclose(struct walk *w, void *fh)
{
	w->o->close(w->fs, fh);
	if (w->o->file_size != 0)
		free(fh);
}

static void check_file(struct walk *w, const char *path, const struct libfs_stat *st)
{
	void *fh;
	if (wopen(w, path, LIBFS_O_READ, &fh) < 0) {
		problem(w, path, "does not open");
		return;
	}
	uint64_t got = 0;
	long n;
	while ((n = w->o->read(w->fs, fh, w->buf, CHUNK, got)) > 0)
		got += (uint64_t)n;
	wclose(w, fh);
	if (n < 0)
		problem(w, path, "a read fails");
	else if (got != st->size)
		problem(w, path, "reads back more or fewer bytes than its size");
	w->files++;
	w->bytes += got;
}

static void walk_dir(struct walk *w, const char *path, int depth)
{
	void *dh;
	if (depth > MAXDEPTH || wopen(w, path, LIBFS_O_READ | LIBFS_O_DIR, &dh) < 0) {
		problem(w, path, depth > MAXDEPTH ? "directories nested too deep" : "does not open");
		return;
	}
	w->dirs++;
	char (*seen)[LIBFS_NAME_MAX + 1] = malloc(MAXNAMES * sizeof *seen);
	uint32_t nseen = 0;
	uint64_t cookie = 0;
	struct libfs_dirent de;
	char child[LIBFS_PATH_MAX];
	int r;
	while ((r = w->o->readdir(w->fs, dh, &cookie, &de)) == 1) {
		snprintf(child, sizeof child, "%s%s%s", path, path[0] ? "/" : "", de.name);
		for (uint32_t i = 0; seen != NULL && i < nseen; i++)
			if (strcmp(seen[i], de.name) == 0)
				problem(w, child, "listed twice");
		if (seen != NULL && nseen < MAXNAMES)
			strcpy(seen[nseen++], de.name);
		struct libfs_stat st;
		if (w->o->stat(w->fs, child, &st) < 0)
			problem(w, child, "listed, but does not stat");
		else if (st.type != de.type)
			problem(w, child, "its listing and its stat disagree on its type");
		else if (st.type == LIBFS_T_DIR)
			walk_dir(w, child, depth + 1);
		else
			check_file(w, child, &st);
	}
	if (r < 0)
		problem(w, path, "a readdir fails");
	free(seen);
	wclose(w, dh);
}

int libfs_check(const struct libfs_ops *ops, const char *opts, struct libfs_fsck *ck)
{
	struct walk w = { .o = ops, .ck = ck };
	ck->problems = 0;
	ck->summary[0] = 0;
	if ((w.buf = malloc(CHUNK)) == NULL)
		return -ENOMEM;
	int r = ops->mount(opts, &w.fs);
	if (r == 0) {
		walk_dir(&w, "", 0);
		r = ops->unmount(w.fs);
	}
	free(w.buf);
	snprintf(ck->summary, sizeof ck->summary, "%llu files, %llu directories, %llu bytes (walked)",
	         (unsigned long long)w.files, (unsigned long long)w.dirs,
	         (unsigned long long)w.bytes);
	return r;
}
