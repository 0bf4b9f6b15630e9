"""cases_shell.py - the shell and its programs as a person uses them
(issue 18): `make qemu CMD=...` with make's metacharacters, ..."""
from qemutest import Case

# make must hand CMD to the guest verbatim: $? is the guest shell's, and
# $(...), $$, # and % are not make's either (README "Running commands").
MAKE_CMD = "false; echo status=$?; echo '$(x) $$ # % \\'"

CASES = [
    Case("make-qemu-cmd-verbatim", MAKE_CMD,
         argv=["make", "-s", "--no-print-directory", "qemu", "CMD=" + MAKE_CMD],
         expect=[r"^status=1$", r"^\$\(x\) \$\$ # % \\$"], timeout=120),
]
