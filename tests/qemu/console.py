"""console.py - a person at the console, for the QEMU tests: boot the guest
into the interactive shell, type keys (Ctrl-C, arrows, Tab, backspace ...)
and look at the screen.

The guest's output goes through a small terminal model (Screen) that does
what a VT100 would with the bytes the shell and programs send - carriage
return, backspace, newline, cursor moves, erase to the end of the line -
so a test checks what a person would see, not the escape sequences.

Under `make qemu` QEMU multiplexes its monitor on the console and takes
Ctrl-A as its escape key; CTRL_A is therefore sent doubled, which QEMU turns
into one Ctrl-A for the guest.
"""
import os
import re
import signal
import subprocess
import threading
import time

from qemutest import ROOT, guest_env

UP, DOWN, RIGHT, LEFT = "\x1b[A", "\x1b[B", "\x1b[C", "\x1b[D"
HOME, END, DELETE = "\x1b[H", "\x1b[F", "\x1b[3~"
CTRL_A = "\x01\x01"
CTRL_C, CTRL_D, CTRL_E, CTRL_K, CTRL_U, CTRL_W = "\x03", "\x04", "\x05", "\x0b", "\x15", "\x17"
BACKSPACE, TAB, ENTER = "\x7f", "\t", "\r"


class Screen:
    """The lines of a terminal COLS wide that never scrolls away."""

    def __init__(self, cols=80):
        self.cols = cols
        self.lines = [[]]
        self.row = self.col = 0
        self.pending = ""
        self.wrap_next = False

    def _put(self, ch):
        # A character written in the last column leaves the cursor there
        # with a wrap pending, as a VT100 or xterm does: the line moves on
        # only when another character comes, so a line of exactly 80
        # characters and its newline make one row, not two.
        if self.wrap_next:
            self._newline()
            self.col = 0
            self.wrap_next = False
        line = self.lines[self.row]
        while len(line) < self.col:
            line.append(" ")
        if self.col < len(line):
            line[self.col] = ch
        else:
            line.append(ch)
        if self.col == self.cols - 1:
            self.wrap_next = True
        else:
            self.col += 1

    def _newline(self):
        self.row += 1
        while len(self.lines) <= self.row:
            self.lines.append([])

    def feed(self, text):
        text = self.pending + text
        self.pending = ""
        i = 0
        while i < len(text):
            ch = text[i]
            if ch < " " or ch == "\x1b":
                self.wrap_next = False      # a control or a cursor move cancels it
            if ch == "\x1b":
                m = re.match(r"\x1b\[([0-9;]*)([A-Za-z])", text[i:])
                if m is None:
                    if len(text) - i < 8:       # the rest arrives later
                        self.pending = text[i:]
                        return
                    i += 1
                    continue
                arg, op = m.group(1), m.group(2)
                n = int(arg) if arg.isdigit() else 1
                if op == "K":
                    del self.lines[self.row][self.col:]
                elif op == "C":
                    self.col = min(self.col + n, self.cols - 1)
                elif op == "D":
                    self.col = max(self.col - n, 0)
                elif op == "J" and arg == "2":
                    self.lines.append([])      # a clear screen: start below
                    self.row = len(self.lines) - 1
                    self.col = 0
                elif op == "H":
                    self.col = 0
                i += len(m.group(0))
                continue
            if ch == "\r":
                self.col = 0
            elif ch == "\n":
                self._newline()
            elif ch == "\b":
                self.col = max(self.col - 1, 0)
            elif ch == "\a" or ch < " ":
                pass
            else:
                self._put(ch)
            i += 1

    def text(self):
        return "\n".join("".join(l).rstrip() for l in self.lines)

    def cursor_line(self):
        return "".join(self.lines[self.row]).rstrip()


class Session:
    """The interactive shell in QEMU, driven key by key."""

    def __init__(self, env, timeout=30):
        e = guest_env()
        e.update(env)
        e.pop("CMD", None)
        self.timeout = timeout
        self.raw = []
        self.screen = Screen()
        self.lock = threading.Lock()
        self.proc = subprocess.Popen([os.path.join(ROOT, "tools", "run-qemu.sh")], cwd=ROOT, env=e,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            data = self.proc.stdout.read1(4096)
            if not data:
                return
            text = data.decode("utf-8", "replace")
            with self.lock:
                self.raw.append(text)
                self.screen.feed(text)

    def text(self):
        with self.lock:
            return self.screen.text()

    def wait(self, pred, what, timeout=None):
        """Wait until pred(screen text) holds; raise with the screen if not."""
        deadline = time.time() + (timeout or self.timeout)
        while time.time() < deadline:
            with self.lock:
                ok = pred(self.screen)
            if ok:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError("waited for %s; the screen ends:\n%s" % (what, self.text()[-1500:]))

    def wait_text(self, pattern, timeout=None):
        self.wait(lambda s: re.search(pattern, s.text(), re.M), "/%s/" % pattern, timeout)

    def prompt_row(self):
        with self.lock:
            return self.screen.row

    def wait_prompt(self, after_row=-1, timeout=None):
        """A fresh, empty prompt below row after_row."""
        self.wait(lambda s: s.row > after_row and s.cursor_line() == "$" and s.col == 2,
                  "a prompt below line %d" % after_row, timeout)

    def send(self, keys, pause=0.05):
        self.proc.stdin.write(keys.encode())
        self.proc.stdin.flush()
        time.sleep(pause)

    def run(self, line, expect=None, timeout=None):
        """Type line and Enter; wait for expect (a regex) if given and the
        next prompt.  Returns the screen rows the command printed."""
        row = self.prompt_row()
        self.send(line + ENTER)
        if expect:
            self.wait_text(expect, timeout)
        self.wait_prompt(row, timeout)
        with self.lock:
            rows = ["".join(l).rstrip() for l in self.screen.lines[row + 1:self.screen.row]]
        return rows

    def close(self):
        """Power off (shutdown) and return (status, everything the console showed)."""
        try:
            if self.proc.poll() is None:
                self.send("shutdown" + ENTER)
                self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            return "timeout", "".join(self.raw)
        finally:
            self.reader.join(timeout=5)
        return self.proc.returncode, "".join(self.raw)

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


# Booting to the first prompt takes a second on a quiet machine; with the
# machine shared by many builds QEMU may get little CPU for a long while, so
# the waits are generous: they end as soon as the screen is right.
BOOT_TIMEOUT = 90


def interactive(script, timeout=60):
    """A Case's interact function: boot the shell, run script(session) (which
    raises AssertionError when something is wrong), power off.  The screen
    is appended to the output so a failure shows what the person saw; the
    third value says why the session failed ("" when it did not)."""
    def interact(env):
        s = Session(env, timeout=timeout)
        err = None
        try:
            s.wait_prompt(timeout=BOOT_TIMEOUT)
            script(s)
        except AssertionError as e:
            err = str(e)
        except Exception as e:  # a broken test fails loudly
            err = "test harness error: %r" % (e,)
        if err:
            s.kill()
            return "failed", "".join(s.raw) + "\n--- screen ---\n" + s.text(), err
        status, raw = s.close()
        return status, raw + "\n--- screen ---\n" + s.text(), ""
    return interact
