# crt0.S - where every x86-64 application starts.  The kernel enters here
# in user mode with rdi = argc, rsi = argv, rdx = envp and rsp 16-byte
# aligned on the stack holding them; libos_start(argc, argv, envp) never
# returns (it calls exit).

.section .text.start, "ax"
.globl _start
_start:
	xorl %ebp, %ebp                 # the outermost frame: a backtrace stops here
	call libos_start
1:	ud2
	jmp 1b
