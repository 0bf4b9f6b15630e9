/*
 * layout.h - the virtual address space every application sees.
 *
 * Sv39 gives 256 GiB of user-half addresses.  The kernel keeps the low 4 GiB
 * for itself (devices, kernel stacks, and RAM identity-mapped at 0x80000000),
 * mapped without the U bit in every address space, so a trap or system call
 * never switches page tables.  Applications live above 4 GiB:
 *
 *   USER_BASE   program text, data, bss, then the heap growing up (sbrk)
 *   USHARED     read-only pages the kernel exports (see below)
 *   USTACK_TOP  the user stack grows down from here
 */
#ifndef UAPI_LAYOUT_H
#define UAPI_LAYOUT_H

#define USER_BASE        0x0000000100000000ull   /* 4 GiB: programs are linked here     */
#define UHEAP_LIMIT      0x0000002000000000ull   /* the heap may not grow past 128 GiB  */
#define USHARED          0x0000002000000000ull   /* exported kernel state, read-only    */
#define USTACK_TOP       0x0000003f00000000ull
#define USTACK_SIZE      (256ull * 1024)
#define USER_TOP         0x0000004000000000ull   /* end of the Sv39 lower half          */

/*
 * The exported region.  Each piece is mapped read-only (R, U) into every
 * process at creation, except the exonode maps which ED_OP_EXONODE_MAP
 * installs per process, and the free maps, mapped page by page as a process
 * first reads them.  Reading any of them costs no system call.
 */
#define UKINFO           (USHARED + 0x00000000ull)   /* struct kinfo (kinfo.h), one page  */
#define UPROCS           (USHARED + 0x00001000ull)   /* struct kproc[KPROC_SLOTS] (proc.h), one page */
#define UDISKQ(unit)     (USHARED + 0x00100000ull + (unsigned long long)(unit) * 0x10000ull)
                                                     /* struct blk_export per unit (blkexport.h) */
#define UXNMAP_BASE      (USHARED + 0x400000000ull)  /* ED_OP_EXONODE_MAP windows (16 GiB)   */
#define UXNMAP_SIZE      0x400000000ull
#define UINITRD          (USHARED + 0x800000000ull)  /* the initrd, read-only, once a process
                                                        asks (SYS_initrd_map); up to 1 GiB */
#define UINITRD_SIZE     0x40000000ull
/* The exodisk free map of each unit, one bit per sector: an 8 GiB window
 * each (units up to 2^36 sectors, 32 TiB), 64 GiB for the 8 units, ending
 * below the stack.  Pages are mapped when first read (a page that is all
 * free or all allocated is one shared page). */
#define UFREEMAP_SLOT    0x200000000ull
#define UFREEMAP_BASE    (USHARED + 0x840000000ull)   /* after the initrd */
#define UFREEMAP(unit)   (UFREEMAP_BASE + (unsigned long long)(unit) * UFREEMAP_SLOT)
#define UFREEMAP_MAX_SECTORS (UFREEMAP_SLOT * 8)
#define USHSEG_SLOT      0x200000ull                 /* shared segments (shseg.h): 2 MiB each, */
#define USHSEG(i)        (USHARED + 0x40000000ull + (unsigned long long)(i) * USHSEG_SLOT)
                                                     /* SHSEG_MAX of them, below the exonode maps */

#endif
