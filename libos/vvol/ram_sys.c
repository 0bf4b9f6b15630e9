/*
 * ram_sys.c - the guest's answer to "how much memory is free?" for the
 * virtual volume's automatic cache size (vvol_cache_auto in cache.c, where
 * a weak default saying "unknown" serves host programs).  The kernel keeps
 * the count of free pages current in its information page, so asking
 * costs no system call.
 */
#include "libos/exo.h"
#include "libos/vvol/vvol.h"

uint64_t vvol_ram_free(void)
{
	return exo_kinfo()->free_pages * 4096u;
}
