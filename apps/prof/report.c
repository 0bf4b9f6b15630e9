/*
 * report.c - read a recorded profile and print where the time went
 * (report.h; the format is kernel/uapi/prof.h; docs/profiling.md explains
 * the output).
 *
 * Every sample is turned into a list of functions, innermost first: its
 * kernel part, then its user part.  A part is [pc, ra, return addresses]:
 * the ra register is a frame of its own only when it names a function that is
 * neither the sampled one nor the first caller the frame chain found (it
 * then belongs to a leaf, or to a function caught before saving ra, whose
 * caller the chain would otherwise skip).  Return addresses are looked up one
 * byte back, so a call that is the last instruction of a function is charged
 * to that function.  "Self" is the innermost function (for a sleeping
 * process: the kernel function that went to sleep, past the scheduler's own
 * frames); "total" counts a sample once for every function on its stack.
 *
 * Samples belong to phases by time: a phase starts when any profiled
 * process marks one (PROF_MARK) and lasts until the next mark (a mark with
 * an empty name just ends it).  Counters of a phase are the marking
 * process's, from its mark to its next mark or exit.  Phases of the same name
 * (a benchmark's runs) are added together.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "apps/prof/report.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/exodisk.h"

#define MAXIMAGES  32
#define MAXPHASES  32
#define MAXFRAMES  (2 * PROF_MAXDEPTH + 2)

enum { IMG_KERNEL, IMG_SYSCALL, IMG_FIRST_USER };

struct fstat {
	uint32_t self_cpu, total_cpu;   /* samples running (user, kernel, syscall) */
	uint32_t self_all, total_all;   /* every sample */
	uint32_t self_wait;             /* self samples asleep */
};

struct image {
	char path[72];
	struct symtab t;
	int nfn;                     /* t.nsyms functions, then one for "unknown" */
	struct fstat *st[MAXPHASES + 1];   /* [0] the whole run, [i] phase i */
	uint32_t *stamp;             /* last sample that counted each function */
};

struct phase {
	char name[PROF_MARK_NAME + 8];
	uint64_t units, ticks;       /* summed over every mark of that name */
	uint64_t samples[PROF_NKINDS];
	struct exo_counts proc, all; /* summed deltas */
	int nmarks;
};

struct proc_ent {
	uint32_t pid;
	int img;
	bool exited;
	struct exo_counts counts;
	/* The phase it marked last, and its counters then. */
	int phase;
	uint64_t mark_time;
	struct exo_counts mark_proc, mark_all;
};

struct rep {
	FILE *out;
	const struct prof_file *hdr;
	const struct prof_syms *syms;
	struct image img[MAXIMAGES];
	int nimg;
	struct proc_ent *procs;
	int nprocs, cap_procs;
	struct phase ph[MAXPHASES + 1];   /* [0] unused; phases 1.. */
	int nph, cur_ph;
	uint32_t sample_no;
	uint64_t kinds[PROF_NKINDS];
	uint64_t unknown_pid;
	int folded;
	const char *lines;           /* --lines FUNC: its self samples' addresses */
	struct { uint64_t addr; int img; } *hits;
	size_t nhits, cap_hits;
	struct exo_counts proc_total;
	int nexited;
};

/* ---- names --------------------------------------------------------------- */

static const char *const sysnames[] = {
	[SYS_exit] = "exit", [SYS_spawn] = "spawn", [SYS_wait] = "wait", [SYS_yield] = "yield",
	[SYS_getpid] = "getpid", [SYS_sbrk] = "sbrk", [SYS_cons_write] = "cons_write",
	[SYS_cons_read] = "cons_read", [SYS_poweroff] = "poweroff",
	[SYS_exodisk_request] = "exodisk_request", [SYS_sleep] = "sleep", [SYS_raw_io] = "raw_io",
	[SYS_kill] = "kill", [SYS_prof] = "prof",
	[SYS_pipe] = "pipe", [SYS_hread] = "hread", [SYS_hwrite] = "hwrite", [SYS_hclose] = "hclose",
	[SYS_cons_ctl] = "cons_ctl", [SYS_initrd_map] = "initrd_map",
};

static const char *const opnames[] = {
	[ED_OP_IO] = "io", [ED_OP_EXTENT_ALLOCATE] = "extent_allocate",
	[ED_OP_EXTENT_DEALLOCATE] = "extent_deallocate", [ED_OP_EXTENT_GROW] = "extent_grow",
	[ED_OP_EXTENT_SHRINK] = "extent_shrink", [ED_OP_EXTENT_READ] = "extent_read",
	[ED_OP_EXTENT_WRITE] = "extent_write", [ED_OP_EXONODE_ALLOCATE] = "exonode_allocate",
	[ED_OP_EXONODE_DEALLOCATE] = "exonode_deallocate", [ED_OP_EXONODE_READ] = "exonode_read",
	[ED_OP_EXONODE_WRITE] = "exonode_write", [ED_OP_EXONODE_ADD_EXTENT] = "exonode_add_extent",
	[ED_OP_EXONODE_ADD_EXONODE] = "exonode_add_exonode", [ED_OP_EXONODE_ADD_DATA] = "exonode_add_data",
	[ED_OP_EXONODE_READ_DATA] = "exonode_read_data", [ED_OP_EXONODE_REMOVE_ENTRY] = "exonode_remove_entry",
	[ED_OP_EXONODE_COMBINE] = "exonode_combine", [ED_OP_EXONODE_SPLIT] = "exonode_split",
	[ED_OP_EXONODE_MAP] = "exonode_map", [ED_OP_EXONODE_PROXY] = "exonode_proxy",
	[ED_OP_EXONODE_CAP_DISCOVER] = "exonode_cap_discover", [ED_OP_MARK_REPLACEMENT] = "mark_replacement",
	[ED_OP_POLL] = "poll", [ED_OP_IN_CACHE] = "in_cache", [ED_OP_GET_FREE_MAP] = "get_free_map",
	[ED_OP_SHUTDOWN] = "shutdown", [ED_OP_FLUSH] = "flush", [ED_OP_DROP_CACHE] = "drop_cache",
	[ED_OP_UNIT_INFO] = "unit_info", [ED_OP_CHECKPOINT] = "checkpoint",
	[ED_OP_EXONODE_REMOVE_RANGE] = "exonode_remove_range",
};

static const char *name_of(const char *const *tab, size_t n, unsigned i, char *buf, size_t size)
{
	if (i < n && tab[i]) return tab[i];
	snprintf(buf, size, "#%u", i);
	return buf;
}
#define SYSNAME(i, b) name_of(sysnames, sizeof sysnames / sizeof *sysnames, (i), (b), sizeof(b))
#define OPNAME(i, b)  name_of(opnames, sizeof opnames / sizeof *opnames, (i), (b), sizeof(b))

static const char *const kindnames[PROF_NKINDS] = {
	[PROF_K_USER] = "running in user mode", [PROF_K_KERNEL] = "running in the kernel",
	[PROF_K_SYSCALL] = "in a system call, place unknown", [PROF_K_WAIT] = "asleep in the kernel",
	[PROF_K_READY] = "ready, waiting for the CPU",
	[PROF_K_IRQ] = "the kernel handling interrupts",
};

/* ---- records -------------------------------------------------------------- */

size_t prof_rec_len(const struct prof_rec *r, size_t avail)
{
	size_t body;
	if (avail < sizeof *r) return 0;
	switch (r->type) {
	case PROF_R_SAMPLE:
		if (r->nk > PROF_MAXDEPTH || r->nu > PROF_MAXDEPTH || r->kind == 0 || r->kind >= PROF_NKINDS)
			return 0;
		body = (size_t)(r->nk + r->nu) * 8;
		break;
	case PROF_R_PROC: body = sizeof(struct prof_proc); break;
	case PROF_R_MARK: body = sizeof(struct prof_mark); break;
	case PROF_R_EXIT: body = sizeof(struct prof_exit); break;
	default: return 0;
	}
	size_t len = (sizeof *r + body + 7) & ~(size_t)7;
	return len <= avail ? len : 0;
}

/* ---- images and functions ------------------------------------------------- */

static int image_for(struct rep *R, const char *path)
{
	for (int i = IMG_FIRST_USER; i < R->nimg; i++)
		if (strcmp(R->img[i].path, path) == 0) return i;
	if (R->nimg == MAXIMAGES) return -1;
	int i = R->nimg++;
	snprintf(R->img[i].path, sizeof R->img[i].path, "%s", path);
	return i;
}

static void load_image(struct rep *R, int i)
{
	struct image *m = &R->img[i];
	const char *why = NULL;
	if (i == IMG_SYSCALL) {
		m->nfn = EXO_NSYSCALLS;     /* one pseudo-function per system call */
	} else {
		if (R->syms->load(R->syms->ctx, i == IMG_KERNEL ? NULL : m->path, &m->t, &why) < 0)
			fprintf(R->out, "prof: no symbols for %s: %s\n", i == IMG_KERNEL ? "the kernel" : m->path, why);
		m->nfn = m->t.nsyms + 1;
	}
	m->stamp = calloc((size_t)m->nfn, sizeof *m->stamp);
}

static struct fstat *stats(struct rep *R, int img, int ph)
{
	struct image *m = &R->img[img];
	if (m->st[ph] == NULL) m->st[ph] = calloc((size_t)m->nfn, sizeof(struct fstat));
	return m->st[ph];
}

struct frame { int img, fn; };

static struct frame func(struct rep *R, int img, uint64_t addr)
{
	struct image *m = &R->img[img];
	int f = symtab_find(&m->t, addr);
	struct frame fr = { img, f < 0 ? m->nfn - 1 : f };
	return fr;
}

static bool same(struct frame a, struct frame b) { return a.img == b.img && a.fn == b.fn; }

static const char *fn_name(struct rep *R, struct frame f, char *buf, size_t size)
{
	struct image *m = &R->img[f.img];
	char tmp[32];
	if (f.img == IMG_SYSCALL) {
		snprintf(buf, size, "[system call %s, place unknown]", SYSNAME((unsigned)f.fn, tmp));
		return buf;
	}
	const char *name = f.fn < m->t.nsyms ? m->t.syms[f.fn].name : "[unknown]";
	/* Samples due while the trap came in are taken where the interrupt
	 * handler's window opens (kernel/arch/riscv/prof_sample.c): that is
	 * their place. */
	if (f.img == IMG_KERNEL && strcmp(name, "prof_irq_enter") == 0) name = "[entering an interrupt]";
	if (f.img == IMG_KERNEL) {
		snprintf(buf, size, "%s [k]", name);
	} else if (R->nimg > IMG_FIRST_USER + 1) {
		const char *base = strrchr(m->path, '/');
		snprintf(buf, size, "%s (%s)", name, base ? base + 1 : m->path);
	} else {
		snprintf(buf, size, "%s", name);
	}
	return buf;
}

/* One part of a sample: [pc, ra, return addresses...] into frames, and the
 * address each was found at (a call's own address for callers). */
static int part(struct rep *R, int img, const uint64_t *a, int n, struct frame *out, uint64_t *at)
{
	int m = 0;
	if (n == 0) return 0;
	at[m] = a[0];
	out[m++] = func(R, img, a[0]);
	if (n >= 2 && a[1] != 0) {
		struct frame f = func(R, img, a[1] - 1);
		if (!same(f, out[0]) && (n < 3 || !same(f, func(R, img, a[2] - 1)))) {
			at[m] = a[1] - 1;
			out[m++] = f;
		}
	}
	for (int i = 2; i < n; i++) {
		at[m] = a[i] - 1;
		out[m++] = func(R, img, a[i] - 1);
	}
	return m;
}

/* The scheduler's own frames, skipped when finding where a process slept. */
static bool sched_frame(struct rep *R, struct frame f)
{
	static const char *const names[] = { "sched", "sleep_on", "yield", "swtch" };
	if (f.img != IMG_KERNEL || f.fn >= R->img[IMG_KERNEL].t.nsyms) return false;
	const char *n = R->img[IMG_KERNEL].t.syms[f.fn].name;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(n, names[i]) == 0) return true;
	return false;
}

/* ---- processes and phases ------------------------------------------------- */

static struct proc_ent *proc_of(struct rep *R, uint32_t pid)
{
	for (int i = R->nprocs - 1; i >= 0; i--)
		if (R->procs[i].pid == pid) return &R->procs[i];
	return NULL;
}

static void counts_add(struct exo_counts *d, const struct exo_counts *a, const struct exo_counts *b, int sign)
{
	/* d += sign * (a - b), field by field (the struct is all uint64_t). */
	uint64_t *pd = (uint64_t *)d;
	const uint64_t *pa = (const uint64_t *)a, *pb = (const uint64_t *)b;
	for (size_t i = 0; i < sizeof *d / 8; i++) pd[i] += (uint64_t)sign * (pa[i] - (pb ? pb[i] : 0));
}

/* The process's phase ends (a new mark, or its exit): charge its counters. */
static void close_phase(struct rep *R, struct proc_ent *p, uint64_t time, const struct exo_counts *proc,
                        const struct exo_counts *all)
{
	if (p->phase == 0) return;
	struct phase *ph = &R->ph[p->phase];
	ph->ticks += time - p->mark_time;
	counts_add(&ph->proc, proc, &p->mark_proc, 1);
	counts_add(&ph->all, all, &p->mark_all, 1);
	p->phase = 0;
}

static int phase_for(struct rep *R, const char *name)
{
	for (int i = 1; i <= R->nph; i++)
		if (strcmp(R->ph[i].name, name) == 0) return i;
	if (R->nph == MAXPHASES) return R->nph;   /* the rest share the last one */
	int i = ++R->nph;
	snprintf(R->ph[i].name, sizeof R->ph[i].name, "%s", name);
	return i;
}

/* ---- samples -------------------------------------------------------------- */

static void add_sample(struct rep *R, const struct prof_rec *r, const uint64_t *a)
{
	struct proc_ent *p = proc_of(R, r->pid);
	if (p == NULL && r->kind != PROF_K_IRQ) {
		R->unknown_pid++;
		return;
	}
	struct frame fr[MAXFRAMES];
	uint64_t at[MAXFRAMES];
	int nf = 0;
	if (r->kind == PROF_K_SYSCALL) {
		struct frame f = { IMG_SYSCALL, a[0] < EXO_NSYSCALLS ? (int)a[0] : 0 };
		at[nf] = 0;
		fr[nf++] = f;
	} else {
		nf = part(R, IMG_KERNEL, a, r->nk, fr, at);
	}
	if (p != NULL) nf += part(R, p->img, a + r->nk, r->nu, fr + nf, at + nf);
	if (nf == 0) return;

	int self = 0;
	if (r->kind == PROF_K_WAIT || r->kind == PROF_K_READY)
		while (self + 1 < nf && sched_frame(R, fr[self])) self++;
	bool cpu = r->kind != PROF_K_WAIT && r->kind != PROF_K_READY;
	if (R->lines && fr[self].img != IMG_SYSCALL && fr[self].fn < R->img[fr[self].img].t.nsyms &&
	    strcmp(R->img[fr[self].img].t.syms[fr[self].fn].name, R->lines) == 0) {
		if (R->nhits == R->cap_hits) {
			R->cap_hits = R->cap_hits ? 2 * R->cap_hits : 256;
			R->hits = realloc(R->hits, R->cap_hits * sizeof *R->hits);
		}
		if (R->hits) {
			R->hits[R->nhits].addr = at[self];
			R->hits[R->nhits++].img = fr[self].img;
		}
	}
	R->kinds[r->kind]++;
	if (R->cur_ph) R->ph[R->cur_ph].samples[r->kind]++;
	R->sample_no++;
	if (R->folded) {
		char buf[128];
		static const char *const tag[PROF_NKINDS] = { "", "", "", "", ";[asleep]", ";[ready]", "" };
		for (int i = nf - 1; i >= self; i--)
			fprintf(R->out, "%s%s", i == nf - 1 ? "" : ";", fn_name(R, fr[i], buf, sizeof buf));
		fprintf(R->out, "%s 1\n", tag[r->kind]);
		return;
	}
	for (int i = 0; i < nf; i++) {
		struct image *m = &R->img[fr[i].img];
		bool first = m->stamp[fr[i].fn] != R->sample_no;
		m->stamp[fr[i].fn] = R->sample_no;
		for (int k = 0; k < 2; k++) {
			int ph = k == 0 ? 0 : R->cur_ph;
			if (k == 1 && ph == 0) break;
			struct fstat *s = &stats(R, fr[i].img, ph)[fr[i].fn];
			if (i == self) {
				s->self_all++;
				if (cpu) s->self_cpu++;
				if (r->kind == PROF_K_WAIT) s->self_wait++;
			}
			if (first) {
				s->total_all++;
				if (cpu) s->total_cpu++;
			}
		}
	}
}

/* ---- reading the record --------------------------------------------------- */

static int read_records(struct rep *R, const uint8_t *data, size_t used)
{
	size_t off = 0;
	while (off < used) {
		const struct prof_rec *r = (const struct prof_rec *)(data + off);
		size_t len = prof_rec_len(r, used - off);
		if (len == 0) {
			fprintf(R->out, "prof: malformed record at offset %zu\n", off);
			return -1;
		}
		const void *body = r + 1;
		if (r->type == PROF_R_SAMPLE) {
			add_sample(R, r, body);
		} else if (r->type == PROF_R_PROC) {
			const struct prof_proc *pp = body;
			char path[sizeof pp->path + 1];
			memcpy(path, pp->path, sizeof pp->path);
			path[sizeof pp->path] = 0;
			if (R->nprocs == R->cap_procs) {
				R->cap_procs = R->cap_procs ? 2 * R->cap_procs : 16;
				R->procs = realloc(R->procs, (size_t)R->cap_procs * sizeof *R->procs);
				if (R->procs == NULL) return -1;
			}
			int img = image_for(R, path);
			if (img < 0) img = R->nimg - 1;
			if (R->img[img].stamp == NULL) load_image(R, img);
			struct proc_ent *p = &R->procs[R->nprocs++];
			memset(p, 0, sizeof *p);
			p->pid = r->pid;
			p->img = img;
		} else if (r->type == PROF_R_MARK) {
			const struct prof_mark *mk = body;
			struct proc_ent *p = proc_of(R, r->pid);
			char name[PROF_MARK_NAME + 1];
			memcpy(name, mk->name, PROF_MARK_NAME);
			name[PROF_MARK_NAME] = 0;
			int ph = name[0] ? phase_for(R, name) : 0;   /* "": the phase ends */
			if (p) {
				close_phase(R, p, r->time, &mk->proc, &mk->all);
				p->phase = ph;
				p->mark_time = r->time;
				p->mark_proc = mk->proc;
				p->mark_all = mk->all;
			}
			if (ph) {
				R->ph[ph].units += mk->units;
				R->ph[ph].nmarks++;
			}
			R->cur_ph = ph;
		} else {   /* PROF_R_EXIT */
			const struct prof_exit *ex = body;
			struct proc_ent *p = proc_of(R, r->pid);
			if (p && !p->exited) {
				close_phase(R, p, r->time, &ex->proc, &ex->all);
				p->exited = true;
				p->counts = ex->proc;
				counts_add(&R->proc_total, &ex->proc, NULL, 1);
				R->nexited++;
			}
		}
		off += len;
	}
	return 0;
}

/* ---- printing ------------------------------------------------------------- */

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static double secs(struct rep *R, uint64_t ticks)
{
	return R->hdr->info.timebase_hz ? (double)ticks / (double)R->hdr->info.timebase_hz : 0.0;
}

struct row { struct frame f; uint32_t self, total, wait; };

static int by_self(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->self != y->self) return x->self > y->self ? -1 : 1;
	return (x->total < y->total) - (x->total > y->total);
}

static int by_total(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->total != y->total) return x->total > y->total ? -1 : 1;
	return (x->self < y->self) - (x->self > y->self);
}

/* Frames on nearly every stack, left out of the tables by total: the
 * program's start-up and main, and the kernel's way into a system call. */
static bool everywhere(struct rep *R, struct frame f)
{
	static const char *const names[] = { "_start", "libos_start", "main", "trap_vector", "user_trap", "syscall" };
	struct image *m = &R->img[f.img];
	if (f.img == IMG_SYSCALL || f.fn >= m->t.nsyms) return false;
	bool kernel = f.img == IMG_KERNEL;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if ((i >= 3) == kernel && strcmp(m->t.syms[f.fn].name, names[i]) == 0) return true;
	return false;
}

/* The top functions of phase ph (0: the whole run), counting the running
 * samples (cpu) or all of them, sorted by self or by total samples. */
static void top_table(struct rep *R, int ph, bool cpu, bool sort_total, uint64_t n_samples, int top)
{
	int n = 0;
	for (int i = 0; i < R->nimg; i++)
		if (R->img[i].st[ph]) n += R->img[i].nfn;
	struct row *rows = malloc((size_t)(n ? n : 1) * sizeof *rows);
	if (rows == NULL) return;
	n = 0;
	for (int i = 0; i < R->nimg; i++) {
		struct fstat *st = R->img[i].st[ph];
		if (st == NULL) continue;
		for (int f = 0; f < R->img[i].nfn; f++) {
			struct row *w = &rows[n];
			w->f.img = i;
			w->f.fn = f;
			w->self = cpu ? st[f].self_cpu : st[f].self_all;
			w->total = cpu ? st[f].total_cpu : st[f].total_all;
			w->wait = cpu ? 0 : st[f].self_wait;
			if ((w->self || w->total) && !(sort_total && everywhere(R, w->f))) n++;
		}
	}
	qsort(rows, (size_t)n, sizeof *rows, sort_total ? by_total : by_self);
	fprintf(R->out, "   self%%    self  total%%%s  function\n", cpu ? "" : " asleep%");
	for (int i = 0; i < n && i < top; i++) {
		char buf[128];
		struct row *w = &rows[i];
		if ((sort_total ? w->total : w->self) == 0) break;
		fprintf(R->out, "  %5.1f%% %7u %6.1f%%", pct(w->self, n_samples), w->self, pct(w->total, n_samples));
		if (!cpu) fprintf(R->out, " %6.1f%%", pct(w->wait, n_samples));
		fprintf(R->out, "  %s\n", fn_name(R, w->f, buf, sizeof buf));
	}
	free(rows);
}

struct named { const char *name; uint64_t n; };

static int by_addr(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return (*x > *y) - (*x < *y);
}

/* --lines: where in the function its self samples fell, by source line if
 * syms->where can say, else by address. */
static void print_lines(struct rep *R)
{
	fprintf(R->out, "\nSelf samples of %s (all kinds) by %s:\n", R->lines,
	        R->syms->where ? "source line" : "address");
	if (R->nhits == 0) {
		fprintf(R->out, "  none\n");
		return;
	}
	/* Sort by image and address (the image in the high bits is enough:
	 * addresses of one program are below 2^40). */
	uint64_t *key = malloc(R->nhits * sizeof *key);
	if (key == NULL) return;
	for (size_t i = 0; i < R->nhits; i++) key[i] = (uint64_t)R->hits[i].img << 56 | R->hits[i].addr;
	qsort(key, R->nhits, sizeof *key, by_addr);
	struct { char where[160]; uint64_t n; } *rows = calloc(R->nhits, sizeof *rows);
	size_t nrows = 0;
	for (size_t i = 0; rows && i < R->nhits;) {
		size_t j = i;
		while (j < R->nhits && key[j] == key[i]) j++;
		int img = (int)(key[i] >> 56);
		uint64_t addr = key[i] & ((1ull << 56) - 1);
		char w[160];
		if (R->syms->where == NULL ||
		    R->syms->where(R->syms->ctx, img == IMG_KERNEL ? NULL : R->img[img].path, addr, w, sizeof w) < 0)
			snprintf(w, sizeof w, "%#lx", (unsigned long)addr);
		size_t k = 0;
		while (k < nrows && strcmp(rows[k].where, w) != 0) k++;
		if (k == nrows) snprintf(rows[nrows++].where, sizeof rows[k].where, "%s", w);
		rows[k].n += j - i;
		i = j;
	}
	for (size_t k = 0; k < nrows; k++) {   /* largest first: a few rows, a simple sort */
		size_t best = k;
		for (size_t m = k + 1; m < nrows; m++)
			if (rows[m].n > rows[best].n) best = m;
		if (best != k) {
			char tmp[sizeof rows[0]];
			memcpy(tmp, &rows[k], sizeof tmp);
			memcpy(&rows[k], &rows[best], sizeof tmp);
			memcpy(&rows[best], tmp, sizeof tmp);
		}
		fprintf(R->out, "  %6.1f%% %7lu  %s\n", pct(rows[k].n, R->nhits), (unsigned long)rows[k].n, rows[k].where);
	}
	free(rows);
	free(key);
}

static int by_n(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	return (x->n < y->n) - (x->n > y->n);
}

/* "name count, name count, ..." of the non-zero entries, largest first. */
static void print_top_counts(struct rep *R, const uint64_t *v, int n, bool ops, double div)
{
	struct named list[EXO_NSYSCALLS > EXO_NEDOPS ? EXO_NSYSCALLS : EXO_NEDOPS];
	char bufs[EXO_NSYSCALLS > EXO_NEDOPS ? EXO_NSYSCALLS : EXO_NEDOPS][16];
	int m = 0;
	for (int i = 0; i < n; i++)
		if (v[i]) {
			list[m].name = ops ? OPNAME((unsigned)i, bufs[i]) : SYSNAME((unsigned)i, bufs[i]);
			list[m++].n = v[i];
		}
	qsort(list, (size_t)m, sizeof *list, by_n);
	for (int i = 0; i < m; i++) {
		if (div > 0) fprintf(R->out, "%s%s %.2f", i ? ", " : "", list[i].name, (double)list[i].n / div);
		else fprintf(R->out, "%s%s %lu", i ? ", " : "", list[i].name, (unsigned long)list[i].n);
	}
	if (m == 0) fprintf(R->out, "none");
	fprintf(R->out, "\n");
}

static uint64_t sum(const uint64_t *v, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++) s += v[i];
	return s;
}

static void print_counts(struct rep *R, const char *indent, const struct exo_counts *c)
{
	fprintf(R->out, "%ssystem calls   %lu: ", indent, (unsigned long)c->syscalls);
	print_top_counts(R, c->by_syscall, EXO_NSYSCALLS, false, 0);
	fprintf(R->out, "%sexodisk ops    %lu: ", indent, (unsigned long)sum(c->by_edop, EXO_NEDOPS));
	print_top_counts(R, c->by_edop, EXO_NEDOPS, true, 0);
	fprintf(R->out, "%sdisk requests  %lu reads (%.1f KB), %lu writes (%.1f KB, %lu FUA), %lu flushes\n", indent,
	        (unsigned long)c->disk_reads, c->sectors_read / 2.0, (unsigned long)c->disk_writes,
	        c->sectors_written / 2.0, (unsigned long)c->disk_fua, (unsigned long)c->disk_flushes);
	fprintf(R->out, "%stime           %.3f s in system calls, %.3f s of it asleep\n", indent,
	        secs(R, c->sys_time), secs(R, c->wait_time));
}

static void print_phases(struct rep *R, int top)
{
	fprintf(R->out, "\nPhases (marked by the program; counts are the marking process's, per unit of work;\n"
	                "\"all\" columns count every disk request in the system):\n");
	fprintf(R->out, "  %-16s %9s %7s %9s %8s %8s %7s %7s %7s %8s %8s %7s %7s %7s\n", "phase", "ms", "units",
	        "ms/unit", "syscalls", "exodisk", "reads", "writes", "flushes", "KB read", "KB wrote", "all rd",
	        "all wr", "all fl");
	for (int i = 1; i <= R->nph; i++) {
		struct phase *ph = &R->ph[i];
		double u = ph->units ? (double)ph->units : 1.0;
		double ms = secs(R, ph->ticks) * 1000.0;
		fprintf(R->out, "  %-16s %9.1f %7lu %9.3f %8.2f %8.2f %7.2f %7.2f %7.2f %8.2f %8.2f %7.2f %7.2f %7.2f\n",
		        ph->name, ms, (unsigned long)ph->units, ms / u, ph->proc.syscalls / u,
		        sum(ph->proc.by_edop, EXO_NEDOPS) / u, ph->proc.disk_reads / u, ph->proc.disk_writes / u,
		        ph->proc.disk_flushes / u, ph->proc.sectors_read / 2.0 / u, ph->proc.sectors_written / 2.0 / u,
		        ph->all.disk_reads / u, ph->all.disk_writes / u, ph->all.disk_flushes / u);
	}
	for (int i = 1; i <= R->nph; i++) {
		struct phase *ph = &R->ph[i];
		uint64_t n = sum(ph->samples, PROF_NKINDS);
		uint64_t cpu = n - ph->samples[PROF_K_WAIT] - ph->samples[PROF_K_READY];
		double u = ph->units ? (double)ph->units : 0.0;
		fprintf(R->out, "\nPhase %s: %lu samples: user %.1f%%, kernel %.1f%%, interrupts %.1f%%, asleep %.1f%%, "
		        "ready %.1f%%\n", ph->name, (unsigned long)n, pct(ph->samples[PROF_K_USER], n),
		        pct(ph->samples[PROF_K_KERNEL] + ph->samples[PROF_K_SYSCALL], n), pct(ph->samples[PROF_K_IRQ], n),
		        pct(ph->samples[PROF_K_WAIT], n), pct(ph->samples[PROF_K_READY], n));
		fprintf(R->out, "  system calls%s: ", u > 0 ? " per unit" : "");
		print_top_counts(R, ph->proc.by_syscall, EXO_NSYSCALLS, false, u);
		fprintf(R->out, "  exodisk ops%s: ", u > 0 ? " per unit" : "");
		print_top_counts(R, ph->proc.by_edop, EXO_NEDOPS, true, u);
		if (n == 0) continue;
		fprintf(R->out, "  Wall clock, by self:\n");
		top_table(R, i, false, false, n, top);
		fprintf(R->out, "  Wall clock, by total:\n");
		top_table(R, i, false, true, n, top);
		if (cpu) {
			fprintf(R->out, "  Running, by self:\n");
			top_table(R, i, true, false, cpu, top);
		}
	}
}

int prof_report(FILE *out, const struct prof_file *hdr, const uint8_t *data,
                const struct prof_syms *syms, const struct prof_opts *opts)
{
	struct rep *R = calloc(1, sizeof *R);
	if (R == NULL) return -1;
	R->out = out;
	R->hdr = hdr;
	R->syms = syms;
	R->nimg = IMG_FIRST_USER;
	R->folded = opts->folded;
	R->lines = opts->lines;
	load_image(R, IMG_KERNEL);
	load_image(R, IMG_SYSCALL);
	int err = read_records(R, data, hdr->info.used);
	if (R->folded) goto done;

	const struct prof_info *in = &hdr->info;
	uint64_t end = in->stop_time ? in->stop_time : in->start_time;
	uint64_t n = sum(R->kinds, PROF_NKINDS);
	uint64_t cpu = n - R->kinds[PROF_K_WAIT] - R->kinds[PROF_K_READY];
	fprintf(out, "\nprof: %s\n", hdr->cmd);
	fprintf(out, "  %.3f s, %u samples/s, %lu samples of %d process%s (exit status %d)\n",
	        secs(R, end - in->start_time), in->hz, (unsigned long)n, R->nprocs, R->nprocs == 1 ? "" : "es",
	        hdr->status);
	if (in->dropped || in->lost_records)
		fprintf(out, "  WARNING: the buffer filled up: %lu samples and %lu other records lost (use -b)\n",
		        (unsigned long)in->dropped, (unsigned long)in->lost_records);
	fprintf(out, "  %lu sampling periods passed with no sample (interrupts off too long, or QEMU not running)\n",
	        (unsigned long)in->missed);
	for (int k = 1; k < PROF_NKINDS; k++)
		fprintf(out, "  %-34s %8lu  %5.1f%%\n", kindnames[k], (unsigned long)R->kinds[k], pct(R->kinds[k], n));

	int top = opts->top > 0 ? opts->top : 20;
	if (cpu) {
		fprintf(out, "\nRunning (user, kernel and interrupt samples), by self:\n");
		top_table(R, 0, true, false, cpu, top);
		fprintf(out, "\nRunning, by total (the function and what it called; start-up, main and\n"
		             "the kernel's system-call entry are left out: they are on every stack):\n");
		top_table(R, 0, true, true, cpu, top);
	}
	if (n > cpu) {
		fprintf(out, "\nWall clock (every sample: asleep and ready too), by self:\n");
		top_table(R, 0, false, false, n, top);
		fprintf(out, "\nWall clock, by total:\n");
		top_table(R, 0, false, true, n, top);
	}

	fprintf(out, "\nCounts of the profiled process%s (at exit; %d of %d exited):\n", R->nprocs == 1 ? "" : "es",
	        R->nexited, R->nprocs);
	print_counts(R, "  ", &R->proc_total);
	struct exo_counts all;
	memset(&all, 0, sizeof all);
	counts_add(&all, &hdr->after, &hdr->before, 1);
	fprintf(out, "The whole system during the run (kernel-queued writes included):\n");
	fprintf(out, "  disk requests  %lu reads (%.1f KB), %lu writes (%.1f KB, %lu FUA), %lu flushes\n",
	        (unsigned long)all.disk_reads, all.sectors_read / 2.0, (unsigned long)all.disk_writes,
	        all.sectors_written / 2.0, (unsigned long)all.disk_fua, (unsigned long)all.disk_flushes);
	if (R->nph) print_phases(R, opts->phase_top > 0 ? opts->phase_top : 10);
	if (R->lines) print_lines(R);
	if (R->unknown_pid) fprintf(out, "(%lu samples of processes with no PROC record)\n", (unsigned long)R->unknown_pid);
done:

	for (int i = 0; i < R->nimg; i++) {
		symtab_free(&R->img[i].t);
		free(R->img[i].stamp);
		for (int p = 0; p <= MAXPHASES; p++) free(R->img[i].st[p]);
	}
	free(R->procs);
	free(R->hits);
	free(R);
	return err;
}
