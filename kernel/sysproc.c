/*
 * sysproc.c - the process, memory, console and power system calls.
 *
 * Every pointer argument is a user address: it is used only through
 * copyin/copyout/copyinstr, which check it against the caller's page table.
 * Everything is copied into kernel memory before it is examined, so the
 * caller cannot change an argument after the kernel has checked it.
 */
#include "kernel/syscall.h"
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/klib.h"
#include "kernel/console.h"
#include "kernel/trap.h"
#include "kernel/power.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/proc.h"

#define PATH_MAX_LEN  128
#define SPAWN_STRBUF  8192     /* total bytes of argv and envp strings */
#define SPAWN_MAXARGS 64

static int64_t sys_exit(struct proc *p, uint64_t status, uint64_t a1, uint64_t a2,
			uint64_t a3, uint64_t a4, uint64_t a5)
{
	proc_exit((int)status);
}

/* Copy a NULL-terminated array of user string pointers into buf. */
static int copy_strv(struct proc *p, uint64_t uvec, char **out, int max, char *buf, size_t *used, size_t cap)
{
	int n = 0;
	if (uvec == 0) { out[0] = NULL; return 0; }
	for (;;) {
		uint64_t uptr;
		if (copyin(p->pagetable, &uptr, uvec + (uint64_t)n * 8, 8) < 0) return K_E_FAULT;
		if (uptr == 0) break;
		if (n == max) return K_E_2BIG;
		if (*used >= cap) return K_E_2BIG;
		int len = copyinstr(p->pagetable, buf + *used, uptr, cap - *used);
		if (len == K_E_NAMETOOLONG) return K_E_2BIG;
		if (len < 0) return len;
		out[n++] = buf + *used;
		*used += (size_t)len + 1;
	}
	out[n] = NULL;
	return n;
}

static int64_t sys_spawn(struct proc *p, uint64_t upath, uint64_t uargv, uint64_t uenvp,
			 uint64_t uopts, uint64_t a4, uint64_t a5)
{
	static struct spawn_opts opts;
	if (uopts && copyin(p->pagetable, &opts, uopts, sizeof opts) < 0) return K_E_FAULT;
	/* Static buffers are safe: the kernel does not sleep or nest during spawn. */
	static char path[PATH_MAX_LEN];
	static char strbuf[SPAWN_STRBUF];
	static char *argv[SPAWN_MAXARGS + 1], *envp[SPAWN_MAXARGS + 1];
	int err = copyinstr(p->pagetable, path, upath, sizeof path);
	if (err < 0) return err;
	size_t used = 0;
	int argc = copy_strv(p, uargv, argv, SPAWN_MAXARGS, strbuf, &used, sizeof strbuf);
	if (argc < 0) return argc;
	int envc = copy_strv(p, uenvp, envp, SPAWN_MAXARGS, strbuf, &used, sizeof strbuf);
	if (envc < 0) return envc;
	return proc_spawn(p, path, argc, argv, envc, envp, uopts ? &opts : NULL);
}

static int64_t sys_wait(struct proc *p, uint64_t pid, uint64_t ustatus, uint64_t options,
			uint64_t a3, uint64_t a4, uint64_t a5)
{
	/* Check the status pointer first, so a bad one cannot lose a child's status. */
	int probe = 0;
	if (ustatus && copyout(p->pagetable, ustatus, &probe, sizeof probe) < 0) return K_E_FAULT;
	int status = 0;
	if (options & ~(uint64_t)WAIT_NOHANG) return K_E_INVAL;
	int cpid = proc_wait((int)pid, &status, (int)options);
	if (cpid <= 0) return cpid;
	if (ustatus && copyout(p->pagetable, ustatus, &status, sizeof status) < 0) return K_E_FAULT;
	return cpid;
}

static int64_t sys_yield(struct proc *p, uint64_t a0, uint64_t a1, uint64_t a2,
			 uint64_t a3, uint64_t a4, uint64_t a5)
{
	yield();
	return 0;
}

static int64_t sys_getpid(struct proc *p, uint64_t a0, uint64_t a1, uint64_t a2,
			  uint64_t a3, uint64_t a4, uint64_t a5)
{
	return p->pid;
}

static int64_t sys_sbrk(struct proc *p, uint64_t uincr, uint64_t a1, uint64_t a2,
			uint64_t a3, uint64_t a4, uint64_t a5)
{
	int64_t incr = (int64_t)uincr;
	uint64_t old = p->brk;
	if (incr > 0) {
		if ((uint64_t)incr > UHEAP_LIMIT - old) return K_E_NOMEM;
		uint64_t nbrk = old + (uint64_t)incr;
		int err = uvm_alloc(p->pagetable, PGROUNDUP(old), PGROUNDUP(nbrk) - PGROUNDUP(old), PTE_R | PTE_W);
		if (err < 0) return err;
		p->brk = nbrk;
	} else if (incr < 0) {
		uint64_t dec = (uint64_t)(-(incr + 1)) + 1;
		if (dec > old - p->heap_start) return K_E_INVAL;
		uint64_t nbrk = old - dec;
		uvm_dealloc(p->pagetable, PGROUNDUP(nbrk), PGROUNDUP(old) - PGROUNDUP(nbrk));
		p->brk = nbrk;
	}
	return (int64_t)old;
}

static int64_t sys_cons_write(struct proc *p, uint64_t ubuf, uint64_t len, uint64_t a2,
			      uint64_t a3, uint64_t a4, uint64_t a5)
{
	char chunk[256];
	if (!uva_range_ok(ubuf, len)) return K_E_FAULT;
	for (uint64_t done = 0; done < len;) {
		size_t n = MIN(len - done, sizeof chunk);
		if (copyin(p->pagetable, chunk, ubuf + done, n) < 0) return done ? (int64_t)done : K_E_FAULT;
		console_write(chunk, n);
		done += n;
	}
	return (int64_t)len;
}

static int64_t sys_cons_read(struct proc *p, uint64_t ubuf, uint64_t len, uint64_t a2,
			     uint64_t a3, uint64_t a4, uint64_t a5)
{
	char chunk[256];
	if (len == 0) return 0;
	/* Check the buffer before waiting: an error should not need input to show. */
	if (uvm_check(p->pagetable, ubuf, MIN(len, sizeof chunk), true) < 0) return K_E_FAULT;
	int n;
	while ((n = console_read_avail(chunk, MIN(len, sizeof chunk))) == 0) {
		if (proc_interrupted(p)) return K_E_INTR;
		sleep_on(console_chan());
	}
	if (copyout(p->pagetable, ubuf, chunk, (size_t)n) < 0) return K_E_FAULT;
	return n;
}

static int64_t sys_poweroff(struct proc *p, uint64_t status, uint64_t a1, uint64_t a2,
			    uint64_t a3, uint64_t a4, uint64_t a5)
{
	kprintf("\nkernel: poweroff requested by pid %d (%s), status %d\n", p->pid, p->name, (int)status);
	power_off((int)status);
}

static int64_t sys_sleep(struct proc *p, uint64_t nticks, uint64_t a1, uint64_t a2,
			 uint64_t a3, uint64_t a4, uint64_t a5)
{
	uint64_t deadline = rdtime() + nticks;
	if (deadline < nticks) return K_E_INVAL;
	while (rdtime() < deadline) {
		if (proc_interrupted(p)) return K_E_INTR;
		sleep_on((void *)&ticks);
	}
	return 0;
}

static int64_t sys_kill(struct proc *p, uint64_t target, uint64_t why, uint64_t a2,
			uint64_t a3, uint64_t a4, uint64_t a5)
{
	int t = (int)target;
	if (t == 0 || t == INT32_MIN || (int64_t)target != t) return K_E_SRCH;
	if (why > 127) return K_E_INVAL;
	return proc_kill(t, 128 + (int)(why ? why : KILL_KILL));
}

static int64_t sys_cons_ctl(struct proc *p, uint64_t op, uint64_t arg, uint64_t a2,
			    uint64_t a3, uint64_t a4, uint64_t a5)
{
	switch (op) {
	case CONS_CLAIM_INTR:   return console_claim_intr(p, arg != 0);
	case CONS_RELEASE_INTR: console_release_intr(p); return 0;
	default:                return K_E_INVAL;
	}
}

void sysproc_init(void)
{
	syscall_register(SYS_exit, sys_exit, "exit");
	syscall_register(SYS_spawn, sys_spawn, "spawn");
	syscall_register(SYS_wait, sys_wait, "wait");
	syscall_register(SYS_yield, sys_yield, "yield");
	syscall_register(SYS_getpid, sys_getpid, "getpid");
	syscall_register(SYS_sbrk, sys_sbrk, "sbrk");
	syscall_register(SYS_cons_write, sys_cons_write, "cons_write");
	syscall_register(SYS_cons_read, sys_cons_read, "cons_read");
	syscall_register(SYS_poweroff, sys_poweroff, "poweroff");
	syscall_register(SYS_sleep, sys_sleep, "sleep");
	syscall_register(SYS_kill, sys_kill, "kill");
	syscall_register(SYS_cons_ctl, sys_cons_ctl, "cons_ctl");
}
