/*
 * pcdisk.c - a disk that loses what it had not flushed when the power is
 * cut: a small NBD server (newstyle, fixed; one client) over a raw image
 * file, for crash-testing the whole stack in QEMU - kernel, virtio driver,
 * exodisk, libOS and libFS - exactly as they run (docs/powercut.md).
 *
 *   pcdisk [options] IMAGE SOCKET
 *     --cut N         the power fails when the N-th request that changes
 *                     the disk (write, write-zeroes, trim, flush; counted
 *                     from 1) arrives, before it is carried out
 *     --mode M        what the power failure keeps of the writes that were
 *                     not flushed: "none" (default: all are lost) or
 *                     "random" (each sector reaches the medium or not,
 *                     independently, by the seed)
 *     --seed S        for --mode random (default 1)
 *     --stats FILE    at the end, write "requests R writes W flushes F
 *                     cut C kept K lost L" (C = 0 when the power never failed)
 *     --kill PIDFILE  when the power fails, SIGKILL the process named there
 *                     (QEMU's -pidfile): the machine stops with the disk
 *
 * The model is a disk with a volatile write cache, as virtio-blk under
 * QEMU is: a write is acknowledged once it is in the cache (here: in this
 * program's memory) and reaches the medium (the image file) only at a
 * flush, or a FUA write for its own sectors.  Reads see the cache over the
 * medium.  When the cut fires, the cache's sectors reach the medium as the
 * mode says, QEMU is killed (--kill), the connection is dropped and pcdisk
 * exits with status 3 (tools/run-qemu.sh with POWERCUT=).  A client that disconnects without a cut leaves the medium as
 * of its last flush plus nothing else: QEMU flushes every drive when it
 * exits, so a clean power-off keeps everything.
 *
 * Exit status: 0 the client disconnected, 3 the power was cut, 1 error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SECTOR 512u

/* ---- the NBD protocol (the numbers are the protocol's) ------------------ */
#define NBD_MAGIC           0x4e42444d41474943ull   /* "NBDMAGIC"          */
#define NBD_IHAVEOPT        0x49484156454f5054ull   /* "IHAVEOPT"          */
#define NBD_REP_MAGIC       0x0003e889045565a9ull
#define NBD_REQ_MAGIC       0x25609513u
#define NBD_SIMPLE_REPLY    0x67446698u

#define NBD_FLAG_FIXED_NEWSTYLE 1u
#define NBD_FLAG_NO_ZEROES      2u
#define NBD_FLAG_C_NO_ZEROES    2u

#define NBD_OPT_EXPORT_NAME 1u
#define NBD_OPT_ABORT       2u
#define NBD_OPT_INFO        6u
#define NBD_OPT_GO          7u

#define NBD_REP_ACK         1u
#define NBD_REP_INFO        3u
#define NBD_REP_ERR_UNSUP   0x80000001u
#define NBD_REP_ERR_INVALID 0x80000003u

#define NBD_INFO_EXPORT     0u
#define NBD_INFO_BLOCK_SIZE 3u

#define NBD_FLAG_HAS_FLAGS         (1u << 0)
#define NBD_FLAG_SEND_FLUSH        (1u << 2)
#define NBD_FLAG_SEND_FUA          (1u << 3)
#define NBD_FLAG_SEND_TRIM         (1u << 5)
#define NBD_FLAG_SEND_WRITE_ZEROES (1u << 6)

#define NBD_CMD_READ         0u
#define NBD_CMD_WRITE        1u
#define NBD_CMD_DISC         2u
#define NBD_CMD_FLUSH        3u
#define NBD_CMD_TRIM         4u
#define NBD_CMD_WRITE_ZEROES 6u
#define NBD_CMD_FLAG_FUA     1u

#define NBD_EIO    5u
#define NBD_EINVAL 22u

#define MAX_REQUEST (32u << 20)

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "pcdisk: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* ---- the disk ----------------------------------------------------------- */

/* The volatile cache: sectors written and not yet flushed, in a hash table
 * of open addressing (sector -> slot), their data in slots. */
struct cache {
	uint64_t *sec;            /* sector + 1 per bucket; 0 = empty   */
	uint32_t *slot;
	uint64_t nbuckets, used;
	uint8_t *data;            /* used * SECTOR bytes                 */
	uint64_t *order;          /* slot -> sector                      */
	uint8_t *onmedium;        /* slot -> written through (FUA) since  */
	uint64_t cap;
};

static int img_fd;
static uint64_t img_sectors;
static struct cache C;

static uint64_t hash(uint64_t s)
{
	s ^= s >> 33;
	s *= 0xff51afd7ed558ccdull;
	s ^= s >> 33;
	return s;
}

static int64_t cache_find(uint64_t s)
{
	if (C.nbuckets == 0)
		return -1;
	for (uint64_t i = hash(s) & (C.nbuckets - 1);; i = (i + 1) & (C.nbuckets - 1)) {
		if (C.sec[i] == 0)
			return -1;
		if (C.sec[i] == s + 1)
			return C.slot[i];
	}
}

static void cache_rehash(uint64_t nb)
{
	free(C.sec);
	free(C.slot);
	C.nbuckets = nb;
	C.sec = calloc(nb, sizeof *C.sec);
	C.slot = calloc(nb, sizeof *C.slot);
	if (C.sec == NULL || C.slot == NULL)
		die("out of memory");
	for (uint64_t k = 0; k < C.used; k++) {
		uint64_t i = hash(C.order[k]) & (nb - 1);
		while (C.sec[i] != 0)
			i = (i + 1) & (nb - 1);
		C.sec[i] = C.order[k] + 1;
		C.slot[i] = (uint32_t)k;
	}
}

/* The cache's copy of sector s, new or not; fua: it is on the medium too. */
static uint8_t *cache_put(uint64_t s, int fua)
{
	int64_t k = cache_find(s);
	if (k >= 0) {
		C.onmedium[k] = (uint8_t)fua;
		return C.data + (uint64_t)k * SECTOR;
	}
	if (C.used == C.cap) {
		C.cap = C.cap ? C.cap * 2 : 4096;
		C.data = realloc(C.data, C.cap * SECTOR);
		C.order = realloc(C.order, C.cap * sizeof *C.order);
		C.onmedium = realloc(C.onmedium, C.cap);
		if (C.data == NULL || C.order == NULL || C.onmedium == NULL)
			die("out of memory");
	}
	if ((C.used + 1) * 2 > C.nbuckets)
		cache_rehash(C.nbuckets ? C.nbuckets * 2 : 8192);
	C.order[C.used] = s;
	C.onmedium[C.used] = (uint8_t)fua;
	uint64_t i = hash(s) & (C.nbuckets - 1);
	while (C.sec[i] != 0)
		i = (i + 1) & (C.nbuckets - 1);
	C.sec[i] = s + 1;
	C.slot[i] = (uint32_t)C.used;
	return C.data + C.used++ * SECTOR;
}

static void medium_write(uint64_t s, const uint8_t *p)
{
	if (pwrite(img_fd, p, SECTOR, (off_t)(s * SECTOR)) != (ssize_t)SECTOR)
		die("writing the image: %s", strerror(errno));
}

/* Sectors in the cache not yet on the medium. */
static uint64_t unflushed(void)
{
	uint64_t n = 0;
	for (uint64_t k = 0; k < C.used; k++)
		n += !C.onmedium[k];
	return n;
}

/* Everything in the cache reaches the medium (a flush), or (random_keep)
 * each sector does or not as the coin says.  Returns the sectors kept. */
static uint64_t cache_drain(int random_keep, uint64_t *rng)
{
	uint64_t kept = 0;
	for (uint64_t k = 0; k < C.used; k++) {
		if (C.onmedium[k])
			continue;
		if (random_keep) {
			*rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
			if ((*rng >> 63) == 0)
				continue;
		}
		medium_write(C.order[k], C.data + k * SECTOR);
		kept++;
	}
	C.used = 0;
	if (C.nbuckets)
		memset(C.sec, 0, C.nbuckets * sizeof *C.sec);
	return kept;
}

static void disk_read(uint64_t s, uint8_t *p)
{
	int64_t k = cache_find(s);
	if (k >= 0) {
		memcpy(p, C.data + (uint64_t)k * SECTOR, SECTOR);
		return;
	}
	ssize_t r = pread(img_fd, p, SECTOR, (off_t)(s * SECTOR));
	if (r < 0)
		die("reading the image: %s", strerror(errno));
	if (r < (ssize_t)SECTOR)
		memset(p + r, 0, SECTOR - (size_t)r);
}

/* ---- the connection ----------------------------------------------------- */

static int conn;

static int get(void *buf, size_t n)
{
	uint8_t *p = buf;
	while (n > 0) {
		ssize_t r = read(conn, p, n);
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void put(const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n > 0) {
		ssize_t r = write(conn, p, n);
		if (r <= 0)
			die("writing to the client: %s", r < 0 ? strerror(errno) : "closed");
		p += r;
		n -= (size_t)r;
	}
}

static void be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void be32(uint8_t *p, uint32_t v) { be16(p, (uint16_t)(v >> 16)); be16(p + 2, (uint16_t)v); }
static void be64(uint8_t *p, uint64_t v) { be32(p, (uint32_t)(v >> 32)); be32(p + 4, (uint32_t)v); }
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t rd32(const uint8_t *p) { return (uint32_t)rd16(p) << 16 | rd16(p + 2); }
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) << 32 | rd32(p + 4); }

static const uint16_t TFLAGS = NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA |
                               NBD_FLAG_SEND_TRIM | NBD_FLAG_SEND_WRITE_ZEROES;

static void opt_reply(uint32_t opt, uint32_t type, const void *data, uint32_t len)
{
	uint8_t h[20];
	be64(h, NBD_REP_MAGIC);
	be32(h + 8, opt);
	be32(h + 12, type);
	be32(h + 16, len);
	put(h, sizeof h);
	if (len)
		put(data, len);
}

/* The handshake; 0 once in transmission, -1 if the client went away. */
static int handshake(void)
{
	uint8_t h[18];
	be64(h, NBD_MAGIC);
	be64(h + 8, NBD_IHAVEOPT);
	be16(h + 16, NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	put(h, sizeof h);
	uint8_t cf[4];
	if (get(cf, 4) < 0)
		return -1;
	int no_zeroes = (rd32(cf) & NBD_FLAG_C_NO_ZEROES) != 0;
	for (;;) {
		uint8_t o[16];
		if (get(o, 16) < 0 || rd64(o) != NBD_IHAVEOPT)
			return -1;
		uint32_t opt = rd32(o + 8), len = rd32(o + 12);
		if (len > 65536)
			return -1;
		uint8_t *data = malloc(len + 1);
		if (data == NULL || get(data, len) < 0) {
			free(data);
			return -1;
		}
		uint64_t size = img_sectors * SECTOR;
		if (opt == NBD_OPT_EXPORT_NAME) {
			uint8_t r[10 + 124] = { 0 };
			be64(r, size);
			be16(r + 8, TFLAGS);
			put(r, no_zeroes ? 10 : sizeof r);
			free(data);
			return 0;
		} else if (opt == NBD_OPT_GO || opt == NBD_OPT_INFO) {
			uint8_t ie[12], bs[14];
			be16(ie, NBD_INFO_EXPORT);
			be64(ie + 2, size);
			be16(ie + 10, TFLAGS);
			opt_reply(opt, NBD_REP_INFO, ie, sizeof ie);
			be16(bs, NBD_INFO_BLOCK_SIZE);
			be32(bs + 2, SECTOR);           /* minimum: whole sectors only */
			be32(bs + 6, 4096);
			be32(bs + 10, MAX_REQUEST);
			opt_reply(opt, NBD_REP_INFO, bs, sizeof bs);
			opt_reply(opt, NBD_REP_ACK, NULL, 0);
			free(data);
			if (opt == NBD_OPT_GO)
				return 0;
		} else if (opt == NBD_OPT_ABORT) {
			opt_reply(opt, NBD_REP_ACK, NULL, 0);
			free(data);
			return -1;
		} else {
			/* Structured replies, metadata contexts, TLS, listing: the
			 * simple protocol is all QEMU needs. */
			opt_reply(opt, NBD_REP_ERR_UNSUP, NULL, 0);
			free(data);
		}
	}
}

static void reply(uint64_t handle, uint32_t error, const void *data, size_t len)
{
	uint8_t r[16];
	be32(r, NBD_SIMPLE_REPLY);
	be32(r + 4, error);
	be64(r + 8, handle);
	put(r, sizeof r);
	if (len)
		put(data, len);
}

/* Stop the machine: SIGKILL the process whose pid the file holds. */
static void kill_machine(const char *pidfile)
{
	if (pidfile == NULL)
		return;
	FILE *f = fopen(pidfile, "r");
	long pid = 0;
	if (f == NULL || fscanf(f, "%ld", &pid) != 1 || pid <= 1)
		die("%s: no process to stop", pidfile);
	fclose(f);
	if (kill((pid_t)pid, SIGKILL) < 0 && errno != ESRCH)
		die("kill %ld: %s", pid, strerror(errno));
}

/* ---- main ---------------------------------------------------------------- */

int main(int argc, char **argv)
{
	uint64_t cut = 0, seed = 1;
	int random_keep = 0;
	const char *stats = NULL, *killfile = NULL;
	int i = 1;
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		const char *a = argv[i];
		if (i + 1 >= argc)
			die("%s needs a value", a);
		const char *v = argv[++i];
		if (strcmp(a, "--cut") == 0)
			cut = strtoull(v, NULL, 0);
		else if (strcmp(a, "--seed") == 0)
			seed = strtoull(v, NULL, 0);
		else if (strcmp(a, "--stats") == 0)
			stats = v;
		else if (strcmp(a, "--kill") == 0)
			killfile = v;
		else if (strcmp(a, "--mode") == 0 && (strcmp(v, "none") == 0 || strcmp(v, "random") == 0))
			random_keep = strcmp(v, "random") == 0;
		else
			die("usage: pcdisk [--cut N] [--mode none|random] [--seed S] [--stats FILE] "
			    "[--kill PIDFILE] IMAGE SOCKET (bad option %s %s)", a, v);
	}
	if (argc - i != 2)
		die("usage: pcdisk [--cut N] [--mode none|random] [--seed S] [--stats FILE] "
		    "[--kill PIDFILE] IMAGE SOCKET");
	const char *image = argv[i], *sock = argv[i + 1];

	img_fd = open(image, O_RDWR);
	if (img_fd < 0)
		die("%s: %s", image, strerror(errno));
	struct stat st;
	if (fstat(img_fd, &st) < 0 || st.st_size < (off_t)SECTOR || st.st_size % SECTOR)
		die("%s: not a whole number of sectors", image);
	img_sectors = (uint64_t)st.st_size / SECTOR;

	int ls = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (ls < 0 || strlen(sock) >= sizeof sa.sun_path)
		die("%s: cannot make the socket", sock);
	strcpy(sa.sun_path, sock);
	unlink(sock);
	if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 1) < 0)
		die("%s: %s", sock, strerror(errno));
	/* QEMU may probe and reconnect: serve connections until one of them
	 * has done transmission (or the power was cut). */
	uint64_t requests = 0, writes = 0, flushes = 0, kept = 0, lost = 0, rng = seed * 0x9e3779b97f4a7c15ull + 1;
	int cut_fired = 0;
	static uint8_t buf[MAX_REQUEST];
	for (int served = 0; !served;) {
		conn = accept(ls, NULL, NULL);
		if (conn < 0)
			die("accept: %s", strerror(errno));
		if (handshake() < 0) {
			close(conn);
			continue;
		}
		served = 1;
		for (;;) {
			uint8_t q[28];
			if (get(q, sizeof q) < 0 || rd32(q) != NBD_REQ_MAGIC)
				break;
			uint16_t flags = rd16(q + 4), type = rd16(q + 6);
			uint64_t handle = rd64(q + 8), off = rd64(q + 16);
			uint32_t len = rd32(q + 24);
			if (type == NBD_CMD_DISC)
				break;
			int changes = type == NBD_CMD_WRITE || type == NBD_CMD_WRITE_ZEROES ||
			              type == NBD_CMD_TRIM || type == NBD_CMD_FLUSH;
			int bad = len > MAX_REQUEST || off % SECTOR || len % SECTOR ||
			          off / SECTOR + len / SECTOR > img_sectors;
			if (type == NBD_CMD_WRITE && len <= MAX_REQUEST && get(buf, len) < 0)
				break;
			if (changes && !bad && ++requests == cut) {
				/* The power fails: this request never happens, and the
				 * machine stops before it can make another. */
				kill_machine(killfile);
				uint64_t n = unflushed();
				if (!random_keep)
					C.used = 0;       /* all of it lost */
				kept = cache_drain(random_keep, &rng);
				lost = n - kept;
				cut_fired = 1;
				break;
			}
			if (bad && type != NBD_CMD_FLUSH) {
				reply(handle, NBD_EINVAL, NULL, 0);
				continue;
			}
			uint64_t s0 = off / SECTOR, n = len / SECTOR;
			switch (type) {
			case NBD_CMD_READ:
				for (uint64_t k = 0; k < n; k++)
					disk_read(s0 + k, buf + k * SECTOR);
				reply(handle, 0, buf, len);
				break;
			case NBD_CMD_WRITE:
			case NBD_CMD_WRITE_ZEROES:
			case NBD_CMD_TRIM:
				/* Trimmed sectors read as zeros here: the model stays
				 * deterministic. */
				writes++;
				for (uint64_t k = 0; k < n; k++) {
					uint8_t *p = cache_put(s0 + k, (flags & NBD_CMD_FLAG_FUA) != 0);
					if (type == NBD_CMD_WRITE)
						memcpy(p, buf + k * SECTOR, SECTOR);
					else
						memset(p, 0, SECTOR);
					if (flags & NBD_CMD_FLAG_FUA)
						medium_write(s0 + k, p);
				}
				reply(handle, 0, NULL, 0);
				break;
			case NBD_CMD_FLUSH:
				flushes++;
				cache_drain(0, NULL);
				reply(handle, 0, NULL, 0);
				break;
			default:
				reply(handle, NBD_EINVAL, NULL, 0);
				break;
			}
		}
		close(conn);
	}
	close(ls);
	unlink(sock);
	if (!cut_fired)
		lost = unflushed();   /* not flushed when the client went away */
	if (fsync(img_fd) < 0 || close(img_fd) < 0)
		die("%s: %s", image, strerror(errno));
	if (stats != NULL) {
		FILE *f = fopen(stats, "w");
		if (f == NULL)
			die("%s: %s", stats, strerror(errno));
		fprintf(f, "requests %" PRIu64 " writes %" PRIu64 " flushes %" PRIu64 " cut %" PRIu64
		        " kept %" PRIu64 " lost %" PRIu64 "\n", requests, writes, flushes,
		        cut_fired ? cut : 0, kept, lost);
		fclose(f);
	}
	if (cut_fired)
		fprintf(stderr, "pcdisk: power cut at request %" PRIu64 ": %" PRIu64 " unflushed sectors, "
		        "%" PRIu64 " kept\n", cut, kept + lost, kept);
	return cut_fired ? 3 : 0;
}
