/*
 * ondisk.c - sealing and checking the exodisk's on-disk structures (see
 * ondisk.h).  Every check looks at the magic number first, then the MAC,
 * and only then at anything the bytes say: nothing from an unauthenticated
 * sector is ever trusted, not even a length.
 */
#include "kernel/exodisk/ondisk.h"
#include "kernel/exodisk/xnode.h"

/* ---- superblock ---------------------------------------------------------- */

static void super_tag(const struct ed_keys *k, const struct ed_super *sb, uint64_t sector,
                      uint8_t tag[16])
{
	struct siphash s;
	ed_mac_begin(&s, k, ED_DOM_SUPER, sb->uuid, sector);
	sip_update(&s, sb, offsetof(struct ed_super, tag));
	ed_mac_end(&s, tag);
}

void ed_super_seal(const struct ed_keys *k, struct ed_super *sb, uint64_t sector)
{
	super_tag(k, sb, sector, sb->tag);
}

int ed_super_check(const struct ed_keys *k, const struct ed_super *sb, uint64_t sector)
{
	uint8_t tag[16];
	if (sb->magic != ED_SB_MAGIC)
		return ED_E_FORMAT;
	super_tag(k, sb, sector, tag);
	if (!ed_tag_equal(tag, sb->tag))
		return ED_E_BADMAC;
	if (sb->fmt != ED_SB_FMT && sb->fmt != ED_SB_FMT_V3 && sb->fmt != ED_SB_FMT_OLD)
		return ED_E_VERSION;
	if (sb->fmt == ED_SB_FMT_OLD && sb->fm_nover != 0)
		return ED_E_CORRUPT;
	if (sb->log_len == 0)
		return ED_E_CORRUPT;
	return 0;
}

/* ---- tree pages ---------------------------------------------------------- */

void ed_mpage_tag(const struct ed_keys *k, int dom, const uint8_t uuid[16], uint64_t sector,
                  const void *page, uint8_t tag[16])
{
	struct siphash s;
	ed_mac_begin(&s, k, (enum ed_domain)dom, uuid, sector);
	sip_update(&s, page, ED_PAGE);
	ed_mac_end(&s, tag);
}

/* ---- extent headers ------------------------------------------------------ */

static void ext_tag(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                    const struct ed_exthdr *h, uint8_t tag[16])
{
	struct siphash s;
	ed_mac_begin(&s, k, ED_DOM_EXTENT, uuid, sector);
	sip_update(&s, h, offsetof(struct ed_exthdr, tag));
	ed_mac_end(&s, tag);
}

void ed_ext_encode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                   const struct ed_exthdr *plain, uint64_t stamp, struct ed_exthdr *disk)
{
	*disk = *plain;
	disk->magic = ED_EXT_MAGIC;
	disk->fmt = ED_FMT;
	disk->nsect = 1;
	disk->stamp = stamp;
	ed_cap_crypt(k, uuid, sector, stamp, 0xffff, 'r', &plain->rc, &disk->rc);
	ed_cap_crypt(k, uuid, sector, stamp, 0xffff, 'w', &plain->wc, &disk->wc);
	ext_tag(k, uuid, sector, disk, disk->tag);
}

int ed_ext_decode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                  const struct ed_exthdr *disk, uint64_t want_stamp, struct ed_exthdr *plain)
{
	uint8_t tag[16];
	if (disk->magic != ED_EXT_MAGIC)
		return ED_E_BADMAC;
	ext_tag(k, uuid, sector, disk, tag);
	if (!ed_tag_equal(tag, disk->tag))
		return ED_E_BADMAC;
	if (disk->stamp != want_stamp)
		return ED_E_STALE;
	if (disk->fmt != ED_FMT || disk->nsect != 1 || disk->flags != 0 || disk->reserved != 0 ||
	    disk->nsectors == 0)
		return ED_E_CORRUPT;
	*plain = *disk;
	ed_cap_crypt(k, uuid, sector, disk->stamp, 0xffff, 'r', &disk->rc, &plain->rc);
	ed_cap_crypt(k, uuid, sector, disk->stamp, 0xffff, 'w', &disk->wc, &plain->wc);
	ed_memset(plain->tag, 0, sizeof(plain->tag));
	return 0;
}

/* ---- exonode blocks ------------------------------------------------------ */

static void xnblk_tag(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                      const uint8_t *blk, uint32_t nsect, uint8_t tag[16])
{
	struct siphash s;
	ed_mac_begin(&s, k, ED_DOM_XNBLK, uuid, sector);
	sip_update(&s, blk, offsetof(struct ed_xnblk, tag));
	sip_update(&s, blk + ED_XNBLK_HDR_BYTES, nsect * ED_SECTOR - ED_XNBLK_HDR_BYTES);
	ed_mac_end(&s, tag);
}

void ed_xnblk_encode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                     const uint8_t *plain, uint64_t stamp, uint8_t *disk)
{
	const struct ed_xnblk *pb = (const struct ed_xnblk *)plain;
	uint32_t bytes = pb->nsect * ED_SECTOR;
	ed_memcpy(disk, plain, bytes);
	struct ed_xnblk *db = (struct ed_xnblk *)disk;
	db->magic = ED_XNBLK_MAGIC;
	db->fmt = ED_FMT;
	db->stamp = stamp;
	uint32_t n = ed_xn_nslots(db->nsect, db->slot_bytes);
	for (uint32_t i = 0; i < n; i++) {
		struct ed_xnhdr *x = ed_xn_slot(disk, i);
		if (x->state == ED_SLOT_DEAD) {
			ed_memset(x, 0, db->slot_bytes);
		} else if (x->state == ED_SLOT_LIVE) {
			struct ed_cap rc = x->rc, wc = x->wc;
			ed_cap_crypt(k, uuid, sector, stamp, i, 'r', &rc, &x->rc);
			ed_cap_crypt(k, uuid, sector, stamp, i, 'w', &wc, &x->wc);
		}
	}
	/* Bytes after the last slot are zero in a canonical block. */
	uint32_t end = ED_XNBLK_HDR_BYTES + n * db->slot_bytes;
	ed_memset(disk + end, 0, bytes - end);
	xnblk_tag(k, uuid, sector, disk, db->nsect, db->tag);
}

int ed_xnblk_decode(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                    const uint8_t *disk, uint32_t nsect, uint64_t want_stamp, uint8_t *plain)
{
	const struct ed_xnblk *db = (const struct ed_xnblk *)disk;
	uint8_t tag[16];
	if (db->magic != ED_XNBLK_MAGIC || db->nsect != nsect)
		return ED_E_BADMAC;
	xnblk_tag(k, uuid, sector, disk, nsect, tag);
	if (!ed_tag_equal(tag, db->tag))
		return ED_E_BADMAC;
	if (db->stamp != want_stamp)
		return ED_E_STALE;
	if (db->fmt != ED_FMT || nsect < 1 || nsect > ED_XN_MAX_SECT ||
	    db->slot_bytes < ED_XN_HDR_BYTES || db->slot_bytes % ED_XN_ALIGN != 0 ||
	    db->slot_bytes > nsect * ED_SECTOR - ED_XNBLK_HDR_BYTES ||
	    ed_xn_nsect_for(db->slot_bytes) > nsect)
		return ED_E_CORRUPT;
	uint32_t bytes = nsect * ED_SECTOR;
	ed_memcpy(plain, disk, bytes);
	struct ed_xnblk *pb = (struct ed_xnblk *)plain;
	ed_memset(pb->tag, 0, sizeof(pb->tag));
	uint32_t n = ed_xn_nslots(nsect, db->slot_bytes);
	for (uint32_t i = 0; i < n; i++) {
		struct ed_xnhdr *x = ed_xn_slot(plain, i);
		int e = ed_xn_check(x, db->slot_bytes);
		if (e != 0)
			return e;
		if (x->state == ED_SLOT_LIVE) {
			struct ed_cap rc = x->rc, wc = x->wc;
			ed_cap_crypt(k, uuid, sector, db->stamp, i, 'r', &rc, &x->rc);
			ed_cap_crypt(k, uuid, sector, db->stamp, i, 'w', &wc, &x->wc);
		}
	}
	uint32_t end = ED_XNBLK_HDR_BYTES + n * db->slot_bytes;
	for (uint32_t i = end; i < bytes; i++)
		if (plain[i] != 0)
			return ED_E_CORRUPT;
	return 0;
}

/* ---- log records --------------------------------------------------------- */

static void log_tag(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                    const uint8_t *hdr, uint32_t bytes, uint8_t tag[16])
{
	struct siphash s;
	ed_mac_begin(&s, k, ED_DOM_LOG, uuid, sector);
	sip_update(&s, hdr, bytes - ED_TAG_BYTES);
	ed_mac_end(&s, tag);
}

void ed_log_seal(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector, uint8_t *hdr)
{
	struct ed_loghdr *h = (struct ed_loghdr *)hdr;
	log_tag(k, uuid, sector, hdr, h->hdr_sect * ED_SECTOR, ed_log_tag(hdr));
}

int ed_log_check(const struct ed_keys *k, const uint8_t uuid[16], uint64_t sector,
                 const uint8_t *hdr, uint32_t max_hdr_bytes)
{
	const struct ed_loghdr *h = (const struct ed_loghdr *)hdr;
	uint8_t tag[16];
	if (h->magic != ED_LOG_MAGIC || h->hdr_sect == 0 || h->hdr_sect > ED_LOG_MAX_HDR_SECT ||
	    h->hdr_sect * ED_SECTOR > max_hdr_bytes)
		return ED_E_BADMAC;
	uint32_t bytes = h->hdr_sect * ED_SECTOR;
	log_tag(k, uuid, sector, hdr, bytes, tag);
	if (!ed_tag_equal(tag, hdr + bytes - ED_TAG_BYTES))
		return ED_E_BADMAC;
	if ((h->fmt != ED_LOG_FMT && h->fmt != ED_LOG_FMT_OLD) || h->nimg > ED_LOG_MAX_IMG)
		return ED_E_CORRUPT;
	uint64_t need = sizeof(*h) + (uint64_t)h->nimg * sizeof(struct ed_logimg) +
	                ((uint64_t)h->nalloc + h->nfree) * sizeof(struct ed_logrange) + ED_TAG_BYTES;
	if (h->fmt == ED_LOG_FMT) {
		need += sizeof(struct ed_logext);
		if (need > bytes)
			return ED_E_CORRUPT;
		const struct ed_logext *x = (const struct ed_logext *)
			(hdr + sizeof(*h) + h->nimg * sizeof(struct ed_logimg));
		need += ((uint64_t)x->nunw + x->nwritten) * sizeof(struct ed_logrange);
	}
	if (need > bytes)
		return ED_E_CORRUPT;
	return 0;
}
