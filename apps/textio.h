/*
 * textio.h - what the text programs (head, tail, wc, grep, sort, tee, more)
 * share: opening a file argument ("-" is standard input) with a message on
 * failure, and reading lines of any length.
 */
#ifndef APPS_TEXTIO_H
#define APPS_TEXTIO_H

#include <stdio.h>
#include <sys/types.h>

/* Open name for reading ("-": standard input); NULL after a message
 * "PROG: NAME: why" on standard error. */
FILE *text_open(const char *prog, const char *name);
void  text_close(FILE *f);
/* The next line, newline included (the last may lack one), in *buf grown
 * as needed; its length, or -1 at the end.  NUL bytes are kept. */
ssize_t text_getline(char **buf, size_t *cap, FILE *f);
/* Write n bytes to standard output; on failure a message and exit(1). */
void text_put(const char *prog, const char *s, size_t n);

#endif
