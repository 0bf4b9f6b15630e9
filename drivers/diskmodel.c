/*
 * diskmodel.c - service times of a mechanical disk (see diskmodel.h and
 * docs/diskmodel.md).
 *
 * Geometry: sector numbers run along a track, then to the next surface of the
 * same cylinder, then to the next cylinder.  Each track's first sector is
 * rotated ("skewed") from the previous track's by just enough sectors to cover
 * the head switch or one-cylinder seek, so a long sequential transfer loses
 * only that much per track.  The platters turn from virtual time 0 without
 * stopping: sector slot j of a track passes under the head at phase
 * j * rev / spt of every revolution, so the rotational wait of any request
 * follows from the time it is ready and where its first sector sits.
 *
 * All arithmetic is on 64-bit integers in nanoseconds.
 */
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "drivers/diskmodel.h"

/*
 * DEC RZ25.  From thesis Table 5.1: 4412 rpm, 512-byte sectors, 14 ms mean
 * seek (20.8 ms mean access = 14 ms + half a revolution of 6.8 ms), 60 KB
 * buffer, 2110 KB/s spiral rate, 42 random I/Os per second, 426 MB.
 * Chosen: 9 heads and 62 sectors per track; 1492 cylinders then give
 * 832,536 sectors = 426.3 MB.  A 0.8 ms head switch and a 2.8 ms
 * one-cylinder seek make skews of 4 and 13 sectors and a spiral rate of
 * 2109 KB/s.  The knee at a quarter of the stroke gives a 28 ms full-stroke
 * seek.  Overhead: 1/42 s minus 20.8 ms access minus one sector's transfer.
 * The bus is a 5 MB/s synchronous SCSI-2 bus.
 */
const struct dm_params dm_rz25 = {
	.name            = "RZ25",
	.cylinders       = 1492,
	.heads           = 9,
	.spt             = 62,
	.rpm             = 4412,
	.seek_avg_ns     = 14000000,
	.seek_1cyl_ns    = 2800000,
	.seek_knee       = 373,
	.head_switch_ns  = 800000,
	.overhead_ns     = 2790000,
	.buffer_sectors  = 120,
	.bus_bytes_per_s = 5000000,
};

/* ---- integer helpers --------------------------------------------------- */

/* floor(a * b / c) without overflow in the product; the quotient must fit
 * in 64 bits.  Schoolbook: a 128-bit product from 32-bit halves, then
 * binary long division. */
static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;
	uint64_t lo = (mid << 32) | (uint32_t)p00;
	uint64_t hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);

	uint64_t q = 0, r = hi % c;
	for (int i = 63; i >= 0; i--) {
		uint64_t carry = r >> 63;          /* the shift below would lose it */
		r = (r << 1) | ((lo >> i) & 1);
		q <<= 1;
		if (carry || r >= c) {
			r -= c;
			q |= 1;
		}
	}
	return q;
}

/* floor(sqrt(x)), one result bit per step. */
static uint64_t isqrt(uint64_t x)
{
	uint64_t root = 0, bit = 1ull << 62;
	while (bit > x)
		bit >>= 2;
	while (bit != 0) {
		if (x >= root + bit) {
			x -= root + bit;
			root = (root >> 1) + bit;
		} else {
			root >>= 1;
		}
		bit >>= 2;
	}
	return root;
}

static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* ---- geometry and rotation --------------------------------------------- */

struct loc {
	uint64_t track;           /* cyl * heads + head */
	uint32_t cyl, head, sec;
};

static struct loc locate(const struct dm_disk *d, uint64_t sector)
{
	struct loc l;
	l.track = sector / d->p.spt;
	l.sec = (uint32_t)(sector % d->p.spt);
	l.cyl = (uint32_t)(l.track / d->p.heads);
	l.head = (uint32_t)(l.track % d->p.heads);
	return l;
}

/* Angular slot of sector 0 of a track: each head switch adds track_skew,
 * each cylinder step cyl_skew. */
static uint32_t track_origin(const struct dm_disk *d, const struct loc *l)
{
	uint64_t per_cyl = (uint64_t)(d->p.heads - 1) * d->track_skew + d->cyl_skew;
	return (uint32_t)((l->cyl * per_cyl + (uint64_t)l->head * d->track_skew) % d->p.spt);
}

/* Time from the start of a revolution to the start of slot m; m may exceed
 * spt, counting on into later revolutions. */
static uint64_t slot_phase(const struct dm_disk *d, uint64_t m)
{
	return (m / d->p.spt) * d->rev_ns + (m % d->p.spt) * d->rev_ns / d->p.spt;
}

/* First moment at or after t when slot j (< spt) begins to pass the head. */
static uint64_t next_slot(const struct dm_disk *d, uint64_t t, uint32_t j)
{
	uint64_t turn = t - t % d->rev_ns;
	uint64_t at = turn + slot_phase(d, j);
	return at >= t ? at : at + d->rev_ns;
}

/* Time to move the heads from p to the track of l. */
static uint64_t move_ns(const struct dm_disk *d, const struct dm_pos *p, const struct loc *l)
{
	if (p->cyl != l->cyl)
		return dm_seek_ns(d, p->cyl > l->cyl ? p->cyl - l->cyl : l->cyl - p->cyl);
	return p->head != l->head ? d->p.head_switch_ns : 0;
}

/*
 * The mechanical part of a transfer: starting at time t with the heads at
 * *p, move to `sector`, wait for it, and pass n sectors under the head,
 * switching tracks (and waiting out the skew) as needed.  Returns the moment
 * the last sector has passed; *p ends on the last track.  *move and *wait
 * get the positioning and rotational wait before the first sector.
 */
static uint64_t media(const struct dm_disk *d, struct dm_pos *p, uint64_t t,
                      uint64_t sector, uint32_t n, uint64_t *move, uint64_t *wait)
{
	*move = *wait = 0;
	if (n == 0)
		return t;
	struct loc l = locate(d, sector);
	bool first = true;
	for (;;) {
		uint64_t m = move_ns(d, p, &l);
		p->cyl = l.cyl;
		p->head = l.head;
		uint32_t slot = (l.sec + track_origin(d, &l)) % d->p.spt;
		uint64_t begin = next_slot(d, t + m, slot);
		if (first) {
			*move = m;
			*wait = begin - (t + m);
			first = false;
		}
		uint32_t here = d->p.spt - l.sec;
		if (here > n)
			here = n;
		/* The revolution containing `begin`, plus the end of the last slot. */
		t = begin - slot_phase(d, slot) + slot_phase(d, (uint64_t)slot + here);
		n -= here;
		if (n == 0)
			return t;
		sector += here;
		l = locate(d, sector);
	}
}

/* ---- the seek curve ---------------------------------------------------- */

/* 65536 * g(d): sqrt(d) - 1 up to the knee, then the tangent line there, so
 * the curve and its slope are continuous. */
static uint64_t curve(const struct dm_disk *d, uint32_t dist)
{
	if (dist <= d->p.seek_knee)
		return isqrt((uint64_t)dist << 32) - 65536;
	uint64_t beyond = dist - d->p.seek_knee;
	return d->knee_root - 65536 + (beyond << 31) / d->knee_root;
}

uint64_t dm_seek_ns(const struct dm_disk *d, uint32_t distance)
{
	if (distance == 0)
		return 0;
	return d->p.seek_1cyl_ns + muldiv(d->fit_num, curve(d, distance), d->fit_den);
}

/*
 * Fit the curve's scale so the mean over random cylinder pairs is the spec.
 * For independent uniform start and end cylinders, distance 0 has
 * probability 1/C and distance k >= 1 has 2(C-k)/C^2.  With
 * seek(k) = t1 + a*g(k) the mean is linear in a:
 *     avg = t1 (C-1)/C + a * sum 2(C-k) g(k) / C^2,
 * so a = (avg C^2 - t1 C (C-1)) / sum 2(C-k) g(k).
 */
static int fit_seek(struct dm_disk *d)
{
	uint64_t c = d->p.cylinders, t1 = d->p.seek_1cyl_ns;
	uint64_t want = (uint64_t)d->p.seek_avg_ns * c * c;
	uint64_t base = t1 * c * (c - 1);
	if (want <= base)
		return -1;            /* the mean cannot be that close to the minimum */
	d->knee_root = isqrt((uint64_t)d->p.seek_knee << 32);
	uint64_t sum = 0;
	for (uint32_t k = 1; k < c; k++)
		sum += 2 * (c - k) * curve(d, k);
	if (sum == 0)
		return -1;
	d->fit_num = want - base;
	d->fit_den = sum;
	return 0;
}

/* Fewest whole sectors whose passage covers a switch of `ns`, whichever
 * slot it starts at (slot boundaries are rounded down to the nanosecond). */
static uint32_t skew_for(const struct dm_disk *d, uint64_t ns)
{
	uint64_t k = ((ns + 1) * d->p.spt + d->rev_ns - 1) / d->rev_ns;
	return (uint32_t)k;
}

int dm_init(struct dm_disk *d, const struct dm_params *p)
{
	__builtin_memset(d, 0, sizeof(*d));
	if (p->cylinders < 2 || p->cylinders > DM_MAX_CYLINDERS ||
	    p->heads < 1 || p->heads > 64 || p->spt < 1 || p->spt > 1024 ||
	    p->rpm < 60 || p->rpm > 100000 || p->seek_1cyl_ns == 0 ||
	    p->seek_avg_ns > 1000000000u || p->seek_knee < 1 ||
	    (p->buffer_sectors > 0 && p->bus_bytes_per_s == 0))
		return -1;
	d->p = *p;
	d->nsectors = (uint64_t)p->cylinders * p->heads * p->spt;
	d->rev_ns = (60ull * 1000000000ull + p->rpm / 2) / p->rpm;
	if (fit_seek(d) != 0)
		return -1;
	/* Skew must fit in a track, and the stroke must be sane (this also
	 * bounds the sums in dm_mean_seek_ns). */
	d->track_skew = skew_for(d, p->head_switch_ns);
	d->cyl_skew = skew_for(d, dm_seek_ns(d, 1));
	if (d->track_skew >= p->spt || d->cyl_skew >= p->spt ||
	    dm_seek_ns(d, p->cylinders - 1) > 1000000000u ||
	    p->head_switch_ns > dm_seek_ns(d, 1))
		return -1;
	return 0;
}

void dm_state_init(struct dm_state *st)
{
	__builtin_memset(st, 0, sizeof(*st));
}

/* ---- one request ------------------------------------------------------- */

uint64_t dm_transfer_ns(const struct dm_disk *d, uint32_t nsectors)
{
	return slot_phase(d, nsectors);
}

static uint64_t bus_ns(const struct dm_disk *d, uint32_t n)
{
	return muldiv((uint64_t)n * DM_SECTOR_SIZE, 1000000000ull, d->p.bus_bytes_per_s);
}

/* Where the read-ahead stops: the buffer is full, or the disk ends. */
struct stop {
	uint64_t sector;          /* first sector not read ahead */
	uint64_t at;              /* when reading stopped (or will stop) */
	struct dm_pos pos;        /* heads then */
};

static struct stop readahead_stop(const struct dm_disk *d, const struct dm_state *st)
{
	struct stop s = { st->ra_next, st->ra_time, st->pos };
	if (st->ra_running) {
		uint64_t limit = st->ra_used + d->p.buffer_sectors;
		if (limit > d->nsectors)
			limit = d->nsectors;
		uint64_t mv, wt;
		s.sector = limit;
		s.at = media(d, &s.pos, st->ra_time, st->ra_next, (uint32_t)(limit - st->ra_next), &mv, &wt);
	}
	return s;
}

/* A read whose first sector is in (or on its way into) the buffer. */
static uint64_t read_hit(const struct dm_disk *d, struct dm_state *st, uint64_t t0,
                         uint64_t sector, uint32_t n, const struct stop *stop)
{
	uint64_t end = sector + n, mv, wt;
	uint64_t bus_done = t0 + bus_ns(d, n);
	if (st->ra_running && t0 < stop->at) {
		/* Still reading ahead: the drive carries on to the end of the request. */
		uint64_t media_done = media(d, &st->pos, st->ra_time, st->ra_next,
		                            (uint32_t)(end - st->ra_next), &mv, &wt);
		st->ra_next = end;
		st->ra_time = media_done;
		st->ra_used = end;
		return max64(bus_done, media_done);
	}
	if (end <= stop->sector) {
		/* All of it is already in the buffer; the drive stays stopped. */
		st->pos = stop->pos;
		st->ra_next = stop->sector;
		st->ra_time = stop->at;
		st->ra_used = end;
		st->ra_running = false;
		return bus_done;
	}
	/* The buffer filled and reading stopped; fetch the rest afresh. */
	st->pos = stop->pos;
	uint64_t media_done = media(d, &st->pos, t0, stop->sector,
	                            (uint32_t)(end - stop->sector), &mv, &wt);
	st->ra_next = st->ra_used = end;
	st->ra_time = media_done;
	st->ra_running = true;
	return max64(bus_done, media_done);
}

uint64_t dm_access(const struct dm_disk *d, struct dm_state *st, uint64_t arrival,
                   int op, uint64_t sector, uint32_t nsectors, struct dm_timing *tm)
{
	struct dm_timing local;
	if (tm == NULL)
		tm = &local;
	__builtin_memset(tm, 0, sizeof(*tm));
	/* The drive decodes a command while it may still be busy with the
	 * previous one, so overhead overlaps with queued work. */
	uint64_t t0 = max64(arrival + d->p.overhead_ns, st->free_at);
	tm->start = t0;
	uint64_t done = t0;

	if (op == DM_READ || op == DM_WRITE) {
		struct stop stop = { 0, 0, st->pos };
		if (st->ra_valid)
			stop = readahead_stop(d, st);
		if (op == DM_READ && st->ra_valid && sector >= st->ra_used && sector < stop.sector) {
			done = read_hit(d, st, t0, sector, nsectors, &stop);
			tm->hit = true;
		} else {
			/* A miss.  If the drive was reading ahead, the heads are near
			 * where it stopped (or, if still going, where it began). */
			if (st->ra_valid && !(st->ra_running && t0 < stop.at))
				st->pos = stop.pos;
			done = media(d, &st->pos, t0, sector, nsectors, &tm->seek, &tm->rotate);
			st->ra_valid = (op == DM_READ && d->p.buffer_sectors > 0);
			st->ra_running = st->ra_valid;
			st->ra_used = st->ra_next = sector + nsectors;
			st->ra_time = done;
		}
	}
	/* DM_FLUSH: the model has no write cache, so a flush is only a command. */
	tm->transfer = done - t0 - tm->seek - tm->rotate;
	tm->done = done;
	st->free_at = done;
	return done;
}

/* ---- analytic figures -------------------------------------------------- */

uint64_t dm_mean_seek_ns(const struct dm_disk *d)
{
	uint64_t c = d->p.cylinders, sum = 0;
	for (uint32_t k = 1; k < c; k++)
		sum += 2 * (c - k) * dm_seek_ns(d, k);
	return sum / (c * c);
}

uint64_t dm_mean_access_ns(const struct dm_disk *d)
{
	/* Same cylinder (1/C) but another surface ((H-1)/H): a head switch. */
	uint64_t c = d->p.cylinders, h = d->p.heads;
	return dm_mean_seek_ns(d) + d->p.head_switch_ns * (h - 1) / (h * c) + d->rev_ns / 2;
}

/* Expected cost of the track boundaries a run of n sectors crosses, n/spt
 * of them on average, one in `heads` being a cylinder boundary. */
static uint64_t crossings_ns(const struct dm_disk *d, uint64_t n_boundaries_num)
{
	uint64_t h = d->p.heads, spt = d->p.spt;
	uint64_t skew = (h - 1) * d->track_skew + d->cyl_skew;   /* per cylinder */
	return muldiv(n_boundaries_num * skew, d->rev_ns, h * spt * spt);
}

uint64_t dm_mean_random_ns(const struct dm_disk *d, uint32_t nsectors, bool queued)
{
	/* A random start crosses each of the n-1 inner sector gaps with
	 * probability 1/spt. */
	uint64_t t = dm_mean_access_ns(d) + dm_transfer_ns(d, nsectors) +
	             crossings_ns(d, nsectors - 1);
	return queued ? t : t + d->p.overhead_ns;
}

uint64_t dm_seq_bytes_per_s(const struct dm_disk *d)
{
	/* A cylinder's sectors pass in its own slots plus the skews. */
	uint64_t h = d->p.heads, spt = d->p.spt;
	uint64_t slots = h * spt + (h - 1) * d->track_skew + d->cyl_skew;
	return muldiv(h * spt * DM_SECTOR_SIZE * spt, 1000000000ull, slots * d->rev_ns);
}

uint64_t dm_mean_sync_seq_ns(const struct dm_disk *d, uint32_t nsectors, int op)
{
	uint64_t media_ns = dm_transfer_ns(d, nsectors) + crossings_ns(d, nsectors);
	if (op == DM_READ && d->p.buffer_sectors > 0)
		return max64(d->p.overhead_ns + bus_ns(d, nsectors), media_ns);
	/* The next sector passed while the command was decoded: wait whole
	 * revolutions until it is back (none if there is no overhead). */
	uint64_t turns = (d->p.overhead_ns + d->rev_ns - 1) / d->rev_ns;
	return turns * d->rev_ns + media_ns;
}
