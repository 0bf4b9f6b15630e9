/*
 * df.c - how full the mounted file systems are, and what can run out on
 * the disks under them.
 *   df [-h] [PATH...]     default: every mount point, then every exodisk unit
 *
 * The file systems' lines come from their libFS (fs_statfs: size, what is
 * free, the number of files).  The units' lines come from the exodisk
 * (ED_OP_UNIT_INFO): what is allocated and free, the free sectors it keeps
 * for its own metadata (an allocation that would need them fails with
 * ENOSPC), how much of that metadata there is, its bindings (headers and
 * exonode blocks: no limit but the free space), how full the commit log is,
 * and the exodisk cache that every program shares.  Nothing here reads the
 * disk.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/files.h"
#include "libos/edc.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: df [-h] [PATH...]\n"
	           "  the size, use and file count of the file systems mounted at PATH (default: all),\n"
	           "  then for every exodisk unit: sectors allocated and free, the free space the\n"
	           "  exodisk keeps for its metadata, its bindings, commit log and cache\n");
}

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

static void units(void)
{
	struct edc *c = edc_default();
	bool header = false;
	for (int unit = 0; unit < 8; unit++) {
		struct ed_unit_info u;
		if (edc_unit_info(c, unit, &u) < 0)
			continue;
		if (!header) {
			printf("\n%-5s %12s %10s %10s %9s %9s %9s %9s %11s %8s\n", "unit", "KiB", "used",
			       "free", "kept", "metadata", "bindings", "log", "cache", "kmem KiB");
			header = true;
		}
		unsigned long long kib = u.nsectors / 2, used = u.allocated / 2;
		char log[24], cache[24];
		snprintf(log, sizeof log, "%llu%%",
		         u.log_sectors ? (unsigned long long)(u.log_used * 100 / u.log_sectors) : 0ull);
		snprintf(cache, sizeof cache, "%llu/%llu",
		         (unsigned long long)(u.cache_entries - u.cache_free),
		         (unsigned long long)u.cache_entries);
		printf("%-5d %12llu %10llu %10llu %9llu %9llu %9llu %9s %11s %8llu\n", unit, kib, used,
		       kib - used, (unsigned long long)u.reserved / 2, (unsigned long long)u.meta_sectors / 2,
		       (unsigned long long)u.bindings, log, cache, (unsigned long long)u.kmem_bytes / 1024);
	}
	if (header)
		printf("(KiB; free includes what is kept for the exodisk's metadata; log: how full the "
		       "commit log is; cache: entries in use of all, shared by every program)\n");
}

int main(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		usage(stdout);
		return 0;
	}
	int status = 0;
	printf("%-12s %-7s %10s %10s %10s %4s %8s\n", "mounted on", "type", "KiB", "used", "free",
	       "use", "files");
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			if (argv[i][0] == '-') {
				fprintf(stderr, "df: unknown option %s\n", argv[i]);
				usage(stderr);
				return 2;
			}
			status |= show(argv[i]);
		}
		return status;
	}
	const char *prefix, *type, *opts;
	int mounted;
	for (int i = 0; fs_mount_info(i, &prefix, &type, &opts, &mounted) == 0; i++)
		status |= show(prefix);
	units();
	return status;
}
