"""A terminal that answers graphics questions as kitty, a sixel terminal or a plain VT220 would,
for the end-to-end tests of pictures in real pixels.

    fake_terminal.py MODE OUT [TEXT=KEYS] -- COMMAND...

MODE is kitty, sixel, plain (answers Device Attributes only), mute (answers nothing), slow
(answers as kitty, but 1.5 seconds late), tmux (answers as kitty, but the command is told it
runs inside tmux) or screen (TERM says screen; answers Device Attributes, not XTVERSION). The
command runs on a pseudo-terminal of 120x40 cells of 10x20 pixels. Everything it writes is saved
to OUT. Once a picture has been sent (or, for plain and mute, half blocks are on screen) the
terminal types KEYS once TEXT is on screen (if given), `j` once a picture is on screen, waits for the next picture, types `q` and waits for the command to end. It
exits with the command's status, or 124 when the command outlived 40 seconds.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import terminal_pty  # noqa: E402

mode, out_path = sys.argv[1], sys.argv[2]
separator = sys.argv.index("--")
start_text, _, start_keys = (sys.argv[3] if separator > 3 else "").encode().rpartition(b"=")
command = sys.argv[separator + 1:]

ANSWERS = {
    "kitty": b"\x1b_Gi=31;OK\x1b\\\x1b[6;20;10t\x1b[?62;22c",
    "sixel": b"\x1b[?1;0;1024S\x1b[6;20;10t\x1b[?62;4;22c",
    "plain": b"\x1b[?62;22c",
    "mute": b"",
}
ANSWERS["tmux"] = ANSWERS["slow"] = ANSWERS["kitty"]
# GNU screen: Device Attributes to any question, no name (XTVERSION goes unanswered).
ANSWERS["screen"] = ANSWERS["plain"]
DELAY = 1.5 if mode == "slow" else 0
PICTURE = {"kitty": b"\x1b_Ga=T", "sixel": b"\x1bP0;0;0q"}.get(mode, "▀".encode())

# tmux: a socket no tmux server listens on: asked, tmux cannot say passthrough is on.
pid, fd = terminal_pty.start(command, term="screen-256color" if mode == "screen" else "xterm-256color",
                             extra={"TMUX": "/tmp/uploadmon-test-no-tmux/default,1,0"} if mode == "tmux" else None)
output = bytearray()
answered = False
asked_at = None
steps = (["start"] if start_keys else []) + ["first", "second", "quit"]
status = None
deadline = time.monotonic() + 40
while time.monotonic() < deadline:
    chunk = terminal_pty.read(fd, 0.1)
    if chunk is None:
        # The terminal's other side is closed: the command has ended or is ending.
        while status is None and time.monotonic() < deadline:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = os.waitstatus_to_exitcode(raw)
            else:
                time.sleep(0.05)
        break
    output += chunk
    if asked_at is None and (b"\x1b_Gi=31" in output or (mode == "screen" and b"\x1b[c" in output)):
        asked_at = time.monotonic()
    if not answered and asked_at is not None and time.monotonic() >= asked_at + DELAY:
        answered = True
        if ANSWERS[mode]:
            os.write(fd, ANSWERS[mode])
    if steps and steps[0] == "start" and start_text in output:
        steps.pop(0)
        os.write(fd, start_keys)
    elif steps and steps[0] == "first" and output.count(PICTURE) >= 1 and (
            # A late answer must have been read before the keys that follow it.
            mode != "slow" or (answered and time.monotonic() > asked_at + DELAY + 0.5)):
        steps.pop(0)
        os.write(fd, b"j")
        mark = len(output)
    elif steps and steps[0] == "second" and PICTURE in output[mark:]:
        steps.pop(0)
        os.write(fd, b"q")
    status = terminal_pty.ended(pid, fd, output)
    if status is not None:
        break

terminal_pty.finish(pid, status, out_path, output)
