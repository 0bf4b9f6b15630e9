/*
 * test_sh_parse.c - the shell's parser (apps/sh/parse.c) on the host,
 * under AddressSanitizer and UBSan: lines with known meanings parse to
 * exactly that (words, quotes, variables, redirections, pipelines, && ||,
 * &, comments), syntax errors are refused, and 150,000 random lines (more: test_sh_parse N) made of
 * the characters the parser cares about - and variables that expand past
 * its word buffer - never make it read or write out of bounds, and every
 * pipeline it returns is well formed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/sh/sh.h"

int sh_last_bg;                  /* run.c's $!, which the parser reads */

static int failures;

#define FAIL(...) do { if (failures++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); \
	printf("\n"); } } while (0)

static const char *redir_name(int r)
{
	static const char *n[] = { "", "<", ">", ">>", ">&" };
	return n[r];
}

/* A pipeline as text: [word word] | [word] <file >file 2>&1, then flags. */
static void render(const struct pipeline *pl, char *buf, size_t size)
{
	size_t at = 0;
#define OUT(...) (at += (size_t)snprintf(buf + at, at < size ? size - at : 0, __VA_ARGS__))
	if (pl->after == AFTER_SUCCESS) OUT("&& ");
	if (pl->after == AFTER_FAILURE) OUT("|| ");
	for (int i = 0; i < pl->n; i++) {
		const struct command *c = &pl->cmd[i];
		if (i) OUT(" | ");
		for (int a = 0; a < c->nassign; a++) OUT("%s ", c->assign[a]);
		OUT("[");
		for (int a = 0; a < c->argc; a++) OUT("%s%s", a ? " " : "", c->argv[a]);
		OUT("]");
		for (int fd = 0; fd < 3; fd++)
			if (c->redir[fd]) OUT(" %d%s%s", fd, redir_name(c->redir[fd]), c->file[fd]);
	}
	if (pl->background) OUT(" &");
#undef OUT
}

/* The whole line rendered, pipelines separated by " ; ", or "ERROR". */
static void parse_all(const char *line, int status, char *buf, size_t size)
{
	struct pipeline pl;
	const char *in = line;
	size_t at = 0;
	buf[0] = 0;
	sh_parse_begin();
	for (;;) {
		int r = sh_parse(&in, &pl, status);
		if (r < 0) {
			snprintf(buf, size, "ERROR");
			return;
		}
		if (r == 0) return;
		char one[2048];
		render(&pl, one, sizeof one);
		at += (size_t)snprintf(buf + at, at < size ? size - at : 0, "%s%s", at ? " ; " : "", one);
	}
}

static void golden(void)
{
	static const char *const cases[][2] = {
		{ "echo hello", "[echo hello]" },
		{ "  a   b\tc  ", "[a b c]" },
		{ "a; b", "[a] ; [b]" },
		{ "a;;b", "[a] ; [b]" },
		{ "a | b | c", "[a] | [b] | [c]" },
		{ "a && b || c", "[a] ; && [b] ; || [c]" },
		{ "a & b", "[a] & ; [b]" },
		{ "echo 'a  b' \"c $X d\" e\\;f", "[echo a  b c xval d e;f]" },
		{ "echo $X${X}$NOPE-$", "[echo xvalxval-$]" },
		{ "echo ${X", "[echo ${X]" },
		{ "echo $? $!", "[echo 7 4242]" },
		{ "echo \"\" ''", "[echo  ]" },
		{ "echo $NOPE", "[echo]" },
		{ "cat < in > out 2> err", "[cat] 0<in 1>out 2>err" },
		{ "cmd >> log 2>&1", "[cmd] 1>>log 2>&1" },
		{ "echo x >&2", "[echo x] 1>&2" },
		{ "A=1 B=2 env", "A=1 B=2 [env]" },
		{ "A=1", "A=1 []" },
		{ "echo a=b", "[echo a=b]" },
		{ "echo shown # hidden | x", "[echo shown]" },
		{ "# only a comment", "" },
		{ "", "" },
		{ "echo \"\\\"q\\\\ \\$X\"", "[echo \"q\\ $X]" },
		{ "a |", "ERROR" },
		{ "| a", "ERROR" },
		{ "a && ", "ERROR" },
		{ "&& a", "ERROR" },
		{ "a > ", "ERROR" },
		{ "a > > b", "ERROR" },
		{ "< f", "ERROR" },
		{ "echo 'open", "ERROR" },
		{ "echo \"open", "ERROR" },
		{ "a 2>&3", "ERROR" },
		{ "A=1 | b", "ERROR" },
		{ "a|b|c|d|e|f|g|h", "[a] | [b] | [c] | [d] | [e] | [f] | [g] | [h]" },
		{ "a|b|c|d|e|f|g|h|i", "ERROR" },
		{ "echo > \"\"", "[echo] 1>" },      /* as in sh: the open fails when it runs */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char got[4096];
		parse_all(cases[i][0], 7, got, sizeof got);
		if (strcmp(got, cases[i][1]) != 0)
			FAIL("'%s' parsed as '%s', expected '%s'", cases[i][0], got, cases[i][1]);
	}
	/* 64 words fit in a command, 65 do not. */
	char line[SH_LINE_MAX];
	line[0] = 0;
	for (int i = 0; i < SH_WORDS; i++) strcat(line, "w ");
	char got[8192];
	parse_all(line, 0, got, sizeof got);
	if (strcmp(got, "ERROR") == 0) FAIL("%d words refused", SH_WORDS);
	strcat(line, "w");
	parse_all(line, 0, got, sizeof got);
	if (strcmp(got, "ERROR") != 0) FAIL("%d words accepted", SH_WORDS + 1);
}

/* Every pipeline parse returns must be usable by run.c as it is. */
static void check_pipeline(const struct pipeline *pl, const char *line)
{
	if (pl->n < 1 || pl->n > SH_STAGES) FAIL("'%s': %d commands", line, pl->n);
	if (memchr(pl->text, 0, sizeof pl->text) == NULL) FAIL("'%s': text unterminated", line);
	for (int i = 0; i < pl->n; i++) {
		const struct command *c = &pl->cmd[i];
		if (c->argc < 0 || c->argc > SH_WORDS || c->argv[c->argc] != NULL)
			FAIL("'%s': argv of %d words not NULL-terminated", line, c->argc);
		if (c->argc == 0 && c->nassign == 0) FAIL("'%s': an empty command", line);
		if (c->argc == 0 && pl->n > 1) FAIL("'%s': assignments alone in a pipeline", line);
		size_t total = 0;
		for (int a = 0; a < c->argc; a++) total += strlen(c->argv[a]);   /* ASan checks each */
		for (int a = 0; a < c->nassign; a++) total += strlen(c->assign[a]);
		for (int fd = 0; fd < 3; fd++) {
			if (c->redir[fd] && c->file[fd] == NULL)
				FAIL("'%s': redirection of %d without a file", line, fd);
			if (c->redir[fd]) total += strlen(c->file[fd]);
		}
		(void)total;
	}
}

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
	return (unsigned)(rng % n);
}

static void fuzz(int rounds)
{
	static const char alphabet[] = "ab =$?!{}'\"\\;&|<>#2 \t\n1X_BIG";
	char line[SH_LINE_MAX];
	int parsed = 0, refused = 0;
	for (int r = 0; r < rounds; r++) {
		int len = (int)rnd(r % 10 == 0 ? SH_LINE_MAX : 60);
		for (int i = 0; i < len; i++) {
			/* Now and then a whole variable, which may expand to 4 KB. */
			if (rnd(12) == 0 && i + 4 < len) {
				memcpy(line + i, "$BIG", 4);
				i += 3;
			} else {
				line[i] = alphabet[rnd(sizeof alphabet - 1)];
			}
		}
		line[len] = 0;
		struct pipeline pl;
		const char *in = line;
		sh_parse_begin();
		for (int n = 0; n < SH_LINE_MAX; n++) {
			const char *before = in;
			int res = sh_parse(&in, &pl, (int)rnd(256));
			if (res < 0) { refused++; break; }
			if (res == 0) break;
			parsed++;
			check_pipeline(&pl, line);
			if (in <= before) { FAIL("'%s': the parser did not advance", line); break; }
		}
	}
	printf("sh_parse: %d random lines: %d pipelines parsed and checked, %d lines refused\n",
	       rounds, parsed, refused);
}

int main(int argc, char **argv)
{
	setenv("X", "xval", 1);
	char *big = malloc(4097);
	memset(big, 'B', 4096);
	big[4096] = 0;
	setenv("BIG", big, 1);
	sh_last_bg = 4242;
	/* The parser reports syntax errors on stderr: thousands of them here.
	 * The stream goes to /dev/null, descriptor 2 stays (the sanitizers
	 * write their reports there). */
	FILE *null = fopen("/dev/null", "w");
	if (null == NULL) return 2;
	stderr = null;
	golden();
	fuzz(argc > 1 ? atoi(argv[1]) : 150000);
	free(big);
	fclose(null);
	if (failures) {
		printf("test_sh_parse: %d failures\n", failures);
		return 1;
	}
	printf("test_sh_parse: ok\n");
	return 0;
}
