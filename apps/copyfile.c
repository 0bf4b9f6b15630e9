/*
 * copyfile.c - copying one file, shared by cp and mv (mv copies when the
 * two names are on different file systems).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	static char buf[65536];
	ssize_t n;
	int status = 0;
	while ((n = read(in, buf, sizeof buf)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			fprintf(stderr, "%s: %s: %s\n", prog, to, strerror(errno));
			status = 1;
			break;
		}
	}
	if (n < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, from, strerror(errno));
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
