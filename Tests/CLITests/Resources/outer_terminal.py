"""The terminal around tmux: answers every question as it reads it, as the terminal named by
VERSION would (kitty's graphics answer, its cell size, Device Attributes, XTVERSION), so tmux's
own questions and those passed through it from a pane are answered in order, as a real terminal
answers them.

    outer_terminal.py VERSION SHOWN OUT CAPTURE STEPS -- COMMAND...

COMMAND (tmux running the monitor) runs on a pseudo-terminal of 120x40 cells of 10x20 pixels;
everything it writes is saved to OUT. Once a picture has been shown (SHOWN `pixels`: placed with
`a=T`; `cells`: half blocks written), the script saves
the pane as tmux holds it (`CAPTURE` is the capture command, split on spaces, run with `-p -e`
appended) to OUT.pane1, types `j`, waits for the next picture, saves OUT.pane2, then takes each
of STEPS (comma-separated; empty for none): a key (`j`, `?`, `Escape`, `Tab`), a key held
(`j~8`: eight presses 30 ms apart) or `resize:COLUMNSxROWS`, waits until the screen has been
quiet for 0.7 s and saves OUT.pane3, OUT.pane4, …; then types `q` and waits for the command to
end. Exits with its status, or 124 after 240 seconds (a hang, not a slow machine: a loaded
CI run once took more than 60 for a walk).
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import terminal_pty  # noqa: E402

version, shown, out_path, capture = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(" ")
walk = [step for step in sys.argv[5].split(",") if step]
KEYS = {"Escape": b"\x1b", "Tab": b"\t"}
command = sys.argv[sys.argv.index("--") + 1:]

QUESTIONS = [
    (re.compile(rb"\x1b_G([^\x1b]*)a=q[^\x1b]*\x1b\\"), lambda m: b"\x1b_Gi=31;OK\x1b\\" if b"i=31" in m.group(0) else b""),
    (re.compile(rb"\x1b\[16t"), lambda m: b"\x1b[6;20;10t"),
    (re.compile(rb"\x1b\[>q"), lambda m: b"\x1bP>|" + version.encode() + b"\x1b\\"),
    (re.compile(rb"\x1b\[>0?c"), lambda m: b"\x1b[>1;4000;29c"),
    (re.compile(rb"\x1b\[0?c"), lambda m: b"\x1b[?62;22c"),
]
PICTURE = b"a=T," if shown == "pixels" else "▀".encode()
# OUTER_LATE_NAME_MS: the name (XTVERSION) is answered that late, as over a slow link.
LATE_NAME = int(os.environ.get("OUTER_LATE_NAME_MS", "0")) / 1000
owed = []  # (when, answer) not yet written

pid, fd = terminal_pty.start(command, term="xterm-kitty")
output = bytearray()
scanned = 0
quiet_since = time.monotonic()
ended = False


def pump(timeout):
    """Reads what the command wrote (for up to `timeout` seconds) and answers every whole
    question in it; a question cut by a read waits for its end. False once the command's side
    is closed."""
    global scanned, quiet_since
    chunk = terminal_pty.read(fd, timeout)
    while owed and owed[0][0] <= time.monotonic():
        os.write(fd, owed.pop(0)[1])
    if chunk is None:
        return False
    if not chunk:
        return True
    output.extend(chunk)
    quiet_since = time.monotonic()
    window = bytes(output[scanned:])
    last = 0
    found = []
    for pattern, answer in QUESTIONS:
        for m in pattern.finditer(window):
            found.append((m.start(), m.end(), answer(m)))
    for start, end, answer in sorted(found):
        if start < last:
            continue
        if answer and LATE_NAME and answer.startswith(b"\x1bP>|"):
            owed.append((time.monotonic() + LATE_NAME, answer))
        elif answer:
            os.write(fd, answer)
        last = end
    tail = window.rfind(b"\x1b")
    scanned += max(last, tail if tail >= 0 and len(window) - tail < 64 else len(window))
    return True


def save_pane(name):
    pane = subprocess.run(capture + ["-p", "-e"], capture_output=True).stdout
    with open(out_path + "." + name, "wb") as f:
        f.write(pane)


def settle():
    """Until the screen has been quiet for 0.7 s, or for 30 s at most: a screen that keeps
    changing (seen once under a loaded run, cause not found) must not hold the walk until its
    limit. What was written meanwhile is kept in OUT.unsettled (appended) for whoever reads a
    failure; the pane is saved and checked as it is."""
    global ended
    began, mark = time.monotonic(), len(output)
    while not ended and time.monotonic() - quiet_since < 0.7:
        if time.monotonic() - began > 30:
            with open(out_path + ".unsettled", "ab") as f:
                f.write(b"--- still writing after 30 s; the last of it:\n" + bytes(output[max(mark, len(output) - 4096):]) + b"\n")
            return
        ended = not pump(0.1)


def phase(what):
    """Says where the walk is (OUT.phase), for whoever reads a walk that hit its limit."""
    with open(out_path + ".phase", "w") as f:
        f.write(f"{what} (after {time.monotonic() - began:.1f} s, {len(output)} bytes written)\n")


def wait_for_picture(since):
    global ended
    phase("waiting for a picture")
    while not ended and time.monotonic() < deadline and PICTURE not in output[since:]:
        ended = not pump(0.1)


began = time.monotonic()
deadline = began + 240
wait_for_picture(0)
settle()
save_pane("pane1")
mark = len(output)
os.write(fd, b"j")
wait_for_picture(mark)
settle()
save_pane("pane2")
for number, step in enumerate(walk, start=3):
    if step.startswith("resize:"):
        terminal_pty.set_size(fd, *(int(n) for n in step[7:].split("x")))
    else:
        key, _, held = step.partition("~")
        for i in range(int(held) if held else 1):
            if i:
                pump(0.03)
            os.write(fd, KEYS.get(key, key.encode()))
    quiet_since = time.monotonic()
    phase(f"settling after step {number}: {step}")
    settle()
    save_pane(f"pane{number}")
phase("quitting")
os.write(fd, b"q")
status = None
while time.monotonic() < deadline:
    if not ended:
        ended = not pump(0.1)
    else:
        time.sleep(0.05)
    status = terminal_pty.ended(pid, fd, output)
    if status is not None:
        break

terminal_pty.finish(pid, status, out_path, output)
