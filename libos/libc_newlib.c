/*
 * libc_newlib.c - what newlib expects from the system beneath it, on
 * x86-64 (libos/stdio.c is picolibc's counterpart on RISC-V).
 *
 * newlib's stdio, malloc and friends reach the system through plain POSIX
 * names (read, write, lseek, fstat, isatty, sbrk, open, close, ...: newlib
 * for a bare x86_64-elf target calls them without the usual leading
 * underscore); the library OS already has those (fd.c, posix.c, sbrk.c,
 * exo.c; gettimeofday, for time(), is libos/clock.c's).  This file adds
 * the few newlib also wants: kill (for abort), link, times (for clock), and
 * the empty _init and _fini it runs around the constructor and destructor
 * arrays.
 *
 * newlib keeps the standard streams on descriptors 0, 1 and 2 itself:
 * stdout is line-buffered when fstat says the descriptor is a character
 * device (the console) and fully buffered otherwise (a redirection to a
 * file), stderr is unbuffered, and exit flushes every open stream.
 */
#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <time.h>
#include <sys/time.h>
#include <sys/times.h>
#include <unistd.h>
#include "libos/exo.h"
#include "libos/sys.h"

void _init(void) { }
void _fini(void) { }

/* abort() raises SIGABRT against itself: end the process the way a fatal
 * signal would.  Any other target (a process, or -group) exits with 128 +
 * sig too, as the kernel's kill does (uapi/proc.h); there are no handlers.
 * Signal 0 asks only whether the process exists (the exported table). */
int kill(pid_t pid, int sig)
{
	if (sig < 0 || sig > 127) {
		errno = EINVAL;
		return -1;
	}
	if (sig == 0) {
		const struct kproc *t = exo_procs();
		for (int i = 0; i < KPROC_SLOTS; i++)
			if (pid > 0 ? t[i].pid == pid : pid < 0 && t[i].pid != 0 && t[i].pgid == -pid)
				if (t[i].state != KPROC_ZOMBIE)
					return 0;
		errno = ESRCH;
		return -1;
	}
	if (pid == exo_getpid())
		_exit(128 + sig);
	long r = sys_kill(pid, sig);
	if (r < 0) {
		errno = exo_errno(r);
		return -1;
	}
	return 0;
}

int link(const char *from, const char *to)
{
	(void)from;
	(void)to;
	errno = EMLINK;                 /* the library file systems have no hard links */
	return -1;
}

clock_t times(struct tms *t)
{
	uint64_t ns = exo_time_to_ns(exo_time() - exo_kinfo()->boot_time);
	clock_t c = (clock_t)(ns / (1000000000u / CLOCKS_PER_SEC));
	if (t != NULL) {
		t->tms_utime = c;
		t->tms_stime = 0;
		t->tms_cutime = 0;
		t->tms_cstime = 0;
	}
	return c;
}
