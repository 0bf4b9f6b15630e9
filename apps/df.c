/*
 * df.c - how full the mounted file systems are.  Sizes and free space come
 * from the exodisk's free map, which the kernel exports read-only to every
 * program, so this costs no disk access.
 *   df [PATH...]          default: every mount point
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "libos/files.h"

static int show(const char *path)
{
	struct libfs_statfs st;
	if (fs_statfs(path, &st) < 0) {
		fprintf(stderr, "df: %s: %s\n", path, strerror(errno));
		return 1;
	}
	unsigned long long kb = (unsigned long long)st.bsize / 1024;
	unsigned long long total = st.blocks * kb, avail = st.bfree * kb;
	printf("%-12s %-7s %10llu %10llu %10llu %3llu%% %8llu\n", path, st.type, total, total - avail,
	       avail, total ? (total - avail) * 100 / total : 0, (unsigned long long)st.files);
	return 0;
}

int main(int argc, char **argv)
{
	int status = 0;
	printf("%-12s %-7s %10s %10s %10s %4s %8s\n", "mounted on", "type", "KiB", "used", "free",
	       "use", "files");
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			status |= show(argv[i]);
		return status;
	}
	const char *prefix, *type, *opts;
	int mounted;
	for (int i = 0; fs_mount_info(i, &prefix, &type, &opts, &mounted) == 0; i++)
		status |= show(prefix);
	return status;
}
