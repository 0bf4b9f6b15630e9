/*
 * textio.c - helpers of the text programs (textio.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "apps/textio.h"

FILE *text_open(const char *prog, const char *name)
{
	if (strcmp(name, "-") == 0)
		return stdin;
	FILE *f = fopen(name, "r");
	if (f == NULL)
		fprintf(stderr, "%s: %s: %s\n", prog, name, strerror(errno));
	return f;
}

void text_close(FILE *f)
{
	if (f != stdin)
		fclose(f);
}

ssize_t text_getline(char **buf, size_t *cap, FILE *f)
{
	size_t n = 0;
	int c;
	while ((c = getc(f)) != EOF) {
		if (n + 2 > *cap) {
			size_t ncap = *cap ? 2 * *cap : 256;
			char *nb = realloc(*buf, ncap);
			if (nb == NULL) {
				fprintf(stderr, "out of memory for a line of %zu bytes\n", n);
				exit(2);
			}
			*buf = nb;
			*cap = ncap;
		}
		(*buf)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (n == 0)
		return -1;
	(*buf)[n] = 0;
	return (ssize_t)n;
}

void text_put(const char *prog, const char *s, size_t n)
{
	if (fwrite(s, 1, n, stdout) != n) {
		fprintf(stderr, "%s: write: %s\n", prog, strerror(errno));
		exit(1);
	}
}
