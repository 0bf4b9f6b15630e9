/*
 * fstest.c - the POSIX layer and picolibc's stdio on files, in the guest.
 *
 *   fstest posix DIR        POSIX calls and their errors, under DIR
 *   fstest stdio DIR        fopen/fprintf/fgets/fseek/fread/fwrite, under DIR
 *   fstest noclose FILE     write FILE with stdio and exit without fclose
 *   fstest fill DIR         write files until the disk is full: -ENOSPC from
 *                           write(), earlier files intact, room after unlink
 *   fstest exdev A B        rename A to B must fail with EXDEV
 * Prints "ok: ..." for each check and "FAIL: ..." for each failure; the exit
 * status is the number of failures.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "libos/files.h"

static int failures;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

/* Did the call fail with this errno? */
static int fails_with(int r, int e)
{
	return r < 0 && errno == e;
}

static char *at(const char *dir, const char *name)
{
	static char buf[4][1200];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", strcmp(dir, "/") ? dir : "", name);
	return buf[k];
}

static void posix(const char *d)
{
	char buf[100];
	int fd = open(at(d, "p1"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	check(fd >= 3, "open O_CREAT gives the lowest free descriptor above stdio");
	check(write(fd, "0123456789", 10) == 10, "write");
	check(lseek(fd, 0, SEEK_CUR) == 10, "lseek SEEK_CUR after write");
	check(lseek(fd, 2, SEEK_SET) == 2 && read(fd, buf, 3) == 3 && memcmp(buf, "234", 3) == 0,
	      "lseek SEEK_SET then read");
	check(pwrite(fd, "ab", 2, 20) == 2, "pwrite past the end");
	check(pread(fd, buf, 22, 0) == 22 && buf[12] == 0 && buf[20] == 'a', "pread: hole reads as zeros");
	check(lseek(fd, 0, SEEK_CUR) == 5, "pread/pwrite leave the offset alone");
	check(ftruncate(fd, 4) == 0 && lseek(fd, 0, SEEK_END) == 4, "ftruncate");
	check(fsync(fd) == 0, "fsync");
	struct stat st;
	check(fstat(fd, &st) == 0 && st.st_size == 4 && S_ISREG(st.st_mode), "fstat");
	int fd2 = dup(fd);
	check(fd2 > fd && lseek(fd2, 0, SEEK_CUR) == lseek(fd, 0, SEEK_CUR), "dup shares the offset");
	check(close(fd) == 0 && write(fd2, "X", 1) == 1, "the duplicate survives the original's close");
	check(close(fd2) == 0, "close the duplicate");
	check(fails_with(close(fd2), EBADF), "close twice: EBADF");
	check(fails_with(read(fd2, buf, 1), EBADF), "read a closed descriptor: EBADF");
	check(fails_with(read(-1, buf, 1), EBADF) && fails_with(write(999, buf, 1), EBADF),
	      "bad descriptor numbers: EBADF");
	fd = open(at(d, "p1"), O_RDONLY);
	check(fails_with(write(fd, "x", 1), EBADF), "write to O_RDONLY: EBADF");
	close(fd);
	fd = open(at(d, "p1"), O_WRONLY | O_APPEND);
	check(write(fd, "end", 3) == 3 && lseek(fd, 0, SEEK_CUR) == 8, "O_APPEND writes at the end");
	close(fd);
	check(stat(at(d, "p1"), &st) == 0 && st.st_size == 8, "stat");
	check(truncate(at(d, "p1"), 3) == 0 && stat(at(d, "p1"), &st) == 0 && st.st_size == 3,
	      "truncate(path) shortens");
	fd = open(at(d, "p1"), O_RDWR);
	check(truncate(at(d, "p1"), 8) == 0 && pread(fd, buf, 8, 0) == 8 && buf[2] == '2' &&
	      buf[3] == 0 && buf[7] == 0, "truncate(path) lengthens with zeros");
	check(pwrite(fd, "5678", 4, 4) == 4 && close(fd) == 0, "write over the new zeros");
	check(fails_with(truncate(at(d, "nope"), 0), ENOENT), "truncate(path) of a missing file: ENOENT");
	check(fails_with(truncate(at(d, "p1"), -1), EINVAL), "truncate(path) to a negative length: EINVAL");
	check(fails_with(open(at(d, "p1"), O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST), "O_EXCL: EEXIST");
	check(fails_with(open(at(d, "nope"), O_RDONLY), ENOENT), "open missing: ENOENT");
	check(fails_with(stat(at(d, "nope/deeper"), &st), ENOENT), "stat under a missing directory: ENOENT");
	check(fails_with(stat(at(d, "p1/x"), &st), ENOTDIR), "a file used as a directory: ENOTDIR");
	static char longname[300];
	memset(longname, 'n', 260);
	check(fails_with(open(at(d, longname), O_WRONLY | O_CREAT, 0644), ENAMETOOLONG),
	      "a 260-byte name: ENAMETOOLONG");
	check(mkdir(at(d, "sub"), 0755) == 0, "mkdir");
	check(fails_with(mkdir(at(d, "sub"), 0755), EEXIST), "mkdir existing: EEXIST");
	check(rename(at(d, "p1"), at(d, "sub/p2")) == 0, "rename into a directory");
	check(fails_with(rmdir(at(d, "sub")), ENOTEMPTY), "rmdir non-empty: ENOTEMPTY");
	check(fails_with(unlink(at(d, "sub")), EISDIR), "unlink a directory: EISDIR");
	check(fails_with(open(at(d, "sub"), O_WRONLY), EISDIR), "open a directory for writing: EISDIR");
	check(fails_with(truncate(at(d, "sub"), 0), EISDIR), "truncate(path) of a directory: EISDIR");
	check(fails_with(rmdir(at(d, "sub/p2")), ENOTDIR), "rmdir a file: ENOTDIR");
	DIR *dir = opendir(at(d, "sub"));
	struct dirent *de;
	int found = 0, others = 0;
	while (dir && (de = readdir(dir)) != NULL) {
		if (strcmp(de->d_name, "p2") == 0 && de->d_type == DT_REG)
			found++;
		else if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			others++;
	}
	check(dir != NULL && found == 1 && others == 0, "opendir/readdir");
	check(dir && closedir(dir) == 0, "closedir");
	check(opendir(at(d, "sub/p2")) == NULL && errno == ENOTDIR, "opendir a file: ENOTDIR");
	char cwd[200];
	check(chdir(at(d, "sub")) == 0 && getcwd(cwd, sizeof cwd) && stat("p2", &st) == 0,
	      "chdir, then relative paths");
	check(chdir("..") == 0 && stat("sub/p2", &st) == 0, "chdir ..");
	check(unlink(at(d, "sub/p2")) == 0 && rmdir(at(d, "sub")) == 0, "unlink and rmdir");
	check(fails_with(unlink(at(d, "sub")), ENOENT), "unlink missing: ENOENT");
}

static void stdio(const char *d)
{
	FILE *f = fopen(at(d, "s1"), "w");
	check(f != NULL, "fopen w");
	for (int i = 0; f && i < 1000; i++)
		fprintf(f, "line %d of the stdio test\n", i);
	check(f && fclose(f) == 0, "fprintf 1000 lines, fclose");
	f = fopen(at(d, "s1"), "r");
	char line[100];
	int n = 0, ok = 1;
	while (f && fgets(line, sizeof line, f)) {
		char want[100];
		snprintf(want, sizeof want, "line %d of the stdio test\n", n);
		ok &= strcmp(line, want) == 0;
		n++;
	}
	check(f && n == 1000 && ok, "fgets reads them back");
	check(f && fseek(f, 5, SEEK_SET) == 0 && fgetc(f) == '0' && ftell(f) == 6, "fseek, fgetc, ftell");
	if (f)
		fclose(f);
	f = fopen(at(d, "s1"), "a");
	check(f && fputs("appended\n", f) >= 0 && fclose(f) == 0, "fopen a, fputs");
	struct stat st;
	check(stat(at(d, "s1"), &st) == 0 && st.st_size > 25000, "size after append");
	static unsigned char big[200000], back[200000];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 31 + (i >> 10));
	f = fopen(at(d, "s2"), "w+");
	check(f && fwrite(big, 1, sizeof big, f) == sizeof big, "fwrite 200000 bytes");
	check(f && fseek(f, 0, SEEK_SET) == 0 && fread(back, 1, sizeof back, f) == sizeof back &&
	      memcmp(big, back, sizeof big) == 0, "fread them back");
	if (f)
		fclose(f);
	check(fopen(at(d, "missing"), "r") == NULL && errno == ENOENT, "fopen missing: ENOENT");
	check(remove(at(d, "s1")) == 0 && remove(at(d, "s2")) == 0, "remove");
}

static void fill(const char *d)
{
	static char buf[65536];
	memset(buf, 'f', sizeof buf);
	int n = 0, err = 0;
	for (; n < 100000 && err == 0; n++) {
		char name[32];
		snprintf(name, sizeof name, "fill%d", n);
		int fd = open(at(d, name), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			err = errno;
			break;
		}
		for (int k = 0; k < 16 && err == 0; k++)
			if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
				err = errno;
		if (close(fd) < 0 && err == 0)
			err = errno;
	}
	printf("fstest: %d files before the disk filled\n", n);
	check(err == ENOSPC, "a full disk is ENOSPC");
	struct stat st;
	check(stat(at(d, "fill0"), &st) == 0 && st.st_size == 16 * 65536, "earlier files intact");
	check(unlink(at(d, "fill0")) == 0 && unlink(at(d, "fill1")) == 0, "unlink two");
	sync();
	int fd = open(at(d, "again"), O_WRONLY | O_CREAT, 0644);
	check(fd >= 0 && write(fd, buf, sizeof buf) == (ssize_t)sizeof buf && close(fd) == 0,
	      "room again after unlink");
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "fill%d", i);
		unlink(at(d, name));
	}
	unlink(at(d, "again"));
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: fstest posix|stdio|noclose|fill|exdev ...\n");
		return 2;
	}
	if (strcmp(argv[1], "posix") == 0)
		posix(argv[2]);
	else if (strcmp(argv[1], "stdio") == 0)
		stdio(argv[2]);
	else if (strcmp(argv[1], "fill") == 0)
		fill(argv[2]);
	else if (strcmp(argv[1], "noclose") == 0) {
		FILE *f = fopen(argv[2], "w");
		if (f == NULL)
			return 1;
		fprintf(f, "written without fclose\n");
		return 0;                 /* exit must flush and write it back */
	} else if (strcmp(argv[1], "exdev") == 0 && argc == 4) {
		check(fails_with(rename(argv[2], argv[3]), EXDEV), "rename across mounts: EXDEV");
	} else {
		fprintf(stderr, "fstest: bad arguments\n");
		return 2;
	}
	printf("fstest: %d failures\n", failures);
	return failures;
}
