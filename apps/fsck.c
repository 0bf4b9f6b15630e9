/*
 * fsck.c - check a unixfs (it must not be mounted by another program).
 *   fsck [-r] [OPTIONS]       -r: repair what can be repaired (free orphans)
 * Exit status: 0 clean, 1 problems found, 2 could not check.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "userfs/unixfs/unixfs.h"

static void report(void *arg, const char *path, const char *what)
{
	(void)arg;
	printf("fsck: %s: %s\n", path, what);
}

int main(int argc, char **argv)
{
	int repair = 0, i = 1;
	if (i < argc && strcmp(argv[i], "-r") == 0) {
		repair = 1;
		i++;
	}
	char opts[512];
	snprintf(opts, sizeof opts, "%s%s%s", i < argc ? argv[i] : "",
	         i < argc && repair ? "," : "", repair ? "repair" : "");
	struct ufs_fsck_stats st;
	int r = unixfs_fsck(opts, report, NULL, &st);
	if (r < 0) {
		fprintf(stderr, "fsck: %s\n", strerror(-r));
		return 2;
	}
	printf("fsck: %llu files, %llu directories, %llu bytes, %llu extents, %llu map nodes: "
	       "%llu problem%s%s\n", (unsigned long long)st.files, (unsigned long long)st.dirs,
	       (unsigned long long)st.bytes, (unsigned long long)st.extents,
	       (unsigned long long)st.mapnodes, (unsigned long long)st.problems,
	       st.problems == 1 ? "" : "s", repair && st.problems ? " (repaired)" : "");
	return st.problems && !repair ? 1 : 0;
}
