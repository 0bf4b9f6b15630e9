/*
 * truncate.c - set the size of files, making them if missing.
 *   truncate -s SIZE FILE...    SIZE in bytes, or with K, M, G or T (powers
 *                               of 1024); +SIZE grows by that much, -SIZE
 *                               shrinks (not below 0)
 * A file grown this way reads as zeros past its old end; on unixfs the new
 * part is a hole and takes no space (stat shows the sectors it holds, df
 * the free space).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "apps/textio.h"

/* "[+-]N[KMGT]" into *n and the sign ('+', '-' or 0); -1 if malformed. */
static int parse_size(const char *s, uint64_t *n, int *sign)
{
	*sign = *s == '+' || *s == '-' ? *s++ : 0;
	if (*s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	if (*end != 0) {
		const char *units = "KMGT";
		const char *u = strchr(units, *end);
		if (u == NULL || end[1] != 0)
			return -1;
		shift = 10 * (int)(u - units + 1);
	}
	if (errno != 0 || (shift && v > (UINT64_MAX >> shift)) || (v << shift) > INT64_MAX)
		return -1;
	*n = (uint64_t)v << shift;
	return 0;
}

int main(int argc, char **argv)
{
	const char *size = NULL;
	int c;
	while ((c = text_getopt(argc, argv, "s:")) != -1) {
		if (c == 's')
			size = optarg;
		else
			return text_bad_option("truncate", c);
	}
	uint64_t n;
	int sign;
	if (size == NULL || optind >= argc) {
		fprintf(stderr, "usage: truncate -s SIZE FILE...\n");
		return 2;
	}
	if (parse_size(size, &n, &sign) < 0) {
		fprintf(stderr, "truncate: %s: not a size\n", size);
		return 2;
	}
	int status = 0;
	for (int i = optind; i < argc; i++) {
		int fd = open(argv[i], O_WRONLY | O_CREAT, 0644);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0) {
			fprintf(stderr, "truncate: %s: %s\n", argv[i], strerror(errno));
			status = 1;
			if (fd >= 0)
				close(fd);
			continue;
		}
		uint64_t cur = (uint64_t)st.st_size, len = n;
		if (sign == '+')
			len = cur + n;
		else if (sign == '-')
			len = cur > n ? cur - n : 0;
		if (len > INT64_MAX || ftruncate(fd, (off_t)len) < 0) {
			fprintf(stderr, "truncate: %s: %s\n", argv[i], len > INT64_MAX ? strerror(EFBIG) : strerror(errno));
			status = 1;
		}
		if (close(fd) < 0) {
			fprintf(stderr, "truncate: %s: %s\n", argv[i], strerror(errno));
			status = 1;
		}
	}
	return status;
}
