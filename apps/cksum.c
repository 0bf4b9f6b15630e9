/*
 * cksum.c - checksums of files, as POSIX cksum computes them (the CRC-32
 * of IEEE 802.3 over the bytes and then the length), so the numbers can be
 * compared with the host's `cksum`.
 *   cksum [-r] PATH...     -r: every file under a directory, recursively
 * Prints "CRC SIZE PATH" per file.  Exit status 1 if a file could not be
 * read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint32_t table[256];

static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i << 24;
		for (int k = 0; k < 8; k++)
			c = c & 0x80000000u ? c << 1 ^ 0x04C11DB7u : c << 1;
		table[i] = c;
	}
}

static uint32_t crc_add(uint32_t crc, const uint8_t *p, size_t n)
{
	while (n--)
		crc = crc << 8 ^ table[(crc >> 24 ^ *p++) & 0xFF];
	return crc;
}

static int sum_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "cksum: %s: %s\n", path, strerror(errno));
		return 1;
	}
	static uint8_t buf[65536];
	uint32_t crc = 0;
	uint64_t size = 0;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		crc = crc_add(crc, buf, (size_t)n);
		size += (uint64_t)n;
	}
	close(fd);
	if (n < 0) {
		fprintf(stderr, "cksum: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* Then the length, least significant byte first, as few as it takes. */
	for (uint64_t len = size; len > 0; len >>= 8) {
		uint8_t b = (uint8_t)len;
		crc = crc_add(crc, &b, 1);
	}
	printf("%lu %llu %s\n", (unsigned long)(uint32_t)~crc, (unsigned long long)size, path);
	return 0;
}

static int walk(const char *path, int recurse)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "cksum: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode))
		return sum_file(path);
	if (!recurse) {
		fprintf(stderr, "cksum: %s: is a directory\n", path);
		return 1;
	}
	DIR *d = opendir(path);
	if (d == NULL) {
		fprintf(stderr, "cksum: %s: %s\n", path, strerror(errno));
		return 1;
	}
	int status = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char sub[1100];
		snprintf(sub, sizeof sub, "%s/%s", strcmp(path, "/") ? path : "", de->d_name);
		status |= walk(sub, 1);
	}
	closedir(d);
	return status;
}

int main(int argc, char **argv)
{
	int recurse = 0, i = 1, status = 0;
	if (i < argc && strcmp(argv[i], "-r") == 0) {
		recurse = 1;
		i++;
	}
	if (i == argc) {
		fprintf(stderr, "usage: cksum [-r] PATH...\n");
		return 2;
	}
	make_table();
	for (; i < argc; i++)
		status |= walk(argv[i], recurse);
	return status;
}
