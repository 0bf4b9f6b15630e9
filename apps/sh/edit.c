/*
 * edit.c - the shell's line editor: what a Unix terminal driver and
 * readline do between them, done here because the exokernel hands the
 * console to applications as raw bytes (kernel/console.c).
 *
 * Keys (docs/shell.md):
 *   Left/Right, Ctrl-B/Ctrl-F     move a character
 *   Home/End, Ctrl-A/Ctrl-E       to the start / end (under `make qemu`,
 *                                 QEMU takes Ctrl-A itself: press it twice)
 *   Backspace, Delete, Ctrl-D     erase before / under the cursor (Ctrl-D on
 *                                 an empty line: end of input)
 *   Ctrl-W, Ctrl-U, Ctrl-K        erase the word before the cursor, all before
 *                                 it, all after it
 *   Up/Down, Ctrl-P/Ctrl-N        the history (the last 100 lines)
 *   Tab                           complete a program name (first word) or a path
 *   Ctrl-L                        clear the screen
 *   Ctrl-C                        abandon the line
 *
 * The line is shown on one screen row: when it is longer than the terminal
 * is wide (COLUMNS, default 80) the row scrolls sideways with the cursor.
 * A change redraws the row (carriage return, prompt, the visible part,
 * erase to the end, cursor back), so only three escape sequences are used:
 * ESC[K, ESC[nC, and ESC[H ESC[2J for Ctrl-L; typing at the end of the line
 * just echoes the character.  Keys are read one byte per system call, so
 * what is typed after Enter stays in the console for whichever program
 * reads next (the program the line starts, say).
 *
 * More than size-1 characters: the rest is refused with a bell and the line
 * is rejected when Enter is pressed (EDIT_TOO_LONG), never cut silently.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/sh/sh.h"
#include "libos/exo.h"
#include "kernel/uapi/errno.h"

#define HISTORY  100
#define PATH_LEN 1024
#define KEY_INTR  -2
#define KEY_EOF   -1

enum {
	K_LEFT = 0x100, K_RIGHT, K_UP, K_DOWN, K_HOME, K_END, K_DELETE, K_NONE,
};

static void flush_out(void);

struct ed {
	char *buf;
	size_t size, len, pos, off;     /* off: the first character shown */
	const char *prompt;
	size_t plen;
	int too_long;
};

static char *history[HISTORY];
static int nhist;

/* ---- input: bytes from the console ------------------------------------------ */

static int getbyte(void)
{
	unsigned char c;
	/* The output must be on the screen before we wait for the next key. */
	flush_out();
	long r = exo_cons_read(&c, 1);
	if (r == K_E_INTR)
		return KEY_INTR;
	if (r <= 0)
		return KEY_EOF;
	return c;
}

/* A key: a byte, or one of K_* for an escape sequence. */
static int getkey(void)
{
	int c = getbyte();
	if (c != 0x1b)
		return c;
	int c1 = getbyte();
	if (c1 < 0)
		return c1;
	if (c1 != '[' && c1 != 'O')
		return K_NONE;                    /* Alt-something: ignored */
	/* A control sequence: parameter bytes (digits, ';' ...) then one final
	 * byte.  All of it is read, so a key we do not know (Ctrl-Right is
	 * ESC [ 1 ; 5 C, F5 is ESC [ 1 5 ~) leaves nothing behind to be typed
	 * into the line; a modifier (the 5) is ignored. */
	int n = 0, first = -1, c2;
	while ((c2 = getbyte()) >= 0x30 && c2 <= 0x3f) {
		if (c2 >= '0' && c2 <= '9') {
			if (n < 1000)
				n = n * 10 + (c2 - '0');
		} else if (first < 0) {
			first = n;                    /* the number before the first ';' */
		}
	}
	if (c2 < 0)
		return c2;
	if (first < 0)
		first = n;
	if (c2 == '~') {
		switch (first) {
		case 1: case 7: return K_HOME;
		case 4: case 8: return K_END;
		case 3:         return K_DELETE;
		default:        return K_NONE;
		}
	}
	switch (c2) {
	case 'A': return K_UP;
	case 'B': return K_DOWN;
	case 'C': return K_RIGHT;
	case 'D': return K_LEFT;
	case 'H': return K_HOME;
	case 'F': return K_END;
	default:  return K_NONE;
	}
}

/* ---- output: gathered, written at once ---------------------------------------- */

static char obuf[4096];
static size_t olen;

static void flush_out(void)
{
	if (olen)
		write(1, obuf, olen);
	olen = 0;
}

static void emit(const char *s, size_t n)
{
	while (n > 0) {
		if (olen == sizeof obuf)
			flush_out();
		size_t k = sizeof obuf - olen < n ? sizeof obuf - olen : n;
		memcpy(obuf + olen, s, k);
		olen += k;
		s += k;
		n -= k;
	}
}

static void emits(const char *s) { emit(s, strlen(s)); }

static int columns(void)
{
	const char *c = getenv("COLUMNS");
	int n = c ? atoi(c) : 0;
	return n >= 20 && n <= 1000 ? n : 80;
}

static void redraw(struct ed *e)
{
	size_t avail = (size_t)columns() - e->plen - 1;
	if (e->pos < e->off)
		e->off = e->pos;
	if (e->pos - e->off > avail)
		e->off = e->pos - avail;
	size_t show = e->len - e->off < avail ? e->len - e->off : avail;
	emits("\r");
	emits(e->prompt);
	emit(e->buf + e->off, show);
	emits("\x1b[K\r");
	size_t col = e->plen + e->pos - e->off;
	if (col > 0) {
		char mv[32];
		snprintf(mv, sizeof mv, "\x1b[%zuC", col);
		emits(mv);
	}
}

static void bell(void) { emits("\a"); }

/* ---- editing ---------------------------------------------------------------- */

static void insert(struct ed *e, const char *s, size_t n)
{
	if (e->len + n + 1 > e->size) {
		e->too_long = 1;
		bell();
		return;
	}
	memmove(e->buf + e->pos + n, e->buf + e->pos, e->len - e->pos);
	memcpy(e->buf + e->pos, s, n);
	e->len += n;
	e->pos += n;
	e->buf[e->len] = 0;
}

static void erase(struct ed *e, size_t from, size_t to)
{
	memmove(e->buf + from, e->buf + to, e->len - to);
	e->len -= to - from;
	e->buf[e->len] = 0;
	if (e->pos > to)
		e->pos -= to - from;
	else if (e->pos > from)
		e->pos = from;
}

static void set_line(struct ed *e, const char *s)
{
	size_t n = strlen(s);
	if (n + 1 > e->size)
		n = e->size - 1;
	memcpy(e->buf, s, n);
	e->buf[n] = 0;
	e->len = e->pos = n;
	e->off = 0;
}

void edit_history_add(const char *line)
{
	if (line[0] == 0 || (nhist > 0 && strcmp(history[nhist - 1], line) == 0))
		return;
	if (nhist == HISTORY) {
		free(history[0]);
		memmove(history, history + 1, (HISTORY - 1) * sizeof history[0]);
		nhist--;
	}
	history[nhist] = strdup(line);
	if (history[nhist])
		nhist++;
}

/* ---- completion -------------------------------------------------------------- */

struct cands {
	char **name;
	int *dir;
	int n, cap;
};

static void cand_add(struct cands *c, const char *name, int dir)
{
	for (int i = 0; i < c->n; i++)
		if (strcmp(c->name[i], name) == 0)
			return;
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 32;
		char **nn = realloc(c->name, (size_t)cap * sizeof *nn);
		int *nd = realloc(c->dir, (size_t)cap * sizeof *nd);
		if (nn)
			c->name = nn;
		if (nd)
			c->dir = nd;
		if (nn == NULL || nd == NULL)
			return;
		c->cap = cap;
	}
	c->name[c->n] = strdup(name);
	c->dir[c->n] = dir;
	if (c->name[c->n])
		c->n++;
}

static void cands_free(struct cands *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->name[i]);
	free(c->name);
	free(c->dir);
}

static void from_dir(struct cands *c, const char *dir, const char *prefix, int only_programs)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return;
	struct dirent *de;
	size_t pl = strlen(prefix);
	while ((de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, prefix, pl) != 0)
			continue;
		if (de->d_name[0] == '.' && (pl == 0 || prefix[0] != '.'))
			continue;
		if (only_programs && de->d_type == DT_DIR)
			continue;
		cand_add(c, de->d_name, de->d_type == DT_DIR);
	}
	closedir(d);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_cands(struct cands *c)
{
	char **sorted = malloc((size_t)c->n * sizeof *sorted);
	if (sorted == NULL)
		return;
	size_t width = 0;
	for (int i = 0; i < c->n; i++) {
		size_t w = strlen(c->name[i]) + (c->dir[i] ? 1 : 0);
		if (w > width)
			width = w;
		sorted[i] = c->name[i];
	}
	qsort(sorted, (size_t)c->n, sizeof *sorted, cmp_names);
	width += 2;
	int per_row = (int)((size_t)columns() / width);
	if (per_row < 1)
		per_row = 1;
	int rows = (c->n + per_row - 1) / per_row;
	emits("\n");
	for (int r = 0; r < rows; r++) {
		for (int k = 0; k < per_row; k++) {
			int i = k * rows + r;            /* down the columns, like ls */
			if (i >= c->n)
				continue;
			int dir = 0;
			for (int j = 0; j < c->n; j++)
				if (c->name[j] == sorted[i])
					dir = c->dir[j];
			char cell[300];
			snprintf(cell, sizeof cell, "%s%s", sorted[i], dir ? "/" : "");
			emits(cell);
			for (size_t s = strlen(cell); s < width && k + 1 < per_row; s++)
				emits(" ");
		}
		emits("\n");
	}
	free(sorted);
}

static int word_break(char ch)
{
	return ch == ' ' || ch == '\t' || ch == ';' || ch == '|' || ch == '&' || ch == '<' || ch == '>';
}

static void complete(struct ed *e)
{
	size_t ws = e->pos;
	while (ws > 0 && !word_break(e->buf[ws - 1]))
		ws--;
	size_t k = ws;
	while (k > 0 && (e->buf[k - 1] == ' ' || e->buf[k - 1] == '\t'))
		k--;
	int command = k == 0 || e->buf[k - 1] == ';' || e->buf[k - 1] == '|' || e->buf[k - 1] == '&';
	char word[PATH_LEN];
	size_t wl = e->pos - ws;
	if (wl >= sizeof word) {
		bell();
		return;
	}
	memcpy(word, e->buf + ws, wl);
	word[wl] = 0;

	struct cands c = { 0 };
	const char *prefix = word;
	char *slash = strrchr(word, '/');
	if (command && slash == NULL) {
		for (int i = 0; sh_builtins[i]; i++)
			if (strncmp(sh_builtins[i], word, wl) == 0)
				cand_add(&c, sh_builtins[i], 0);
		from_dir(&c, "/bin", word, 1);
	} else {
		char dir[PATH_LEN];
		if (slash == NULL) {
			strcpy(dir, ".");
		} else {
			size_t dl = (size_t)(slash - word);
			memcpy(dir, word, dl);
			dir[dl] = 0;
			if (dl == 0)
				strcpy(dir, "/");
			prefix = slash + 1;
		}
		from_dir(&c, dir, prefix, 0);
	}
	size_t pl = strlen(prefix);
	if (c.n == 0) {
		bell();
	} else if (c.n == 1) {
		insert(e, c.name[0] + pl, strlen(c.name[0] + pl));
		insert(e, c.dir[0] ? "/" : " ", 1);
	} else {
		/* The longest common beginning; if that adds nothing, show them all. */
		size_t common = strlen(c.name[0]);
		for (int i = 1; i < c.n; i++) {
			size_t j = 0;
			while (j < common && c.name[i][j] == c.name[0][j])
				j++;
			common = j;
		}
		if (common > pl) {
			insert(e, c.name[0] + pl, common - pl);
		} else {
			list_cands(&c);
			e->off = 0;
		}
	}
	cands_free(&c);
}

/* ---- the editor ----------------------------------------------------------------- */

int edit_line(const char *prompt, char *buf, size_t size)
{
	struct ed e = { .buf = buf, .size = size, .prompt = prompt, .plen = strlen(prompt) };
	static char scratch[SH_LINE_MAX];       /* the new line, while looking at history */
	int h = nhist;
	buf[0] = 0;
	emits(prompt);
	for (;;) {
		size_t old_len = e.len, old_off = e.off;
		int c = getkey();
		switch (c) {
		case KEY_EOF:
			emits("\n");
			flush_out();
			return EDIT_EOF;
		case KEY_INTR:
		case 3:                           /* Ctrl-C when nobody claimed it */
			e.pos = e.len;
			redraw(&e);
			emits("^C\n");
			flush_out();
			return EDIT_INTERRUPT;
		case '\r':
		case '\n':
			e.pos = e.len;
			redraw(&e);
			emits("\n");
			flush_out();
			return e.too_long ? EDIT_TOO_LONG : (int)e.len;
		case 4:                           /* Ctrl-D */
			if (e.len == 0) {
				emits("\n");
				flush_out();
				return EDIT_EOF;
			}
			/* fall through */
		case K_DELETE:
			if (e.pos < e.len)
				erase(&e, e.pos, e.pos + 1);
			break;
		case 0x7f:
		case '\b':
			if (e.pos > 0)
				erase(&e, e.pos - 1, e.pos);
			break;
		case 1: case K_HOME:  e.pos = 0; break;
		case 5: case K_END:   e.pos = e.len; break;
		case 2: case K_LEFT:  if (e.pos > 0) e.pos--; break;
		case 6: case K_RIGHT: if (e.pos < e.len) e.pos++; break;
		case 0x17: {                      /* Ctrl-W: the word before the cursor */
			size_t p = e.pos;
			while (p > 0 && (buf[p - 1] == ' ' || buf[p - 1] == '\t'))
				p--;
			while (p > 0 && buf[p - 1] != ' ' && buf[p - 1] != '\t')
				p--;
			erase(&e, p, e.pos);
			break;
		}
		case 0x15: erase(&e, 0, e.pos); break;       /* Ctrl-U */
		case 0x0b: erase(&e, e.pos, e.len); break;   /* Ctrl-K */
		case 0x0c:                                   /* Ctrl-L */
			emits("\x1b[H\x1b[2J");
			break;
		case 0x10: case K_UP:
			if (h == nhist)
				snprintf(scratch, sizeof scratch, "%s", buf);
			if (h > 0)
				set_line(&e, history[--h]);
			else
				bell();
			break;
		case 0x0e: case K_DOWN:
			if (h < nhist) {
				h++;
				set_line(&e, h == nhist ? scratch : history[h]);
			} else {
				bell();
			}
			break;
		case '\t':
			complete(&e);
			break;
		case K_NONE:
			break;
		default:
			if ((c >= 0x20 && c < 0x7f) || (c >= 0x80 && c <= 0xff)) {
				char ch = (char)c;        /* (UTF-8 bytes pass through) */
				insert(&e, &ch, 1);
				/* Typed at the end, with room: echo it and nothing else. */
				size_t avail = (size_t)columns() - e.plen - 1;
				if (e.len == old_len + 1 && e.pos == e.len && e.off == old_off &&
				    e.pos - e.off <= avail) {
					emit(&ch, 1);
					continue;
				}
			} else {
				bell();
			}
			break;
		}
		redraw(&e);
	}
}
