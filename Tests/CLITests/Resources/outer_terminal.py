"""The terminal around tmux: answers every question as it reads it, as the terminal named by
VERSION would (kitty's graphics answer, its cell size, Device Attributes, XTVERSION), so tmux's
own questions and those passed through it from a pane are answered in order, as a real terminal
answers them.

    outer_terminal.py VERSION SHOWN OUT CAPTURE -- COMMAND...

COMMAND (tmux running the monitor) runs on a pseudo-terminal of 120x40 cells of 10x20 pixels;
everything it writes is saved to OUT. Once a picture has been shown (SHOWN `pixels`: placed with
`a=T`; `cells`: half blocks written), the script saves
the pane as tmux holds it (`CAPTURE` is the capture command, split on spaces, run by the shell
with `-p -e` appended) to OUT.pane1, types `j`, waits for the next picture, saves OUT.pane2,
types `q` and waits for the command to end; exits with its status, or 124 after 40 seconds.
"""
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

version, shown, out_path, capture = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split(" ")
command = sys.argv[sys.argv.index("--") + 1:]

QUESTIONS = [
    (re.compile(rb"\x1b_G([^\x1b]*)a=q[^\x1b]*\x1b\\"), lambda m: b"\x1b_Gi=31;OK\x1b\\" if b"i=31" in m.group(0) else b""),
    (re.compile(rb"\x1b\[16t"), lambda m: b"\x1b[6;20;10t"),
    (re.compile(rb"\x1b\[>q"), lambda m: b"\x1bP>|" + version.encode() + b"\x1b\\"),
    (re.compile(rb"\x1b\[>0?c"), lambda m: b"\x1b[>1;4000;29c"),
    (re.compile(rb"\x1b\[0?c"), lambda m: b"\x1b[?62;22c"),
]
PICTURE = b"a=T," if shown == "pixels" else "▀".encode()

pid, fd = pty.fork()
if pid == 0:
    env = dict(os.environ, TERM="xterm-kitty", COLORTERM="truecolor", LANG="C.UTF-8", LC_ALL="C.UTF-8")
    for name in ("TMUX", "TMUX_PANE", "STY", "NO_COLOR"):
        env.pop(name, None)
    os.execvpe(command[0], command, env)

fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 1200, 800))
output = bytearray()
scanned = 0
steps = ["first", "second", "quit"]
mark = 0
status = None


def save_pane(name):
    pane = subprocess.run(capture + ["-p", "-e"], capture_output=True).stdout
    with open(out_path + "." + name, "wb") as f:
        f.write(pane)


deadline = time.monotonic() + 40
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            while status is None and time.monotonic() < deadline:
                done, raw = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = os.waitstatus_to_exitcode(raw)
                else:
                    time.sleep(0.05)
            break
        output += chunk
        # Answer every whole question in what is new (a question cut by a read waits for its end).
        window = bytes(output[scanned:])
        last = 0
        found = []
        for pattern, answer in QUESTIONS:
            for m in pattern.finditer(window):
                found.append((m.start(), m.end(), answer(m)))
        for start, end, answer in sorted(found):
            if start < last:
                continue
            if answer:
                os.write(fd, answer)
            last = end
        # Keep an unfinished escape at the end for the next read.
        tail = window.rfind(b"\x1b")
        scanned += max(last, tail if tail >= 0 and len(window) - tail < 64 else len(window))
    if steps and steps[0] == "first" and PICTURE in output:
        time.sleep(0.5)
        save_pane("pane1")
        steps.pop(0)
        mark = len(output)
        os.write(fd, b"j")
    elif steps and steps[0] == "second" and PICTURE in output[mark:]:
        time.sleep(0.5)
        save_pane("pane2")
        steps.pop(0)
        os.write(fd, b"q")
    done, raw = os.waitpid(pid, os.WNOHANG)
    if done:
        status = os.waitstatus_to_exitcode(raw)
        while select.select([fd], [], [], 0.2)[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        break

with open(out_path, "wb") as f:
    f.write(output)
if status is None:
    os.kill(pid, 9)
    sys.exit(124)
sys.exit(status)
