/*
 * hexdump.c - show bytes in hexadecimal and as text.
 *   hexdump [-s OFFSET] [-n LENGTH] [FILE]
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long long skip = 0, length = -1;
	const char *name = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
			skip = strtoll(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			length = strtoll(argv[++i], NULL, 0);
		else if (name == NULL)
			name = argv[i];
		else {
			fprintf(stderr, "usage: hexdump [-s OFFSET] [-n LENGTH] [FILE]\n");
			return 2;
		}
	}
	int fd = name ? open(name, O_RDONLY) : 0;
	if (fd < 0) {
		fprintf(stderr, "hexdump: %s: %s\n", name, strerror(errno));
		return 1;
	}
	if (skip > 0 && lseek(fd, skip, SEEK_SET) < 0) {
		fprintf(stderr, "hexdump: %s: %s\n", name ? name : "input", strerror(errno));
		return 1;
	}
	unsigned char line[16];
	long long off = skip;
	for (;;) {
		size_t want = sizeof line;
		if (length >= 0 && (long long)want > length - (off - skip))
			want = (size_t)(length - (off - skip));
		if (want == 0)
			break;
		size_t n = 0;
		ssize_t r = 1;
		while (n < want && (r = read(fd, line + n, want - n)) > 0)
			n += (size_t)r;
		if (r < 0) {
			fprintf(stderr, "hexdump: %s\n", strerror(errno));
			return 1;
		}
		if (n == 0)
			break;
		printf("%08llx ", off);
		for (size_t i = 0; i < 16; i++) {
			if (i == 8)
				putchar(' ');
			if (i < n)
				printf(" %02x", line[i]);
			else
				printf("   ");
		}
		printf("  |");
		for (size_t i = 0; i < n; i++)
			putchar(isprint(line[i]) ? line[i] : '.');
		printf("|\n");
		off += (long long)n;
		if (n < want)
			break;
	}
	printf("%08llx\n", off);
	return 0;
}
