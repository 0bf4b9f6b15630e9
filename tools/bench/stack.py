#!/usr/bin/env python3
"""stack.py - the layer-overhead table (docs/stacking.md) from the console
output of `exobench fs -L ...` (apps/exobench/fs.c): for each row of the
small-file and large-file work, the median over the runs of each stack, and
how much longer it took than the file system alone measured in the same
boot, its runs interleaved with the stacks' (time ratio - 1; for MB/s the
inverse ratio).

Usage: stack.py LOG [LOG...]      (LOGs: console output of one or more boots)
"""
import json
import statistics
import sys


def rows(paths):
    out = {}
    for p in paths:
        with open(p, errors="replace") as f:
            for line in f:
                i = line.find("EXOBENCH ")
                if i < 0:
                    continue
                r = json.loads(line[i + 9:])
                if r.get("bench") == "smallfile":
                    key = ("%d x %d KB %s" % (r["files"], r["bytes"] // 1024, r["phase"]), "ms/file")
                    val = r["ns_per_file"] / 1e6
                elif r.get("bench") == "largefile" and r["phase"] in ("seqwrite", "seqread",
                                                                    "randwrite", "randread"):
                    key = ("%d MiB %s" % (r["file_bytes"] >> 20, r["phase"]), "MB/s")
                    val = r["bytes"] / (r["ns"] / 1e9) / 1e6
                elif r.get("bench") == "largefile":
                    key = ("%d MiB %s" % (r["file_bytes"] >> 20, r["phase"]), "ms")
                    val = r["ns"] / 1e6
                else:
                    continue
                out.setdefault(key, {}).setdefault(r["org"], []).append(val)
    return out


def main():
    data = rows(sys.argv[1:])
    if not data:
        sys.exit("stack.py: no EXOBENCH records in " + " ".join(sys.argv[1:]))
    orgs = []
    for per in data.values():
        for o in per:
            if o not in orgs:
                orgs.append(o)
    base = min(orgs, key=lambda o: o.count("/"))          # the file system alone
    others = [o for o in orgs if o != base]
    runs = max(len(v) for per in data.values() for v in per.values())
    print("| row (median of %d runs) | %s | %s |" % (runs, base, " | ".join(
        "%s | vs %s" % (o, base) for o in others)))
    print("|---" * (2 + 2 * len(others)) + "|")
    for (row, unit), per in data.items():
        b = statistics.median(per[base])
        cells = ["%s (%s)" % (row, unit), "%.4g" % b]
        for o in others:
            if o not in per:
                cells += ["-", "-"]
                continue
            m = statistics.median(per[o])
            over = (b / m - 1) if unit == "MB/s" else (m / b - 1)
            cells += ["%.4g" % m, "%+.1f%%" % (100 * over)]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
