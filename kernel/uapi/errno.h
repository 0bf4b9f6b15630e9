/*
 * errno.h - the kernel's error codes, shared with user space.
 *
 * Every system call returns a non-negative result or a negative error code.
 * The code space is split so that each subsystem's errors stay distinct:
 *    -1 ..  -63   general system-call errors (this file)
 *   -64 .. -127   block layer and drivers   (drivers/blk.h, BLK_E_*)
 *  -128 .. -255   the exodisk               (kernel/uapi/exodisk.h, ED_E_*)
 * libos/kerror.c turns any of them into a message.
 */
#ifndef UAPI_ERRNO_H
#define UAPI_ERRNO_H

#define K_E_NOSYS     (-1)   /* unknown system call number                      */
#define K_E_FAULT     (-2)   /* a pointer or length names memory the caller lacks */
#define K_E_INVAL     (-3)   /* an argument is out of range                      */
#define K_E_NOMEM     (-4)   /* out of physical memory or address space          */
#define K_E_NOENT     (-5)   /* no such program in the initrd                     */
#define K_E_NOEXEC    (-6)   /* program is not a valid ELF executable for this CPU */
#define K_E_NOPROC    (-7)   /* process table full                               */
#define K_E_CHILD     (-8)   /* no such child to wait for                        */
#define K_E_2BIG      (-9)   /* argument/environment list too long               */
#define K_E_NAMETOOLONG (-10) /* a string argument is longer than allowed        */
#define K_E_PERM      (-11)  /* operation not permitted                          */
#define K_E_INTR      (-12)  /* interrupted (the process is being killed)        */
#define K_E_BUSY      (-13)  /* the resource is in use (a profile is already running) */
#define K_E_BADH      (-14)  /* not an open handle of the kind the call needs     */
#define K_E_PIPE      (-15)  /* the pipe has no reader left                       */
#define K_E_SRCH      (-16)  /* no such process or process group                  */
#define K_E_AGAIN     (-17)  /* it would have to wait, and was asked not to (H_NOWAIT) */

#define K_E_FIRST_BLK (-64)
#define K_E_FIRST_ED  (-128)

#endif
