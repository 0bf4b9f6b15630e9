/*
 * test_prof.c - host tests of the profiler's symbolizer and report
 * (apps/prof/symtab.c, report.c), which `prof` runs in the guest and
 * tools/prof-report on the host.
 *
 *   test_prof GUEST_PROGRAM KERNEL_ELF NM
 *
 * Symbols: every function nm lists in a real guest program and in the kernel
 * is found at its first and last byte, and addresses outside are not.
 * Report: a made-up record with known samples (user, kernel, asleep, a leaf
 * whose caller is only in ra, a phase mark) must give exactly the self and
 * total counts worked out by hand; broken records are refused, never crash
 * (this runs under AddressSanitizer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/prof/report.h"
#include "apps/prof/symtab.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

static const char *prog_path, *kernel_path, *nm;

static long file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	FILE *f = ctx;
	if (fseek(f, (long)off, SEEK_SET) != 0) return -1;
	return (long)fread(buf, 1, len, f);
}

static int load_file(struct symtab *t, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL) { perror(path); exit(2); }
	const char *why;
	int r = symtab_load(t, file_read, f, &why);
	if (r < 0) printf("%s: %s\n", path, why);
	fclose(f);
	return r;
}

/* Address and size of a function as nm sees it (0 if absent). */
static uint64_t nm_lookup(const char *path, const char *name, uint64_t *size)
{
	char cmd[1024], line[512];
	snprintf(cmd, sizeof cmd, "%s -S --defined-only %s", nm, path);
	FILE *p = popen(cmd, "r");
	if (p == NULL) { perror(nm); exit(2); }
	uint64_t addr = 0;
	while (fgets(line, sizeof line, p)) {
		unsigned long long a, s = 0;
		char type, sym[400];
		if ((sscanf(line, "%llx %llx %c %399s", &a, &s, &type, sym) == 4 ||
		     (s = 0, sscanf(line, "%llx %c %399s", &a, &type, sym) == 3)) && strcmp(sym, name) == 0 &&
		    (type == 'T' || type == 't')) {
			addr = a;
			*size = s;
		}
	}
	pclose(p);
	return addr;
}

/* Every text symbol nm reports with a size is found at both ends. */
static void test_symbols(const char *path, const char *const *must)
{
	struct symtab t;
	if (load_file(&t, path) < 0) { failures++; return; }
	CHECK(t.nsyms > 10, "%s: only %d symbols", path, t.nsyms);
	for (int i = 1; i < t.nsyms; i++)
		CHECK(t.syms[i - 1].end <= t.syms[i].addr, "%s: %s overlaps %s", path, t.syms[i - 1].name, t.syms[i].name);
	for (int i = 0; must[i]; i++) {
		uint64_t size = 0, a = nm_lookup(path, must[i], &size);
		CHECK(a != 0, "%s: nm has no %s", path, must[i]);
		if (a == 0) continue;
		int k = symtab_find(&t, a);
		CHECK(k >= 0 && strcmp(t.syms[k].name, must[i]) == 0, "%s: %s at %#llx found as %s", path, must[i],
		      (unsigned long long)a, k >= 0 ? t.syms[k].name : "nothing");
		if (size > 0) {
			k = symtab_find(&t, a + size - 1);
			CHECK(k >= 0 && strcmp(t.syms[k].name, must[i]) == 0, "%s: the last byte of %s", path, must[i]);
		}
	}
	CHECK(symtab_find(&t, 0) < 0, "address 0 has a symbol");
	CHECK(symtab_find(&t, ~0ull) < 0, "the top address has a symbol");
	symtab_free(&t);

	/* Not an ELF file: refused with a reason. */
	struct symtab u;
	const char *why = NULL;
	FILE *f = tmpfile();
	fputs("not an elf file at all, just some text long enough for a header", f);
	CHECK(symtab_load(&u, file_read, f, &why) < 0 && why != NULL, "a text file loaded as ELF");
	fclose(f);
}

/* ---- a made-up record --------------------------------------------------- */

static uint8_t rec[1 << 16];
static size_t used;

static void *put(int type, int kind, int nk, int nu, int pid, size_t body)
{
	struct prof_rec *r = (struct prof_rec *)(rec + used);
	memset(r, 0, sizeof *r + body + 8);
	r->type = (uint8_t)type;
	r->kind = (uint8_t)kind;
	r->nk = (uint8_t)nk;
	r->nu = (uint8_t)nu;
	r->pid = (uint32_t)pid;
	r->time = used;      /* increasing */
	used += (sizeof *r + body + 7) & ~(size_t)7;
	return r + 1;
}

static void sample(int kind, int nk, const uint64_t *k, int nu, const uint64_t *u)
{
	uint64_t *a = put(PROF_R_SAMPLE, kind, nk, nu, 7, (size_t)(nk + nu) * 8);
	if (nk) memcpy(a, k, (size_t)nk * 8);
	memcpy(a + nk, u, (size_t)nu * 8);
}

static int load_syms(void *ctx, const char *path, struct symtab *t, const char **why)
{
	const char *file = path == NULL ? kernel_path : strcmp(path, "/bin/prog") == 0 ? prog_path : "/nonexistent";
	FILE *f = fopen(file, "rb");
	if (f == NULL) { *why = "no such file"; return -1; }
	int r = symtab_load(t, file_read, f, why);
	fclose(f);
	return r;
}

/* The report's line for a function in the table that follows heading:
 * self and total samples, or -1 if the function is not listed. */
static void row(const char *text, const char *heading, const char *fn, long *self, long *total)
{
	*self = *total = -1;
	const char *t = strstr(text, heading);
	if (t == NULL) return;
	t = strchr(t, '\n') + 1;
	t = strchr(t, '\n') + 1;        /* past the column titles */
	while (*t == ' ') {
		const char *nl = strchr(t, '\n');
		char line[256];
		size_t n = (size_t)(nl - t) < sizeof line - 1 ? (size_t)(nl - t) : sizeof line - 1;
		memcpy(line, t, n);
		line[n] = 0;
		double sp, tp;
		long s;
		char name[200];
		/* "  self% self total%[ asleep%]  name" */
		char *last = NULL;
		for (char *q = strstr(line, "%  "); q; q = strstr(q + 1, "%  ")) last = q;
		if (last && sscanf(line, " %lf%% %ld %lf%%", &sp, &s, &tp) == 3 && sscanf(last + 3, "%199[^\n]", name) == 1 &&
		    strcmp(name, fn) == 0) {
			/* total% is a share: turn it back into samples with self's. */
			*self = s;
			*total = sp > 0 ? (long)(tp / sp * (double)s + 0.5) : -2;
			return;
		}
		t = nl + 1;
	}
}

static void test_report(void)
{
	uint64_t sz;
	uint64_t main_a = nm_lookup(prog_path, "main", &sz);
	uint64_t memset_a = nm_lookup(prog_path, "memset", &sz);
	uint64_t start_a = nm_lookup(prog_path, "libos_start", &sz);
	uint64_t sys_a = nm_lookup(kernel_path, "syscall", &sz);
	uint64_t trap_a = nm_lookup(kernel_path, "user_trap", &sz);
	uint64_t sched_a = nm_lookup(kernel_path, "sched", &sz);
	uint64_t sleep_a = nm_lookup(kernel_path, "sleep_on", &sz);
	uint64_t wait_a = nm_lookup(kernel_path, "proc_wait", &sz);
	uint64_t plic_a = nm_lookup(kernel_path, "plic_dispatch", &sz);
	CHECK(main_a && memset_a && start_a && sys_a && trap_a && sched_a && sleep_a && wait_a && plic_a,
	      "symbols missing");

	used = 0;
	struct prof_proc *pp = put(PROF_R_PROC, 0, 0, 0, 7, sizeof *pp);
	pp->ppid = 1;
	strcpy(pp->path, "/bin/prog");
	/* Before any mark: 10 user samples in main, called from libos_start. */
	for (int i = 0; i < 10; i++) {
		uint64_t u[3] = { main_a + 4, 0, start_a + 9 };
		sample(PROF_K_USER, 0, NULL, 3, u);
	}
	struct prof_mark *mk = put(PROF_R_MARK, 0, 0, 0, 7, sizeof *mk);
	strcpy(mk->name, "phase-one");
	mk->units = 4;
	mk->proc.syscalls = 100;
	/* 6 samples in a leaf (memset) whose caller, main, is only in ra; the
	 * chain starts at main's caller. */
	for (int i = 0; i < 6; i++) {
		uint64_t u[3] = { memset_a + 2, main_a + 9, start_a + 9 };
		sample(PROF_K_USER, 0, NULL, 3, u);
	}
	/* 4 kernel samples in syscall, made from main. */
	for (int i = 0; i < 4; i++) {
		uint64_t k[3] = { sys_a + 4, 0, trap_a + 9 }, u[3] = { main_a + 4, 0, start_a + 9 };
		sample(PROF_K_KERNEL, 3, k, 3, u);
	}
	/* 5 asleep in proc_wait (past sched and sleep_on). */
	for (int i = 0; i < 5; i++) {
		uint64_t k[5] = { sched_a + 4, 0, sleep_a + 9, wait_a + 9, sys_a + 9 }, u[2] = { main_a + 4, 0 };
		sample(PROF_K_WAIT, 5, k, 2, u);
	}
	/* 3 of the kernel handling an interrupt (pid 0, no user part). */
	for (int i = 0; i < 3; i++) {
		uint64_t k[3] = { plic_a + 4, 0, trap_a + 9 };
		uint64_t *a = put(PROF_R_SAMPLE, PROF_K_IRQ, 3, 0, 0, sizeof k);
		memcpy(a, k, sizeof k);
	}
	struct prof_exit *ex = put(PROF_R_EXIT, 0, 0, 0, 7, sizeof *ex);
	ex->proc.syscalls = 140;
	ex->proc.by_syscall[3] = 40;
	ex->proc.disk_reads = 8;

	struct prof_file hdr;
	memset(&hdr, 0, sizeof hdr);
	memcpy(hdr.magic, PROF_FILE_MAGIC, 8);
	hdr.version = PROF_FILE_VERSION;
	hdr.hdr_bytes = sizeof hdr;
	hdr.info.timebase_hz = 10000000;
	hdr.info.hz = 1000;
	hdr.info.used = used;
	strcpy(hdr.cmd, "prog");
	struct prof_syms syms = { load_syms, NULL, NULL };
	struct prof_opts opts = { 50, 50, 0, NULL };
	char *text = NULL;
	size_t tlen = 0;
	FILE *out = open_memstream(&text, &tlen);
	int r = prof_report(out, &hdr, rec, &syms, &opts);
	fclose(out);
	CHECK(r == 0, "report failed");

	long self, total;
	row(text, "Running (user, kernel and interrupt samples), by self:", "main", &self, &total);
	CHECK(self == 10, "main: %ld running self samples, want 10", self);
	CHECK(strstr(text, "28 samples of 1 process") != NULL, "the sample total is not 28");
	CHECK(strstr(text, "the kernel handling interrupts            3") != NULL, "the interrupt samples are not 3");
	CHECK(total == 20, "main: %ld running total samples, want 20 (10 own, 6 of its leaf, 4 in the kernel)", total);
	row(text, "Running (user, kernel and interrupt samples), by self:", "memset", &self, &total);
	CHECK(self == 6 && total == 6, "memset: self %ld total %ld, want 6 and 6", self, total);
	row(text, "Running (user, kernel and interrupt samples), by self:", "syscall [k]", &self, &total);
	CHECK(self == 4 && total == 4, "syscall [k]: self %ld total %ld, want 4 and 4", self, total);
	row(text, "Running (user, kernel and interrupt samples), by self:", "libos_start", &self, &total);
	CHECK(self == -1 || self == 0, "libos_start has %ld running self samples", self);
	row(text, "Wall clock (every sample: asleep and ready too), by self:", "proc_wait [k]", &self, &total);
	CHECK(self == 5 && total == 5, "proc_wait [k]: self %ld total %ld, want 5 and 5", self, total);
	row(text, "Running (user, kernel and interrupt samples), by self:", "plic_dispatch [k]", &self, &total);
	CHECK(self == 3 && total == 3, "plic_dispatch [k]: self %ld total %ld, want 3 and 3", self, total);
	row(text, "Wall clock (every sample: asleep and ready too), by self:", "sched [k]", &self, &total);
	CHECK(self == -1, "sched [k] has self samples: the scheduler's frames must be skipped");
	CHECK(strstr(text, "system calls   140: wait 40") != NULL, "the exit counts are missing");
	CHECK(strstr(text, "Phase phase-one: 18 samples") != NULL, "the phase's samples are wrong");
	/* Counts per unit: 140 - 100 syscalls over 4 units. */
	CHECK(strstr(text, "     4") != NULL && strstr(text, "10.00") != NULL, "the phase's per-unit counts are wrong");
	if (failures) printf("%s", text);
	free(text);

	/* --lines: memset's 6 self samples, all at one address. */
	opts.lines = "memset";
	out = open_memstream(&text, &tlen);
	r = prof_report(out, &hdr, rec, &syms, &opts);
	fclose(out);
	char want[64];
	snprintf(want, sizeof want, "100.0%%       6  %#lx\n", (unsigned long)(memset_a + 2));
	CHECK(r == 0 && strstr(text, "Self samples of memset (all kinds) by address:") && strstr(text, want),
	      "--lines: memset's samples not listed at %#lx", (unsigned long)(memset_a + 2));
	free(text);
	opts.lines = NULL;

	/* The folded stacks: one line per sample, outermost first. */
	opts.folded = 1;
	out = open_memstream(&text, &tlen);
	r = prof_report(out, &hdr, rec, &syms, &opts);
	fclose(out);
	int lines = 0;
	for (char *c = text; *c; c++) lines += *c == '\n';
	CHECK(r == 0 && lines == 28, "folded: %d lines, want one per sample (28)", lines);
	CHECK(strstr(text, "\nlibos_start;main;memset 1\n") != NULL, "folded: no leaf stack through ra");
	CHECK(strstr(text, "\nmain;syscall [k];proc_wait [k];[asleep] 1\n") != NULL, "folded: no sleeping stack");
	CHECK(strstr(text, "\nuser_trap [k];plic_dispatch [k] 1\n") != NULL, "folded: no interrupt stack");
	if (failures) printf("%s", text);
	free(text);
	opts.folded = 0;

	/* Broken records: refused, and nothing read out of bounds. */
	for (size_t cut = 1; cut < used; cut += 8) {
		hdr.info.used = cut;
		out = open_memstream(&text, &tlen);
		uint8_t *copy = malloc(cut);
		memcpy(copy, rec, cut);
		r = prof_report(out, &hdr, copy, &syms, &opts);
		fclose(out);
		free(copy);
		free(text);
	}
	rec[0] = 99;   /* no such record type */
	hdr.info.used = used;
	out = open_memstream(&text, &tlen);
	CHECK(prof_report(out, &hdr, rec, &syms, &opts) < 0, "a record of an unknown type was accepted");
	fclose(out);
	free(text);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_prof GUEST_PROGRAM KERNEL_ELF NM\n");
		return 2;
	}
	prog_path = argv[1];
	kernel_path = argv[2];
	nm = argv[3];
	static const char *const user_syms[] = { "main", "memset", "libos_start", "_start", NULL };
	static const char *const kernel_syms[] = { "syscall", "user_trap", "sched", "kernel_trap", "prof_tick", NULL };
	test_symbols(prog_path, user_syms);
	test_symbols(kernel_path, kernel_syms);
	test_report();
	printf("%s\n", failures ? "test_prof: FAILED" : "test_prof: ok");
	return failures != 0;
}
