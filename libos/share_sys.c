/*
 * share_sys.c - the guest's shared segments: the kernel's (SYS_shseg,
 * kernel/uapi/shseg.h), for share.c.
 */
#include <errno.h>
#include "libos/share.h"
#include "libos/sys.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"

static int err(int64_t r)
{
	return r == K_E_NOMEM ? -ENOMEM : r == K_E_BUSY ? -EBUSY : r == K_E_INTR ? -EINTR
	     : r == K_E_NOSYS ? -ENOSYS : -EINVAL;
}

int shseg_attach(const uint8_t name[SHSEG_NAME], uint32_t npages, void **seg)
{
	int64_t r = sys_call3(SYS_shseg, SHSEG_ATTACH, (uint64_t)(uintptr_t)name, npages);
	if (r < 0)
		return err(r);
	*seg = (void *)(uintptr_t)r;
	return 0;
}

int shseg_grow(void *seg, uint32_t npages)
{
	int64_t r = sys_call3(SYS_shseg, SHSEG_GROW, (uint64_t)(uintptr_t)seg, npages);
	return r < 0 ? err(r) : 0;
}

void shseg_detach(void *seg)
{
	sys_call3(SYS_shseg, SHSEG_DETACH, (uint64_t)(uintptr_t)seg, 0);
}

int shseg_wait(uint32_t *word, uint32_t value)
{
	int64_t r = sys_call3(SYS_shseg, SHSEG_WAIT, (uint64_t)(uintptr_t)word, value);
	return r < 0 ? err(r) : 0;
}

void shseg_wake(uint32_t *word)
{
	sys_call3(SYS_shseg, SHSEG_WAKE, (uint64_t)(uintptr_t)word, 0);
}

uint32_t shseg_pid(void)
{
	return (uint32_t)sys_getpid();
}

void shseg_yield(void)
{
	sys_yield();
}
