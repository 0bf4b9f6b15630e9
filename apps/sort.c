/*
 * sort.c - sort lines.
 *   sort [-rnuf] [FILE...]     by byte value; -n by the number each line starts
 *                              with; -f letters in either case; -r backwards;
 *                              -u one of each run of equal lines.  FILE - or
 *                              none: standard input.  The lines are all held
 *                              in memory.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "apps/textio.h"

static int reverse, numeric, unique, fold;

struct line {
	char *s;
	size_t len;      /* without the newline */
	size_t seq;      /* input order: equal lines keep it */
};

static int compare(const struct line *a, const struct line *b)
{
	int c = 0;
	if (numeric) {
		double x = strtod(a->s, NULL), y = strtod(b->s, NULL);
		c = x < y ? -1 : x > y;
	}
	if (c == 0)
		c = fold ? strcasecmp(a->s, b->s) : strcmp(a->s, b->s);
	return reverse ? -c : c;
}

static int qcmp(const void *pa, const void *pb)
{
	const struct line *a = pa, *b = pb;
	int c = compare(a, b);
	if (c == 0)
		c = a->seq < b->seq ? -1 : a->seq > b->seq;
	return c;
}

int main(int argc, char **argv)
{
	int status = 0, c;
	while ((c = text_getopt(argc, argv, "rnuf")) != -1) {
		if (c == 'r')
			reverse = 1;
		else if (c == 'n')
			numeric = 1;
		else if (c == 'u')
			unique = 1;
		else if (c == 'f')
			fold = 1;
		else
			return text_bad_option("sort", c);
	}
	int i = optind;
	struct line *lines = NULL;
	size_t n = 0, cap = 0;
	char *buf = NULL;
	size_t bcap = 0;
	int files = argc - i;
	for (int k = i; k < argc || (files == 0 && k == i); k++) {
		FILE *f = files ? text_open("sort", argv[k]) : stdin;
		if (f == NULL) {
			status = 2;
			continue;
		}
		ssize_t len;
		while ((len = text_getline(&buf, &bcap, f)) >= 0) {
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				lines = realloc(lines, cap * sizeof *lines);
				if (lines == NULL) {
					fprintf(stderr, "sort: out of memory\n");
					return 2;
				}
			}
			size_t body = (size_t)len;
			if (body && buf[body - 1] == '\n')
				body--;
			lines[n].s = malloc(body + 1);
			if (lines[n].s == NULL) {
				fprintf(stderr, "sort: out of memory\n");
				return 2;
			}
			memcpy(lines[n].s, buf, body);
			lines[n].s[body] = 0;
			lines[n].len = body;
			lines[n].seq = n;
			n++;
		}
		if (files)
			text_close(f);
	}
	qsort(lines, n, sizeof *lines, qcmp);
	for (size_t k = 0; k < n; k++) {
		if (unique && k > 0 && compare(&lines[k - 1], &lines[k]) == 0)
			continue;
		text_put("sort", lines[k].s, lines[k].len);
		text_put("sort", "\n", 1);
	}
	return status;
}
