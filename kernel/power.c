/*
 * power.c - orderly power-off: run the registered shutdown hooks (the
 * exodisk checkpoints its units), then ask the architecture to stop the
 * machine with the given status (QEMU exits with it).  A panic skips the hooks.
 */
#include "kernel/power.h"
#include "kernel/arch.h"
#include "kernel/klib.h"

#define MAX_HOOKS 4
static void (*hooks[MAX_HOOKS])(void);
static int nhooks;

void power_on_shutdown(void (*hook)(void))
{
	if (nhooks == MAX_HOOKS) panic("power_on_shutdown: too many hooks");
	hooks[nhooks++] = hook;
}

void power_off(int status)
{
	for (int i = 0; i < nhooks; i++) hooks[i]();
	arch_poweroff(status);
}
