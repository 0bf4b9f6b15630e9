/*
 * bench.c - exobench's shared pieces that need the exodisk (see bench.h):
 * the client, time, request counts and the meta line.  The portable ones
 * are in common.c.
 */
#include <stdio.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/rawlib.h"
#include "libos/exo.h"

struct bench B;

const char *bench_open(int unit)
{
	/* The library's system-call client: it waits by sleeping in
	 * ED_OP_POLL until one of our operations completes, as the raw
	 * path's RAW_WAIT sleeps, so both sides of every comparison wait the
	 * same way and under -icount an idle CPU lets simulated time skip
	 * ahead. */
	B.c = edc_default();
	B.unit = unit;
	B.hz = exo_kinfo()->timebase_hz;
	strcpy(B.dev, "?");
	if (edc_fm_open(B.c, unit, &B.fm) != 0)
		return "no mounted exodisk on that unit";
	B.raw = raw_enabled();
	struct raw_info in;
	if (B.raw && raw_info((unsigned)unit, &in) == 0) {
		memcpy(B.dev, in.name, sizeof B.dev - 1);
		B.dev[sizeof B.dev - 1] = 0;
	} else {
		/* Without the raw path to ask, the boot option that chose unit
		 * 0's kind (tools/qemu-disks.sh); other units are virtio. */
		char kind[16] = "";
		exo_bootopt("disk", kind, sizeof kind);
		strcpy(B.dev, unit == 0 && strcmp(kind, "model") == 0 ? "model"
		              : unit == 0 && strcmp(kind, "ram") == 0 ? "ramdisk" : "virtio-blk");
	}
	return NULL;
}

uint64_t now(void)
{
	return exo_time();
}

uint64_t ns_since(uint64_t t0)
{
	return exo_time_to_ns(exo_time() - t0);
}

uint64_t disk_requests(void)
{
	struct raw_info in;
	if (!B.raw || raw_info((unsigned)B.unit, &in) != 0)
		return 0;
	return in.nsubmitted;
}

void emit_meta(const char *exp, int runs)
{
	emit("\"bench\":\"meta\",\"exp\":\"%s\",\"dev\":\"%s\",\"unit\":%d,\"runs\":%d,\"timebase_hz\":%lu,"
	     "\"resolution_ns\":%lu,\"raw\":%d", exp, B.dev, B.unit, runs, (unsigned long)B.hz,
	     (unsigned long)(B.hz ? 1000000000ull / B.hz : 0), B.raw ? 1 : 0);
}

int64_t bench_cold(void)
{
	uint64_t busy = 0;
	int64_t left = edc_drop_cache(B.c, B.unit, &busy);
	for (int i = 0; left > 0 && busy > 0 && i < 5000; i++) {
		exo_sleep_ns(1000000);
		left = edc_drop_cache(B.c, B.unit, &busy);
	}
	return left;
}
