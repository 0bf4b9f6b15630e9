/*
 * prof.c - run a command under the profiler and print where its time went.
 *
 *   prof [-f HZ] [-b KB] [-n ROWS] [-p ROWS] [-1] [-o FILE] [-d] [-q] CMD [ARGS...]
 *
 * The kernel samples CMD (and, unless -1, every process it starts) HZ times a
 * second: user and kernel PCs with their call chains, and where a sleeping
 * process sleeps (kernel/arch/riscv/prof_sample.c).  Afterwards prof reads the record, finds the
 * symbols of each program and of the kernel in the initrd (/bin/NAME,
 * /etc/kernel.elf), and prints the top functions, the counts of system calls
 * and disk requests, and a section per phase if the program marked phases
 * (exo_phase in libos/prof.h).  docs/profiling.md explains the report.
 *
 * -o FILE saves the record (tools/prof-report prints the same report on the
 * host from it, and can look deeper); -d prints it on the console in hex for
 * tools/prof-report --log.  prof exits with CMD's status; 125 when prof
 * itself fails, 127 when CMD is not found.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libos/exo.h"
#include "libos/prof.h"
#include "libos/files.h"
#include "apps/prof/report.h"
#include "kernel/uapi/errno.h"

#define KERNEL_SYMS "/etc/kernel.elf"

extern char **environ;

static void usage(void)
{
	fprintf(stderr,
	        "usage: prof [-f HZ] [-b KB] [-n ROWS] [-p ROWS] [-1] [-o FILE] [-d] [-q] CMD [ARGS...]\n"
	        "  -f HZ    samples per second (default %d, %d..%d)\n"
	        "  -b KB    record buffer in KiB (default %u)\n"
	        "  -n ROWS  rows in the top lists (default 20); -p ROWS per phase (default 10)\n"
	        "  -1       profile CMD only, not the processes it starts\n"
	        "  -o FILE  save the record for tools/prof-report\n"
	        "  -d       print the record on the console in hex (tools/prof-report --log)\n"
	        "  -q       do not print the report\n",
	        PROF_HZ_DEFAULT, PROF_HZ_MIN, PROF_HZ_MAX, PROF_BYTES_DEFAULT >> 10);
	exit(125);
}

static long number(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == 0 || *end != 0 || v < 0) usage();
	return v;
}

static long image_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	return exo_prof_image(ctx, off, buf, len);
}

static int load_syms(void *ctx, const char *path, struct symtab *t, const char **why)
{
	return symtab_load(t, image_read, (void *)(path ? path : KERNEL_SYMS), why);
}

static int save(const char *file, const struct prof_file *hdr, const uint8_t *data)
{
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, hdr, sizeof *hdr) != (ssize_t)sizeof *hdr ||
	    write(fd, data, hdr->info.used) != (ssize_t)hdr->info.used || close(fd) < 0) {
		perror(file);
		return -1;
	}
	return 0;
}

static void dump(const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char line[2 * 64 + 1];
	for (size_t off = 0; off < n; off += 64) {
		size_t k = n - off < 64 ? n - off : 64;
		for (size_t i = 0; i < k; i++) {
			line[2 * i] = hex[p[off + i] >> 4];
			line[2 * i + 1] = hex[p[off + i] & 15];
		}
		line[2 * k] = 0;
		printf("prof-dump: %s\n", line);
	}
}

int main(int argc, char **argv)
{
	struct prof_config cfg = { PROF_HZ_DEFAULT, PROF_F_INHERIT, PROF_BYTES_DEFAULT };
	struct prof_opts opts = { 20, 10, 0, NULL };
	const char *outfile = NULL;
	int hexdump = 0, quiet = 0, a = 1;
	for (; a < argc && argv[a][0] == '-'; a++) {
		const char *o = argv[a];
		if (strcmp(o, "--") == 0) { a++; break; }
		if (strcmp(o, "-1") == 0) { cfg.flags &= ~PROF_F_INHERIT; continue; }
		if (strcmp(o, "-d") == 0) { hexdump = 1; continue; }
		if (strcmp(o, "-q") == 0) { quiet = 1; continue; }
		if (o[1] == 0 || o[2] != 0 || a + 1 >= argc) usage();
		const char *v = argv[++a];
		switch (o[1]) {
		case 'f': cfg.hz = (uint32_t)number(v); break;
		case 'b': cfg.bytes = (uint64_t)number(v) << 10; break;
		case 'n': opts.top = (int)number(v); break;
		case 'p': opts.phase_top = (int)number(v); break;
		case 'o': outfile = v; break;
		default: usage();
		}
	}
	if (a >= argc) usage();
	char **cmd = argv + a;

	struct prof_file *hdr = calloc(1, sizeof *hdr);
	if (hdr == NULL) return 125;
	memcpy(hdr->magic, PROF_FILE_MAGIC, 8);
	hdr->version = PROF_FILE_VERSION;
	hdr->hdr_bytes = sizeof *hdr;
	for (int i = 0; cmd[i]; i++) {
		size_t used = strlen(hdr->cmd);
		snprintf(hdr->cmd + used, sizeof hdr->cmd - used, "%s%s", i ? " " : "", cmd[i]);
	}
	char path[128];
	if (strchr(cmd[0], '/')) snprintf(path, sizeof path, "%s", cmd[0]);
	else snprintf(path, sizeof path, "/bin/%s", cmd[0]);

	long e = exo_prof_start(&cfg);
	if (e < 0) {
		fprintf(stderr, "prof: cannot start a profile: %s\n", exo_strerror(e));
		return 125;
	}
	/* Like the shell: make our file systems durable and let go of them, so
	 * the command can mount them. */
	fflush(stdout);
	fs_release();
	hdr->before = *exo_counts_all();
	int pid = exo_spawn(path, cmd, environ);
	if (pid < 0) {
		exo_prof_free();
		fprintf(stderr, "prof: %s: %s\n", cmd[0], pid == K_E_NOENT ? "command not found" : exo_strerror(pid));
		return pid == K_E_NOENT ? 127 : 125;
	}
	int status = 0;
	e = exo_wait(pid, &status);
	hdr->after = *exo_counts_all();
	exo_prof_stop();
	if (e < 0 || exo_prof_info(&hdr->info) < 0) {
		fprintf(stderr, "prof: waiting for %s: %s\n", cmd[0], exo_strerror(e));
		exo_prof_free();
		return 125;
	}
	hdr->status = status;
	uint8_t *data = malloc(hdr->info.used ? hdr->info.used : 1);
	if (data == NULL) {
		fprintf(stderr, "prof: no memory for %lu bytes of samples\n", (unsigned long)hdr->info.used);
		exo_prof_free();
		return 125;
	}
	for (uint64_t off = 0; off < hdr->info.used;) {
		long n = exo_prof_read(off, data + off, hdr->info.used - off);
		if (n <= 0) {
			fprintf(stderr, "prof: reading the record: %s\n", exo_strerror(n));
			exo_prof_free();
			return 125;
		}
		off += (uint64_t)n;
	}
	exo_prof_free();

	int failed = 0;
	if (outfile && save(outfile, hdr, data) < 0) failed = 1;
	if (hexdump) {
		printf("prof-dump: begin %lu\n", (unsigned long)(sizeof *hdr + hdr->info.used));
		dump((const uint8_t *)hdr, sizeof *hdr);
		dump(data, hdr->info.used);
		printf("prof-dump: end\n");
	}
	if (!quiet) {
		struct prof_syms syms = { load_syms, NULL, NULL };
		if (prof_report(stdout, hdr, data, &syms, &opts) < 0) failed = 1;
	}
	fflush(stdout);
	free(data);
	free(hdr);
	return failed ? 125 : status;
}
