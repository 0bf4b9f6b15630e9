# trapentry.S - every way into the x86-64 kernel from a trap, and the way
# back to user mode.
#
# Interrupts and exceptions: one stub per vector (vectors[] for the IDT)
# pushes a zero where the CPU pushes no error code, then the vector number,
# and joins alltraps.  From user mode the CPU has switched to TSS.rsp0, the
# end of the running process's trap frame (gdt.c), and pushed the user's
# rip, cs, rflags, rsp and ss there; alltraps pushes the general registers
# below them, so the frame in struct proc is complete, moves to the
# process's kernel stack and calls user_trap(tf), which leaves through
# user_return.  From kernel mode (an interrupt while idle, or an exception,
# which is a kernel bug) the same frame is built on the current stack and
# kernel_trap(frame) runs; iretq goes back.
#
# System calls: the syscall instruction (MSR_LSTAR) leaves the user's rip in
# rcx and rflags in r11, with interrupts masked (MSR_FMASK) and the user's
# stack still in rsp.  syscall_entry builds the frame the CPU would have
# built, at the same place, and joins the user path.  The return is the
# same iretq for both, so there is one way out.
#
# struct trapframe (arch.h) fixes the layout: r15 lowest, then r14 .. rax,
# trapno, err, and the CPU's frame.

#include "kernel/arch/x86_64/arch.h"

#define T_SYSCALL 256

.macro VECTOR n
vector\n:
.if (\n == 8) || (\n >= 10 && \n <= 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
.else
	pushq $0
.endif
	pushq $\n
	jmp alltraps
.endm

.macro PUSH_GPRS
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
.endm

.macro POP_GPRS
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
.endm

.section .text
.altmacro
.set i, 0
.rept 256
	VECTOR %i
	.set i, i + 1
.endr

.macro VECADDR n
	.quad vector\n
.endm

.section .rodata
.align 8
.globl vectors
vectors:
.set i, 0
.rept 256
	VECADDR %i
	.set i, i + 1
.endr

.section .text
alltraps:
	testb $3, 24(%rsp)              # the cs the CPU pushed: from user mode?
	jz from_kernel
	PUSH_GPRS                       # rsp was &tf->trapno: this fills the frame
to_user_trap:
	cld
	movq %rsp, %rdi
	movq TF_KERNEL_SP(%rdi), %rsp
	call user_trap                  # leaves through user_return
	ud2

from_kernel:
	PUSH_GPRS                       # the frame on this stack, 16-byte aligned
	cld
	movq %rsp, %rdi
	call kernel_trap
	POP_GPRS
	addq $16, %rsp                  # trapno, err
	iretq

.globl syscall_entry
syscall_entry:
	movq %rsp, syscall_user_rsp(%rip)
	movq tss+4(%rip), %rsp          # TSS.rsp0: the end of the running process's frame
	pushq $SEG_UDATA                # ss
	pushq syscall_user_rsp(%rip)    # rsp
	pushq %r11                      # rflags
	pushq $SEG_UCODE                # cs
	pushq %rcx                      # rip
	pushq $0                        # err
	pushq $T_SYSCALL
	PUSH_GPRS
	jmp to_user_trap

# user_return(struct trapframe *tf): load the user's registers and iretq.
.globl user_return
user_return:
	movq %rdi, %rsp
	POP_GPRS
	addq $16, %rsp
	iretq

.section .bss
.align 8
syscall_user_rsp:
	.quad 0
