/*
 * diskmodel.h - a mechanical disk's service time, computed from a parameter
 * table (default: the DEC RZ25 of the thesis's experiments).
 *
 * Under QEMU a virtio disk answers in microseconds whatever the sector, so
 * nothing that depends on seeks (C-LOOK, data placement, disk-directed I/O)
 * would show.  This model says how long a real drive would take: a seek whose
 * time grows with the square root of the distance for short seeks and
 * linearly for long ones, a platter that keeps turning while the drive waits
 * (so the angular position at each moment is known), a transfer at the media
 * rate with track and cylinder skew, and a read-ahead buffer.
 *
 * The model is a pure function: dm_access() takes the drive's state, the
 * virtual time a request reaches the drive and the request, and returns when
 * it completes (updating the state).  Nothing else goes in, so a run is
 * deterministic and independent of host speed.  Integer arithmetic only
 * (nanoseconds), so the kernel can use it without the FPU.  drivers/modeldisk.c
 * turns it into a block device; docs/diskmodel.md explains the parameters.
 */
#ifndef DISKMODEL_H
#define DISKMODEL_H

#include <stdint.h>
#include <stdbool.h>

#define DM_SECTOR_SIZE    512u
#define DM_MAX_CYLINDERS  16384u   /* keeps the fitting sums inside 64 bits */

/* Operations, numbered like enum blk_op. */
#define DM_READ   0
#define DM_WRITE  1
#define DM_FLUSH  2

/* The parameter table.  Times are in nanoseconds. */
struct dm_params {
	const char *name;
	uint32_t cylinders;
	uint32_t heads;           /* tracks per cylinder                                    */
	uint32_t spt;             /* sectors per track (no zones: every track the same)     */
	uint32_t rpm;
	uint32_t seek_avg_ns;     /* mean seek over random (from, to) cylinder pairs        */
	uint32_t seek_1cyl_ns;    /* seek to the next cylinder                              */
	uint32_t seek_knee;       /* distance (cylinders) where the sqrt curve turns linear */
	uint32_t head_switch_ns;  /* switch to another surface in the same cylinder         */
	uint32_t overhead_ns;     /* command processing before each request                 */
	uint32_t buffer_sectors;  /* read-ahead buffer; 0 = no read-ahead                   */
	uint32_t bus_bytes_per_s; /* drive-to-host rate for data already in the buffer      */
};

/* The DEC RZ25 (thesis Table 5.1); docs/diskmodel.md derives each number. */
extern const struct dm_params dm_rz25;

/* The parameters plus what dm_init derives from them; read-only afterwards. */
struct dm_disk {
	struct dm_params p;
	uint64_t nsectors;        /* capacity */
	uint64_t rev_ns;          /* one revolution */
	uint32_t track_skew;      /* sectors a track's start is rotated from the last one's:  */
	uint32_t cyl_skew;        /* enough to cover a head switch / one-cylinder seek         */
	/* The seek curve is seek(d) = seek_1cyl + fit_num * G(d) / fit_den,
	 * G(d) = 65536 * (sqrt(d) - 1) up to the knee and its tangent beyond. */
	uint64_t fit_num, fit_den;
	uint64_t knee_root;       /* 65536 * sqrt(knee) */
};

/* Where the heads are. */
struct dm_pos {
	uint32_t cyl, head;
};

/* The drive's changing state.  Copy it to ask "what if" without committing. */
struct dm_state {
	struct dm_pos pos;        /* head position at ra_time (or after the last request) */
	uint64_t free_at;         /* when the drive finishes what it has been given       */
	/* Read-ahead after a read: the buffer holds sectors [ra_used, ra_next);
	 * while ra_running the drive keeps reading, and it reached ra_next at
	 * ra_time, until the buffer holds buffer_sectors. */
	bool ra_valid, ra_running;
	uint64_t ra_used, ra_next, ra_time;
};

/* How one request's time was spent. */
struct dm_timing {
	uint64_t start;           /* drive starts work: arrival + overhead, or later if busy */
	uint64_t seek;            /* seek or head switch before the first sector             */
	uint64_t rotate;          /* rotational wait for the first sector                    */
	uint64_t transfer;        /* from the first sector to completion                      */
	uint64_t done;            /* completion time                                         */
	bool hit;                 /* (partly) served from the read-ahead buffer              */
};

/* Check p and derive the rest; 0, or -1 if the table is inconsistent. */
int      dm_init(struct dm_disk *d, const struct dm_params *p);
/* An idle drive, heads on cylinder 0, nothing buffered, at time 0. */
void     dm_state_init(struct dm_state *st);

/*
 * A request reaches the drive at virtual time `arrival`; the drive serves
 * requests one at a time in the order given.  Returns the completion time and
 * updates *st; *tm (may be NULL) gets the breakdown.  The request must lie on
 * the disk (the block layer has checked it).
 */
uint64_t dm_access(const struct dm_disk *d, struct dm_state *st, uint64_t arrival,
                   int op, uint64_t sector, uint32_t nsectors, struct dm_timing *tm);

/* Pieces of the model. */
uint64_t dm_seek_ns(const struct dm_disk *d, uint32_t distance);
uint64_t dm_transfer_ns(const struct dm_disk *d, uint32_t nsectors);   /* media time, no switches */

/* Analytic figures, from the same parameters. */
uint64_t dm_mean_seek_ns(const struct dm_disk *d);      /* over random cylinder pairs          */
uint64_t dm_mean_access_ns(const struct dm_disk *d);    /* mean seek (+ head switch) + half a turn */
/* Mean completion-to-completion time of random requests of nsectors each:
 * issued one at a time (overhead exposed) or kept queued at the drive
 * (overhead overlapped with the previous request). */
uint64_t dm_mean_random_ns(const struct dm_disk *d, uint32_t nsectors, bool queued);
/* Sustained sequential rate with requests kept queued: the "spiral" rate. */
uint64_t dm_seq_bytes_per_s(const struct dm_disk *d);
/* Mean time per request when each sequential request is issued only after
 * the previous one completed: a write misses the sector it wants and waits
 * for it to come round again; a read finds it in the read-ahead buffer.
 * For reads this is exact while the platter is the bottleneck; when the
 * command overhead plus bus transfer take longer, the buffer fills, the
 * drive stops and must catch the platter again, and this is a lower bound. */
uint64_t dm_mean_sync_seq_ns(const struct dm_disk *d, uint32_t nsectors, int op);

#endif /* DISKMODEL_H */
