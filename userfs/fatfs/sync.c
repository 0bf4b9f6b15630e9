/*
 * sync.c - write-back in an order that keeps the volume one fsck.fat can
 * repair without losing what was already durable, whenever the power
 * fails:
 *
 *   1. CL_DATA   file data, and directory clusters made since the last
 *                sync (nothing points at them yet)
 *   2. CL_FAT    the FAT's new links: now every chain a name will point
 *                at exists, whole (a chain cut short still goes out whole:
 *                its end comes in step 4, after its file's new size)
 *   3. CL_DIR    names, sizes, first clusters in the directories
 *   4.           the chains waiting to be freed (their names are gone,
 *                durably) become free in the FAT, chains cut short get
 *      CL_FREE   their new ends; FSInfo's counts written
 *   5.           the virtual volume's chunks now wholly free go back to
 *                the exodisk (vvol_discard, committed with the map);
 *                4 and 5 are made durable together, by one flush
 *
 * Steps 1-3 are each a vvol_sync: the writes, a flush, the map - so each
 * is durable before the next starts.  A crash after 1 leaves data nobody
 * points at; after 2, chains nobody names (lost clusters: fsck.fat frees
 * them); during 3, some names old and some new, each pointing at a whole
 * chain (a file that grew may be shorter than its chain: fsck.fat trims
 * the chain); after 3 and before 4, chains of removed files still
 * allocated (lost clusters again).  Never a name pointing at a free or
 * reused cluster, because a freed cluster is not reused before step 4.
 * docs/fatfs.md has the whole argument.  A step with nothing to write
 * costs nothing (no flush, no commit).
 */
#include <errno.h>
#include "userfs/fatfs/fat.h"

static int write_fsinfo(struct fatfs *fs)
{
	if (!fs->info_dirty || fs->fsinfo == 0)
		return 0;
	uint32_t n;
	int e = fat_count_free(fs, &n);      /* known from now on, if it was not */
	if (e < 0)
		return e;
	uint8_t *p = fat_meta_sector(fs, fs->fsinfo, 0, &e);
	if (p == NULL)
		return e;
	put32(p + FSI_FREE_COUNT, fs->nfree >= 0 ? (uint32_t)fs->nfree : 0xFFFFFFFFu);
	put32(p + FSI_NXT_FREE, fs->hint);
	vvol_dirty(&fs->vol, fs->fsinfo, 1, CL_FREE);
	vvol_unpin(&fs->vol, fs->fsinfo);
	fs->info_dirty = 0;
	return 0;
}

int fat_sync(struct fatfs *fs)
{
	if (fs->ro)
		return 0;
	/* The metadata's checksums, in the table written with the frees
	 * (the volume is marked open: they may disagree until then). */
	int e = fat_ck_update(fs, 1u << CL_DATA | 1u << CL_FAT | 1u << CL_DIR | 1u << CL_FREE);
	if (e == 0)
		e = vvol_sync(&fs->vol, 1u << CL_DATA);
	/* Chains cut short go out whole now, and cut with the frees. */
	if (e == 0)
		e = fat_cuts_hold(fs, 1);
	/* From here to the last flush a death leaves chains nobody names,
	 * or chains longer than their files: others must know (share.c). */
	if (e == 0)
		fat_share_writing(fs, 1);
	if (e == 0)
		e = vvol_sync(&fs->vol, 1u << CL_FAT);
	if (e == 0)
		e = fat_cuts_hold(fs, 0);
	if (e == 0)
		fat_share_journal(fs, 1);
	if (e == 0)
		e = vvol_sync(&fs->vol, 1u << CL_DIR);
	if (e == 0)
		fat_share_journal(fs, 0);
	if (e == 0)
		e = fat_free_pending(fs);
	if (e == 0)
		e = write_fsinfo(fs);
	/* The frees go out, then the chunks they leave wholly free go back,
	 * and one flush makes both durable (vvol_harden runs the flush and
	 * the map's commit at once when the commit only gives chunks back).
	 * A crash may keep either without the other: frees without the
	 * chunks given back leave space used until those clusters are freed
	 * again; chunks given back without the frees leave lost clusters that
	 * read as zeros - no name points at them any more (step 3). */
	if (e == 0)
		e = fat_ck_update(fs, 1u << CL_FREE);
	if (e == 0)
		e = vvol_writeout(&fs->vol, 1u << CL_FREE);
	if (e == 0)
		e = fat_discard(fs);
	if (e == 0)
		e = vvol_sync(&fs->vol, 0);
	if (e == 0) {
		fset_clear(&fs->newdir);
		fat_share_writing(fs, 0);
	}
	fs->st.syncs++;
	return e;
}

int fat_relieve(struct fatfs *fs)
{
	if (!vvol_pressed(&fs->vol, 50))
		return 0;
	/* Data may go out at any moment: nothing durable points at new data,
	 * and data rewritten in place is just that.  Out, not yet durable: the
	 * next sync's first step makes it so. */
	int e = vvol_writeout(&fs->vol, 1u << CL_DATA);
	if (e == 0 && vvol_pressed(&fs->vol, 50))
		e = fat_sync(fs);
	return e;
}
