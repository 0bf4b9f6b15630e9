/*
 * trace.c - the trace layer: passes every operation down and prints one
 * line per call on standard error - the operation, its arguments, what it
 * returned and how long the layers below took - for debugging a libFS or
 * seeing what a program asks of its file system (docs/stacking.md).
 *
 *   mount /t trace over=/data[,label=NAME]
 *   trace /data: read(0x3f0a0, n=4096, off=8192) = 4096  18.2 us
 *
 * The wrappers are made from the operations' descriptions (stack.h), so an
 * operation added to the table later is traced without changing this file.
 * A call made while a line is being printed (standard error redirected to
 * a file under this very layer) is passed down untraced instead of
 * recursing.
 */
#include <stdio.h>
#include <string.h>
#include "libos/clock.h"
#include "libos/stack/stack.h"

struct trace {
	struct stack_mount s;
	char label[64];
};

static int printing;

static void to_stderr(const char *line)
{
	fputs(line, stderr);
}

/* Where the lines go: standard error, unless a program (or a test) says
 * otherwise. */
void (*trace_sink)(const char *line) = to_stderr;

static void emit(struct trace *t, const char *op, const char *args, long r, uint64_t t0)
{
	uint64_t ns = libos_time_ns() - t0;
	char line[LIBFS_PATH_MAX * 2 + 256];
	snprintf(line, sizeof line, "trace %s: %s(%s) = %ld%s%s  %llu.%llu us\n", t->label, op,
	         args, r, r < 0 ? " " : "", r < 0 ? strerror((int)-r) : "",
	         (unsigned long long)(ns / 1000), (unsigned long long)(ns / 100 % 10));
	printing = 1;
	trace_sink(line);
	printing = 0;
}

#define TRACE_DEFINE(ret, name, params, names, down, pathargs, fallback, fmt, ...) \
	static ret trace_##name params \
	{ \
		if (printing) \
			return stack_bypass_##name names; \
		char args[LIBFS_PATH_MAX * 2 + 64]; \
		snprintf(args, sizeof args, fmt, __VA_ARGS__); \
		uint64_t t0 = libos_time_ns(); \
		ret r = stack_bypass_##name names; \
		emit(fs, #name, args, (long)r, t0); \
		return r; \
	}
STACK_BYPASS_OPS(TRACE_DEFINE)

static int trace_mount(const char *opts, void **fs)
{
	int r = stack_mount(opts, sizeof(struct trace), fs);
	if (r < 0)
		return r;
	struct trace *t = *fs;
	if (libfs_opt(opts, "label", t->label, sizeof t->label) != 1)
		libfs_opt(opts, "over", t->label, sizeof t->label);
	return 0;
}

static int trace_unmount(void *fs)
{
	if (!printing)
		emit(fs, "unmount", "", 0, libos_time_ns());
	return stack_unmount(fs);
}

static int trace_open(void *fs, const char *path, int flags, uint32_t perm, void **file)
{
	if (printing)
		return stack_open(fs, path, flags, perm, file);
	char args[LIBFS_PATH_MAX + 64];
	snprintf(args, sizeof args, "\"%s\", flags=0x%x, 0%o -> %p", path, (unsigned)flags,
	         (unsigned)perm, *file);
	uint64_t t0 = libos_time_ns();
	int r = stack_open(fs, path, flags, perm, file);
	emit(fs, "open", args, r, t0);
	return r;
}

static int trace_close(void *fs, void *file)
{
	if (printing)
		return stack_close(fs, file);
	char args[32];
	snprintf(args, sizeof args, "%p", file);
	uint64_t t0 = libos_time_ns();
	int r = stack_close(fs, file);
	emit(fs, "close", args, r, t0);
	return r;
}

#define TRACE_INIT(ret, name, ...) .name = trace_##name,

STACK_LAYER_BEGIN
const struct libfs_ops trace_ops = {
	STACK_BYPASS,
	STACK_BYPASS_OPS(TRACE_INIT)
	.name = "trace",
	.mount = trace_mount,
	.unmount = trace_unmount,
	.open = trace_open,
	.close = trace_close,
};
STACK_LAYER_END
