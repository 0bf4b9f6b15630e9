# entry.S - the kernel's first instructions.  OpenSBI jumps here in S-mode
# with a0 = hart id and a1 = the device tree's physical address, paging off.
# Only the boot hart arrives (OpenSBI keeps the others stopped), so one boot
# stack suffices; secondary harts would be started later through SBI HSM.

.section .text.entry
.globl _start
_start:
	la sp, boot_stack_top
	# Clear .bss: the C code assumes zeroed globals.
	la t0, _bss_start
	la t1, _bss_end
1:	bgeu t0, t1, 2f
	sd zero, 0(t0)
	addi t0, t0, 8
	j 1b
2:	call riscv_boot
3:	wfi
	j 3b

.section .bss
.align 12
.globl boot_stack
boot_stack:
	.space 16384
.globl boot_stack_top
boot_stack_top:
