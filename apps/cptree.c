/*
 * cptree.c - copy a directory tree, between any two file systems.
 *   cptree SRC DST       DST (which must not exist) becomes a copy of SRC
 * Directories are made, files copied 64 KiB at a time; everything is made
 * durable (sync) before it reports.  With both file systems mounted in
 * this one process, their allocations interleave on the disk as the copy
 * goes - the thesis's finely interleaved file systems.
 * Exit status 1 if anything could not be copied.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long long files, dirs, bytes;

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY);
	if (in < 0) {
		fprintf(stderr, "cptree: %s: %s\n", from, strerror(errno));
		return 1;
	}
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (out < 0) {
		fprintf(stderr, "cptree: %s: %s\n", to, strerror(errno));
		close(in);
		return 1;
	}
	static char buf[65536];
	ssize_t n;
	int status = 0;
	while ((n = read(in, buf, sizeof buf)) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			fprintf(stderr, "cptree: %s: %s\n", to, strerror(errno));
			status = 1;
			break;
		}
		bytes += (unsigned long long)n;
	}
	if (n < 0) {
		fprintf(stderr, "cptree: %s: %s\n", from, strerror(errno));
		status = 1;
	}
	close(in);
	if (close(out) != 0) {
		fprintf(stderr, "cptree: %s: %s\n", to, strerror(errno));
		status = 1;
	}
	files++;
	return status;
}

static int copy_tree(const char *from, const char *to)
{
	if (mkdir(to, 0755) != 0) {
		fprintf(stderr, "cptree: %s: %s\n", to, strerror(errno));
		return 1;
	}
	dirs++;
	DIR *d = opendir(from);
	if (d == NULL) {
		fprintf(stderr, "cptree: %s: %s\n", from, strerror(errno));
		return 1;
	}
	int status = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char a[1100], b[1100];
		snprintf(a, sizeof a, "%s/%s", strcmp(from, "/") ? from : "", de->d_name);
		snprintf(b, sizeof b, "%s/%s", strcmp(to, "/") ? to : "", de->d_name);
		struct stat st;
		if (stat(a, &st) != 0) {
			fprintf(stderr, "cptree: %s: %s\n", a, strerror(errno));
			status = 1;
		} else if (S_ISDIR(st.st_mode)) {
			status |= copy_tree(a, b);
		} else {
			status |= copy_file(a, b);
		}
	}
	closedir(d);
	return status;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cptree SRC DST\n");
		return 2;
	}
	int status = copy_tree(argv[1], argv[2]);
	sync();
	printf("cptree: %llu files, %llu directories, %llu bytes\n", files, dirs, bytes);
	return status;
}
