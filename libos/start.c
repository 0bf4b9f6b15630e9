/*
 * start.c - from crt0 to main: run constructors, set up the descriptor
 * table, the exodisk client and the file systems (mount table, working
 * directory and redirections inherited through the environment), answer -h
 * with the program's usage, call main, and exit with its status.  At exit
 * stdio is flushed first, then every file system is written back and
 * unmounted; if that fails, the exit status is 1 instead of 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libos/sys.h"
#include "libos/fd.h"
#include "libos/files.h"

void edc_sys_init(void);

extern char **environ;

extern void __libc_init_array(void);
int main(int argc, char **argv, char **envp);

void libos_flush_streams(void);

static void flush_stdio(void)
{
	libos_flush_streams();
	fflush(stdout);
	fflush(stderr);
}

/* The program's usage, generated from the comment at the top of its
 * source (tools/progdoc.c, apps/apps.mk); programs built otherwise have none. */
extern const char libos_prog_usage[] __attribute__((weak));

/* `PROG -h` (or --help) prints the usage and does nothing else: main never
 * runs.  Only the first argument counts, so `echo a -h` still echoes. */
static void usage_check(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "-h") != 0 && strcmp(argv[1], "--help") != 0))
		return;
	if (libos_prog_usage)
		fputs(libos_prog_usage, stdout);
	else
		printf("%s: no usage is known for this program\n", argv[0]);
	exit(0);
}

const char *libos_prog_name = "libos";

void libos_start(int argc, char **argv, char **envp)
{
	environ = envp;
	if (argc > 0 && argv[0] != NULL)
		libos_prog_name = argv[0];
	fd_init();
	edc_sys_init();
	/* atexit handlers run last-registered first: stdio, then files. */
	atexit(libos_fs_exit);
	atexit(flush_stdio);
	__libc_init_array();
	libos_fs_init();
	usage_check(argc, argv);
	exit(main(argc, argv, envp));
}

void _exit(int status)
{
	/* A program whose files could not be written back at exit did not
	 * succeed, whatever main returned (libos_fs_exit). */
	sys_exit(status == 0 && libos_exit_failed ? 1 : status);
}
