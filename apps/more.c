/*
 * more.c - show text a screenful at a time.
 *   more [FILE...]      FILE - or none: standard input (a pipe: `ls | more`)
 *       At --More--: Space the next screen, Enter the next line, q to stop.
 *       The screen is LINES rows by COLUMNS (default 24 by 80).  When the
 *       output is not the console, more copies everything, as cat would.
 * The keys come straight from the console (raw, not echoed), so they work
 * while the text arrives through a pipe.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/textio.h"
#include "libos/exo.h"

static int rows, cols, used;    /* rows used on this screen */

static int env_num(const char *name, int def, int lo, int hi)
{
	const char *v = getenv(name);
	int n = v ? atoi(v) : 0;
	return n >= lo && n <= hi ? n : def;
}

/* Wait at the prompt; 0 to stop, else how many rows may come next. */
static int prompt(void)
{
	fputs("\x1b[7m--More--\x1b[0m", stdout);
	fflush(stdout);
	for (;;) {
		char c;
		if (exo_cons_read(&c, 1) <= 0)
			return 0;
		fputs("\r\x1b[K", stdout);
		if (c == 'q' || c == 'Q' || c == 4)
			return 0;
		if (c == '\r' || c == '\n')
			return 1;
		if (c == ' ')
			return rows - 1;
		/* Anything else: say what works, and wait again. */
		fputs("\x1b[7m--More-- (Space: a screen, Enter: a line, q: quit)\x1b[0m", stdout);
		fflush(stdout);
	}
}

/* 1 to go on, 0 when the reader has had enough. */
static int page(FILE *f)
{
	static char *line;
	static size_t cap;
	ssize_t len;
	while ((len = text_getline(&line, &cap, f)) >= 0) {
		size_t body = (size_t)len - (line[len - 1] == '\n');
		int need = body == 0 ? 1 : (int)((body + (size_t)cols - 1) / (size_t)cols);
		if (used + need > rows - 1) {
			int more = prompt();
			if (more == 0)
				return 0;
			used = rows - 1 - more;
			if (used < 0)
				used = 0;
		}
		text_put("more", line, body);
		text_put("more", "\n", 1);
		used += need;
	}
	return 1;
}

int main(int argc, char **argv)
{
	rows = env_num("LINES", 24, 3, 1000);
	cols = env_num("COLUMNS", 80, 10, 1000);
	if (!isatty(1)) {
		/* Not to a person: nothing to wait for. */
		char buf[4096];
		size_t n;
		int status = 0;
		for (int i = 1; i < argc || (argc == 1 && i == 1); i++) {
			FILE *f = argc == 1 ? stdin : text_open("more", argv[i]);
			if (f == NULL) {
				status = 1;
				continue;
			}
			while ((n = fread(buf, 1, sizeof buf, f)) > 0)
				text_put("more", buf, n);
			if (argc > 1)
				text_close(f);
		}
		return status;
	}
	if (argc == 1 && isatty(0)) {
		fprintf(stderr, "usage: more [FILE...]   (or: PROGRAM | more)\n");
		return 2;
	}
	int status = 0;
	for (int i = 1; i < argc || (argc == 1 && i == 1); i++) {
		FILE *f = argc == 1 ? stdin : text_open("more", argv[i]);
		if (f == NULL) {
			status = 1;
			continue;
		}
		if (argc > 2) {
			printf("::::::::::::::\n%s\n::::::::::::::\n", argv[i]);
			used += 3;
		}
		int go_on = page(f);
		if (argc > 1)
			text_close(f);
		if (!go_on)
			break;
	}
	fflush(stdout);
	return status;
}
