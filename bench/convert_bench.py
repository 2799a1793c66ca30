#!/usr/bin/env python3
"""Photos made smaller on the way out, timed as whole processes against libvips'
vipsthumbnail, ImageMagick and Pillow (+pillow-heif) on the same files, same machine:

  - a 24 MP JPEG (6000 x 4000) to a 2048 px JPEG at quality 85  (goal: <= 1.0x vipsthumbnail)
  - a 12 MP HEIC (4032 x 3024) to a 2048 px JPEG at quality 85  (goal: <= 1.1x the best)
  - a 100 MP PNG (10000 x 10000) to 2048 px: peak RSS            (goal: <= 64 MiB)

Runs are interleaved (each round runs every tool once, in turn), so a busy moment of the
machine falls on all of them alike. Wall time and CPU time (user + system of the child) are
medians; peak RSS is the child's maximum resident set (wait4). Each output is checked with
djpeg for its size, so no tool is timed doing less than the others.
"""
import argparse, os, shutil, statistics, subprocess, sys, time

def generate(folder):
    from PIL import Image, ImageDraw, ImageFilter
    import random
    os.makedirs(folder, exist_ok=True)
    jpeg = os.path.join(folder, "photo24.jpg")
    heic = os.path.join(folder, "photo12.heic")
    png = os.path.join(folder, "huge.png")
    def photo(w, h, seed):
        # A photo's kind of content: smooth light, edges and fine grain (noise), so the decoder
        # and the encoder work as they do on a camera's file.
        rnd = random.Random(seed)
        base = Image.linear_gradient("L").resize((w, h)).convert("RGB")
        glow = Image.radial_gradient("L").resize((w, h))
        image = Image.merge("RGB", (base.getchannel(0), glow, base.getchannel(0).transpose(Image.FLIP_LEFT_RIGHT)))
        draw = ImageDraw.Draw(image)
        for _ in range(400):
            x, y = rnd.randrange(w), rnd.randrange(h)
            draw.line((x, y, x + rnd.randrange(-w // 4, w // 4), y + rnd.randrange(-h // 4, h // 4)),
                      fill=(rnd.randrange(256), rnd.randrange(256), rnd.randrange(256)), width=rnd.randrange(1, 12))
        grain = Image.effect_noise((w, h), 24).convert("RGB")
        return Image.blend(image, grain, 0.12)
    if not os.path.exists(jpeg):
        photo(6000, 4000, 1).save(jpeg, quality=92)
    if not os.path.exists(heic):
        import pillow_heif
        pillow_heif.register_heif_opener()
        photo(4032, 3024, 2).save(heic, quality=80)
    if not os.path.exists(png):
        Image.MAX_IMAGE_PIXELS = None
        photo(10000, 10000, 3).save(png, compress_level=1)
    return jpeg, heic, png

def run(command, report):
    """Runs `command` under GNU time (whose own child starts small: a child forked from this
    process would count this process's memory in its peak); returns (wall s, cpu s, peak RSS MiB)."""
    start = time.perf_counter()
    process = subprocess.Popen(["/usr/bin/time", "-o", report, "-f", "%U %S %M"] + command,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    errors = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{command[0]} failed: {errors}")
    user, system, peak = open(report).read().split()[-3:]
    return wall, float(user) + float(system), int(peak) / 1024

def jpeg_size(path):
    out = subprocess.run(["djpeg", "-pnm", path], capture_output=True, check=True).stdout
    fields = out[:40].split()
    return int(fields[1]), int(fields[2])

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="the uploadmon binary (a release build)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--dir", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "uploadmon-bench-convert"))
    parser.add_argument("--only", default="", help="jpeg, heic or png: one case")
    args = parser.parse_args()
    # Made in a process of its own: the pictures' memory stays out of this one.
    subprocess.run([sys.executable, __file__, "--generate", args.dir], check=True)
    jpeg, heic, png = (os.path.join(args.dir, n) for n in ("photo24.jpg", "photo12.heic", "huge.png"))
    out = os.path.join(args.dir, "out")
    pillow = ("import sys; from PIL import Image; import pillow_heif; pillow_heif.register_heif_opener(); "
              "Image.MAX_IMAGE_PIXELS = None; im = Image.open(sys.argv[1]); im.draft('RGB', (2048, 2048)); "
              "im = im.convert('RGB'); im.thumbnail((2048, 2048), Image.LANCZOS); im.save(sys.argv[2], quality=85)")
    def tools(source):
        target = os.path.join(out, "{}.jpg")
        stem = os.path.splitext(os.path.basename(source))[0]
        t = {
            "uploadmon": ([args.bin, "convert", source, "-o", out, "--convert", "jpeg", "--max-dimension", "2048", "--quality", "85"],
                          os.path.join(out, stem + ".jpg")),
            "vipsthumbnail": (["vipsthumbnail", source, "-s", "2048", "-o", target.format("vips") + "[Q=85]"], target.format("vips")),
            "Pillow": ([sys.executable, "-c", pillow, source, target.format("pillow")], target.format("pillow")),
        }
        if os.path.exists("/usr/bin/convert"):
            define = ["-define", "jpeg:size=4096x4096"] if source.endswith(".jpg") else []
            t["ImageMagick"] = (["/usr/bin/convert"] + define + [source, "-resize", "2048x2048", "-quality", "85", target.format("magick")],
                                target.format("magick"))
        return t
    cases = [("24 MP JPEG -> 2048 px JPEG q85", jpeg), ("12 MP HEIC -> 2048 px JPEG q85", heic), ("100 MP PNG -> 2048 px JPEG q85", png)]
    if args.only:
        cases = [c for c in cases if c[1].endswith("." + args.only)]
    for title, source in cases:
        table = tools(source)
        results = {name: [] for name in table}
        for _ in range(args.rounds):
            for name, (command, output) in table.items():
                shutil.rmtree(out, ignore_errors=True)
                os.makedirs(out)
                results[name].append(run(command, os.path.join(args.dir, "time.txt")))
                w, h = jpeg_size(output)
                if max(w, h) != 2048:
                    sys.exit(f"{name} wrote {w} x {h}, not 2048 on the longest side")
        print(f"{title} ({args.rounds} rounds, interleaved)")
        medians = {name: statistics.median(r[0] for r in rs) for name, rs in results.items()}
        vips = medians["vipsthumbnail"]
        for name, rs in results.items():
            wall = medians[name]
            cpu = statistics.median(r[1] for r in rs)
            peak = max(r[2] for r in rs)
            print(f"  {name:14} wall {wall * 1000:7.1f} ms ({wall / vips:4.2f}x vipsthumbnail)  cpu {cpu * 1000:7.1f} ms  peak RSS {peak:6.1f} MiB")

if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--generate":
        generate(sys.argv[2])
    else:
        main()
