# boot.S - the x86-64 kernel's first instructions.
#
# QEMU's -kernel loads the kernel as a Multiboot (version 1) image: the
# firmware (SeaBIOS) hands over in 32-bit protected mode with paging off,
# EAX = the Multiboot magic and EBX = the physical address of the Multiboot
# information (memory map, command line, the initrd as a module).  QEMU
# refuses a 64-bit ELF there, so the build hands it a 32-bit copy of the
# kernel (objcopy -O elf32-i386, kernel/arch/x86_64/arch.mk); the code is the
# same bytes.  From here: clear .bss, check that the CPU has long mode, build
# page tables that identity-map the first 4 GiB with 2 MiB pages, turn on
# PAE, long mode, paging and no-execute, load a 64-bit GDT, and jump to
# 64-bit code, which calls x86_boot(magic, info) on the boot stack.  vm.c
# replaces these tables with the kernel's own once memory is known.

#include "kernel/arch/x86_64/x86.h"

#define MB_MAGIC    0x1badb002
#define MB_FLAGS    0x00000003      /* modules page-aligned; memory information */

.section .multiboot, "a"
.align 4
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)

.section .text.entry, "ax"
.code32
.globl _start32
_start32:
	cli
	mov %eax, %esi                  # keep the magic and the information pointer
	mov %ebx, %edi
	mov $boot_stack_top, %esp

	# Clear .bss (the page tables below live there; so does the stack, so
	# nothing may be kept on it across this).
	mov %edi, %ebp
	mov $_bss_start, %edi
	mov $_bss_end, %ecx
	sub %edi, %ecx
	shr $2, %ecx
	xor %eax, %eax
	rep stosl
	mov %ebp, %edi

	# Long mode?  CPUID 80000001h, EDX bit 29.
	mov $0x80000000, %eax
	cpuid
	cmp $0x80000001, %eax
	jb no_long_mode
	mov $0x80000001, %eax
	cpuid
	test $(1 << 29), %edx
	jz no_long_mode

	# PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 2 MiB pages.
	mov $boot_pdpt, %eax
	or $(X86_P | X86_RW), %eax
	mov %eax, boot_pml4
	mov $boot_pd, %eax
	or $(X86_P | X86_RW), %eax
	mov $boot_pdpt, %ebx
	mov $4, %ecx
1:	mov %eax, (%ebx)
	add $4096, %eax
	add $8, %ebx
	loop 1b
	mov $boot_pd, %ebx
	xor %eax, %eax
	or $(X86_P | X86_RW | X86_PS), %eax
	xor %edx, %edx                  # high half of each entry
	mov $2048, %ecx
2:	mov %eax, (%ebx)
	mov %edx, 4(%ebx)
	add $0x200000, %eax
	adc $0, %edx
	add $8, %ebx
	loop 2b

	# PAE, then long mode and no-execute in EFER, then paging.
	mov %cr4, %eax
	or $(1 << 5), %eax
	mov %eax, %cr4
	mov $boot_pml4, %eax
	mov %eax, %cr3
	mov $MSR_EFER, %ecx
	rdmsr
	or $(EFER_LME | EFER_NXE), %eax
	wrmsr
	mov %cr0, %eax
	or $((1 << 31) | (1 << 16) | 1), %eax     # PG, WP, PE
	mov %eax, %cr0

	lgdt boot_gdt_ptr
	ljmp $SEG_KCODE, $long_entry

no_long_mode:
	# Nothing to print with yet: say it on the serial port, then stop.
	mov $msg_nolm, %esi
3:	lodsb
	test %al, %al
	jz 4f
	mov $0x3f8, %dx
	out %al, %dx
	jmp 3b
4:	hlt
	jmp 4b

.code64
long_entry:
	mov $SEG_KDATA, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	xor %ax, %ax
	mov %ax, %fs
	mov %ax, %gs
	mov $boot_stack_top, %rsp
	mov %esi, %eax                  # x86_boot_entry(magic, info); 32-bit moves
	mov %edi, %esi                  # zero the upper halves
	mov %eax, %edi
	call x86_boot_entry
5:	hlt
	jmp 5b

.section .rodata
msg_nolm:
	.asciz "exodisk: this CPU has no 64-bit long mode\r\n"

# The boot GDT: null, kernel code (64-bit), kernel data.  gdt.c loads the
# full one (user segments and the TSS) later.
.align 16
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff        # code: present, DPL 0, executable, long mode
	.quad 0x00cf92000000ffff        # data: present, DPL 0, writable
boot_gdt_end:
boot_gdt_ptr:
	.word boot_gdt_end - boot_gdt - 1
	.long boot_gdt

.section .bss
.align 4096
.globl boot_pml4
boot_pml4:
	.space 4096
boot_pdpt:
	.space 4096
boot_pd:
	.space 4 * 4096
.globl boot_stack
boot_stack:
	.space 16384
.globl boot_stack_top
boot_stack_top:
