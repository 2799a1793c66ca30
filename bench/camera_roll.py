#!/usr/bin/env python3
"""The monitor with a camera roll: 20,000 (and 100,000) small JPEGs marked with `*` and queued
with `u` in the real binary inside tmux (120x40), as an ordinary account (as root: the account
`uploadmon-user`, made if missing, reached with setpriv).

For each size it measures:
  - how long until every file has arrived, beside the agent alone (`send --background
    --files-from`) for the same files into the same kind of receiver, timed before and after
    the monitor's run (the faster counts; the disk settled before each): goal <= 1.1x
  - a key's effect on screen while they upload (a run of its own, so the probing's own load
    is not in the arrival time): `?` opens the help and `?` closes it again,
    the time from tmux's send-keys until capture-pane shows the change (the capture's own
    time included): goal median <= 50 ms, p99 <= 200 ms
  - how long after the last file arrived the monitor shows them all finished (how far its
    screen was behind), then its CPU while it watches the finished queue: goal <= 5 % of a core
  - how long the monitor takes to hand every file to the agent, and then how long `q` takes
    to end it while uploads run (until the process has exited; the tmux server, its parent
    here, reaps it later, which is shown beside) (the agent goes on and delivers every file); at the first size
    also SIGTERM and SIGHUP from a closed terminal (the tmux session killed): goal <= 1 s each.
    Ending during the hand-over waits for it to finish: nothing queued is lost
The receiver is `uploadmon serve` on loopback for both sides of the ratio (a common sink: the
ratio is between our two paths, the monitor's and the agent's, not against another client).

With --rounds K the arrival is measured K times, each monitor run between two runs of the
agent alone (the faster of its neighbours counts), and the median of the K ratios is the figure:
on a 2-core machine the same run swings by 10-30 % from one time to the next.

  bench/camera-roll [--files 20000,100000] [--bin PATH] [--rounds K] [--arrival-only]
"""
import argparse, os, pwd, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--files", default="20000,100000")
parser.add_argument("--bin", default=None)
parser.add_argument("--probes", type=int, default=40)
parser.add_argument("--rounds", type=int, default=1,
                    help="pairs of (monitor run, agent alone) for the arrival ratio; the median ratio counts")
parser.add_argument("--arrival-only", action="store_true", help="only the arrival ratio (no key probes, no quitting)")
args = parser.parse_args()

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = args.bin
if binary is None:
    subprocess.run(["swift", "build", "-c", "release", "--product", "uploadmon"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    binary = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root, check=True,
                            capture_output=True, text=True).stdout.strip() + "/uploadmon"

work = tempfile.mkdtemp(prefix="uploadmon-bench-roll.")
os.chmod(work, 0o755)
account = None
if os.geteuid() == 0:
    try:
        pwd.getpwnam("uploadmon-user")
    except KeyError:
        subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "uploadmon-user"], check=True)
    account = pwd.getpwnam("uploadmon-user")
shutil.copy(binary, work + "/uploadmon")
os.chmod(work + "/uploadmon", 0o755)
binary = work + "/uploadmon"
socket_name = f"uploadmon-roll-{os.getpid()}"
children = []


def own(path):
    if account:
        os.chown(path, account.pw_uid, account.pw_gid)


def home_for(label):
    home = f"{work}/home-{label}"
    for sub in ["", "/run", "/state", "/config"]:
        os.makedirs(home + sub, exist_ok=True)
        own(home + sub)
    os.chmod(home + "/run", 0o700)
    return home


def as_user(home, command):
    env = [f"HOME={home}", f"XDG_RUNTIME_DIR={home}/run", f"XDG_STATE_HOME={home}/state", f"XDG_CONFIG_HOME={home}/config",
           "PATH=/usr/bin:/bin", "LANG=C.UTF-8", f"TERM={os.environ.get('TERM', 'tmux-256color')}"]
    drop = ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--clear-groups", "--"] if account else []
    return drop + ["env", "-i"] + env + command


def tmux(*words, capture=False):
    result = subprocess.run(["tmux", "-L", socket_name, "-f", "/dev/null"] + list(words), capture_output=True, text=True)
    return result.stdout if capture else None


def screen():
    return tmux("capture-pane", "-p", "-t", "roll", capture=True)


def wait_screen(condition, timeout, every=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = screen()
        if condition(text):
            return text
        time.sleep(every)
    return None


def count(folder):
    with os.scandir(folder) as entries:
        return sum(1 for entry in entries if not entry.name.startswith("."))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def monitor_pid(pictures):
    for _ in range(200):
        found = subprocess.run(["pgrep", "-f", f"uploadmon {pictures} --to"], capture_output=True, text=True).stdout.split()
        # The deepest of setpriv/env/uploadmon: the program itself once it has exec'd.
        for pid in found:
            try:
                if os.readlink(f"/proc/{pid}/exe").endswith("/uploadmon"):
                    return int(pid)
            except OSError:
                pass
        time.sleep(0.05)
    raise SystemExit("the monitor did not start")


def agent_pid(home):
    with open(f"{home}/state/uploadmon/agent.lock") as f:
        return int(f.read().strip())


def agent_stop(home):
    subprocess.run(as_user(home, [binary, "agent", "stop"]), capture_output=True)


def start_receiver(label):
    folder = f"{work}/received-{label}"
    os.makedirs(folder)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(f"{work}/serve-{label}.log", "w")
    process = subprocess.Popen([binary, "serve", "--port", str(port), "--dir", folder], stdout=log, stderr=subprocess.STDOUT)
    children.append(process)
    for _ in range(100):
        if "listening" in open(f"{work}/serve-{label}.log").read():
            break
        time.sleep(0.05)
    return process, f"http://127.0.0.1:{port}/photo", folder


def make_pictures(n):
    folder = f"{work}/roll-{n}"
    os.makedirs(folder)
    own(folder)
    ppm = f"{work}/base.ppm"
    with open(ppm, "wb") as f:
        f.write(b"P6 32 24 255\n" + bytes((x * 7 + y * 3) % 256 for y in range(24) for x in range(32) for _ in range(3)))
    base = subprocess.run(["cjpeg", "-quality", "80", ppm], capture_output=True, check=True).stdout
    base = base + bytes(2048 - len(base)) if len(base) < 2048 else base
    for i in range(n):
        path = f"{folder}/IMG_{i:06d}.jpg"
        with open(path, "wb") as f:
            f.write(base + i.to_bytes(4, "big"))   # after EOI: each file its own content
        own(path)
    with open(f"{work}/list-{n}", "w") as f:
        f.write("".join(f"{folder}/IMG_{i:06d}.jpg\n" for i in range(n)))
    own(f"{work}/list-{n}")
    return folder


def agent_alone(n, folder, label=""):
    home = home_for(f"agent-{n}{label}")
    server, url, received = start_receiver(f"agent-{n}{label}")
    start = time.monotonic()
    before = os.times()
    subprocess.run(as_user(home, [binary, "send", "--background", "--files-from", f"{work}/list-{n}", "--to", url]),
                   check=True, stdout=subprocess.DEVNULL)
    after = os.times()
    client_cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    while count(received) < n:
        time.sleep(0.1)
    took = time.monotonic() - start
    used = f"CPU: client {client_cpu:.1f} s, agent {cpu_seconds(agent_pid(home)):.1f} s, receiver {cpu_seconds(server.pid):.1f} s"
    agent_stop(home)
    server.send_signal(signal.SIGINT)
    server.wait()
    return took, used


def open_monitor(home, folder, url):
    tmux("kill-server")
    line = " ".join(f"'{w}'" for w in as_user(home, [binary, folder, "--to", url, "--notify", "none"]))
    tmux("new-session", "-d", "-s", "roll", "-x", "120", "-y", "40", line)
    if wait_screen(lambda s: "IMG_000000" in s, 60) is None:
        raise SystemExit("the monitor did not list the folder:\n" + (screen() or ""))
    return monitor_pid(folder)


def key_latency():
    """`?` until the help shows, `?` until it is gone: two figures."""
    times = []
    for shown in (True, False):
        start = time.monotonic()
        tmux("send-keys", "-t", "roll", "?")
        if wait_screen(lambda s: ("any key closes" in s) == shown, 10) is None:
            return times + [10.0]
        times.append(time.monotonic() - start)
    return times


def monitor_run(n, folder, label=""):
    """Every file marked and queued; the time until all arrived (nothing else runs meanwhile),
    then the monitor's CPU while it shows the finished queue."""
    home = home_for(f"monitor-{n}{label}")
    server, url, received = start_receiver(f"monitor-{n}{label}")
    pid = open_monitor(home, folder, url)
    tmux("send-keys", "-t", "roll", "*")
    wait_screen(lambda s: f"{n} marked" in s or f"{n:,} marked" in s, 30)
    start = time.monotonic()
    tmux("send-keys", "-t", "roll", "u")
    while count(received) < n:
        time.sleep(0.1)
        if time.monotonic() - start > 1800:
            raise SystemExit(f"only {count(received)} of {n} arrived in 30 minutes")
    took = time.monotonic() - start
    used = f"CPU: monitor {cpu_seconds(pid):.1f} s, agent {cpu_seconds(agent_pid(home)):.1f} s, receiver {cpu_seconds(server.pid):.1f} s"
    # The monitor shows every upload finished (its queue's title counts them ok) some time after
    # the last one arrived: how far behind it was, and only then is it idle.
    arrived = time.monotonic()
    caught = wait_screen(lambda s: f"{n} ok" in s, 300, every=0.2)
    lag = time.monotonic() - arrived if caught is not None else None
    used += f"; the monitor showed all {n} ok " + (f"{lag:.1f} s after the last arrived" if lag is not None else "never (5 min)")
    time.sleep(2)
    before = cpu_seconds(pid)
    time.sleep(10)
    idle = (cpu_seconds(pid) - before) / 10
    agent_stop(home)
    server.send_signal(signal.SIGINT)
    server.wait()
    tmux("kill-server")
    return took, idle, used


def probe_run(n, folder, probes):
    """Keys while the files upload: `?` in and out, as often as `probes` pairs fit."""
    home = home_for(f"probe-{n}")
    server, url, received = start_receiver(f"probe-{n}")
    open_monitor(home, folder, url)
    tmux("send-keys", "-t", "roll", "*")
    wait_screen(lambda s: "marked" in s, 30)
    tmux("send-keys", "-t", "roll", "u")
    time.sleep(0.5)
    latencies = []
    while count(received) < n and len(latencies) < 2 * probes:
        latencies += key_latency()
        time.sleep(0.2)
    agent_stop(home)
    server.send_signal(signal.SIGINT)
    server.wait()
    tmux("kill-server")
    return latencies


def quit_run(n, folder, how):
    """Queue everything and, once the monitor has handed every file to the agent (its queue
    shows them all; until then, ending waits for the hand-over, so that nothing queued is lost),
    end the monitor `how` while they upload: how long the hand-over took, how long ending took,
    and whether the agent went on to deliver every file."""
    home = home_for(f"quit-{how}-{n}")
    server, url, received = start_receiver(f"quit-{how}-{n}")
    pid = open_monitor(home, folder, url)
    tmux("send-keys", "-t", "roll", "*")
    wait_screen(lambda s: "marked" in s, 30)
    queued = time.monotonic()
    tmux("send-keys", "-t", "roll", "u")
    wait_screen(lambda s: f"Queue · {n}" in s, 600)
    handed = time.monotonic() - queued
    start = time.monotonic()
    if how == "q":
        tmux("send-keys", "-t", "roll", "q")
    elif how == "SIGTERM":
        os.kill(pid, signal.SIGTERM)
    else:
        tmux("kill-server")   # the terminal closes: SIGHUP
    # Ended when the process has exited (a zombie, or gone): the terminal is restored by then.
    # Its parent here is the tmux server, which was seen to take up to 2 s more to reap it
    # (a shell in a pane reaps at once); that is said beside, not counted.
    exited = None
    while alive(pid) and time.monotonic() - start < 60:
        if exited is None and process_state(pid) == "Z":
            exited = time.monotonic() - start
        time.sleep(0.002)
    reaped = time.monotonic() - start
    ended = exited if exited is not None else reaped
    deadline = time.monotonic() + 600
    while count(received) < n and time.monotonic() < deadline:
        time.sleep(0.2)
    delivered = count(received)
    agent_stop(home)
    server.send_signal(signal.SIGINT)
    server.wait()
    tmux("kill-server")
    return handed, ended, reaped, delivered


def process_state(pid):
    """The state letter /proc gives (Z: exited, not yet reaped), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


try:
    sizes = [int(x) for x in args.files.split(",")]
    who = f"as {account.pw_name} (uid {account.pw_uid})" if account else f"as uid {os.getuid()}"
    print(f"camera roll bench {who}, {os.cpu_count()} cores, binary {binary}")
    for index, n in enumerate(sizes):
        folder = make_pictures(n)
        # The pictures just written are still being written back: settled first, and the agent
        # alone timed before and after the monitor (the faster counts), so neither side of
        # the ratio pays for the other's disk work.
        os.sync()
        alone_runs = [agent_alone(n, folder)]
        ratios = []
        for round in range(max(1, args.rounds)):
            os.sync()
            took, idle, monitor_cpu = monitor_run(n, folder, label=f"-{round}")
            os.sync()
            alone_runs.append(agent_alone(n, folder, label=f"-again{round}"))
            (before, after) = alone_runs[-2:]
            (alone, alone_cpu) = before if before[0] <= after[0] else after
            ratios.append(took / alone)
            print(f"{n:>7} files: round {round + 1}: agent alone {before[0]:.1f} s and {after[0]:.1f} s around the monitor's "
                  f"{took:.1f} s = {took / alone:.2f}x; {alone_cpu}; through the monitor {monitor_cpu}", flush=True)
        ratio = statistics.median(ratios)
        print(f"{n:>7} files: agent alone {alone:6.1f} s, through the monitor {took:6.1f} s = {took / alone:.2f}x (goal <= 1.10x)")
        if len(ratios) > 1:
            print(f"          median of {len(ratios)} rounds: {ratio:.2f}x (each: {', '.join(f'{r:.2f}' for r in ratios)})")
        print(f"          agent alone {alone_cpu}; through the monitor {monitor_cpu}")
        print(f"          CPU watching the finished queue: {idle * 100:.1f} % of a core (goal <= 5 %)")
        if args.arrival_only:
            shutil.rmtree(folder)
            continue
        latencies = sorted(probe_run(n, folder, args.probes))
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        print(f"          a key while uploading ({len(latencies)} probes): median {statistics.median(latencies) * 1000:.0f} ms, "
              f"p99 {p99 * 1000:.0f} ms, max {latencies[-1] * 1000:.0f} ms (goal <= 50 / 200 ms)")
        for how in (["q", "SIGTERM", "SIGHUP"] if index == 0 else ["q"]):
            handed, ended, reaped, delivered = quit_run(n, folder, how)
            print(f"          {how} while uploading (all handed to the agent {handed:.1f} s after u): ended in {ended * 1000:.0f} ms "
                  f"(goal <= 1000; reaped by its parent after {reaped * 1000:.0f} ms), the agent then delivered {delivered} of {n}")
        shutil.rmtree(folder)
finally:
    tmux("kill-server")
    for child in children:
        if child.poll() is None:
            child.kill()
    subprocess.run(["pkill", "-f", f"{work}/uploadmon"], capture_output=True)
    shutil.rmtree(work, ignore_errors=True)
