"""What the pseudo-terminal drivers of the pixel tests share: starting the command on a
pseudo-terminal of a given size, reading what it writes, and ending with its status."""
import fcntl
import os
import pty
import select
import struct
import sys
import termios

CELL_W, CELL_H = 10, 20


def start(command, term="xterm-256color", extra=None, columns=120, rows=40):
    """Runs `command` on a new pseudo-terminal (TERM `term`, UTF-8, 24-bit colour; no TMUX, STY
    or NO_COLOR but what `extra` sets) of `columns` x `rows` cells of 10x20 pixels; returns
    (pid, the terminal's side)."""
    pid, fd = pty.fork()
    if pid == 0:
        # The size before the program starts: set only by the parent after the fork, a program
        # started first on a loaded machine (tmux) read the pty's default 80x24 and drew for it.
        set_size(0, columns, rows)
        env = dict(os.environ, TERM=term, COLORTERM="truecolor", LANG="C.UTF-8", LC_ALL="C.UTF-8")
        for name in ("TMUX", "TMUX_PANE", "STY", "NO_COLOR"):
            env.pop(name, None)
        env.update(extra or {})
        os.execvpe(command[0], command, env)
    set_size(fd, columns, rows)
    return pid, fd


def set_size(fd, columns, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, columns * CELL_W, rows * CELL_H))


def read(fd, timeout):
    """What the command wrote within `timeout` seconds: b"" for nothing, None once its side has
    closed."""
    if not select.select([fd], [], [], timeout)[0]:
        return b""
    try:
        chunk = os.read(fd, 65536)
    except OSError:
        return None
    return chunk or None


def drain(fd):
    """What is still in the terminal's buffer once the command has ended."""
    rest = bytearray()
    while (chunk := read(fd, 0.2)):
        rest += chunk
    return bytes(rest)


def ended(pid, fd, output):
    """The command's exit status once it has ended (what is left in the buffer added to
    `output`), else None."""
    done, raw = os.waitpid(pid, os.WNOHANG)
    if not done:
        return None
    output += drain(fd)
    return os.waitstatus_to_exitcode(raw)


def finish(pid, status, out_path, data, mode="wb"):
    """Writes `data` to `out_path` and exits with the command's status, or kills it and exits
    124 when it has not ended (status None)."""
    with open(out_path, mode) as f:
        f.write(data)
    if status is None:
        os.kill(pid, 9)
        sys.exit(124)
    sys.exit(status)
