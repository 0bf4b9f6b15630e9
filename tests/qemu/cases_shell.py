"""cases_shell.py - the shell and its programs as a person uses them
(issue 18): keys typed at the console and the screen they produce (line
editing, history, Tab, Ctrl-C, jobs), pipelines with more data than a pipe
holds and with readers that stop early, variables, every program's -h,
help, the clock, boot options, a blank root disk, and `make qemu CMD=...`
with make's metacharacters."""
import os
import re
import struct
import time

from qemutest import Case, ROOT
from console import (interactive, UP, DOWN, LEFT, RIGHT, HOME, END, CTRL_A, CTRL_C, CTRL_E,
                     CTRL_K, CTRL_U, CTRL_W, BACKSPACE, TAB, ENTER)

# make must hand CMD to the guest verbatim: $? is the guest shell's, and
# $(...), $$, # and % are not make's either (README "Running commands").
MAKE_CMD = "false; echo status=$?; echo '$(x) $$ # % \\'"


def programs():
    """The programs in the initrd (build/initrd.img: kernel/uapi/initrd.h)."""
    with open(os.path.join(ROOT, "build", "initrd.img"), "rb") as f:
        data = f.read()
    count = struct.unpack_from("<I", data, 8)[0]
    names = []
    for i in range(count):
        name = data[16 + i * 64:16 + i * 64 + 48].split(b"\0")[0].decode()
        if name.startswith("bin/"):
            names.append(name[4:])
    return sorted(names)


def expect_rows(rows, want, what):
    if rows != want:
        raise AssertionError("%s: printed %r, expected %r" % (what, rows, want))


# ---- keys at the console ----------------------------------------------------------

def editing(s):
    expect_rows(s.run("echo helo" + LEFT + "l"), ["hello"], "Left, then insert")
    expect_rows(s.run("echo abcx" + BACKSPACE), ["abc"], "Backspace")
    expect_rows(s.run("garbage" + CTRL_U + "echo clean"), ["clean"], "Ctrl-U")
    expect_rows(s.run("echo one two" + CTRL_W + "three"), ["one three"], "Ctrl-W")
    expect_rows(s.run("cho first" + CTRL_A + "e" + CTRL_E + " last"), ["first last"],
                "Ctrl-A, Ctrl-E")
    expect_rows(s.run("cho mid" + HOME + "e" + END + "dle"), ["middle"], "Home, End")
    expect_rows(s.run("echo keep cut" + LEFT * 3 + CTRL_K), ["keep"], "Ctrl-K")
    expect_rows(s.run("echo wrong" + LEFT * 5 + RIGHT * 5 + BACKSPACE * 5 + "right"), ["right"],
                "Right")
    # Keys the editor does not know (F5, F1) leave nothing in the line; a
    # modified arrow (Ctrl-Left: ESC [ 1 ; 5 D) moves as the arrow does.
    expect_rows(s.run("echo a" + "\x1b[15~" + "\x1bOP" + "b" + "\x1b[1;5D" + "X"), ["aXb"],
                "unknown keys, Ctrl-Left")
    # The screen shows the line as edited, not the keys.
    if "$ echo hello\nhello" not in s.text() or "\x1b" in s.text():
        raise AssertionError("the screen does not show the edited line '$ echo hello'")
    # History: Up twice is the line before last; Down comes back.
    expect_rows(s.run("echo first"), ["first"], "history setup")
    expect_rows(s.run("echo second"), ["second"], "history setup")
    expect_rows(s.run(UP + UP), ["first"], "Up, Up")
    expect_rows(s.run(UP + UP + DOWN), ["first"], "Up, Up, Down")
    expect_rows(s.run(UP + " again"), ["first again"], "Up, then edit")
    # Tab: a program's name, a path; several choices are listed.
    expect_rows(s.run("ech" + TAB + "tab-ok"), ["tab-ok"], "Tab on a program name")
    expect_rows(s.run("ls /bin/gre" + TAB), ["grep"], "Tab on a path")
    row = s.prompt_row()
    s.send("s" + TAB)
    s.wait_text(r"^sh +.*spawntest.*$", 20)
    s.wait_text(r"shutdown", 20)
    s.send(CTRL_U)
    s.wait_prompt(row)
    # A line too long is refused with a message, not cut and run.
    rows = s.run("echo " + "x" * 1100)
    if not any("longer than 1023 characters: not run" in r for r in rows):
        raise AssertionError("an over-long line: %r" % rows[-2:])
    expect_rows(s.run("echo still-here"), ["still-here"], "after the long line")


def ctrl_c(s):
    # A CPU-bound program: Ctrl-C stops it and leaves nothing in the next line.
    row = s.prompt_row()
    s.send("spin X 1000 100" + ENTER)
    s.wait_text(r"^X 1$")
    s.send(CTRL_C)
    s.wait_prompt(row)
    expect_rows(s.run("echo after $?"), ["after 130"], "the line after Ctrl-C")
    # A program reading the console: what was typed goes with it.
    row = s.prompt_row()
    s.send("cat" + ENTER)
    time.sleep(1)
    s.send("typed")
    s.wait_text(r"^typed$")
    s.send(CTRL_C)
    s.wait_prompt(row)
    expect_rows(s.run("echo clean"), ["clean"], "after Ctrl-C in cat")
    # A pipeline: every process of the job stops.
    row = s.prompt_row()
    s.send("yes | grep y | wc -l" + ENTER)
    time.sleep(1)
    s.send(CTRL_C)
    s.wait_prompt(row)
    rows = s.run("ps")
    if any(w in " ".join(rows) for w in (" yes", " grep", " wc")):
        raise AssertionError("after Ctrl-C the pipeline still runs: %r" % rows)
    # Ctrl-C at the prompt abandons the line.
    row = s.prompt_row()
    s.send("echo half")
    s.send(CTRL_C)
    s.wait_prompt(row)
    expect_rows(s.run("echo whole"), ["whole"], "after Ctrl-C at the prompt")


def notice(s, want, timeout=60):
    """Press Enter until the shell prints the notice want before a prompt.
    How soon a job ends depends on how much CPU QEMU gets, so the test
    waits for the notice instead of guessing a time; any other output
    fails at once."""
    deadline = time.time() + timeout
    while True:
        rows = s.run("")
        if rows == [want]:
            return
        if rows or time.time() > deadline:
            raise AssertionError("waited for the notice %r; the shell printed %r" % (want, rows))
        time.sleep(0.2)


def then_notice(s, rows, want):
    """The shell prints a job's notice before the first prompt after the
    job ended.  That can be the prompt right after the command that ended
    it (kill) or started it (a short job): whether the job has ended by
    then depends on whether a timer tick let it run first, which a loaded
    host makes likely.  So the notice is taken in the command's own output
    (rows) or waited for."""
    if rows == [want]:
        return
    expect_rows(rows, [], "before the notice %r" % want)
    notice(s, want)


def jobs(s):
    rows = s.run("spin J 3000 10 > /dev/null &")
    if len(rows) != 1 or not re.match(r"^\[1\] \d+$", rows[0]):
        raise AssertionError("a background job: %r" % rows)
    rows = s.run("jobs")
    if rows != ["[1]  Running      spin J 3000 10 > /dev/null"]:
        raise AssertionError("jobs: %r" % rows)
    rows = s.run("sleep 0.1 &")
    if not rows or not rows[0].startswith("[2] "):
        raise AssertionError("a second background job: %r" % rows)
    then_notice(s, rows[1:], "[2]  Done         sleep 0.1")
    then_notice(s, s.run("kill %1"), "[1]  Killed       spin J 3000 10 > /dev/null")
    expect_rows(s.run("jobs"), [], "jobs after both ended")
    # fg waits for a background job; Ctrl-C then stops it.
    s.run("spin F 3000 10 > /dev/null &")
    row = s.prompt_row()
    s.send("fg" + ENTER)
    s.wait_text(r"^spin F 3000 10 > /dev/null$")
    time.sleep(0.5)
    s.send(CTRL_C)
    s.wait_prompt(row)
    expect_rows(s.run("echo $?; jobs"), ["130"], "fg, then Ctrl-C")


def more(s):
    """more pages a pipe: a screen of 23 rows, Enter a row, Space a screen,
    q stops it and the pipeline ends (the writer gets EPIPE)."""
    row = s.prompt_row()
    s.send("yes | head -n 100 | grep -n y | more" + ENTER)
    s.wait_text(r"^--More--$")

    def shown():
        return [l for l in s.text().splitlines()[row + 1:] if re.match(r"^\d+:y$", l)]
    expect_rows(shown(), ["%d:y" % i for i in range(1, 24)], "the first screen")
    s.send(ENTER)
    s.wait_text(r"^24:y$")
    s.wait_text(r"^--More--$")
    s.send(" ")
    s.wait_text(r"^47:y$")
    s.wait_text(r"^--More--$")
    s.send("q")
    s.wait_prompt(row)
    if "48:y" in s.text():
        raise AssertionError("more showed more than it was asked for")
    expect_rows(s.run("echo st=$?"), ["st=0"], "after q")


def blank_disk(s):
    s.wait_text(r"Disk unit 0 holds no unixfs")
    s.wait_text(r"^ +mkfs$")
    s.run("mkfs", expect=r"mkfs: unixfs made")
    expect_rows(s.run("echo made > /f; cat /f"), ["made"], "after mkfs")


def help_lists_everything(out):
    progs = programs()
    missing = [p for p in progs if not any(l.startswith("  %s " % p) for l in out.splitlines())]
    if missing:
        return "help does not list %s" % ", ".join(missing)
    # The programs' tables in README.md and docs/shell.md are written by
    # hand: a new program must be added there too.
    for doc in ("README.md", os.path.join("docs", "shell.md")):
        with open(os.path.join(ROOT, doc)) as f:
            text = f.read()
        missing = [p for p in progs if "`%s`" % p not in text and "`%s " % p not in text]
        if missing:
            return "%s's table of programs lacks %s" % (doc, ", ".join(missing))
    return None


def every_program_answers_h(progs):
    cmd = "; ".join("%s -h; echo @@ %s $?" % (p, p) for p in progs)

    def check(out):
        chunks = {}
        cur = []
        for line in out.splitlines():
            if line.startswith("@@ "):
                _, name, status = line.split()
                chunks[name] = (cur, status)
                cur = []
            else:
                cur.append(line)
        for p in progs:
            if p not in chunks:
                return "%s -h: no end marker" % p
            lines, status = chunks[p]
            text = "\n".join(lines)
            if status != "0":
                return "%s -h exited with %s" % (p, status)
            if ("%s - " % p) not in text or ("usage: %s" % p) not in text:
                return "%s -h printed no usage:\n%s" % (p, text[-500:])
        return None
    return cmd, check


# Every program's -h, a few programs per boot (a line holds 1023 characters).
H_CASES = []
_progs = programs() if os.path.exists(os.path.join(ROOT, "build", "initrd.img")) else []
for _i in range(0, len(_progs), 10):
    _cmd, _check = every_program_answers_h(_progs[_i:_i + 10])
    H_CASES.append(Case("programs-answer-h-%d" % (_i // 10 + 1), _cmd, check=_check))


def same_size(out):
    """cat /bin/sh | wc -c counts what ls -l says /bin/sh holds."""
    lines = out.splitlines()
    counts = [l.strip() for l in lines if re.match(r"^ +\d+$", l)]
    sizes = [l.split()[2] for l in lines if l.endswith(" sh")]
    if len(counts) < 2 or not sizes or counts[1] != sizes[0]:
        return "the pipe carried %r bytes of /bin/sh, ls says %r" % (counts[1:2], sizes)
    return None


def year_now(out):
    want = time.gmtime().tm_year
    years = [l for l in out.splitlines() if l.startswith("year=")]
    if not years or int(years[0][5:]) not in (want, want - 1, want + 1):
        return "date says %r, the host %d" % (years, want)
    if "modify: %d-" % want not in out and "modify: %d-" % (want - 1) not in out:
        return "stat shows no date of this year"
    return None


CASES = [
    Case("make-qemu-cmd-verbatim", MAKE_CMD,
         argv=["make", "-s", "--no-print-directory", "qemu", "CMD=" + MAKE_CMD],
         expect=[r"^status=1$", r"^\$\(x\) \$\$ # % \\$"], timeout=120),

    # ---- at the console ----
    Case("shell-keys-editing-history-tab", "", interact=interactive(editing), timeout=120),
    Case("shell-ctrl-c", "", interact=interactive(ctrl_c), timeout=120),
    Case("shell-jobs-fg-kill-notices", "", interact=interactive(jobs), timeout=120),
    Case("shell-blank-root-disk", "", interact=interactive(blank_disk), timeout=120),
    Case("shell-more-pages-a-pipe", "", interact=interactive(more), timeout=120),

    # ---- pipelines ----
    Case("pipe-more-than-a-buffer",
         "yes 0123456789 | head -n 20000 | wc -c; cat /bin/sh | wc -c; ls -l /bin/sh; "
         "yes abc | head -n 3000 | sort | tail -1 | grep -c abc",
         expect=[r"^ +220000$", r"^1$"], check=same_size),
    Case("pipe-reader-stops-early",
         "yes | head -1; echo st=$?; yes | head -2 | cat; sh -c 'yes; echo not-here' | head -1; "
         "echo pipeline=$?",
         expect=[r"^y\nst=0$", r"^y\ny$", r"^pipeline=0$"], reject=[r"not-here"], timeout=60),
    Case("pipe-status-is-the-last-command", "false | true; echo a=$?; true | false; echo b=$?; "
         "nosuch | true; echo c=$?; true | nosuch; echo d=$?",
         expect=[r"^a=0$", r"^b=1$", r"^c=0$", r"^d=127$", r"nosuch: command not found"]),
    Case("pipe-builtin-and-stderr",
         "help | grep -c '^  fg ' ; pwd | cat; cat /nosuch 2>&1 | grep -c 'No such'; "
         "cat /nosuch 2> /dev/null; echo x >&2 | grep -c x; true",
         expect=[r"^1\n/\n1$", r"^x$", r"^0$"], reject=[r"No such file"]),

    # ---- the language ----
    Case("shell-variables",
         "A=1; B=two; echo $A-${B}-\"$A\"-'$A'; X=9 sh -c 'echo in=$X'; echo [$X]; "
         "export Y=3; sh -c 'echo y=$Y'; unset Y; sh -c 'echo [$Y]'; echo $$ | grep -c '^[0-9]'",
         expect=[r"^1-two-1-\$A$", r"^in=9$", r"^\[\]$", r"^y=3$", r"^\[\]\n1$"]),
    Case("shell-and-or-comments", "false && echo no; true && echo yes; false || echo alt; "
         "true || echo no2; echo shown # echo hidden",
         expect=[r"^yes\nalt\nshown$"], reject=[r"no2?$", r"hidden"]),
    Case("shell-syntax-error-runs-nothing", "echo a; echo b |; echo c", status=2,
         expect=[r"syntax error: '\|' without a command after it"], reject=[r"^[abc]$"]),
    Case("shell-unclosed-quote", "echo 'open; echo c", status=2,
         expect=[r"syntax error: a ' is not closed"], reject=[r"^c$"]),
    Case("shell-script-file", "mkfs > /dev/null; echo 'echo from-script; false' > /s; "
         "echo 'echo $X-line2' >> /s; X=x sh /s; echo st=$?",
         expect=[r"^from-script\nx-line2\nst=0$"]),

    # ---- programs ----
    Case("help-lists-every-program", "help", check=help_lists_everything),
    Case("text-programs",
         "mkfs > /dev/null; echo '2 b' > /t; echo '10 a' >> /t; echo '1 c' >> /t; echo '2 b' >> /t; "
         "sort /t | head -1; sort -u /t | wc -l; sort -rn /t | tail -n 1; sort -n /t | tail -1; "
         "grep -n b /t; grep -v -c b /t; grep '^[12][0-9]\\{0,1\\} [ac]$' /t; grep -F -i C /t; "
         "grep -q zzz /t; echo q=$?; wc /t; head -c 3 /t; echo; tail -2 < /t > /u; "
         "echo 3 | tee -a /u | wc -l; cat /u; touch /u /new; ls /; sleep 0.2; echo slept",
         expect=[r"^1 c\n +3\n1 c\n10 a\n1:2 b\n4:2 b\n2\n10 a\n1 c\n1 c\nq=1$",
                 r"^ +4 +8 +17 /t\n2 b\n +1\n1 c\n2 b\n3$", r"^new\nt\nu\nslept$"]),
    Case("ps-and-kill", "spin K 3000 10 > /dev/null & sleep 0.3; ps | grep -c spin; kill $!; wait; "
         "echo st=$?; ps | grep -c spin; kill 999; echo k=$?; kill $$; echo self=$?; "
         "/bin/kill 1; echo init=$?; echo alive",
         expect=[r"^1\nst=137\n0$", r"kill: 999: no such process", r"^k=1$",
                 r"sh: kill: \d+: that is this shell", r"^self=1$",
                 r"^kill: 1: operation not permitted\ninit=1\nalive$"]),
    Case("clock-date-stat", "mkfs > /dev/null; date; date +year=%Y; touch /f; stat /f",
         check=year_now),

    # ---- a resource runs out (issue 17, F3) ----
    # A file written and closed survives the exodisk cache quota held at
    # exit; a write-back that fails at exit (no memory left) is the exit
    # status, not only a message.
    Case("exit-with-cache-quota-held-keeps-files",
         "mkfs > /dev/null; faulttest quota /qf; echo status=$?; cat /qf",
         expect=[r"holding \d+ exodisk cache entries", r"^status=0\naccepted$"]),
    Case("exit-status-when-write-back-fails",
         "mkfs > /dev/null; faulttest nomem /qf; echo status=$?; echo alive",
         env={"MEM": "128M"},
         expect=[r"faulttest: at exit, writing files back failed: ",
                 r"^status=1\nalive$"]),

    # ---- the kernel ----
    Case("boot-option-unknown", "echo up", env={"BOOTARGS": "bogus=1 edcahce=5"},
         expect=[r"unknown boot option 'bogus=1' ignored", r"unknown boot option 'edcahce=5'",
                 r"the boot options are: .*edcache", r"^up$"]),
] + H_CASES
