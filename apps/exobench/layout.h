/*
 * layout.h - where the small-file organizations put each file (org.h):
 * groups of `group` files, each group one sector (the Exonode
 * organization's block of exonodes) followed by the group's data, file
 * after file.  Portable: the Linux side's raw-device run
 * (tools/linux/lxbench.c) places its files the same way.
 */
#ifndef APPS_EXOBENCH_LAYOUT_H
#define APPS_EXOBENCH_LAYOUT_H

#include <stdint.h>

struct layout {
	uint64_t start;         /* first sector of the area                    */
	int nfiles;
	uint32_t fsect;         /* sectors per file                            */
	int group;              /* files per group (per exonode sector)        */
	uint32_t xnlen;         /* bytes per exonode                           */
	int stride;             /* group g is the (g * stride)th group slot
	                           from start: 1 packs the groups; 2 leaves
	                           every other slot to someone else (the
	                           interleaved layout of thesis 5.3)           */
};

static inline uint64_t lay_gsect(const struct layout *l)
{
	return 1 + (uint64_t)l->group * l->fsect;      /* sectors per group */
}

static inline uint64_t lay_block(const struct layout *l, int g)
{
	return l->start + (uint64_t)g * (uint64_t)(l->stride > 1 ? l->stride : 1) * lay_gsect(l);
}

static inline uint64_t lay_data(const struct layout *l, int i)
{
	return lay_block(l, i / l->group) + 1 + (uint64_t)(i % l->group) * l->fsect;
}

static inline uint64_t lay_span(const struct layout *l)
{
	return lay_block(l, (l->nfiles + l->group - 1) / l->group);
}

#endif
