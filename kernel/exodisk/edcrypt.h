/*
 * edcrypt.h - how the exodisk uses its boot key: MACs over on-disk metadata,
 * encryption of capabilities on disk, and version stamps.
 *
 * One 128-bit master key is given at boot (docs/exodisk.md: "Keys").  Three
 * independent subkeys are derived from it, one per purpose, so that a value
 * produced for one purpose can never be replayed as another:
 *
 *   mac    SipHash-2-4-128 tags over superblocks, tree pages, log records,
 *          extent headers and exonode blocks.  Every tag also covers a
 *          domain number, the disk's 128-bit identity and the sector the
 *          bytes live at, so a block copied to another sector or another
 *          disk no longer verifies.
 *   enc    a keystream (SipHash-2-4-128 in counter mode, used as the PRF it
 *          was designed to be) XORed over capabilities.  Its input names the
 *          disk, sector, version stamp, slot and field, so every version of
 *          every block encrypts differently.
 *   stamp  version stamps: PRF(mount nonce, counter).  Unique per write of a
 *          block and unpredictable; the binding table remembers the current
 *          one, so an older copy of a block (a replay) is recognised.
 */
#ifndef ED_EDCRYPT_H
#define ED_EDCRYPT_H

#include <stdint.h>
#include <stdbool.h>
#include "kernel/uapi/exodisk.h"
#include "kernel/exodisk/siphash.h"

#define ED_TAG_BYTES 16

/* The development default boot key (docs/exodisk.md): anyone who reads the
 * source knows it, so a disk protected by it is protected only against
 * accidents.  Boot with edkey=<32 hex digits> for real protection. */
#define ED_DEV_KEY "exodisk-dev-key!"

struct ed_keys {
	uint8_t mac[16];
	uint8_t enc[16];
	uint8_t stamp[16];
};

/* Which kind of object a MAC protects (part of every tag's input). */
enum ed_domain {
	ED_DOM_SUPER  = 1,
	ED_DOM_SNAP   = 2,
	ED_DOM_LOG    = 3,
	ED_DOM_EXTENT = 4,
	ED_DOM_XNBLK  = 5,
	ED_DOM_NONCE  = 6,
	ED_DOM_BTREE  = 7,     /* pages of the binding tree */
	ED_DOM_FMAP   = 8,     /* pages of the free-map tree */
};

void ed_keys_derive(struct ed_keys *k, const uint8_t master[16]);

/* A MAC is begun with its binding (domain, disk, sector), fed the protected
 * bytes, and ended into a 16-byte tag. */
void ed_mac_begin(struct siphash *s, const struct ed_keys *k, enum ed_domain dom,
                  const uint8_t uuid[16], uint64_t sector);
void ed_mac_end(struct siphash *s, uint8_t tag[ED_TAG_BYTES]);

/* Constant-time comparisons, so timing reveals nothing about a secret. */
bool ed_tag_equal(const uint8_t *a, const uint8_t *b);
bool ed_cap_equal(const struct ed_cap *a, const struct ed_cap *b);

/* Encrypt or decrypt (the same XOR) one capability stored at (sector, slot)
 * in the version with stamp `stamp`; field is 'r' or 'w'. */
void ed_cap_crypt(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                  uint64_t stamp, uint32_t slot, uint8_t field,
                  const struct ed_cap *in, struct ed_cap *out);

/* The stamp for the counter-th write of a mount whose nonce is `nonce`. Never 0. */
uint64_t ed_stamp(const struct ed_keys *k, uint64_t nonce, uint64_t counter);

#endif
