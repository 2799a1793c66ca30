"""A terminal that answers the monitor's graphics questions as a sixel terminal (xterm -ti 340)
or kitty would and keeps a model of its screen (`screen_model.py`), for the tests that nothing a
picture drew is left behind.

    walk_terminal.py MODE OUT KEYS -- COMMAND...

MODE is sixel or kitty, answering the monitor's "shown yet?" question (`CSI 5 n`) at once, or
sixel-slow / kitty-slow, answering it as a link of 1 Mbit/s and 100 ms round trip would (once
what came before it has crossed at that rate): frames are then skipped and pictures drawn
lightly; -veryslow: 120 kbit/s, where even a light picture is too slow. The command runs on a pseudo-terminal of 120x40 cells of 10x20 pixels.
KEYS is a comma-separated list of steps: a key (`j`, `k`, `G`, `g`, `?`, `Escape`, `PageDown`,
`PageUp`, `Star` for `*`, `Space`), a key repeated (`j*30`, each a step), a key held (`j~10`: ten presses 30 ms apart,
one step), `resize:COLUMNSxROWS`, or `wait:SECONDS` (until the screen has been quiet that long). After each step the terminal waits until the screen has been
quiet for 0.6 s and asks what the model found wrong at the end of the last frame (the monitor
ends each with `CSI 5 n`). At the end it
types `q`. OUT gets a line `pictures N` (pictures drawn in pixels), a line `sizes WxH ...` (each
picture's pixels, in order), a line `halfblocks N` (half blocks on the last screen), then one
line per problem found: `after STEP: PROBLEM`. Exits with the command's status, or 124 if it outlived 240 s (a hang, not a slow machine).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import terminal_pty  # noqa: E402
from screen_model import Screen  # noqa: E402

mode, out_path, script = sys.argv[1], sys.argv[2], sys.argv[3]
mode, _, link = mode.partition("-")
RATE, ROUND_TRIP = {"slow": (125_000, 0.1), "veryslow": (15_000, 0.1)}.get(link, (None, 0.0))
link_free = 0.0  # when what was written so far has crossed the link
command = sys.argv[sys.argv.index("--") + 1:]
ANSWERS = {
    "kitty": b"\x1b_Gi=31;OK\x1b\\\x1b[6;20;10t\x1b[?62;22c",
    "sixel": b"\x1b[?1;0;1024S\x1b[6;20;10t\x1b[?62;4;22c",
}
KEYS = {"Escape": b"\x1b", "Tab": b"\t", "Star": b"*", "Space": b" ", "PageDown": b"\x1b[6~", "PageUp": b"\x1b[5~", "Home": b"\x1b[H", "End": b"\x1b[F"}
CELL_W, CELL_H = terminal_pty.CELL_W, terminal_pty.CELL_H

steps = []
for step in script.split(","):
    key, _, times = step.partition("*")
    steps += [key] * (int(times) if times else 1)


def press(step):
    key, _, held = step.partition("~")
    for i in range(int(held) if held else 1):
        if i:
            time.sleep(0.03)
            read(0)
        os.write(fd, KEYS.get(key, key.encode()))

pid, fd = terminal_pty.start(command)


def set_size(columns, rows):
    terminal_pty.set_size(fd, columns, rows)


screen = Screen(120, 40, CELL_W, CELL_H)
record = open(out_path + ".raw", "wb")  # everything the command wrote, for a failure's reader
answered = False
frame_problems = []  # what was wrong at the end of the last frame
owed = []  # when each "shown yet?" answer is due
status = None
report = []
deadline = time.monotonic() + 240


def read(timeout):
    """Feeds what arrives within `timeout` to the model and answers what is due. Returns None once
    the command's side has closed, else whether anything arrived."""
    global answered, link_free
    now = time.monotonic()
    while owed and owed[0] <= now:
        owed.pop(0)
        os.write(fd, b"\x1b[0n")
    chunk = terminal_pty.read(fd, timeout)
    if chunk is None:
        return None
    if not chunk:
        return False
    # The screen is judged as it stands at the end of a frame (the monitor asks CSI 5 n after
    # each), never halfway through one.
    global frame_problems
    pieces = chunk.split(b"\x1b[5n")
    for i, piece in enumerate(pieces):
        screen.feed(piece + (b"\x1b[5n" if i < len(pieces) - 1 else b""))
        if i < len(pieces) - 1:
            frame_problems = screen.problems()
    record.write(chunk)
    now = time.monotonic()
    if RATE:
        link_free = max(now, link_free) + len(chunk) / RATE
    owed.extend([max(now, link_free) + ROUND_TRIP] * chunk.count(b"\x1b[5n"))
    if not answered and b"\x1b_Gi=31" in chunk:
        answered = True
        os.write(fd, ANSWERS[mode])
    return True


def settle(quiet=0.6, limit=10.0):
    """Waits until nothing has arrived for `quiet` seconds (at most `limit`); False if the command's
    side closed meanwhile."""
    start = last = time.monotonic()
    while time.monotonic() - start < limit and time.monotonic() < deadline:
        got = read(0.05)
        if got is None:
            return False
        if got:
            last = time.monotonic()
        elif time.monotonic() - last >= quiet and not owed:
            return True
    return True


alive = settle(quiet=1.0, limit=20.0)
for number, step in enumerate(steps):
    if not alive:
        report.append(f"the command ended before step {number + 1} ({step})")
        break
    if step.startswith("wait:"):
        quiet = float(step[len("wait:"):])
        alive = settle(quiet=quiet, limit=quiet + 10)
    else:
        if step.startswith("resize:"):
            columns, rows = map(int, step[len("resize:"):].split("x"))
            set_size(columns, rows)
            screen.resize(columns, rows)
        else:
            press(step)
        alive = settle()
    for problem in frame_problems:
        report.append(f"after step {number + 1} ({step}): {problem}")
    screen.clear_hidden()

if alive:
    os.write(fd, b"q")
while time.monotonic() < deadline:
    done, raw = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(raw)
        break
    if read(0.1) is None:
        time.sleep(0.05)

halves = sum(line.count("▀") for line in screen.text)
lines = [f"pictures {screen.pictures}", "sizes " + " ".join(f"{w}x{h}" for w, h in screen.sizes), f"halfblocks {halves}"] + report
terminal_pty.finish(pid, status, out_path, "".join(line + "\n" for line in lines), mode="w")
