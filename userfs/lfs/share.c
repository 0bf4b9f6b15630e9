/*
 * share.c - lending one file to other programs, read-only, through proxy
 * exonodes (thesis section 4.1; section 2.1.3's rule that a proxy never
 * outlives its creator).
 *
 * A log-structured file's bytes are wherever the log put them, spread over
 * segments, and they move whenever the file is written or the cleaner
 * copies them.  So a share is two things:
 *
 *   - proxy exonodes over the file's sectors: each lends up to 16 ranges of
 *     one segment's leaf exonode (the virtual volume's, libos/vvol), read
 *     only, with the share's own capabilities - never the file system's;
 *   - a map (format.h: struct lfs_sharehdr, proxy ids, runs) in a few
 *     sectors of its own, lent through one more proxy whose id, sector and
 *     read capability are the token another program is given.
 *
 * The map's sectors are an extent of an exonode that is never written
 * back, like the mount lock: it lives in the exodisk's cache only, so the
 * map, its proxy and every proxy of the file disappear when the owner
 * unshares, unmounts or exits - and nothing of a share is ever on the disk
 * after a crash.
 *
 * After every commit the owner compares each shared file's runs with what
 * it last published; if they moved, it makes new proxies, rewrites the
 * map with the next generation, then revokes the old proxies.  That is
 * before any segment the file left can be reused (reuse waits for a
 * checkpoint, which starts with a commit), so an old proxy never shows
 * another file's bytes: at worst it has gone, and the reader starts again.
 * A reader (shareread.c, which needs nothing but the exodisk and the
 * token) reads the map, the runs, and the map's header again, and retries
 * if the generation changed or a proxy was revoked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "userfs/lfs/lfs_int.h"

#define SHARE_XN_LEN 72u             /* the header and one extent entry */
#define MAX_RANGES   ED_PROXY_MAX_RANGES

struct run {
	uint64_t off, sector;
	uint32_t nsect, group;
	uint64_t leaf;
	uint16_t slot;
};

struct group {
	uint64_t leaf;
	uint16_t slot;
	uint32_t n;
	struct ed_range r[MAX_RANGES];
};

static struct ed_protector proxy_prot(const struct lfs *fs, const struct lfs_share *sh, uint64_t id)
{
	struct ed_protector p = edc_prot_extent(fs->k.unit, id, &sh->rc, &sh->wc);
	p.kind = ED_PK_PROXY;
	return p;
}

static void revoke(struct lfs *fs, struct lfs_share *sh, const uint64_t *ids, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ed_protector p = proxy_prot(fs, sh, ids[i]);
		edc_xn_dealloc(fs->k.c, &p);       /* already gone with its origin: fine */
	}
}

/* The file's sectors as runs in file order, each in one segment. */
static int runs_of(struct lfs *fs, struct lnode *n, struct run **out, uint32_t *nout)
{
	uint64_t nblk = (n->d.size + LFS_BSIZE - 1) / LFS_BSIZE;
	uint32_t cap = 16, nr = 0;
	struct run *v = malloc(cap * sizeof *v);
	if (v == NULL)
		return -ENOMEM;
	for (uint64_t lbn = 0; lbn < nblk; lbn++) {
		uint64_t ptr;
		int e = lfs_bmap(fs, n, lbn, &ptr);
		struct vvol_place pl;
		if (e == 0 && ptr != 0)
			e = vvol_chunk(&fs->v, lfs_seg_of(fs, LFS_PTR_LBA(ptr)), 0, &pl) == 1 ? 0 : -EIO;
		if (e < 0) {
			free(v);
			return e;
		}
		if (ptr == 0)
			continue;
		uint64_t lba = LFS_PTR_LBA(ptr);
		uint64_t sector = pl.phys + (lba - lfs_seg_of(fs, lba) * fs->sb.seg_sect);
		uint32_t ns = LFS_PTR_NSECT(ptr);
		struct run *l = nr ? &v[nr - 1] : NULL;
		if (l && l->leaf == pl.leaf && l->slot == pl.slot && l->sector + l->nsect == sector &&
		    l->off + (uint64_t)l->nsect * LFS_SECT == lbn * LFS_BSIZE) {
			l->nsect += ns;
			continue;
		}
		if (nr == cap) {
			struct run *w = realloc(v, 2 * cap * sizeof *v);
			if (w == NULL) {
				free(v);
				return -ENOMEM;
			}
			v = w;
			cap *= 2;
		}
		v[nr++] = (struct run){ lbn * LFS_BSIZE, sector, ns, 0, pl.leaf, pl.slot };
	}
	*out = v;
	*nout = nr;
	return 0;
}

/* A sum of what a publication would say, to see whether anything moved. */
static uint64_t signature(const struct run *v, uint32_t n, uint64_t size)
{
	uint64_t h = lfs_sum64(&size, 8, n);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t w[3] = { v[i].off, v[i].sector, v[i].nsect };
		h = lfs_sum64(w, sizeof w, h);
	}
	return h;
}

/* Make new proxies for the file's runs, write the map, revoke the old. */
static int publish(struct lfs *fs, struct lfs_share *sh, int force)
{
	struct lnode *n;
	TRY(lfs_get(fs, sh->ino, &n));
	if (n->gen != sh->gen) {
		lfs_put(fs, n);
		return -ENOENT;                  /* the file was deleted */
	}
	struct run *v;
	uint32_t nr;
	int e = runs_of(fs, n, &v, &nr);
	uint64_t size = n->d.size;
	lfs_put(fs, n);
	if (e < 0)
		return e;
	uint64_t sig = signature(v, nr, size);
	if (!force && sig == sh->sig) {
		free(v);
		return 0;
	}
	/* Group the runs by leaf, 16 ranges to a proxy. */
	struct group *g = calloc(nr ? nr : 1, sizeof *g);
	uint64_t *ids = calloc(nr ? nr : 1, sizeof *ids);
	uint32_t ng = 0;
	e = g && ids ? 0 : -ENOMEM;
	for (uint32_t i = 0; i < nr && e == 0; i++) {
		uint32_t j = 0;
		while (j < ng && !(g[j].leaf == v[i].leaf && g[j].slot == v[i].slot && g[j].n < MAX_RANGES))
			j++;
		if (j == ng) {
			g[ng].leaf = v[i].leaf;
			g[ng].slot = v[i].slot;
			ng++;
		}
		g[j].r[g[j].n++] = (struct ed_range){ v[i].sector, v[i].nsect };
		v[i].group = j;
	}
	uint32_t made = 0;
	for (; made < ng && e == 0; made++) {
		struct ed_protector p = kit_prot(&fs->k, g[made].leaf, g[made].slot);
		int64_t r;
		KIT_RETRY(&fs->k, g[made].leaf, g[made].slot, r,
		          edc_xn_proxy(fs->k.c, &p, g[made].r, g[made].n, ED_PROXY_READ, &sh->rc, &sh->wc));
		if (r < 0) {
			e = kit_err(r);
			break;
		}
		ids[made] = (uint64_t)r;
	}
	/* The map. */
	size_t bytes = sizeof(struct lfs_sharehdr) + ng * 8 + (size_t)nr * sizeof(struct lfs_sharerun);
	if (e == 0 && bytes > LFS_SHARE_SECT * LFS_SECT)
		e = -EFBIG;                      /* too scattered to describe: clean, share again */
	uint8_t *m = e == 0 ? calloc(1, LFS_SHARE_SECT * LFS_SECT) : NULL;
	if (e == 0 && m == NULL)
		e = -ENOMEM;
	if (e == 0) {
		struct lfs_sharehdr *h = (struct lfs_sharehdr *)m;
		h->magic = LFS_SHARE_MAGIC;
		h->nrun = nr;
		h->gen = sh->pubgen + 1;
		h->size = size;
		h->nproxy = ng;
		memcpy(h + 1, ids, ng * 8);
		struct lfs_sharerun *sr = (struct lfs_sharerun *)(m + sizeof *h + ng * 8);
		for (uint32_t i = 0; i < nr; i++)
			sr[i] = (struct lfs_sharerun){ v[i].off, v[i].sector, v[i].nsect, v[i].group };
		h->csum = lfs_sum32(m, LFS_SHARE_SECT * LFS_SECT);
		int64_t r = kit_io(&fs->k, sh->xn, sh->slot, 1, sh->map, m, LFS_SHARE_SECT * LFS_SECT);
		e = r < 0 ? kit_err(r) : 0;
	}
	free(m);
	free(v);
	free(g);
	if (e < 0) {
		revoke(fs, sh, ids, made);
		free(ids);
		return e;
	}
	revoke(fs, sh, sh->ids, sh->nids);
	free(sh->ids);
	sh->ids = ids;
	sh->nids = ng;
	sh->sig = sig;
	sh->pubgen++;
	fs->st.share_pubs++;
	return 0;
}

/* The share cannot follow its file any more (deleted, too scattered, an
 * error): its data proxies go now, and the map says so. */
static void retire(struct lfs *fs, struct lfs_share *sh)
{
	revoke(fs, sh, sh->ids, sh->nids);
	sh->nids = 0;
	sh->dead = 1;
	uint8_t *m = calloc(1, LFS_SECT);
	if (m != NULL) {
		kit_io(&fs->k, sh->xn, sh->slot, 1, sh->map, m, LFS_SECT);
		free(m);
	}
}

int lfs_share_publish(struct lfs *fs)
{
	int first = 0;
	for (struct lfs_share *sh = fs->shares; sh != NULL; sh = sh->next) {
		int e = sh->dead ? 0 : publish(fs, sh, 0);
		if (e < 0) {
			retire(fs, sh);
			if (first == 0)
				first = e;
		}
	}
	return first;
}

static void drop(struct lfs *fs, struct lfs_share *sh)
{
	revoke(fs, sh, sh->ids, sh->nids);
	revoke(fs, sh, &sh->mapid, 1);
	kit_xn_free(&fs->k, sh->xn, sh->slot);
	free(sh->ids);
	free(sh);
}

int lfs_share(struct lfs *fs, const char *path, struct lfs_token *t)
{
	if (fs->rdonly)
		return -EROFS;
	struct lnode *n;
	TRY(lfs_walk(fs, path, &n));
	uint32_t ino = n->ino, gen = n->gen;
	int dir = n->d.type == LIBFS_T_DIR;
	lfs_put(fs, n);
	if (dir)
		return -EISDIR;
	/* Committed first: every block of it is on the disk. */
	TRY(lfs_commit(fs));
	struct lfs_share *sh = calloc(1, sizeof *sh);
	if (sh == NULL)
		return -ENOMEM;
	sh->ino = ino;
	sh->gen = gen;
	/* The share's own capabilities: from the key, this mount's nonce and a
	 * counter, so no two shares (nor two boots) lend with the same ones. */
	uint64_t seq = ++fs->nshares_made;
	sh->rc = capkey_cap(&fs->k.key, 'S', fs->nonce, (uint32_t)seq);
	sh->wc = capkey_cap(&fs->k.key, 'T', fs->nonce, (uint32_t)seq);
	struct kit_pool pool = { SHARE_XN_LEN, fs->sharehint };
	int e = kit_alloc_xn(&fs->k, &pool, fs->k.anchor, &sh->xn, &sh->slot);
	int64_t r = 0;
	if (e == 0) {
		fs->sharehint = pool.hint;
		uint64_t start;
		r = kit_alloc_extent(&fs->k, sh->xn, sh->slot, 0, sh->xn, LFS_SHARE_SECT, LFS_SHARE_SECT,
		                     &start);
		e = r < 0 ? (int)r : 0;
		sh->map = start;
	}
	if (e == 0) {
		struct ed_protector p = kit_prot(&fs->k, sh->xn, sh->slot);
		struct ed_range rg = { sh->map, LFS_SHARE_SECT };
		KIT_RETRY(&fs->k, sh->xn, sh->slot, r,
		          edc_xn_proxy(fs->k.c, &p, &rg, 1, ED_PROXY_READ, &sh->rc, &sh->wc));
		e = r < 0 ? kit_err(r) : 0;
		sh->mapid = (uint64_t)r;
	}
	if (e == 0)
		e = publish(fs, sh, 1);
	if (e < 0) {
		if (sh->xn)
			drop(fs, sh);
		else
			free(sh);
		return e;
	}
	sh->next = fs->shares;
	fs->shares = sh;
	t->unit = (uint32_t)fs->k.unit;
	t->id = sh->mapid;
	t->sector = sh->map;
	t->rc = sh->rc;
	return 0;
}

int lfs_unshare(struct lfs *fs, const struct lfs_token *t)
{
	for (struct lfs_share **pp = &fs->shares; *pp; pp = &(*pp)->next)
		if ((*pp)->mapid == t->id) {
			struct lfs_share *sh = *pp;
			*pp = sh->next;
			drop(fs, sh);
			return 0;
		}
	return -ENOENT;
}

void lfs_share_free(struct lfs *fs, int revoke_them)
{
	while (fs->shares) {
		struct lfs_share *sh = fs->shares;
		fs->shares = sh->next;
		if (revoke_them) {
			drop(fs, sh);
		} else {
			free(sh->ids);
			free(sh);
		}
	}
}
