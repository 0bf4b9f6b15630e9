/*
 * sh.h - the shell's pieces and what they share (docs/shell.md).
 *
 *   sh.c      main: reading lines (the editor, -c, a script), the root
 *             file system check at start-up
 *   parse.c   a line into pipelines: words, quotes, $VAR, redirections
 *   run.c     running a pipeline: programs, pipes, builtins, jobs
 *   edit.c    the line editor: keys, history, Tab completion
 */
#ifndef SH_H
#define SH_H

#include <stddef.h>

#define SH_LINE_MAX   1024      /* characters in a line, newline excluded: 1023 */
#define SH_WORDS      64        /* words in one command */
#define SH_STAGES     8         /* commands in one pipeline */
#define SH_ASSIGN     8         /* NAME=value words before a command */

/* ---- parse.c ------------------------------------------------------------ */

enum { REDIR_NONE, REDIR_READ, REDIR_WRITE, REDIR_APPEND, REDIR_DUP };

struct command {
	char *argv[SH_WORDS + 1];
	int argc;
	char *assign[SH_ASSIGN];         /* NAME=value for this command only */
	int nassign;
	int redir[3];                    /* REDIR_* for descriptors 0, 1, 2 */
	char *file[3];                   /* its file, or for REDIR_DUP the descriptor */
};

/* How a pipeline follows the one before it. */
enum { AFTER_ANY, AFTER_SUCCESS, AFTER_FAILURE };

struct pipeline {
	struct command cmd[SH_STAGES];
	int n;
	int background;                  /* ended with '&' */
	int after;                       /* AFTER_*: run only if the last status says so */
	char text[80];                   /* the source, for job notices */
};

/* Parse the next pipeline of *line, expanding $VAR against the environment
 * and $? against status; advances *line.  1: a pipeline; 0: the line is
 * finished; -1: a syntax error (reported).  Words live in a buffer of the
 * parser's, valid until the next call. */
int sh_parse(const char **line, struct pipeline *pl, int status);
void sh_parse_begin(void);           /* before the first pipeline of a line */

/* ---- run.c -------------------------------------------------------------- */

extern int sh_interactive;           /* a person is typing: prompts, job notices */
extern int sh_last_status;           /* $? */
extern int sh_last_bg;               /* $!: the last background job's first pid */
extern int sh_exit_now;              /* `exit` ran */
extern int sh_interrupted;           /* Ctrl-C stopped the foreground job */

void sh_run_init(void);
/* Run a pipeline; returns its status (the last command's). */
int  sh_run(struct pipeline *pl);
/* Report the background jobs that ended since the last call (interactive). */
void sh_notify_jobs(void);
/* Wait for every background job (end of `sh -c`). */
void sh_wait_all(void);
/* Run builtin argv[0] in this process (sh -B, used by pipelines); status. */
int  sh_builtin_main(int argc, char **argv);
int  sh_is_builtin(const char *name);
/* The builtins' names, for completion; NULL-terminated. */
extern const char *const sh_builtins[];

/* ---- edit.c ------------------------------------------------------------- */

#define EDIT_EOF       -1        /* Ctrl-D on an empty line */
#define EDIT_INTERRUPT -2        /* Ctrl-C */
#define EDIT_TOO_LONG  -3        /* more than size-1 characters were typed */

/* Read a line from the console with editing; the prompt is shown first.
 * Returns the length (the line is in buf, NUL-terminated, no newline) or
 * an EDIT_* code. */
int  edit_line(const char *prompt, char *buf, size_t size);
void edit_history_add(const char *line);

#endif
