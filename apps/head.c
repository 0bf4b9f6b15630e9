/*
 * head.c - print the first lines of files.
 *   head [-n N | -N] [-c N] [FILE...]    the first N lines (default 10), or with
 *                                        -c the first N bytes; FILE - or none:
 *                                        standard input
 * It stops reading as soon as it has printed them, so in `yes | head -1`
 * the writer learns that nobody reads any more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/textio.h"

static int count_arg(const char *s, long *v)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (*s == 0 || *end != 0 || n < 0)
		return -1;
	*v = n;
	return 0;
}

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
	int bytes = 0, i = 1, status = 0;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		const char *v = NULL;
		if (strcmp(argv[i], "-n") == 0 || strcmp(argv[i], "-c") == 0) {
			bytes = argv[i][1] == 'c';
			v = i + 1 < argc ? argv[++i] : NULL;
		} else if (argv[i][1] >= '0' && argv[i][1] <= '9') {
			v = argv[i] + 1;
		}
		if (v == NULL || count_arg(v, &n) < 0) {
			fprintf(stderr, "usage: head [-n N | -N] [-c N] [FILE...]\n");
			return 2;
		}
	}
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
