"""cases_kernel.py - the kernel, processes and the shell (issue 2)."""
from qemutest import Case


def interleaved(a, b):
    """Both programs made progress while the other was still running."""
    def check(out):
        lines = out.splitlines()
        try:
            a_first = lines.index(a + " 0"); a_last = max(i for i, l in enumerate(lines) if l.startswith(a + " "))
            b_first = lines.index(b + " 0"); b_last = max(i for i, l in enumerate(lines) if l.startswith(b + " "))
        except ValueError:
            return "missing progress lines of %s or %s" % (a, b)
        if not (a_first < b_last and b_first < a_last):
            return "%s and %s ran one after the other, not interleaved" % (a, b)
        return None
    return check


FAULTS = [
    ("kread", "load page fault"),
    ("kwrite", "store page fault"),
    ("null", "load page fault"),
    ("jump", "instruction page fault"),
    ("kjump", "instruction page fault"),
    ("illegal", "illegal instruction"),
    ("stack", "store page fault"),
    ("readonly", "store page fault"),
]

ERRORS = ["syscall", "badptr", "sbrk", "spawnargs", "peer", "handles", "nowait", "lease", "procs"]

CASES = [
    Case("echo-hello", "echo hello", expect=[r"^hello$"]),
    Case("exit-status", "exit 3", status=3),
    Case("exit-default-status", "false; exit", status=1),
    Case("last-status-is-qemu-status", "true; false", status=1),
    Case("status-variable", "false; echo \"st=$?\"; true; echo st=$?", expect=[r"^st=1$", r"^st=0$"]),
    Case("semicolons-in-order", "echo one; echo two;echo three",
         check=lambda out: None if out.find("one") < out.find("two") < out.find("three") else "wrong order"),
    Case("quoting", "echo 'a  b' \"c\\\"d\" e\\;f", expect=[r"^a  b c\"d e;f$"]),
    Case("unknown-command", "nosuchprog; echo after",
         expect=[r"sh: nosuchprog: command not found", r"^after$"]),
    Case("unknown-command-status", "nosuchprog", status=127),
    Case("help-builtin", "help", expect=[r"exit \[N\]", r"shutdown"]),
    Case("shutdown-builtin", "shutdown 4; echo not-reached", status=4, reject=[r"not-reached"]),
    Case("two-cpu-bound-both-progress", "spin A 8 & spin B 8; wait", check=interleaved("A", "B"),
         expect=[r"^A 7$", r"^B 7$"]),
    Case("spawn-reclaims-memory-and-slots", "spawntest", expect=[r"^ok: spawning works again$"],
         reject=[r"FAIL"], timeout=120),
] + [
    Case("fault-" + name,
         "faulttest %s; echo status=$?; echo still-alive" % name,
         expect=[r"kernel: pid \d+ \(faulttest\) killed: %s" % cause, r"^status=1\d\d$", r"^still-alive$"])
    for name, cause in FAULTS
] + [
    Case("error-" + name, "faulttest " + name, expect=[r"^ok: "], reject=[r"FAIL"])
    for name in ERRORS
]
