/*
 * edtest.c - guest tests of the exodisk through the real system call
 * (issue 4, docs/exodisk.md): every operation of kernel/uapi/exodisk.h and
 * the bad input the kernel must refuse, each with its own error, without
 * harm to the kernel or to other applications.
 *
 *   edtest [-u UNIT] [GROUP...]     run the groups (default: all but those
 *                                   needing a special boot), print one ok/FAIL
 *                                   line per check, exit 0 if all pass
 *   edtest [-u UNIT] persist-write [crash]    persistence across a reboot:
 *   edtest [-u UNIT] persist-check            see apps/edtest/t_persist.c and
 *   edtest [-u UNIT] persist-tampered         tests/qemu/cases_exodisk.py
 *   edtest [-u UNIT] persist-nodisk
 *   edtest [-u UNIT] powercut-run STEPS       the exodisk's power-cut workload
 *   edtest [-u UNIT] powercut-check STEPS N   (apps/edtest/t_powercut.c)
 *   edtest -u UNIT child NAME ARGS...         a helper process (spawned by a group)
 *
 * The groups live in apps/edtest/t_*.c, the shared harness in
 * apps/edtest/harness.c.  Run `edtest list` for the group names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/edtest/edt.h"
#include "libos/exo.h"

static const struct {
	const char *name;
	void (*run)(void);
	bool only_by_name;      /* needs a special boot: run when named */
} groups[] = {
	{ "extents", t_extents },
	{ "exonodes", t_exonodes },
	{ "descendants", t_descendants },
	{ "proxies", t_proxies },
	{ "maps", t_maps },
	{ "freemap", t_freemap },
	{ "cache", t_cache },
	{ "busy", t_busy },
	{ "pointers", t_pointers },
	{ "absurd", t_absurd },
	{ "isolation", t_isolation },
	{ "exit", t_exit_inflight },
	{ "units", t_units },
	{ "nospace", t_nospace, true },
};
#define NGROUPS (sizeof groups / sizeof groups[0])

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	bool needs_disk;
} commands[] = {
	{ "stranger", c_stranger, true },
	{ "exit-inflight", c_exit_inflight, true },
	{ "map-write", c_map_write, true },
	{ "fm-write", c_fm_write, false },
	{ "proxy-maker", c_proxy_maker, true },
	{ "proxy-user", c_proxy_user, true },
	{ "orphan-parent", c_orphan_parent, false },
	{ "orphan-shutdown", c_orphan_shutdown, true },
	{ "persist-write", p_write, true },
	{ "persist-check", p_check, true },
	{ "persist-tampered", p_tampered, true },
	{ "persist-nodisk", p_nodisk, false },
	{ "powercut-run", p_powercut_run, true },
	{ "powercut-check", p_powercut_check, true },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(void)
{
	fprintf(stderr, "usage: edtest [-u UNIT] [GROUP...] | list | persist-write [crash] | "
	                "persist-check | persist-tampered | persist-nodisk | powercut-run STEPS | "
	                "powercut-check STEPS N\n");
	exit(2);
}

static int summary(const char *who)
{
	unsigned long n = checks_done(), f = checks_failed();
	printf("%s: %lu checks, %lu failed\n", who, n, f);
	if (f == 0)
		printf("%s: ok\n", who);
	return f == 0 ? 0 : 1;
}

/* Open the unit's free map (one system call, the first time). */
static bool open_unit(bool quiet)
{
	int r = edc_fm_open(E, U, &FM);
	if (r < 0 && !quiet)
		printf("FAIL: unit %d has no mounted exodisk: %s\n", U, exo_strerror(r));
	return r == 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	client_init();
	int i = 1;
	if (i + 1 < argc && strcmp(argv[i], "-u") == 0) {
		U = atoi(argv[i + 1]);
		i += 2;
	}
	/* Capabilities differ from run to run, so runs on a kept disk never
	 * meet each other's objects by accident. */
	cap_seed(exo_time() ^ ((uint64_t)exo_getpid() << 40));

	if (i < argc && strcmp(argv[i], "list") == 0) {
		for (size_t g = 0; g < NGROUPS; g++)
			printf("%s\n", groups[g].name);
		return 0;
	}
	bool is_child = i < argc && strcmp(argv[i], "child") == 0;
	if (is_child)
		i++;
	for (size_t k = 0; i < argc && k < NCOMMANDS; k++) {
		if (strcmp(argv[i], commands[k].name) != 0)
			continue;
		if (commands[k].needs_disk && !open_unit(false))
			return 1;
		int r = commands[k].run(argc - i, argv + i);
		/* Children report their own ok/FAIL lines; a command's status
		 * is its own business (see each). */
		return r;
	}
	if (is_child)
		usage();

	if (!open_unit(false))
		return 1;
	printf("edtest: unit %d, %lu sectors, %lu free\n", U, (unsigned long)FM.nsectors,
	       (unsigned long)edc_fm_count_free(&FM));
	bool any = false;
	for (size_t g = 0; g < NGROUPS; g++) {
		bool want = i == argc && !groups[g].only_by_name;
		for (int k = i; k < argc; k++)
			if (strcmp(argv[k], groups[g].name) == 0)
				want = true;
		if (want) {
			group(groups[g].name);
			groups[g].run();
			any = true;
		}
	}
	if (!any)
		usage();
	return summary("edtest");
}
