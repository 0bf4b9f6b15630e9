/*
 * exotool.c - the exodisk host tool: format a disk image, list what is on
 * it, check its invariants.  It links the same portable core the kernel
 * runs (kernel/exodisk/), over an image file held in memory.
 *
 *   exotool format IMAGE [-s SIZE] [-l LOGSECTORS] [-b BINDINGS] [-k KEYHEX]
 *   exotool list   IMAGE [-k KEYHEX]      superblock, extents, exonodes, free map
 *   exotool check  IMAGE [-k KEYHEX]      exit status 1 on any violation
 *   exotool recover IMAGE [-k KEYHEX]     mount it as the kernel would (replay, checkpoint), save
 *   exotool demo   IMAGE [-k KEYHEX]      add a few extents and exonodes (for trying the others)
 *
 * SIZE takes a K, M or G suffix (bytes); without one it counts sectors.
 * The key defaults to the development key (docs/exodisk.md, "Keys"); list and
 * check read the image the way the next mount would, without writing it.
 * Run it as tools/exotool from the repository root (that script builds it).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "tests/host/exodisk/edharness.h"
#include "tests/host/exodisk/hostdisk.h"
#include "kernel/exodisk/check.h"
#include "kernel/exodisk/ondisk.h"
#include "kernel/exodisk/xnode.h"
#include "tools/exotool-src/exotool_unixfs.h"
#include "tools/exotool-src/exotool_fat.h"

static const char *prog = "exotool";

static void usage(void)
{
	fprintf(stderr,
	        "usage: %s format IMAGE [-s SIZE] [-l LOGSECTORS] [-b BINDINGS] [-k KEYHEX]\n"
	        "       %s list   IMAGE [-k KEYHEX]\n"
	        "       %s check  IMAGE [-k KEYHEX]\n"
	        "       %s recover IMAGE [-k KEYHEX]\n"
	        "       %s demo   IMAGE [-k KEYHEX]\n"
	        "       %s ufs-mkfs|ufs-ls|ufs-get|ufs-put|ufs-check IMAGE ...   (unixfs.c)\n"
	        "       %s fat-import|fat-export|fat-check IMAGE ...   (fat.c)\n",
	        prog, prog, prog, prog, prog, prog, prog);
	exit(2);
}

static void die(const char *what, long code)
{
	fprintf(stderr, "%s: %s (%ld)\n", prog, what, code);
	exit(1);
}

struct opts {
	const char *image;
	uint64_t size, log, bindings;
	char key[16];
};

static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno != 0 || end == s)
		usage();
	switch (*end) {
	case 'k': case 'K': return v * 1024 / 512;
	case 'm': case 'M': return v * 1024 * 1024 / 512;
	case 'g': case 'G': return v * 1024 * 1024 * 1024 / 512;
	case '\0':          return v;
	default:            usage();
	}
	return 0;
}

static void parse_key(const char *hex, char key[16])
{
	if (strlen(hex) != 32)
		die("the key is 32 hex digits (128 bits)", 0);
	for (int i = 0; i < 16; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			die("the key is 32 hex digits (128 bits)", 0);
		key[i] = (char)v;
	}
}

static void parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->key, ED_DEV_KEY, 16);
	if (argc < 3)
		usage();
	o->image = argv[2];
	for (int i = 3; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		if (strcmp(argv[i], "-s") == 0)
			o->size = parse_size(argv[++i]);
		else if (strcmp(argv[i], "-l") == 0)
			o->log = parse_size(argv[++i]);
		else if (strcmp(argv[i], "-b") == 0)
			o->bindings = strtoull(argv[++i], NULL, 0);
		else if (strcmp(argv[i], "-k") == 0)
			parse_key(argv[++i], o->key);
		else
			usage();
	}
}

/* ---- the image as a block device ------------------------------------------------- */

static struct harness H;
static struct hostdisk HD;
static struct exodisk *ED;

static void open_image(const struct opts *o, uint64_t nsectors, bool load)
{
	h_init(&H, 0x6578746f6f6cull);
	if (hostdisk_init(&HD, nsectors, HD_SYNC, false, 1) != 0)
		die("cannot set up the image in memory", 0);
	if (load && hostdisk_load(&HD, o->image) != 0)
		die("cannot read the image", errno);
	ED = h_core(&H, NULL, o->key);
}

static uint64_t image_sectors(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		die("cannot open the image", errno);
	if (st.st_size % 512 != 0 || st.st_size == 0)
		die("the image is not a whole number of sectors", (long)st.st_size);
	return (uint64_t)st.st_size / 512;
}

/* Fresh entropy for the disk's identity. */
static void read_random(uint8_t *p, size_t n)
{
	FILE *f = fopen("/dev/urandom", "rb");
	if (f == NULL || fread(p, 1, n, f) != n)
		die("cannot read /dev/urandom", errno);
	fclose(f);
}

static int cmd_format(const struct opts *o)
{
	uint64_t n = o->size ? o->size : 131072;     /* 64 MiB */
	open_image(o, n, false);
	struct ed_format_opts fo = { .nsectors = n, .log_sectors = o->log, .max_bindings = o->bindings };
	read_random(fo.uuid, sizeof(fo.uuid));
	int e = ed_format(ED, 0, &fo);
	if (e != 0)
		die("format failed", e);
	if (hostdisk_save(&HD, o->image) != 0)
		die("cannot write the image", errno);
	struct ed_check_stats st;
	if ((e = ed_check_disk(ED, 0, NULL, NULL, NULL, &st)) != 0)
		die("the new image does not check", e);
	printf("%s: %llu sectors, exodisk region 0..%llu, %llu sectors for applications\n",
	       o->image, (unsigned long long)n, (unsigned long long)st.data_start - 1,
	       (unsigned long long)(n - st.data_start));
	return 0;
}

/* ---- listing ------------------------------------------------------------------------- */

static void print_binding(uint8_t kind, uint64_t sector, uint32_t nsect, const uint8_t *plain)
{
	if (kind == ED_KIND_EXTENT) {
		const struct ed_exthdr *h = (const void *)plain;
		printf("extent   %10llu  %8llu sectors  [%llu, %llu)\n", (unsigned long long)sector,
		       (unsigned long long)h->nsectors, (unsigned long long)sector,
		       (unsigned long long)(sector + h->nsectors));
		return;
	}
	const struct ed_xnblk *b = (const void *)plain;
	uint32_t n = ed_xn_nslots(b->nsect, b->slot_bytes);
	printf("xnblock  %10llu  %u sector%s, %u slot%s of %u bytes\n", (unsigned long long)sector,
	       nsect, nsect > 1 ? "s" : "", n, n > 1 ? "s" : "", b->slot_bytes);
	for (uint32_t i = 0; i < n; i++) {
		struct ed_xnhdr *x = ed_xn_slot((uint8_t *)plain, i);
		if (x->state != ED_SLOT_LIVE)
			continue;
		printf("  exonode %llu.%u", (unsigned long long)sector, i);
		if (x->parent != 0)
			printf("  (descendant of %llu.%u)", (unsigned long long)x->parent, x->parent_slot);
		printf("\n");
		for (struct ed_xnrec *r = ed_xn_first(x); r != NULL; r = ed_xn_next(x, r)) {
			if (r->type == ED_ENT_EXTENT)
				printf("    [%3u] extent  %llu +%u\n", r->idx,
				       (unsigned long long)ed_xnrec_u64(r, 0), r->a);
			else if (r->type == ED_ENT_EXONODE)
				printf("    [%3u] exonode %llu.%u\n", r->idx,
				       (unsigned long long)ed_xnrec_u64(r, 0), r->a);
			else
				printf("    [%3u] data    %u bytes\n", r->idx, r->a);
		}
	}
}

/* The checker visits bindings in table order; list them by sector. */
struct seen {
	uint8_t kind;
	uint32_t nsect;
	uint64_t sector;
	uint8_t plain[ED_XN_MAX_SECT * ED_SECTOR];
};
static struct seen *seen;
static size_t nseen, capseen;

static void visit(void *arg, uint8_t kind, uint64_t sector, uint32_t nsect, const uint8_t *plain)
{
	(void)arg;
	if (nseen == capseen) {
		capseen = capseen ? 2 * capseen : 64;
		seen = realloc(seen, capseen * sizeof(*seen));
		if (seen == NULL)
			die("out of memory", 0);
	}
	struct seen *v = &seen[nseen++];
	v->kind = kind;
	v->nsect = nsect;
	v->sector = sector;
	memcpy(v->plain, plain, kind == ED_KIND_EXTENT ? sizeof(struct ed_exthdr) : nsect * ED_SECTOR);
}

static int by_sector(const void *a, const void *b)
{
	const struct seen *x = a, *y = b;
	return x->sector < y->sector ? -1 : x->sector > y->sector;
}

static void run_cb(void *arg, uint64_t start, uint64_t count, int allocated)
{
	(void)arg;
	printf("  %-9s %10llu .. %-10llu (%llu)\n", allocated ? "allocated" : "free",
	       (unsigned long long)start, (unsigned long long)(start + count - 1),
	       (unsigned long long)count);
}

static void report(void *arg, int sev, const char *what, uint64_t sector, uint64_t detail)
{
	(void)arg;
	printf("%s: %s (sector %llu, %llu)\n", sev == ED_CHK_VIOLATION ? "VIOLATION" : "note", what,
	       (unsigned long long)sector, (unsigned long long)detail);
}

static void summary(const struct ed_check_stats *st)
{
	printf("checkpoint %llu, %llu log records to replay; %llu sectors, %llu allocated "
	       "(exodisk region %llu)\n",
	       (unsigned long long)st->gen, (unsigned long long)st->log_records,
	       (unsigned long long)st->nsectors, (unsigned long long)st->allocated,
	       (unsigned long long)st->data_start);
	printf("%llu bindings: %llu extents, %llu exonode blocks holding %llu exonodes "
	       "(%llu descendant entries, %llu data entries)\n",
	       (unsigned long long)st->bindings, (unsigned long long)st->extents,
	       (unsigned long long)st->xnblocks, (unsigned long long)st->exonodes,
	       (unsigned long long)st->descendants, (unsigned long long)st->data_entries);
}

static int cmd_list(const struct opts *o)
{
	open_image(o, image_sectors(o->image), true);
	struct ed_check_stats st;
	int e = ed_check_disk(ED, 0, report, visit, NULL, &st);
	if (e != 0)
		die("cannot read the exodisk on this image", e);
	qsort(seen, nseen, sizeof(*seen), by_sector);
	for (size_t i = 0; i < nseen; i++)
		print_binding(seen[i].kind, seen[i].sector, seen[i].nsect, seen[i].plain);
	free(seen);
	printf("free map:\n");
	if ((e = ed_check_freemap(ED, 0, run_cb, NULL)) != 0)
		die("cannot read the free map", e);
	summary(&st);
	return 0;
}

static int cmd_check(const struct opts *o)
{
	open_image(o, image_sectors(o->image), true);
	struct ed_check_stats st;
	int e = ed_check_disk(ED, 0, report, NULL, NULL, &st);
	if (e != 0) {
		printf("VIOLATION: the exodisk cannot be read (%d)\n", e);
		return 1;
	}
	summary(&st);
	printf("%llu violations, %llu notes\n", (unsigned long long)st.violations,
	       (unsigned long long)st.notes);
	return st.violations == 0 ? 0 : 1;
}

/* What a boot does (replay the log, bring homes up to date), then what a
 * shutdown does (a checkpoint: the log is empty afterwards). */
static int cmd_recover(const struct opts *o)
{
	open_image(o, image_sectors(o->image), true);
	int e = ed_mount(ED, 0);
	if (e != 0)
		die("cannot mount the image", e);
	struct ed_client c = { .slot = -1 };
	struct ed_protector p = h_ext(0, 0, 0, h_cap(0, 0), h_cap(0, 0));
	if ((e = (int)h_sync(&H, ED, &c, ED_OP_SHUTDOWN, &p)) != 0)
		die("cannot checkpoint the image", e);
	ed_client_exit(ED, &c);
	ed_destroy(ED);
	if (hostdisk_save(&HD, o->image) != 0)
		die("cannot write the image", errno);
	printf("%s: recovered and checkpointed\n", o->image);
	return 0;
}

/* A few objects of every kind, through the same operations a libOS uses. */
static int cmd_demo(const struct opts *o)
{
	open_image(o, image_sectors(o->image), true);
	int e = ed_mount(ED, 0);
	if (e != 0)
		die("cannot mount the image", e);
	struct ed_client c = { .slot = -1 };
	struct ed_check_stats st;
	ed_check_live(ED, 0, NULL, NULL, &st);
	uint64_t base = st.data_start + 64;
	struct ed_cap rc = h_cap(1, 2), wc = h_cap(3, 4);
	static uint8_t buf[16 * 512];
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 4; i++) {
		struct ed_protector p = h_ext(0, base + 32 * (uint64_t)i, 16 * 512, rc, wc);
		if ((e = (int)h_req(&H, ED, &c, ED_OP_EXTENT_ALLOCATE, &p, NULL, NULL, NULL, 0, NULL, 0, NULL)) != 0 ||
		    (e = (int)h_io(&H, ED, &c, &p, 1, p.blkno, buf, sizeof(buf))) != 0 ||
		    (e = (int)h_sync(&H, ED, &c, ED_OP_EXTENT_WRITE, &p)) != 0)
			die("demo extent", e);
	}
	uint64_t xb = base + 200;
	struct ed_protector parent = h_xn(0, xb, 0, 200, rc, wc);
	if ((e = (int)h_req(&H, ED, &c, ED_OP_EXONODE_ALLOCATE, &parent, NULL, NULL, NULL, 0, NULL, 0, NULL)) != 0)
		die("demo exonode", e);
	for (int i = 0; i < 2; i++) {
		struct ed_operation s = { .one = xb + 10 + 8 * (uint64_t)i, .two = 8 * 512 };
		if ((e = (int)h_req(&H, ED, &c, ED_OP_EXONODE_ADD_EXTENT, &parent, NULL, &s, NULL, 0, NULL, 0, NULL)) < 0)
			die("demo add extent", e);
	}
	struct ed_operation s = { .one = xb + 1, .two = 0, .three = 120, .rc = rc, .wc = wc };
	if ((e = (int)h_req(&H, ED, &c, ED_OP_EXONODE_ADD_EXONODE, &parent, NULL, &s, NULL, 0, NULL, 0, NULL)) < 0)
		die("demo add exonode", e);
	struct ed_operation d = { .one = 8 };
	if ((e = (int)h_req(&H, ED, &c, ED_OP_EXONODE_ADD_DATA, &parent, NULL, &d, NULL, 0, "mtime=42", 8, NULL)) < 0)
		die("demo add data", e);
	struct ed_protector child = h_xn(0, xb + 1, 0, 0, rc, wc);
	if ((e = (int)h_sync(&H, ED, &c, ED_OP_EXONODE_WRITE, &child)) != 0 ||
	    (e = (int)h_sync(&H, ED, &c, ED_OP_EXONODE_WRITE, &parent)) != 0)
		die("demo write-back", e);
	ed_client_exit(ED, &c);
	ed_destroy(ED);
	if (hostdisk_save(&HD, o->image) != 0)
		die("cannot write the image", errno);
	printf("%s: added 4 extents, an exonode with 2 extents, data and a descendant\n", o->image);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (argc < 2)
		usage();
	if (strncmp(argv[1], "ufs-", 4) == 0)
		return exotool_unixfs(argc, argv);
	if (strncmp(argv[1], "fat-", 4) == 0)
		return exotool_fat(argc, argv);
	parse(argc, argv, &o);
	if (strcmp(argv[1], "format") == 0)
		return cmd_format(&o);
	if (strcmp(argv[1], "list") == 0)
		return cmd_list(&o);
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(&o);
	if (strcmp(argv[1], "demo") == 0)
		return cmd_demo(&o);
	if (strcmp(argv[1], "recover") == 0)
		return cmd_recover(&o);
	usage();
	return 2;
}
