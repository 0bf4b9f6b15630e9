/*
 * sbi.c - the kernel's side of the Supervisor Binary Interface: timer
 * programming and power-off.
 *
 * Power-off carries an exit status out of QEMU.  SBI's system-reset call can
 * only say "shutdown" (QEMU exits 0) or "failure" (QEMU exits 1), so for a
 * non-zero status the kernel writes the status to QEMU virt's "test finisher"
 * device (sifive,test0), which makes QEMU exit with exactly that value.  The
 * finisher's address comes from the device tree; without one, the kernel falls
 * back to SBI system reset.
 */
#include "kernel/arch/riscv/sbi.h"
#include "kernel/arch/riscv/riscv.h"
#include "kernel/bootinfo.h"

#define SBI_EXT_TIME  0x54494D45
#define SBI_EXT_SRST  0x53525354
#define SRST_SHUTDOWN 0
#define SRST_REASON_NONE    0
#define SRST_REASON_FAILURE 1

#define FINISHER_FAIL 0x3333
#define FINISHER_PASS 0x5555

struct sbiret sbi_call(long ext, long fid, long a0, long a1, long a2)
{
	register long r_a0 __asm__("a0") = a0;
	register long r_a1 __asm__("a1") = a1;
	register long r_a2 __asm__("a2") = a2;
	register long r_a6 __asm__("a6") = fid;
	register long r_a7 __asm__("a7") = ext;
	__asm__ volatile("ecall"
		     : "+r"(r_a0), "+r"(r_a1)
		     : "r"(r_a2), "r"(r_a6), "r"(r_a7)
		     : "memory");
	return (struct sbiret){ r_a0, r_a1 };
}

void sbi_set_timer(uint64_t stime)
{
	sbi_call(SBI_EXT_TIME, 0, (long)stime, 0, 0);
}

void sbi_shutdown(int status)
{
	intr_off();
	uint64_t finisher = bootinfo.test_finisher;
	if (finisher != 0) {
		volatile uint32_t *reg = (volatile uint32_t *)finisher;
		if (status == 0)
			*reg = FINISHER_PASS;
		else
			*reg = ((uint32_t)(status & 0xffff) << 16) | FINISHER_FAIL;
	}
	sbi_call(SBI_EXT_SRST, 0, SRST_SHUTDOWN,
		 status == 0 ? SRST_REASON_NONE : SRST_REASON_FAILURE, 0);
	for (;;) wfi();
}
