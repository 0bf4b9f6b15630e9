/*
 * bench_recovery.c - what recovery (ed_mount) costs, against disk size,
 * number of bindings, and how much of the commit log a crash left to replay.
 *
 * For each configuration a disk is formatted and filled with bindings
 * (self-protected extents), then either shut down cleanly or crashed with
 * the log holding many records, and mounted again.  The mount's requests
 * are counted and timed twice: on this host (memory disk), and with the
 * drivers' mechanical disk model (drivers/diskmodel.c; the RZ25 of the
 * thesis, given more cylinders where the disk is bigger) - one request at a
 * time, as a mount issues them.  For scale, the last columns give what a
 * recovery by scanning would take on the same model: reading every bound
 * block once (random reads), and reading the whole disk (sequential).
 *
 *   make ed-recovery-bench        (docs/exodisk.md quotes a run)
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "tests/host/exodisk/edfixture.h"
#include "drivers/diskmodel.h"

struct timing {
	struct dm_disk dm;
	struct dm_state st;
	uint64_t now;
	bool on;
};

static void on_request(void *arg, const struct blkreq *r)
{
	struct timing *t = arg;
	if (t->on)
		t->now = dm_access(&t->dm, &t->st, t->now, r->op, r->sector, r->nsectors, NULL);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void run(uint64_t nsectors, uint64_t nbind, uint64_t log, int log_fill_pct, bool spread)
{
	struct fx f;
	struct ed_format_opts fo = { .log_sectors = log };
	fx_new_fmt(&f, nsectors, HD_SYNC, NULL, 7, &fo);
	f.hd.write_cache = false;
	struct ed_check_stats cs;
	CHECK_EQ(ed_check_live(f.ed, 0, NULL, NULL, &cs), 0);
	uint64_t ds = cs.data_start, stride = spread ? (nsectors - ds) / (nbind + 1) : 9;
	CHECK(stride >= 9);
	struct ed_cap rc = h_cap(1, 1), wc = h_cap(2, 2);
	for (uint64_t i = 0; i < nbind; i++) {
		struct ed_protector p = h_ext(0, ds + i * stride, 8 * 512, rc, wc);
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXTENT_ALLOCATE, &p, NULL, NULL, NULL, 0, NULL, 0, NULL), 0);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	}
	/* Shut down (a checkpoint empties the log) and boot again. */
	struct ed_protector any = h_ext(0, 0, 0, rc, wc);
	CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_SHUTDOWN, &any), 0);
	fx_remount(&f);

	/* Fill part of the log, then lose power. */
	uint64_t records = log / 2 * (uint64_t)log_fill_pct / 100;   /* 2 sectors each */
	for (uint64_t i = 0; i < records && i < nbind; i++) {
		struct ed_protector p = h_ext(0, ds + i * stride, 0, rc, wc);
		if (!(h_req(&f.h, f.ed, &f.a, ED_OP_IN_CACHE, &p, NULL, NULL, NULL, 0, NULL, 0, NULL) & ED_IC_CACHED))
			CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_READ, &p), 0);
		struct ed_operation st = { .one = 512 };
		CHECK_EQ(h_req(&f.h, f.ed, &f.a, ED_OP_EXTENT_GROW, &p, NULL, &st, NULL, 0, NULL, 0, NULL), 0);
		CHECK_EQ(h_sync(&f.h, f.ed, &f.a, ED_OP_EXTENT_WRITE, &p), 0);
	}
	hostdisk_crash(&f.hd);
	ed_destroy(f.ed);
	h_drop_pins(&f.h);
	blk_reset();

	/* The measured mount. */
	struct timing t;
	memset(&t, 0, sizeof(t));
	/* The RZ25, with more cylinders for bigger disks (as far as the model
	 * goes: the biggest disks are not timed on it). */
	struct dm_params p = dm_rz25;
	uint64_t per_cyl = (uint64_t)p.heads * p.spt;
	if ((uint64_t)p.cylinders * per_cyl < nsectors)
		p.cylinders = (uint32_t)((nsectors + per_cyl - 1) / per_cyl);
	bool modelled = dm_init(&t.dm, &p) == 0;
	dm_state_init(&t.st);
	t.on = modelled;
	f.hd.on_request = on_request;
	f.hd.on_arg = &t;
	CHECK(hostdisk_reattach(&f.hd) == 0);
	hostdisk_reset_counts(&f.hd);
	f.ed = h_core(&f.h, &f.cfg, NULL);
	fx_clients(&f);
	double t0 = now_ms();
	CHECK_EQ(ed_mount(f.ed, 0), 0);
	double host = now_ms() - t0;
	t.on = false;
	uint64_t nreq = f.hd.nreq, rd = f.hd.sect_read, wr = f.hd.sect_written;
	struct ed_unit_info ui;
	CHECK_EQ(ed_unit_info(f.ed, 0, NULL, &ui), 0);     /* memory right after the mount */
	CHECK_EQ(ed_check_live(f.ed, 0, NULL, NULL, &cs), 0);
	CHECK_EQ(cs.violations, 0);
	CHECK_EQ(cs.bindings, nbind);

	printf("%9llu MiB %7llu %-6s %5llu %4d%% %8llu %6llu %8llu %8llu %8llu %8.1f ",
	       (unsigned long long)(nsectors / 2048), (unsigned long long)nbind,
	       spread ? "spread" : "packed",
	       (unsigned long long)log, log_fill_pct, (unsigned long long)records,
	       (unsigned long long)nreq, (unsigned long long)rd, (unsigned long long)wr,
	       (unsigned long long)(ui.kmem_bytes / 1024), host);
	if (modelled) {
		double model = t.now / 1e6;
		double scan_bind = (double)nbind * dm_mean_random_ns(&t.dm, 1, false) / 1e6;
		double scan_disk = (double)nsectors * 512 / dm_seq_bytes_per_s(&t.dm) * 1e3;
		printf("%9.1f %10.0f %12.0f\n", model, scan_bind, scan_disk);
	} else {
		printf("%9s %10s %12s\n", "-", "-", "-");
	}
	fflush(stdout);
	fx_free(&f);
}

int main(void)
{
	printf("recovery (ed_mount) cost; model = RZ25 parameters, one request at a time\n");
	printf("%13s %7s %-6s %5s %5s %8s %6s %8s %8s %8s %8s %9s %10s %12s\n", "disk", "binds",
	       "where", "log", "fill", "records", "reqs", "sect rd", "sect wr", "kmem KiB", "host ms",
	       "model ms", "scan binds", "scan disk");
	const uint64_t MiB = 2048;
	/* Disk size, with 1,000 bindings packed together, or spread over the
	 * whole disk (then each in a 16 MiB region of the free map of its own). */
	const uint64_t sizes[] = { 64 * MiB, 512 * MiB, 64 * 1024 * MiB, 1024 * 1024 * MiB,
	                           16ull * 1024 * 1024 * MiB };
	for (int i = 0; i < 5; i++) {
		run(sizes[i], 1000, 2048, 0, false);
		run(sizes[i], 1000, 2048, 45, false);
		run(sizes[i], 1000, 2048, 0, true);
		run(sizes[i], 1000, 2048, 45, true);
	}
	/* Number of bindings, on 1 GiB. */
	for (uint64_t b = 1000; b <= 64000; b *= 4) {
		run(1024 * MiB, b, 2048, 0, true);
		run(1024 * MiB, b, 2048, 45, true);
	}
	/* Log size: what a crash can leave to replay. */
	for (uint64_t log = 128; log <= 2048; log *= 4)
		run(1024 * MiB, 1000, log, 45, true);
	return 0;
}
