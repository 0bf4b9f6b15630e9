/*
 * du.c - show the space files take on disk.
 *   du [-s] [PATH...]    KiB each directory takes with everything under it
 *                        (and each file named), from the sectors the file
 *                        system says each holds; -s: only a total per PATH
 * A sparse file takes less than its size (its holes take nothing); ls -l
 * shows the size, du the space.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include "apps/textio.h"

static int summary, status;

/* Sectors under path; prints directories (and path itself) unless -s. */
static unsigned long long walk(const char *path, int top, int depth)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "du: %s: %s\n", path, strerror(errno));
		status = 1;
		return 0;
	}
	unsigned long long n = (unsigned long long)st.st_blocks;
	if (S_ISDIR(st.st_mode) && depth < 64) {
		DIR *d = opendir(path);
		if (d == NULL) {
			fprintf(stderr, "du: %s: %s\n", path, strerror(errno));
			status = 1;
		} else {
			struct dirent *de;
			while ((de = readdir(d)) != NULL) {
				if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
					continue;
				char sub[512];
				int k = snprintf(sub, sizeof sub, "%s%s%s", path,
				                 path[strlen(path) - 1] == '/' ? "" : "/", de->d_name);
				if (k < 0 || (size_t)k >= sizeof sub) {
					fprintf(stderr, "du: %s/%s: name too long\n", path, de->d_name);
					status = 1;
					continue;
				}
				n += walk(sub, 0, depth + 1);
			}
			closedir(d);
		}
	}
	if ((!summary && (S_ISDIR(st.st_mode) || top)) || (summary && top))
		printf("%llu\t%s\n", (n + 1) / 2, path);
	return n;
}

int main(int argc, char **argv)
{
	int c;
	while ((c = text_getopt(argc, argv, "s")) != -1) {
		if (c == 's')
			summary = 1;
		else
			return text_bad_option("du", c);
	}
	if (optind >= argc)
		walk(".", 1, 0);
	for (int i = optind; i < argc; i++)
		walk(argv[i], 1, 0);
	return status;
}
