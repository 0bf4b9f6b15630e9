/*
 * exotool.c - the exodisk host tool: format a disk image, list what is on
 * it, check its invariants.  It links the same portable core the kernel
 * runs (kernel/exodisk/), over the image file, read as it is used (so a
 * sparse 16 TiB image costs what is on it).
 *
 *   exotool format IMAGE [-s SIZE] [-l LOGSIZE] [-k KEYHEX]
 *   exotool info   IMAGE [-k KEYHEX]      the superblock and what the exodisk holds
 *   exotool list   IMAGE [-k KEYHEX]      extents, exonodes, free map
 *   exotool check  IMAGE [-k KEYHEX]      exit status 1 on any violation
 *   exotool recover IMAGE [-k KEYHEX]     mount it as the kernel would (replay, checkpoint), save
 *   exotool demo   IMAGE [-k KEYHEX]      add a few extents and exonodes (for trying the others)
 *   exotool ufs-*  IMAGE ...              unixfs on the image (unixfs.c)
 *   exotool fat-*  DISK.img ...           a FAT file system on the image (fat.c)
 *
 * SIZE takes a K, M, G or T suffix (bytes); without one it counts sectors.
 * The key defaults to the development key (docs/exodisk.md, "Keys"); info,
 * list and check read the image the way the next mount would, without
 * writing it.  Run it as tools/exotool from the repository root (that
 * script builds it).
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
#include "tools/exotool-src/exotool_explain.h"

static const char *prog = "exotool";
static struct harness H;
static struct hostdisk HD;
static struct exodisk *ED;

static void usage_to(FILE *f)
{
	fprintf(f,
	        "usage: %s format  IMAGE [-s SIZE] [-l LOGSIZE] [-k KEYHEX]   make an empty exodisk\n"
	        "       %s info    IMAGE [-k KEYHEX]    its superblock, trees and counts\n"
	        "       %s list    IMAGE [-k KEYHEX]    extents, exonodes and the free map\n"
	        "       %s check   IMAGE [-k KEYHEX]    verify it all; exit status 1 on a violation\n"
	        "       %s recover IMAGE [-k KEYHEX]    replay the log and checkpoint, as a boot would\n"
	        "       %s demo    IMAGE [-k KEYHEX]    add a few extents and exonodes to try the others on\n"
	        "SIZE: bytes with a K, M, G or T suffix, or sectors (default 64M for a new image, else\n"
	        "the image's size); LOGSIZE: the commit log, the same way (default a 256th of the disk,\n"
	        "64..2048 sectors); KEYHEX: the 128-bit boot key as 32 hex digits (default: the\n"
	        "development key).  The unixfs and FAT subcommands:\n",
	        prog, prog, prog, prog, prog, prog);
	fflush(f);
	/* Their own usage: unixfs.c and fat.c print it (to stderr). */
	char *uargv[] = { (char *)prog, (char *)"ufs-", NULL };
	char *fargv[] = { (char *)prog, (char *)"fat-", NULL };
	if (f == stderr) {
		(void)exotool_unixfs(2, uargv);
		(void)exotool_fat(2, fargv);
	}
}

static void usage(void)
{
	usage_to(stderr);
	exit(2);
}

/* A message and the reason in words (explain.c): what is wrong with the
 * image, where the damage is if known. */
static const char *cur_image = "";

static void die(const char *what, long code)
{
	if (code != 0)
		fprintf(stderr, "%s: %s: %s\n", prog, what, exotool_why(cur_image, code, ED));
	else
		fprintf(stderr, "%s: %s\n", prog, what);
	exit(1);
}

static void die_errno(const char *what, const char *path)
{
	fprintf(stderr, "%s: %s %s: %s\n", prog, what, path, strerror(errno));
	exit(1);
}

struct opts {
	const char *image;
	uint64_t size, log;
	char key[16];
};

static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno != 0 || end == s) {
		fprintf(stderr, "%s: %s: a size is a number of sectors, or bytes with K, M, G or T\n",
		        prog, s);
		exit(2);
	}
	switch (*end) {
	case 'k': case 'K': return v * 1024 / 512;
	case 'm': case 'M': return v * 1024 * 1024 / 512;
	case 'g': case 'G': return v * 1024 * 1024 * 1024 / 512;
	case 't': case 'T': return v * 1024 * 1024 * 1024 * 2;
	case '\0':          return v;
	default:
		fprintf(stderr, "%s: %s: a size is a number of sectors, or bytes with K, M, G or T\n",
		        prog, s);
		exit(2);
	}
	return 0;
}

static void parse_key(const char *hex, char key[16])
{
	bool ok = strlen(hex) == 32;
	for (int i = 0; ok && i < 32; i++)
		ok = (hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f') ||
		     (hex[i] >= 'A' && hex[i] <= 'F');
	if (!ok)
		die("-k takes the key as 32 hex digits (128 bits)", 0);
	for (int i = 0; i < 16; i++) {
		unsigned v;
		sscanf(hex + 2 * i, "%2x", &v);
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
	cur_image = o->image;
	for (int i = 3; i < argc; i++) {
		if (i + 1 >= argc) {
			fprintf(stderr, "%s: %s wants a value\n", prog, argv[i]);
			usage();
		}
		if (strcmp(argv[i], "-s") == 0 && strcmp(argv[1], "format") == 0) {
			o->size = parse_size(argv[++i]);
		} else if (strcmp(argv[i], "-l") == 0 && strcmp(argv[1], "format") == 0) {
			o->log = parse_size(argv[++i]);
		} else if (strcmp(argv[i], "-b") == 0 && strcmp(argv[1], "format") == 0) {
			/* The binding table grows with use now: nothing to size. */
			fprintf(stderr, "%s: -b is no longer needed (the binding tree grows as it is "
			        "used); ignored\n", prog);
			i++;
		} else if (strcmp(argv[i], "-k") == 0) {
			parse_key(argv[++i], o->key);
		} else {
			fprintf(stderr, "%s %s: unknown option %s\n", prog, argv[1], argv[i]);
			usage();
		}
	}
}

/* ---- the image as a block device ------------------------------------------------- */



static void open_image(const struct opts *o, uint64_t nsectors, bool load)
{
	h_init(&H, 0x6578746f6f6cull);
	if (hostdisk_init(&HD, nsectors, HD_SYNC, false, 1) != 0)
		die("cannot set up the image in memory", 0);
	if (load && hostdisk_load(&HD, o->image) != 0)
		die_errno("cannot read", o->image);
	ED = h_core(&H, NULL, o->key);
}

static uint64_t image_sectors(const char *path)
{
	cur_image = path;
	return exotool_image_sectors(path);
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
	if (n < ed_format_min_sectors()) {
		fprintf(stderr, "%s: %llu sectors is too small for an exodisk (at least %llu)\n", prog,
		        (unsigned long long)n, (unsigned long long)ed_format_min_sectors());
		return 1;
	}
	if (n > ED_MAX_SECTORS) {
		fprintf(stderr, "%s: %llu sectors is more than an exodisk addresses (%llu, 32 TiB)\n",
		        prog, (unsigned long long)n, (unsigned long long)ED_MAX_SECTORS);
		return 1;
	}
	open_image(o, n, false);
	struct ed_format_opts fo = { .nsectors = n, .log_sectors = o->log };
	read_random(fo.uuid, sizeof(fo.uuid));
	int e = ed_format(ED, 0, &fo);
	if (e != 0)
		die("format failed", e);
	uint64_t written = ed_format_sectors(ED);
	if (hostdisk_save(&HD, o->image) != 0)
		die_errno("cannot write", o->image);
	struct ed_check_stats st;
	if ((e = ed_check_disk(ED, 0, NULL, NULL, NULL, &st)) != 0)
		die("the new image does not check", e);
	printf("%s: %llu sectors, exodisk region 0..%llu, %llu sectors for applications; "
	       "format wrote %llu sectors\n",
	       o->image, (unsigned long long)n, (unsigned long long)st.data_start - 1,
	       (unsigned long long)(n - st.data_start), (unsigned long long)written);
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
	       "(exodisk region %llu, tree pages %llu)\n",
	       (unsigned long long)st->gen, (unsigned long long)st->log_records,
	       (unsigned long long)st->nsectors, (unsigned long long)st->allocated,
	       (unsigned long long)st->data_start, (unsigned long long)st->tree_pages);
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

/* What a mount found lost to a damaged log record (docs/exodisk.md, "A
 * damaged log"), if anything. */
static void print_lost(const char *image, const struct ed_unit_info *u)
{
	if (u->lost_records == 0)
		return;
	printf("%s: DAMAGED COMMIT LOG: record %llu (sector %llu) fails to verify and valid records "
	       "follow it; it and the %llu after it cannot be applied: at least %llu block write-backs "
	       "are lost, the unit is as it was before record %llu (run the file systems' fsck)\n",
	       image, (unsigned long long)u->lost_seq, (unsigned long long)u->lost_at,
	       (unsigned long long)(u->lost_records - 1), (unsigned long long)u->lost_blocks,
	       (unsigned long long)u->lost_seq);
}

/* The newest checkpoint did not verify and a mount falls back to the one
 * before it (docs/exodisk.md, "A damaged checkpoint"): what that costs. */
static void print_fell(const char *image, const struct ed_unit_info *u, bool recovering)
{
	if (!u->fell)
		return;
	if (u->fell_gen != 0)
		printf("%s: DAMAGED CHECKPOINT: the newest checkpoint (generation %llu, superblock at sector %llu) "
		       "%s at sector %llu; a mount uses the one before it (generation %llu) and "
		       "replays the log from there: ", image, (unsigned long long)u->fell_gen,
		       (unsigned long long)u->fell_sb,
		       u->fell_io ? "cannot be read (the image failed every read of it)" : "does not verify",
		       (unsigned long long)u->fell_at,
		       (unsigned long long)u->fell_used_gen);
	else
		printf("%s: DAMAGED SUPERBLOCK: the superblock at sector %llu does not verify; a mount uses the "
		       "other one (generation %llu), and if the damaged one was the newer checkpoint, replays "
		       "the log from the older: ", image, (unsigned long long)u->fell_sb,
		       (unsigned long long)u->fell_used_gen);
	if (u->fell_lost == 0)
		printf("nothing is lost, the log still holds every change since\n");
	else if (u->fell_lost != UINT64_MAX)
		printf("%llu log records only the damaged checkpoint still covered are LOST (run the file "
		       "systems' fsck)\n", (unsigned long long)u->fell_lost);
	else
		printf("what it held beyond the log cannot be known (run the file systems' fsck)\n");
	printf("%s: %s\n", image, recovering ? "the checkpoint written now replaces the damaged one"
	       : "`exotool recover` makes that fallback permanent: it mounts as a boot does and writes a "
	         "checkpoint in place of the damaged one");
}

/* The superblock and the unit's counts, as a mount sees them. */
static int cmd_info(const struct opts *o)
{
	open_image(o, image_sectors(o->image), true);
	int e = ed_mount(ED, 0);
	if (e != 0)
		die("cannot mount the exodisk on this image", e);
	struct ed_unit_info u;
	ed_unit_info(ED, 0, NULL, &u);
	printf("%s: exodisk of %llu sectors (%.1f GiB)\n", o->image, (unsigned long long)u.nsectors,
	       u.nsectors / 2097152.0);
	printf("  region 0..%llu (superblocks, a log of %llu sectors); tree pages %llu sectors\n",
	       (unsigned long long)u.data_start - 1, (unsigned long long)u.log_sectors,
	       (unsigned long long)(u.meta_sectors - u.data_start));
	printf("  %llu bindings; %llu sectors allocated, %llu free (%llu kept for the exodisk's "
	       "metadata)\n",
	       (unsigned long long)u.bindings, (unsigned long long)u.allocated,
	       (unsigned long long)(u.nsectors - u.allocated), (unsigned long long)u.reserved);
	printf("  mounting read %llu sectors, replayed %llu log records (and %llu carrying the "
	       "unwritten set); kernel memory %llu KiB\n",
	       (unsigned long long)u.mount_reads, (unsigned long long)u.replayed,
	       (unsigned long long)u.carried, (unsigned long long)(u.kmem_bytes / 1024));
	print_lost(o->image, &u);
	print_fell(o->image, &u, false);
	ed_destroy(ED);            /* nothing written */
	return 0;
}

static int cmd_check(const struct opts *o)
{
	open_image(o, image_sectors(o->image), true);
	struct ed_check_stats st;
	int e = ed_check_disk(ED, 0, report, NULL, NULL, &st);
	if (e != 0) {
		printf("VIOLATION: the exodisk cannot be read: %s\n", exotool_why(o->image, e, ED));
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
	struct ed_unit_info u;
	ed_unit_info(ED, 0, NULL, &u);
	print_lost(o->image, &u);
	print_fell(o->image, &u, true);
	struct ed_client c = { .slot = -1 };
	struct ed_protector p = h_ext(0, 0, 0, h_cap(0, 0), h_cap(0, 0));
	if ((e = (int)h_sync(&H, ED, &c, ED_OP_SHUTDOWN, &p)) != 0)
		die("cannot checkpoint the image", e);
	ed_client_exit(ED, &c);
	ed_destroy(ED);
	if (hostdisk_save(&HD, o->image) != 0)
		die_errno("cannot write", o->image);
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
		die_errno("cannot write", o->image);
	printf("%s: added 4 extents, an exonode with 2 extents, data and a descendant\n", o->image);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	if (argc < 2)
		usage();
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage_to(stdout);
		char *uargv[] = { argv[0], (char *)"ufs-", NULL };
		char *fargv[] = { argv[0], (char *)"fat-", NULL };
		fflush(stdout);
		(void)exotool_unixfs(2, uargv);
		(void)exotool_fat(2, fargv);
		return 0;
	}
	if (strncmp(argv[1], "ufs-", 4) == 0)
		return exotool_unixfs(argc, argv);
	if (strncmp(argv[1], "fat-", 4) == 0)
		return exotool_fat(argc, argv);
	const char *cmds[] = { "format", "info", "list", "check", "recover", "demo" };
	bool known = false;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		known |= strcmp(argv[1], cmds[i]) == 0;
	if (!known) {
		fprintf(stderr, "%s: no subcommand %s\n", prog, argv[1]);
		usage();
	}
	if (argc < 3) {
		fprintf(stderr, "%s %s: which image?\n", prog, argv[1]);
		usage();
	}
	parse(argc, argv, &o);
	if (strcmp(argv[1], "format") == 0)
		return cmd_format(&o);
	if (strcmp(argv[1], "list") == 0)
		return cmd_list(&o);
	if (strcmp(argv[1], "info") == 0)
		return cmd_info(&o);
	if (strcmp(argv[1], "check") == 0)
		return cmd_check(&o);
	if (strcmp(argv[1], "demo") == 0)
		return cmd_demo(&o);
	if (strcmp(argv[1], "recover") == 0)
		return cmd_recover(&o);
	usage();
	return 2;
}
