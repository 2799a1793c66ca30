#!/usr/bin/env python3
"""CPU per GiB of sending one large photo to S3, client side (user + system time of the client
process and its children), medians of --rounds rounds:

  - uploadmon, parts with their CRC-32C and the object completed with the whole one (--bin);
  - uploadmon without them: the build before they were added (--before), or `--no-digest`
    when no such build is given (which also skips the file's SHA-256, so it flatters "before");
  - rclone copy (its S3 backend: MD5 of every part for Content-MD5, SHA-256 for the signature
    over plain HTTP);
  - curl --aws-sigv4 -T (one PUT, UNSIGNED-PAYLOAD, nothing worked out): the floor of reading
    the file and writing it to a socket.

The server is `rclone serve s3` (not ours) storing on tmpfs, on loopback; the file is in the
page cache (read once before the first round). Goal (issue): checksums cost at most +0.3 s of
CPU per GiB over the same client without them.
"""
import argparse, os, resource, shutil, socket, statistics, subprocess, sys, tempfile, time

parser = argparse.ArgumentParser()
parser.add_argument("--gib", type=float, default=1.0)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--bin", default=None)
parser.add_argument("--before", default=None, help="an uploadmon built without S3 checksums")
args = parser.parse_args()

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = args.bin
if binary is None:
    subprocess.run(["swift", "build", "-c", "release", "--product", "uploadmon"], cwd=root, check=True, stdout=subprocess.DEVNULL)
    binary = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=root, check=True,
                            capture_output=True, text=True).stdout.strip() + "/uploadmon"

work = tempfile.mkdtemp(prefix="uploadmon-bench-s3crc.")
served = tempfile.mkdtemp(prefix="uploadmon-bench-s3crc.", dir="/dev/shm") if os.access("/dev/shm", os.W_OK) else work + "/served"
os.makedirs(served + "/photos", exist_ok=True)
key, secret = "AKIDBENCH", "bench-secret"
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
server = subprocess.Popen(["rclone", "serve", "s3", "--addr", f"127.0.0.1:{port}", "--config", "/dev/null",
                           "--auth-key", f"{key},{secret}", served], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        break
    except OSError:
        time.sleep(0.1)
endpoint = f"http://127.0.0.1:{port}"

size = int(args.gib * (1 << 30))
photo = work + "/big.jpg"
with open(photo, "wb") as f:
    f.write(b"\xff\xd8\xff\xe0")
    chunk = os.urandom(1 << 20)
    written = 4
    while written < size:
        n = min(len(chunk), size - written)
        f.write(chunk[:n])
        written += n
subprocess.run(["cat", photo], stdout=subprocess.DEVNULL, check=True)

env = dict(os.environ, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret, AWS_REGION="us-east-1",
           AWS_ENDPOINT_URL=endpoint, XDG_STATE_HOME=work + "/state", XDG_RUNTIME_DIR=work + "/run")
os.makedirs(work + "/run", mode=0o700, exist_ok=True)
rclone_env = dict(os.environ, RCLONE_CONFIG="/dev/null")


def server_cpu():
    fields = open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(command, environment):
    served_before = server_cpu()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {done.stderr[-2000:]}")
    for name in os.listdir(served + "/photos"):
        os.remove(os.path.join(served, "photos", name))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall, server_cpu() - served_before


clients = {
    "uploadmon (CRC-32C)": ([binary, "send", photo, "--to", "s3://photos/"], env),
}
if args.before:
    clients["uploadmon before"] = ([args.before, "send", photo, "--to", "s3://photos/"], env)
else:
    clients["uploadmon --no-digest"] = ([binary, "send", photo, "--to", "s3://photos/", "--no-digest"], env)
if shutil.which("rclone"):
    clients["rclone copy"] = (["rclone", "copy", photo, ":s3:photos", "--s3-provider", "Other", "--s3-endpoint", endpoint,
                               "--s3-access-key-id", key, "--s3-secret-access-key", secret, "--s3-region", "us-east-1",
                               "--s3-force-path-style", "--s3-upload-cutoff", "8M", "--s3-chunk-size", "8M"], rclone_env)
clients["curl --aws-sigv4 -T"] = (["curl", "-sSf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", f"{key}:{secret}",
                                   "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-T", photo, f"{endpoint}/photos/big.jpg"], env)

results = {name: [] for name in clients}
try:
    for _ in range(args.rounds):
        for name, (command, environment) in clients.items():
            results[name].append(timed(command, environment))
    gib = size / (1 << 30)
    print(f"== {gib:g} GiB to rclone serve s3 (tmpfs) on loopback, {args.rounds} rounds, medians; "
          f"CRC-32C by {'the processor' if open('/proc/cpuinfo').read().find(' sse4_2') >= 0 else 'tables'}")
    print(f"  {'client':24s} {'CPU s/GiB':>10s} {'wall s':>8s} {'server CPU s':>13s}")
    for name, rows in results.items():
        cpu = statistics.median(r[0] for r in rows) / gib
        wall = statistics.median(r[1] for r in rows)
        served = statistics.median(r[2] for r in rows)
        print(f"  {name:24s} {cpu:10.2f} {wall:8.2f} {served:13.2f}   (CPU each: {', '.join(f'{r[0] / gib:.2f}' for r in rows)})")
finally:
    server.terminate()
    server.wait()
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(served, ignore_errors=True)
