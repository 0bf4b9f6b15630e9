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
 *
 * Redirections: `< FILE` (standard input), `> FILE` (output, truncating),
 * `>> FILE` (output, appending), and `2>`, `2>>` for standard error.  The
 * kernel has no descriptors to inherit, so the shell hands a program its
 * redirections in the environment (EXO_FD0..2, see libos/posix.c), and the
 * program's libOS opens the files before main.  The mount table and working
 * directory travel the same way (EXOMOUNTS, PWD): `mount` and `cd` are
 * builtins because they change what later programs inherit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include "libos/exo.h"
#include "libos/files.h"
#include "kernel/uapi/errno.h"

#define MAX_LINE   1024
#define MAX_WORDS  64
#define SPAWN_MAX_ENV 60    /* the kernel takes at most 64 strings per list */

extern char **environ;
static int last_status;
static int interactive;

struct command {
	char *argv[MAX_WORDS + 1];
	int argc;
	int background;
	char *redir[3];          /* file for descriptor 0, 1, 2, or NULL */
	char mode[3];            /* 'r', 'w' (truncate) or 'a' (append) */
};

static int special(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == ';' || ch == '&' || ch == '<' ||
	       ch == '>';
}

/* Parse one command from *in, stopping after its ';', '&' or the end of the
 * line; words are copied into a private buffer.  Parsing a command only when
 * it is about to run makes $? in "false; echo $?" see false's status.
 * Returns 1 for a command, 0 at the end of the line, -1 on a syntax error. */
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
	int target = -1;          /* descriptor the next word redirects, or -1 */
	memset(c, 0, sizeof *c);
	for (;;) {
		while (*in == ' ' || *in == '\t' || *in == '\n') in++;
		if (*in == 0 || *in == ';' || *in == '&') {
			char sep = *in;
			if (target >= 0) { fprintf(stderr, "sh: syntax error: redirection without a file\n"); return -1; }
			if (sep != 0) in++;
			if (sep == '&' && c->argc == 0) { fprintf(stderr, "sh: syntax error near '&'\n"); return -1; }
			if (c->argc == 0 && sep == ';') {
				if (c->redir[0] || c->redir[1] || c->redir[2]) {
					fprintf(stderr, "sh: syntax error: redirection without a command\n");
					return -1;
				}
				continue;     /* empty command */
			}
			*inp = in;
			c->background = sep == '&';
			c->argv[c->argc] = NULL;
			if (c->argc == 0 && (c->redir[0] || c->redir[1] || c->redir[2])) {
				fprintf(stderr, "sh: syntax error: redirection without a command\n");
				return -1;
			}
			return c->argc > 0;
		}
		if (*in == '<' || *in == '>') {
			if (target >= 0) { fprintf(stderr, "sh: syntax error near '%c'\n", *in); return -1; }
			target = *in == '<' ? 0 : 1;
			char mode = *in == '<' ? 'r' : 'w';
			in++;
			if (target == 1 && *in == '>') { mode = 'a'; in++; }
			c->mode[target] = mode;
			continue;
		}
		if (target < 0 && c->argc == MAX_WORDS) { fprintf(stderr, "sh: too many words\n"); return -1; }
		char *word = out;
		/* One word: a run of plain, quoted and escaped characters. */
		while (*in && !special(*in)) {
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
		/* "2>" and "2>>": a word that is just "2", written right against '>'. */
		if (target < 0 && *in == '>' && strcmp(word, "2") == 0 && in[-1] == '2') {
			in++;
			char mode = 'w';
			if (*in == '>') { mode = 'a'; in++; }
			c->mode[2] = mode;
			target = 2;
			out = word;
			continue;
		}
		if (target >= 0) {
			c->redir[target] = word;
			target = -1;
		} else {
			c->argv[c->argc++] = word;
		}
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
	       "  cd [DIR]      change the working directory (default /)\n"
	       "  pwd           print it\n"
	       "  mount         list the mount table\n"
	       "  mount PREFIX TYPE [OPTIONS]   mount a library file system (unixfs, kvfs)\n"
	       "  umount PREFIX remove a mount\n"
	       "  sync          write every mounted file system back to disk\n"
	       "commands are programs in /bin; separate commands with ';', end one with '&'\n"
	       "to run it in the background.  Redirections: < FILE, > FILE, >> FILE,\n"
	       "2> FILE, 2>> FILE.\n");
}

static void list_mounts(void)
{
	const char *prefix, *type, *opts;
	int mounted;
	for (int i = 0; fs_mount_info(i, &prefix, &type, &opts, &mounted) == 0; i++)
		printf("%-12s %-8s %s\n", prefix, type, opts);
}

/* Builtins that change what programs inherit, and their helpers.  Returns
 * the status, or -1 if argv[0] is not one of them. */
static int fs_builtin(struct command *c)
{
	char **argv = c->argv;
	if (strcmp(argv[0], "cd") == 0) {
		const char *dir = c->argc > 1 ? argv[1] : "/";
		if (chdir(dir) < 0) { fprintf(stderr, "sh: cd: %s: %s\n", dir, strerror(errno)); return 1; }
		char cwd[LIBFS_PATH_MAX];
		if (getcwd(cwd, sizeof cwd)) setenv("PWD", cwd, 1);
		return 0;
	}
	if (strcmp(argv[0], "pwd") == 0) {
		char cwd[LIBFS_PATH_MAX];
		printf("%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
		return 0;
	}
	if (strcmp(argv[0], "mount") == 0) {
		if (c->argc == 1) { list_mounts(); return 0; }
		if (c->argc < 3 || c->argc > 4) {
			fprintf(stderr, "sh: usage: mount [PREFIX TYPE [OPTIONS]]\n");
			return 2;
		}
		if (fs_mount(argv[1], argv[2], c->argc == 4 ? argv[3] : "") < 0) {
			fprintf(stderr, "sh: mount %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[0], "umount") == 0) {
		if (c->argc != 2) { fprintf(stderr, "sh: usage: umount PREFIX\n"); return 2; }
		if (fs_umount(argv[1]) < 0) {
			fprintf(stderr, "sh: umount %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		return 0;
	}
	if (strcmp(argv[0], "sync") == 0) {
		sync();
		return 0;
	}
	return -1;
}

static void wait_all(void)
{
	int status, pid;
	while ((pid = exo_wait(-1, &status)) > 0) {
		last_status = status;
		if (interactive) printf("[%d] done, status %d\n", pid, status);
	}
}

static int is_builtin(const char *name)
{
	static const char *const names[] = {
		"help", "exit", "shutdown", "wait", "cd", "pwd", "mount", "umount", "sync", NULL,
	};
	for (int i = 0; names[i]; i++)
		if (strcmp(name, names[i]) == 0) return 1;
	return 0;
}

/* A builtin runs inside the shell, so its redirections are real ones:
 * open the files, move them onto 0..2, and put the originals back after. */
static int redirect_here(struct command *c, int saved[3])
{
	saved[0] = saved[1] = saved[2] = -1;
	for (int fd = 0; fd < 3; fd++) {
		if (!c->redir[fd]) continue;
		int flags = c->mode[fd] == 'r' ? O_RDONLY :
		            c->mode[fd] == 'a' ? (O_WRONLY | O_CREAT | O_APPEND) : (O_WRONLY | O_CREAT | O_TRUNC);
		int nfd = open(c->redir[fd], flags, 0644);
		if (nfd < 0) {
			fprintf(stderr, "sh: %s: %s\n", c->redir[fd], strerror(errno));
			return -1;
		}
		fflush(stdout);
		saved[fd] = dup(fd);
		dup2(nfd, fd);
		close(nfd);
	}
	return 0;
}

static void restore_here(int saved[3])
{
	fflush(stdout);
	for (int fd = 0; fd < 3; fd++)
		if (saved[fd] >= 0) {
			dup2(saved[fd], fd);
			close(saved[fd]);
		}
	fs_release();
}

/* The environment for a program: ours, with its redirections added. */
static char **child_env(struct command *c)
{
	static char *env[SPAWN_MAX_ENV + 1];
	static char fdvar[3][LIBFS_PATH_MAX + 16];
	int n = 0;
	for (char **e = environ; *e && n < SPAWN_MAX_ENV - 3; e++)
		if (strncmp(*e, "EXO_FD", 6) != 0)
			env[n++] = *e;
	for (int fd = 0; fd < 3; fd++)
		if (c->redir[fd]) {
			snprintf(fdvar[fd], sizeof fdvar[fd], "EXO_FD%d=%c:%s", fd, c->mode[fd], c->redir[fd]);
			env[n++] = fdvar[fd];
		}
	env[n] = NULL;
	return env;
}

static int run_builtin(struct command *c, int *exit_now);
static int run_program(struct command *c);

/* Run one command; returns its status (or -1 when the shell must exit). */
static int run(struct command *c, int *exit_now)
{
	char **argv = c->argv;
	if (is_builtin(argv[0])) {
		int saved[3];
		if (redirect_here(c, saved) < 0) { restore_here(saved); return 1; }
		int status = run_builtin(c, exit_now);
		restore_here(saved);
		return status;
	}
	return run_program(c);
}

static int run_builtin(struct command *c, int *exit_now)
{
	char **argv = c->argv;
	int st = fs_builtin(c);
	if (st >= 0) return st;
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
	return 0;
}

static int run_program(struct command *c)
{
	char **argv = c->argv;
	char path[128];
	if (strchr(argv[0], '/')) snprintf(path, sizeof path, "%s", argv[0]);
	else snprintf(path, sizeof path, "/bin/%s", argv[0]);
	fflush(stdout);
	/* Write our file systems back and let go of them: the program may
	 * mount the same ones (unixfs allows one process at a time). */
	fs_release();
	int pid = exo_spawn(path, argv, child_env(c));
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
