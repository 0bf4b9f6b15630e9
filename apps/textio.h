/*
 * textio.h - what the text programs (head, tail, wc, grep, sort, tee, more,
 * date) share: their options' errors and counts (they read options with
 * getopt), opening a file argument ("-" is standard input) with a message
 * on failure, and reading lines of any length.
 */
#ifndef APPS_TEXTIO_H
#define APPS_TEXTIO_H

#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>      /* optarg, optind */

/* getopt(3) over the program's option letters (as for getopt), quietly
 * (text_bad_option speaks), with options ending at the first operand (POSIX
 * order, also where the C library would permute) and a missing value
 * returned as ':'. */
int text_getopt(int argc, char **argv, const char *letters);
/* text_getopt returned '?' or ':': "PROG: -x: unknown option" or "PROG: -n
 * needs a value", then the program's usage; returns 2, the status of a
 * usage error. */
int text_bad_option(const char *prog, int c);
/* s as a whole number from 0 to max into *out; -1 after "PROG: S: not a
 * number from 0 to MAX". */
int text_count(const char *prog, const char *s, long max, long *out);

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
