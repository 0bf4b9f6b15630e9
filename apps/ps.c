/*
 * ps.c - list the processes.
 *   ps          PID, parent, process group (a shell job), state, CPU time used
 *               and name, of every process
 * It reads the process table the kernel exports read-only (UPROCS,
 * kernel/uapi/proc.h): no system call.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/exo.h"

static int by_pid(const void *a, const void *b)
{
	return ((const struct kproc *)a)->pid - ((const struct kproc *)b)->pid;
}

int main(int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "usage: ps\n");
		return 2;
	}
	static const char *const state[] = {
		[KPROC_FREE] = "free", [KPROC_NEW] = "new", [KPROC_READY] = "ready",
		[KPROC_RUNNING] = "running", [KPROC_SLEEPING] = "sleeping", [KPROC_ZOMBIE] = "zombie",
	};
	/* A copy, so the table cannot change while we print it. */
	struct kproc t[KPROC_SLOTS];
	int n = 0;
	for (int i = 0; i < KPROC_SLOTS; i++) {
		struct kproc k = exo_procs()[i];
		if (k.pid != 0)
			t[n++] = k;
	}
	qsort(t, (size_t)n, sizeof t[0], by_pid);
	uint64_t hz = 100;       /* the kernel's scheduler tick (kernel/trap.h HZ) */
	printf("  PID  PPID  PGID STATE        TIME NAME\n");
	for (int i = 0; i < n; i++) {
		uint64_t s = t[i].ticks / hz;
		char name[KPROC_NAME + 1];
		memcpy(name, t[i].name, KPROC_NAME);
		name[KPROC_NAME] = 0;
		printf("%5d %5d %5d %-8s %4llu:%02llu %s\n", t[i].pid, t[i].ppid, t[i].pgid,
		       t[i].state <= KPROC_ZOMBIE ? state[t[i].state] : "?",
		       (unsigned long long)(s / 60), (unsigned long long)(s % 60), name);
	}
	return 0;
}
