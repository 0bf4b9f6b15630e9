/*
 * sys_exodisk.c - the exodisk_request system call and the exodisk's place in
 * the kernel: the environment the portable core needs (kernel/exodisk/ed_env.h),
 * mounting every disk unit at boot, exporting the free maps, per-process
 * client state, and a clean shutdown before power-off.
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
	/* The word is pinned: it stays valid even if its process has exited. */
	*(volatile int32_t *)word = value;
	if (value != ED_PENDING && poll_sleepers > 0)
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
};

/* ---- the system call ------------------------------------------------------ */

static bool is_async(uint64_t op)
{
	return op == ED_OP_IO || op == ED_OP_EXTENT_READ || op == ED_OP_EXTENT_WRITE ||
	       op == ED_OP_EXONODE_READ || op == ED_OP_EXONODE_WRITE || op == ED_OP_SHUTDOWN ||
	       op == ED_OP_FLUSH;
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
 */
static int64_t poll_wait(struct proc *p, struct ed_args *a, uint64_t most)
{
	for (;;) {
		int64_t n = ed_request(ed, client_of(p), ED_OP_POLL, a);
		if (n < 0 || (uint64_t)n <= most)
			return n;
		if (p->killed)
			return K_E_INTR;
		/* Interrupts are off in the kernel: no completion can slip in
		 * between the count and the sleep. */
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
	} else if (a.stuff && op == ED_OP_EXONODE_READ_DATA) {
		/* The application may offer more room than any entry can fill:
		 * the core is told of the room it can use here. */
		room = stuff.one;
		a.data = data;
		a.datalen = (uint32_t)MIN(room, (uint64_t)sizeof data);
		stuff.one = a.datalen;
	}

	if (op == ED_OP_POLL && a.stuff)
		return poll_wait(p, &a, stuff.one);

	struct pin *pin = NULL;
	if (is_async(op)) {
		int err = pin_for(p, op, &a, &pin);
		if (err < 0) return err;
	}

	int64_t r = ed_request(ed, client_of(p), (int)op, &a);
	if (pin && !a.pin_taken) pin_release(pin);
	if (r < 0) return r;

	if (op == ED_OP_EXONODE_READ_DATA) {
		if (r > 0 && copyout(p->pagetable, stuff.buf, data, (size_t)MIN((uint64_t)r, (uint64_t)a.datalen)) < 0)
			return K_E_FAULT;
		stuff.one = room;
	}
	if ((op == ED_OP_EXONODE_READ_DATA || op == ED_OP_EXONODE_CAP_DISCOVER || op == ED_OP_GET_FREE_MAP ||
	     op == ED_OP_DROP_CACHE) &&
	    copyout(p->pagetable, ustuff, &stuff, sizeof stuff) < 0)
		return K_E_FAULT;
	return r;
}

static void exodisk_shutdown_all(void);

static void exodisk_proc_exit(struct proc *p)
{
	if (p->edc == NULL) return;
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

static void export_free_map(int unit)
{
	uint32_t n = ed_freemap_npages(ed, unit);
	for (uint32_t i = 0; i < n; i++)
		kshare_register(UFREEMAP(unit) + (uint64_t)i * PGSIZE, ed_freemap_page(ed, unit, i), 1);
}

void exodisk_init(void)
{
	bootopt_declare("edstats");      /* read at power-off */
	for (int i = 0; i < NPINS; i++) {
		pins[i].next_free = free_pins;
		free_pins = &pins[i];
	}
	syscall_register(SYS_exodisk_request, sys_exodisk_request, "exodisk_request");
	proc_on_exit(exodisk_proc_exit);
	power_on_shutdown(exodisk_shutdown_all);

	uint8_t key[16];
	boot_key(key);
	struct ed_config cfg;
	memset(&cfg, 0, sizeof cfg);
	cfg.cache_entries = (uint32_t)bootopt_number("edcache");
	/* How many headers and exonode blocks a blank unit's binding table
	 * will hold (0: the default, a sector in 128).  A disk of small
	 * self-protected extents needs more: 10,000 one-kilobyte extents do
	 * not fit the default table of the RZ25 model (6,504). */
	struct ed_format_opts fo;
	memset(&fo, 0, sizeof fo);
	fo.max_bindings = bootopt_number("edbind");
	int err = 0;
	ed = ed_create(&env, &cfg, key, &err);
	if (ed == NULL) {
		kprintf("exodisk: cannot start (error %d); the disk is unavailable\n", err);
		return;
	}
	bool format_blank = !(bootopt("edformat") && !bootopt_flag("edformat"));
	for (int unit = 0; unit < blk_nunits(); unit++) {
		err = ed_mount(ed, unit);
		if (err == ED_E_FORMAT && format_blank && unit_is_blank(unit)) {
			kprintf("exodisk: unit %d is blank; formatting it\n", unit);
			err = ed_format(ed, unit, &fo);
			if (err == 0) err = ed_mount(ed, unit);
		}
		if (err < 0) {
			kprintf("exodisk: unit %d not mounted: error %d%s\n", unit, err,
				err == ED_E_FORMAT ? " (no valid exodisk: format it with tools/exotool)" :
				err == ED_E_BADMAC ? " (metadata fails its MAC: tampered, or another key)" : "");
			continue;
		}
		export_free_map(unit);
		struct ed_unit_stats st;
		if (!bootopt_flag("quiet") && ed_unit_stats(ed, unit, &st) == 0)
			kprintf("exodisk: unit %d mounted, %lu sectors (data from %lu, log %lu, snapshot %lu, "
				"bindings %lu of %lu), replayed %lu log records\n", unit, st.nsectors, st.data_start,
				st.log_sectors, st.snapshot_sectors, st.bindings, st.max_bindings, st.replayed);
	}
}

/* Before power-off: checkpoint every mounted unit so the next boot mounts
 * without replaying the log.  Committed state is durable without this (the
 * commit log is written with FUA); this only makes the next mount quick. */
static void exodisk_shutdown_all(void)
{
	if (ed == NULL) return;
	static struct ed_client kclient = { .slot = -1 };
	for (int unit = 0; unit < blk_nunits(); unit++) {
		struct ed_unit_stats st;
		if (bootopt_flag("edstats") && ed_unit_stats(ed, unit, &st) == 0)
			kprintf("exodisk: unit %d since mount: %lu blocks committed in %lu log records, %lu home "
				"writes, %lu checkpoints; header+data writes %lu, uncached extent reads %lu, "
				"cached reads %lu\n", unit, st.commits, st.records, st.homes, st.checkpoints,
				st.sg_writes, st.bounce_reads, st.cached_reads);
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
