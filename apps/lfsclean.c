/*
 * lfsclean.c - run lfs's cleaner on demand, and say how the log is used.
 *   lfsclean [-n] [-s SEGS] [OPTIONS]
 * OPTIONS are lfs's mount options (key=..., unit=...).  Without -n it
 * cleans round after round while a round gains a whole segment (with
 * -s SEGS: one round of at most SEGS segments) and checkpoints, giving
 * the emptied segments back to the exodisk;
 * -n only reports.  The file system must not be mounted by another program
 * (the shell lets go of its own mounts while a program runs).
 * Prints the usage before and after and the cleaner's write cost, as
 * Sprite LFS defines it: (new + read by the cleaner + rewritten by it) /
 * new, the disk traffic per byte of new data.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs.h"

static void show(const char *when, struct lfs *fs)
{
	struct lfs_stats st;
	struct lfs_usage u;
	lfs_get_stats(fs, &st, &u);
	double cost = st.new_bytes ? (double)(st.new_bytes + st.clean_read + st.clean_moved) /
	                             (double)st.new_bytes : 1.0;
	printf("lfsclean: %s: %llu files; %llu of %llu segments of %llu KiB hold sectors, "
	       "%llu hold live data (%llu KiB live); %llu writable; write cost %.2f\n", when,
	       (unsigned long long)u.files, (unsigned long long)u.mapped, (unsigned long long)u.segs,
	       (unsigned long long)(u.seg_bytes >> 10), (unsigned long long)u.inuse,
	       (unsigned long long)(u.live >> 10), (unsigned long long)u.free_segs, cost);
}

int main(int argc, char **argv)
{
	int only_report = 0, max = 0, i = 1;
	const char *opts = "";
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-n") == 0)
			only_report = 1;
		else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			max = atoi(argv[++i]);
		else
			break;
	}
	if (i < argc)
		opts = argv[i++];
	if (i != argc || max < 0) {
		fprintf(stderr, "usage: lfsclean [-n] [-s SEGS] [OPTIONS]\n");
		return 2;
	}
	struct lfs *fs;
	int r = lfs_mount(opts, &fs);
	if (r < 0) {
		fprintf(stderr, "lfsclean: mount: %s\n", strerror(-r));
		return 1;
	}
	show("before", fs);
	if (!only_report) {
		r = lfs_clean_now(fs, max);
		if (r < 0) {
			fprintf(stderr, "lfsclean: %s\n", strerror(-r));
			lfs_unmount(fs);
			return 1;
		}
		printf("lfsclean: %d segment%s gained\n", r, r == 1 ? "" : "s");
		if ((r = lfs_checkpoint_now(fs)) < 0)
			fprintf(stderr, "lfsclean: checkpoint: %s\n", strerror(-r));
		show("after", fs);
	}
	r = lfs_unmount(fs);
	if (r < 0)
		fprintf(stderr, "lfsclean: unmount: %s\n", strerror(-r));
	return r < 0;
}
