/*
 * date.c - print the date and time.
 *   date [-u] [+FORMAT]     FORMAT as for strftime (date +%Y-%m-%d); times are
 *                           UTC (-u is accepted and changes nothing)
 * The time comes from the machine's real-time clock, which the kernel reads
 * at boot (rtc.c of its kernel/arch/ port), advanced by the time counter (libos/clock.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "apps/textio.h"
#include "libos/exo.h"

int main(int argc, char **argv)
{
	const char *fmt = "%a %b %e %H:%M:%S UTC %Y";
	int c;
	while ((c = text_getopt(argc, argv, "u")) != -1)
		if (c != 'u')
			return text_bad_option("date", c);
	for (int i = optind; i < argc; i++) {
		if (argv[i][0] != '+' || i + 1 < argc) {
			fprintf(stderr, "date: %s: give one +FORMAT, as for strftime (date +%%Y-%%m-%%d)\n",
			        argv[i]);
			return 2;
		}
		fmt = argv[i] + 1;
	}
	if (exo_kinfo()->wall_at_boot == 0)
		fprintf(stderr, "date: this machine has no real-time clock: the time counts from boot\n");
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	char buf[512];
	size_t n = strftime(buf, sizeof buf, fmt, &tm);
	if (n == 0 && fmt[0] != 0) {
		fprintf(stderr, "date: the format gives nothing or more than %zu bytes\n", sizeof buf);
		return 1;
	}
	printf("%s\n", buf);
	return 0;
}
