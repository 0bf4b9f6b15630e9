/*
 * syscall.c - dispatch a system call by number.  Unknown numbers get
 * K_E_NOSYS; the process keeps running.
 */
#include "kernel/syscall.h"
#include "kernel/klib.h"
#include "kernel/kshare.h"
#include "kernel/prof.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/kinfo.h"

#define NSYSCALL 32

static struct { syscall_fn fn; const char *name; } table[NSYSCALL];

void syscall_register(int num, syscall_fn fn, const char *name)
{
	if (num <= 0 || num >= NSYSCALL || table[num].fn) panic("syscall_register: bad number %d", num);
	table[num].fn = fn;
	table[num].name = name;
}

void syscall(struct proc *p)
{
	struct trapframe *tf = &p->tf;
	uint64_t num = tf_sysnum(tf);
	kinfo->syscalls++;
	prof_syscall_enter(p);
	if (num >= NSYSCALL || table[num].fn == NULL)
		tf_set_ret(tf, (uint64_t)(int64_t)K_E_NOSYS);
	else
		tf_set_ret(tf, (uint64_t)table[num].fn(p, tf_arg(tf, 0), tf_arg(tf, 1), tf_arg(tf, 2),
		                                       tf_arg(tf, 3), tf_arg(tf, 4), tf_arg(tf, 5)));
	prof_syscall_exit(p);
}
