/*
 * run.c - running pipelines: programs, pipes, redirections, builtins and
 * jobs.
 *
 * The kernel has no fork and no descriptors, so a program is started with
 * spawn and told in its environment what its standard input, output and
 * error are (EXO_FD0..2, libos/posix.c): a file to open, a pipe end among
 * the kernel handles the shell passes it, or the null descriptor.  For
 * `a | b` the shell makes a pipe (two kernel handles), passes the write end
 * to a as its handle 1 and the read end to b as its handle 0, and closes its
 * own copies, so b sees end of file when a is done and a's writes fail once
 * b has gone.
 *
 * A pipeline is a job: its processes share a process group (the first
 * one's pid), so Ctrl-C and `kill %N` reach all of them and whatever they
 * start.  The shell holds the console's interrupt key (kernel/uapi/proc.h):
 * Ctrl-C interrupts its wait for the foreground job, and it kills that job's
 * group.  Background jobs read from the null descriptor, so they never take
 * what is typed at the prompt; the shell reports them when they end.
 *
 * A builtin runs inside the shell, with its redirections made for real and
 * undone afterwards; inside a pipeline or in the background it runs in a
 * child shell (`sh -B NAME ARGS`), as a Unix shell runs it in a subshell.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "apps/sh/sh.h"
#include "apps/progdoc.h"
#include "libos/exo.h"
#include "libos/fd.h"
#include "libos/files.h"
#include "libos/vfs.h"
#include "kernel/uapi/errno.h"

#define MAX_JOBS      16
#define SPAWN_MAX_ENV 60       /* the kernel takes at most 64 strings per list */

extern char **environ;

int sh_interactive, sh_last_status, sh_last_bg, sh_exit_now, sh_interrupted;

struct job {
	int id;                          /* 0: the slot is free */
	int pgid;
	int n;                           /* processes started */
	int pid[SH_STAGES], status[SH_STAGES], done[SH_STAGES];
	int last_failed;                 /* the last command never started: its status */
	char text[80];
};

static struct job jobs[MAX_JOBS];

/* The builtins: `help` lists them, NAME -h shows one. */
static const struct bdoc {
	const char *name, *usage, *what;
} bdocs[] = {
	{ "cd",       "cd [DIR]",                    "change the working directory (default /)" },
	{ "exit",     "exit [N]",                    "leave the shell with status N (default: the last status)" },
	{ "export",   "export [NAME=VALUE...]",      "set environment variables (none: list them all)" },
	{ "fg",       "fg [%N]",                     "wait for background job N (default the last) in the "
	                                             "foreground; Ctrl-C stops it" },
	{ "help",     "help",                        "list the builtins and programs" },
	{ "jobs",     "jobs",                        "list the background jobs" },
	{ "kill",     "kill [-N] %JOB|PID|-GROUP...", "stop jobs or processes: they exit with 128+N "
	                                             "(default N=9)" },
	{ "mount",    "mount [PREFIX TYPE [OPTIONS...]]", "list the mounts, or add one (unixfs, kvfs, "
	                                             "initrd, dev; layers null, trace, crypt, compress "
	                                             "with over=PATH); options join with ','" },
	{ "pwd",      "pwd",                         "print the working directory" },
	{ "shutdown", "shutdown [N]",                "write the file systems back and power off (QEMU "
	                                             "exits with status N)" },
	{ "sync",     "sync",                        "write every mounted file system back to disk" },
	{ "umount",   "umount PREFIX",               "remove a mount" },
	{ "unset",    "unset NAME...",               "remove environment variables" },
	{ "wait",     "wait",                        "wait for every background job" },
	{ NULL, NULL, NULL },
};

const char *const sh_builtins[] = {
	"cd", "exit", "export", "fg", "help", "jobs", "kill", "mount", "pwd", "shutdown",
	"sync", "umount", "unset", "wait", NULL,
};

_Static_assert(sizeof sh_builtins / sizeof sh_builtins[0] == sizeof bdocs / sizeof bdocs[0],
               "every builtin has its documentation");

int sh_is_builtin(const char *name)
{
	for (int i = 0; sh_builtins[i]; i++)
		if (strcmp(name, sh_builtins[i]) == 0)
			return 1;
	return 0;
}

void sh_run_init(void)
{
	/* Ctrl-C comes to us: an interactive shell takes the key from whoever
	 * had it (it is what the person now talks to); a script's shell only
	 * if nobody has it (it is then the first process). */
	exo_claim_intr(sh_interactive);
}

/* ---- jobs ----------------------------------------------------------------- */

static struct job *job_new(void)
{
	int id = 1;
	for (int i = 0; i < MAX_JOBS; i++)
		if (jobs[i].id >= id)
			id = jobs[i].id + 1;
	for (int i = 0; i < MAX_JOBS; i++)
		if (jobs[i].id == 0) {
			memset(&jobs[i], 0, sizeof jobs[i]);
			jobs[i].id = id;
			return &jobs[i];
		}
	return NULL;
}

static int job_running(const struct job *j)
{
	for (int i = 0; i < j->n; i++)
		if (!j->done[i])
			return 1;
	return 0;
}

/* The job's status: its last command's. */
static int job_status(const struct job *j)
{
	if (j->last_failed || j->n == 0)
		return j->last_failed;
	return j->status[j->n - 1];
}

static void job_mark(int pid, int status)
{
	for (int i = 0; i < MAX_JOBS; i++)
		for (int k = 0; jobs[i].id && k < jobs[i].n; k++)
			if (jobs[i].pid[k] == pid) {
				jobs[i].done[k] = 1;
				jobs[i].status[k] = status;
			}
}

static const char *describe(int status)
{
	static char buf[24];
	switch (status) {
	case 0:   return "Done";
	case 130: return "Interrupted";
	case 137: return "Killed";
	case 141: return "Broken pipe";
	default:
		snprintf(buf, sizeof buf, "Exit %d", status);
		return buf;
	}
}

static void job_report(struct job *j, const char *state)
{
	printf("[%d]  %-12s %s\n", j->id, state, j->text);
}

void sh_notify_jobs(void)
{
	int status, pid;
	while ((pid = exo_wait_opts(-1, &status, WAIT_NOHANG)) > 0)
		job_mark(pid, status);
	for (int i = 0; i < MAX_JOBS; i++)
		if (jobs[i].id && !job_running(&jobs[i])) {
			if (sh_interactive)
				job_report(&jobs[i], describe(job_status(&jobs[i])));
			jobs[i].id = 0;
		}
	fflush(stdout);
}

/* Wait for a job in the foreground; Ctrl-C kills it.  Its status. */
static int wait_job(struct job *j)
{
	while (job_running(j)) {
		for (int k = 0; k < j->n; k++) {
			if (j->done[k])
				continue;
			int status = 0;
			int r = exo_wait(j->pid[k], &status);
			if (r == j->pid[k]) {
				j->done[k] = 1;
				j->status[k] = status;
			} else if (r == K_E_INTR) {
				/* Ctrl-C: the kernel has thrown the typed-ahead input away. */
				exo_kill_why(-j->pgid, KILL_INT);
				sh_interrupted = 1;
			} else {
				/* Not our child any more (should not happen): give up on it. */
				j->done[k] = 1;
				j->status[k] = 1;
			}
		}
	}
	int st = job_status(j);
	j->id = 0;
	/* A program we ran may have claimed the key (an interactive sh). */
	if (sh_interactive)
		exo_claim_intr(1);
	if (sh_interrupted && sh_interactive) {
		printf("^C\n");
		fflush(stdout);
	}
	return st;
}

static struct job *find_job(const char *spec, const char *who)
{
	struct job *best = NULL;
	if (spec == NULL) {
		for (int i = 0; i < MAX_JOBS; i++)
			if (jobs[i].id && (best == NULL || jobs[i].id > best->id))
				best = &jobs[i];
		if (best == NULL)
			fprintf(stderr, "sh: %s: no jobs\n", who);
		return best;
	}
	const char *s = spec[0] == '%' ? spec + 1 : spec;
	char *end;
	long id = strtol(s, &end, 10);
	if (*s && *end == 0)
		for (int i = 0; i < MAX_JOBS; i++)
			if (jobs[i].id == id)
				return &jobs[i];
	fprintf(stderr, "sh: %s: %s: no such job\n", who, spec);
	return NULL;
}

/* ---- the environment a program gets ----------------------------------------- */

static char **child_env(struct command *c, const char *fdspec[3])
{
	static char *env[SPAWN_MAX_ENV + 1];
	static char fdvar[3][LIBFS_PATH_MAX + 16];
	int n = 0;
	for (char **e = environ; *e && n < SPAWN_MAX_ENV - 3 - c->nassign; e++) {
		if (strncmp(*e, "EXO_FD", 6) == 0)
			continue;
		/* A NAME=value before the command replaces the variable. */
		int replaced = 0;
		for (int a = 0; a < c->nassign && !replaced; a++) {
			size_t nl = (size_t)(strchr(c->assign[a], '=') - c->assign[a]);
			replaced = strncmp(*e, c->assign[a], nl + 1) == 0;
		}
		if (!replaced)
			env[n++] = *e;
	}
	for (int a = 0; a < c->nassign; a++)
		env[n++] = c->assign[a];
	for (int fd = 0; fd < 3; fd++)
		if (fdspec[fd]) {
			snprintf(fdvar[fd], sizeof fdvar[fd], "EXO_FD%d=%s", fd, fdspec[fd]);
			env[n++] = fdvar[fd];
		}
	env[n] = NULL;
	return env;
}

static const char *redir_spec(struct command *c, int fd, char *buf, size_t size)
{
	static const char mode[] = { 0, 'r', 'w', 'a', 'd' };
	if (c->redir[fd] == REDIR_NONE)
		return NULL;
	snprintf(buf, size, "%c:%s", mode[c->redir[fd]], c->file[fd]);
	return buf;
}

/* Start one command of a job.  in_h/out_h: the kernel handles of its pipe
 * ends (-1: none).  Returns the pid or a status (127, 126) as a negative. */
static int start(struct command *c, int in_h, int out_h, int background, int first, struct job *j)
{
	static char specbuf[3][LIBFS_PATH_MAX + 4];
	const char *fdspec[3] = { NULL, NULL, NULL };
	static const char *const kspec[3] = { "k:0", "k:1", "k:2" };
	struct spawn_opts o;
	memset(&o, 0, sizeof o);
	/* The child's handle N is its descriptor N's pipe end, if any. */
	o.nhandles = 3;
	o.handles[0] = o.handles[1] = o.handles[2] = -1;
	for (int fd = 0; fd < 3; fd++)
		fdspec[fd] = redir_spec(c, fd, specbuf[fd], sizeof specbuf[fd]);
	if (fdspec[0] == NULL && in_h >= 0) {
		fdspec[0] = kspec[0];
		o.handles[0] = in_h;
	} else if (fdspec[0] == NULL && background && first) {
		fdspec[0] = "n:";
	}
	if (fdspec[1] == NULL && out_h >= 0) {
		fdspec[1] = kspec[1];
		o.handles[1] = out_h;
	}
	/* The rest are ours: a shell whose output is a pipe gives its commands
	 * that pipe (sh -c '...' | more). */
	for (int fd = 0; fd < 3; fd++) {
		if (fdspec[fd] != NULL)
			continue;
		int h;
		const char *spec = libos_fd_inherit(fd, &h);
		if (h >= 0) {
			fdspec[fd] = kspec[fd];
			o.handles[fd] = h;
		} else {
			fdspec[fd] = spec;
		}
	}
	o.pgid = j->pgid ? j->pgid : SPAWN_PGID_NEW;

	char path[LIBFS_PATH_MAX];
	char *bargv[SH_WORDS + 3];
	char **argv = c->argv;
	if (sh_is_builtin(argv[0])) {
		/* A builtin in a pipeline or the background: a child shell runs it. */
		bargv[0] = "sh";
		bargv[1] = "-B";
		for (int i = 0; i <= c->argc; i++)
			bargv[i + 2] = argv[i];
		argv = bargv;
		snprintf(path, sizeof path, "/bin/sh");
	} else if (strchr(argv[0], '/')) {
		snprintf(path, sizeof path, "%s", argv[0]);
	} else {
		snprintf(path, sizeof path, "/bin/%s", argv[0]);
	}
	int pid = exo_spawn_opts(path, argv, child_env(c, fdspec), &o);
	if (pid == K_E_NOENT) {
		fprintf(stderr, "sh: %s: command not found\n", c->argv[0]);
		return -127;
	}
	if (pid < 0) {
		fprintf(stderr, "sh: %s: %s\n", c->argv[0], exo_strerror(pid));
		return -126;
	}
	if (j->pgid == 0)
		j->pgid = pid;
	return pid;
}

static int run_job(struct pipeline *pl)
{
	struct job *j = job_new();
	if (j == NULL) {
		fprintf(stderr, "sh: too many jobs (at most %d)\n", MAX_JOBS);
		return 1;
	}
	snprintf(j->text, sizeof j->text, "%s", pl->text);
	fflush(stdout);
	/* Write our file systems back and let go of them: the programs may
	 * mount the same ones (unixfs allows one process at a time). */
	fs_release();
	int in_h = -1;
	for (int i = 0; i < pl->n; i++) {
		int h[2] = { -1, -1 };
		int pr = i + 1 < pl->n ? exo_pipe(h) : 0;
		if (pr < 0) {
			fprintf(stderr, "sh: cannot make a pipe: %s\n", exo_strerror(pr));
			h[0] = h[1] = -1;
		}
		int r = start(&pl->cmd[i], in_h, h[1], pl->background, i == 0, j);
		if (r > 0) {
			j->pid[j->n++] = r;
		} else if (i + 1 == pl->n) {
			j->last_failed = -r;
		}
		/* Our copies go: the children hold theirs. */
		if (in_h >= 0)
			exo_hclose(in_h);
		if (h[1] >= 0)
			exo_hclose(h[1]);
		in_h = h[0];
	}
	if (j->n == 0) {
		int st = j->last_failed;
		j->id = 0;
		return st;
	}
	if (pl->background) {
		sh_last_bg = j->pid[0];
		if (sh_interactive) {
			printf("[%d] %d\n", j->id, j->pgid);
			fflush(stdout);
		}
		return 0;
	}
	return wait_job(j);
}

/* ---- builtins ---------------------------------------------------------------- */

/* "  NAME       text", the text wrapped to the screen under itself. */
static void entry(const char *name, int namewidth, const char *text)
{
	const int indent = 2 + namewidth + 1, width = 79;
	printf("  %-*s", namewidth, name);
	int col = indent - 1;
	if ((int)strlen(name) > namewidth) {
		printf("\n%*s", indent - 1, "");
	}
	while (*text) {
		const char *w = text;
		while (*w == ' ')
			w++;
		const char *e = w;
		while (*e && *e != ' ')
			e++;
		int len = (int)(e - w);
		if (len == 0)
			break;
		if (col > indent && col + 1 + len > width) {
			printf("\n%*s", indent, "");
			col = indent;
		} else {
			putchar(' ');
			col++;
		}
		printf("%.*s", len, w);
		col += len;
		text = e;
	}
	putchar('\n');
}

static void help(void)
{
	printf("exodisk shell.  Builtins:\n");
	for (const struct bdoc *b = bdocs; b->name; b++)
		entry(b->usage, 22, b->what);
	printf("Programs, in /bin (each answers -h with its usage):\n");
	for (const struct progdoc *p = progdocs; p->name; p++)
		entry(p->name, 10, p->summary);
	printf("Lines: cmd1; cmd2   cmd &   a | b | c   a && b   a || b   # comment\n"
	       "Redirections: < FILE  > FILE  >> FILE  2> FILE  2>> FILE  2>&1  >&2\n"
	       "Quotes: '...' literal, \"...\" with $VAR; variables $NAME ${NAME} $? $$ $!\n"
	       "Keys: arrows, Home/End, Ctrl-A/E/B/F, Ctrl-W/U/K, Tab completes, Ctrl-C\n"
	       "interrupts, Ctrl-D ends; docs/shell.md has the rest.\n");
}

static void list_mounts(void)
{
	const char *prefix, *type, *opts;
	int mounted;
	for (int i = 0; fs_mount_info(i, &prefix, &type, &opts, &mounted) == 0; i++)
		printf("%-12s %-8s %s\n", prefix, type, opts);
}

static int parse_status(const char *s, int *v)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (*s == 0 || *end != 0)
		return -1;
	*v = (int)n;
	return 0;
}

/* Does kill's target include this shell (its pid, or its group)?  A
 * builtin runs in the shell, so it would kill itself - and the first shell's
 * end powers the machine off. */
static bool is_self(int target)
{
	int me = exo_getpid();
	if (target == me) return true;
	if (target > 0) return false;
	for (int i = 0; i < KPROC_SLOTS; i++)
		if (exo_procs()[i].pid == me) return exo_procs()[i].pgid == -target;
	return false;
}

static int b_kill(int argc, char **argv)
{
	int why = KILL_KILL, i = 1, status = 0;
	if (i < argc && argv[i][0] == '-' && argv[i][1] >= '0' && argv[i][1] <= '9' && argc > 2) {
		why = atoi(argv[i] + 1);
		i++;
		if (why < 1 || why > 127) {
			fprintf(stderr, "sh: kill: %s: give a number from 1 to 127\n", argv[i - 1]);
			return 2;
		}
	}
	if (i == argc) {
		fprintf(stderr, "sh: usage: kill [-N] %%JOB|PID|-GROUP...\n");
		return 2;
	}
	for (; i < argc; i++) {
		int target;
		if (argv[i][0] == '%') {
			struct job *j = find_job(argv[i], "kill");
			if (j == NULL) {
				status = 1;
				continue;
			}
			target = -j->pgid;
		} else if (parse_status(argv[i], &target) < 0 || target == 0) {
			fprintf(stderr, "sh: kill: %s: not a job (%%N) or process number\n", argv[i]);
			status = 1;
			continue;
		}
		if (is_self(target)) {
			fprintf(stderr, "sh: kill: %s: that is this shell (exit or shutdown ends it)\n",
			        argv[i]);
			status = 1;
			continue;
		}
		int r = exo_kill_why(target, why);
		if (r < 0) {
			fprintf(stderr, "sh: kill: %s: %s\n", argv[i], exo_strerror(r));
			status = 1;
		}
	}
	return status;
}

static int b_export(int argc, char **argv)
{
	if (argc == 1) {
		for (char **e = environ; *e; e++)
			printf("%s\n", *e);
		return 0;
	}
	int status = 0;
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (eq == NULL)
			continue;                 /* every variable is exported already */
		*eq = 0;
		if (argv[i][0] == 0 || setenv(argv[i], eq + 1, 1) < 0) {
			fprintf(stderr, "sh: export: %s: not a variable name\n", argv[i]);
			status = 1;
		}
		*eq = '=';
	}
	return status;
}

/* Run a builtin in this process; its status. */
static int builtin(int argc, char **argv)
{
	const char *b = argv[0];
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		for (const struct bdoc *d = bdocs; d->name; d++)
			if (strcmp(d->name, b) == 0)
				printf("%s - %s (a builtin of sh).\nusage: %s\n", d->name, d->what, d->usage);
		return 0;
	}
	if (strcmp(b, "help") == 0) {
		help();
		return 0;
	}
	if (strcmp(b, "cd") == 0) {
		const char *dir = argc > 1 ? argv[1] : "/";
		if (chdir(dir) < 0) {
			fprintf(stderr, "sh: cd: %s: %s\n", dir, strerror(errno));
			return 1;
		}
		char cwd[LIBFS_PATH_MAX];
		if (getcwd(cwd, sizeof cwd))
			setenv("PWD", cwd, 1);
		return 0;
	}
	if (strcmp(b, "pwd") == 0) {
		char cwd[LIBFS_PATH_MAX];
		printf("%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
		return 0;
	}
	if (strcmp(b, "mount") == 0) {
		if (argc == 1) {
			list_mounts();
			return 0;
		}
		if (argc < 3) {
			fprintf(stderr, "sh: usage: mount [PREFIX TYPE [OPTIONS...]]\n");
			return 2;
		}
		/* mount /s crypt over=/data key=K is over=/data,key=K */
		char opts[VFS_SPEC_MAX];
		size_t len = 0;
		opts[0] = 0;
		for (int i = 3; i < argc; i++) {
			size_t n = strlen(argv[i]);
			if (len + n + 2 > sizeof opts) {
				fprintf(stderr, "sh: mount: options too long\n");
				return 2;
			}
			if (len > 0)
				opts[len++] = ',';
			memcpy(opts + len, argv[i], n + 1);
			len += n;
		}
		if (fs_mount(argv[1], argv[2], opts) < 0) {
			fprintf(stderr, "sh: mount %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		return 0;
	}
	if (strcmp(b, "umount") == 0) {
		if (argc != 2) {
			fprintf(stderr, "sh: usage: umount PREFIX\n");
			return 2;
		}
		if (fs_umount(argv[1]) < 0) {
			fprintf(stderr, "sh: umount %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		return 0;
	}
	if (strcmp(b, "sync") == 0) {
		sync();
		return 0;
	}
	if (strcmp(b, "exit") == 0 || strcmp(b, "shutdown") == 0) {
		int status = b[0] == 'e' ? sh_last_status : 0;
		if (argc > 2 || (argc == 2 && parse_status(argv[1], &status) < 0)) {
			fprintf(stderr, "sh: usage: %s [N]\n", b);
			return 2;
		}
		fflush(stdout);
		if (b[0] == 's') {
			fs_release();
			exo_poweroff(status);
		}
		sh_exit_now = 1;
		return status;
	}
	if (strcmp(b, "export") == 0)
		return b_export(argc, argv);
	if (strcmp(b, "unset") == 0) {
		for (int i = 1; i < argc; i++)
			unsetenv(argv[i]);
		return 0;
	}
	if (strcmp(b, "jobs") == 0) {
		sh_notify_jobs();
		for (int i = 0; i < MAX_JOBS; i++)
			if (jobs[i].id)
				job_report(&jobs[i], "Running");
		return 0;
	}
	if (strcmp(b, "fg") == 0) {
		sh_notify_jobs();
		struct job *j = find_job(argc > 1 ? argv[1] : NULL, "fg");
		if (j == NULL)
			return 1;
		printf("%s\n", j->text);
		fflush(stdout);
		return wait_job(j);
	}
	if (strcmp(b, "kill") == 0)
		return b_kill(argc, argv);
	if (strcmp(b, "wait") == 0) {
		int status, pid;
		while ((pid = exo_wait(-1, &status)) > 0 || pid == K_E_INTR) {
			if (pid == K_E_INTR) {
				sh_interrupted = 1;
				return 130;
			}
			job_mark(pid, status);
			sh_last_status = status;
		}
		sh_notify_jobs();
		return sh_last_status;
	}
	fprintf(stderr, "sh: %s: not a builtin\n", b);
	return 127;
}

int sh_builtin_main(int argc, char **argv)
{
	if (argc < 1 || !sh_is_builtin(argv[0])) {
		fprintf(stderr, "sh: -B %s: not a builtin\n", argc ? argv[0] : "");
		return 127;
	}
	return builtin(argc, argv);
}

/* A builtin's redirections are made here for real, then undone. */
static int redirect_here(struct command *c, int saved[3])
{
	saved[0] = saved[1] = saved[2] = -1;
	fflush(stdout);
	for (int fd = 0; fd < 3; fd++) {
		if (c->redir[fd] == REDIR_NONE)
			continue;
		int nfd;
		if (c->redir[fd] == REDIR_DUP) {
			nfd = dup(atoi(c->file[fd]));
		} else {
			int flags = c->redir[fd] == REDIR_READ ? O_RDONLY :
			            c->redir[fd] == REDIR_APPEND ? (O_WRONLY | O_CREAT | O_APPEND) :
			            (O_WRONLY | O_CREAT | O_TRUNC);
			nfd = open(c->file[fd], flags, 0644);
		}
		if (nfd < 0) {
			fprintf(stderr, "sh: %s: %s\n", c->file[fd], strerror(errno));
			return -1;
		}
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

int sh_run(struct pipeline *pl)
{
	if (pl->after == AFTER_SUCCESS && sh_last_status != 0)
		return sh_last_status;
	if (pl->after == AFTER_FAILURE && sh_last_status == 0)
		return sh_last_status;
	struct command *c = &pl->cmd[0];
	if (pl->n == 1 && c->argc == 0) {
		/* NAME=value alone: set the variables, for us and what we start. */
		for (int a = 0; a < c->nassign; a++) {
			char *eq = strchr(c->assign[a], '=');
			*eq = 0;
			setenv(c->assign[a], eq + 1, 1);
			*eq = '=';
		}
		return 0;
	}
	if (pl->n == 1 && !pl->background && sh_is_builtin(c->argv[0])) {
		int saved[3];
		int st = redirect_here(c, saved) < 0 ? 1 : builtin(c->argc, c->argv);
		restore_here(saved);
		return st;
	}
	return run_job(pl);
}

void sh_wait_all(void)
{
	int status;
	while (exo_wait(-1, &status) > 0)
		;
}
