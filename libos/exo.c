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
int  exo_spawn_opts(const char *path, char *const argv[], char *const envp[], const struct spawn_opts *o)
{ return (int)sys_spawn_opts(path, argv, envp, o); }
int  exo_wait(int pid, int *status) { return (int)sys_wait(pid, status); }
int  exo_wait_opts(int pid, int *status, int options) { return (int)sys_wait_opts(pid, status, options); }
void exo_yield(void) { sys_yield(); }
int  exo_getpid(void) { return (int)sys_getpid(); }
int  exo_kill(int pid) { return (int)sys_kill(pid, KILL_KILL); }
int  exo_kill_why(int target, int why) { return (int)sys_kill(target, why); }
void exo_poweroff(int status) { sys_poweroff(status); }

int exo_pipe(int h[2])
{
	int32_t k[2];
	long r = sys_pipe(k);
	if (r < 0) return (int)r;
	h[0] = k[0];
	h[1] = k[1];
	return 0;
}

int  exo_hclose(int h) { return (int)sys_hclose(h); }
int  exo_claim_intr(int force) { return (int)sys_cons_ctl(CONS_CLAIM_INTR, force); }
long exo_cons_read(void *buf, unsigned long len) { return sys_cons_read(buf, len); }

const void *exo_initrd(void)
{
	static const void *image;
	if (image == NULL) {
		long r = sys_initrd_map();
		if (r < 0) return NULL;
		image = (const void *)r;
	}
	return image;
}

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

