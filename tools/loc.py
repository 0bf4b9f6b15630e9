#!/usr/bin/env python3
"""loc.py - count the lines of C that are not blank and not only comments.

    tools/loc.py [--max N] PATH [[--max N] PATH ...]

Each PATH is a C file or a directory (its *.c and *.h, not below it).  A
line counts if anything but whitespace is left once /* */ and // comments
are removed (string and character literals are respected).  --max N sets a
limit for the PATH that follows; the exit status is 1 if any count is over
its limit.  `make test` runs it on the library file systems
(userfs/userfs.mk, LOC_LIMITS) and prints the table.
"""
import os
import sys


def code_lines(text):
    n = 0
    in_comment = False
    for line in text.splitlines():
        out = []
        i = 0
        quote = None
        while i < len(line):
            c = line[i]
            if in_comment:
                if line.startswith("*/", i):
                    in_comment = False
                    i += 2
                else:
                    i += 1
                continue
            if quote:
                out.append(c)
                if c == "\\":
                    out.append(line[i + 1:i + 2])
                    i += 2
                    continue
                if c == quote:
                    quote = None
                i += 1
                continue
            if line.startswith("/*", i):
                in_comment = True
                i += 2
            elif line.startswith("//", i):
                break
            else:
                if c in "\"'":
                    quote = c
                out.append(c)
                i += 1
        if "".join(out).strip():
            n += 1
    return n


def files_of(path):
    if os.path.isdir(path):
        return sorted(os.path.join(path, f) for f in os.listdir(path)
                      if f.endswith((".c", ".h")))
    return [path]


def main(argv):
    limit = None
    rows = []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--max":
            limit = int(args.pop(0))
            continue
        total = 0
        for f in files_of(a):
            with open(f, encoding="utf-8") as fh:
                total += code_lines(fh.read())
        rows.append((a, total, limit))
        limit = None
    bad = 0
    print("loc: lines of C, not blank or comments (tools/loc.py)")
    for path, total, lim in rows:
        over = lim is not None and total > lim
        bad += over
        print("  %-22s %6d%s" % (path, total,
                                 "" if lim is None else "  (limit %d%s)" % (lim, ": OVER" if over else "")))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
