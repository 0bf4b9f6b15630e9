/*
 * touch.c - make files, or set their modification time to now.
 *   touch FILE...       a missing FILE is made empty
 * The libFS interface has no call to set a time, so for a file that exists
 * touch truncates it to the size it already has: its bytes stay, and the
 * file system stamps it with the current time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	int status = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: touch FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_WRONLY | O_CREAT, 0644);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || ftruncate(fd, st.st_size) < 0) {
			fprintf(stderr, "touch: %s: %s\n", argv[i], strerror(errno));
			status = 1;
		}
		if (fd >= 0 && close(fd) < 0) {
			fprintf(stderr, "touch: %s: %s\n", argv[i], strerror(errno));
			status = 1;
		}
	}
	return status;
}
