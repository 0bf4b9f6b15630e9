# swtch.S - switch kernel threads: save callee-saved registers into *a0 and
# load them from *a1.  Every process's kernel thread and the scheduler meet here.
# Also the floating-point save/restore used when the scheduler switches processes.

.section .text
.globl swtch
swtch:
	sd ra, 0(a0)
	sd sp, 8(a0)
	sd s0, 16(a0)
	sd s1, 24(a0)
	sd s2, 32(a0)
	sd s3, 40(a0)
	sd s4, 48(a0)
	sd s5, 56(a0)
	sd s6, 64(a0)
	sd s7, 72(a0)
	sd s8, 80(a0)
	sd s9, 88(a0)
	sd s10, 96(a0)
	sd s11, 104(a0)

	ld ra, 0(a1)
	ld sp, 8(a1)
	ld s0, 16(a1)
	ld s1, 24(a1)
	ld s2, 32(a1)
	ld s3, 40(a1)
	ld s4, 48(a1)
	ld s5, 56(a1)
	ld s6, 64(a1)
	ld s7, 72(a1)
	ld s8, 80(a1)
	ld s9, 88(a1)
	ld s10, 96(a1)
	ld s11, 104(a1)
	ret

# The kernel is built without floating point, so these are written with
# .option arch to allow the F/D instructions here only.
.option push
.option arch, +d
.globl fp_save
fp_save:
	fsd f0, 0(a0)
	fsd f1, 8(a0)
	fsd f2, 16(a0)
	fsd f3, 24(a0)
	fsd f4, 32(a0)
	fsd f5, 40(a0)
	fsd f6, 48(a0)
	fsd f7, 56(a0)
	fsd f8, 64(a0)
	fsd f9, 72(a0)
	fsd f10, 80(a0)
	fsd f11, 88(a0)
	fsd f12, 96(a0)
	fsd f13, 104(a0)
	fsd f14, 112(a0)
	fsd f15, 120(a0)
	fsd f16, 128(a0)
	fsd f17, 136(a0)
	fsd f18, 144(a0)
	fsd f19, 152(a0)
	fsd f20, 160(a0)
	fsd f21, 168(a0)
	fsd f22, 176(a0)
	fsd f23, 184(a0)
	fsd f24, 192(a0)
	fsd f25, 200(a0)
	fsd f26, 208(a0)
	fsd f27, 216(a0)
	fsd f28, 224(a0)
	fsd f29, 232(a0)
	fsd f30, 240(a0)
	fsd f31, 248(a0)
	frcsr t0
	sd t0, 256(a0)
	ret

.globl fp_restore
fp_restore:
	fld f0, 0(a0)
	fld f1, 8(a0)
	fld f2, 16(a0)
	fld f3, 24(a0)
	fld f4, 32(a0)
	fld f5, 40(a0)
	fld f6, 48(a0)
	fld f7, 56(a0)
	fld f8, 64(a0)
	fld f9, 72(a0)
	fld f10, 80(a0)
	fld f11, 88(a0)
	fld f12, 96(a0)
	fld f13, 104(a0)
	fld f14, 112(a0)
	fld f15, 120(a0)
	fld f16, 128(a0)
	fld f17, 136(a0)
	fld f18, 144(a0)
	fld f19, 152(a0)
	fld f20, 160(a0)
	fld f21, 168(a0)
	fld f22, 176(a0)
	fld f23, 184(a0)
	fld f24, 192(a0)
	fld f25, 200(a0)
	fld f26, 208(a0)
	fld f27, 216(a0)
	fld f28, 224(a0)
	fld f29, 232(a0)
	fld f30, 240(a0)
	fld f31, 248(a0)
	ld t0, 256(a0)
	fscsr t0
	ret
.option pop
