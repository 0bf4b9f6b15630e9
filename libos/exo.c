/*
 * exo.c - process, time and boot-option helpers over the raw system calls,
 * plus the few POSIX calls that map straight onto them.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include "libos/exo.h"
#include "libos/sys.h"

int  exo_spawn(const char *path, char *const argv[], char *const envp[]) { return (int)sys_spawn(path, argv, envp); }
int  exo_wait(int pid, int *status) { return (int)sys_wait(pid, status); }
void exo_yield(void) { sys_yield(); }
int  exo_getpid(void) { return (int)sys_getpid(); }
int  exo_kill(int pid) { return (int)sys_kill(pid); }
void exo_poweroff(int status) { sys_poweroff(status); }

uint64_t exo_time_to_ns(uint64_t t)
{
	uint64_t hz = exo_kinfo()->timebase_hz;
	return (t / hz) * 1000000000ull + (t % hz) * 1000000000ull / hz;
}

uint64_t exo_ns_to_time(uint64_t ns)
{
	uint64_t hz = exo_kinfo()->timebase_hz;
	return (ns / 1000000000ull) * hz + (ns % 1000000000ull) * hz / 1000000000ull;
}

void exo_sleep_ns(uint64_t ns)
{
	sys_sleep(exo_ns_to_time(ns));
}

int exo_bootopt(const char *key, char *value, unsigned size)
{
	const char *s = exo_kinfo()->bootargs;
	size_t klen = strlen(key);
	while (*s) {
		while (*s == ' ') s++;
		const char *w = s;
		int rest = strncmp(w, "cmd=", 4) == 0;
		while (*s && (rest || *s != ' ')) s++;
		size_t wlen = (size_t)(s - w);
		if (wlen >= klen && strncmp(w, key, klen) == 0 && (wlen == klen || w[klen] == '=')) {
			const char *v = wlen == klen ? w + klen : w + klen + 1;
			size_t vlen = (size_t)(s - v);
			if (size == 0) return 0;
			if (vlen >= size) vlen = size - 1;
			memcpy(value, v, vlen);
			value[vlen] = 0;
			return 1;
		}
	}
	return 0;
}

pid_t getpid(void) { return (pid_t)sys_getpid(); }

int usleep(useconds_t us)
{
	exo_sleep_ns((uint64_t)us * 1000);
	return 0;
}

unsigned sleep(unsigned s)
{
	exo_sleep_ns((uint64_t)s * 1000000000ull);
	return 0;
}

/* There is no real-time clock: every clock counts from boot. */
int clock_gettime(clockid_t clk, struct timespec *ts)
{
	(void)clk;
	uint64_t ns = exo_time_to_ns(exo_time() - exo_kinfo()->boot_time);
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
	return 0;
}
