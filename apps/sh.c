/*
 * sh.c - the shell.
 *   sh               interactive: prompt, read a line, run it, repeat
 *   sh -c 'LINE'     run LINE and exit with the status of its last command
 *   sh FILE          run the lines of FILE, then exit likewise
 * A line holds commands and pipelines (`a | b`), separated by ';', '&&',
 * '||' or ended by '&' (in the background); redirections, quotes, $VAR;
 * builtins such as cd, export, jobs, fg, kill; everything else is a program
 * in /bin.  docs/shell.md is the manual; `help` lists it all.
 *
 * This file reads the lines: with the line editor (apps/sh/edit.c) when a
 * person is at the console, from -c or a file otherwise.  Parsing is
 * apps/sh/parse.c, running apps/sh/run.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "apps/sh/sh.h"
#include "libos/exo.h"
#include "libos/files.h"
#include "libos/fd.h"

static void run_line(const char *line)
{
	struct pipeline pl;
	/* The whole line is read before any of it runs, so that a syntax error
	 * anywhere runs nothing.  (Running parses again, pipeline by pipeline,
	 * so that $? and $X see what ran before them.) */
	const char *check = line;
	int r;
	sh_parse_begin();
	while ((r = sh_parse(&check, &pl, sh_last_status)) > 0)
		;
	if (r < 0) {
		sh_last_status = 2;
		return;
	}
	sh_parse_begin();
	sh_interrupted = 0;
	while (!sh_exit_now && !sh_interrupted) {
		int r = sh_parse(&line, &pl, sh_last_status);
		if (r == 0)
			break;
		if (r < 0) {
			sh_last_status = 2;
			break;
		}
		sh_last_status = sh_run(&pl);
	}
}

#define SCRIPT_MAX (256 * 1024)

/* The lines of a script, or of standard input when it is not the console.
 * All of it is read first and the file closed: a program the script runs
 * may need the file system the script is on (unixfs allows one process at
 * a time). */
static int run_stream(int fd, const char *name)
{
	char *text = malloc(SCRIPT_MAX + 1);
	size_t len = 0;
	ssize_t n;
	if (text == NULL) {
		fprintf(stderr, "sh: %s: out of memory\n", name);
		return 2;
	}
	while (len < SCRIPT_MAX && (n = read(fd, text + len, SCRIPT_MAX - len)) > 0)
		len += (size_t)n;
	if (len == SCRIPT_MAX) {
		fprintf(stderr, "sh: %s: longer than %d bytes: not run\n", name, SCRIPT_MAX);
		free(text);
		return 2;
	}
	text[len] = 0;
	if (fd != 0)
		close(fd);
	else
		libos_fd_null(0);           /* let go of a redirected file */
	fs_release();
	int lineno = 0;
	for (char *line = text; *line && !sh_exit_now; ) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		lineno++;
		if (strlen(line) >= SH_LINE_MAX) {
			fprintf(stderr, "sh: %s: line %d is longer than %d characters: not run\n", name,
			        lineno, SH_LINE_MAX - 1);
			sh_last_status = 2;
		} else {
			run_line(line);
			if (sh_interrupted) {
				free(text);
				return 130;
			}
		}
		line = nl ? nl + 1 : line + strlen(line);
	}
	free(text);
	sh_wait_all();
	return sh_last_status;
}

/* At start-up, say plainly when the root file system cannot be used, and
 * what to do about it: `ls: /: No such device` helps nobody. */
static void check_root(void)
{
	struct stat st;
	if (stat("/", &st) == 0) {
		fs_release();
		return;
	}
	int err = errno;
	const char *type, *prefix, *opts;
	int mounted, have_root = 0;
	for (int i = 0; fs_mount_info(i, &prefix, &type, &opts, &mounted) == 0; i++)
		if (strcmp(prefix, "/") == 0)
			have_root = 1;
	fprintf(stderr, "sh: the root file system cannot be used: %s.\n", strerror(err));
	if (!have_root || exo_kinfo()->ndisks == 0) {
		fprintf(stderr, "  There is no disk to hold it: boot with one (make qemu makes "
		        "build/disk0.img),\n  or name a file system with the mounts= boot option.\n");
	} else if (err == ENODEV) {
		fprintf(stderr, "  Disk unit 0 holds no unixfs (a blank disk, or its exodisk did not mount:\n"
		        "  see the kernel's messages above).  To make a file system on it, run\n"
		        "      mkfs\n"
		        "  or, on the host, remove build/disk0.img and run make qemu again for the\n"
		        "  default image with the sample files.\n");
	} else if (err == EACCES) {
		fprintf(stderr, "  Disk unit 0's unixfs belongs to another key: mount it with its key,\n"
		        "      mount / unixfs unit=0,key=KEY\n");
	} else if (err == EBUSY) {
		fprintf(stderr, "  Another program has it mounted; it is free again when that ends.\n");
	} else {
		fprintf(stderr, "  It may be damaged.  To check it, run\n"
		        "      fsck\n"
		        "  (fsck -r repairs what it can); mkfs makes a new, empty one.\n");
	}
	fs_release();
}

static int interactive(void)
{
	static char line[SH_LINE_MAX];
	sh_interactive = 1;
	sh_run_init();
	printf("exodisk shell; 'help' lists the builtins and programs\n");
	fflush(stdout);
	check_root();
	while (!sh_exit_now) {
		sh_notify_jobs();
		int r = edit_line("$ ", line, sizeof line);
		if (r == EDIT_EOF)
			break;
		if (r == EDIT_INTERRUPT) {
			sh_last_status = 130;
			continue;
		}
		if (r == EDIT_TOO_LONG) {
			fprintf(stderr, "sh: the line is longer than %d characters: not run\n", SH_LINE_MAX - 1);
			sh_last_status = 2;
			continue;
		}
		edit_history_add(line);
		run_line(line);
	}
	return sh_last_status;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "-B") == 0)
		return sh_builtin_main(argc - 2, argv + 2);
	if (argc >= 2 && strcmp(argv[1], "-c") == 0) {
		if (argc < 3) {
			fprintf(stderr, "sh: -c needs a line to run\n");
			return 2;
		}
		if (strlen(argv[2]) >= SH_LINE_MAX) {
			fprintf(stderr, "sh: the line is longer than %d characters: not run\n", SH_LINE_MAX - 1);
			return 2;
		}
		sh_run_init();
		run_line(argv[2]);
		if (sh_interrupted)
			return 130;
		/* Background commands finish before a scripted shell exits. */
		sh_wait_all();
		return sh_last_status;
	}
	if (argc == 2) {
		int fd = open(argv[1], O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, "sh: %s: %s\n", argv[1], strerror(errno));
			return 127;
		}
		sh_run_init();
		return run_stream(fd, argv[1]);
	}
	if (argc > 2) {
		fprintf(stderr, "usage: sh [-c LINE | FILE]\n");
		return 2;
	}
	if (!isatty(0)) {
		sh_run_init();
		return run_stream(0, "standard input");
	}
	return interactive();
}
