/*
 * edc_err.c - what the exodisk's error codes mean: a message for each
 * (used by exo_strerror in kerror.c, which finds ed_strerror here), and the
 * POSIX errno a library file system should turn each into.
 *
 * The errno mapping is a policy of this library, not of the kernel: a
 * libFS is free to handle a code itself first (ED_E_NOTCACHED means "read
 * it in and retry", ED_E_CACHEDIRTY "write something back and retry") and
 * call edc_errno only for what it cannot recover from.
 */
#include <errno.h>
#include <stddef.h>
#include "libos/edc.h"
#include "kernel/uapi/errno.h"

static const char *const msg[] = {
	[-ED_E_OP - 128]          = "unknown exodisk operation",
	[-ED_E_UNIT - 128]        = "no exodisk on that disk unit",
	[-ED_E_ARG - 128]         = "malformed exodisk argument",
	[-ED_E_ALIGN - 128]       = "misaligned length or offset",
	[-ED_E_TOOBIG - 128]      = "length or count too large",
	[-ED_E_RANGE - 128]       = "sectors not covered by the extent or exonode",
	[-ED_E_CAP - 128]         = "wrong capability",
	[-ED_E_ALLOCATED - 128]   = "sectors already allocated",
	[-ED_E_NOTCACHED - 128]   = "header or exonode not in the exodisk cache",
	[-ED_E_BUSY - 128]        = "entry being read in or written back",
	[-ED_E_IOBUSY - 128]      = "I/O in flight to those sectors",
	[-ED_E_CACHEDIRTY - 128]  = "exodisk cache full of dirty entries",
	[-ED_E_CACHEFULL - 128]   = "exodisk cache full",
	[-ED_E_QUOTA - 128]       = "exodisk cache quota reached",
	[-ED_E_NOTBOUND - 128]    = "no header or exonode at that sector",
	[-ED_E_KIND - 128]        = "sector holds the other kind of object",
	[-ED_E_BADMAC - 128]      = "exodisk metadata failed its integrity check",
	[-ED_E_STALE - 128]       = "exodisk metadata is an old version",
	[-ED_E_CORRUPT - 128]     = "exodisk metadata malformed",
	[-ED_E_SLOT - 128]        = "bad exonode slot",
	[-ED_E_XNSIZE - 128]      = "bad exonode length",
	[-ED_E_ENTRY - 128]       = "bad exonode entry",
	[-ED_E_ENTTYPE - 128]     = "exonode entry of the wrong type",
	[-ED_E_XNFULL - 128]      = "exonode full",
	[-ED_E_NOTEMPTY - 128]    = "descendant exonode not empty",
	[-ED_E_CLEAN - 128]       = "nothing to write back",
	[-ED_E_NOIO - 128]        = "too many exodisk operations in flight",
	[-ED_E_NOPROXY - 128]     = "no such proxy exonode",
	[-ED_E_PROXY - 128]       = "not allowed on a proxy exonode",
	[-ED_E_NOTSUBSET - 128]   = "proxy ranges not covered by the origin",
	[-ED_E_NOMEM - 128]       = "exodisk out of kernel memory",
	[-ED_E_NOMAP - 128]       = "no exonode map window",
	[-ED_E_NOSPACE - 128]     = "disk full (the rest is kept for the exodisk's metadata)",
	[-ED_E_SHUTDOWN - 128]    = "exodisk shut down",
	[-ED_E_DEPTH - 128]       = "descendant exonodes nested too deeply",
	[-ED_E_STALEREF - 128]    = "descendant exonode is gone",
	[-ED_E_NOCLIENT - 128]    = "too many processes using the exodisk",
	[-ED_E_DEALLOC - 128]     = "object deallocated",
	[-ED_E_FORMAT - 128]      = "no valid exodisk on the unit",
	[-ED_E_EXITING - 128]     = "operation dropped at process exit",
	[-ED_E_VERSION - 128]     = "exodisk of another format version",
};

const char *ed_strerror(long code)
{
	if (code > ED_E_OP || code < ED_E_LAST)
		return NULL;
	return msg[-code - 128];
}

int edc_errno(int64_t code)
{
	switch (code) {
	case ED_E_CAP:
		return EACCES;
	case ED_E_ALLOCATED: case ED_E_CACHEDIRTY: case ED_E_CACHEFULL: case ED_E_QUOTA:
	case ED_E_XNFULL: case ED_E_NOSPACE:
		return ENOSPC;
	case ED_E_BUSY: case ED_E_IOBUSY:
		return EBUSY;
	case ED_E_NOIO: case ED_E_NOCLIENT: case ED_E_NOTCACHED:
		return EAGAIN;
	case ED_E_NOMEM: case ED_E_NOMAP:
		return ENOMEM;
	case ED_E_NOTEMPTY:
		return ENOTEMPTY;
	case ED_E_UNIT: case ED_E_FORMAT: case ED_E_SHUTDOWN: case ED_E_VERSION:
		return ENODEV;
	case ED_E_OP: case ED_E_ARG: case ED_E_ALIGN: case ED_E_TOOBIG: case ED_E_XNSIZE:
		return EINVAL;
	case ED_E_PROXY: case ED_E_NOTSUBSET:
		return EPERM;
	case ED_E_NOPROXY:
		return ENOENT;
	case ED_E_EXITING: case K_E_INTR:
		return EINTR;
	case K_E_FAULT:
		return EFAULT;
	case K_E_NOSYS:
		return ENOSYS;
	case K_E_NOMEM:
		return ENOMEM;
	default:
		/* Integrity failures, dangling references and device errors: the
		 * data cannot be trusted or reached. */
		return EIO;
	}
}
