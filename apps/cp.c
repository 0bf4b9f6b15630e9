/*
 * cp.c - copy a file.
 *   cp SOURCE DEST        DEST may be a directory: the copy goes inside it
 * The copy is made durable (fsync) before cp reports success.  Whole
 * 4 KiB blocks of zeros become holes in the copy, so a sparse file stays
 * sparse (apps/copyfile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int copy_file(const char *prog, const char *from, const char *to);

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: cp SOURCE DEST\n");
		return 2;
	}
	return copy_file("cp", argv[1], argv[2]);
}
