/*
 * fsck.c - check a library file system.
 *   fsck [-t TYPE] [-r] [OPTIONS]      -r: repair what can be repaired
 * TYPE is any libFS this program knows (default unixfs).  A libFS with a
 * checker of its own (struct libfs_ops.fsck) runs it; any other is walked
 * through its operations (libfs_check: every name stats, every file reads
 * back its size).
 * A file system other programs are using (docs/sharing.md) is checked
 * holding its lock, so it holds still; what fsck finds is printed once the
 * check is over, because its output may go to a file on the same file
 * system (`fsck > /report`), which cannot be written while it is held.
 * Exit status: 0 clean, 1 problems found, 2 could not check.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/libfs.h"

#define KEEP (64 * 1024)          /* bytes of findings kept for printing   */

static char *found;
static size_t nfound;
static unsigned long dropped;

static void report(void *arg, const char *path, const char *what)
{
	(void)arg;
	char line[512];
	int n = snprintf(line, sizeof line, "fsck: %s: %s\n", path, what);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = sizeof line - 1;
	if (found == NULL)
		found = malloc(KEEP);
	if (found == NULL || nfound + (size_t)n > KEEP) {
		dropped++;
		return;
	}
	memcpy(found + nfound, line, (size_t)n);
	nfound += (size_t)n;
}

int main(int argc, char **argv)
{
	const char *type = "unixfs", *opts = "";
	struct libfs_fsck ck = { .report = report };
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-r") == 0) {
			ck.repair = 1;
		} else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
			type = argv[++i];
		} else {
			fprintf(stderr, "usage: fsck [-t TYPE] [-r] [OPTIONS]\n");
			return 2;
		}
	}
	if (i < argc)
		opts = argv[i++];
	const struct libfs_ops *t = libfs_type(type);
	if (i != argc || t == NULL) {
		fprintf(stderr, t == NULL ? "fsck: %s: unknown file system type\n" :
		        "usage: fsck [-t TYPE] [-r] [OPTIONS]\n", type);
		return 2;
	}
	int r = t->fsck != NULL ? t->fsck(opts, &ck) : libfs_check(t, opts, &ck);
	if (nfound > 0)
		fwrite(found, 1, nfound, stdout);
	if (dropped > 0)
		printf("fsck: (%lu more findings not shown)\n", dropped);
	if (r < 0) {
		fprintf(stderr, "fsck: %s\n", strerror(-r));
		return 2;
	}
	printf("fsck: %s: %llu problem%s%s\n", ck.summary, (unsigned long long)ck.problems,
	       ck.problems == 1 ? "" : "s", ck.repair && ck.problems ? " (repaired)" : "");
	return ck.problems && !ck.repair ? 1 : 0;
}
