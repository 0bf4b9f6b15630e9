/*
 * sh.c - the shell.
 *
 *   sh               interactive: prompt, read a line, run it, repeat
 *   sh -c 'LINE'     run LINE and exit with the status of its last command
 *
 * A line is commands separated by ';' (run in turn) or '&' (run in the
 * background).  Words are split on blanks; '...' quotes literally, "..."
 * quotes with \" and \\ escapes, and a backslash outside quotes escapes the
 * next character; $? (outside single quotes) is the last command's status.
 * A command names a builtin or a program in /bin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "libos/exo.h"
#include "kernel/uapi/errno.h"

#define MAX_LINE   1024
#define MAX_WORDS  64

extern char **environ;
static int last_status;
static int interactive;

struct command {
	char *argv[MAX_WORDS + 1];
	int argc;
	int background;
};

/* Parse one command from *in, stopping after its ';', '&' or the end of the
 * line; words are copied into a private buffer.  Parsing a command only when
 * it is about to run makes $? in "false; echo $?" see false's status.
 * Returns 1 for a command, 0 at the end of the line, -1 on a syntax error. */
static int parse_one(const char **inp, struct command *c)
{
	/* Each input character yields at most one output character, except $?
	 * (2 characters in, up to 11 out), hence the generous buffer. */
	static char words[6 * MAX_LINE];
	char *out = words;
	const char *in = *inp;
	c->argc = 0;
	c->background = 0;
	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\n') in++;
		if (*in == 0 || *in == ';' || *in == '&') {
			char sep = *in;
			if (sep != 0) in++;
			if (sep == '&' && c->argc == 0) { fprintf(stderr, "sh: syntax error near '&'\n"); return -1; }
			if (c->argc == 0 && sep == ';') continue;     /* empty command */
			*inp = in;
			c->background = sep == '&';
			c->argv[c->argc] = NULL;
			return c->argc > 0;
		}
		if (c->argc == MAX_WORDS) { fprintf(stderr, "sh: too many words\n"); return -1; }
		c->argv[c->argc++] = out;
		/* One word: a run of plain, quoted and escaped characters. */
		while (*in && *in != ' ' && *in != '\t' && *in != '\n' && *in != ';' && *in != '&') {
			if (*in == '\'') {
				for (in++; *in && *in != '\''; ) *out++ = *in++;
				if (*in != '\'') { fprintf(stderr, "sh: unterminated '\n"); return -1; }
				in++;
			} else if (*in == '"') {
				for (in++; *in && *in != '"'; ) {
					if (in[0] == '$' && in[1] == '?') {
						out += sprintf(out, "%d", last_status);
						in += 2;
						continue;
					}
					if (*in == '\\' && (in[1] == '"' || in[1] == '\\')) in++;
					*out++ = *in++;
				}
				if (*in != '"') { fprintf(stderr, "sh: unterminated \"\n"); return -1; }
				in++;
			} else if (in[0] == '$' && in[1] == '?') {
				out += sprintf(out, "%d", last_status);
				in += 2;
			} else if (*in == '\\' && in[1]) {
				in++;
				*out++ = *in++;
			} else {
				*out++ = *in++;
			}
		}
		*out++ = 0;
	}
}

static int parse_status(const char *s, int *v)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (*s == 0 || *end != 0) return -1;
	*v = (int)n;
	return 0;
}

static void help(void)
{
	printf("builtins:\n"
	       "  help          this text\n"
	       "  exit [N]      leave the shell with status N (default: the last status)\n"
	       "  shutdown [N]  power the machine off (QEMU exits with status N)\n"
	       "  wait          wait for all background commands\n"
	       "commands are programs in /bin; separate commands with ';', end one with '&'\n"
	       "to run it in the background.\n");
}

static void wait_all(void)
{
	int status, pid;
	while ((pid = exo_wait(-1, &status)) > 0) {
		last_status = status;
		if (interactive) printf("[%d] done, status %d\n", pid, status);
	}
}

/* Run one command; returns its status (or -1 when the shell must exit). */
static int run(struct command *c, int *exit_now)
{
	char **argv = c->argv;
	if (strcmp(argv[0], "help") == 0) { help(); return 0; }
	if (strcmp(argv[0], "exit") == 0 || strcmp(argv[0], "shutdown") == 0) {
		int status = strcmp(argv[0], "exit") == 0 ? last_status : 0;
		if (c->argc > 2 || (c->argc == 2 && parse_status(argv[1], &status) < 0)) {
			fprintf(stderr, "sh: usage: %s [N]\n", argv[0]);
			return 2;
		}
		fflush(stdout);
		if (argv[0][0] == 's') exo_poweroff(status);
		*exit_now = 1;
		return status;
	}
	if (strcmp(argv[0], "wait") == 0) { wait_all(); return last_status; }

	char path[128];
	if (strchr(argv[0], '/')) snprintf(path, sizeof path, "%s", argv[0]);
	else snprintf(path, sizeof path, "/bin/%s", argv[0]);
	fflush(stdout);
	int pid = exo_spawn(path, argv, environ);
	if (pid < 0) {
		if (pid == K_E_NOENT) { fprintf(stderr, "sh: %s: command not found\n", argv[0]); return 127; }
		fprintf(stderr, "sh: %s: %s\n", argv[0], exo_strerror(pid));
		return 126;
	}
	if (c->background) {
		if (interactive) printf("[%d]\n", pid);
		return 0;
	}
	int status = 0;
	int r = exo_wait(pid, &status);
	if (r < 0) { fprintf(stderr, "sh: wait: %s\n", exo_strerror(r)); return 1; }
	return status;
}

static void run_line(const char *line, int *exit_now)
{
	if (strlen(line) >= MAX_LINE) {
		fprintf(stderr, "sh: line longer than %d characters\n", MAX_LINE - 1);
		last_status = 2;
		return;
	}
	struct command c;
	int r;
	while (!*exit_now && (r = parse_one(&line, &c)) != 0) {
		if (r < 0) { last_status = 2; return; }
		last_status = run(&c, exit_now);
	}
}

int main(int argc, char **argv)
{
	static char line[MAX_LINE];
	int exit_now = 0;
	if (argc >= 3 && strcmp(argv[1], "-c") == 0) {
		run_line(argv[2], &exit_now);
		/* Background commands finish before a scripted shell exits. */
		int status;
		while (exo_wait(-1, &status) > 0)
			;
		return last_status;
	}
	interactive = 1;
	printf("exodisk shell; type 'help' for the builtins\n");
	while (!exit_now) {
		printf("$ ");
		fflush(stdout);
		if (fgets(line, sizeof line, stdin) == NULL) break;
		run_line(line, &exit_now);
	}
	return last_status;
}
