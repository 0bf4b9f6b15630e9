/*
 * mkfs.c - make a library file system on a disk unit.
 *   mkfs [-t TYPE] [OPTIONS]
 * TYPE is any libFS this program knows (the ones named in userfs/userfs.mk;
 * default unixfs); OPTIONS is its option string, e.g. unit=0,key=secret
 * (each libFS's header lists them).  Prints where the superblock went.  The
 * file system must not be mounted.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "libos/libfs.h"

static void usage(void)
{
	fprintf(stderr, "usage: mkfs [-t TYPE] [OPTIONS]\ntypes:");
	const struct libfs_ops *t;
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++)
		if (t->mkfs != NULL)
			fprintf(stderr, " %s", t->name);
	fprintf(stderr, "\n");
}

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
	if (i != argc || opts[0] == '-') {
		usage();
		return 2;
	}
	const struct libfs_ops *t = libfs_type(type);
	if (t == NULL || t->mkfs == NULL) {
		fprintf(stderr, "mkfs: %s: %s\n", type,
		        t == NULL ? "unknown file system type" : "cannot be made by mkfs");
		usage();
		return 2;
	}
	uint64_t sb;
	int r = t->mkfs(opts, &sb);
	if (r < 0) {
		fprintf(stderr, "mkfs: %s\n", strerror(-r));
		return 1;
	}
	printf("mkfs: %s made, superblock at sector %llu\n", type, (unsigned long long)sb);
	return 0;
}
