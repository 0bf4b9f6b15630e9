# swtch.S - switch kernel threads: save the callee-saved registers, the
# stack pointer and the resume address into *from (rdi), load them from *to
# (rsi) and resume there.  Every process's kernel thread and the scheduler
# meet here (struct context in arch.h: rip, rsp, rbx, rbp, r12-r15).

.section .text
.globl swtch
swtch:
	movq (%rsp), %rax               # where the caller resumes
	leaq 8(%rsp), %rcx              # its stack once returned
	movq %rax, 0(%rdi)
	movq %rcx, 8(%rdi)
	movq %rbx, 16(%rdi)
	movq %rbp, 24(%rdi)
	movq %r12, 32(%rdi)
	movq %r13, 40(%rdi)
	movq %r14, 48(%rdi)
	movq %r15, 56(%rdi)

	movq 8(%rsi), %rsp
	movq 16(%rsi), %rbx
	movq 24(%rsi), %rbp
	movq 32(%rsi), %r12
	movq 40(%rsi), %r13
	movq 48(%rsi), %r14
	movq 56(%rsi), %r15
	jmp *0(%rsi)
