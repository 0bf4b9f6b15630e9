/*
 * start.c - from crt0 to main: run constructors, set up the descriptor
 * table and stdio, call main, and exit with its status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "libos/sys.h"
#include "libos/fd.h"

extern char **environ;
extern void __libc_init_array(void);
int main(int argc, char **argv, char **envp);

static void flush_stdio(void)
{
	fflush(stdout);
	fflush(stderr);
}

void libos_start(int argc, char **argv, char **envp)
{
	environ = envp;
	fd_init();
	atexit(flush_stdio);
	__libc_init_array();
	exit(main(argc, argv, envp));
}

void _exit(int status)
{
	sys_exit(status);
}
