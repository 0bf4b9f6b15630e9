/*
 * kinfo.h - the kernel-information page, mapped read-only at UKINFO in
 * every process (see layout.h).  Applications read the timer frequency here
 * to turn rdtime counts into seconds, and see how the system was booted.
 */
#ifndef UAPI_KINFO_H
#define UAPI_KINFO_H

#include <stdint.h>

#define KINFO_MAGIC 0x4f464e494f584545ull   /* "EEXOINFO" */

/*
 * Counters of what processes asked of the kernel.  kinfo->counts has them for
 * the whole system since boot; each process has its own (PROF_COUNTS in
 * prof.h), so a benchmark can print what each of its phases cost.  Disk
 * requests are counted when they are queued: to the process whose system call
 * queued them, and always to the system (which also sees the requests the
 * kernel queues on its own, from a completion, with no system call running).
 */
#define EXO_NSYSCALLS 32
#define EXO_NEDOPS    32

struct exo_counts {
	uint64_t syscalls;          /* system calls made                                   */
	uint64_t sys_time;          /* rdtime ticks spent inside them, asleep included     */
	uint64_t wait_time;         /* rdtime ticks asleep inside them                     */
	uint64_t disk_reads;        /* block requests queued, by kind                      */
	uint64_t disk_writes;
	uint64_t disk_flushes;
	uint64_t disk_fua;          /* writes among them that were durable on completion   */
	uint64_t sectors_read;      /* 512-byte sectors they moved                         */
	uint64_t sectors_written;
	uint64_t by_syscall[EXO_NSYSCALLS];  /* system calls by number (SYS_*)            */
	uint64_t by_edop[EXO_NEDOPS];        /* exodisk_request calls by ED_OP_*          */
};

/* flags */
#define KINFO_F_RAWIO   0x1    /* the raw benchmark disk path is enabled (bootopt rawio=1) */
#define KINFO_F_POLLED  0x2    /* disk completions are polled, not interrupt-driven */
#define KINFO_F_ZBB     0x4    /* RISC-V: the CPU has Zbb (rotates...; riscv,isa in the device tree) */

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
	struct exo_counts counts;  /* what every process has asked since boot (above) */
	/* Wall-clock time: nanoseconds since 1970-01-01 00:00 UTC at rdtime
	 * boot_time, from the machine's real-time clock (rtc.c in kernel/arch/
	 * riscv/ or x86_64/); 0 when there is none.  Now = wall_at_boot + (rdtime - boot_time) in ns. */
	uint64_t wall_at_boot;
};

#endif
