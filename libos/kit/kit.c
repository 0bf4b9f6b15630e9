/*
 * kit.c - struct kit, the handle every piece of the libFS kit takes: one
 * file system's exodisk client, unit, key and free map (the view of the
 * disk a library file system starts from), and the two calls that do what
 * every mount and mkfs begins with.
 *
 * Options are the mount spec's "k=v,..." (libfs_opt): unit=N, key=TEXT or
 * keyhex=HEX (capkey.h; neither: the public development secret), sb=SECTOR
 * (anchor.c), wait=MS (lock.c).  A file system adds its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "libos/kit/kit.h"

int kit_opt_num(const char *opts, const char *key, uint64_t def, uint64_t *out)
{
	char v[32];
	int r = libfs_opt(opts, key, v, sizeof v);
	*out = def;
	if (r == 0)
		return 0;
	char *end;
	if (r < 0 || v[0] < '0' || v[0] > '9')
		return -EINVAL;
	unsigned long long n = strtoull(v, &end, 0);
	if (*end != 0)
		return -EINVAL;
	*out = n;
	return 0;
}

int kit_err(int64_t r)
{
	return r >= 0 ? (int)r : -edc_errno(r);
}

int kit_open(struct kit *k, const char *type, const char *opts)
{
	memset(k, 0, sizeof *k);
	k->c = edc_default();
	if (k->c == NULL)
		return -ENODEV;
	uint64_t unit;
	if (strlen(type) >= sizeof k->type || kit_opt_num(opts, "unit", 0, &unit) < 0 ||
	    unit > 0xffff || capkey_from_opts(&k->key, type, opts) < 0)
		return -EINVAL;
	strcpy(k->type, type);
	k->unit = (int)unit;
	return edc_fm_open(k->c, k->unit, &k->fm) == 0 ? 0 : -ENODEV;
}

int kit_mount(struct kit *k, const char *type, const char *opts)
{
	uint64_t wait;
	int e = kit_open(k, type, opts);
	if (e == 0)
		e = kit_opt_num(opts, "wait", KIT_LOCK_WAIT_MS, &wait);
	if (e == 0)
		e = kit_anchor_find(k, opts);
	return e < 0 ? e : kit_lock(k, wait);
}

void kit_unmount(struct kit *k)
{
	kit_unlock(k);
}

int kit_mkfs(struct kit *k, const char *type, const char *opts, uint32_t xnlen)
{
	int e = kit_open(k, type, opts);
	return e < 0 ? e : kit_anchor_make(k, opts, xnlen);
}

void kit_statfs(struct kit *k, struct libfs_statfs *st)
{
	memset(st, 0, sizeof *st);
	strcpy(st->type, k->type);
	st->bsize = KIT_UNIT * ED_SECTOR;
	st->blocks = k->fm.nsectors / KIT_UNIT;
	st->bfree = edc_fm_count_free(&k->fm) / KIT_UNIT;
}
