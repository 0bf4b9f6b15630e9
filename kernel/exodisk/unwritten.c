/*
 * unwritten.c - sectors allocated to an application and not written since
 * (issue 17 item 4, remanence: no application reads bytes another freed),
 * kept in memory and, through the commit log, across reboots and power cuts.
 *
 * Three sparse bitmaps (bitmap.c: a region all clear costs nothing):
 *   unw   allocated and not written: a read (dataio.c) hands out zeros for
 *         these sectors and reads only the others, so an old byte never
 *         passes through application memory.  An allocation through a
 *         capability sets the bits of what it adds (an extent's sectors, its
 *         header sector included, and the sectors of an exonode's extent
 *         entries).
 *   done  written (the write completed) since the current flush cycle
 *         began, but not yet durable as far as the log knows.  A completed
 *         data write, or the home write of an extent's header, moves its
 *         sectors from unw to done.
 *   fl    the sectors a flush cycle is making durable: done, taken when the
 *         cycle's device flush was issued.  Its records name it in sector
 *         order; d->fl_pos is how far the durable ones have got.
 * What a mount after a cut would rebuild - the durable view - is unw | done
 * | fl from fl_pos on (plus bits of sectors freed since, which nothing
 * reads).  A cycle may need several records (250 runs each): what one
 * named written must leave the view at once, or the next record that
 * allocates, or a checkpoint's carry records, would name it unwritten
 * again after the flush's record said written.
 *
 * The log (docs/exodisk.md section 10; format in ondisk.h):
 *  - a record that allocates application sectors lists those of them in
 *    the durable view as `unw` ranges: replay marks them unwritten;
 *  - ED_OP_FLUSH runs a flush cycle: done becomes fl, the device is flushed,
 *    and a record lists fl as `written` (less any sector allocated or written
 *    again since, which is in unw or done); only when that record is durable
 *    does the flush report success.  So a `written` range names only data
 *    that a completed flush made durable (a cut never shows old bytes as
 *    written), and a flush never succeeds before its record is durable (a
 *    cut never turns acknowledged data into zeros).  A FUA data write that
 *    met unwritten sectors is answered the same way, through a cycle;
 *  - a checkpoint empties the log, so before its superblock it writes
 *    records that carry the durable view as `unw` ranges, at the place
 *    replay will start (ckpt.c); its first flush takes done as a cycle
 *    would (when none is running), so what was written before it is not
 *    carried.  A set too fragmented for the records' room has its short
 *    runs zeroed on the disk instead, before the flush that precedes the
 *    superblock, with writes to application sectors held back meanwhile
 *    (zero.c).
 * The exodisk's own sectors (superblocks, log, tree pages, exonode blocks)
 * are never marked: they are not application data.
 */
#include "kernel/exodisk/edcore.h"

void ed_unw_init(struct ed_disk *d)
{
	ed_bm_init(&d->unw, &d->ed->env, d->nsectors, ED_BM_ZERO, &d->mem_pages);
	ed_bm_init(&d->unw_done, &d->ed->env, d->nsectors, ED_BM_ZERO, &d->mem_pages);
	ed_bm_init(&d->unw_fl, &d->ed->env, d->nsectors, ED_BM_ZERO, &d->mem_pages);
}

void ed_unw_destroy(struct ed_disk *d)
{
	ed_bm_free(&d->unw);
	ed_bm_free(&d->unw_done);
	ed_bm_free(&d->unw_fl);
}

int ed_unw_prepare(struct ed_disk *d, uint64_t start, uint64_t count)
{
	return ed_bm_prepare(&d->unw, start, count, true);
}

void ed_unw_mark(struct ed_disk *d, uint64_t start, uint64_t count)
{
	(void)ed_bm_set(&d->unw, start, count);
}

bool ed_unw_any(const struct ed_disk *d, uint64_t start, uint64_t count)
{
	return d->unw.count != 0 && ed_bm_any(&d->unw, start, count);
}

/* Does the durable view hold any of [start, start + count) unwritten? */
bool ed_unw_pending(const struct ed_disk *d, uint64_t start, uint64_t count)
{
	return ed_unw_any(d, start, count) ||
	       (d->unw_done.count != 0 && ed_bm_any(&d->unw_done, start, count)) ||
	       (d->unw_fl.count != 0 && ed_bm_any(&d->unw_fl, start, count));
}

/* After a clear of [start, start + count) in m: a leaf left with no bit
 * gives its page back, in whatever order it was filled.  The bits just
 * outside the range are looked at first (two lookups); only if both are
 * clear is the leaf's page counted (ed_bm_compact).  A set left empty is
 * emptied whole. */
static void tidy(struct ed_bm *m, uint64_t start, uint64_t count)
{
	uint64_t end = start + count;
	uint64_t first = start / ED_BM_LEAF_BITS, last = (end - 1) / ED_BM_LEAF_BITS;
	for (uint64_t li = first; li <= last; li += ED_MAX(last - first, 1)) {
		uint64_t lo = li * ED_BM_LEAF_BITS, hi = ED_MIN(lo + ED_BM_LEAF_BITS, m->nbits);
		if ((start > lo && li == first && ed_bm_test(m, start - 1)) ||
		    (end < hi && li == last && ed_bm_test(m, end)))
			continue;
		ed_bm_compact(m, li);
	}
}

/* Leaves of the three sets left without a bit give their pages back (a
 * checkpoint calls it: the write path and the end of a flush cycle do
 * not, as a leaf emptied by one write or cycle is often filled by the
 * next), so what the sets keep follows what was written since the last
 * checkpoint, not the disk. */
void ed_unw_tidy_all(struct ed_disk *d)
{
	struct ed_bm *sets[3] = { &d->unw, &d->unw_done, &d->unw_fl };
	for (int i = 0; i < 3; i++)
		for (uint64_t li = ed_bm_next_leaf(sets[i], 0); li < ed_bm_nleaves(sets[i]);
		     li = ed_bm_next_leaf(sets[i], li + 1))
			ed_bm_compact(sets[i], li);
}

/* Writes to [start, start + count) completed: their unwritten sectors are
 * written now, not yet durable.  (If memory runs out recording them as
 * done, their bits stay in unw: they read as zeros until written again -
 * never as anything else - and the log never calls them written.) */
void ed_unw_written(struct ed_disk *d, uint64_t start, uint64_t count)
{
	if (d->unw.count == 0)
		return;
	uint64_t li = start / ED_BM_LEAF_BITS, b = start % ED_BM_LEAF_BITS;
	void *mk;
	const uint64_t *cw = ed_bm_leaf(&d->unw, li, &mk);
	if (cw == NULL && mk != ED_BM_ONES)
		return;                       /* nothing unwritten in that leaf */
	if (cw != NULL && b + count <= ED_BM_LEAF_BITS) {
		/* The common case - a write within one leaf whose bits are a
		 * page: move them word by word (one lookup per set). */
		uint64_t moved = 0, first = b / 64, last = (b + count - 1) / 64;
		for (uint64_t i = first; i <= last; i++)
			moved |= cw[i];
		if (moved == 0)
			return;
		uint64_t *wu = ed_bm_own(&d->unw, li), *wd = ed_bm_own(&d->unw_done, li);
		if (wu != NULL && wd != NULL) {
			for (uint64_t s = b, left = count; left > 0; ) {
				uint64_t off = s % 64, k = ED_MIN(left, 64 - off);
				uint64_t mask = (k == 64 ? ~0ull : ((1ull << k) - 1)) << off;
				uint64_t bits = wu[s / 64] & mask;
				if (bits != 0) {
					d->unw.count -= (uint64_t)__builtin_popcountll(bits);
					d->unw_done.count += (uint64_t)__builtin_popcountll(bits & ~wd[s / 64]);
					wu[s / 64] &= ~bits;
					wd[s / 64] |= bits;
				}
				s += k;
				left -= k;
			}
			return;
		}
	}
	uint64_t end = start + count;
	for (uint64_t s = start; s < end; ) {
		bool unw;
		uint64_t n = ed_unw_run(d, s, end, &unw);
		if (unw && ed_bm_set(&d->unw_done, s, n) == 0)
			(void)ed_bm_clear(&d->unw, s, n);
		s += n;
	}
}

/* Sectors gone back to the free map by a durable record: no set keeps them. */
void ed_unw_gone(struct ed_disk *d, uint64_t start, uint64_t count)
{
	struct ed_bm *sets[3] = { &d->unw, &d->unw_done, &d->unw_fl };
	for (int i = 0; i < 3; i++)
		if (sets[i]->count != 0 && ed_bm_any(sets[i], start, count)) {
			(void)ed_bm_clear(sets[i], start, count);
			tidy(sets[i], start, count);
		}
}

/* Sectors an uncommitted change let go of: those the disk no longer holds
 * either are free now and lose their bits; the others stay what they were
 * (the committed binding still has them). */
void ed_unw_free(struct ed_disk *d, uint64_t start, uint64_t count)
{
	if (ed_unw_any(d, start, count))
		(void)ed_bm_clear_unless(&d->unw, &d->dfm, start, count);
}

/* The run that starts at `from` (below end) and its kind: *unwritten, and
 * the number of sectors up to end of that kind. */
uint64_t ed_unw_run(const struct ed_disk *d, uint64_t from, uint64_t end, bool *unwritten)
{
	*unwritten = d->unw.count != 0 && ed_bm_test(&d->unw, from);
	uint64_t next = d->unw.count == 0 ? d->nsectors : ed_bm_next(&d->unw, from, !*unwritten);
	return ED_MIN(next, end) - from;
}

/* A set as a part of a union: its bits from sector lo on. */
struct part {
	const struct ed_bm *m;
	uint64_t lo;
};

static inline bool part_has(const struct part *p, uint64_t s)
{
	return p->m->count != 0 && s >= p->lo && ed_bm_test(p->m, s);
}

/* Runs of the union of n parts: is `from` in any of them (*in), and where
 * does that answer change (at most end). */
static uint64_t union_run(const struct part *parts, int n, uint64_t from, uint64_t end, bool *in)
{
	*in = false;
	for (int i = 0; i < n; i++)
		if (part_has(&parts[i], from))
			*in = true;
	if (!*in) {
		uint64_t next = end;
		for (int i = 0; i < n; i++)
			if (parts[i].m->count != 0)
				next = ED_MIN(next, ed_bm_next(parts[i].m, ED_MAX(from, parts[i].lo), true));
		return ED_MAX(next, from + 1) - from;
	}
	/* In: extend while any part holds the next sector. */
	uint64_t pos = from;
	for (bool moved = true; moved && pos < end; ) {
		moved = false;
		for (int i = 0; i < n && pos < end; i++)
			if (part_has(&parts[i], pos)) {
				pos = ed_bm_next(parts[i].m, pos, false);
				moved = true;
			}
	}
	return ED_MIN(pos, end) - from;
}

/* The durable view as parts (*n of them): unw, done, and the running
 * cycle's set from d->fl_pos on.  What the cycle's records have named
 * below fl_pos is durable as written: a record that allocates must not
 * name it unwritten again, nor may a checkpoint carry it (either would
 * turn data a flush acknowledged into zeros after a cut).  Below fl_pos,
 * fl holds nothing else: a sector a record skipped there was in unw or
 * done, and stays in them until it is freed or the cycle ends.  (Leaving
 * fl's bits where they are, rather than clearing what each record names,
 * needs no memory: a clear inside a leaf that is all ones would.)  A
 * checkpoint whose first flush took the set itself (ck_took_fl) carries
 * none of it. */
static int durable_parts(const struct ed_disk *d, uint64_t fl_from, struct part p[3])
{
	p[0] = (struct part){ &d->unw, 0 };
	p[1] = (struct part){ &d->unw_done, 0 };
	p[2] = (struct part){ &d->unw_fl, fl_from };
	return d->ck_took_fl ? 2 : 3;
}

/* The sectors of [start, start + count) the durable view holds unwritten,
 * the cycle's set taken from fl_from on (d->fl_pos, or past it: what the
 * record being built names written or passes over): an allocation record
 * lists them as `unw`.  False if out did not have room (the caller then
 * leaves the block for the next record). */
bool ed_unw_durable_runs(struct ed_disk *d, uint64_t start, uint64_t count, uint64_t fl_from,
                         struct ed_rl *out)
{
	if (d->unw.count == 0 && d->unw_done.count == 0 && d->unw_fl.count == 0)
		return true;
	struct part parts[3];
	int n_parts = durable_parts(d, fl_from, parts);
	uint64_t end = start + count;
	for (uint64_t s = start; s < end; ) {
		bool in;
		uint64_t n = union_run(parts, n_parts, s, end, &in);
		if (in) {
			if (out->n == out->cap)
				return false;
			ed_rl_add(out, s, n);
		}
		s += n;
	}
	return true;
}

/* The next runs of the flush cycle's set from *pos on that a `written`
 * range must name: fl less what was allocated or written again since (unw,
 * done), and less what is not allocated durably yet (d->dfm): no record a
 * replay reads names that unwritten, and the record that will allocate it
 * is built after this cycle's device flush, so it leaves it out of its
 * `unw` ranges (the caller passes it fl_next).  The usual sync - data into
 * new sectors, flush, then the write-back - so needs no `written` record.
 * Adds at most out->cap - out->n runs; *pos moves past what was taken
 * (d->nsectors when nothing is left). */
void ed_unw_flushed_runs(struct ed_disk *d, uint64_t *pos, struct ed_rl *out)
{
	const struct part again[2] = { { &d->unw, 0 }, { &d->unw_done, 0 } };
	uint64_t s = *pos;
	while (s < d->nsectors && out->n < out->cap) {
		if (d->unw_fl.count == 0 || (s = ed_bm_next(&d->unw_fl, s, true)) >= d->nsectors) {
			s = d->nsectors;
			break;
		}
		uint64_t end = ed_bm_next(&d->unw_fl, s, false);
		while (s < end && out->n < out->cap) {
			bool in;
			uint64_t n = union_run(again, 2, s, end, &in);
			if (!in) {
				bool durable = ed_bm_test(&d->dfm, s);
				n = ED_MIN(ed_bm_next(&d->dfm, s, !durable), s + n) - s;
				if (durable)
					ed_rl_add(out, s, n);
			}
			s += n;
		}
	}
	*pos = s;
}

/* The runs a checkpoint must see to: the durable view, less what is not
 * allocated durably (dfm) - the record that will allocate such a sector
 * names it itself, and a replay of what the checkpoint keeps leaves it
 * free.  So the runs cannot change while the checkpoint runs: commits wait
 * for it, a write moves its sectors from unw to done (both in the view),
 * and what an uncommitted change allocates or lets go is outside dfm.
 * The run from s: is it in (*in), and its length (up to the disk's end). */
uint64_t ed_unw_carry_run(const struct ed_disk *d, uint64_t s, bool *in)
{
	struct part parts[3];
	int n_parts = durable_parts(d, d->fl_pos, parts);
	uint64_t n = union_run(parts, n_parts, s, d->nsectors, in);
	/* Usually all of it is allocated durably: a look at the run's own
	 * words, not a search for the end of the allocated region around it
	 * (which may be far: a checkpoint paid 170,000 instructions for it). */
	if (*in && !ed_bm_all(&d->dfm, s, n)) {
		bool durable = ed_bm_test(&d->dfm, s);
		n = ED_MIN(ed_bm_next(&d->dfm, s, !durable), s + n) - s;
		*in = durable;
	}
	return n;
}

/* Does a checkpoint's record carry a run of len sectors?  All runs of at
 * least ck_carry_min; of those at least half as long, as many as *room
 * allows (the first, in sector order); no shorter one: zero.c zeroes it. */
bool ed_unw_carried(const struct ed_disk *d, uint64_t len, uint64_t *room)
{
	if (len >= d->ck_carry_min)
		return true;
	if (len >= d->ck_carry_min / 2 && *room > 0) {
		(*room)--;
		return true;
	}
	return false;
}

/* Before a checkpoint's carry records: which runs they carry, at most cap
 * of them (what the log keeps room for).  A set of cap runs or fewer goes
 * whole (ck_carry_min 1).  A more fragmented one: the longest runs, chosen
 * by a count of the runs by length in powers of two - ck_carry_min is the
 * least power whose runs and longer fit, and the room left takes runs of
 * the power below - and the rest are zeroed (zero.c).  So what is zeroed
 * is the short runs, never one longer than a run carried; one pass over
 * the set's runs, as the records make anyway. */
void ed_unw_carry_plan(struct ed_disk *d, uint64_t cap)
{
	uint64_t hist[64] = { 0 }, runs = 0;
	for (uint64_t s = 0; s < d->nsectors; ) {
		bool in;
		uint64_t n = ed_unw_carry_run(d, s, &in);
		if (in) {
			hist[63 - __builtin_clzll(n)]++;
			runs++;
		}
		s += n;
	}
	d->ck_carry_min = 1;
	d->ck_carry_room = d->z_room0 = 0;
	if (runs <= cap)
		return;
	uint64_t above = 0;
	int k = 64;
	while (k > 0 && above + hist[k - 1] <= cap)
		above += hist[--k];
	d->ck_carry_min = k < 64 ? 1ull << k : UINT64_MAX;
	d->ck_carry_room = d->z_room0 = cap - above;
}

/* The next runs a checkpoint's records carry from *pos on (its plan, above;
 * d->ck_carry_room is used up as they are taken).  Adds at most out->cap -
 * out->n runs; *pos moves past what was looked at (d->nsectors at the end). */
void ed_unw_carry_runs(struct ed_disk *d, uint64_t *pos, struct ed_rl *out)
{
	uint64_t s = *pos;
	while (s < d->nsectors && out->n < out->cap) {
		bool in;
		uint64_t n = ed_unw_carry_run(d, s, &in);
		if (in && ed_unw_carried(d, n, &d->ck_carry_room))
			ed_rl_add(out, s, n);
		s += n;
	}
	*pos = s;
}

/* A flush cycle begins: what was written so far is what it makes durable.
 * (A cycle whose set is still there - its record failed - keeps it, and
 * the writes since wait for the next.) */
bool ed_unw_cycle_begin(struct ed_disk *d)
{
	if (d->unw_fl.count != 0)
		return false;
	struct ed_bm t = d->unw_fl;
	d->unw_fl = d->unw_done;
	d->unw_done = t;
	d->fl_pos = 0;                 /* none of it named yet */
	return true;
}

/* The cycle's records are durable: its set is done with.  Its pages stay
 * (the next cycle's done set takes them: ed_unw_cycle_begin swaps) until
 * a checkpoint gives back what is empty (ed_unw_tidy_all). */
void ed_unw_cycle_end(struct ed_disk *d)
{
	ed_bm_zero(&d->unw_fl);
}

/* Replay: a record's `unw` (set) or `written` (clear) range. */
int ed_unw_replay(struct ed_disk *d, uint64_t start, uint64_t count, bool unwritten)
{
	if (!unwritten && !ed_unw_any(d, start, count))
		return 0;
	int err = unwritten ? ed_bm_set(&d->unw, start, count) : ed_bm_clear(&d->unw, start, count);
	if (err == 0 && !unwritten)
		tidy(&d->unw, start, count);
	return err;
}
