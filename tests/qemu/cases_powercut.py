"""cases_powercut.py - a bounded sample of the power-cut tests of the real
stack (docs/powercut.md): for the exodisk alone and for each library file
system, tools/powercut/
crashtest.py cuts the power at 3 points spread over apps/pcwork's workload,
in each mode (every unflushed write lost; each unflushed sector kept or
lost by chance), and checks that the exodisk and the file system recovered
with every acknowledged step.  The layers that transform data (crypt and
compress over unixfs: crashtest.STACKS) get the same, and a denser
sample of rewrites in place (crypt/unixfs@rewrite, compress/unixfs@rewrite).  `make crash-test`
cuts at every request.
"""
import os
import re
import sys

from qemutest import Case, ROOT

sys.path.insert(0, os.path.join(ROOT, "tests", "qemu"))
from cases_fs import libfs_types  # noqa: E402

CASES = [
    Case("powercut-" + t.replace("/", "-"), "",
         argv=["python3", os.path.join(ROOT, "tools", "powercut", "crashtest.py"),
               "-t", t, "--cuts", "3", "-j", "1"],
         expect=[r"^crashtest: %s +none +\d+ steps, \d+ requests, 3 cuts, 3 recovered, 0 failed" % re.escape(t),
                 r"^crashtest: %s +random +\d+ steps, \d+ requests, 3 cuts, 3 recovered, 0 failed" % re.escape(t),
                 r"^crashtest: all recovered"],
         timeout=900)
    for t in ["exodisk"] + libfs_types() + ["crypt/unixfs", "compress/unixfs"]
] + [
    # An fsync'd file rewritten in place through crypt (pcwork -w rewrite):
    # 12 cuts in mode random, where a cut can tear a block; before crypt's
    # two slots per block about a third of the cuts left a block unreadable.
    Case("powercut-crypt-unixfs-rewrite", "",
         argv=["python3", os.path.join(ROOT, "tools", "powercut", "crashtest.py"),
               "-t", "crypt/unixfs@rewrite", "--cuts", "12", "--modes", "random", "-j", "1"],
         expect=[r"^crashtest: crypt/unixfs@rewrite +random +\d+ steps, \d+ requests, 12 cuts, 12 recovered, 0 failed",
                 r"^crashtest: all recovered"],
         timeout=900),
    # The same through compress (two slots per block since EXCOMP2): 8 cuts.
    Case("powercut-compress-unixfs-rewrite", "",
         argv=["python3", os.path.join(ROOT, "tools", "powercut", "crashtest.py"),
               "-t", "compress/unixfs@rewrite", "--cuts", "8", "--modes", "random", "-j", "1"],
         expect=[r"^crashtest: compress/unixfs@rewrite +random +\d+ steps, \d+ requests, 8 cuts, 8 recovered, 0 failed",
                 r"^crashtest: all recovered"],
         timeout=900)
]
