/*
 * kinfo.h - the kernel-information page, mapped read-only at UKINFO in
 * every process (see layout.h).  Applications read the timer frequency here
 * to turn rdtime counts into seconds, and see how the system was booted.
 */
#ifndef UAPI_KINFO_H
#define UAPI_KINFO_H

#include <stdint.h>

#define KINFO_MAGIC 0x4f464e494f584545ull   /* "EEXOINFO" */

/* flags */
#define KINFO_F_RAWIO   0x1    /* the raw benchmark disk path is enabled (bootopt rawio=1) */
#define KINFO_F_POLLED  0x2    /* disk completions are polled, not interrupt-driven */

struct kinfo {
	uint64_t magic;
	uint64_t timebase_hz;      /* rdtime ticks per second */
	uint64_t ram_bytes;
	uint64_t boot_time;        /* rdtime at boot */
	uint32_t flags;            /* KINFO_F_* */
	uint32_t ndisks;           /* disk units (0 .. ndisks-1) */
	uint64_t free_pages;       /* physical pages free now (kept current by the allocator) */
	uint64_t total_pages;      /* physical pages the allocator manages */
	uint64_t syscalls;         /* system calls made since boot, by everyone */
	char     bootargs[2048];   /* the kernel command line */
};

#endif
