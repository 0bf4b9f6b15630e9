/*
 * mkfs.c - make a library file system on a disk unit.
 *   mkfs [-t unixfs|kvfs] [OPTIONS]
 * OPTIONS is the file system's option string, e.g. unit=0,key=secret
 * (userfs/unixfs/unixfs.h and userfs/kvfs/kvfs.h list them).  Prints where
 * the superblock went.  The file system must not be mounted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "userfs/unixfs/unixfs.h"
#include "userfs/kvfs/kvfs.h"

int main(int argc, char **argv)
{
	const char *type = "unixfs", *opts = "";
	int i = 1;
	if (i + 1 < argc && strcmp(argv[i], "-t") == 0) {
		type = argv[i + 1];
		i += 2;
	}
	if (i < argc)
		opts = argv[i++];
	if (i != argc) {
		fprintf(stderr, "usage: mkfs [-t unixfs|kvfs] [OPTIONS]\n");
		return 2;
	}
	uint64_t sb;
	int r;
	if (strcmp(type, "unixfs") == 0)
		r = unixfs_mkfs(opts, &sb);
	else if (strcmp(type, "kvfs") == 0)
		r = kvfs_mkfs(opts, &sb);
	else {
		fprintf(stderr, "mkfs: %s: unknown file system type\n", type);
		return 2;
	}
	if (r < 0) {
		fprintf(stderr, "mkfs: %s\n", strerror(-r));
		return 1;
	}
	printf("mkfs: %s made, superblock at sector %llu\n", type, (unsigned long long)sb);
	return 0;
}
