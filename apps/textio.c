/*
 * textio.c - helpers of the text programs (textio.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/textio.h"

/* The usage tools/progdoc made from the program's comment (apps/apps.mk). */
extern const char libos_prog_usage[] __attribute__((weak));

int text_getopt(int argc, char **argv, const char *letters)
{
	char opts[32];
	snprintf(opts, sizeof opts, "+:%s", letters);
	opterr = 0;
	optopt = 0;
	int c = getopt(argc, argv, opts);
	if (c == '?' && (optopt <= ' ' || optopt == '?')) {
		/* Some C libraries (newlib's) leave optopt unset here: find the
		 * first letter that is not an option ourselves. */
		for (int i = 1; i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0; i++)
			for (const char *o = argv[i] + 1; *o; o++) {
				const char *l = strchr(letters, *o);
				if (l == NULL || *o == ':') {
					optopt = (unsigned char)*o;
					return c;
				}
				if (l[1] == ':') {
					i += o[1] == 0;     /* the value is the next argument */
					break;
				}
			}
	}
	return c;
}

int text_bad_option(const char *prog, int c)
{
	if (c == ':')
		fprintf(stderr, "%s: -%c needs a value\n", prog, optopt);
	else if (optopt > ' ' && optopt != '?' && optopt < 127)
		fprintf(stderr, "%s: -%c: unknown option\n", prog, optopt);
	else
		fprintf(stderr, "%s: unknown option\n", prog);
	/* The usage without its first line (the one-line description). */
	const char *u = libos_prog_usage ? strchr(libos_prog_usage, '\n') : NULL;
	if (u != NULL)
		fputs(u + 1, stderr);
	return 2;
}

int text_count(const char *prog, const char *s, long max, long *out)
{
	char *end;
	errno = 0;
	long n = strtol(s, &end, 10);
	if (*s == 0 || *end != 0 || errno != 0 || n < 0 || n > max) {
		fprintf(stderr, "%s: %s: not a number from 0 to %ld\n", prog, s, max);
		return -1;
	}
	*out = n;
	return 0;
}

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
