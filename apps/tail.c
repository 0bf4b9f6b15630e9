/*
 * tail.c - print the last lines of files.
 *   tail [-n N | -N] [FILE...]    the last N lines (default 10); FILE - or
 *                                 none: standard input
 * Only the last N lines are kept in memory while reading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/textio.h"

static int tail(FILE *f, long n)
{
	if (n == 0)
		return 0;
	char **ring = calloc((size_t)n, sizeof *ring);
	size_t *lens = calloc((size_t)n, sizeof *lens);
	if (ring == NULL || lens == NULL) {
		fprintf(stderr, "tail: out of memory for %ld lines\n", n);
		return 1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long seen = 0;
	while ((len = text_getline(&line, &cap, f)) >= 0) {
		long slot = seen % n;
		free(ring[slot]);
		ring[slot] = malloc((size_t)len);
		if (ring[slot] == NULL) {
			fprintf(stderr, "tail: out of memory\n");
			return 1;
		}
		memcpy(ring[slot], line, (size_t)len);
		lens[slot] = (size_t)len;
		seen++;
	}
	long first = seen > n ? seen - n : 0;
	for (long k = first; k < seen; k++)
		text_put("tail", ring[k % n], lens[k % n]);
	for (long k = 0; k < n; k++)
		free(ring[k]);
	free(ring);
	free(lens);
	free(line);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 10;
	int status = 0, c;
	/* The old form -N first, as the first argument only. */
	if (argc > 1 && argv[1][0] == '-' && argv[1][1] >= '0' && argv[1][1] <= '9') {
		if (text_count("tail", argv[1] + 1, 10000000, &n) < 0)
			return 2;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	while ((c = text_getopt(argc, argv, "n:")) != -1) {
		if (c != 'n')
			return text_bad_option("tail", c);
		if (text_count("tail", optarg, 10000000, &n) < 0)
			return 2;
	}
	int i = optind;
	if (i == argc)
		return tail(stdin, n);
	for (int first = i; i < argc; i++) {
		FILE *f = text_open("tail", argv[i]);
		if (f == NULL) {
			status = 1;
			continue;
		}
		if (argc - first > 1)
			printf("%s==> %s <==\n", i > first ? "\n" : "", argv[i]);
		status |= tail(f, n);
		text_close(f);
	}
	return status;
}
