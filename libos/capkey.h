/*
 * capkey.h - how a library file system gets its capabilities back after a
 * reboot: every capability is computed from the owner's secret, so nothing
 * secret is stored on disk and nothing needs remembering but the secret.
 *
 *   master = SipHash-128(public salt, "exodisk-capkey-1" | type | secret)
 *   cap(purpose, a, b) = SipHash-128(master, purpose | a | b)
 *
 * A libFS derives one master key at mount and then the read and write
 * capability of each object from where the object is (unixfs: the
 * exonode's sector and slot), so after a reboot the owner recomputes
 * exactly the capabilities it allocated with.  SipHash is a pseudo-random
 * function: without the secret the capabilities cannot be computed, and
 * seeing some capabilities (handed out to share one file, say) reveals
 * neither the master key nor any other capability.  docs/libfs.md
 * ("Capabilities") discusses what this does and does not protect.
 */
#ifndef LIBOS_CAPKEY_H
#define LIBOS_CAPKEY_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/uapi/exodisk.h"

struct capkey {
	uint8_t k[16];
};

/* The development secret used when a mount names none.  It is public: a
 * file system made with it protects nothing from other programs. */
#define CAPKEY_DEV_SECRET "exodisk-dev"

/* Derive the master key of a file system of type `type` from a secret. */
void capkey_derive(struct capkey *ck, const char *type, const void *secret, size_t len);
/* Read a secret from mount options: key=TEXT, or keyhex=HEX (any length);
 * neither: the development secret.  Returns 0, or -1 if keyhex is not hex. */
int capkey_from_opts(struct capkey *ck, const char *type, const char *opts);
/* The capability for (purpose, a, b); purpose is a short tag such as 'r'. */
struct ed_cap capkey_cap(const struct capkey *ck, char purpose, uint64_t a, uint64_t b);

#endif
