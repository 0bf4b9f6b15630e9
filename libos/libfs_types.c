/*
 * libfs_types.c - the library file systems a program can mount by name, and
 * the option-string helper every libFS uses to read its mount options.
 *
 * The built-in types are linked into every program, because any program may
 * find its standard output redirected to a file on one of them.  They are
 * the directories named in LIBFS_TYPES in userfs/userfs.mk: the build hands
 * the list to this file as LIBFS_BUILTIN, "LIBFS_TYPE(unixfs) LIBFS_TYPE(kvfs)
 * ...", and each NAME must define `const struct libfs_ops NAME_ops`.  That is
 * the one place a new libFS is named.  Others can be registered at run
 * time (tests register private ones).  Layers (libos/stack/stack.h), named
 * in LIBFS_LAYERS, are mountable by name too, but are not file systems:
 * libfs_type_at does not list them (nothing to mkfs), libfs_layer_at does.
 */
#include <errno.h>
#include <string.h>
#include "libos/libfs.h"

#ifndef LIBFS_BUILTIN
#error "LIBFS_BUILTIN: the list of built-in libFS types comes from userfs/userfs.mk"
#endif

#define LIBFS_TYPE(n) extern const struct libfs_ops n##_ops;
LIBFS_BUILTIN
#undef LIBFS_TYPE

#define MAX_TYPES 8

static const struct libfs_ops *const builtin[] = {
#define LIBFS_TYPE(n) &n##_ops,
	LIBFS_BUILTIN
#undef LIBFS_TYPE
	NULL,
};

#define NBUILTIN (sizeof builtin / sizeof builtin[0] - 1)

#ifndef LIBFS_LAYERS
#define LIBFS_LAYERS
#endif
#define LIBFS_TYPE(n) extern const struct libfs_ops n##_ops;
LIBFS_LAYERS
#undef LIBFS_TYPE
static const struct libfs_ops *const layers[] = {
#define LIBFS_TYPE(n) &n##_ops,
	LIBFS_LAYERS
#undef LIBFS_TYPE
	NULL,
};

const struct libfs_ops *libfs_layer_at(int i)
{
	if (i < 0 || (size_t)i >= sizeof layers / sizeof layers[0] - 1)
		return NULL;
	return layers[i];
}

static const struct libfs_ops *extra[MAX_TYPES];

const struct libfs_ops *libfs_type_at(int i)
{
	if (i < 0)
		return NULL;
	if ((size_t)i < NBUILTIN)
		return builtin[i];
	for (size_t j = 0, k = NBUILTIN; j < MAX_TYPES; j++)
		if (extra[j] != NULL && k++ == (size_t)i)
			return extra[j];
	return NULL;
}

const struct libfs_ops *libfs_type(const char *name)
{
	const struct libfs_ops *t;
	for (int i = 0; (t = libfs_type_at(i)) != NULL; i++)
		if (strcmp(t->name, name) == 0)
			return t;
	for (int i = 0; (t = libfs_layer_at(i)) != NULL; i++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

int libfs_check_ops(const struct libfs_ops *o)
{
	int dirs = (o->features & LIBFS_F_DIRS) != 0, ren = (o->features & LIBFS_F_RENAME) != 0;
	int per = (o->features & LIBFS_F_PERSIST) != 0;
	if (dirs != (o->mkdir != NULL && o->rmdir != NULL) || ren != (o->rename != NULL) ||
	    per != (o->persist != NULL) || o->name_max == 0 || o->name_max > LIBFS_NAME_MAX ||
	    (o->sync == NULL && o->fsync == NULL) || (o->enter == NULL) != (o->leave == NULL))
		return -EINVAL;
	return 0;
}

int libfs_register(const struct libfs_ops *ops)
{
	if (libfs_type(ops->name) != NULL)
		return -EEXIST;
	if (libfs_check_ops(ops) < 0)
		return -EINVAL;
	for (size_t i = 0; i < MAX_TYPES; i++)
		if (extra[i] == NULL) {
			extra[i] = ops;
			return 0;
		}
	return -ENOMEM;
}

int libfs_opt(const char *opts, const char *key, char *val, size_t size)
{
	size_t klen = strlen(key);
	const char *p = opts;
	while (p != NULL && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n >= klen && strncmp(p, key, klen) == 0 && (n == klen || p[klen] == '=')) {
			const char *v = n == klen ? p + n : p + klen + 1;
			size_t vl = (size_t)(p + n - v);
			if (vl + 1 > size)
				return -1;
			memcpy(val, v, vl);
			val[vl] = 0;
			return 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}
