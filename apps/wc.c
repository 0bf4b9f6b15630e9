/*
 * wc.c - count lines, words and bytes.
 *   wc [-lwc] [FILE...]     -l lines, -w words, -c bytes (default: all three);
 *                           FILE - or none: standard input; a total for several
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "apps/textio.h"

static int show_l, show_w, show_c;

static void print(unsigned long long l, unsigned long long w, unsigned long long c, const char *name)
{
	if (show_l)
		printf("%8llu", l);
	if (show_w)
		printf("%8llu", w);
	if (show_c)
		printf("%8llu", c);
	printf("%s%s\n", name ? " " : "", name ? name : "");
}

int main(int argc, char **argv)
{
	int status = 0, c;
	while ((c = text_getopt(argc, argv, "lwc")) != -1) {
		if (c == 'l')
			show_l = 1;
		else if (c == 'w')
			show_w = 1;
		else if (c == 'c')
			show_c = 1;
		else
			return text_bad_option("wc", c);
	}
	int i = optind;
	if (!show_l && !show_w && !show_c)
		show_l = show_w = show_c = 1;
	unsigned long long tl = 0, tw = 0, tc = 0;
	int files = argc - i;
	for (int k = i; k < argc || (files == 0 && k == i); k++) {
		const char *name = files ? argv[k] : NULL;
		FILE *f = name ? text_open("wc", name) : stdin;
		if (f == NULL) {
			status = 1;
			continue;
		}
		unsigned long long l = 0, w = 0, c = 0;
		int inword = 0;
		char buf[4096];
		size_t n;
		while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
			c += n;
			for (size_t j = 0; j < n; j++) {
				unsigned char ch = (unsigned char)buf[j];
				if (ch == '\n')
					l++;
				if (isspace(ch))
					inword = 0;
				else if (!inword) {
					inword = 1;
					w++;
				}
			}
		}
		if (name)
			text_close(f);
		print(l, w, c, name);
		tl += l;
		tw += w;
		tc += c;
	}
	if (files > 1)
		print(tl, tw, tc, "total");
	return status;
}
