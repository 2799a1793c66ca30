#!/usr/bin/env python3
"""The monitor over a slow SSH link (see bench/slowssh, which builds and calls this).

sshd (its own keys, a free port) <- bench/relay.py (delay, bandwidth cap) <- ssh, run in a local
terminal (tmux, or xterm under Xvfb) -> `uploadmon monitor` in a folder of 60 photos, uploads to
a local `uploadmon serve` through the agent.

Per round: the cursor goes to the first photo and the screen settles; then `j` is pressed 59
times at 30 a second while the screen is sampled every ~10 ms. Reported: how long after the
last key the screen last changed, whether it then shows the last photo (its name in the preview
title and, in tmux, a picture whose mean colour is that photo's), and the bytes the monitor
wrote (/proc/PID/io wchar) per cursor step. Then all photos are queued with a rate limit and
the bytes written per second while uploads run are reported.
"""
import argparse, hashlib, os, re, shlex, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time

HERE = os.path.dirname(os.path.abspath(__file__))
PHOTOS = 60
# Longer than the monitor's memory of a slow link (FramePacer.linkMemory, 5 s).
QUIET_WHOLE = 6.5


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_photos(folder):
    """60 photo-like JPEGs (3000x2000: gradients, shapes, sensor noise), each of its own hue."""
    from PIL import Image, ImageDraw, ImageFilter
    import colorsys, random
    os.makedirs(folder, exist_ok=True)
    expected = {}
    for i in range(PHOTOS):
        name = f"photo-{i:02d}.jpg"
        path = os.path.join(folder, name)
        rng = random.Random(i)
        # Neighbours far apart in hue, so the picture on screen tells which photo it is.
        hue = (i * 0.381966) % 1
        if not os.path.exists(path):
            w, h = 3000, 2000
            small = Image.new("RGB", (120, 80))
            px = small.load()
            for y in range(80):
                for x in range(120):
                    r, g, b = colorsys.hsv_to_rgb((hue + 0.08 * x / 120) % 1, 0.35 + 0.5 * y / 80, 0.45 + 0.5 * x / 120)
                    px[x, y] = (int(r * 255), int(g * 255), int(b * 255))
            draw = ImageDraw.Draw(small)
            for _ in range(12):
                x, y, s = rng.randrange(120), rng.randrange(80), rng.randrange(5, 30)
                r, g, b = colorsys.hsv_to_rgb((hue + rng.uniform(-0.1, 0.1)) % 1, rng.uniform(0.2, 0.9), rng.uniform(0.3, 1))
                draw.ellipse((x, y, x + s, y + s), fill=(int(r * 255), int(g * 255), int(b * 255)))
            image = small.resize((w, h), Image.BICUBIC).filter(ImageFilter.GaussianBlur(3))
            noise = Image.effect_noise((w, h), 18).convert("RGB")
            image = Image.blend(image, noise, 0.12)
            image.save(path, quality=88)
        expected[name] = path
    return expected


_thumbs = {}


def thumbnail(name, width, height, mode):
    """The photo scaled to the picture's pixels (Pillow's box filter), in the palette for mode 5."""
    from PIL import Image
    key = (name, width, height, mode)
    if key not in _thumbs:
        with Image.open(os.path.join(tempfile.gettempdir(), "uploadmon-bench-slowssh-photos", name)) as im:
            pixels = list(im.convert("RGB").resize((width, height), Image.BOX).getdata())
        _thumbs[key] = [palette(nearest_palette(p)) for p in pixels] if mode == "5" else pixels
    return _thumbs[key]


def nearest_palette(rgb):
    """PictureEncoder.palette256: the nearest of the 6x6x6 cube and the grey ramp."""
    levels = [0, 95, 135, 175, 215, 255]
    idx = [min(range(6), key=lambda i: (abs(levels[i] - v), i)) for v in rgb]
    cube = tuple(levels[i] for i in idx)
    grey_index = max(0, min(23, (sum(rgb) // 3 - 8 + 5) // 10))
    grey = 8 + 10 * grey_index
    d = lambda a: sum((x - y) ** 2 for x, y in zip(a, rgb))
    return 232 + grey_index if d((grey, grey, grey)) < d(cube) else 16 + 36 * idx[0] + 6 * idx[1] + idx[2]


class SSHServer:
    def __init__(self, work):
        self.work = work
        self.port = free_port()
        for key in ("host", "user"):
            if not os.path.exists(f"{work}/{key}"):
                subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{work}/{key}"], check=True)
        shutil.copy(f"{work}/user.pub", f"{work}/authorized_keys")
        os.makedirs("/run/sshd", exist_ok=True)
        with open(f"{work}/sshd_config", "w") as f:
            f.write(f"""Port {self.port}
ListenAddress 127.0.0.1
HostKey {work}/host
AuthorizedKeysFile {work}/authorized_keys
PidFile {work}/sshd.pid
UsePAM no
StrictModes no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PrintMotd no
PrintLastLog no
""")
        self.process = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", f"{work}/sshd_config"],
                                        stdout=subprocess.DEVNULL, stderr=open(f"{work}/sshd.log", "w"))
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise SystemExit("sshd did not start: " + open(f"{work}/sshd.log").read())


class Relay:
    def __init__(self, to, mbit, delay_ms):
        self.process = subprocess.Popen([sys.executable, f"{HERE}/relay.py", "--to", str(to), "--mbit", str(mbit),
                                         "--delay-ms", str(delay_ms)], stdout=subprocess.PIPE, text=True)
        self.port = int(self.process.stdout.readline().split()[1])


class TmuxScreen:
    """The local terminal is tmux: keys by send-keys, the screen by capture-pane (with colours)."""
    name = "tmux"

    def __init__(self, work, command, width, height):
        self.socket = f"uploadmon-slowssh-{os.getpid()}"
        conf = f"{work}/tmux.conf"
        with open(conf, "w") as f:
            f.write('set -g status off\nset -g default-terminal "tmux-256color"\nset -as terminal-features ",*:RGB"\n')
        subprocess.run(["tmux", "-L", self.socket, "-f", conf, "new-session", "-d", "-x", str(width), "-y", str(height), command], check=True)

    def key(self, *keys):
        subprocess.run(["tmux", "-L", self.socket, "send-keys", "-t", "0", *keys], check=True)

    def sample(self):
        return subprocess.run(["tmux", "-L", self.socket, "capture-pane", "-p", "-e", "-t", "0"],
                              capture_output=True, check=True).stdout

    def text(self, sample):
        return re.sub(rb"\x1b\[[0-9;:]*m", b"", sample).decode("utf-8", "replace")

    def save(self, path):
        with open(path + ".txt", "wb") as f:
            f.write(self.sample())

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], stderr=subprocess.DEVNULL)


class X11Screen:
    """The local terminal is xterm or kitty under Xvfb: keys by xdotool, the screen by xwd of the
    terminal's window (its hash: neither keeps text to read back)."""

    def __init__(self, work, command, width, height, terminal="xterm"):
        self.name = terminal
        self.display = f":{90 + os.getpid() % 100}"
        self.xvfb = subprocess.Popen(["Xvfb", self.display, "-screen", "0", "1600x1000x24", "-nolisten", "tcp"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.env = dict(os.environ, DISPLAY=self.display)
        for _ in range(100):
            if subprocess.run(["xdpyinfo"], env=self.env, capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        if terminal == "kitty":
            # Kitty draws with OpenGL: Mesa's software renderer under Xvfb. It takes no synthetic
            # key events, so keys go through XTEST to the focused window.
            self.env["LIBGL_ALWAYS_SOFTWARE"] = "1"
            argv = ["kitty", "--config", "NONE", "--class", "uploadmon-bench", "-o", "font_size=9",
                    "-o", f"initial_window_width={width}c", "-o", f"initial_window_height={height}c",
                    "-o", "remember_window_size=no", "-o", "cursor_blink_interval=0", "sh", "-c", command]
        else:
            # A VT340 with 256 colour registers: xterm's sixel terminal (the monitor asks; with
            # --graphics cells it never sends pixels).
            argv = ["xterm", "-u8", "-ti", "vt340", "-geometry", f"{width}x{height}+0+0", "-class", "uploadmon-bench",
                    "-xrm", "*allowSendEvents: true", "-xrm", "*numColorRegisters: 256", "-e", "sh", "-c", command]
        self.terminal = subprocess.Popen(argv, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.window = None
        for attempt in range(200):
            by = "--class" if attempt % 2 else "--classname"
            found = subprocess.run(["xdotool", "search", by, "uploadmon-bench"], env=self.env, capture_output=True, text=True).stdout.split()
            if found:
                self.window = found[-1]
                break
            time.sleep(0.1)
        if not self.window:
            raise SystemExit(f"{terminal} did not open a window")
        if terminal == "kitty":
            subprocess.run(["xdotool", "windowfocus", "--sync", self.window], env=self.env, stderr=subprocess.DEVNULL)

    def key(self, *keys):
        names = {"*": "asterisk"}
        target = [] if self.name == "kitty" else ["--window", self.window]
        subprocess.run(["xdotool", "key", *target, *[names.get(k, k) for k in keys]], env=self.env,
                       stderr=subprocess.DEVNULL, check=True)

    def shot(self):
        return subprocess.run(["xwd", "-silent", "-id", self.window], env=self.env, capture_output=True).stdout

    def sample(self):
        return hashlib.sha1(self.shot()).digest()

    def save(self, path):
        """The window's dump as it is (`convert x.xwd x.png` shows it)."""
        with open(path + ".xwd", "wb") as f:
            f.write(self.shot())

    def text(self, sample):
        return ""

    def repainted(self):
        """The screen after the X server has asked every window to paint itself again: what the
        terminal holds, not what it left in the window's pixels."""
        subprocess.run(["xrefresh", "-display", self.display], env=self.env, stderr=subprocess.DEVNULL)
        return settle(self, quiet=0.5)

    def close(self):
        for p in (self.terminal, self.xvfb):
            p.terminate()


class Sampler(threading.Thread):
    """Samples the screen as fast as it can; keeps when each different screen first appeared."""

    def __init__(self, screen):
        super().__init__(daemon=True)
        self.screen = screen
        self.changes = []
        self.stopping = False
        self.last = None

    def run(self):
        while not self.stopping:
            s = self.screen.sample()
            if s != self.last:
                self.changes.append((time.monotonic(), s))
                self.last = s
            time.sleep(0.005)


def wchar(pid):
    with open(f"/proc/{pid}/io") as f:
        return int(re.search(r"wchar: (\d+)", f.read()).group(1))


def find_monitor(binary, other_than=None):
    real = os.path.realpath(binary)
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == other_than:
            continue
        try:
            if os.path.realpath(f"/proc/{pid}/exe") == real and b"monitor" in open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0"):
                return int(pid)
        except OSError:
            pass
    return None


def wait_for_monitor(binary, other_than=None):
    for _ in range(300):
        found = find_monitor(binary, other_than)
        if found:
            return found
        time.sleep(0.1)
    raise SystemExit("the monitor did not start")


def settle(screen, quiet=2.0, limit=30.0):
    """Waits until the screen has not changed for `quiet` seconds; returns the last sample."""
    return settle_since(screen, quiet, limit)[0]


def settle_since(screen, quiet, limit=30.0):
    """settle, and when the screen last changed."""
    last, since, start = None, time.monotonic(), time.monotonic()
    while time.monotonic() - start < limit:
        s = screen.sample()
        if s != last:
            last, since = s, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return s, since
        time.sleep(0.02)
    raise SystemExit("the screen never settled")


def palette(index):
    """The xterm 256-colour palette's cube and grey ramp (the 16 system colours as xterm's)."""
    if index >= 232:
        v = 8 + 10 * (index - 232)
        return (v, v, v)
    if index >= 16:
        levels = [0, 95, 135, 175, 215, 255]
        i = index - 16
        return (levels[i // 36], levels[i // 6 % 6], levels[i % 6])
    return [(0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205), (229, 229, 229),
            (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255)][index]


def picture_grid(sample):
    """The half-block picture in a tmux capture as pixels: rows of (r, g, b), two per text row
    (the cell's foreground above its background), and whether it used the palette."""
    rows, modes = [], set()
    for line in sample.decode("utf-8", "replace").split("\n"):
        fg = bg = None
        top, bottom = [], []
        for m in re.finditer(r"\x1b\[([0-9;:]*)m|(.)", line):
            if m.group(2) is not None:
                if m.group(2) == "\u2580" and fg and bg:
                    top.append(fg)
                    bottom.append(bg)
                continue
            fields = [int(f) if f.isdigit() else 0 for f in m.group(1).replace(":", ";").split(";")]
            i = 0
            while i < len(fields):
                f = fields[i]
                if f == 0:
                    fg = bg = None
                elif f == 39:
                    fg = None
                elif f == 49:
                    bg = None
                elif f in (38, 48) and i + 2 < len(fields) and fields[i + 1] == 5:
                    colour, i = palette(fields[i + 2]), i + 2
                    modes.add("5")
                    if f == 38: fg = colour
                    else: bg = colour
                elif f in (38, 48) and i + 4 < len(fields) and fields[i + 1] == 2:
                    colour, i = tuple(fields[i + 2:i + 5]), i + 4
                    modes.add("2")
                    if f == 38: fg = colour
                    else: bg = colour
                i += 1
        if len(top) >= 8:
            rows += [top, bottom]
    if len(rows) < 8:
        return None
    width = min(len(r) for r in rows)
    return [r[:width] for r in rows], ("5" if modes == {"5"} else "2")


def grid_distance(grid, thumb):
    """Mean distance per pixel between the picture on screen and a photo scaled to its size."""
    total, n = 0.0, 0
    for y, row in enumerate(grid):
        for x, c in enumerate(row):
            t = thumb[y * len(row) + x]
            total += sum((a - b) ** 2 for a, b in zip(c, t)) ** 0.5
            n += 1
    return total / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mbit", type=float, default=1)
    parser.add_argument("--delay-ms", type=float, default=50, help="one way; the round trip is twice it")
    parser.add_argument("--xterm", action="store_true", help="the local terminal is xterm under Xvfb, not tmux")
    parser.add_argument("--kitty", action="store_true", help="the local terminal is kitty under Xvfb, not tmux")
    parser.add_argument("--inner-tmux", default="none", choices=["none", "local", "remote"],
                        help="with --xterm/--kitty: tmux (allow-passthrough on) in the X terminal around ssh (local), "
                             "or on the far side of ssh around the monitor (remote)")
    parser.add_argument("--passthrough", default="on", choices=["on", "off"], help="the inner tmux's allow-passthrough")
    parser.add_argument("--graphics", default="cells", choices=["cells", "auto"],
                        help="cells: half blocks only; auto: real pixels where the terminal shows them (xterm here speaks sixel)")
    parser.add_argument("--size", default="160x45")
    parser.add_argument("--keep", help="a folder where screens that differ are kept")
    parser.add_argument("--record", help="a file that gets everything the terminal was sent (script -a)")
    parser.add_argument("--upload-seconds", type=float, default=10)
    args = parser.parse_args()
    width, height = map(int, args.size.split("x"))

    cache = os.path.join(tempfile.gettempdir(), "uploadmon-bench-slowssh-photos")
    expected = make_photos(cache)
    work = tempfile.mkdtemp(prefix="uploadmon-bench-slowssh.")
    processes, screen = [], None
    try:
        sshd = SSHServer(work)
        processes.append(sshd.process)
        relay = Relay(sshd.port, args.mbit, args.delay_ms)
        processes.append(relay.process)
        port = free_port()
        os.makedirs(f"{work}/received")
        serve = subprocess.Popen([args.bin, "serve", "--port", str(port), "--dir", f"{work}/received"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(serve)
        env = (f"LANG=C.UTF-8 COLORTERM=truecolor XDG_STATE_HOME={work}/state XDG_RUNTIME_DIR={work}/run HOME={work}")
        os.makedirs(f"{work}/run", mode=0o700)
        remote = f"cd {cache} && exec env {env} {args.bin} monitor --to http://127.0.0.1:{port}/photo --limit-rate 64k --graphics {args.graphics}"
        tmux_conf = f"{work}/inner-tmux.conf"
        with open(tmux_conf, "w") as f:
            f.write(f'set -g status off\nset -g allow-passthrough {args.passthrough}\nset -g default-terminal "tmux-256color"\n')
        if args.inner_tmux == "remote":
            # The monitor inside tmux on the far side: TMUX is set where it runs.
            remote = f"exec tmux -L uploadmon-slowssh-remote-{os.getpid()} -f {tmux_conf} new-session \"{remote}\""
        # The monitor is started again whenever it quits (the check that nothing is left over).
        record = f'script -q -f -a {os.path.abspath(args.record)} -c "' if args.record else ""
        command = (f"while :; do {record}ssh -p {relay.port} -i {work}/user -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
                   f"-o LogLevel=ERROR -t root@127.0.0.1 '{remote}'" + ('"' if record else "") + "; sleep 0.2; done")
        if args.inner_tmux == "local":
            # Tmux on this side, around ssh: on the far side only TERM says tmux.
            command = f"exec tmux -L uploadmon-slowssh-local-{os.getpid()} -f {tmux_conf} new-session {shlex.quote(command)}"
        if args.xterm or args.kitty:
            screen = X11Screen(work, command, width, height, "kitty" if args.kitty else "xterm")
        else:
            screen = TmuxScreen(work, command, width, height)
        monitor = wait_for_monitor(args.bin)
        print(f"{screen.name}" + ("" if args.inner_tmux == "none" else f" with tmux ({args.inner_tmux}, passthrough {args.passthrough})") + f" {width}x{height} over ssh through a relay of {args.mbit:g} Mbit/s, "
              f"{2 * args.delay_ms:g} ms round trip; {PHOTOS} photos of 3000x2000; --graphics {args.graphics}; {args.bin}")
        last_name = f"photo-{PHOTOS - 1:02d}.jpg"
        results = []
        for round_number in range(1, args.rounds + 1):
            screen.key("Home")
            settle(screen)
            before = wchar(monitor)
            sampler = Sampler(screen)
            sampler.start()
            gap = 1 / 30
            start = time.monotonic()
            for i in range(PHOTOS - 1):
                due = start + i * gap
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                screen.key("j")
            last_key = time.monotonic()
            final = settle(screen, quiet=3.0)
            sampler.stopping = True
            sampler.join()
            written = wchar(monitor) - before
            changes = [t for t, s in sampler.changes if t > last_key]
            lag = (changes[-1] - last_key) if changes else 0.0
            during = sum(1 for t, s in sampler.changes if start <= t <= last_key)
            shows = ""
            # On a slow link the picture went lighter (smaller pixels, or cells in the palette);
            # it is drawn whole once the link has been quiet for a while (5 s). Everything below
            # compares whole pictures.
            final, since = settle_since(screen, quiet=QUIET_WHOLE)
            shows += f"(whole picture {since - last_key:.1f} s after the last key) "
            ok = True
            if screen.name == "tmux":
                text = screen.text(final)
                ok = ("Preview · " + last_name) in text
                seen = picture_grid(final)
                if seen is None:
                    ok = False
                    shows += "(no picture)"
                else:
                    grid, mode = seen
                    far = {n: grid_distance(grid, thumbnail(n, len(grid[0]), len(grid), mode)) for n in expected}
                    ranked = sorted(far, key=far.get)
                    other = ranked[1] if ranked[0] == last_name else ranked[0]
                    ok = ok and ranked[0] == last_name
                    shows += (f"({'palette' if mode == '5' else '24-bit'} {len(grid[0])}x{len(grid)} picture; {far[last_name]:.0f} per pixel from "
                             f"{last_name}, next nearest {other} at {far[other]:.0f})")
            # The same place drawn afresh (up one photo and back) must look the same.
            quiet = QUIET_WHOLE
            screen.key("k")
            settle(screen, quiet=quiet)
            screen.key("j")
            again = settle(screen, quiet=quiet)
            fresh = again == final
            # What the terminal holds, not only what its window last showed: xterm keeps pictures
            # under erased cells and moves them with scrolls without showing it until it repaints.
            repainted_same = True
            if hasattr(screen, "repainted") and screen.repainted() != again:
                repainted_same = False
                shows += "; DIFFERS once the terminal repainted itself (it held a picture its window did not show)"
                if args.keep:
                    screen.save(os.path.join(args.keep, f"round{round_number}-repainted"))
                again = settle(screen, quiet=0.5)
            # Nothing left over: the monitor quit and started again at the same photo draws the
            # same screen (a picture's leftovers survive "up one and back", not a restart).
            if args.keep:
                screen.save(os.path.join(args.keep, f"round{round_number}-before"))
            screen.key("q")
            monitor = wait_for_monitor(args.bin, other_than=monitor)
            settle(screen)
            screen.key("End")
            restarted = settle(screen, quiet=max(3.0, quiet))
            same = restarted == again
            if args.keep and not same:
                screen.save(os.path.join(args.keep, f"round{round_number}-restarted"))
            ok = ok and fresh and same and repainted_same
            shows += "; same as drawn afresh" if fresh else "; DIFFERS from the same place drawn afresh"
            shows += "; same after a restart" if same else "; DIFFERS after a restart (something was left over)"
            results.append((lag, written / (PHOTOS - 1), ok))
            print(f"round {round_number}: screen settled {lag:.3f} s after the last key; {during} screen changes while the key was held; "
                  f"{written / (PHOTOS - 1):,.0f} B written per step ({written:,} B); shows the last photo: {'yes' if ok else 'NO'} {shows}")
        lags = [r[0] for r in results]
        print(f"settled after the last key: median {statistics.median(lags):.3f} s, worst {max(lags):.3f} s (goal 0.6 s); "
              f"bytes per step median {statistics.median([r[1] for r in results]):,.0f}; "
              f"last photo shown every round: {'yes' if all(r[2] for r in results) else 'NO'}")

        # Uploads: every photo queued, each at 64 kB/s (the agent sends; the monitor draws).
        screen.key("Home")
        settle(screen)
        screen.key("*")
        time.sleep(0.5)
        screen.key("u")
        time.sleep(2)
        before, t0 = wchar(monitor), time.monotonic()
        time.sleep(args.upload_seconds)
        rate = (wchar(monitor) - before) / (time.monotonic() - t0)
        print(f"while uploads run: {rate:,.0f} B/s written by the monitor over {args.upload_seconds:g} s")
        try:
            screen.key("q")
            time.sleep(0.5)
            screen.key("y")
        except subprocess.CalledProcessError:
            pass  # the monitor quit at once (the agent keeps the uploads)
        # It is started again by the loop; the terminal closes with the rest.
    finally:
        if screen:
            screen.close()
        subprocess.run([args.bin, "agent", "stop"], env=dict(os.environ, XDG_STATE_HOME=f"{work}/state", XDG_RUNTIME_DIR=f"{work}/run", HOME=work),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
        for p in processes:
            p.terminate()
        for p in processes:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
