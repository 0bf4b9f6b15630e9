/*
 * prof.h - the profiler's system call, SYS_prof, and the format of the
 * record it keeps (docs/profiling.md).
 *
 * A profile belongs to the process that starts it (`prof` in apps/prof.c).
 * While it runs, a timer samples, cfg.hz times a second, every process in
 * the profile: the ones the owner spawns afterwards, and with PROF_F_INHERIT
 * their descendants too.  The owner itself is not sampled.  Each sample is a
 * record in a kernel buffer: where the process was (user or kernel PC and
 * the return addresses found by following frame pointers) and in what state
 * (running in user mode, running in a system call, asleep, ready to run),
 * and samples of the kernel handling device interrupts meanwhile.
 * The owner reads the buffer when it likes and symbolizes it itself.
 *
 *   prof(PROF_START, const struct prof_config *cfg)  -> 0; K_E_BUSY if a profile
 *                                                      already exists (one at a time)
 *   prof(PROF_STOP)                            -> 0: stop sampling; the record stays
 *   prof(PROF_INFO, struct prof_info *out)     -> 0
 *   prof(PROF_READ, offset, buf, len)          -> bytes of the record copied from offset
 *   prof(PROF_FREE)                            -> 0: drop the profile (also at the owner's exit)
 *   prof(PROF_MARK, const char *name, units)   -> 0: the calling process starts a phase
 *        called NAME of UNITS units of work (files, say), or ends the current
 *        one if NAME is ""; recorded with the process's and the system's
 *        counters, so a report can give each phase its own top list and
 *        counts per unit.  A no-op when the caller is not being profiled.
 *   prof(PROF_COUNTS, struct exo_counts *out)  -> 0: the calling process's counters
 *        (any process, profiled or not; kinfo.h has the system-wide ones)
 *   prof(PROF_IMAGE, path, offset, buf, len)   -> bytes read from the file PATH of
 *        the initrd (len 0: its size); prof reads programs' symbol tables this way
 *
 * Only the owner may STOP, INFO, READ or FREE.  Every pointer goes through
 * copyin/copyout like any other system call's.
 */
#ifndef UAPI_PROF_H
#define UAPI_PROF_H

#include <stdint.h>
#include "kernel/uapi/kinfo.h"

/* Operations (first argument). */
#define PROF_START   0
#define PROF_STOP    1
#define PROF_INFO    2
#define PROF_READ    3
#define PROF_FREE    4
#define PROF_MARK    5
#define PROF_COUNTS  6
#define PROF_IMAGE   7

/* PROF_START limits and defaults. */
#define PROF_HZ_DEFAULT     1000
#define PROF_HZ_MIN         10
#define PROF_HZ_MAX         20000
#define PROF_BYTES_DEFAULT  (4u << 20)
#define PROF_BYTES_MIN      (64u << 10)
#define PROF_BYTES_MAX      (64u << 20)

#define PROF_F_INHERIT  0x1     /* sample the spawned processes' descendants too */

struct prof_config {
	uint32_t hz;        /* samples per second, PROF_HZ_MIN .. PROF_HZ_MAX (0: default) */
	uint32_t flags;     /* PROF_F_* */
	uint64_t bytes;     /* record buffer, PROF_BYTES_MIN .. PROF_BYTES_MAX (0: default) */
};

/* What a sample says the process was doing. */
#define PROF_K_USER     1   /* running in user mode: the user PC                          */
#define PROF_K_KERNEL   2   /* running in a system call: the kernel PC, then the user one  */
#define PROF_K_SYSCALL  3   /* in a system call, at a moment the kernel could not be
                             * sampled (interrupts off: on the way in, say), so where in
                             * it is not known: the first address is the call's number    */
#define PROF_K_WAIT     4   /* asleep in the kernel (a disk, a child, a timer)             */
#define PROF_K_READY    5   /* runnable, waiting for the CPU                               */
#define PROF_K_IRQ      6   /* the kernel handling a device interrupt (for nobody in
                             * particular: the pid is 0, and only the kernel part is there) */
#define PROF_NKINDS     7

struct prof_info {
	uint64_t timebase_hz;       /* rdtime ticks per second                            */
	uint32_t hz;                /* sampling rate                                      */
	uint32_t flags;             /* PROF_F_* it was started with                       */
	uint64_t period;            /* rdtime ticks between samples                       */
	uint64_t start_time;        /* rdtime at PROF_START                               */
	uint64_t stop_time;         /* rdtime at PROF_STOP (0 while running)              */
	uint64_t used, size;        /* bytes of the record written, and its capacity      */
	uint64_t samples[PROF_NKINDS];  /* samples recorded, by PROF_K_*                  */
	uint64_t dropped;           /* samples lost because the buffer was full           */
	uint64_t lost_records;      /* PROC/MARK/EXIT records lost the same way            */
	uint64_t missed;            /* sampling periods that passed with no sample taken  */
	uint32_t active;            /* 1 until PROF_STOP                                  */
	uint32_t nprocs;            /* processes that have been in the profile            */
};

/*
 * The record: a sequence of 8-byte-aligned records, each starting with a
 * struct prof_rec; info.used bytes are valid.
 *
 * PROF_R_SAMPLE is followed by nk kernel addresses, then nu user addresses.
 * Each part is [pc, ra, return addresses from the frame-pointer chain...]:
 * the interrupted PC, the interrupted ra register (0 if not known: the
 * caller of a function that has not saved ra yet is only there), and then the
 * return addresses innermost first.  A PROF_K_KERNEL sample has both parts:
 * where the kernel was, and where the process made the system call.
 */
#define PROF_R_SAMPLE   1
#define PROF_R_PROC     2   /* a process joined the profile: struct prof_proc follows */
#define PROF_R_MARK     3   /* PROF_MARK: struct prof_mark follows                    */
#define PROF_R_EXIT     4   /* a profiled process exited: struct prof_exit follows    */

#define PROF_MAXDEPTH   32  /* addresses per part, pc and ra included */

struct prof_rec {
	uint8_t  type;      /* PROF_R_*                                        */
	uint8_t  kind;      /* PROF_K_* (samples)                              */
	uint8_t  nk, nu;    /* kernel and user addresses that follow (samples) */
	uint32_t pid;
	uint64_t time;      /* rdtime */
};

struct prof_proc {
	uint32_t ppid;
	uint32_t reserved;
	char     path[64];  /* the program, as spawned ("/bin/fsbench") */
};

#define PROF_MARK_NAME 40
struct prof_mark {
	char     name[PROF_MARK_NAME];
	uint64_t units;             /* units of work in the phase (0: not given) */
	struct exo_counts proc;     /* the marking process's counters now        */
	struct exo_counts all;      /* the system's counters now (kinfo)         */
};

struct prof_exit {
	struct exo_counts proc;     /* the process's counters at exit */
	struct exo_counts all;
};

_Static_assert(sizeof(struct prof_rec) == 16, "prof_rec layout");

#endif
