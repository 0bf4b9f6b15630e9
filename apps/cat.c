/*
 * cat.c - copy files (or standard input) to standard output.
 *   cat [FILE...]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int copy(int fd, const char *name)
{
	static char buf[16384];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		ssize_t off = 0;
		while (off < n) {
			ssize_t w = write(1, buf + off, (size_t)(n - off));
			if (w <= 0) {
				fprintf(stderr, "cat: write: %s\n", strerror(errno));
				return 1;
			}
			off += w;
		}
	}
	if (n < 0) {
		fprintf(stderr, "cat: %s: %s\n", name, strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 1)
		return copy(0, "standard input");
	int status = 0;
	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, "cat: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		status |= copy(fd, argv[i]);
		close(fd);
	}
	return status;
}
