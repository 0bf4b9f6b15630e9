/*
 * lfs-share.c - lend one file of an lfs to other programs through proxy
 * exonodes, and read such a file with nothing but the token.
 *
 *   lfs-share [-o FILE] [-t MS] [-a TEXT] OPTIONS PATH     the owner
 *   lfs-share -r TOKEN|FILE [-g GEN] [-w MS]                a reader
 *
 * The owner mounts the lfs named by OPTIONS (key=..., unit=...), shares
 * PATH (inside it), prints the token (and writes it to FILE, then lets go
 * of the file systems it used for that, so others can mount them), keeps
 * the share for MS milliseconds (3000) - appending TEXT to the file
 * halfway, to show that the share follows it - and exits: its proxies go
 * with it.  A reader needs no key and mounts no lfs: it reads the file
 * through the exodisk with the token (given, or read from FILE, waiting up
 * to -w MS for it to appear), at generation GEN or later if asked, and
 * prints it.  Exit status: 0 read, 1 the share is gone or an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/clock.h"
#include "libos/edc.h"
#include "libos/files.h"
#include "userfs/lfs/lfs.h"

static void usage(void)
{
	fprintf(stderr, "usage: lfs-share [-o FILE] [-t MS] [-a TEXT] OPTIONS PATH\n"
	                "       lfs-share -r TOKEN|FILE [-g GEN] [-w MS]\n");
	exit(2);
}

static int owner(const char *opts, const char *path, const char *out, uint64_t ms, const char *text)
{
	struct lfs *fs;
	int r = lfs_mount(opts, &fs);
	if (r < 0) {
		fprintf(stderr, "lfs-share: mount: %s\n", strerror(-r));
		return 1;
	}
	struct lfs_token t;
	if ((r = lfs_share(fs, path, &t)) < 0) {
		fprintf(stderr, "lfs-share: %s: %s\n", path, strerror(-r));
		lfs_unmount(fs);
		return 1;
	}
	char tok[96];
	lfs_token_str(&t, tok);
	printf("lfs-share: %s shared, token %s\n", path, tok);
	fflush(stdout);
	if (out != NULL) {
		FILE *f = fopen(out, "w");
		if (f == NULL || fprintf(f, "%s\n", tok) < 0 || fclose(f) != 0)
			fprintf(stderr, "lfs-share: %s: cannot write the token\n", out);
		fs_release();                /* others may mount it now */
	}
	libos_sleep_ns(ms / 2 * 1000000ull);
	if (text != NULL) {
		void *h = NULL;
		struct libfs_stat st;
		size_t fsz = lfs_ops.file_size;
		h = calloc(1, fsz);
		r = h ? lfs_ops.open(fs, path, LIBFS_O_WRITE, 0, &h) : -ENOMEM;
		if (r == 0 && (r = lfs_ops.fstat(fs, h, &st)) == 0) {
			long w = lfs_ops.write(fs, h, text, strlen(text), st.size);
			r = w < 0 ? (int)w : lfs_ops.sync(fs);
			lfs_ops.close(fs, h);
		}
		free(h);
		if (r < 0)
			fprintf(stderr, "lfs-share: append: %s\n", strerror(-r));
		else
			printf("lfs-share: appended to %s\n", path);
		fflush(stdout);
	}
	libos_sleep_ns(ms / 2 * 1000000ull);
	r = lfs_unmount(fs);
	printf("lfs-share: done; the share ends with this program\n");
	return r < 0;
}

/* The token: text, or the first line of a file (waiting for it). */
static int token(const char *arg, uint64_t wait_ms, struct lfs_token *t)
{
	if (strchr(arg, '/') == NULL)
		return lfs_token_parse(arg, t);
	uint64_t end = libos_time_ns() + wait_ms * 1000000ull;
	for (;;) {
		char line[128];
		FILE *f = fopen(arg, "r");
		int ok = f != NULL && fgets(line, sizeof line, f) != NULL;
		if (f != NULL)
			fclose(f);
		fs_release();                /* the owner may need to mount it */
		if (ok)
			return lfs_token_parse(line, t);
		if (libos_time_ns() >= end)
			return -ENOENT;
		libos_sleep_ns(100 * 1000000ull);
	}
}

static int reader(const char *arg, uint64_t want_gen, uint64_t wait_ms)
{
	struct lfs_token t;
	int r = token(arg, wait_ms, &t);
	if (r < 0) {
		fprintf(stderr, "lfs-share: %s: no token\n", arg);
		return 1;
	}
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	uint64_t size = 0, gen = 0, end = libos_time_ns() + wait_ms * 1000000ull;
	for (;;) {
		r = buf ? lfs_share_read(edc_default(), &t, buf, cap, &size, &gen) : -ENOMEM;
		if (r < 0 || gen >= want_gen || libos_time_ns() >= end)
			break;
		libos_sleep_ns(100 * 1000000ull);
	}
	if (r == -ENOENT) {
		printf("lfs-share: the share is gone (unshared, or its owner exited)\n");
	} else if (r < 0) {
		fprintf(stderr, "lfs-share: %s\n", strerror(-r));
	} else {
		printf("lfs-share: %llu bytes, generation %llu\n", (unsigned long long)size,
		       (unsigned long long)gen);
		fwrite(buf, 1, (size_t)size, stdout);
	}
	free(buf);
	return r < 0;
}

int main(int argc, char **argv)
{
	const char *out = NULL, *text = NULL, *rd = NULL;
	uint64_t ms = 3000, gen = 0, wait_ms = 10000;
	int i = 1;
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (strcmp(argv[i], "-o") == 0)
			out = argv[i + 1];
		else if (strcmp(argv[i], "-t") == 0)
			ms = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-a") == 0)
			text = argv[i + 1];
		else if (strcmp(argv[i], "-r") == 0)
			rd = argv[i + 1];
		else if (strcmp(argv[i], "-g") == 0)
			gen = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "-w") == 0)
			wait_ms = strtoull(argv[i + 1], NULL, 10);
		else
			usage();
	}
	if (rd != NULL)
		return i == argc ? reader(rd, gen, wait_ms) : (usage(), 2);
	if (i + 2 != argc)
		usage();
	return owner(argv[i], argv[i + 1], out, ms, text);
}
