/*
 * kalloc.h - the physical page allocator.  Pages are 4096 bytes, zeroed when
 * handed out, and reference-counted: a page shared between an address space
 * and an in-flight disk request is freed only when both are done with it.
 */
#ifndef KALLOC_H
#define KALLOC_H

#include <stdint.h>
#include <stddef.h>

void  kalloc_init(uint64_t start, uint64_t end);
void  kalloc_reserve(uint64_t start, uint64_t end);   /* before kalloc_init only */
void *kalloc(void);                         /* one zeroed page, or NULL */
void *kalloc_contig(size_t npages);         /* physically contiguous, zeroed, or NULL */
void  kfree(void *page);                    /* drop one reference */
void  kfree_contig(void *pages, size_t npages);
void  kref(void *page);                     /* take one more reference */
int   krefcount(void *page);
uint64_t kalloc_free_pages(void);
uint64_t kalloc_total_pages(void);
void  kalloc_export(volatile uint64_t *counter);   /* keep *counter equal to the free-page count */

#endif
