/*
 * main.c - kernel start-up, on every architecture: the architecture's boot
 * code (kernel/arch/.../boot.c) has filled in bootinfo from the firmware
 * (RAM, the initrd, the command line, the console port) and calls kmain,
 * which sets up memory, traps and devices, starts the first process (the
 * shell), and enters the scheduler.
 */
#include "kernel/klib.h"
#include "kernel/bootinfo.h"
#include "kernel/kalloc.h"
#include "kernel/vm.h"
#include "kernel/trap.h"
#include "kernel/proc.h"
#include "kernel/initrd.h"
#include "kernel/kshare.h"
#include "kernel/console.h"
#include "kernel/memlayout.h"
#include "kernel/prof.h"
#include "kernel/handle.h"
#include "kernel/rtc.h"
#include "drivers/uart.h"
#include "drivers/devices.h"

extern char _kernel_end[];
void sysproc_init(void);
void exodisk_init(void);   /* kernel/sys_exodisk.c */
void shseg_init(void);     /* kernel/shseg.c */

/* argv for the first process: "sh" or "sh -c <cmd>". */
static void start_init(void)
{
	char *argv[4] = { "sh", NULL, NULL, NULL };
	char *envp[1] = { NULL };
	int argc = 1;
	if (bootinfo.cmd) {
		argv[1] = "-c";
		argv[2] = (char *)bootinfo.cmd;
		argc = 3;
	}
	int pid = proc_spawn(NULL, "/bin/sh", argc, argv, 0, envp, NULL);
	if (pid < 0) panic("cannot start /bin/sh: error %d", pid);
	for (int i = 0; i < NPROC; i++)
		if (procs[i].pid == pid) set_initproc(&procs[i]);
}

void kmain(void)
{
	uart_init(bootinfo.uart_base);
	bootinfo.cmd = bootopt("cmd");
	if (!bootopt_flag("quiet"))
		kprintf("exodisk kernel: %s, %lu MiB RAM, timebase %lu Hz\n",
			bootinfo.cpu, bootinfo.ram_size >> 20, bootinfo.timebase_hz);

	uint64_t ram_end = bootinfo.ram_base + MIN(bootinfo.ram_size, RAM_MAX_SIZE);
	kalloc_reserve(bootinfo.initrd_start, bootinfo.initrd_end);
	kalloc_init((uint64_t)_kernel_end, ram_end);
	kvm_init(bootinfo.ram_base, ram_end - bootinfo.ram_base);
	kvm_enable();

	trap_init();               /* and the interrupt controller(s) and the timer's hardware */
	console_init();
	timer_init();
	initrd_init(bootinfo.initrd_start, bootinfo.initrd_end);
	kinfo_init();
	proc_init();
	sysproc_init();
	prof_init();
	handle_init();
	initrd_syscall_init();
	rtc_init();
	shseg_init();
	devices_init();
	exodisk_init();
	/* Options applications read (libos/posix.c, apps/exobench). */
	bootopt_declare("mounts");
	bootopt_check();

	start_init();
	scheduler();
}
