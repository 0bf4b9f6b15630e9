/*
 * memtouch.c - a QEMU TCG plugin (QEMU 7.2's plugin API, version 1) that
 * measures how scattered the guest's memory accesses are, per unit of
 * work the guest marks: the locality proxy of issue 11's million-file run.
 *
 * Why: under TCG every guest load and store goes through QEMU's software
 * TLB (a direct-mapped table per MMU mode) and then the host's caches.  A
 * guest that touches more distinct pages per file as its file system grows
 * runs slower per file in elapsed time although it executes the same
 * instructions (ICOUNT=1 cannot see it).  This plugin counts, per marked
 * unit (a file created, in edscale), the data accesses, the distinct guest
 * pages (4 KiB) and cache lines (64 bytes) first touched in that unit, and
 * the misses of two simple models: a direct-mapped TLB of 2^tlb entries on
 * virtual pages (QEMU's softmmu TLB starts at 256) and a direct-mapped
 * cache of 2^cache lines on physical lines (a host L2's reach).  They are
 * models, not QEMU's own counters: read them as "how much the working set
 * per file moved", to compare builds on the same run.
 *
 * The guest marks a unit's start by executing `slti x0, x0, 0x6d5` (an
 * instruction that does nothing: the RISC-V hints with rd = x0 of SLTI are
 * for custom use); edscale does so before every file, and once after the
 * last (what follows it, the final sync, is the line at exit).  Nothing is
 * counted before the first mark.
 *
 * Build: make memtouch (build/tools/memtouch.so).  Use:
 *   PLUGIN=build/tools/memtouch.so,every=5000,out=mt.txt ICOUNT=1 \
 *     CMD='mkfs; edscale -n 1000000 -d 100 -c 5000' tools/run-qemu.sh
 * Arguments: every=N (units per report line, default 5000), out=FILE
 * (default: QEMU's log, stderr), tlb=BITS (8), cache=BITS (15),
 * prof=FROM:TO (given at most twice: for units FROM <= u < TO, count the
 * TLB-model misses per guest instruction address, and at exit print the
 * 40 addresses with the most as "memtouch-pc RANGE 0xPC MISSES": where
 * the scattered accesses come from; addr2line on the program or kernel
 * names them).  One line
 * per N units: the units so far, then per unit: instructions, data
 * accesses, distinct pages, distinct lines, TLB-model misses, cache-model
 * misses.  The distinct counts index guest physical memory modulo 1 GiB
 * (RAM at most that large is counted exactly; more would alias, which can
 * only make them smaller).
 *
 * The declarations below are the part of QEMU's include/qemu/qemu-plugin.h
 * (API version 1, QEMU 6.x to 8.0) this plugin uses, written out here so
 * that it builds without QEMU's sources; QEMU resolves them at load time.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- QEMU's plugin interface (version 1) ------------------------------------ */
typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union { struct { int smp_vcpus, max_vcpus; } system; };
} qemu_info_t;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu, void *udata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *udata);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu, qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *udata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
                                              void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *udata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags, enum qemu_plugin_mem_rw rw,
                                      void *udata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *udata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *h);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *h);
void qemu_plugin_outs(const char *s);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- the counts --------------------------------------------------------------- */

/* slti x0, x0, 0x6d5: imm << 20 | rs1 0 | funct3 2 | rd 0 | OP-IMM. */
#define MARK_INSN   ((0x6d5u << 20) | (2u << 12) | 0x13u)

#define PAGE_BITS   18               /* 2^18 pages of 4 KiB: 1 GiB   */
#define LINE_BITS   24               /* 2^24 lines of 64 bytes: 1 GiB */

static uint32_t *page_seen, *line_seen;  /* the unit that last touched it */
static uint64_t *tlb, *cache;            /* tag + 1 (0: empty)             */
static unsigned tlb_bits = 8, cache_bits = 15;
static uint64_t every = 5000;
static FILE *out;

static uint64_t insns;                   /* all executed (inline adds)    */
static uint32_t unit;                    /* units begun (0: not yet)      */
struct sums {
	uint64_t acc, pages, lines, tlbmiss, cmiss;
};
static struct sums now;                  /* since the last report line    */
static uint64_t insns_at;                /* insns at the last report      */

/* Misses per instruction address over a range of units (prof=). */
#define PC_BITS 16
struct prof {
	uint32_t from, to;
	uint64_t pc[1u << PC_BITS], n[1u << PC_BITS];   /* pc + 1 (0: empty) */
	uint64_t lost;                                  /* the table was full */
};
static struct prof *profs[2];
static int nprof;

static void prof_count(struct prof *p, uint64_t pc)
{
	uint32_t mask = (1u << PC_BITS) - 1;
	uint32_t h = (uint32_t)((pc >> 1) * 0x9e3779b1u) & mask;
	for (uint32_t k = 0; k < 64; k++, h = (h + 1) & mask) {
		if (p->pc[h] == pc + 1 || p->pc[h] == 0) {
			p->pc[h] = pc + 1;
			p->n[h]++;
			return;
		}
	}
	p->lost++;
}

static void prof_print(struct prof *p)
{
	char line[128];
	for (int k = 0; k < 40; k++) {
		uint32_t best = 0;
		for (uint32_t i = 1; i < (1u << PC_BITS); i++)
			if (p->n[i] > p->n[best])
				best = i;
		if (p->n[best] == 0)
			break;
		snprintf(line, sizeof line, "memtouch-pc %" PRIu32 ":%" PRIu32 " 0x%" PRIx64 " %" PRIu64 "\n",
		         p->from, p->to, p->pc[best] - 1, p->n[best]);
		if (out != NULL)
			fputs(line, out);
		else
			qemu_plugin_outs(line);
		p->n[best] = 0;
	}
}

static void report(void)
{
	uint64_t n = unit % every ? unit % every : every;
	char line[256];
	snprintf(line, sizeof line,
	         "memtouch units=%" PRIu32 " insns=%.1f acc=%.1f pages=%.2f lines=%.2f tlbmiss=%.2f cmiss=%.2f\n",
	         unit, (double)(insns - insns_at) / n, (double)now.acc / n, (double)now.pages / n,
	         (double)now.lines / n, (double)now.tlbmiss / n, (double)now.cmiss / n);
	if (out != NULL) {
		fputs(line, out);
		fflush(out);
	} else {
		qemu_plugin_outs(line);
	}
	memset(&now, 0, sizeof now);
	insns_at = insns;
}

static void on_mark(unsigned int vcpu, void *udata)
{
	if (unit > 0 && unit % every == 0)
		report();
	if (unit == 0)
		insns_at = insns;
	unit++;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	if (unit == 0)
		return;
	struct qemu_plugin_hwaddr *h = qemu_plugin_get_hwaddr(info, vaddr);
	if (h == NULL || qemu_plugin_hwaddr_is_io(h))
		return;
	uint64_t pa = qemu_plugin_hwaddr_phys_addr(h);
	now.acc++;
	uint32_t *p = &page_seen[(pa >> 12) & ((1u << PAGE_BITS) - 1)];
	if (*p != unit) {
		*p = unit;
		now.pages++;
	}
	uint32_t *l = &line_seen[(pa >> 6) & ((1u << LINE_BITS) - 1)];
	if (*l != unit) {
		*l = unit;
		now.lines++;
	}
	uint64_t vpn = vaddr >> 12;
	uint64_t *t = &tlb[vpn & ((1u << tlb_bits) - 1)];
	if (*t != vpn + 1) {
		*t = vpn + 1;
		now.tlbmiss++;
		for (int i = 0; i < nprof; i++)
			if (unit >= profs[i]->from && unit < profs[i]->to)
				prof_count(profs[i], (uint64_t)(uintptr_t)udata);
	}
	uint64_t ln = pa >> 6;
	uint64_t *c = &cache[ln & ((1u << cache_bits) - 1)];
	if (*c != ln + 1) {
		*c = ln + 1;
		now.cmiss++;
	}
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns, n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint32_t word;
		if (qemu_plugin_insn_size(insn) == 4) {
			memcpy(&word, qemu_plugin_insn_data(insn), 4);
			if (word == MARK_INSN)
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_mark, QEMU_PLUGIN_CB_NO_REGS,
				                                       NULL);
		}
		qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
		                                 (void *)(uintptr_t)qemu_plugin_insn_vaddr(insn));
	}
}

static void at_end(qemu_plugin_id_t id, void *udata)
{
	if (unit > 0)
		report();           /* what followed the last mark */
	for (int i = 0; i < nprof; i++)
		prof_print(profs[i]);
	if (out != NULL)
		fclose(out);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "every=", 6) == 0 && strtoull(a + 6, NULL, 10) > 0) {
			every = strtoull(a + 6, NULL, 10);
		} else if (strncmp(a, "out=", 4) == 0) {
			if ((out = fopen(a + 4, "w")) == NULL) {
				fprintf(stderr, "memtouch: cannot write %s\n", a + 4);
				return 1;
			}
		} else if (strncmp(a, "tlb=", 4) == 0 && atoi(a + 4) > 0 && atoi(a + 4) <= 20) {
			tlb_bits = (unsigned)atoi(a + 4);
		} else if (strncmp(a, "cache=", 6) == 0 && atoi(a + 6) > 0 && atoi(a + 6) <= 24) {
			cache_bits = (unsigned)atoi(a + 6);
		} else if (strncmp(a, "prof=", 5) == 0 && nprof < 2 && strchr(a, ':') != NULL) {
			struct prof *p = calloc(1, sizeof *p);
			if (p == NULL)
				return 1;
			p->from = (uint32_t)strtoul(a + 5, NULL, 10);
			p->to = (uint32_t)strtoul(strchr(a, ':') + 1, NULL, 10);
			profs[nprof++] = p;
		} else {
			fprintf(stderr, "memtouch: unknown argument %s (every=N out=FILE tlb=BITS cache=BITS "
			        "prof=FROM:TO)\n",
			        a);
			return 1;
		}
	}
	page_seen = calloc((size_t)1 << PAGE_BITS, sizeof *page_seen);
	line_seen = calloc((size_t)1 << LINE_BITS, sizeof *line_seen);
	tlb = calloc((size_t)1 << tlb_bits, sizeof *tlb);
	cache = calloc((size_t)1 << cache_bits, sizeof *cache);
	if (page_seen == NULL || line_seen == NULL || tlb == NULL || cache == NULL) {
		fprintf(stderr, "memtouch: out of memory\n");
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_end, NULL);
	return 0;
}
