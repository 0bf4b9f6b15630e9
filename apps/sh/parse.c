/*
 * parse.c - a line into pipelines.
 *
 * The grammar, a small part of the POSIX shell's:
 *
 *   line      = pipeline { (';' | '&' | '&&' | '||') pipeline } [ '#' comment ]
 *   pipeline  = command { '|' command }
 *   command   = { NAME=value } word { word | redirection }
 *   redirection = '<' word | '>' word | '>>' word | '2>' word | '2>>' word
 *               | '2>&1' | '>&2'
 *
 * Words are split on blanks; '...' quotes literally; "..." quotes but
 * expands $ and takes \" \\ \$ as escapes; a backslash outside quotes
 * escapes the next character.  $NAME and ${NAME} are environment variables
 * ("" when unset), $? the last status, $$ the shell's pid, $! the last
 * background job's.  A value is never split into several words.
 *
 * A line is parsed one pipeline at a time, just before it runs, so that
 * `false; echo $?` sees false's status and `X=1; echo $X` sees X.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/sh/sh.h"

#define WORDS_BYTES (8 * SH_LINE_MAX + 4096)

static char words[WORDS_BYTES];
static char *out, *out_end;
static int overflow;
static int pending_after = AFTER_ANY;   /* the '&&' or '||' that ended the last pipeline */

static void put(char c)
{
	if (out < out_end)
		*out++ = c;
	else
		overflow = 1;
}

static void puts_(const char *s)
{
	while (*s)
		put(*s++);
}

static int name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

static int special(char c)
{
	return c == 0 || c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' ||
	       c == '<' || c == '>';
}

/* Expand the $ expression at *inp (pointing at '$'); advances past it. */
static void dollar(const char **inp, int status)
{
	const char *in = *inp + 1;
	char num[24];
	if (*in == '?') {
		snprintf(num, sizeof num, "%d", status);
		puts_(num);
		in++;
	} else if (*in == '$') {
		snprintf(num, sizeof num, "%d", (int)getpid());
		puts_(num);
		in++;
	} else if (*in == '!') {
		if (sh_last_bg > 0) {
			snprintf(num, sizeof num, "%d", sh_last_bg);
			puts_(num);
		}
		in++;
	} else if (*in == '{' && name_start(in[1])) {
		const char *name = in + 1, *e = name;
		while (name_char(*e))
			e++;
		if (*e != '}') {
			put('$');              /* not a variable: keep it as it was */
			*inp = *inp + 1;
			return;
		}
		char var[128];
		snprintf(var, sizeof var, "%.*s", (int)(e - name), name);
		const char *v = getenv(var);
		if (v)
			puts_(v);
		in = e + 1;
	} else if (name_start(*in)) {
		const char *e = in;
		while (name_char(*e))
			e++;
		char var[128];
		snprintf(var, sizeof var, "%.*s", (int)(e - in), in);
		const char *v = getenv(var);
		if (v)
			puts_(v);
		in = e;
	} else {
		put('$');
	}
	*inp = in;
}

/* One word at *inp into the buffer.  Returns the word, or NULL when it
 * expanded to nothing without quotes (such a word disappears), or sets
 * *err on an unterminated quote. */
static char *word(const char **inp, int status, int *err)
{
	const char *in = *inp;
	char *start = out;
	int solid = 0;          /* quotes or literal characters: a word even if empty */
	while (!special(*in)) {
		if (*in == '\'') {
			solid = 1;
			for (in++; *in && *in != '\''; )
				put(*in++);
			if (*in != '\'') {
				fprintf(stderr, "sh: syntax error: a ' is not closed\n");
				*err = 1;
				return NULL;
			}
			in++;
		} else if (*in == '"') {
			solid = 1;
			for (in++; *in && *in != '"'; ) {
				if (*in == '$') {
					dollar(&in, status);
					continue;
				}
				if (*in == '\\' && (in[1] == '"' || in[1] == '\\' || in[1] == '$'))
					in++;
				put(*in++);
			}
			if (*in != '"') {
				fprintf(stderr, "sh: syntax error: a \" is not closed\n");
				*err = 1;
				return NULL;
			}
			in++;
		} else if (*in == '$') {
			const char *before = in;
			char *o = out;
			dollar(&in, status);
			if (out != o && in - before == 1)
				solid = 1;         /* a lone '$' stays a character */
		} else if (*in == '\\' && in[1]) {
			solid = 1;
			in++;
			put(*in++);
		} else {
			solid = 1;
			put(*in++);
		}
	}
	*inp = in;
	put(0);
	if (overflow) {          /* start may be past the buffer's end: read nothing */
		fprintf(stderr, "sh: the line is too long once its variables are expanded\n");
		*err = 1;
		return NULL;
	}
	if (!solid && start[0] == 0) {
		out = start;
		return NULL;
	}
	return start;
}

/* Is the raw text at in an assignment NAME=...? */
static int assignment(const char *in)
{
	if (!name_start(*in))
		return 0;
	while (name_char(*in))
		in++;
	return *in == '=';
}

static void set_text(struct pipeline *pl, const char *from, const char *to)
{
	while (from < to && (*from == ' ' || *from == '\t'))
		from++;
	while (to > from && (to[-1] == ' ' || to[-1] == '\t' || to[-1] == '\n'))
		to--;
	size_t n = (size_t)(to - from);
	if (n >= sizeof pl->text)
		n = sizeof pl->text - 1;
	memcpy(pl->text, from, n);
	pl->text[n] = 0;
}

static int syntax(const char *what)
{
	fprintf(stderr, "sh: syntax error: %s\n", what);
	return -1;
}

void sh_parse_begin(void)
{
	pending_after = AFTER_ANY;
}

int sh_parse(const char **linep, struct pipeline *pl, int status)
{
	memset(pl, 0, sizeof *pl);
	out = words;
	out_end = words + sizeof words;
	overflow = 0;
	const char *in = *linep;
	pl->after = pending_after;
	pending_after = AFTER_ANY;
	const char *text_start = in;
	struct command *c = &pl->cmd[0];
	pl->n = 1;
	int target = -1, mode = 0;      /* a redirection waiting for its word */
	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\n')
			in++;
		char ch = *in;
		int end_cmd = ch == 0 || ch == '#' || ch == ';' || ch == '&' || ch == '|';
		if (end_cmd && target >= 0)
			return syntax("a redirection has no file");
		if (end_cmd) {
			int empty = c->argc == 0;
			if (empty && (c->redir[0] || c->redir[1] || c->redir[2]))
				return syntax("a redirection without a command");
			if (empty && c->nassign && (pl->n > 1 || (ch == '|' && in[1] != '|')))
				return syntax("NAME=value alone in a pipeline");
			if (ch == '|' && in[1] != '|') {
				if (empty)
					return syntax("'|' without a command before it");
				if (pl->n == SH_STAGES) {
					fprintf(stderr, "sh: a pipeline may have at most %d commands\n", SH_STAGES);
					return -1;
				}
				in++;
				c = &pl->cmd[pl->n++];
				continue;
			}
			if (empty && !c->nassign) {
				if (pl->n > 1)
					return syntax("'|' without a command after it");
				if (ch == ';') {         /* an empty command */
					in++;
					text_start = in;
					continue;
				}
				if (ch == '&' || ch == '|')
					return syntax(ch == '&' ? "'&' without a command" : "'||' without a command");
				/* end of the line */
				*linep = in;
				return 0;
			}
			set_text(pl, text_start, in);
			if (ch == '&' && in[1] == '&') {
				pending_after = AFTER_SUCCESS;
				in += 2;
			} else if (ch == '|') {
				pending_after = AFTER_FAILURE;
				in += 2;
			} else if (ch == '&') {
				pl->background = 1;
				in++;
			} else if (ch == ';') {
				in++;
			} else if (ch == '#') {
				while (*in)
					in++;
			}
			if (pending_after != AFTER_ANY) {
				const char *t = in;
				while (*t == ' ' || *t == '\t' || *t == '\n')
					t++;
				if (*t == 0 || *t == '#' || *t == ';' || *t == '&' || *t == '|')
					return syntax("'&&' or '||' without a command after it");
			}
			*linep = in;
			return 1;
		}
		/* Redirections: < > >> 2> 2>> 2>&1 >&2 */
		if (target < 0 && (ch == '<' || ch == '>' || (ch == '2' && in[1] == '>'))) {
			int fd = ch == '<' ? 0 : ch == '2' ? 2 : 1;
			if (ch == '2')
				in++;
			in++;
			mode = fd == 0 ? REDIR_READ : REDIR_WRITE;
			if (fd != 0 && *in == '>') {
				mode = REDIR_APPEND;
				in++;
			} else if (fd != 0 && *in == '&') {
				char want = fd == 1 ? '2' : '1';
				if (in[1] != want || !special(in[2]))
					return syntax(fd == 1 ? "only >&2 is known" : "only 2>&1 is known");
				c->redir[fd] = REDIR_DUP;
				c->file[fd] = fd == 1 ? "2" : "1";
				in += 2;
				continue;
			}
			target = fd;
			continue;
		}
		if (ch == '<' || ch == '>')
			return syntax("two redirections in a row");
		int is_assign = target < 0 && c->argc == 0 && assignment(in);
		int err = 0;
		char *w = word(&in, status, &err);
		if (err)
			return -1;
		if (target >= 0) {
			if (w == NULL)
				return syntax("a redirection's file name is empty");
			c->redir[target] = mode;
			c->file[target] = w;
			target = -1;
		} else if (w == NULL) {
			continue;
		} else if (is_assign) {
			if (c->nassign == SH_ASSIGN) {
				fprintf(stderr, "sh: too many NAME=value words\n");
				return -1;
			}
			c->assign[c->nassign++] = w;
		} else {
			if (c->argc == SH_WORDS) {
				fprintf(stderr, "sh: too many words in one command (at most %d)\n", SH_WORDS);
				return -1;
			}
			c->argv[c->argc++] = w;
		}
	}
}
