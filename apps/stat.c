/*
 * stat.c - show what the file system knows about files.
 *   stat PATH...
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "libos/files.h"

/* A file time (nanoseconds since 1970) as a UTC date. */
static void show_time(const char *label, uint64_t ns)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char when[40];
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	printf("%s: %s.%09llu UTC\n", label, when, (unsigned long long)(ns % 1000000000u));
}

int main(int argc, char **argv)
{
	int status = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: stat PATH...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct libfs_stat st;
		if (fs_stat(argv[i], &st) < 0) {
			fprintf(stderr, "stat: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		static const char *const models[] = { "write-back", "write-through", "memory only" };
		printf("  file: %s\n", argv[i]);
		printf("  type: %s\n", st.type == LIBFS_T_DIR ? "directory" : "regular file");
		printf("  size: %llu bytes\n", (unsigned long long)st.size);
		printf("sectors: %llu (on disk, metadata included)\n", (unsigned long long)st.blocks);
		printf(" inode: %llu\n", (unsigned long long)st.ino);
		printf(" links: %u\n", st.nlink);
		printf("  mode: %04o\n", st.perm);
		printf("persist: %s\n", st.persist <= 2 ? models[st.persist] : "?");
		show_time("modify", st.mtime);
		show_time("change", st.ctime);
	}
	return status;
}
