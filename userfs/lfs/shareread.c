/*
 * shareread.c - reading a file another program lent through lfs_share
 * (share.c), with nothing but the exodisk and the token: no mount, no key,
 * none of lfs's state - the map's format (format.h) and its sum are all
 * it shares with the owner.
 *
 * The map can change under the reader (the owner publishes a new
 * generation whenever the file moves, and revokes the old proxies), so:
 * read the map whole and check its sum; read every run through its proxy;
 * read the map's first sector again - if the generation is the same, what
 * was read is one consistent version of the file.  A torn map, a revoked
 * proxy or a new generation: start again (a few times).  A map that says
 * nothing (zeros), or a map proxy that is gone: the share has ended.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "libos/edc.h"
#include "userfs/lfs/lfs_int.h"

static struct ed_protector prot(const struct lfs_token *t, uint64_t id)
{
	struct ed_protector p = edc_prot_extent((int)t->unit, id, &t->rc, &t->rc);
	p.kind = ED_PK_PROXY;
	return p;
}

/* One attempt: 0 done, 1 try again, or an error. */
static int attempt(struct edc *c, const struct lfs_token *t, uint8_t *map, uint8_t *buf, size_t cap,
                   uint64_t *size, uint64_t *gen)
{
	struct ed_protector mp = prot(t, t->id);
	int32_t r = edc_read(c, &mp, t->sector, map, LFS_SHARE_SECT * LFS_SECT);
	if (r == ED_E_NOPROXY || r == ED_E_CAP)
		return -ENOENT;
	if (r < 0)
		return edc_errno(r) ? -edc_errno(r) : -EIO;
	struct lfs_sharehdr h;
	memcpy(&h, map, sizeof h);
	if (h.magic == 0)
		return -ENOENT;                    /* the owner ended it */
	((struct lfs_sharehdr *)map)->csum = 0;
	size_t bytes = sizeof h + (size_t)h.nproxy * 8 + (size_t)h.nrun * sizeof(struct lfs_sharerun);
	if (h.magic != LFS_SHARE_MAGIC || bytes > LFS_SHARE_SECT * LFS_SECT ||
	    lfs_sum32(map, LFS_SHARE_SECT * LFS_SECT) != h.csum)
		return 1;                          /* being rewritten */
	*size = h.size;
	*gen = h.gen;
	uint64_t need = (h.size + LFS_SECT - 1) / LFS_SECT * LFS_SECT;
	if (need > cap)
		return -EFBIG;
	memset(buf, 0, (size_t)need);
	const uint64_t *ids = (const uint64_t *)(map + sizeof h);
	const struct lfs_sharerun *run = (const void *)(ids + h.nproxy);
	for (uint32_t i = 0; i < h.nrun; i++) {
		if (run[i].proxy >= h.nproxy || run[i].off % LFS_SECT ||
		    run[i].off + (uint64_t)run[i].nsect * LFS_SECT > need)
			return -EIO;
		struct ed_protector p = prot(t, ids[run[i].proxy]);
		r = edc_read(c, &p, run[i].sector, buf + run[i].off, (uint64_t)run[i].nsect * LFS_SECT);
		if (r == ED_E_NOPROXY || r == ED_E_RANGE)
			return 1;                      /* moved and revoked meanwhile */
		if (r < 0)
			return -edc_errno(r);
	}
	/* Still the same version? */
	r = edc_read(c, &mp, t->sector, map, LFS_SECT);
	if (r < 0)
		return r == ED_E_NOPROXY ? -ENOENT : -edc_errno(r);
	memcpy(&h, map, sizeof h);
	return h.magic == LFS_SHARE_MAGIC && h.gen == *gen ? 0 : 1;
}

int lfs_share_read(struct edc *c, const struct lfs_token *t, void *buf, size_t cap, uint64_t *size,
                   uint64_t *gen)
{
	uint8_t *map = malloc(LFS_SHARE_SECT * LFS_SECT);
	if (map == NULL)
		return -ENOMEM;
	int e = 1;
	for (int tries = 0; tries < 16 && e == 1; tries++)
		e = attempt(c, t, map, buf, cap, size, gen);
	free(map);
	return e == 1 ? -EAGAIN : e;
}

void lfs_token_str(const struct lfs_token *t, char out[96])
{
	const uint8_t *b = (const uint8_t *)&t->rc;
	int n = snprintf(out, 96, "%u:%llu:%llu:", t->unit, (unsigned long long)t->id,
	                 (unsigned long long)t->sector);
	for (size_t i = 0; i < sizeof t->rc && n + 2 < 96; i++)
		n += snprintf(out + n, 96 - (size_t)n, "%02x", b[i]);
}

int lfs_token_parse(const char *s, struct lfs_token *t)
{
	unsigned u;
	unsigned long long id, sec;
	int n = 0;
	memset(t, 0, sizeof *t);
	if (sscanf(s, "%u:%llu:%llu:%n", &u, &id, &sec, &n) != 3 || n == 0)
		return -EINVAL;
	uint8_t *b = (uint8_t *)&t->rc;
	for (size_t i = 0; i < sizeof t->rc; i++) {
		unsigned v;
		if (sscanf(s + n + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		b[i] = (uint8_t)v;
	}
	t->unit = u;
	t->id = id;
	t->sector = sec;
	return 0;
}
