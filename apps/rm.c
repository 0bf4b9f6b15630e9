/*
 * rm.c - remove files.
 *   rm [-r] PATH...       -r: directories too, with everything in them
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int recursive;

static int rm(const char *path)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "rm: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) == 0)
			return 0;
		fprintf(stderr, "rm: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!recursive) {
		fprintf(stderr, "rm: %s: is a directory (use -r)\n", path);
		return 1;
	}
	int status = 0;
	DIR *d = opendir(path);
	if (d == NULL) {
		fprintf(stderr, "rm: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* Collect names first: removing while reading would move the cursor. */
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		names = realloc(names, (n + 1) * sizeof *names);
		names[n] = malloc(strlen(path) + strlen(de->d_name) + 2);
		sprintf(names[n++], "%s/%s", path, de->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++) {
		status |= rm(names[i]);
		free(names[i]);
	}
	free(names);
	if (rmdir(path) < 0) {
		fprintf(stderr, "rm: %s: %s\n", path, strerror(errno));
		status = 1;
	}
	return status;
}

int main(int argc, char **argv)
{
	int i = 1, status = 0;
	if (i < argc && strcmp(argv[i], "-r") == 0) {
		recursive = 1;
		i++;
	}
	if (i == argc) {
		fprintf(stderr, "usage: rm [-r] PATH...\n");
		return 2;
	}
	for (; i < argc; i++)
		status |= rm(argv[i]);
	return status;
}
