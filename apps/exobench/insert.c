/*
 * insert.c - exobench insert: file insertion (thesis section 5.4.1, Table
 * A.5).  Insert 16 bytes into the middle of every file of a set, then read
 * every file sequentially, two ways:
 *
 *   indexed  the file is an exonode whose application-defined data (entry
 *            0) is an index: the ordered list of pieces (sector, length)
 *            that make up the file, each inside one of the exonode's
 *            extent entries.  An insert reads the rest of the 4 KB block
 *            holding the insertion point, splits the extent at the end of
 *            that block (ED_OP_EXONODE_SPLIT), writes the 16 new bytes and
 *            the rest of the block to a new extent, replaces the index, and
 *            writes the exonode back: constant work whatever the size.
 *   copy     the file is an exonode with one extent (entry 0 holds its
 *            length); an insert grows the extent by a sector and copies
 *            everything from the insertion point on 16 bytes further, one
 *            4 KB block at a time (read it, write it), as a program on a
 *            conventional file interface must; then the exonode is
 *            written back.
 *
 *   exobench insert [-u UNIT] [-r RUNS] [-s SIZE:FILES,...]
 *
 * Default sets: 100 x 10 KB, 100 x 100 KB, 10 x 1,000 KB (KB = 1024
 * bytes).  Reads go piece by piece (indexed) or straight through (copy),
 * in requests of at most 64 KB, one at a time, and are checked byte for
 * byte against the file with the insertion.  Each file owns a region: its
 * exonode block, its data, then 17 sectors of room for the new extent
 * (indexed) or the growth (copy).  Every step that changes metadata ends
 * durable (written back); data is written before the metadata naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "apps/exobench/bench.h"
#include "apps/exobench/org.h"
#include "libos/exo.h"

#define BLOCK 4096u
#define CHUNK (64u * 1024)
#define INS 16u
#define ROOM 17u                      /* sectors after a file's data */
#define XNLEN 256u
#define MAXPIECES 4

/* The index (entry 0 of an indexed file's exonode): pieces in file order. */
struct piece {
	uint64_t sector;                  /* where the piece starts on disk */
	uint32_t len;                     /* bytes                           */
	uint32_t entry;                   /* the extent entry holding it     */
};
struct index {
	uint32_t n, pad;
	uint64_t size;                    /* the file's length in bytes      */
	struct piece p[MAXPIECES];
};

struct set {
	uint32_t size;
	int nfiles;
};

static uint64_t area;
static uint32_t fsect, rsect;         /* sectors of data, of a file's region */
static struct ed_cap rc, wc;
static uint8_t *buf, *want, *blk;     /* a file, the expected file, one block */
static const uint8_t ins[INS] = "sixteen bytes!!";

static uint64_t region(int i) { return area + (uint64_t)i * rsect; }

static struct ed_protector xprot(int i)
{
	struct ed_protector p = edc_prot_xn(B.unit, region(i), 0, &rc, &wc);
	p.length = XNLEN;
	return p;
}

static uint8_t orig(int i, uint64_t j)
{
	return (uint8_t)(j * 31 + (uint64_t)i * 7 + (j >> 9));
}

static int xfer(const struct ed_protector *p, int write, uint64_t sector, void *mem, uint64_t bytes)
{
	for (uint64_t off = 0; off < bytes; off += CHUNK) {
		uint64_t n = bytes - off < CHUNK ? bytes - off : CHUNK;
		int r = io_sync(p, write, sector + off / ED_SECTOR, (uint8_t *)mem + off, n);
		if (r != 0)
			return r;
	}
	return 0;
}

static uint64_t round_up(uint64_t x) { return (x + ED_SECTOR - 1) / ED_SECTOR * ED_SECTOR; }

/* ---- set-up and tear-down (not timed) ------------------------------------ */

static int create(int i, uint32_t size, int indexed)
{
	struct ed_protector p = xprot(i);
	uint64_t data = region(i) + 1;
	int64_t r = edc_xn_alloc(B.c, &p);
	if (r == 0)
		r = edc_xn_add_extent(B.c, &p, 1, data, size);
	if (r < 0)
		return (int)r;
	struct index x;
	memset(&x, 0, sizeof x);
	x.size = size;
	x.n = indexed ? 1 : 0;
	x.p[0].sector = data;
	x.p[0].len = size;
	x.p[0].entry = 1;
	r = edc_xn_add_data(B.c, &p, 0, &x, sizeof x);
	if (r < 0)
		return (int)r;
	for (uint64_t j = 0; j < size; j++)
		buf[j] = orig(i, j);
	r = xfer(&p, 1, data, buf, size);
	return r != 0 ? (int)r : edc_xn_write_sync(B.c, &p);
}

static int destroy(int i)
{
	struct ed_protector p = xprot(i);
	int64_t r = edc_xn_dealloc(B.c, &p);
	return r != 0 ? (int)r : edc_xn_write_sync(B.c, &p);
}

/* ---- the two inserts -------------------------------------------------------- */

static int insert_indexed(int i, uint32_t size)
{
	struct ed_protector p = xprot(i);
	uint64_t data = region(i) + 1, m = size / 2;
	uint64_t e = (m / BLOCK + 1) * BLOCK;          /* end of m's block */
	uint64_t from = m / ED_SECTOR * ED_SECTOR;     /* first sector to read */
	if (e >= size)
		return ED_E_RANGE;                      /* the sets never do this */
	/* The rest of m's block, then the new piece: 16 bytes and that rest. */
	int r = xfer(&p, 0, data + from / ED_SECTOR, blk, e - from);
	if (r != 0)
		return r;
	static uint8_t piece[BLOCK + INS + ED_SECTOR];
	uint64_t plen = INS + (e - m);
	memset(piece, 0, sizeof piece);
	memcpy(piece, ins, INS);
	memcpy(piece + INS, blk + (m - from), e - m);
	int64_t tail = edc_xn_split(B.c, &p, 1, e, 2);
	if (tail < 0)
		return (int)tail;
	uint64_t at = data + fsect;                    /* the file's room */
	int64_t ne = edc_xn_add_extent(B.c, &p, 3, at, round_up(plen));
	if (ne < 0)
		return (int)ne;
	r = xfer(&p, 1, at, piece, round_up(plen));
	if (r != 0)
		return r;
	struct index x;
	memset(&x, 0, sizeof x);
	x.n = 3;
	x.size = size + INS;
	x.p[0] = (struct piece){ data, (uint32_t)m, 1 };
	x.p[1] = (struct piece){ at, (uint32_t)plen, 3 };
	x.p[2] = (struct piece){ data + e / ED_SECTOR, (uint32_t)(size - e), 2 };
	int64_t d = edc_xn_add_data(B.c, &p, 0, &x, sizeof x);
	if (d < 0)
		return (int)d;
	return edc_xn_write_sync(B.c, &p);
}

static int insert_copy(int i, uint32_t size)
{
	struct ed_protector p = xprot(i);
	uint64_t data = region(i) + 1, m = size / 2;
	/* One more sector at the end, merged into the file's extent. */
	int64_t r = edc_xn_add_extent(B.c, &p, 2, data + fsect, ED_SECTOR);
	if (r >= 0)
		r = edc_xn_combine(B.c, &p, 1, 2);
	if (r < 0)
		return (int)r;
	uint8_t carry[INS];
	memcpy(carry, ins, INS);
	for (uint64_t b = m / BLOCK * BLOCK; b < size; b += BLOCK) {
		uint64_t len = size - b < BLOCK ? size - b : BLOCK;
		int e = xfer(&p, 0, data + b / ED_SECTOR, blk, len);
		if (e != 0)
			return e;
		/* Bytes from the insertion point on move 16 further: the 16 that
		 * fall off this block's end start the next one. */
		uint64_t k = b < m ? m - b : 0;
		uint8_t out[INS];
		memcpy(out, blk + len - INS, INS);
		memmove(blk + k + INS, blk + k, len - k - INS);
		memcpy(blk + k, carry, INS);
		memcpy(carry, out, INS);
		e = xfer(&p, 1, data + b / ED_SECTOR, blk, len);
		if (e != 0)
			return e;
	}
	memset(blk, 0, ED_SECTOR);
	memcpy(blk, carry, INS);
	int e = xfer(&p, 1, data + fsect, blk, ED_SECTOR);
	if (e != 0)
		return e;
	struct index x;
	memset(&x, 0, sizeof x);
	x.size = size + INS;
	x.p[0] = (struct piece){ data, (uint32_t)(size + INS), 1 };
	r = edc_xn_add_data(B.c, &p, 0, &x, sizeof x);
	return r < 0 ? (int)r : edc_xn_write_sync(B.c, &p);
}

/* Read file i from start to end into buf; its length in *len. */
static int read_file(int i, int indexed, uint64_t *len)
{
	struct ed_protector p = xprot(i);
	struct index x;
	int64_t r = edc_xn_read_data(B.c, &p, 0, &x, sizeof x);
	if (r != (int64_t)sizeof x || x.n > MAXPIECES)
		return r < 0 ? (int)r : -1;
	*len = x.size;
	if (!indexed)
		return xfer(&p, 0, x.p[0].sector, buf, round_up(x.size));
	uint64_t at = 0;
	for (uint32_t k = 0; k < x.n; k++) {
		/* A piece that does not end on a sector is read whole into
		 * scratch and copied, so its neighbour's bytes are not hit. */
		uint64_t n = x.p[k].len;
		if (n % ED_SECTOR == 0) {
			r = xfer(&p, 0, x.p[k].sector, buf + at, n);
		} else {
			static uint8_t tmp[CHUNK];
			r = 0;
			for (uint64_t o = 0; o < n && r == 0; o += CHUNK) {
				uint64_t c = n - o < CHUNK ? n - o : CHUNK;
				r = xfer(&p, 0, x.p[k].sector + o / ED_SECTOR, tmp, round_up(c));
				memcpy(buf + at + o, tmp, c);
			}
		}
		if (r != 0)
			return (int)r;
		at += n;
	}
	return at == x.size ? 0 : -1;
}

static int check(int i, uint32_t size, uint64_t len)
{
	uint64_t m = size / 2;
	if (len != size + INS)
		return 0;
	for (uint64_t j = 0; j < len; j++)
		want[j] = j < m ? orig(i, j) : j < m + INS ? ins[j - m] : orig(i, j - INS);
	return memcmp(buf, want, len) == 0;
}

/* ---- the experiment ------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: exobench insert [-u UNIT] [-r RUNS] [-s SIZE:FILES,...]  (SIZE in bytes)\n");
	exit(2);
}

#define MAXSETS 8

int insert_main(int argc, char **argv)
{
	int unit = 0, runs = 5, nsets = 3;
	struct set sets[MAXSETS] = { { 10240, 100 }, { 102400, 100 }, { 1024000, 10 } };
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i++];
		if (strcmp(o, "-s") == 0) {
			nsets = 0;
			for (char *q = argv[i]; *q && nsets < MAXSETS;) {
				char *end;
				long sz = strtol(q, &end, 10);
				if (*end != ':')
					usage();
				long nf = strtol(end + 1, &end, 10);
				if (sz < 2 * (long)BLOCK + 512 || sz % ED_SECTOR || sz > 4 << 20 || nf < 1 || nf > 1000)
					usage();
				sets[nsets++] = (struct set){ (uint32_t)sz, (int)nf };
				q = *end == ',' ? end + 1 : end;
				if (*end != ',' && *end != 0)
					usage();
			}
			continue;
		}
		long v = arg_num(argv[i], usage);
		if (strcmp(o, "-u") == 0)
			unit = (int)v;
		else if (strcmp(o, "-r") == 0)
			runs = (int)v;
		else
			usage();
	}
	if (runs < 1 || runs > BENCH_MAXRUNS || nsets < 1)
		usage();
	const char *err = bench_open(unit);
	if (err != NULL) {
		printf("insert: unit %d: %s\n", unit, err);
		return 1;
	}
	uint64_t need = 0, maxsize = 0;
	for (int k = 0; k < nsets; k++) {
		uint64_t rs = 1 + sets[k].size / ED_SECTOR + ROOM;
		need = rs * (uint64_t)sets[k].nfiles > need ? rs * (uint64_t)sets[k].nfiles : need;
		maxsize = sets[k].size > maxsize ? sets[k].size : maxsize;
	}
	area = edc_fm_find(&B.fm, 0, need, 8);
	buf = malloc(maxsize + ED_SECTOR + CHUNK);
	want = malloc(maxsize + INS);
	blk = malloc(BLOCK + ED_SECTOR);
	if (area == UINT64_MAX || buf == NULL || want == NULL || blk == NULL) {
		printf("insert: no room (%lu free sectors in a row, or memory)\n", (unsigned long)need);
		return 1;
	}
	for (int i = 0; i < 16; i++) {
		rc.w[i / 8] = rc.w[i / 8] * 131 + now();
		wc.w[i / 8] = wc.w[i / 8] * 137 + now() + 1;
	}
	emit_meta("insert", runs);
	printf("insert: 16 bytes into the middle of each file, then read each; area from sector %lu of unit %d (%s); "
	       "%d run%s\n", (unsigned long)area, unit, B.dev, runs, runs > 1 ? "s" : "");
	static const char *const method[2] = { "indexed", "copy" };
	static uint64_t ns[MAXSETS][2][2][BENCH_MAXRUNS];
	for (int run = 0; run < runs; run++)
		for (int k = 0; k < nsets; k++)
			for (int mth = 0; mth < 2; mth++) {
				uint32_t size = sets[k].size;
				int nf = sets[k].nfiles;
				fsect = size / ED_SECTOR;
				rsect = 1 + fsect + ROOM;
				for (int i = 0; i < nf; i++) {
					int r = create(i, size, mth == 0);
					if (r != 0) {
						printf("insert: creating file %d: %s\n", i, exo_strerror(r));
						return 1;
					}
				}
				for (int ph = 0; ph < 2; ph++) {
					uint64_t t0 = now();
					for (int i = 0; i < nf; i++) {
						uint64_t len = 0;
						int r = ph == 0 ? (mth == 0 ? insert_indexed(i, size) : insert_copy(i, size))
						                : read_file(i, mth == 0, &len);
						if (r == 0 && ph == 1 && !check(i, size, len))
							r = -1;
						if (r != 0) {
							printf("insert: %s %s of file %d (%u bytes): %s\n", method[mth],
							       ph ? "read" : "insert", i, size,
							       r == -1 ? "wrong contents" : exo_strerror(r));
							return 1;
						}
					}
					uint64_t t = ns_since(t0);
					ns[k][mth][ph][run] = t;
					char a[24];
					printf("  run %d %7u bytes x %-3d %-7s %-6s %s ms/file\n", run + 1, size, nf, method[mth],
					       ph ? "read" : "insert", fmt_ms(a, sizeof a, t / (uint64_t)nf));
					emit("\"bench\":\"insert\",\"dev\":\"%s\",\"method\":\"%s\",\"size\":%u,\"files\":%d,"
					     "\"phase\":\"%s\",\"run\":%d,\"ns\":%lu,\"ns_per_file\":%lu", B.dev, method[mth], size, nf,
					     ph ? "read" : "insert", run, (unsigned long)t, (unsigned long)(t / (uint64_t)nf));
				}
				for (int i = 0; i < nf; i++) {
					int r = destroy(i);
					if (r != 0) {
						printf("insert: deallocating file %d: %s\n", i, exo_strerror(r));
						return 1;
					}
				}
			}
	printf("\nfile insertion, %s: ms per file, mean ± sd\n", B.dev);
	for (int k = 0; k < nsets; k++)
		for (int mth = 0; mth < 2; mth++)
			for (int ph = 0; ph < 2; ph++) {
				struct summary s;
				summarize(ns[k][mth][ph], runs, &s);
				char a[24], b[24];
				uint64_t nf = (uint64_t)sets[k].nfiles;
				printf("  %7u bytes  %-7s %-6s %s ± %s\n", sets[k].size, method[mth], ph ? "read" : "insert",
				       fmt_ms(a, sizeof a, s.mean / nf), fmt_ms(b, sizeof b, s.sd / nf));
			}
	return 0;
}
