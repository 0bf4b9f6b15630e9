/*
 * syscall.h - system-call numbers, shared by the kernel and libos.
 *
 * The set is deliberately small.  The disk is reached only through
 * SYS_exodisk_request; everything else a library OS needs from the kernel is
 * here.  Arguments go in a0..a5, the number in a7, the result comes back in a0
 * (negative = error, see errno.h).
 */
#ifndef UAPI_SYSCALL_H
#define UAPI_SYSCALL_H

#define SYS_exit             1   /* exit(status)                                  -> no return  */
#define SYS_spawn            2   /* spawn(path, argv, envp, opts or 0: proc.h)    -> pid        */
#define SYS_wait             3   /* wait(pid or -1, int *status, options)         -> pid        */
#define SYS_yield            4   /* yield()                                       -> 0          */
#define SYS_getpid           5   /* getpid()                                      -> pid        */
#define SYS_sbrk             6   /* sbrk(increment)                               -> old break  */
#define SYS_cons_write       7   /* cons_write(buf, len)                          -> len        */
#define SYS_cons_read        8   /* cons_read(buf, len): blocks for >= 1 byte     -> count      */
#define SYS_poweroff         9   /* poweroff(status): QEMU exits with status      -> no return  */
#define SYS_exodisk_request 10   /* exodisk_request(op, prot, reqbp, stuff)       -> 0 / error  */
#define SYS_sleep           11   /* sleep(ticks of the timebase)                  -> 0          */
#define SYS_raw_io          12   /* raw_io(cmd, ...): benchmark-only raw disk path (rawio.h)    */
#define SYS_kill            13   /* kill(pid or -group, why): proc.h              -> 0          */
#define SYS_prof            14   /* prof(op, ...): the profiler and counters (prof.h)           */
#define SYS_pipe            15   /* pipe(int32_t h[2]): h[0] reads, h[1] writes   -> 0          */
#define SYS_hread           16   /* hread(handle, buf, len, flags): blocks for >= 1 byte -> count, 0 EOF */
#define SYS_hwrite          17   /* hwrite(handle, buf, len, flags): all of it    -> len        */
#define SYS_hclose          18   /* hclose(handle)                                -> 0          */
#define SYS_cons_ctl        19   /* cons_ctl(op, arg): the interrupt key (proc.h) -> 0          */
#define SYS_initrd_map      20   /* initrd_map(): map the initrd read-only        -> its address */
#define SYS_shseg           21   /* shseg(op, ...): shared segments (shseg.h)                   */

/* hread and hwrite's flags.  H_NOWAIT: where the call would wait (an empty
 * pipe with a writer, a full one with a reader), return instead - hread
 * K_E_AGAIN; hwrite what it wrote so far, or K_E_AGAIN if nothing.
 * H_LEASE: wait, but only until another process waits (SHSEG_WAIT) for a
 * shared segment's lock this process holds, then return as H_NOWAIT does
 * (also at once, where it would wait, if one has begun to since the last
 * such return).  The library OS keeps a shared file system's lock through
 * its pipe calls this way, and publishes and lets it go only when someone
 * wants it (libos/sys.h, docs/sharing.md). */
#define H_NOWAIT             1
#define H_LEASE              2
#define H_FLAGS              (H_NOWAIT | H_LEASE)

#endif
