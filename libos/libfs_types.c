/*
 * libfs_types.c - the library file systems a program can mount by name, and
 * the option-string helper every libFS uses to read its mount options.
 *
 * The built-in types are linked into every program, because any program may
 * find its standard output redirected to a file on one of them.  Others can
 * be registered at run time (tests register private ones).
 */
#include <errno.h>
#include <string.h>
#include "libos/libfs.h"
#include "userfs/unixfs/unixfs.h"
#include "userfs/kvfs/kvfs.h"

#define MAX_TYPES 8

static const struct libfs_ops *builtin[] = {
	&unixfs_ops,
	&kvfs_ops,
	NULL,
};

static const struct libfs_ops *extra[MAX_TYPES];

const struct libfs_ops *libfs_type(const char *name)
{
	for (size_t i = 0; builtin[i] != NULL; i++)
		if (strcmp(builtin[i]->name, name) == 0)
			return builtin[i];
	for (size_t i = 0; i < MAX_TYPES; i++)
		if (extra[i] != NULL && strcmp(extra[i]->name, name) == 0)
			return extra[i];
	return NULL;
}

int libfs_register(const struct libfs_ops *ops)
{
	if (libfs_type(ops->name) != NULL)
		return -EEXIST;
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
