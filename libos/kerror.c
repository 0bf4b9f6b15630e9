/*
 * kerror.c - messages and errno values for kernel error codes.  The
 * block-layer and exodisk tables come from their own headers' owners
 * (blk_strerror, ed_strerror) once those subsystems are linked in.
 */
#include <errno.h>
#include <stdio.h>
#include "libos/exo.h"
#include "kernel/uapi/errno.h"
#include "drivers/blk.h"

static const char *general[] = {
	[-K_E_NOSYS]  = "unknown system call",
	[-K_E_FAULT]  = "bad address",
	[-K_E_INVAL]  = "invalid argument",
	[-K_E_NOMEM]  = "out of memory",
	[-K_E_NOENT]  = "no such program",
	[-K_E_NOEXEC] = "not an executable",
	[-K_E_NOPROC] = "too many processes",
	[-K_E_CHILD]  = "no such child process",
	[-K_E_2BIG]   = "argument list too long",
	[-K_E_NAMETOOLONG] = "name too long",
	[-K_E_PERM]   = "operation not permitted",
	[-K_E_INTR]   = "interrupted",
	[-K_E_BUSY]   = "resource busy",
	[-K_E_BADH]   = "no such handle",
	[-K_E_PIPE]   = "the pipe has no reader",
	[-K_E_SRCH]   = "no such process or process group",
	[-K_E_AGAIN]  = "it would have to wait",
};

static const char *blk[] = {
	[-BLK_E_RANGE - 64]   = "sector range past the end of the disk",
	[-BLK_E_LEN - 64]     = "length zero or not a multiple of the sector size",
	[-BLK_E_ALIGN - 64]   = "buffer segments do not match the transfer length",
	[-BLK_E_QFULL - 64]   = "disk queue full",
	[-BLK_E_UNIT - 64]    = "no such disk unit",
	[-BLK_E_IO - 64]      = "disk I/O error",
	[-BLK_E_UNSUPP - 64]  = "operation not supported by the disk",
	[-BLK_E_OP - 64]      = "unknown disk operation",
	[-BLK_E_TOOBIG - 64]  = "request too large",
	[-BLK_E_FAULT - 64]   = "buffer outside the caller's memory",
	[-BLK_E_PERM - 64]    = "raw disk access not enabled at boot",
	[-BLK_E_ABORTED - 64] = "request aborted",
	[-BLK_E_INVAL - 64]   = "invalid block request or setting",
	[-BLK_E_MEDIUM - 64]  = "medium error: the disk cannot read or write that block",
	[-BLK_E_NOTREADY - 64] = "disk not ready (no medium, or it needs attention)",
	[-BLK_E_PROTECT - 64] = "disk is write-protected",
};

/* Provided by the exodisk client library when it is linked (weak here). */
__attribute__((weak)) const char *ed_strerror(long code) { (void)code; return NULL; }

const char *exo_strerror(long code)
{
	static char unknown[40];
	if (code >= 0) return "success";
	long i = -code;
	if (i < (long)(sizeof general / sizeof general[0]) && general[i]) return general[i];
	if (i >= 64 && i - 64 < (long)(sizeof blk / sizeof blk[0]) && blk[i - 64]) return blk[i - 64];
	const char *m = ed_strerror(code);
	if (m) return m;
	snprintf(unknown, sizeof unknown, "error %ld", code);
	return unknown;
}

int exo_errno(long code)
{
	switch (code) {
	case K_E_NOSYS: return ENOSYS;
	case K_E_FAULT: case BLK_E_FAULT: return EFAULT;
	case K_E_INVAL: return EINVAL;
	case K_E_NOMEM: return ENOMEM;
	case K_E_NOENT: return ENOENT;
	case K_E_NOEXEC: return ENOEXEC;
	case K_E_NOPROC: return EAGAIN;
	case K_E_CHILD: return ECHILD;
	case K_E_2BIG: return E2BIG;
	case K_E_NAMETOOLONG: return ENAMETOOLONG;
	case K_E_PERM: case BLK_E_PERM: return EPERM;
	case K_E_INTR: return EINTR;
	case K_E_BUSY: return EBUSY;
	case K_E_BADH: return EBADF;
	case K_E_PIPE: return EPIPE;
	case K_E_SRCH: return ESRCH;
	case K_E_AGAIN: return EAGAIN;
	case BLK_E_QFULL: return EAGAIN;
	case BLK_E_PROTECT: return EROFS;
	case BLK_E_RANGE: case BLK_E_LEN: case BLK_E_ALIGN: case BLK_E_OP: case BLK_E_UNIT: return EINVAL;
	default: return EIO;
	}
}
