/*
 * mv.c - rename a file or directory.
 *   mv SOURCE DEST        DEST may be a directory: SOURCE moves inside it
 * Across file systems (EXDEV) a file is copied, made durable, then removed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int copy_file(const char *prog, const char *from, const char *to);

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: mv SOURCE DEST\n");
		return 2;
	}
	const char *from = argv[1], *to = argv[2];
	char target[1100];
	struct stat st;
	if (stat(to, &st) == 0 && S_ISDIR(st.st_mode)) {
		const char *base = strrchr(from, '/');
		snprintf(target, sizeof target, "%s/%s", to, base ? base + 1 : from);
		to = target;
	}
	if (rename(from, to) == 0)
		return 0;
	if (errno != EXDEV) {
		fprintf(stderr, "mv: %s: %s\n", from, strerror(errno));
		return 1;
	}
	if (copy_file("mv", from, to) != 0)
		return 1;
	if (unlink(from) < 0) {
		fprintf(stderr, "mv: %s: %s\n", from, strerror(errno));
		return 1;
	}
	return 0;
}
