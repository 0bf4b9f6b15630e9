/*
 * sys_exodisk.c - the exodisk_request system call and the exodisk's place in
 * the kernel: the environment the portable core needs (kernel/exodisk/ed_env.h),
 * mounting every disk unit at boot, exporting the free maps (mapped page by
 * page as processes first read them), per-process client state, and a
 * clean shutdown before power-off.
 *
 * The system call does only what the core cannot do for itself, in the order
 * docs/exodisk.md section 8 gives: copy the argument structures into kernel
 * memory (the core then checks them there: no time-of-check/time-of-use
 * window), pin the application's I/O buffer and result word, copy small
 * buffers in and out, and call ed_request().  Every capability check and
 * every exodisk decision is the core's.
 */
#include "kernel/syscall.h"
#include "kernel/proc.h"
#include "kernel/vm.h"
#include "kernel/pin.h"
#include "kernel/kalloc.h"
#include "kernel/kshare.h"
#include "kernel/klib.h"
#include "kernel/trap.h"
#include "kernel/bootinfo.h"
#include "kernel/power.h"
#include "kernel/uapi/syscall.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/layout.h"
#include "kernel/uapi/kinfo.h"
#include "kernel/exodisk/ed_env.h"
#include "kernel/exodisk/edcrypt.h"
#include "kernel/exodisk/ondisk.h"
#include "drivers/blk.h"

/* Pinned memory of one asynchronous operation: its buffer pages and result word. */
#define PIN_HELD  (ED_IO_MAX / 4096 + 1)        /* an unaligned 1 MiB buffer */
#define PIN_SEGS  (PIN_HELD + 2)                /* plus room for the core's two */
#define NPINS     192                           /* more than the core's operations in flight */

/* The core rewrites the segment list it is given (it replaces the start of
 * an extent's first sector by a kernel sector image), so what we pinned is
 * kept apart, in held[], and released from there. */
struct pin {
	struct blk_seg held[PIN_HELD];   /* the application's pages we hold references on */
	int nheld;
	struct blk_seg segs[PIN_SEGS];   /* a copy for the core to use and rewrite */
	int32_t *word;            /* pinned result word, or NULL */
	struct pin *next_free;
};

static struct exodisk *ed;
static struct ed_client clients[NPROC];     /* one per process slot */
static uint64_t mount_ticks[BLK_MAX_UNITS]; /* how long each unit's mount took */
static struct pin pins[NPINS];
static struct pin *free_pins;

static struct pin *pin_alloc(void)
{
	struct pin *p = free_pins;
	if (p) {
		free_pins = p->next_free;
		p->nheld = 0;
		p->word = NULL;
	}
	return p;
}

static void pin_release(struct pin *p)
{
	unpin_segs(p->held, p->nheld);
	if (p->word) unpin_word(p->word);
	p->next_free = free_pins;
	free_pins = p;
}

/* ---- the environment the core runs in ------------------------------------ */

static void *env_page_alloc(void *ctx) { return kalloc(); }
static void env_page_free(void *ctx, void *page) { kfree(page); }

/* Processes sleeping in ED_OP_POLL until fewer of their operations are in
 * flight (see poll_wait); every completion wakes them to count again. */
static int poll_sleepers;

static void env_post(void *ctx, int32_t *word, int32_t value)
{
	/* The word is pinned: it stays valid even if its process has exited.
	 * No wakeup here: a completion's op_done (below) comes right after
	 * its post and wakes the sleepers once, having counted it (wakeup
	 * looks at every process slot); a post made inside the caller's own
	 * system call (ed_post_now) has no sleeper to wake. */
	*(volatile int32_t *)word = value;
}

/* Any completion, with a result word or without one, changes what
 * ED_OP_POLL counts (and may finish the word a POLL waits for). */
static void env_op_done(void *ctx)
{
	if (poll_sleepers > 0)
		wakeup(&poll_sleepers);
}

static void env_release(void *ctx, void *pin)
{
	if (pin) pin_release(pin);   /* the kernel's own requests carry no pin */
}

static struct proc *proc_of(struct ed_client *c)
{
	return &procs[c - clients];
}

static int env_map_page(void *ctx, struct ed_client *c, void *page, uint64_t *uaddr)
{
	struct proc *p = proc_of(c);
	if (p->pagetable == NULL) return ED_E_NOMAP;
	for (int i = 0; i < 64; i++) {
		if (p->xnmap_used & (1ull << i)) continue;
		uint64_t va = UXNMAP_BASE + (uint64_t)i * PGSIZE;
		if (uvm_lend(p->pagetable, va, (uint64_t)page) < 0) return ED_E_NOMEM;
		kref(page);
		p->xnmap_used |= 1ull << i;
		*uaddr = va;
		return 0;
	}
	return ED_E_NOMAP;
}

static void env_unmap_page(void *ctx, struct ed_client *c, uint64_t uaddr)
{
	struct proc *p = proc_of(c);
	uint64_t i = (uaddr - UXNMAP_BASE) / PGSIZE;
	if (uaddr < UXNMAP_BASE || i >= 64 || !(p->xnmap_used & (1ull << i))) return;
	if (p->pagetable) {
		uint64_t pa = uvm_translate(p->pagetable, uaddr, false);
		uvm_unlend(p->pagetable, uaddr);
		if (pa) kfree((void *)PGROUNDDOWN(pa));
	}
	p->xnmap_used &= ~(1ull << i);
}

/* QEMU offers no hardware entropy here; the timer and cycle counters at the
 * moments the core asks are what there is, stirred with splitmix64.  The
 * threat model (docs/exodisk-threat-model.md) says what that weakens. */
static uint64_t env_entropy(void *ctx)
{
	static uint64_t state;
	state += 0x9e3779b97f4a7c15ull ^ rdtime() ^ (rdcycle() << 17);
	uint64_t z = state;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Format and mount run before any process: let the devices finish. */
static void env_wait(void *ctx)
{
	blk_poll();
	intr_wait();
}

/* A mount's pause between tries of a failed read: boot has nothing else
 * to do meanwhile but let the devices finish. */
static void env_pause(void *ctx, uint32_t ms)
{
	uint64_t deadline = rdtime() + (uint64_t)ms * bootinfo.timebase_hz / 1000;
	while (rdtime() < deadline)
		blk_poll();
}

/* A request needs a page of a binding tree that is being read: the process
 * sleeps until a page comes in (other processes run meanwhile), and the
 * core makes the request again.  Interrupts are off in the kernel, so the
 * page cannot arrive between the core's look and the sleep. */
static int tree_sleepers;

static int env_sleep(void *ctx)
{
	struct proc *p = myproc();
	if (p == NULL) {
		env_wait(ctx);
		return 0;
	}
	if (p->killed) return K_E_INTR;
	tree_sleepers++;
	sleep_on(&tree_sleepers);
	tree_sleepers--;
	return p->killed ? K_E_INTR : 0;
}

static void env_wakeup(void *ctx)
{
	if (tree_sleepers > 0) wakeup(&tree_sleepers);
}

/* A page of a unit's exported free map now has another page behind it
 * (the first allocation in a 16 MiB region that was all free, say): every
 * process that mapped the old one maps the new one at its next read. */
static void env_fm_remap(void *ctx, int unit, uint64_t page)
{
	kshare_unmap_page(UFREEMAP(unit) + page * PGSIZE);
}

static const struct ed_env env = {
	.ctx = NULL,
	.page_alloc = env_page_alloc,
	.page_free = env_page_free,
	.post = env_post,
	.release = env_release,
	.map_page = env_map_page,
	.unmap_page = env_unmap_page,
	.entropy = env_entropy,
	.lock = NULL,
	.unlock = NULL,
	.wait = env_wait,
	.pause = env_pause,
	.sleep = env_sleep,
	.wakeup = env_wakeup,
	.fm_remap = env_fm_remap,
	.op_done = env_op_done,
};

/* ---- the system call ------------------------------------------------------ */

static bool is_async(uint64_t op)
{
	return op == ED_OP_IO || op == ED_OP_EXTENT_READ || op == ED_OP_EXTENT_WRITE ||
	       op == ED_OP_EXONODE_READ || op == ED_OP_EXONODE_WRITE || op == ED_OP_SHUTDOWN ||
	       op == ED_OP_FLUSH || op == ED_OP_CHECKPOINT;
}

static struct ed_client *client_of(struct proc *p)
{
	if (p->edc == NULL) {
		p->edc = &clients[p->slot];
		memset(p->edc, 0, sizeof *p->edc);
		p->edc->slot = -1;
	}
	return p->edc;
}

/* Pin what an asynchronous operation will touch after the call returns. */
static int pin_for(struct proc *p, uint64_t op, struct ed_args *a, struct pin **out)
{
	struct ed_buf *b = a->buf;
	*out = NULL;
	if (b == NULL || (op != ED_OP_IO && b->b_resptr == 0)) return 0;
	/* A transfer the core will refuse anyway is not pinned (and an absurd
	 * length must not make us walk the page table for terabytes). */
	bool pin_data = op == ED_OP_IO && b->b_bcount > 0 && b->b_bcount <= ED_IO_MAX;
	if (!pin_data && b->b_resptr == 0) return 0;
	struct pin *pin = pin_alloc();
	if (pin == NULL) return ED_E_NOIO;
	if (pin_data) {
		bool dev_writes = (b->b_flags & ED_B_READ) != 0;
		int n = pin_user(p->pagetable, b->b_memaddr, b->b_bcount, dev_writes, pin->held, PIN_HELD);
		if (n < 0) { pin_release(pin); return K_E_FAULT; }
		pin->nheld = n;
		memcpy(pin->segs, pin->held, (size_t)n * sizeof pin->segs[0]);
		a->seg = pin->segs;
		a->nseg = (uint32_t)n;
		a->segcap = PIN_SEGS;
	}
	if (b->b_resptr) {
		pin->word = pin_word(p->pagetable, b->b_resptr);
		if (pin->word == NULL) { pin_release(pin); return K_E_FAULT; }
		a->result = pin->word;
	}
	a->pin = pin;
	*out = pin;
	return 0;
}

/* Only the first process (the shell main.c starts) may shut a unit down.
 * It is the first process spawned, and pids are never reused, so it is
 * pid 1.  (A missing parent is no sign of it: a process whose parent has
 * exited is detached and has none either.) */
static bool is_first_process(const struct proc *p)
{
	return p->pid == 1;
}

/*
 * ED_OP_POLL with a stuff structure: sleep until at most stuff->one of the
 * caller's operations are in flight, then return how many are.  Without it,
 * POLL only counts.  An application waiting for a result word would
 * otherwise have to spin (or sleep whole timer ticks).  Spinning takes the
 * CPU from everyone else; and under the disk model's -icount a spinning
 * wait executes an instruction for every simulated nanosecond, where an
 * idle CPU lets QEMU skip ahead to the completion (edtest on the model:
 * six minutes spinning, two seconds sleeping).
 *
 * stuff->two, when not 0, is the address of one of the caller's result
 * words: the sleep also ends once that word no longer reads ED_PENDING.
 * A library waiting for one request then needs one system call, where
 * counting first (to learn what limit to sleep to) took two.
 */
static int64_t poll_wait(struct proc *p, struct ed_args *a, uint64_t most, uint64_t uword)
{
	if (uword % sizeof(int32_t) != 0) return K_E_FAULT;
	for (;;) {
		int64_t n = ed_request(ed, client_of(p), ED_OP_POLL, a);
		if (n < 0 || (uint64_t)n <= most)
			return n;
		if (uword != 0) {
			int32_t w;
			if (copyin(p->pagetable, &w, uword, sizeof w) < 0) return K_E_FAULT;
			if (w != ED_PENDING) return n;
		}
		if (p->killed)
			return K_E_INTR;
		/* Interrupts are off in the kernel: no completion can slip in
		 * between the count (and the look at the word) and the sleep. */
		poll_sleepers++;
		sleep_on(&poll_sleepers);
		poll_sleepers--;
	}
}

static int64_t sys_exodisk_request(struct proc *p, uint64_t op, uint64_t uprot, uint64_t ubuf,
				   uint64_t ustuff, uint64_t a4, uint64_t a5)
{
	/* Small buffers for application-defined data and proxy ranges; the
	 * kernel does not sleep inside this call, so static storage is safe. */
	static uint8_t data[ED_XN_MAX_BYTES];
	struct ed_protector prot;
	struct ed_buf buf;
	struct ed_operation stuff;
	struct ed_args a;
	uint64_t room = 0;

	if (ed == NULL) return ED_E_UNIT;
	/* The core takes the operation as an int: a number whose low bits
	 * happen to name an operation must not become that operation behind
	 * the checks below, which look at all 64 bits. */
	if (op >= ED_OP_COUNT) return ED_E_OP;
	if (op == ED_OP_SHUTDOWN && !is_first_process(p)) return K_E_PERM;   /* see docs/exodisk.md */
	memset(&a, 0, sizeof a);
	if (uprot) {
		if (copyin(p->pagetable, &prot, uprot, sizeof prot) < 0) return K_E_FAULT;
		a.prot = &prot;
	}
	if (ubuf) {
		if (copyin(p->pagetable, &buf, ubuf, sizeof buf) < 0) return K_E_FAULT;
		a.buf = &buf;
	}
	if (ustuff) {
		if (copyin(p->pagetable, &stuff, ustuff, sizeof stuff) < 0) return K_E_FAULT;
		a.stuff = &stuff;
	}

	/* Application data in (ADD_DATA, PROXY) or room for it (READ_DATA). */
	if (a.stuff && op == ED_OP_EXONODE_ADD_DATA && stuff.one <= sizeof data) {
		if (copyin(p->pagetable, data, stuff.buf, stuff.one) < 0) return K_E_FAULT;
		a.data = data;
		a.datalen = (uint32_t)stuff.one;
	} else if (a.stuff && op == ED_OP_EXONODE_PROXY && stuff.one >= 1 && stuff.one <= ED_PROXY_MAX_RANGES) {
		uint32_t len = (uint32_t)(stuff.one * sizeof(struct ed_range));
		if (copyin(p->pagetable, data, stuff.buf, len) < 0) return K_E_FAULT;
		a.data = data;
		a.datalen = len;
	} else if (a.stuff && (op == ED_OP_EXONODE_READ_DATA || op == ED_OP_UNIT_INFO)) {
		/* The application may offer more room than any entry can fill:
		 * the core is told of the room it can use here. */
		room = stuff.one;
		a.data = data;
		a.datalen = (uint32_t)MIN(room, (uint64_t)sizeof data);
		stuff.one = a.datalen;
	}

	if (op == ED_OP_POLL && a.stuff)
		return poll_wait(p, &a, stuff.one, stuff.two);

	struct pin *pin = NULL;
	if (is_async(op)) {
		int err = pin_for(p, op, &a, &pin);
		if (err < 0) return err;
	}

	int64_t r = ed_request(ed, client_of(p), (int)op, &a);
	if (pin && !a.pin_taken) pin_release(pin);
	if (r < 0) return r;

	if (op == ED_OP_UNIT_INFO && r >= (int64_t)sizeof(struct ed_unit_info) && prot.unit < BLK_MAX_UNITS)
		((struct ed_unit_info *)data)->mount_ticks = mount_ticks[prot.unit];
	if (op == ED_OP_EXONODE_READ_DATA || op == ED_OP_UNIT_INFO) {
		if (r > 0 && copyout(p->pagetable, stuff.buf, data, (size_t)MIN((uint64_t)r, (uint64_t)a.datalen)) < 0)
			return K_E_FAULT;
		stuff.one = room;
	}
	if ((op == ED_OP_EXONODE_READ_DATA || op == ED_OP_EXONODE_CAP_DISCOVER || op == ED_OP_GET_FREE_MAP ||
	     op == ED_OP_DROP_CACHE || op == ED_OP_UNIT_INFO) &&
	    copyout(p->pagetable, ustuff, &stuff, sizeof stuff) < 0)
		return K_E_FAULT;
	return r;
}

static void exodisk_shutdown_all(void);
static void report_fallback(int unit, const struct ed_unit_info *st);

/*
 * A process is exiting.  Its exodisk operations in flight finish first: it
 * sleeps here until none is left, whatever kill came (as a Linux process
 * with I/O in flight does not die before the I/O is done).  Only then may
 * its death be announced - its shared locks marked DEAD (shseg.c calls
 * this before it does), its parent's wait return - so a write of the dead
 * process never lands after whoever takes over from it has read or
 * written the same sectors (docs/sharing.md, "A holder that dies").
 * Called again (the exit hook after shseg's), it does nothing.
 */
void exodisk_exit(struct proc *p)
{
	if (p->edc == NULL) return;
	while (ed && p->edc->registered && p->edc->pending > 0) {
		poll_sleepers++;             /* every completion wakes them */
		sleep_on(&poll_sleepers);
		poll_sleepers--;
	}
	if (ed) ed_client_exit(ed, p->edc);
	/* The core has unmapped every exonode map of this client by now. */
	p->edc = NULL;
}

/* ---- boot and power-off --------------------------------------------------- */

static void sync_done(struct blkreq *r) { *(volatile int *)r->priv = 1; }

/* A unit is blank if both superblock sectors are all zeros: formatting it
 * cannot destroy anything.  A unit that fails to mount for any other reason
 * (damage, a different key) is never formatted automatically. */
static bool unit_is_blank(int unit)
{
	uint8_t *page = kalloc();
	if (page == NULL) return false;
	bool blank = true;
	uint64_t sectors[2] = { 0, 8 };
	for (int i = 0; i < 2 && blank; i++) {
		struct blk_seg seg = { (uint64_t)page, BLK_SECTOR_SIZE };
		volatile int done = 0;
		struct blkreq r = { .op = BLK_READ, .nseg = 1, .unit = unit, .sector = sectors[i],
				    .nsectors = 1, .seg = &seg, .done = sync_done, .priv = (void *)&done };
		if (blk_submit(&r) < 0) { blank = false; break; }
		while (!done) env_wait(NULL);
		if (r.status < 0) { blank = false; break; }
		for (unsigned k = 0; k < BLK_SECTOR_SIZE; k++)
			if (page[k]) { blank = false; break; }
	}
	kfree(page);
	return blank;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9') return c - '0';
	if (c >= 'a' && c <= 'f') return c - 'a' + 10;
	if (c >= 'A' && c <= 'F') return c - 'A' + 10;
	return -1;
}

/* A decimal boot option, or 0 if it is absent (digits up to the first other
 * character count; the core checks the ranges). */
static uint64_t bootopt_number(const char *key)
{
	const char *s = bootopt(key);
	uint64_t n = 0;
	for (; s != NULL && *s >= '0' && *s <= '9' && n < (1ull << 40); s++)
		n = n * 10 + (uint64_t)(*s - '0');
	return n;
}

/* edkey=<32 hex digits> on the command line, else the development key. */
static void boot_key(uint8_t key[16])
{
	const char *hex = bootopt("edkey");
	if (hex && strlen(hex) == 32) {
		bool ok = true;
		for (int i = 0; i < 16 && ok; i++) {
			int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
			if (hi < 0 || lo < 0) ok = false;
			else key[i] = (uint8_t)(hi << 4 | lo);
		}
		if (ok) return;
	}
	if (hex) kprintf("exodisk: edkey must be 32 hex digits; using the development key\n");
	memcpy(key, ED_DEV_KEY, 16);
}

static void *freemap_page(void *arg, uint64_t i)
{
	int unit = (int)(uintptr_t)arg;
	return i < ed_freemap_npages(ed, unit) ? ed_freemap_page(ed, unit, (uint32_t)i) : NULL;
}

static void export_free_map(int unit)
{
	kshare_lazy(UFREEMAP(unit), ed_freemap_npages(ed, unit), freemap_page, (void *)(uintptr_t)unit);
}

/* Sizes for messages: 512 MiB, 1.5 TiB, 16 TiB. */
static void size_text(uint64_t sectors, char *buf, size_t len)
{
	static const char *unit_name[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	uint64_t v = sectors / 2, frac = 0;     /* KiB */
	int u = 0;
	while (v >= 1024 && u < 4) {
		frac = v % 1024;
		v /= 1024;
		u++;
	}
	uint64_t tenth = frac * 10 / 1024;
	if (tenth != 0 && v < 100) ksnprintf(buf, len, "%lu.%lu %s", v, tenth, unit_name[u]);
	else ksnprintf(buf, len, "%lu %s", v, unit_name[u]);
}

/* Why a unit is left alone, in words. */
static void not_mounted(int unit, int err, uint64_t cap)
{
	char size[32];
	size_text(cap, size, sizeof size);
	uint64_t bad = ed_bad_sector(ed);
	switch (err) {
	case ED_E_FORMAT:
		kprintf("exodisk: unit %d (%s) holds no exodisk and is not blank; left alone "
			"(format it with tools/exotool format, or blank its first 8 KiB)\n", unit, size);
		break;
	case ED_E_VERSION:
		kprintf("exodisk: unit %d (%s) holds an exodisk of another format version (this kernel "
			"reads formats %d and %d); left alone: reformat it with tools/exotool format, or "
			"remove the image (make remakes build/disk0.img)\n", unit, size, ED_SB_FMT_OLD,
			ED_SB_FMT);
		break;
	case ED_E_BADMAC:
		kprintf("exodisk: unit %d (%s) not mounted: its metadata does not verify at sector %lu - "
			"another key (edkey=), or damaged; left alone (tools/exotool check tells more)\n",
			unit, size, bad);
		break;
	case ED_E_CORRUPT: case ED_E_STALE:
		kprintf("exodisk: unit %d (%s) not mounted: its metadata is damaged at sector %lu; "
			"left alone (tools/exotool check tells more)\n", unit, size, bad);
		break;
	case ED_E_TOOBIG:
		kprintf("exodisk: unit %d (%s) not mounted: the exodisk on it is larger than the unit "
			"(a truncated image?); left alone\n", unit, size);
		break;
	default:
		kprintf("exodisk: unit %d (%s) not mounted: error %d (%s); left alone\n", unit, size, err,
			err == ED_E_NOMEM ? "out of kernel memory" :
			err <= -64 && err > -128 ? "the disk failed a read or write" :
			"docs/exodisk.md lists the codes");
		break;
	}
}

void exodisk_init(void)
{
	bootopt_declare("edstats");      /* read at power-off */
	for (int i = 0; i < NPINS; i++) {
		pins[i].next_free = free_pins;
		free_pins = &pins[i];
	}
	syscall_register(SYS_exodisk_request, sys_exodisk_request, "exodisk_request");
	proc_on_exit(exodisk_exit);
	power_on_shutdown(exodisk_shutdown_all);

	uint8_t key[16];
	boot_key(key);
	struct ed_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.cache_entries = (uint32_t)bootopt_number("edcache");
	/* Binding-tree pages kept in memory per unit (0: the default, 1024). */
	cfg.meta_pages = (uint32_t)bootopt_number("edmeta");
	if (bootopt("edbind"))
		kprintf("exodisk: edbind= is no longer needed: the binding tree grows with what is "
			"stored; ignored\n");
	int err = 0;
	ed = ed_create(&env, &cfg, key, &err);
	if (ed == NULL) {
		kprintf("exodisk: cannot start (error %d: %s); the disk is unavailable\n", err,
			err == ED_E_ARG ? "edcache must be a prime, edmeta at least 4" : "out of memory");
		return;
	}
	bool format_blank = !(bootopt("edformat") && !bootopt_flag("edformat"));
	for (int unit = 0; unit < blk_nunits(); unit++) {
		uint64_t cap = blk_capacity(unit);
		char size[32];
		size_text(cap, size, sizeof size);
		uint64_t t0 = rdtime();
		err = ed_mount(ed, unit);
		if (err == ED_E_FORMAT && unit_is_blank(unit)) {
			if (!format_blank) {
				kprintf("exodisk: unit %d (%s) is blank; not formatting it (edformat=0)\n", unit, size);
				continue;
			}
			if (cap < ed_format_min_sectors()) {
				kprintf("exodisk: unit %d is blank but too small for an exodisk: %lu sectors, "
					"it needs at least %lu; left alone, nothing written\n", unit, cap,
					ed_format_min_sectors());
				continue;
			}
			if (cap > ED_MAX_SECTORS) {
				kprintf("exodisk: unit %d is blank but %s is more than an exodisk addresses "
					"(32 TiB: the free map's window, kernel/uapi/layout.h); left alone, "
					"nothing written\n", unit, size);
				continue;
			}
			uint64_t tf = rdtime();
			err = ed_format(ed, unit, NULL);
			tf = rdtime() - tf;
			if (!bootopt_flag("quiet") && err == 0)
				kprintf("exodisk: unit %d (%s) was blank; formatted it (%lu sectors written in "
					"%lu ms)\n", unit, size, ed_format_sectors(ed),
					tf * 1000 / bootinfo.timebase_hz);
			if (err == 0) {
				t0 = rdtime();
				err = ed_mount(ed, unit);
			}
		}
		mount_ticks[unit] = rdtime() - t0;
		if (err < 0) {
			not_mounted(unit, err, cap);
			continue;
		}
		export_free_map(unit);
		struct ed_unit_info st;
		if (!bootopt_flag("quiet") && ed_unit_info(ed, unit, NULL, &st) == 0)
			kprintf("exodisk: unit %d mounted: %s, %lu bindings, %lu sectors allocated; mount read "
				"%lu sectors in %lu ms, replayed %lu log records; kernel memory %lu KiB\n",
				unit, size, st.bindings, st.allocated, st.mount_reads,
				mount_ticks[unit] * 1000 / bootinfo.timebase_hz, st.replayed, st.kmem_bytes / 1024);
		if (ed_unit_info(ed, unit, NULL, &st) == 0 && st.lost_records > 0)
			kprintf("exodisk: unit %d: DAMAGED COMMIT LOG: record %lu (sector %lu) fails to verify, "
				"and valid records follow it; it and the %lu after it were not applied, so the "
				"unit is as it was before record %lu: at least %lu block write-backs (exonode blocks, "
				"extent headers) committed since are lost, and the file systems on the unit "
				"may miss their last changes (run fsck).  The log has been set past them.  "
				"Offline, `exotool check IMAGE` reports this without changing the image, "
				"and `exotool recover IMAGE` applies the loss as this boot did.\n",
				unit, st.lost_seq, st.lost_at, st.lost_records - 1, st.lost_seq, st.lost_blocks);
		if (ed_unit_info(ed, unit, NULL, &st) == 0 && st.fell)
			report_fallback(unit, &st);
	}
}

/* The newest checkpoint was damaged and the mount used the one before it
 * (docs/exodisk.md, "A damaged checkpoint"): say so, and what it cost. */
static void report_fallback(int unit, const struct ed_unit_info *st)
{
	if (st->fell_gen != 0)
		kprintf("exodisk: unit %d: DAMAGED CHECKPOINT: the newest checkpoint (generation %lu, superblock "
			"at sector %lu) %s at sector %lu, so the unit was mounted from the one before "
			"it (generation %lu) and the log replayed from there; ", unit, st->fell_gen, st->fell_sb,
			st->fell_io ? "CANNOT BE READ (the disk failed every read of it: a media error)"
			            : "does not verify", st->fell_at, st->fell_used_gen);
	else
		kprintf("exodisk: unit %d: DAMAGED SUPERBLOCK: the superblock at sector %lu does not verify, so "
			"the unit was mounted from the other one (generation %lu); if the damaged one was the "
			"newer checkpoint, the log was replayed from the older; ", unit, st->fell_sb,
			st->fell_used_gen);
	if (st->fell_lost == 0)
		kprintf("nothing is lost: the log still held every change since.  ");
	else if (st->fell_lost != UINT64_MAX)
		kprintf("%lu log records only the damaged checkpoint still covered are LOST (block write-backs "
			"committed before it), and the file systems on the unit may miss those changes (run "
			"fsck).  ", st->fell_lost);
	else
		kprintf("what it held beyond the log cannot be known (if anything is missing, run fsck).  ");
	kprintf("This mount wrote a new superblock in its place.  Offline, `exotool check IMAGE` reports "
		"this without changing the image, and `exotool recover IMAGE` mounts as this boot did and "
		"checkpoints.\n");
}

/* Before power-off: checkpoint every mounted unit so the next boot mounts
 * without replaying the log.  Committed state is durable without this (the
 * commit log is written with FUA); this only makes the next mount quick. */
static void exodisk_shutdown_all(void)
{
	if (ed == NULL) return;
	static struct ed_client kclient = { .slot = -1 };
	for (int unit = 0; unit < blk_nunits(); unit++) {
		struct ed_unit_info st;
		if (bootopt_flag("edstats") && ed_unit_info(ed, unit, NULL, &st) == 0)
			kprintf("exodisk: unit %d since mount: %lu blocks committed in %lu log records (%lu "
				"of them naming sectors written or carrying the unwritten set), %lu "
				"checkpoints writing %lu sectors, %lu binding-tree pages read (%lu in memory), "
				"kernel memory %lu KiB\n", unit, st.commits, st.records, st.unw_records,
				st.checkpoints, st.ckpt_sectors, st.meta_reads, st.meta_resident,
				st.kmem_bytes / 1024);
		if (bootopt_flag("edstats") && ed_unit_info(ed, unit, NULL, &st) == 0 &&
		    st.unw_zero_ckpts > 0)
			kprintf("exodisk: unit %d: %lu checkpoints zeroed %lu unwritten sectors their carry "
				"records had no room for\n", unit, st.unw_zero_ckpts, st.unw_zeroed);
		volatile int32_t word = 0;
		struct ed_protector prot;
		memset(&prot, 0, sizeof prot);
		prot.unit = (uint16_t)unit;
		struct ed_args a;
		memset(&a, 0, sizeof a);
		a.prot = &prot;
		a.result = (int32_t *)&word;
		if (ed_request(ed, &kclient, ED_OP_SHUTDOWN, &a) < 0) continue;
		uint64_t deadline = rdtime() + 5 * bootinfo.timebase_hz;
		while (word == ED_PENDING && rdtime() < deadline) env_wait(NULL);
	}
}
