/*
 * test_exotool_errors.c - every exotool subcommand, on every kind of image
 * it cannot use, says in words what is wrong (issue 18): not an exodisk
 * (random bytes, a blank file, a FAT boot sector), an empty or partial-
 * sector file, a truncated image, another format version, the wrong key,
 * a damaged superblock, a damaged tree page, a damaged unixfs block, an
 * exodisk with no unixfs or FAT volume.  Each run must fail (exit status
 * 1, nothing written), name the problem, and print no bare error number.
 *
 * The images are made with exotool itself; a superblock of another
 * version, or a malformed one, is sealed here with the development key,
 * the way a different exodisk would have written it.
 * Usage: test_exotool_errors EXOTOOL
 */
#define _POSIX_C_SOURCE 200809L
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kernel/exodisk/edcrypt.h"
#include "kernel/exodisk/ondisk.h"

static const char *tool;
static char dir[64];
static int failures;

/* Run a shell command, its output (stdout and stderr) into out. */
static int run(char *out, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int run(char *out, size_t n, const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	int len = vsnprintf(cmd, sizeof cmd - 8, fmt, ap);
	va_end(ap);
	strcpy(cmd + len, " 2>&1");
	FILE *p = popen(cmd, "r");
	if (p == NULL) {
		perror("popen");
		exit(1);
	}
	size_t got = fread(out, 1, n - 1, p);
	out[got] = '\0';
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[2048], out[4096];
	snprintf(cmd, sizeof cmd, fmt, a, b);
	if (run(out, sizeof out, "%s", cmd) != 0) {
		fprintf(stderr, "test_exotool_errors: setup failed: %s\n%s", cmd, out);
		exit(1);
	}
}

static void path(char *p, size_t n, const char *name)
{
	snprintf(p, n, "%s/%s", dir, name);
}

/* Every subcommand that reads an image (the destructive ones run on a
 * copy: they must fail before writing anything). */
static const char *const cmds[] = {
	"info %s", "list %s", "check %s", "recover %s", "demo %s",
	"ufs-ls %s", "ufs-check %s", "ufs-get %s /f", "ufs-mkfs %s", "ufs-put %s %s/host /f",
	"fat-check %s", "fat-export %s %s/out.img",
};
#define NCMDS (sizeof cmds / sizeof cmds[0])

/* Does out contain a bare error number such as "error -64" or "(-144)"? */
static int bare_number(const char *out)
{
	regex_t re;
	regcomp(&re, "error -?[0-9]|\\(-[0-9]+\\)|: -[0-9]+$|error$", REG_EXTENDED | REG_NEWLINE);
	int m = regexec(&re, out, 0, NULL, 0) == 0;
	regfree(&re);
	return m;
}

/* Run the subcommands `which` (a bit per cmds[] entry) on image `name`
 * and expect each to fail, saying `want`. */
static void expect(const char *name, unsigned which, const char *want)
{
	char img[128], copy[160], out[8192];
	path(img, sizeof img, name);
	snprintf(copy, sizeof copy, "%s/copy.img", dir);
	for (unsigned i = 0; i < NCMDS; i++) {
		if (!(which & (1u << i)))
			continue;
		char fmt[128];
		snprintf(fmt, sizeof fmt, "%%s %s", cmds[i]);
		/* On a copy when there is an image: a failing subcommand must not
		 * have written, but the next one gets the original anyway. */
		struct stat st;
		const char *target = img;
		if (stat(img, &st) == 0) {
			sh("cp %s %s", img, copy);
			target = copy;
		}
		int rc = run(out, sizeof out, fmt, tool, target, dir);
		char cmd[64];
		snprintf(cmd, sizeof cmd, cmds[i], "IMG", "DIR");
		if (rc != 1) {
			fprintf(stderr, "FAIL: %s: exotool %s: exit status %d, not 1:\n%s", name, cmd, rc, out);
			failures++;
		} else if (strstr(out, want) == NULL) {
			fprintf(stderr, "FAIL: %s: exotool %s does not say \"%s\":\n%s", name, cmd, want, out);
			failures++;
		} else if (bare_number(out)) {
			fprintf(stderr, "FAIL: %s: exotool %s prints a bare error number:\n%s", name, cmd, out);
			failures++;
		} else if (target == copy && run(out, sizeof out, "cmp %s %s", img, copy) != 0) {
			fprintf(stderr, "FAIL: %s: exotool %s failed but wrote to the image\n", name, cmd);
			failures++;
		}
	}
}

#define ALL        ((1u << NCMDS) - 1)
#define UFS_FAT    (ALL & ~0x1fu)           /* the libFS subcommands */

static void read_sector(const char *name, uint64_t s, void *buf)
{
	char p[128];
	path(p, sizeof p, name);
	FILE *f = fopen(p, "rb");
	if (f == NULL || fseek(f, (long)(s * 512), SEEK_SET) != 0 || fread(buf, 512, 1, f) != 1) {
		fprintf(stderr, "test_exotool_errors: cannot read %s\n", p);
		exit(1);
	}
	fclose(f);
}

static void write_sector(const char *name, uint64_t s, const void *buf)
{
	char p[128];
	path(p, sizeof p, name);
	FILE *f = fopen(p, "r+b");
	if (f == NULL || fseek(f, (long)(s * 512), SEEK_SET) != 0 || fwrite(buf, 512, 1, f) != 1 ||
	    fclose(f) != 0) {
		fprintf(stderr, "test_exotool_errors: cannot write %s\n", p);
		exit(1);
	}
}

/* Copy image `from` to `to` with both superblocks changed by `edit` and
 * sealed again under the development key: a disk another exodisk wrote. */
static void reseal(const char *from, const char *to, void (*edit)(struct ed_super *))
{
	char a[128], b[128];
	path(a, sizeof a, from);
	path(b, sizeof b, to);
	sh("cp %s %s", a, b);
	struct ed_keys k;
	ed_keys_derive(&k, (const uint8_t *)ED_DEV_KEY);
	for (uint64_t s = ED_SB_A; s <= ED_SB_B; s += ED_SB_B - ED_SB_A) {
		struct ed_super sb;
		read_sector(to, s, &sb);
		if (sb.magic != ED_SB_MAGIC)
			continue;
		edit(&sb);
		ed_super_seal(&k, &sb, s);
		write_sector(to, s, &sb);
	}
}

static void newer_version(struct ed_super *sb) { sb->fmt = ED_SB_FMT + 1; }
static void bad_log(struct ed_super *sb) { sb->log_start = 3; }

static uint64_t first_xnblock(const char *name)
{
	char img[128], out[8192];
	path(img, sizeof img, name);
	run(out, sizeof out, "%s list %s", tool, img);
	const char *x = strstr(out, "xnblock");
	return x != NULL ? strtoull(x + 7, NULL, 10) : 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_exotool_errors EXOTOOL\n");
		return 2;
	}
	tool = argv[1];
	strcpy(dir, "/tmp/exotool-errXXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	char good[128], out[8192];
	path(good, sizeof good, "good.img");
	sh("echo hello > %s/host; %s", dir, "true");
	char cmd[512];
	snprintf(cmd, sizeof cmd, "%s format %s -s 8M && %s ufs-mkfs %s && %s ufs-put %s %s/host /f",
	         tool, good, tool, good, tool, good, dir);
	if (run(out, sizeof out, "%s", cmd) != 0) {
		fprintf(stderr, "test_exotool_errors: making the good image failed:\n%s", out);
		return 1;
	}
	char p[128];
	/* Not exodisks at all. */
	path(p, sizeof p, "random.img");
	sh("head -c 1048576 /dev/urandom > %s%s", p, "");
	expect("random.img", ALL, "not an exodisk image (no exodisk superblock at sector 0 or 8)");
	path(p, sizeof p, "zero.img");
	sh("head -c 1048576 /dev/zero > %s%s", p, "");
	expect("zero.img", ALL, "a blank image");
	path(p, sizeof p, "fat.img");
	sh("head -c 1048576 /dev/zero > %s; printf '\\353\\074\\220' | dd of=%s conv=notrunc 2>/dev/null",
	   p, p);
	sh("printf '\\125\\252' | dd of=%s bs=1 seek=510 conv=notrunc 2>/dev/null%s", p, "");
	expect("fat.img", ALL, "PC boot sector");
	path(p, sizeof p, "empty.img");
	sh(": > %s%s", p, "");
	expect("empty.img", ALL, "the image is empty");
	path(p, sizeof p, "odd.img");
	sh("head -c 1000 /dev/zero > %s%s", p, "");
	expect("odd.img", ALL, "1000 bytes is not a whole number of 512-byte sectors");
	expect("missing.img", ALL, "No such file or directory");

	/* An exodisk cut short: half its sectors, then only 40 KiB. */
	path(p, sizeof p, "trunc.img");
	sh("cp %s %s", good, p);
	sh("truncate -s 4M %s%s", p, "");
	expect("trunc.img", ALL, "the image is truncated: its superblock says the exodisk has 16384 "
	       "sectors, the file holds 8192");
	sh("truncate -s 40K %s%s", p, "");
	expect("trunc.img", ALL, "the file holds 80");

	/* Made by an exodisk of another format version. */
	reseal("good.img", "newer.img", newer_version);
	char want[128];
	snprintf(want, sizeof want, "an exodisk of format version %u; this exotool reads versions %u and %u",
	         ED_SB_FMT + 1, ED_SB_FMT_OLD, ED_SB_FMT);
	expect("newer.img", ALL, want);

	/* Authentic superblocks (sealed with the right key) that make no sense. */
	reseal("good.img", "badsb.img", bad_log);
	expect("badsb.img", ALL, "damaged at sector 0 (a superblock): authentic but malformed");

	/* The wrong key: every subcommand takes -k. */
	char wk[128];
	path(wk, sizeof wk, "wk.img");
	for (unsigned i = 0; i < NCMDS; i++) {
		char c[160];
		snprintf(c, sizeof c, "%%s %s -k 000102030405060708090a0b0c0d0e0f", cmds[i]);
		sh("cp %s %s", good, wk);
		int rc = run(out, sizeof out, c, tool, wk, dir);
		if (rc != 1) {
			fprintf(stderr, "FAIL: exotool %s with the wrong key: exit status %d, not 1:\n%s",
			        cmds[i], rc, out);
			failures++;
		} else if (strstr(out, "the wrong key (give the boot key with -k KEYHEX)") == NULL) {
			fprintf(stderr, "FAIL: exotool %s with the wrong key does not say so:\n%s", cmds[i],
			        out);
			failures++;
		}
	}

	/* A damaged tree page: the binding tree's root in each superblock (a
	 * mount whose newest checkpoint's trees fail falls back to the other,
	 * so both are damaged). */
	path(p, sizeof p, "tree.img");
	sh("cp %s %s", good, p);
	uint8_t junk[512];
	memset(junk, 0x5a, sizeof junk);
	uint64_t roots[2] = { 0, 0 };
	for (int i = 0; i < 2; i++) {
		struct ed_super sb;
		read_sector("good.img", i == 0 ? ED_SB_A : ED_SB_B, &sb);
		if (sb.magic == ED_SB_MAGIC && sb.bt_root.sector != 0) {
			roots[i] = sb.bt_root.sector;
			write_sector("tree.img", roots[i] + 3, junk);
		}
	}
	expect("tree.img", ALL & ~(1u << 2), "fails its integrity check (changed outside the exodisk)");
	for (unsigned i = 0; i < NCMDS; i++) {
		if (i == 2)
			continue;
		char c[160];
		snprintf(c, sizeof c, "%%s %s", cmds[i]);
		sh("cp %s %s", p, wk);
		run(out, sizeof out, c, tool, wk, dir);
		int named = 0;
		for (int r = 0; r < 2; r++) {
			snprintf(want, sizeof want, "damaged at sector %llu: the exodisk's tree page at "
			         "sectors %llu..%llu", (unsigned long long)roots[r],
			         (unsigned long long)roots[r], (unsigned long long)roots[r] + 7);
			named |= roots[r] != 0 && strstr(out, want) != NULL;
		}
		if (!named) {
			fprintf(stderr, "FAIL: exotool %s on a damaged tree page does not name it:\n%s",
			        cmds[i], out);
			failures++;
		}
	}
	run(out, sizeof out, "%s check %s", tool, p);
	if (strstr(out, "VIOLATION") == NULL || strstr(out, "damaged at sector") == NULL) {
		fprintf(stderr, "FAIL: check of a damaged tree page:\n%s", out);
		failures++;
	}

	/* A damaged unixfs superblock exonode: the exodisk stands, unixfs
	 * cannot be mounted, and the message names the sector. */
	uint64_t xb = first_xnblock("good.img");
	path(p, sizeof p, "ufs.img");
	sh("cp %s %s", good, p);
	write_sector("ufs.img", xb, junk);
	snprintf(want, sizeof want, "is damaged at sector %llu: bound block fails verification",
	         (unsigned long long)xb);
	expect("ufs.img", 0x7u << 5, want);        /* ufs-ls, ufs-check, ufs-get */

	/* An exodisk holding no unixfs and no FAT volume. */
	path(p, sizeof p, "blank.img");
	snprintf(cmd, sizeof cmd, "%s format %s -s 8M", tool, p);
	run(out, sizeof out, "%s", cmd);
	expect("blank.img", (0x7u << 5) | (1u << 9), "no unixfs on this exodisk");
	expect("blank.img", 0x3u << 10, "no fatfs volume for this key");

	sh("rm -rf %s%s", dir, "");
	if (failures) {
		fprintf(stderr, "test_exotool_errors: %d failures\n", failures);
		return 1;
	}
	printf("test_exotool_errors: ok\n");
	return 0;
}
