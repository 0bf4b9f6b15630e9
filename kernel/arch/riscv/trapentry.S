# trapentry.S - the kernel's trap vector (stvec).
#
# sscratch tells where a trap came from: while a process runs in user mode it
# holds the address of that process's trap frame; while the kernel runs it
# holds 0.  From user mode we save every user register into the trap frame,
# switch to the process's kernel stack and call user_trap(), which leaves via
# user_return.  From kernel mode (only interrupts while idle or profiling: the
# kernel runs with interrupts off and never faults on user memory) we save the
# caller-saved registers on the current stack and call kernel_trap().
# Offsets follow struct trapframe in proc.h.

.section .text
.globl trap_vector
.align 4
trap_vector:
	csrrw t0, sscratch, t0
	beqz t0, from_kernel
	sd ra, 0(t0)
	sd sp, 8(t0)
	sd gp, 16(t0)
	sd tp, 24(t0)
	sd t1, 40(t0)
	sd t2, 48(t0)
	sd s0, 56(t0)
	sd s1, 64(t0)
	sd a0, 72(t0)
	sd a1, 80(t0)
	sd a2, 88(t0)
	sd a3, 96(t0)
	sd a4, 104(t0)
	sd a5, 112(t0)
	sd a6, 120(t0)
	sd a7, 128(t0)
	sd s2, 136(t0)
	sd s3, 144(t0)
	sd s4, 152(t0)
	sd s5, 160(t0)
	sd s6, 168(t0)
	sd s7, 176(t0)
	sd s8, 184(t0)
	sd s9, 192(t0)
	sd s10, 200(t0)
	sd s11, 208(t0)
	sd t3, 216(t0)
	sd t4, 224(t0)
	sd t5, 232(t0)
	sd t6, 240(t0)
	csrr t1, sscratch
	sd t1, 32(t0)
	csrw sscratch, zero
	csrr t1, sepc
	sd t1, 248(t0)
	ld sp, 256(t0)
	ld tp, 264(t0)
	mv a0, t0
	call user_trap
	# user_trap never returns here; it calls user_return.
1:	j 1b

# user_return(struct trapframe *tf): load the user registers and sret.
# The caller has set sstatus.SPP=0 and SPIE=1.
.globl user_return
user_return:
	csrw sscratch, a0
	ld t1, 248(a0)
	csrw sepc, t1
	ld ra, 0(a0)
	ld sp, 8(a0)
	ld gp, 16(a0)
	ld tp, 24(a0)
	ld t0, 32(a0)
	ld t1, 40(a0)
	ld t2, 48(a0)
	ld s0, 56(a0)
	ld s1, 64(a0)
	ld a1, 80(a0)
	ld a2, 88(a0)
	ld a3, 96(a0)
	ld a4, 104(a0)
	ld a5, 112(a0)
	ld a6, 120(a0)
	ld a7, 128(a0)
	ld s2, 136(a0)
	ld s3, 144(a0)
	ld s4, 152(a0)
	ld s5, 160(a0)
	ld s6, 168(a0)
	ld s7, 176(a0)
	ld s8, 184(a0)
	ld s9, 192(a0)
	ld s10, 200(a0)
	ld s11, 208(a0)
	ld t3, 216(a0)
	ld t4, 224(a0)
	ld t5, 232(a0)
	ld t6, 240(a0)
	ld a0, 72(a0)
	sret

from_kernel:
	csrrw t0, sscratch, t0        # restore t0; sscratch is 0 again
	addi sp, sp, -128
	sd ra, 0(sp)
	sd t0, 8(sp)
	sd t1, 16(sp)
	sd t2, 24(sp)
	sd a0, 32(sp)
	sd a1, 40(sp)
	sd a2, 48(sp)
	sd a3, 56(sp)
	sd a4, 64(sp)
	sd a5, 72(sp)
	sd a6, 80(sp)
	sd a7, 88(sp)
	sd t3, 96(sp)
	sd t4, 104(sp)
	sd t5, 112(sp)
	sd t6, 120(sp)
	mv a0, sp                     # kernel_trap(saved registers, interrupted s0)
	mv a1, s0
	call kernel_trap
	ld ra, 0(sp)
	ld t0, 8(sp)
	ld t1, 16(sp)
	ld t2, 24(sp)
	ld a0, 32(sp)
	ld a1, 40(sp)
	ld a2, 48(sp)
	ld a3, 56(sp)
	ld a4, 64(sp)
	ld a5, 72(sp)
	ld a6, 80(sp)
	ld a7, 88(sp)
	ld t3, 96(sp)
	ld t4, 104(sp)
	ld t5, 112(sp)
	ld t6, 120(sp)
	addi sp, sp, 128
	sret
