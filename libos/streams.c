/*
 * streams.c - stdio streams opened on files are flushed at exit.
 *
 * POSIX says exit() flushes every open stream; picolibc's tiny stdio keeps
 * no list of them, so a program that writes with fprintf and never calls
 * fclose would lose what is still buffered.  The link wraps fopen, fdopen,
 * freopen and fclose (libos/libos.mk: -Wl,--wrap=...) so that the open
 * streams are remembered here; libos_start's exit handler flushes them
 * before the file systems are written back.
 */
#include <stdio.h>
#include <stdlib.h>
#include "libos/files.h"

FILE *__real_fopen(const char *path, const char *mode);
FILE *__real_fdopen(int fd, const char *mode);
FILE *__real_freopen(const char *path, const char *mode, FILE *f);
int __real_fclose(FILE *f);

#define MAX_STREAMS 64

static FILE *streams[MAX_STREAMS];

static FILE *remember(FILE *f)
{
	for (int i = 0; f && i < MAX_STREAMS; i++)
		if (streams[i] == NULL || streams[i] == f) {
			streams[i] = f;
			break;
		}
	return f;
}

static void forget(FILE *f)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i] == f)
			streams[i] = NULL;
}

FILE *__wrap_fopen(const char *path, const char *mode) { return remember(__real_fopen(path, mode)); }
FILE *__wrap_fdopen(int fd, const char *mode) { return remember(__real_fdopen(fd, mode)); }

FILE *__wrap_freopen(const char *path, const char *mode, FILE *f)
{
	forget(f);
	return remember(__real_freopen(path, mode, f));
}

int __wrap_fclose(FILE *f)
{
	forget(f);
	return __real_fclose(f);
}

void libos_flush_streams(void)
{
	for (int i = 0; i < MAX_STREAMS; i++)
		if (streams[i])
			fflush(streams[i]);
}
