/*
 * virtqueue.c - split virtqueues, the driver's side (see virtqueue.h).
 *
 * Free descriptors form a list threaded through the driver's private
 * next_free[] array; a chain in use is linked through the same array, so
 * freeing it never trusts what the device may have left in the shared
 * descriptor table.  New chains go into the available ring at once but
 * become visible only when vq_publish() advances avail->idx, so a driver can
 * offer a batch and notify the device once.
 *
 * Ordering: the device reads descriptors and ring entries after it sees the
 * new avail->idx, and writes a used entry before it advances used->idx, so
 * the driver fences between filling and publishing, and between reading
 * used->idx and reading the entry.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "drivers/virtqueue.h"

static inline void vq_fence(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static size_t avail_bytes(uint16_t size)
{
	return 4 + 2 * (size_t)size + 2;            /* flags, idx, ring, used_event */
}

static size_t used_offset(uint16_t size)
{
	size_t end = 16 * (size_t)size + avail_bytes(size);
	return (end + 3) & ~(size_t)3;              /* the used ring is 4-byte aligned */
}

size_t vq_ring_bytes(uint16_t size)
{
	return used_offset(size) + 4 + 8 * (size_t)size + 2;   /* flags, idx, ring, avail_event */
}

int vq_init(struct virtq *vq, uint16_t size, void *ring, struct vq_desc *itab, uint32_t itab_len)
{
	if (size == 0 || size > VQ_MAX_SIZE || (size & (size - 1)) != 0 ||
	    ring == NULL || ((uintptr_t)ring & 15) != 0 || (itab != NULL && itab_len < 2))
		return VQ_E_INVAL;
	__builtin_memset(vq, 0, sizeof(*vq));
	__builtin_memset(ring, 0, vq_ring_bytes(size));
	vq->size = size;
	vq->desc = ring;
	vq->avail = (void *)((uint8_t *)ring + 16 * (size_t)size);
	vq->used = (void *)((uint8_t *)ring + used_offset(size));
	vq->itab = itab;
	vq->itab_len = itab != NULL ? itab_len : 0;
	for (uint16_t i = 0; i < size; i++)
		vq->next_free[i] = (uint16_t)(i + 1);
	vq->free_head = 0;
	vq->nfree = size;
	return 0;
}

uint32_t vq_max_chain(const struct virtq *vq)
{
	/* The spec limits any chain, indirect or not, to the queue size. */
	if (vq->itab != NULL && vq->itab_len < vq->size)
		return vq->itab_len;
	return vq->size;
}

static uint16_t take_desc(struct virtq *vq)
{
	uint16_t d = vq->free_head;
	vq->free_head = vq->next_free[d];
	vq->nfree--;
	return d;
}

int vq_add(struct virtq *vq, const struct vq_buf *b, uint32_t n, void *token)
{
	if (n == 0 || token == NULL || n > vq_max_chain(vq))
		return VQ_E_INVAL;
	bool writable = false;
	for (uint32_t i = 0; i < n; i++) {
		if (b[i].len == 0)
			return VQ_E_INVAL;
		if (b[i].dev_writes)
			writable = true;
		else if (writable)
			return VQ_E_INVAL;      /* readable after writable: the spec forbids it */
	}
	bool indirect = vq->itab != NULL && n > 1;
	if ((indirect ? 1 : n) > vq->nfree)
		return VQ_E_FULL;

	uint16_t head;
	if (indirect) {
		head = take_desc(vq);
		struct vq_desc *t = vq->itab + (size_t)head * vq->itab_len;
		for (uint32_t i = 0; i < n; i++) {
			t[i].addr = b[i].addr;
			t[i].len = b[i].len;
			t[i].flags = (uint16_t)((b[i].dev_writes ? VQ_DESC_F_WRITE : 0) |
			                        (i + 1 < n ? VQ_DESC_F_NEXT : 0));
			t[i].next = (uint16_t)(i + 1 < n ? i + 1 : 0);
		}
		vq->desc[head].addr = (uint64_t)(uintptr_t)t;
		vq->desc[head].len = n * (uint32_t)sizeof(struct vq_desc);
		vq->desc[head].flags = VQ_DESC_F_INDIRECT;
		vq->desc[head].next = 0;
		vq->chain_len[head] = 1;
	} else {
		head = take_desc(vq);
		uint16_t d = head;
		for (uint32_t i = 0; i < n; i++) {
			if (i > 0) {
				uint16_t nd = take_desc(vq);
				vq->desc[d].flags |= VQ_DESC_F_NEXT;
				vq->desc[d].next = nd;
				vq->next_free[d] = nd;      /* our own copy of the link */
				d = nd;
			}
			vq->desc[d].addr = b[i].addr;
			vq->desc[d].len = b[i].len;
			vq->desc[d].flags = b[i].dev_writes ? VQ_DESC_F_WRITE : 0;
			vq->desc[d].next = 0;
		}
		vq->chain_len[head] = (uint16_t)n;
	}
	vq->token[head] = token;
	vq->avail->ring[vq->avail_idx & (vq->size - 1)] = head;
	vq->avail_idx++;
	vq->nchains++;
	return 0;
}

bool vq_publish(struct virtq *vq)
{
	vq_fence();                       /* descriptors and ring entries first */
	vq->avail->idx = vq->avail_idx;
	vq_fence();                       /* then look at what the device asked for */
	return (vq->used->flags & VQ_USED_F_NO_NOTIFY) == 0;
}

void *vq_get(struct virtq *vq, uint32_t *len)
{
	for (;;) {
		if (vq->used->idx == vq->last_used)
			return NULL;
		vq_fence();                   /* the entry was written before the index */
		volatile struct vq_used_elem *e = &vq->used->ring[vq->last_used & (vq->size - 1)];
		uint32_t id = e->id, n = e->len;
		vq->last_used++;
		if (id >= vq->size || vq->token[id] == NULL) {
			vq->bad_used++;           /* not a chain we offered: ignore it */
			continue;
		}
		void *token = vq->token[id];
		vq->token[id] = NULL;
		/* Give the chain's descriptors back, following our own links. */
		uint16_t d = (uint16_t)id;
		for (uint16_t k = vq->chain_len[id]; k > 0; k--) {
			uint16_t next = vq->next_free[d];
			vq->next_free[d] = vq->free_head;
			vq->free_head = d;
			vq->nfree++;
			d = next;
		}
		vq->nchains--;
		if (len != NULL)
			*len = n;
		return token;
	}
}

void vq_set_interrupts(struct virtq *vq, bool on)
{
	vq->avail->flags = on ? 0 : VQ_AVAIL_F_NO_INTERRUPT;
	vq_fence();
}
