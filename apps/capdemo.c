/*
 * capdemo.c - capabilities in practice (docs/libfs.md, "Capabilities").
 * Each owner's unixfs is found and opened with capabilities computed from
 * the owner's secret; a program with another secret can neither read nor
 * write it, even knowing exactly where everything is.
 *
 *   capdemo make KEY          make a unixfs owned by KEY (if there is none)
 *   capdemo write KEY N       write N files into it (content depends on KEY)
 *   capdemo check KEY N       they are all there, intact
 *   capdemo attack KEY        with KEY's capabilities, try every exonode on
 *                             the disk that KEY does not own: read its data
 *                             and metadata, write, add its sectors to an
 *                             exonode of our own, free it.  Prints what was
 *                             tried; exit status 1 if anything succeeded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libos/capkey.h"
#include "libos/edc.h"
#include "libos/files.h"
#include "userfs/unixfs/unixfs.h"

static char opts[200];

static void content(char *buf, size_t n, const char *key, int i)
{
	for (size_t k = 0; k < n; k++)
		buf[k] = (char)('a' + (key[0] + i * 7 + (int)k) % 26);
}

static int mount_it(void)
{
	if (fs_mount("/own", "unixfs", opts) < 0) {
		fprintf(stderr, "capdemo: mount: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int files(const char *key, int n, int write)
{
	if (mount_it() < 0)
		return 1;
	static char buf[9000], got[9000];
	int bad = 0;
	for (int i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof path, "/own/%s-%d", key, i);
		content(buf, sizeof buf, key, i);
		FILE *f = fopen(path, write ? "w" : "r");
		if (f == NULL) {
			fprintf(stderr, "capdemo: %s: %s\n", path, strerror(errno));
			bad++;
			continue;
		}
		size_t k = write ? fwrite(buf, 1, sizeof buf, f) : fread(got, 1, sizeof got, f);
		if (k != sizeof buf || (!write && memcmp(buf, got, sizeof buf) != 0))
			bad++;
		if (fclose(f) != 0)
			bad++;
	}
	sync();
	printf("capdemo: %s: %d files %s, %d bad\n", key, n, write ? "written" : "checked", bad);
	return bad != 0;
}

/* Try everything on exonodes we cannot open. */
static int attack(void)
{
	struct edc *c = edc_default();
	struct edc_fm fm;
	struct capkey k;
	if (edc_fm_open(c, 0, &fm) != 0 || capkey_from_opts(&k, "unixfs", opts) < 0) {
		fprintf(stderr, "capdemo: no exodisk on unit 0\n");
		return 1;
	}
	/* An exonode of our own to try to steal sectors into. */
	uint64_t mine = edc_fm_find(&fm, 0, 1, 8);
	struct ed_cap mrc = capkey_cap(&k, 'r', mine, 0), mwc = capkey_cap(&k, 'w', mine, 0);
	struct ed_protector own = edc_prot_xn(0, mine, 0, &mrc, &mwc);
	own.length = 128;
	if (edc_xn_alloc(c, &own) != 0) {
		fprintf(stderr, "capdemo: cannot allocate an exonode\n");
		return 1;
	}
	long tried = 0, refused = 0, allowed = 0, foreign = 0;
	static uint8_t buf[4096];
	for (uint64_t s = 0; s < fm.nsectors; s++) {
		if (!edc_fm_test(&fm, s) || s == mine)
			continue;
		for (uint16_t slot = 0; slot < 8; slot++) {
			struct ed_cap rc = capkey_cap(&k, 'r', s, slot), wc = capkey_cap(&k, 'w', s, slot);
			struct ed_protector p = edc_prot_xn(0, s, slot, &rc, &wc);
			int64_t r = edc_xn_read_data(c, &p, 0, buf, 64);
			if (r == ED_E_NOTCACHED && edc_xn_read_sync(c, &p) == 0)
				r = edc_xn_read_data(c, &p, 0, buf, 64);
			if (r == ED_E_NOTBOUND || r == ED_E_KIND || r == ED_E_RANGE)
				break;           /* not an exonode block at all */
			if (r != ED_E_CAP)
				continue;        /* a free slot, or one of ours */
			foreign++;
			/* Its data is most likely in the sectors after it. */
			int64_t tries[6];
			int nt = 0;
			tries[nt++] = r;
			tries[nt++] = edc_xn_map(c, &p);
			tries[nt++] = edc_read(c, &p, s + 8, buf, 512);
			tries[nt++] = edc_write(c, &p, s + 8, buf, 512);
			tries[nt++] = edc_xn_dealloc(c, &p);
			/* Taking allocated sectors into an exonode of our own. */
			if (edc_fm_test(&fm, s + 8))
				tries[nt++] = edc_xn_add_extent(c, &own, -1, s + 8, 512);
			for (int i = 0; i < nt; i++) {
				tried++;
				if (tries[i] >= 0)
					allowed++;
				else
					refused++;
			}
		}
	}
	edc_xn_dealloc(c, &own);
	printf("capdemo: %ld foreign exonodes, %ld attempts: %ld refused, %ld allowed\n", foreign,
	       tried, refused, allowed);
	return allowed != 0 || foreign == 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: capdemo make|write|check|attack KEY [N]\n");
		return 2;
	}
	snprintf(opts, sizeof opts, "unit=0,key=%s", argv[2]);
	int n = argc > 3 ? atoi(argv[3]) : 5;
	if (strcmp(argv[1], "make") == 0) {
		void *fs;
		if (unixfs_ops.mount(opts, &fs) == 0) {
			unixfs_ops.unmount(fs);
			printf("capdemo: %s already has a file system\n", argv[2]);
			return 0;
		}
		uint64_t sb;
		int r = unixfs_mkfs(opts, &sb);
		if (r < 0) {
			fprintf(stderr, "capdemo: mkfs: %s\n", strerror(-r));
			return 1;
		}
		printf("capdemo: %s owns a file system at sector %llu\n", argv[2], (unsigned long long)sb);
		return 0;
	}
	if (strcmp(argv[1], "write") == 0)
		return files(argv[2], n, 1);
	if (strcmp(argv[1], "check") == 0)
		return files(argv[2], n, 0);
	if (strcmp(argv[1], "attack") == 0)
		return attack();
	fprintf(stderr, "capdemo: %s: unknown command\n", argv[1]);
	return 2;
}
