/*
 * grep.c - print the lines that match a pattern.
 *   grep [-vicnlqF] [-e PATTERN | PATTERN] [FILE...]
 *       PATTERN is a basic regular expression (apps/bre.h: . * ^ $ [...]
 *       \{m,n\} \( \) \1 ...), or with -F a fixed string
 *       -v  the lines that do not match      -c  only count them
 *       -i  letters in either case           -n  line numbers
 *       -l  only the names of files with one -q  nothing: just the status
 *       FILE - or none: standard input; with several, each line says its file
 *       Exit status: 0 a line was selected, 1 none, 2 trouble.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/bre.h"
#include "apps/textio.h"

static int invert, icase, count, number, names, quiet, fixed;
static const char *pattern;
static struct bre *re;
static char *folded_pattern;

static int matches(const char *line, size_t len)
{
	if (!fixed) {
		int r = bre_search(re, line, len);
		if (r < 0) {
			fprintf(stderr, "grep: the pattern is too complex for a line; taken as no match\n");
			return 0;
		}
		return r;
	}
	size_t pl = strlen(pattern);
	if (pl == 0)
		return 1;
	for (size_t i = 0; i + pl <= len; i++) {
		size_t k = 0;
		if (icase)
			while (k < pl && tolower((unsigned char)line[i + k]) == folded_pattern[k])
				k++;
		else
			while (k < pl && line[i + k] == pattern[k])
				k++;
		if (k == pl)
			return 1;
	}
	return 0;
}

/* Search one file; the number of lines selected. */
static long grep(FILE *f, const char *name)
{
	static char *line;
	static size_t cap;
	ssize_t len;
	long selected = 0, lineno = 0;
	while ((len = text_getline(&line, &cap, f)) >= 0) {
		lineno++;
		size_t body = (size_t)len;
		if (body > 0 && line[body - 1] == '\n')
			body--;
		if (matches(line, body) == invert)
			continue;
		selected++;
		if (quiet)
			exit(0);
		if (names) {
			printf("%s\n", name ? name : "(standard input)");
			return selected;
		}
		if (count)
			continue;
		if (name)
			printf("%s:", name);
		if (number)
			printf("%ld:", lineno);
		text_put("grep", line, body);
		text_put("grep", "\n", 1);
	}
	if (count) {
		if (name)
			printf("%s:", name);
		printf("%ld\n", selected);
	}
	return selected;
}

static int usage(void)
{
	fprintf(stderr, "usage: grep [-vicnlqF] [-e PATTERN | PATTERN] [FILE...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	int c;
	while ((c = text_getopt(argc, argv, "vicnlqFe:")) != -1) {
		switch (c) {
		case 'v': invert = 1; break;
		case 'i': icase = 1; break;
		case 'c': count = 1; break;
		case 'n': number = 1; break;
		case 'l': names = 1; break;
		case 'q': quiet = 1; break;
		case 'F': fixed = 1; break;
		case 'e': pattern = optarg; break;
		default: return text_bad_option("grep", c);
		}
	}
	int i = optind;
	if (pattern == NULL) {
		if (i == argc)
			return usage();
		pattern = argv[i++];
	}
	if (fixed) {
		folded_pattern = strdup(pattern);
		for (char *p = folded_pattern; p && *p; p++)
			*p = (char)tolower((unsigned char)*p);
	} else {
		char err[128];
		re = bre_compile(pattern, icase, err, sizeof err);
		if (re == NULL) {
			fprintf(stderr, "grep: %s: %s\n", pattern, err);
			return 2;
		}
	}
	long selected = 0;
	int trouble = 0, files = argc - i;
	if (files == 0)
		selected += grep(stdin, NULL);
	for (; i < argc; i++) {
		FILE *f = text_open("grep", argv[i]);
		if (f == NULL) {
			trouble = 1;
			continue;
		}
		selected += grep(f, files > 1 || names ? argv[i] : NULL);
		text_close(f);
	}
	if (trouble && !quiet)
		return 2;
	return selected ? 0 : trouble ? 2 : 1;
}
