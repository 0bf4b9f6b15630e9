/*
 * pvec.c - vectors of pages.  The core gets memory only as single pages
 * (struct ed_env.page_alloc), yet its free maps and binding tables can be
 * megabytes, so every large table is a vector of pages reached through a
 * directory page of leaf pages (512 * 512 pages, 1 GiB, is plenty).  Each
 * page stays individually addressable, which is also what lets the kernel
 * map free-map pages into applications one by one.
 */
#include "kernel/exodisk/edcore.h"

#define PTRS_PER_PAGE (ED_PAGE / sizeof(void *))

int ed_pvec_alloc(const struct ed_env *env, struct ed_pvec *v, uint32_t npages)
{
	v->dir = NULL;
	v->npages = 0;
	if (npages == 0)
		return 0;
	if (npages > PTRS_PER_PAGE * PTRS_PER_PAGE)
		return ED_E_TOOBIG;
	v->dir = env->page_alloc(env->ctx);
	if (v->dir == NULL)
		return ED_E_NOMEM;
	for (uint32_t i = 0; i < npages; i++) {
		uint32_t l = i / PTRS_PER_PAGE;
		if (v->dir[l] == NULL) {
			v->dir[l] = env->page_alloc(env->ctx);
			if (v->dir[l] == NULL)
				goto fail;
		}
		void *p = env->page_alloc(env->ctx);
		if (p == NULL)
			goto fail;
		v->dir[l][i % PTRS_PER_PAGE] = p;
		v->npages = i + 1;
	}
	return 0;
fail:
	ed_pvec_free(env, v);
	return ED_E_NOMEM;
}

void ed_pvec_free(const struct ed_env *env, struct ed_pvec *v)
{
	if (v->dir == NULL)
		return;
	for (uint32_t l = 0; l < PTRS_PER_PAGE; l++) {
		if (v->dir[l] == NULL)
			continue;
		for (uint32_t j = 0; j < PTRS_PER_PAGE; j++)
			if (v->dir[l][j] != NULL)
				env->page_free(env->ctx, v->dir[l][j]);
		env->page_free(env->ctx, v->dir[l]);
	}
	env->page_free(env->ctx, v->dir);
	v->dir = NULL;
	v->npages = 0;
}
