/*
 * share_host.c - shared segments for host programs (share.h): areas in the
 * host process's own memory, found by name, so that two mounts of one file
 * system in a host test share them as two guest processes would.  There
 * is one thread, so a lock held by another mount can never be let go:
 * waiting for it is a bug in the test (-EDEADLK).  share_host_pid names
 * the "process" that attaches and locks; share_host_kill does to an area
 * what the kernel does when a process dies holding its lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/share.h"

uint32_t share_host_pid = 1;

struct hseg {
	struct hseg *next;
	uint8_t name[SHSEG_NAME];
	uint32_t sharers;
	void *mem;                   /* SHSEG_MAX_PAGES pages: never moves */
};
static struct hseg *segs;

static struct hseg *find(const void *mem)
{
	struct hseg *h = segs;
	while (h != NULL && h->mem != mem)
		h = h->next;
	return h;
}

int shseg_attach(const uint8_t name[SHSEG_NAME], uint32_t npages, void **seg)
{
	struct hseg *h = segs;
	while (h != NULL && memcmp(h->name, name, SHSEG_NAME) != 0)
		h = h->next;
	if (h == NULL) {
		if ((h = calloc(1, sizeof *h)) == NULL ||
		    (h->mem = calloc(SHSEG_MAX_PAGES, 4096)) == NULL) {
			free(h);
			return -ENOMEM;
		}
		memcpy(h->name, name, SHSEG_NAME);
		((struct shseg_hdr *)h->mem)->npages = npages;
		h->next = segs;
		segs = h;
	}
	((struct shseg_hdr *)h->mem)->sharers = ++h->sharers;
	*seg = h->mem;
	return 0;
}

int shseg_grow(void *seg, uint32_t npages)
{
	struct shseg_hdr *k = seg;
	if (npages > k->npages)
		k->npages = npages;
	return 0;
}

void shseg_detach(void *seg)
{
	struct hseg *h = find(seg), **pp = &segs;
	if (h == NULL || --h->sharers > 0) {
		if (h != NULL)
			((struct shseg_hdr *)h->mem)->sharers = h->sharers;
		return;
	}
	while (*pp != h)
		pp = &(*pp)->next;
	*pp = h->next;
	free(h->mem);
	free(h);
}

int shseg_wait(uint32_t *word, uint32_t value)
{
	return -EDEADLK;
}

void shseg_wake(uint32_t *word)
{
}

void shseg_yield(void)
{
}

uint32_t shseg_pid(void)
{
	return share_host_pid;
}

void share_host_kill(uint32_t pid)
{
	for (struct hseg *h = segs; h != NULL; h = h->next) {
		struct shseg_hdr *k = h->mem;
		if ((k->lock & SHSEG_LOCK_PID) == pid)
			k->lock = SHSEG_LOCK_DEAD;
	}
}
