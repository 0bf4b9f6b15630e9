# crt0.S - where every application starts.  The kernel enters here in user
# mode with a0 = argc, a1 = argv, a2 = envp and sp on the stack holding them.

.section .text.start
.globl _start
_start:
	.option push
	.option norelax
	la gp, __global_pointer$
	.option pop
	la t0, __tls_base
	mv tp, t0
	call libos_start
1:	j 1b
