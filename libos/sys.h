/*
 * sys.h - raw system-call stubs.  Each returns the kernel's value: >= 0 on
 * success, a negative K_E_* / BLK_E_* / ED_E_* code on error (see
 * kernel/uapi/errno.h).  Applications normally use the friendlier wrappers in
 * exo.h and the POSIX layer; these are the bottom of the library OS.
 */
#ifndef LIBOS_SYS_H
#define LIBOS_SYS_H

#include <stdint.h>
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"
#include "libos/arch.h"      /* sys_call6: the system-call instruction */

/* Before a call that may block: let go of the shared file systems' locks
 * this process keeps between operations (libos/share.h, leases). */
void share_idle(void);
int share_keep_leases(void);

#define sys_call0(n)             sys_call6((n), 0, 0, 0, 0, 0, 0)
#define sys_call1(n, a)          sys_call6((n), (long)(a), 0, 0, 0, 0, 0)
#define sys_call2(n, a, b)       sys_call6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define sys_call3(n, a, b, c)    sys_call6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define sys_call4(n, a, b, c, d) sys_call6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

static inline __attribute__((noreturn)) void sys_exit(int status)
{
	sys_call1(SYS_exit, status);
	__builtin_unreachable();
}
static inline long sys_spawn(const char *path, char *const argv[], char *const envp[])
{ return sys_call3(SYS_spawn, path, argv, envp); }
static inline long sys_wait(int pid, int *status) { share_idle(); return sys_call2(SYS_wait, pid, status); }
static inline long sys_yield(void)  { return sys_call0(SYS_yield); }
static inline long sys_getpid(void) { return sys_call0(SYS_getpid); }
static inline long sys_sbrk(long incr) { return sys_call1(SYS_sbrk, incr); }
static inline long sys_cons_write(const void *buf, unsigned long len) { return sys_call2(SYS_cons_write, buf, len); }
static inline long sys_cons_read(void *buf, unsigned long len) { share_idle(); return sys_call2(SYS_cons_read, buf, len); }
static inline __attribute__((noreturn)) void sys_poweroff(int status)
{
	sys_call1(SYS_poweroff, status);
	__builtin_unreachable();
}
static inline long sys_sleep(uint64_t ticks) { share_idle(); return sys_call1(SYS_sleep, ticks); }
static inline long sys_kill(int target, int why) { return sys_call2(SYS_kill, target, why); }
struct spawn_opts;
static inline long sys_spawn_opts(const char *path, char *const argv[], char *const envp[],
				  const struct spawn_opts *o)
{ return sys_call4(SYS_spawn, path, argv, envp, o); }
static inline long sys_wait_opts(int pid, int *status, int options)
{ share_idle(); return sys_call3(SYS_wait, pid, status, options); }
static inline long sys_pipe(int32_t h[2]) { return sys_call1(SYS_pipe, h); }
/* A pipe blocks only when it is empty (hread) or full (hwrite).  A
 * process keeping a shared file system's lock between operations keeps it
 * through such a wait too - until another process wants the lock (the
 * kernel ends the wait: H_LEASE); then it publishes, lets go, and waits
 * on.  Letting go at every pipe call instead cost a publish (a sync) per
 * 4 KiB of a pipeline. */
static inline long sys_hread(int h, void *buf, unsigned long len)
{
	if (share_keep_leases()) {
		long r = sys_call4(SYS_hread, h, buf, len, H_LEASE);
		if (r != K_E_AGAIN)
			return r;
		share_idle();
	}
	return sys_call4(SYS_hread, h, buf, len, 0);
}
static inline long sys_hwrite(int h, const void *buf, unsigned long len)
{
	long done = 0;
	if (share_keep_leases()) {
		done = sys_call4(SYS_hwrite, h, buf, len, H_LEASE);
		if (done != K_E_AGAIN && (done < 0 || (unsigned long)done == len))
			return done;
		if (done == K_E_AGAIN)
			done = 0;
		share_idle();
	}
	long r = sys_call4(SYS_hwrite, h, (const char *)buf + done, len - (unsigned long)done, 0);
	if (r < 0)
		return done > 0 ? done : r;      /* as one call reports a write cut short */
	return done + r;
}
static inline long sys_hclose(int h) { return sys_call1(SYS_hclose, h); }
static inline long sys_cons_ctl(int op, long arg) { return sys_call2(SYS_cons_ctl, op, arg); }
static inline long sys_initrd_map(void) { return sys_call0(SYS_initrd_map); }

#endif
