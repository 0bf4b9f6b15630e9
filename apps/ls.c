/*
 * ls.c - list directories.
 *   ls [-l] [PATH...]      -l: type and permissions, links, size, time of the
 *                          last change (UTC), persistence model, inode number
 * Names are sorted.  A file argument is listed as itself.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "libos/files.h"

static int longfmt;

static const char *model(int p)
{
	return p == LIBFS_P_WRITETHROUGH ? "through" : p == LIBFS_P_MEMORY ? "memory" : "back";
}

static void show(const char *dir, const char *name)
{
	if (!longfmt) {
		printf("%s\n", name);
		return;
	}
	char path[1100];
	snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") ? dir : "", name);
	struct libfs_stat st;
	if (fs_stat(path, &st) < 0) {
		printf("?          %s: %s\n", name, strerror(errno));
		return;
	}
	char mode[11], when[32];
	mode[0] = st.type == LIBFS_T_DIR ? 'd' : '-';
	for (int i = 0; i < 9; i++)
		mode[1 + i] = (st.perm >> (8 - i)) & 1 ? "rwxrwxrwx"[i] : '-';
	mode[10] = 0;
	time_t t = (time_t)(st.mtime / 1000000000u);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
	printf("%s %2u %10llu %s %-7s %8llu %s%s\n", mode, st.nlink, (unsigned long long)st.size,
	       when, model((int)st.persist), (unsigned long long)st.ino, name,
	       st.type == LIBFS_T_DIR ? "/" : "");
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		const char *slash = strrchr(path, '/');
		char dir[1024] = ".";
		if (slash) {
			snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
			if (dir[0] == 0)
				strcpy(dir, "/");
		}
		show(dir, slash ? slash + 1 : path);
		return 0;
	}
	DIR *d = opendir(path);
	if (d == NULL) {
		fprintf(stderr, "ls: %s: %s\n", path, strerror(errno));
		return 1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof *names);
		}
		names[n++] = strdup(de->d_name);
	}
	int err = errno;
	closedir(d);
	qsort(names, n, sizeof *names, cmp);
	for (size_t i = 0; i < n; i++) {
		show(path, names[i]);
		free(names[i]);
	}
	free(names);
	if (err) {
		fprintf(stderr, "ls: %s: %s\n", path, strerror(err));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1, status = 0;
	if (i < argc && strcmp(argv[i], "-l") == 0) {
		longfmt = 1;
		i++;
	}
	if (i == argc)
		return list(".");
	for (int first = i; i < argc; i++) {
		struct stat st;
		if (argc - first > 1 && stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			printf("%s%s:\n", i > first ? "\n" : "", argv[i]);
		status |= list(argv[i]);
	}
	return status;
}
