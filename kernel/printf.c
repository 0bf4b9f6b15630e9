/*
 * printf.c - formatted output for the kernel: kprintf to the console,
 * ksnprintf into a buffer, and panic.  Supports the conversions the kernel
 * uses: %d %i %u %x %X %p %s %c %%, the l/ll/z length modifiers, a field
 * width and '0' / '-' flags.
 */
#include "kernel/klib.h"
#include "kernel/console.h"
#include "kernel/arch.h"
#include "kernel/power.h"

struct outbuf { char *buf; size_t size, len; };

static void out(struct outbuf *o, char c)
{
	if (o->buf == NULL) console_putc(c);
	else if (o->len + 1 < o->size) o->buf[o->len] = c;
	o->len++;
}

static void out_num(struct outbuf *o, uint64_t v, int base, bool neg, int width, char pad, bool left, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0;
	do { tmp[n++] = digits[v % base]; v /= base; } while (v != 0);
	int len = n + (neg ? 1 : 0);
	if (left) pad = ' ';
	if (neg && pad == '0') out(o, '-');
	if (!left) for (int i = len; i < width; i++) out(o, pad);
	if (neg && pad != '0') out(o, '-');
	while (n > 0) out(o, tmp[--n]);
	if (left) for (int i = len; i < width; i++) out(o, ' ');
}

static void out_str(struct outbuf *o, const char *s, int width, bool left)
{
	if (s == NULL) s = "(null)";
	int n = (int)strlen(s);
	if (!left) for (int i = n; i < width; i++) out(o, ' ');
	while (*s) out(o, *s++);
	if (left) for (int i = n; i < width; i++) out(o, ' ');
}

static int format(struct outbuf *o, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		if (*fmt != '%') { out(o, *fmt); continue; }
		fmt++;
		bool left = false;
		char pad = ' ';
		for (;; fmt++) {
			if (*fmt == '-') left = true;
			else if (*fmt == '0') pad = '0';
			else break;
		}
		int width = 0;
		while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
		int lng = 0;
		while (*fmt == 'l') { lng++; fmt++; }
		if (*fmt == 'z') { lng = 1; fmt++; }
		switch (*fmt) {
		case 'd': case 'i': {
			int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
			out_num(o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, v < 0, width, pad, left, false);
			break;
		}
		case 'u': case 'x': case 'X': {
			uint64_t v = lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned int);
			out_num(o, v, *fmt == 'u' ? 10 : 16, false, width, pad, left, *fmt == 'X');
			break;
		}
		case 'p':
			out(o, '0'); out(o, 'x');
			out_num(o, (uint64_t)va_arg(ap, void *), 16, false, 0, ' ', false, false);
			break;
		case 's': out_str(o, va_arg(ap, const char *), width, left); break;
		case 'c': out(o, (char)va_arg(ap, int)); break;
		case '%': out(o, '%'); break;
		case 0: return (int)o->len;
		default: out(o, '%'); out(o, *fmt); break;
		}
	}
	return (int)o->len;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct outbuf o = { buf, size, 0 };
	int n = format(&o, fmt, ap);
	if (size > 0) buf[o.len < size ? o.len : size - 1] = 0;
	return n;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int kprintf(const char *fmt, ...)
{
	struct outbuf o = { NULL, 0, 0 };
	va_list ap;
	va_start(ap, fmt);
	int n = format(&o, fmt, ap);
	va_end(ap);
	return n;
}

void panic(const char *fmt, ...)
{
	intr_off();
	struct outbuf o = { NULL, 0, 0 };
	va_list ap;
	kprintf("\nkernel panic: ");
	va_start(ap, fmt);
	format(&o, fmt, ap);
	va_end(ap);
	kprintf("\n");
	arch_poweroff(255);
}
