/*
 * faulttest.c - misbehaves on purpose, one way per case, so the tests can
 * check that the kernel contains the damage: the process is killed or gets an
 * error, with a message naming it and the cause, and the system keeps running.
 *
 *   faulttest kread | kwrite      read / write kernel memory
 *   faulttest null                dereference NULL
 *   faulttest jump                jump to an unmapped address
 *   faulttest kjump               jump into the kernel's text
 *   faulttest illegal             execute an illegal instruction
 *   faulttest stack               overflow the user stack
 *   faulttest readonly            write to the read-only kernel info page
 *   faulttest syscall             unknown system call (expects an error)
 *   faulttest badptr              bad pointers to system calls (expects errors)
 *   faulttest sbrk                absurd heap growth (expects an error)
 *   faulttest spawnargs           bad spawn arguments (expects errors)
 *   faulttest peer                try to read/write another process's memory
 *   faulttest handles             bad handles, pipe misuse, handle passing (expects errors)
 *   faulttest nowait              hread/hwrite with H_NOWAIT: an empty or full pipe,
 *                                 a write cut short, bad flag bits (expects errors)
 *   faulttest lease               hread/hwrite with H_LEASE: a pipe wait that ends when
 *                                 another process waits for a shared lock this one holds
 *   faulttest procs               bad kill, wait and cons_ctl arguments (expects errors)
 *   faulttest quota FILE          write FILE, then hold this process's whole exodisk
 *                                 cache quota and exit: FILE must still be written
 *                                 back (expects status 0)
 *   faulttest nomem FILE          write FILE, then take all the heap and exit: the
 *                                 write-back fails, and the exit status says so
 *                                 (expects status 1 and a message)
 *   faulttest peer-child ADDR V   (helper for peer)
 *   faulttest lease-child         (helper for lease)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libos/edc.h"
#include "libos/exo.h"
#include "libos/sys.h"
#include "libos/share.h"
#include "libos/clock.h"
#include "kernel/uapi/errno.h"
#include "kernel/uapi/proc.h"

/* Where each kernel is linked (kernel.ld in kernel/arch/riscv/ and
 * kernel/arch/x86_64/). */
#if defined(__x86_64__)
#define KERNEL_TEXT 0x200000ul
#define ILLEGAL_INSTRUCTION() __asm__ volatile("ud2")
#else
#define KERNEL_TEXT 0x80200000ul
#define ILLEGAL_INSTRUCTION() __asm__ volatile(".word 0x00000000")
#endif

static int expect(const char *what, long got, long want)
{
	if (got == want) { printf("ok: %s -> %ld (%s)\n", what, got, exo_strerror(got)); return 0; }
	printf("FAIL: %s -> %ld, expected %ld\n", what, got, want);
	return 1;
}

/* Recurse until the stack runs into its guard page (the depth check only
 * keeps the compiler from proving the recursion infinite). */
static int recurse(int depth)
{
	volatile char pad[1024];
	pad[0] = (char)depth;
	if (depth == -1) return 0;
	return recurse(depth + 1) + pad[0];
}

static int peer(void)
{
	/* A secret at an address the child will also have mapped: the child runs the
	 * same program, so this heap address exists in its address space too, but
	 * must be its own page, not ours. */
	volatile uint64_t *secret = malloc(4096);
	*secret = 0x5ec2e7c0ffeeull;
	char addr[32], val[32];
	snprintf(addr, sizeof addr, "%lu", (unsigned long)secret);
	snprintf(val, sizeof val, "%lu", (unsigned long)*secret);
	char *argv[] = { "faulttest", "peer-child", addr, val, NULL };
	int pid = exo_spawn("/bin/faulttest", argv, NULL);
	if (pid < 0) { printf("FAIL: spawn: %s\n", exo_strerror(pid)); return 1; }
	int status;
	exo_wait(pid, &status);
	if (*secret != 0x5ec2e7c0ffeeull) { printf("FAIL: the child changed our memory\n"); return 1; }
	printf("ok: parent memory unchanged (child status %d)\n", status);
	return status == 0 ? 0 : 1;
}

static int peer_child(const char *addr, const char *val)
{
	volatile uint64_t *p = (volatile uint64_t *)strtoul(addr, NULL, 10);
	uint64_t secret = strtoull(val, NULL, 10);
	/* Make sure the address is mapped here too, so the test reads real memory. */
	while ((uintptr_t)sbrk(0) <= (uintptr_t)p + 8) if (sbrk(4096) == (void *)-1) break;
	uint64_t seen = *p;
	if (seen == secret) { printf("FAIL: child read the parent's secret\n"); return 1; }
	*p = 0xdeadbeef;
	printf("ok: child sees its own memory at %s\n", addr);
	return 0;
}


/* Handles and pipes (kernel/handle.c, kernel/pipe.c) given what a buggy or
 * hostile program would give them. */
static int handles(void)
{
	int bad = 0;
	char buf[16];
	int32_t h[2];
	bad |= expect("hread(-1)", sys_hread(-1, buf, 1), K_E_BADH);
	bad |= expect("hread(NHANDLE)", sys_hread(NHANDLE, buf, 1), K_E_BADH);
	bad |= expect("hwrite(never opened)", sys_hwrite(5, "x", 1), K_E_BADH);
	bad |= expect("hclose(never opened)", sys_hclose(5), K_E_BADH);
	bad |= expect("pipe(result in kernel)", sys_pipe((int32_t *)KERNEL_TEXT), K_E_FAULT);
	bad |= expect("pipe(result read-only)", sys_pipe((int32_t *)UKINFO), K_E_FAULT);
	if ((bad |= expect("pipe", sys_pipe(h), 0))) return bad;
	/* Nothing leaked by the failed calls: the new pipe got the first slots. */
	bad |= expect("first pipe's handles are 0 and 1", h[0] * 10 + h[1], 1);
	bad |= expect("hwrite on the read end", sys_hwrite(h[0], "x", 1), K_E_BADH);
	bad |= expect("hread on the write end", sys_hread(h[1], buf, 1), K_E_BADH);
	bad |= expect("hwrite(from kernel memory)", sys_hwrite(h[1], (void *)KERNEL_TEXT, 8), K_E_FAULT);
	bad |= expect("hwrite(wrapping length)", sys_hwrite(h[1], buf, (unsigned long)-8), K_E_FAULT);
	bad |= expect("hwrite 10 bytes", sys_hwrite(h[1], "0123456789", 10), 10);
	bad |= expect("hread(2^32 + an open handle)", sys_call3(SYS_hread, (1l << 32) + h[0], buf, 1), K_E_BADH);
	bad |= expect("hread(into the read-only info page)", sys_hread(h[0], (void *)UKINFO, 4), K_E_FAULT);
	bad |= expect("hread(into kernel memory)", sys_hread(h[0], (void *)KERNEL_TEXT, 4), K_E_FAULT);
	bad |= expect("hread 4 (the bytes were not lost)", sys_hread(h[0], buf, 4), 4);
	bad |= expect("  and they are the first 4", memcmp(buf, "0123", 4), 0);
	bad |= expect("hclose(write end)", sys_hclose(h[1]), 0);
	bad |= expect("hclose(write end) again", sys_hclose(h[1]), K_E_BADH);
	bad |= expect("hread the other 6 after the writer left", sys_hread(h[0], buf, 16), 6);
	bad |= expect("hread at end of file", sys_hread(h[0], buf, 16), 0);
	bad |= expect("hclose(read end)", sys_hclose(h[0]), 0);
	if ((bad |= expect("pipe", sys_pipe(h), 0))) return bad;
	bad |= expect("hclose(read end first)", sys_hclose(h[0]), 0);
	bad |= expect("hwrite with no reader", sys_hwrite(h[1], "x", 1), K_E_PIPE);
	bad |= expect("hclose", sys_hclose(h[1]), 0);

	/* Spawn's handle list. */
	struct spawn_opts o;
	char *argv[] = { "true", NULL };
	memset(&o, 0, sizeof o);
	o.nhandles = -1;
	bad |= expect("spawn(nhandles -1)", sys_spawn_opts("/bin/true", argv, NULL, &o), K_E_INVAL);
	o.nhandles = NHANDLE + 1;
	bad |= expect("spawn(nhandles NHANDLE+1)", sys_spawn_opts("/bin/true", argv, NULL, &o), K_E_INVAL);
	o.nhandles = 1;
	o.handles[0] = 7;
	bad |= expect("spawn(passing a handle never opened)", sys_spawn_opts("/bin/true", argv, NULL, &o), K_E_BADH);
	bad |= expect("spawn(opts in kernel memory)",
	              sys_spawn_opts("/bin/true", argv, NULL, (struct spawn_opts *)KERNEL_TEXT), K_E_FAULT);
	int st;
	bad |= expect("no child was made by the failed spawns", sys_wait_opts(-1, &st, WAIT_NOHANG), K_E_CHILD);

	/* The table fills, says so, and every page comes back. */
	uint64_t before = exo_kinfo()->free_pages;
	int32_t all[NHANDLE];
	int n = 0;
	long e;
	while ((e = sys_pipe(h)) == 0) { all[n++] = h[0]; all[n++] = h[1]; }
	bad |= expect("pipe with the table full", e, K_E_NOMEM);
	bad |= expect("  after this many handles", n, NHANDLE);
	for (int i = 0; i < n; i++) sys_hclose(all[i]);
	for (int i = 0; i < 500; i++) {
		if (sys_pipe(h) != 0) { bad |= expect("pipe in a loop", -1, 0); break; }
		sys_hwrite(h[1], "abc", 3);
		sys_hclose(h[i & 1]);
		sys_hclose(h[!(i & 1)]);
	}
	bad |= expect("free pages after 508 pipes made and closed, minus before",
	              (long)(exo_kinfo()->free_pages - before), 0);
	return bad;
}

/* H_NOWAIT (kernel/uapi/syscall.h): where a pipe's hread or hwrite would
 * wait, it returns instead - K_E_AGAIN, or what it wrote - losing and
 * repeating nothing; other flag bits are refused.  The calls are made
 * directly: libos/sys.h's stubs add the flag only for a process keeping a
 * shared file system's lease. */
static long nw_read(int h, void *buf, unsigned long len, unsigned long flags)
{
	return sys_call4(SYS_hread, h, buf, len, flags);
}
static long nw_write(int h, const void *buf, unsigned long len, unsigned long flags)
{
	return sys_call4(SYS_hwrite, h, buf, len, flags);
}

static int nowait(void)
{
	static char out[PIPE_SIZE + 300], in[PIPE_SIZE + 300];
	int bad = 0;
	int32_t h[2];
	for (unsigned i = 0; i < sizeof out; i++)
		out[i] = (char)(i * 7 + i / 251);
	if ((bad |= expect("pipe", sys_pipe(h), 0))) return bad;
	bad |= expect("hread(NOWAIT) of an empty pipe with a writer", nw_read(h[0], in, 1, H_NOWAIT), K_E_AGAIN);
	bad |= expect("hread(NOWAIT, 0 bytes) of an empty pipe", nw_read(h[0], in, 0, H_NOWAIT), 0);
	bad |= expect("hwrite(NOWAIT) 10 bytes into an empty pipe", nw_write(h[1], out, 10, H_NOWAIT), 10);
	bad |= expect("hread(NOWAIT) 16 with 10 there: the 10", nw_read(h[0], in, 16, H_NOWAIT), 10);
	bad |= expect("  and they are the ones written", memcmp(in, out, 10), 0);
	bad |= expect("hread(NOWAIT) of the pipe emptied again", nw_read(h[0], in, 16, H_NOWAIT), K_E_AGAIN);

	/* Full: a write past the ring stops where the ring does. */
	bad |= expect("hwrite(NOWAIT) of ring + 300: cut short at the ring",
	              nw_write(h[1], out, PIPE_SIZE + 300, H_NOWAIT), PIPE_SIZE);
	bad |= expect("hwrite(NOWAIT) into the full pipe", nw_write(h[1], out, 1, H_NOWAIT), K_E_AGAIN);
	bad |= expect("hread 100 of the full pipe", sys_hread(h[0], in, 100), 100);
	bad |= expect("hwrite(NOWAIT) 300 with room for 100: the 100 that fit",
	              nw_write(h[1], out + PIPE_SIZE, 300, H_NOWAIT), 100);
	bad |= expect("hwrite(NOWAIT) into the full pipe again", nw_write(h[1], out, 1, H_NOWAIT), K_E_AGAIN);
	/* What is in the ring (wrapped around its end) is out[100, ring+100):
	 * the part written and nothing of the refused calls. */
	bad |= expect("hread(NOWAIT) of the whole ring", nw_read(h[0], in, sizeof in, H_NOWAIT), PIPE_SIZE);
	bad |= expect("  in order, none lost or repeated", memcmp(in, out + 100, PIPE_SIZE), 0);

	/* Bad flags are refused before anything moves. */
	bad |= expect("hwrite 3 bytes", sys_hwrite(h[1], "abc", 3), 3);
	bad |= expect("hread(flags 4)", nw_read(h[0], in, 3, 4), K_E_INVAL);
	bad |= expect("hread(flags NOWAIT | 2^32)", nw_read(h[0], in, 3, H_NOWAIT | (1ul << 32)), K_E_INVAL);
	bad |= expect("hread(flags all ones)", nw_read(h[0], in, 3, ~0ul), K_E_INVAL);
	bad |= expect("hwrite(flags 4)", nw_write(h[1], "x", 1, 4), K_E_INVAL);
	bad |= expect("hwrite(flags 2^63)", nw_write(h[1], "x", 1, 1ul << 63), K_E_INVAL);
	bad |= expect("hread(NOWAIT) after them: the 3 bytes, no more", nw_read(h[0], in, 16, H_NOWAIT), 3);
	bad |= expect("  and they are abc", memcmp(in, "abc", 3), 0);
	bad |= expect("hread(NOWAIT, never-opened handle)", nw_read(9, in, 1, H_NOWAIT), K_E_BADH);
	bad |= expect("hwrite(NOWAIT, the read end)", nw_write(h[0], "x", 1, H_NOWAIT), K_E_BADH);
	bad |= expect("hwrite(NOWAIT, from kernel memory)", nw_write(h[1], (void *)KERNEL_TEXT, 8, H_NOWAIT),
	              K_E_FAULT);

	/* The other end gone: end of file and K_E_PIPE, as without the flag. */
	bad |= expect("hclose(write end)", sys_hclose(h[1]), 0);
	bad |= expect("hread(NOWAIT) with no writer: end of file", nw_read(h[0], in, 1, H_NOWAIT), 0);
	bad |= expect("hclose(read end)", sys_hclose(h[0]), 0);
	if ((bad |= expect("pipe", sys_pipe(h), 0))) return bad;
	bad |= expect("hclose(read end first)", sys_hclose(h[0]), 0);
	bad |= expect("hwrite(NOWAIT) with no reader", nw_write(h[1], "x", 1, H_NOWAIT), K_E_PIPE);
	bad |= expect("hclose", sys_hclose(h[1]), 0);
	return bad;
}

/* H_LEASE (kernel/uapi/syscall.h): a process holding a shared segment's
 * lock waits for a pipe only until another process waits for that lock
 * (kernel/shseg.c tells it); the library OS then publishes and lets go
 * (libos/sys.h).  Without it the two would wait for each other forever:
 * a test that fails hangs (the case's time limit). */
static const uint8_t lease_name[SHSEG_NAME] = "faulttest-lease";

static int lease_waiter(void)
{
	char *argv[] = { "faulttest", "lease-child", NULL };
	return (int)sys_spawn("/bin/faulttest", argv, NULL);
}

static int lease(void)
{
	static char out[PIPE_SIZE];
	char in[16];
	int bad = 0, st;
	struct share s;
	int32_t h[2];
	if ((bad |= expect("attach a segment", share_attach(&s, lease_name, 4096), 0))) return bad;
	if ((bad |= expect("take its lock", share_enter(&s) >= 0, 1))) return bad;
	if ((bad |= expect("pipe", sys_pipe(h), 0))) return bad;
	bad |= expect("hwrite 5 bytes", sys_hwrite(h[1], "hello", 5), 5);
	bad |= expect("hread(LEASE) with bytes there: they come", nw_read(h[0], in, 16, H_LEASE), 5);

	/* An empty pipe: the wait ends once the child waits for our lock (or
	 * at once, if it already does). */
	int pid = lease_waiter();
	bad |= expect("hread(LEASE) of an empty pipe, a process waiting for our lock",
	              nw_read(h[0], in, 1, H_LEASE), K_E_AGAIN);
	share_leave(&s);
	bad |= expect("  that process took the lock once we let go", sys_wait(pid, &st) == pid && st == 0, 1);

	/* A full pipe: what fitted, then the same. */
	if ((bad |= expect("take the lock again", share_enter(&s) >= 0, 1))) return bad;
	bad |= expect("fill the pipe", nw_write(h[1], out, PIPE_SIZE, H_NOWAIT), PIPE_SIZE);
	bad |= expect("hread 4", sys_hread(h[0], in, 4), 4);
	/* This time the child most likely waits for the lock before our call
	 * (we sleep meanwhile): the call must not wait at all. */
	pid = lease_waiter();
	libos_sleep_ns(20 * 1000 * 1000);
	bad |= expect("hwrite(LEASE) 10 with room for 4, a process waiting for our lock: the 4",
	              nw_write(h[1], out, 10, H_LEASE), 4);
	share_leave(&s);
	bad |= expect("  that process took the lock once we let go", sys_wait(pid, &st) == pid && st == 0, 1);

	bad |= expect("hwrite(NOWAIT | LEASE) to the full pipe", nw_write(h[1], out, 1, H_NOWAIT | H_LEASE),
	              K_E_AGAIN);
	sys_hclose(h[0]);
	sys_hclose(h[1]);
	share_detach(&s);
	return bad;
}

static int lease_child(void)
{
	struct share s;
	if (share_attach(&s, lease_name, 4096) != 0 || share_enter(&s) < 0) return 1;
	share_leave(&s);
	share_detach(&s);
	return 0;
}

/* kill, wait and the interrupt key, given bad arguments. */
static int procs(void)
{
	int bad = 0, st;
	bad |= expect("kill(0)", sys_kill(0, 9), K_E_SRCH);
	bad |= expect("kill(2^32 + own pid)", sys_call2(SYS_kill, (1l << 32) + sys_getpid(), 9), K_E_SRCH);
	bad |= expect("kill(INT32_MIN)", sys_kill(INT32_MIN, 9), K_E_SRCH);
	bad |= expect("kill(no such pid)", sys_kill(999999, 9), K_E_SRCH);
	bad |= expect("kill(no such group)", sys_kill(-999999, 9), K_E_SRCH);
	bad |= expect("kill(own pid, why 200)", sys_kill(sys_getpid(), 200), K_E_INVAL);
	bad |= expect("kill(1): the first process", sys_kill(1, 9), K_E_PERM);
	bad |= expect("wait(bad option)", sys_wait_opts(-1, &st, 6), K_E_INVAL);
	bad |= expect("wait(NOHANG, no children)", sys_wait_opts(-1, &st, WAIT_NOHANG), K_E_CHILD);
	char *argv[] = { "spin", "x", "1000", "10", NULL };
	long pid = sys_spawn("/bin/spin", argv, NULL);
	bad |= expect("wait(NOHANG, child running)", sys_wait_opts((int)pid, &st, WAIT_NOHANG), 0);
	bad |= expect("kill(child)", sys_kill((int)pid, 0), 0);
	bad |= expect("wait(child)", sys_wait((int)pid, &st), pid);
	bad |= expect("  its status (128 + 9)", st, 137);
	bad |= expect("cons_ctl(bad op)", sys_cons_ctl(99, 0), K_E_INVAL);
	bad |= expect("cons_ctl(release, not holding it)", sys_cons_ctl(CONS_RELEASE_INTR, 0), 0);
	return bad;
}

/* Issue 17, F3: write a file (accepted: write and fclose succeed), then
 * take every exodisk cache entry this process may hold, with exonodes it
 * never writes back.  The file system must still write FILE back at exit
 * (it makes room among its own entries). */
static int quota(const char *path)
{
	FILE *f = fopen(path, "w");
	if (f == NULL || fputs("accepted\n", f) < 0 || fclose(f) != 0) {
		printf("FAIL: writing %s\n", path);
		return 2;
	}
	struct edc *c = edc_default();
	struct edc_fm fm;
	if (c == NULL || edc_fm_open(c, 0, &fm) != 0) {
		printf("FAIL: no exodisk on unit 0\n");
		return 2;
	}
	struct ed_cap rc = { { 0x71756f7461ull, 1 } }, wc = { { 0x71756f7461ull, 2 } };
	int held = 0;
	int64_t r = 0;
	for (uint64_t s = fm.nsectors - 8; s > 8 && r != ED_E_QUOTA && r != ED_E_CACHEFULL &&
	     r != ED_E_CACHEDIRTY; s -= 8) {
		if (edc_fm_test(&fm, s))
			continue;
		struct ed_protector p = edc_prot_xn(0, s, 0, &rc, &wc);
		p.length = 128;
		r = edc_xn_alloc(c, &p);
		held += r == 0;
	}
	printf("holding %d exodisk cache entries (then refused: %s); exiting with 0\n", held,
	       exo_strerror(r));
	return 0;
}

/* The same with memory: write FILE, then take all the heap there is, so
 * the write-back at exit cannot allocate what it needs.  main returns 0;
 * libos must make the exit status 1 and say why. */
static int nomem(const char *path)
{
	FILE *f = fopen(path, "w");
	if (f == NULL || fputs("accepted\n", f) < 0 || fclose(f) != 0) {
		printf("FAIL: writing %s\n", path);
		return 2;
	}
	size_t total = 0;
	for (size_t n = (size_t)1 << 30; n >= 16; )
		if (malloc(n) != NULL)
			total += n;
		else
			n /= 2;
	printf("holding %zu KiB of heap; exiting with 0\n", total / 1024);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) { fprintf(stderr, "usage: faulttest CASE\n"); return 2; }
	const char *c = argv[1];
	fflush(stdout);
	if (!strcmp(c, "kread"))    { volatile int x = *(volatile int *)KERNEL_TEXT; printf("read %d\n", x); return 0; }
	if (!strcmp(c, "kwrite"))   { *(volatile int *)(KERNEL_TEXT + 0x1000) = 1; return 0; }
	if (!strcmp(c, "null"))     { volatile int *p = NULL; return *p; }
	if (!strcmp(c, "jump"))     { void (*f)(void) = (void (*)(void))0x7000000000ul; f(); return 0; }
	if (!strcmp(c, "kjump"))    { void (*f)(void) = (void (*)(void))KERNEL_TEXT; f(); return 0; }
	if (!strcmp(c, "illegal"))  { ILLEGAL_INSTRUCTION(); return 0; }
	if (!strcmp(c, "stack"))    { return recurse(0); }
	if (!strcmp(c, "readonly")) { *(volatile uint64_t *)UKINFO = 0; return 0; }
	if (!strcmp(c, "syscall")) {
		int bad = expect("syscall 999", sys_call0(999), K_E_NOSYS);
		bad |= expect("syscall -1", sys_call0(-1), K_E_NOSYS);
		return bad;
	}
	if (!strcmp(c, "badptr")) {
		int bad = 0;
		bad |= expect("cons_write(kernel address)", sys_cons_write((void *)KERNEL_TEXT, 16), K_E_FAULT);
		bad |= expect("cons_write(unmapped)", sys_cons_write((void *)0x3000000000ul, 16), K_E_FAULT);
		bad |= expect("cons_write(NULL)", sys_cons_write(NULL, 16), K_E_FAULT);
		bad |= expect("cons_write(wrapping length)", sys_cons_write(argv, (unsigned long)-8), K_E_FAULT);
		bad |= expect("cons_read(read-only page)", sys_cons_read((void *)UKINFO, 1), K_E_FAULT);
		bad |= expect("wait(status in kernel)", sys_wait(-1, (int *)KERNEL_TEXT), K_E_FAULT);
		bad |= expect("spawn(path in kernel)", sys_spawn((char *)KERNEL_TEXT, NULL, NULL), K_E_FAULT);
		return bad;
	}
	if (!strcmp(c, "sbrk")) {
		int bad = expect("sbrk(1 TiB)", sys_sbrk(1l << 40), K_E_NOMEM);
		bad |= expect("sbrk(-1 TiB)", sys_sbrk(-(1l << 40)), K_E_INVAL);
		void *p = malloc(1 << 20);
		if (!p) { printf("FAIL: malloc(1 MiB) after bad sbrk\n"); bad = 1; }
		else { memset(p, 1, 1 << 20); printf("ok: heap still works\n"); }
		return bad;
	}
	if (!strcmp(c, "spawnargs")) {
		int bad = 0;
		char *bad_argv[] = { "x", (char *)KERNEL_TEXT, NULL };
		bad |= expect("spawn(argv element in kernel)", sys_spawn("/bin/true", bad_argv, NULL), K_E_FAULT);
		bad |= expect("spawn(argv array unmapped)", sys_spawn("/bin/true", (char **)0x3000000000ul, NULL), K_E_FAULT);
		bad |= expect("spawn(no such program)", sys_spawn("/bin/nonexistent", NULL, NULL), K_E_NOENT);
		bad |= expect("spawn(not an ELF)", sys_spawn("/etc/motd", NULL, NULL), K_E_NOEXEC);
		static char *many[100];
		for (int i = 0; i < 99; i++) many[i] = "a";
		bad |= expect("spawn(99 arguments)", sys_spawn("/bin/true", many, NULL), K_E_2BIG);
		char longpath[300];
		memset(longpath, 'p', sizeof longpath - 1);
		longpath[sizeof longpath - 1] = 0;
		bad |= expect("spawn(path too long)", sys_spawn(longpath, NULL, NULL), K_E_NAMETOOLONG);
		bad |= expect("wait(not my child)", sys_wait(1, NULL), K_E_CHILD);
		return bad;
	}
	if (!strcmp(c, "handles")) return handles();
	if (!strcmp(c, "nowait")) return nowait();
	if (!strcmp(c, "lease")) return lease();
	if (!strcmp(c, "lease-child")) return lease_child();
	if (!strcmp(c, "procs")) return procs();
	if (!strcmp(c, "peer")) return peer();
	if (!strcmp(c, "peer-child") && argc == 4) return peer_child(argv[2], argv[3]);
	if (!strcmp(c, "quota") && argc == 3) return quota(argv[2]);
	if (!strcmp(c, "nomem") && argc == 3) return nomem(argv[2]);
	fprintf(stderr, "faulttest: unknown case %s\n", c);
	return 2;
}
