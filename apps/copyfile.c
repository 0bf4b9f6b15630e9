/*
 * copyfile.c - copying one file, shared by cp and mv (mv copies when the
 * two names are on different file systems).  A whole block of zeros
 * (4 KiB, aligned in the file) is not written: the copy gets a hole there
 * (as `cp --sparse=always`), so a sparse file copies into the space its
 * data takes, not its size; a final ftruncate gives the copy its size when
 * it ends in a hole.  Zeros in a file system without holes still read
 * back as zeros (it fills the gap itself), so the copy is exact anywhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BLOCK 4096

static int all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/* Is [p, p + n) at file offset `at` a whole block of zeros to leave as a
 * hole? */
static int hole(int sparse, const char *p, size_t n, off_t at)
{
	return sparse && n == BLOCK && at % BLOCK == 0 && all_zero(p, n);
}

int copy_file(const char *prog, const char *from, const char *to)
{
	char target[1100];
	struct stat st;
	if (stat(to, &st) == 0 && S_ISDIR(st.st_mode)) {
		const char *base = strrchr(from, '/');
		snprintf(target, sizeof target, "%s/%s", to, base ? base + 1 : from);
		to = target;
	}
	int in = open(from, O_RDONLY);
	if (in < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, from, strerror(errno));
		return 1;
	}
	if (fstat(in, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %s: %s\n", prog, from, strerror(EISDIR));
		close(in);
		return 1;
	}
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, to, strerror(errno));
		close(in);
		return 1;
	}
	/* Holes only where the copy can seek (a regular file). */
	struct stat ost;
	int sparse = fstat(out, &ost) == 0 && S_ISREG(ost.st_mode);
	static char buf[65536];
	ssize_t n = 0;
	int status = 0;
	off_t pos = 0;             /* the file offset of buf[0] */
	off_t end = 0;             /* the end of what was written */
	while (status == 0 && (n = read(in, buf, sizeof buf)) > 0) {
		size_t i = 0;
		while (i < (size_t)n) {
			/* The piece up to the next block boundary, then whole blocks
			 * while none is a hole: one write. */
			size_t len = BLOCK - (size_t)((pos + (off_t)i) % BLOCK);
			if (len > (size_t)n - i)
				len = (size_t)n - i;
			if (hole(sparse, buf + i, len, pos + (off_t)i)) {
				i += len;
				continue;
			}
			size_t j = i + len;
			while (j < (size_t)n) {
				size_t l2 = (size_t)n - j < BLOCK ? (size_t)n - j : BLOCK;
				if (hole(sparse, buf + j, l2, pos + (off_t)j))
					break;
				j += l2;
			}
			if ((end != pos + (off_t)i && lseek(out, pos + (off_t)i, SEEK_SET) < 0) ||
			    write(out, buf + i, j - i) != (ssize_t)(j - i)) {
				fprintf(stderr, "%s: %s: %s\n", prog, to, strerror(errno));
				status = 1;
				break;
			}
			end = pos + (off_t)j;
			i = j;
		}
		pos += n;
	}
	if (n < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, from, strerror(errno));
		status = 1;
	}
	if (status == 0 && end < pos && ftruncate(out, pos) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, to, strerror(errno));
		status = 1;
	}
	if (status == 0 && fsync(out) < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, to, strerror(errno));
		status = 1;
	}
	close(in);
	if (close(out) < 0 && status == 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, to, strerror(errno));
		status = 1;
	}
	return status;
}
