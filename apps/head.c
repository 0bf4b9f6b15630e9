/*
 * head.c - print the first lines of files.
 *   head [-n N | -N] [-c N] [FILE...]    the first N lines (default 10), or with
 *                                        -c the first N bytes; FILE - or none:
 *                                        standard input
 * It stops reading as soon as it has printed them, so in `yes | head -1`
 * the writer learns that nobody reads any more.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/textio.h"

static void head(FILE *f, long n, int bytes)
{
	static char *line;
	static size_t cap;
	if (bytes) {
		char buf[4096];
		while (n > 0) {
			size_t k = fread(buf, 1, n < (long)sizeof buf ? (size_t)n : sizeof buf, f);
			if (k == 0)
				break;
			text_put("head", buf, k);
			n -= (long)k;
		}
		return;
	}
	ssize_t len;
	for (long i = 0; i < n && (len = text_getline(&line, &cap, f)) >= 0; i++)
		text_put("head", line, (size_t)len);
}

int main(int argc, char **argv)
{
	long n = 10;
	int bytes = 0, status = 0, c;
	/* The old form -N first, as the first argument only. */
	if (argc > 1 && argv[1][0] == '-' && argv[1][1] >= '0' && argv[1][1] <= '9') {
		if (text_count("head", argv[1] + 1, LONG_MAX, &n) < 0)
			return 2;
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	while ((c = text_getopt(argc, argv, "n:c:")) != -1) {
		if (c != 'n' && c != 'c')
			return text_bad_option("head", c);
		bytes = c == 'c';
		if (text_count("head", optarg, LONG_MAX, &n) < 0)
			return 2;
	}
	int i = optind;
	if (i == argc)
		head(stdin, n, bytes);
	for (int first = i; i < argc; i++) {
		FILE *f = text_open("head", argv[i]);
		if (f == NULL) {
			status = 1;
			continue;
		}
		if (argc - first > 1)
			printf("%s==> %s <==\n", i > first ? "\n" : "", argv[i]);
		head(f, n, bytes);
		text_close(f);
	}
	return status;
}
