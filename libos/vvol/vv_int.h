/*
 * vv_int.h - what the two halves of the virtual volume share: the map
 * (map.c: the exonode tree from chunks to disk sectors) and the cache
 * (cache.c: blocks, reads, write-back).  Not for file systems: vvol.h is
 * the interface.
 */
#ifndef LIBOS_VVOL_VV_INT_H
#define LIBOS_VVOL_VV_INT_H

#include "libos/vvol/vvol.h"

#define VV_NODE_MAGIC 0x444e5656u    /* "VVND" */
#define VV_HDR_ENT    255            /* a node's data entry: struct vv_nodehdr */

/* Data entry VV_HDR_ENT of every map node: what it is, so a misplaced or
 * stale node is refused rather than believed. */
struct vv_nodehdr {
	uint32_t magic;
	uint16_t level;               /* 0: a leaf                                     */
	uint16_t fan;                 /* VV_LEAF_FAN or VV_NODE_FAN                    */
	uint64_t base;                /* the first chunk it covers                     */
};

/* A map node in memory.  Children are known (sector, slot) as soon as
 * their parent is loaded; their own entries are read when first needed. */
struct vv_node {
	uint64_t sector;
	uint16_t slot;
	uint8_t level;
	uint8_t loaded;
	uint32_t count;               /* entries in use                                */
	uint64_t base;
	struct vv_node *parent;
	uint32_t pidx;                /* its entry in the parent                       */
	union {
		struct vv_node *child[VV_NODE_FAN];
		uint64_t phys[VV_LEAF_FAN];   /* 0: not mapped (sector 0 is never data) */
	} u;
};

/* map.c */
int  vv_map_make(struct vvol *v);
int  vv_map_open(struct vvol *v);
void vv_map_free(struct vvol *v);
/* The leaf covering chunk c (loaded), creating the path if create; with
 * create 0, NULL and 0 when no leaf covers it yet.  *err on failure. */
struct vv_node *vv_leaf(struct vvol *v, uint64_t c, int create, int *err);
/* Chunk c's first disk sector (0: not mapped), and its leaf in *leaf (NULL
 * if none).  0 or a negative errno. */
int  vv_lookup(struct vvol *v, uint64_t c, uint64_t *phys, struct vv_node **leaf);
/* Give chunk c disk sectors (it must not have any): its leaf entry, not
 * yet durable.  *phys gets the first sector. */
int  vv_alloc(struct vvol *v, uint64_t c, uint64_t *phys, struct vv_node **leaf);
/* Take the sectors of chunks [c0, c1) away: one request per leaf that
 * maps any of them (the exodisk frees them once the leaf's commit is
 * durable).  A leaf left empty goes only when its parent is to be
 * committed anyway; otherwise it stays, empty, for its chunks' next use
 * (map.c: prune). */
int  vv_free(struct vvol *v, uint64_t c0, uint64_t c1);
/* Commit every changed map node, deepest first. */
int  vv_commit(struct vvol *v);
/* Count chunks and nodes, loading every node (load_node takes as ours
 * each one it finds with changes nobody committed: vvol_adopt). */
int  vv_count(struct vvol *v, uint64_t *chunks, uint64_t *nodes);

static inline uint64_t vv_chunk_of(const struct vvol *v, uint64_t lba)
{
	return lba / v->d.chunk;
}

#endif
