/*
 * tee.c - copy standard input to standard output and to files.
 *   tee [-a] [FILE...]      -a: append to the files instead of replacing them
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "apps/textio.h"

#define MAX_FILES 16

static int write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);
		if (w <= 0)
			return -1;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int append = 0, status = 0, c;
	while ((c = text_getopt(argc, argv, "a")) != -1) {
		if (c != 'a')
			return text_bad_option("tee", c);
		append = 1;
	}
	int i = optind;
	if (argc - i > MAX_FILES) {
		fprintf(stderr, "tee: at most %d files\n", MAX_FILES);
		return 2;
	}
	int fds[MAX_FILES], nfd = 0;
	const char *names[MAX_FILES];
	for (; i < argc; i++) {
		int fd = open(argv[i], O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
		if (fd < 0) {
			fprintf(stderr, "tee: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			continue;
		}
		names[nfd] = argv[i];
		fds[nfd++] = fd;
	}
	static char buf[8192];
	ssize_t n;
	while ((n = read(0, buf, sizeof buf)) > 0) {
		if (write_all(1, buf, (size_t)n) < 0) {
			fprintf(stderr, "tee: write: %s\n", strerror(errno));
			status = 1;
		}
		for (int k = 0; k < nfd; k++)
			if (fds[k] >= 0 && write_all(fds[k], buf, (size_t)n) < 0) {
				fprintf(stderr, "tee: %s: %s\n", names[k], strerror(errno));
				close(fds[k]);
				fds[k] = -1;
				status = 1;
			}
	}
	if (n < 0) {
		fprintf(stderr, "tee: read: %s\n", strerror(errno));
		status = 1;
	}
	for (int k = 0; k < nfd; k++)
		if (fds[k] >= 0 && close(fds[k]) < 0) {
			fprintf(stderr, "tee: %s: %s\n", names[k], strerror(errno));
			status = 1;
		}
	return status;
}
