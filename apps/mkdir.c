/*
 * mkdir.c - make directories.
 *   mkdir [-p] DIR...     -p: make missing parents too, and allow existing
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int make(const char *path, int parents)
{
	if (mkdir(path, 0755) == 0 || (parents && errno == EEXIST))
		return 0;
	if (parents && errno == ENOENT) {
		char up[1024];
		snprintf(up, sizeof up, "%s", path);
		char *slash = strrchr(up, '/');
		if (slash && slash != up) {
			*slash = 0;
			if (make(up, 1) == 0 && mkdir(path, 0755) == 0)
				return 0;
		}
	}
	fprintf(stderr, "mkdir: %s: %s\n", path, strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	int i = 1, parents = 0, status = 0;
	if (i < argc && strcmp(argv[i], "-p") == 0) {
		parents = 1;
		i++;
	}
	if (i == argc) {
		fprintf(stderr, "usage: mkdir [-p] DIR...\n");
		return 2;
	}
	for (; i < argc; i++)
		status |= make(argv[i], parents);
	return status;
}
