/*
 * yes.c - print a line again and again, until whoever reads it stops.
 *   yes [WORD...]        the words separated by spaces (default: y)
 * When nobody is left to read (`yes | head -1`), the write fails and the
 * library OS ends the program with status 141 (libos/pipe.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char line[4096], buf[8192];
	size_t n = 0;
	if (argc == 1) {
		strcpy(line, "y");
		n = 1;
	}
	for (int i = 1; i < argc; i++) {
		size_t k = strlen(argv[i]);
		if (n + k + 2 > sizeof line) {
			fprintf(stderr, "yes: the line is longer than %zu bytes\n", sizeof line - 2);
			return 2;
		}
		if (i > 1)
			line[n++] = ' ';
		memcpy(line + n, argv[i], k);
		n += k;
	}
	line[n++] = '\n';
	/* As many whole lines as fit in the buffer, written at once. */
	size_t fill = 0;
	while (fill + n <= sizeof buf) {
		memcpy(buf + fill, line, n);
		fill += n;
	}
	for (;;) {
		ssize_t w = write(1, buf, fill);
		if (w < 0) {
			fprintf(stderr, "yes: write: %s\n", strerror(errno));
			return 1;
		}
	}
}
