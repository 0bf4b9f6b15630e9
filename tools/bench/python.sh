#!/bin/sh
# python.sh - run the first python3 that can import matplotlib.
#
# The benchmark report draws its plots with matplotlib.  On some hosts the
# python3 first on PATH is a private interpreter without it, while Debian's
# /usr/bin/python3 has it once tools/deps.sh installed python3-matplotlib.
# The choice is made here, when a recipe runs, and never when make parses
# the Makefile: on a fresh machine the dependency step installs matplotlib
# after parsing, and a choice made at parse time would miss it.
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import matplotlib' >/dev/null 2>&1; then
		exec "$p" "$@"
	fi
done
echo "bench: no python3 can import matplotlib (apt-get install python3-matplotlib)" >&2
exit 1
