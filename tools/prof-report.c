/*
 * prof-report - print the report of a profile recorded in the guest by
 * `prof -o FILE` or `prof -d`, with symbols from the build tree
 * (docs/profiling.md).  The report is the one the guest prints (the same
 * code: apps/prof/report.c); on the host it can also use a kernel or
 * programs other than the initrd's, and needs no guest memory.
 *
 *   prof-report [-k KERNEL.elf] [-B BINDIR] [-n ROWS] [-p ROWS] [--folded] FILE
 *   prof-report [...] --log LOG      the "prof-dump:" lines of a console log (- for stdin)
 *
 * --folded prints one line per sample instead of the report: the stack,
 * outermost function first, separated by ';' (a sleeping process's ends in
 * [asleep]), then " 1": the input flame-graph tools take.  --lines FUNC adds
 * where FUNC's own samples fell, by source line (riscv64-unknown-elf-addr2line,
 * or $ADDR2LINE, reads the line tables of the same ELF files).
 *
 * A program the guest ran as /bin/NAME is read from BINDIR/NAME (default
 * build/bin); the kernel from build/kernel.elf.  To get a FILE saved on the
 * guest's root file system: tools/exotool ufs-get build/disk0.img /FILE out.prof
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/prof/report.h"

static const char *kernel_elf = "build/kernel.elf";
static const char *bindir = "build/bin";

/* The ELF file for a program the guest ran as path (NULL: the kernel). */
static void elf_path(const char *path, char *name, size_t size)
{
	if (path == NULL) {
		snprintf(name, size, "%s", kernel_elf);
	} else {
		const char *base = strrchr(path, '/');
		snprintf(name, size, "%s/%s", bindir, base ? base + 1 : path);
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: prof-report [-k KERNEL.elf] [-B BINDIR] [-n ROWS] [-p ROWS] [--folded] [--lines FUNC] FILE\n"
	                "       prof-report [...] --log LOG\n");
	exit(2);
}

static long file_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	FILE *f = ctx;
	if (fseek(f, (long)off, SEEK_SET) != 0) return -1;
	return (long)fread(buf, 1, len, f);
}

static int load_syms(void *ctx, const char *path, struct symtab *t, const char **why)
{
	char name[512];
	elf_path(path, name, sizeof name);
	FILE *f = fopen(name, "rb");
	if (f == NULL) {
		*why = "cannot open the ELF file in the build tree";
		return -1;
	}
	int r = symtab_load(t, file_read, f, why);
	fclose(f);
	return r;
}

/* "inode.c:120 in itrim (inlined in ufs_iget)", from addr2line. */
static int where(void *ctx, const char *path, uint64_t addr, char *buf, size_t size)
{
	char name[512], cmd[1200], fn[2][256], loc[2][256];
	const char *tool = getenv("ADDR2LINE");
	elf_path(path, name, sizeof name);
	if (strchr(name, '\'') != NULL) return -1;
	snprintf(cmd, sizeof cmd, "%s -i -f -e '%s' %#lx 2>/dev/null", tool ? tool : "riscv64-unknown-elf-addr2line",
	         name, (unsigned long)addr);
	FILE *p = popen(cmd, "r");
	if (p == NULL) return -1;
	int n = 0;
	while (n < 2 && fgets(fn[n], sizeof fn[n], p) && fgets(loc[n], sizeof loc[n], p)) {
		fn[n][strcspn(fn[n], "\n")] = 0;
		loc[n][strcspn(loc[n], " \n")] = 0;
		n++;
	}
	pclose(p);
	if (n == 0 || loc[0][0] == '?') return -1;
	const char *file = strrchr(loc[0], '/');
	file = file ? file + 1 : loc[0];
	if (n == 2) snprintf(buf, size, "%s in %s (inlined in %s)", file, fn[0], fn[1]);
	else snprintf(buf, size, "%s in %s", file, fn[0]);
	return 0;
}

/* The whole of a file, or NULL. */
static uint8_t *slurp(const char *name, size_t *len)
{
	FILE *f = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
	if (f == NULL) return NULL;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
		n += k;
		if (n == cap) buf = realloc(buf, cap *= 2);
	}
	if (f != stdin) fclose(f);
	*len = n;
	return buf;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	return -1;
}

/* The bytes between "prof-dump: begin N" and "prof-dump: end" in a console
 * log (the last dump if there are several).  Text before "prof-dump:" on a
 * line (another process's output) is ignored. */
static uint8_t *from_log(const char *log, size_t loglen, size_t *len)
{
	static const char tag[] = "prof-dump: ";
	uint8_t *out = NULL;
	size_t n = 0, want = 0;
	int inside = 0;
	for (size_t at = 0; at < loglen;) {
		const char *line = log + at;
		const char *nl = memchr(line, '\n', loglen - at);
		size_t ll = nl ? (size_t)(nl - line) : loglen - at;
		at += ll + 1;
		const char *t = NULL;
		for (size_t i = 0; i + sizeof tag - 1 <= ll; i++)
			if (memcmp(line + i, tag, sizeof tag - 1) == 0) { t = line + i + sizeof tag - 1; break; }
		if (t == NULL) continue;
		size_t rest = ll - (size_t)(t - line);
		if (rest >= 6 && memcmp(t, "begin ", 6) == 0) {
			want = strtoul(t + 6, NULL, 10);
			free(out);
			out = malloc(want ? want : 1);
			n = 0;
			inside = out != NULL;
		} else if (rest >= 3 && memcmp(t, "end", 3) == 0) {
			inside = 0;
		} else if (inside) {
			for (size_t i = 0; i + 1 < rest && n < want; i += 2) {
				int hi = hexval(t[i]), lo = hexval(t[i + 1]);
				if (hi < 0 || lo < 0) break;
				out[n++] = (uint8_t)(hi << 4 | lo);
			}
		}
	}
	if (out && n != want) {
		fprintf(stderr, "prof-report: the dump in the log is incomplete (%zu of %zu bytes)\n", n, want);
		free(out);
		return NULL;
	}
	*len = n;
	return out;
}

int main(int argc, char **argv)
{
	struct prof_opts opts = { 20, 10, 0, NULL };
	const char *file = NULL;
	int is_log = 0;
	for (int a = 1; a < argc; a++) {
		const char *o = argv[a];
		if (strcmp(o, "--log") == 0 && a + 1 < argc) { is_log = 1; file = argv[++a]; }
		else if (strcmp(o, "--folded") == 0) opts.folded = 1;
		else if (strcmp(o, "--lines") == 0 && a + 1 < argc) opts.lines = argv[++a];
		else if (strcmp(o, "-k") == 0 && a + 1 < argc) kernel_elf = argv[++a];
		else if (strcmp(o, "-B") == 0 && a + 1 < argc) bindir = argv[++a];
		else if (strcmp(o, "-n") == 0 && a + 1 < argc) opts.top = atoi(argv[++a]);
		else if (strcmp(o, "-p") == 0 && a + 1 < argc) opts.phase_top = atoi(argv[++a]);
		else if (o[0] == '-' && o[1] != 0) usage();
		else if (file == NULL) file = o;
		else usage();
	}
	if (file == NULL) usage();
	size_t len;
	uint8_t *raw = slurp(file, &len);
	if (raw == NULL) {
		perror(file);
		return 1;
	}
	if (is_log) {
		uint8_t *bytes = from_log((const char *)raw, len, &len);
		free(raw);
		if (bytes == NULL) {
			fprintf(stderr, "prof-report: no complete \"prof-dump:\" record in %s (run prof -d)\n", file);
			return 1;
		}
		raw = bytes;
	}
	struct prof_file hdr;
	if (len < sizeof hdr) {
		fprintf(stderr, "prof-report: %s: too short for a profile\n", file);
		return 1;
	}
	memcpy(&hdr, raw, sizeof hdr);
	if (memcmp(hdr.magic, PROF_FILE_MAGIC, 8) != 0 || hdr.version != PROF_FILE_VERSION ||
	    hdr.hdr_bytes != sizeof hdr) {
		fprintf(stderr, "prof-report: %s: not a profile of this version (made by prof -o)\n", file);
		return 1;
	}
	if (hdr.info.used > len - sizeof hdr) {
		fprintf(stderr, "prof-report: %s: truncated (%zu of %lu bytes of samples)\n", file,
		        len - sizeof hdr, (unsigned long)hdr.info.used);
		return 1;
	}
	hdr.cmd[sizeof hdr.cmd - 1] = 0;
	/* Records are read in place: copy them to an 8-aligned buffer. */
	uint64_t *data = malloc(hdr.info.used + 8);
	if (data == NULL) return 1;
	memcpy(data, raw + sizeof hdr, hdr.info.used);
	free(raw);
	struct prof_syms syms = { load_syms, where, NULL };
	int r = prof_report(stdout, &hdr, (const uint8_t *)data, &syms, &opts);
	free(data);
	return r < 0 ? 1 : 0;
}
