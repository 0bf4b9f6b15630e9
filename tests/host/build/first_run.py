#!/usr/bin/env python3
"""first_run.py - guard the first run on a fresh machine: nothing the
Makefile decides while make parses it may depend on what tools/deps.sh
installs, because on a fresh machine deps.sh runs only after parsing (it is
the first prerequisite of every target), so a parse-time choice would see
the machine as it was before the install.  That is how the first `make
test` once failed (bench.mk chose its Python with $(shell ...) before
matplotlib was there).

Two checks, both over every Makefile and *.mk in the tree:

 1. Lint.  Every parse-time probe of the machine must be one the test knows
    to be harmless: $(shell ...) must be on the short list below; the paths
    given to $(wildcard ...), $(realpath ...) and `include` must lie inside
    the source tree (relative, after expanding the variables they use).
    Adding a new one means adding it here, with a reason.

 2. The packages made to look missing.  `make -pnq` (parse, print the
    database, run nothing) is evaluated twice with a fresh, absent build
    directory (so the dependency stamp is absent too): once on this machine,
    once in a private mount namespace where every file deps.sh probes for is
    hidden (for each ARCH=) (a binary by /dev/null mounted over it, a library by an empty
    directory mounted over its directory).  The two databases must be equal:
    if hiding the packages changes a variable or a rule, make decided
    something at parse time from what deps.sh installs.  Needs `unshare`
    (util-linux) and user namespaces; without them this part says so and
    only the lint runs.

Usage: first_run.py [REPO]  (exit 0 = pass)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# $(shell ...) calls allowed at parse time, and why.
ALLOWED_SHELL = {
    # the dependency files the compilers wrote into the build directory
    "find $(BUILD) -name '*.d' 2>/dev/null",
}

# Functions whose arguments name files that make looks at while parsing.
PATH_FUNCS = ("wildcard", "realpath")


def makefiles():
    """Makefile and every *.mk in the source tree (not in build outputs)."""
    out = []
    for root, dirs, files in os.walk(REPO):
        rel = os.path.relpath(root, REPO)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "results")]
        for f in files:
            if f == "Makefile" and rel == "." or f.endswith(".mk"):
                out.append(os.path.join(root, f))
    return sorted(out)


def calls(text, func):
    """The argument text of every $(func ...) / ${func ...} call in text."""
    found = []
    for m in re.finditer(r"\$([({])%s\s" % func, text):
        open_c = m.group(1)
        close_c = ")" if open_c == "(" else "}"
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text[i] == open_c:
                depth += 1
            elif text[i] == close_c:
                depth -= 1
            i += 1
        found.append(text[m.end():i - 1])
    return found


def logical_text(path):
    """The file with comments removed and backslash-newlines joined."""
    lines = []
    with open(path) as f:
        for line in f:
            # A '#' starts a comment unless escaped; recipes are not parsed
            # at parse time, but their $(shell) would run for every target,
            # so they are checked too.
            line = re.sub(r"(?<!\\)#.*", "", line.rstrip("\n"))
            lines.append(line)
    return "\n".join(lines).replace("\\\n", " ")


# Each architecture's parse (ARCH=x86_64 reads kernel/arch/x86_64/arch.mk,
# whose C library tools/deps.sh x86_64 builds).
ARCHES = ("riscv", "x86_64")


def database(build, env=None, arch="riscv"):
    """Parse the Makefile as `make all test` would, running nothing."""
    p = subprocess.run(["make", "-pnq", "-C", REPO, "BUILD=" + build, "ARCH=" + arch, "all", "test"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                       universal_newlines=True)
    return p.stdout


def variables(db):
    """name -> value of the variables the makefiles define (from make -p)."""
    out, origin = {}, None
    for line in db.splitlines():
        if line.startswith("# "):
            origin = line
            continue
        m = re.match(r"^(?:define )?([A-Za-z0-9_.%/-]+) :?= ?(.*)$", line)
        if m and origin and origin.startswith("# makefile"):
            out[m.group(1)] = m.group(2)
        origin = None
    return out


def expand(text, vars_, depth=0):
    """Expand plain $(VAR) references in text with the database's values."""
    if depth > 10:
        return text
    def sub(m):
        name = m.group(1) or m.group(2)
        return expand(vars_.get(name, m.group(0)), vars_, depth + 1)
    return re.sub(r"\$\(([A-Za-z0-9_]+)\)|\$\{([A-Za-z0-9_]+)\}", sub, text)


def lint(vars_):
    problems = []
    for mk in makefiles():
        rel = os.path.relpath(mk, REPO)
        text = logical_text(mk)
        for arg in calls(text, "shell"):
            norm = " ".join(arg.split())
            if norm not in ALLOWED_SHELL:
                problems.append("%s: $(shell %s) runs when make parses: decide in a recipe "
                                "or a script instead (or add it to ALLOWED_SHELL in %s with "
                                "a reason)" % (rel, norm, os.path.relpath(__file__, REPO)))
        for func in PATH_FUNCS:
            for arg in calls(text, func):
                for word in expand(arg, vars_).split():
                    if word.startswith("/") and not word.startswith(REPO + "/") or word.startswith("~"):
                        problems.append("%s: $(%s %s) looks at %s outside the source tree "
                                        "while make parses" % (rel, func, arg.strip(), word))
        for m in re.finditer(r"^\s*-?s?include\s+(.*)$", text, re.M):
            for word in expand(m.group(1), vars_).split():
                if word.startswith("/") and not word.startswith(REPO + "/"):
                    problems.append("%s: include %s reads a file outside the source tree"
                                    % (rel, word))
    return problems


def probes():
    """The files tools/deps.sh looks for, one per package it installs."""
    out = []
    with open(os.path.join(REPO, "tools", "deps.sh")) as f:
        for m in re.finditer(r'^\s*"([A-Za-z0-9.+-]+):(/[^"]+)"', f.read(), re.M):
            out.append((m.group(1), m.group(2)))
    return out


def hide_script(tmp):
    """Shell commands that hide every probed package inside the namespace."""
    empty = os.path.join(tmp, "empty")
    os.makedirs(empty, exist_ok=True)
    # An empty directory would not hide a Python package: Python imports it
    # as a namespace package.  A package that refuses to import does.
    nopkg = os.path.join(tmp, "nopkg")
    os.makedirs(nopkg, exist_ok=True)
    with open(os.path.join(nopkg, "__init__.py"), "w") as f:
        f.write("raise ImportError('hidden by first_run.py')\n")
    cmds = []
    for pkg, probe in probes():
        if pkg == "make" or not os.path.exists(probe):
            continue          # the test runs make; a missing probe is already hidden
        if os.path.basename(os.path.dirname(probe)) in ("bin", "sbin"):
            cmds.append("mount --bind /dev/null '%s'" % probe)
        elif os.path.basename(probe) == "__init__.py":
            cmds.append("mount --bind '%s' '%s'" % (nopkg, os.path.dirname(probe)))
        else:
            cmds.append("mount --bind '%s' '%s'" % (empty, os.path.dirname(probe)))
    return cmds


def normalise(db):
    """Drop what legitimately differs between two parses: the environment,
    timestamps and statistics."""
    keep, skip_next = [], False
    for line in db.splitlines():
        if skip_next:
            skip_next = False
            continue
        if line in ("# environment", "# automatic"):
            skip_next = True
            continue
        if re.match(r"^# (Make data base|Finished Make data base|Last modified|"
                     r"File is|File does not exist|.*hash-table stats|.*variables in .* buckets|"
                     r"average|max |\d+ files|\d+ implicit|\d+ pattern|\d+ variable)", line):
            continue
        keep.append(line)
    return keep


def namespace_check(tmp, arch):
    unshare = shutil.which("unshare")
    if unshare is None:
        return None, "unshare not found: only the lint ran"
    hide = hide_script(tmp)
    build = os.path.join(tmp, "build-" + arch)
    # Root may unshare directly; anyone else maps themselves to root in a
    # user namespace first.
    flags = ["-m"] if os.geteuid() == 0 else ["-r", "-m"]
    script = " && ".join(["mount --make-rprivate / 2>/dev/null || true"] + hide +
                         ["exec make -pnq -C '%s' BUILD='%s' ARCH=%s all test"
                          % (REPO, build, arch)])
    p = subprocess.run([unshare] + flags + ["sh", "-c", script], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if not any(l.startswith("# Make data base") for l in p.stdout.splitlines()):
        return None, "could not hide the packages (%s): only the lint ran" % p.stdout.strip()[:200]
    seen = database(build, arch=arch)
    hidden = p.stdout
    a, b = normalise(seen), normalise(hidden)
    if a == b:
        return True, "%d packages hidden, the make database of ARCH=%s is the same" % (len(hide), arch)
    import difflib
    diff = list(difflib.unified_diff(a, b, "packages present", "packages hidden", lineterm="", n=1))
    return False, "ARCH=%s: hiding the packages deps.sh installs changes what make decides at parse " \
                  "time:\n" % arch + "\n".join(diff[:40])


def main():
    problems = []
    tmp = tempfile.mkdtemp(prefix="first-run-")
    try:
        build = os.path.join(tmp, "build")
        db = database(build)
        if os.path.exists(build):
            problems.append("parsing the Makefile made %s: parsing must not build" % build)
        vars_ = variables(db)
        if "DEPS_STAMP" not in vars_:
            problems.append("make -p shows no DEPS_STAMP: is the Makefile parse broken?\n" + db[:2000])
        problems += lint(vars_)
        whys = []
        for arch in ARCHES:
            ok, why = namespace_check(tmp, arch)
            if ok is False:
                problems.append(why)
            whys.append(why)
        print("first-run: lint of %d makefiles; %s" % (len(makefiles()), "; ".join(whys)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
