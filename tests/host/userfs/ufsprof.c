/*
 * ufsprof.c - the small-file benchmark of `exobench unixfs`, on the host,
 * counted: for each phase, the exodisk requests (the guest's system calls)
 * by operation and the disk requests (reads, writes, flushes, FUA writes)
 * per file.  Run under `valgrind --tool=callgrind` it also gives the
 * instructions of every function, unixfs and the exodisk core alike (the
 * core runs in this process, as the kernel does in the guest).
 *
 *   ufsprof [-n FILES] [-s BYTES] [-d DIRS] [-x PHASE]
 *
 * The work is exactly apps/exobench/unixfs.c's: files spread over DIRS
 * directories under /xb (mkdir as part of the write phase, rmdir in the
 * delete phase), one open/write/close per file, sync() at the end of the
 * write and delete phases; between phases the file system is unmounted and
 * the machine rebooted (clean), so every read starts with no cache above
 * the disk: neither unixfs's nor the exodisk's.  With -x, callgrind's
 * collection is on only during that phase (0 write, 1 read, 2 delete).
 *
 * Not part of make test: a tool (make ufsprof builds it).
 */
#include <stdlib.h>
#include <string.h>
#include "tests/host/userfs/ufsfix.h"
#include <valgrind/callgrind.h>

#define OPTS "unit=0"

static const char *const opname[ED_OP_COUNT] = {
	"IO", "EXTENT_ALLOCATE", "EXTENT_DEALLOCATE", "EXTENT_GROW", "EXTENT_SHRINK",
	"EXTENT_READ", "EXTENT_WRITE", "EXONODE_ALLOCATE", "EXONODE_DEALLOCATE", "EXONODE_READ",
	"EXONODE_WRITE", "ADD_EXTENT", "ADD_EXONODE", "ADD_DATA", "READ_DATA", "REMOVE_ENTRY",
	"COMBINE", "SPLIT", "MAP", "PROXY", "CAP_DISCOVER", "MARK_REPLACEMENT", "POLL",
	"IN_CACHE", "GET_FREE_MAP", "SHUTDOWN", "FLUSH", "DROP_CACHE",
};

/* Count every request by operation, then pass it on. */
static const struct edc_transport *inner;
static uint64_t nop[ED_OP_COUNT];

static int64_t counting(void *ctx, int op, struct ed_protector *prot, struct ed_buf *buf,
                        struct ed_operation *stuff)
{
	if (op >= 0 && op < ED_OP_COUNT)
		nop[op]++;
	return inner->request(ctx, op, prot, buf, stuff);
}

static struct edc_transport tr;
static struct ufx u;

static void start(void)
{
	ufx_start(&u);
	inner = u.p.edc.t;
	tr = *inner;
	tr.request = counting;
	u.p.edc.t = &tr;
}

static void fpath(char *p, size_t n, int ndirs, int i)
{
	snprintf(p, n, "/xb/d%02d/f%05d", i % ndirs, i);
}

static void phase(int ph, int nfiles, uint32_t bytes, int ndirs, uint8_t *buf)
{
	char p[64];
	for (int i = 0; i < nfiles; i++) {
		fpath(p, sizeof p, ndirs, i);
		if (ph == 0) {
			if (i < ndirs) {
				char d[32];
				snprintf(d, sizeof d, "/xb/d%02d", i);
				CHECK_EQ(vfs_mkdir(d, 0755), 0);
			}
			memset(buf, (uint8_t)i, bytes);
			struct vfile *f;
			CHECK_EQ(vfs_open(p, LIBFS_O_WRITE | LIBFS_O_CREAT | LIBFS_O_TRUNC, 0644, &f), 0);
			CHECK_EQ(vfs_write(f, buf, bytes), (long)bytes);
			CHECK_EQ(vfs_close(f), 0);
		} else if (ph == 1) {
			struct vfile *f;
			CHECK_EQ(vfs_open(p, LIBFS_O_READ, 0, &f), 0);
			CHECK_EQ(vfs_read(f, buf, bytes), (long)bytes);
			CHECK_EQ(vfs_close(f), 0);
			for (uint32_t k = 0; k < bytes; k++)
				if (buf[k] != (uint8_t)i) {
					fprintf(stderr, "%s: byte %u wrong\n", p, k);
					exit(1);
				}
		} else {
			CHECK_EQ(vfs_unlink(p), 0);
		}
	}
	if (ph == 2)
		for (int d = 0; d < ndirs && d < nfiles; d++) {
			snprintf(p, sizeof p, "/xb/d%02d", d);
			CHECK_EQ(vfs_rmdir(p), 0);
		}
	if (ph != 1)
		CHECK_EQ(vfs_sync(), 0);
}

int main(int argc, char **argv)
{
	int nfiles = 1000, ndirs = 100, only = -1;
	long bytes = 10240;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-n") == 0)
			nfiles = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-s") == 0)
			bytes = atol(argv[i + 1]);
		else if (strcmp(argv[i], "-d") == 0)
			ndirs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-x") == 0)
			only = atoi(argv[i + 1]);
	}
	/* A 512 MiB disk, as the benchmark's. */
	struct ed_format_opts fo = { 0 };
	memset(&u, 0, sizeof u);
	fx_new_fmt(&u.f, 1048576, HD_SYNC, NULL, 1, &fo);
	start();
	ufx_mkfs(&u, OPTS);
	CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
	CHECK_EQ(vfs_mkdir("/xb", 0755), 0);
	uint8_t *buf = malloc((size_t)bytes + 16);
	static const char *const name[3] = { "write", "read", "delete" };
	printf("%d files of %ld bytes in %d directories\n", nfiles, bytes, ndirs);
	for (int ph = 0; ph < 3; ph++) {
		/* Unmount, reboot cleanly, mount: nothing cached above the disk. */
		CHECK_EQ(vfs_umount("/"), 0);
		ufx_stop(&u);
		fx_remount(&u.f);
		start();
		CHECK_EQ(vfs_mount("/", "unixfs", OPTS, 1), 0);
		struct libfs_stat st;
		CHECK_EQ(vfs_stat("/xb", &st), 0);      /* the mount itself is not the phase's */
		memset(nop, 0, sizeof nop);
		hostdisk_reset_counts(&u.f.hd);
		if (ph == only)
			CALLGRIND_TOGGLE_COLLECT;
		struct vfs_lower lo;
		struct ufs_counters c0, c1;
		CHECK_EQ(vfs_pin("/", &lo), 0);
		unixfs_counters(lo.fs, &c0);
		phase(ph, nfiles, (uint32_t)bytes, ndirs, buf);
		unixfs_counters(lo.fs, &c1);
		vfs_unpin(&lo);
		if (ph == only)
			CALLGRIND_TOGGLE_COLLECT;
		struct hostdisk *hd = &u.f.hd;
		double n = nfiles;
		uint64_t calls = 0;
		for (int o = 0; o < ED_OP_COUNT; o++)
			calls += nop[o];
		printf("%-6s syscalls/file %.3f  disk requests/file %.3f (reads %.3f, writes %.3f, flushes %.3f, "
		       "FUA %.3f; sectors read %.1f, written %.1f)\n",
		       name[ph], calls / n, hd->nreq / n, hd->nread / n, hd->nwrite / n, hd->nflush / n,
		       hd->nfua / n, hd->sect_read / n, hd->sect_written / n);
		printf("         directories read ahead %llu, loaded from it %llu\n",
		       (unsigned long long)(c1.ahead_dirs - c0.ahead_dirs),
		       (unsigned long long)(c1.ahead_used - c0.ahead_used));
		for (int o = 0; o < ED_OP_COUNT; o++)
			if (nop[o])
				printf("         %-18s %8llu  %.3f/file\n", opname[o], (unsigned long long)nop[o],
				       nop[o] / n);
	}
	CHECK_EQ(vfs_umount("/"), 0);
	ufx_free(&u);
	free(buf);
	return 0;
}
