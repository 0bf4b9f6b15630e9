/*
 * console.c - the console as a file descriptor, with the line discipline
 * that a Unix kernel would keep in its tty driver: the exokernel hands the
 * library OS raw bytes, and the library OS echoes them, handles backspace,
 * and delivers whole lines (one longer than 512 bytes in pieces, none
 * lost).  Ctrl-D at the start of a line is end of file.  (The shell edits
 * its own lines: apps/sh/edit.c.)
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include "libos/fd.h"
#include "libos/sys.h"

#define LINE_MAX_LEN 512

static char line[LINE_MAX_LEN];
static size_t line_len, line_off;     /* a completed line being handed out */
static int eof_pending;

static void echo(const char *s, size_t n) { sys_cons_write(s, n); }

/* Read raw bytes until a full line (or EOF) is in `line`. */
static void fill_line(void)
{
	line_len = line_off = 0;
	for (;;) {
		char c;
		long r = sys_cons_read(&c, 1);
		if (r <= 0) { eof_pending = 1; return; }
		if (c == '\r') c = '\n';
		if (c == 4) {                         /* Ctrl-D */
			if (line_len == 0) eof_pending = 1;
			return;
		}
		if (c == 0x7f || c == '\b') {         /* erase one character */
			if (line_len > 0) { line_len--; echo("\b \b", 3); }
			continue;
		}
		if (c == 0x15) {                      /* Ctrl-U: erase the line */
			while (line_len > 0) { line_len--; echo("\b \b", 3); }
			continue;
		}
		line[line_len++] = c;
		echo(&c, 1);
		/* A line longer than the buffer is handed out in pieces: the
		 * reader gets every byte, only not in one read. */
		if (c == '\n' || line_len == LINE_MAX_LEN) return;
	}
}

static ssize_t console_read(void *obj, void *buf, size_t n)
{
	(void)obj;
	if (n == 0) return 0;
	if (line_off == line_len) {
		if (eof_pending) { eof_pending = 0; return 0; }
		fill_line();
		if (line_len == 0) { eof_pending = 0; return 0; }
	}
	size_t k = line_len - line_off;
	if (k > n) k = n;
	memcpy(buf, line + line_off, k);
	line_off += k;
	return (ssize_t)k;
}

static ssize_t console_write(void *obj, const void *buf, size_t n)
{
	(void)obj;
	long r = sys_cons_write(buf, n);
	if (r < 0) { errno = EFAULT; return -1; }
	return r;
}

static int console_fstat(void *obj, struct stat *st)
{
	(void)obj;
	memset(st, 0, sizeof *st);
	st->st_mode = S_IFCHR | 0620;
	return 0;
}

const struct fd_ops console_ops = {
	.read = console_read,
	.write = console_write,
	.lseek = NULL,
	.close = NULL,
	.fstat = console_fstat,
};
