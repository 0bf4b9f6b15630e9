/*
 * start.c - from crt0 to main: run constructors, set up the descriptor
 * table, the exodisk client and the file systems (mount table, working
 * directory and redirections inherited through the environment), call main,
 * and exit with its status.  At exit stdio is flushed first, then every file
 * system is written back and unmounted.
 */
#include <stdio.h>
#include <stdlib.h>
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

void libos_start(int argc, char **argv, char **envp)
{
	environ = envp;
	fd_init();
	edc_sys_init();
	/* atexit handlers run last-registered first: stdio, then files. */
	atexit(libos_fs_exit);
	atexit(flush_stdio);
	__libc_init_array();
	libos_fs_init();
	exit(main(argc, argv, envp));
}

void _exit(int status)
{
	sys_exit(status);
}
