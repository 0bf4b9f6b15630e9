/*
 * spawntest.c - check that processes give back what they take.
 *   spawntest       spawn and reap many children and compare the free-page
 *                   count (from the kernel information page) before and
 *                   after; fill the process table and check that the kernel
 *                   says so and recovers
 */
#include <stdio.h>
#include "libos/exo.h"
#include "kernel/uapi/errno.h"

static char *true_argv[] = { "true", NULL };

int main(void)
{
	int bad = 0, status;
	/* Warm up: the first spawns may grow our own heap or stdio buffers. */
	for (int i = 0; i < 3; i++) exo_wait(exo_spawn("/bin/true", true_argv, NULL), &status);
	uint64_t before = exo_kinfo()->free_pages;
	for (int i = 0; i < 200; i++) {
		int pid = exo_spawn("/bin/true", true_argv, NULL);
		if (pid < 0) { printf("FAIL: spawn %d: %s\n", i, exo_strerror(pid)); return 1; }
		if (exo_wait(pid, &status) != pid || status != 0) { printf("FAIL: wait %d\n", i); return 1; }
	}
	uint64_t after = exo_kinfo()->free_pages;
	printf("%s: free pages before %lu, after 200 spawns %lu\n",
	       before == after ? "ok" : "FAIL", (unsigned long)before, (unsigned long)after);
	bad |= before != after;

	/* Fill the table with sleepers. */
	static char *sleep_argv[] = { "spin", "x", "0", NULL };
	int n = 0, err = 0;
	for (;;) {
		int pid = exo_spawn("/bin/spin", sleep_argv, NULL);
		if (pid < 0) { err = pid; break; }
		n++;
	}
	printf("%s: spawned %d before the table filled (%s)\n",
	       err == K_E_NOPROC ? "ok" : "FAIL", n, exo_strerror(err));
	bad |= err != K_E_NOPROC;
	while (exo_wait(-1, &status) > 0) n--;
	printf("%s: all reaped (%d left)\n", n == 0 ? "ok" : "FAIL", n);
	bad |= n != 0;
	int pid = exo_spawn("/bin/true", true_argv, NULL);
	bad |= pid < 0 || exo_wait(pid, &status) != pid;
	printf("%s: spawning works again\n", bad ? "FAIL" : "ok");
	return bad;
}
