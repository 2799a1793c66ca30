"""A model of what a terminal shows, cell by cell, with the pictures drawn in real pixels: fed
the bytes a program writes, it keeps each cell's character and whether a picture's pixels cover
it, as xterm (sixel) and kitty (kitty graphics) treat them:

- sixel pixels live in the cells as xterm keeps them (what its window shows after it repaints
  itself, checked under Xvfb): a character written into a cell (a space too), an erase of the
  display (ED) or a line moved out of the screen removes them, but erasing a line or characters
  (EL, ECH) only hides them until the next repaint; line insertion and deletion move them with
  their lines; and a scroll up (a line feed at the bottom of the scroll region, IND, SU) moves
  every picture on the screen up, inside the region or not;
- a kitty image lies over the cells until it is deleted: text written under it is hidden, and
  scrolling moves it with its lines.

`problems()` says what is wrong with the screen as it stands: pixels of a picture that is not the
last one drawn (a leftover), the last picture with cells missing (a hole), a kitty image other
than the last, text hidden under one, or a kitty picture whose data (base64, zlib-compressed
where it says `o=z`) does not come to its width x height x 3 bytes.
"""
import base64
import re
import unicodedata
import zlib


class Screen:
    def __init__(self, columns, rows, cell_width, cell_height):
        self.cell_width, self.cell_height = cell_width, cell_height
        self.columns, self.rows = columns, rows
        self.text = [[" "] * columns for _ in range(rows)]
        self.pixels = [[None] * columns for _ in range(rows)]
        self.y = self.x = 0
        self.top, self.bottom = 0, rows - 1
        self.wrap_pending = False
        self.pictures = 0           # pictures drawn so far; the last one's number
        self.last = None            # (number, y, x, rows, columns) of the last picture drawn
        self.sizes = []             # each picture's (width, height) in pixels
        self.images = []            # kitty: [number, y, x, rows, columns]
        self.hidden = []            # kitty: (number, y, x, character) text written under an image
        self.transfer = None        # kitty: (bytes expected, compression, payloads) while chunks follow
        self.broken = []            # kitty: pictures whose data did not decode to their size
        self.compressed = 0         # kitty: pictures sent compressed
        self.pending = b""
        self.saved = (0, 0)

    # Geometry

    def resize(self, columns, rows):
        self.text = [(line + [" "] * columns)[:columns] for line in (self.text + [[" "] * columns] * rows)[:rows]]
        self.pixels = [(line + [None] * columns)[:columns] for line in (self.pixels + [[None] * columns] * rows)[:rows]]
        self.columns, self.rows = columns, rows
        self.top, self.bottom = 0, rows - 1
        self.y, self.x = min(self.y, rows - 1), min(self.x, columns - 1)

    def scroll_up(self, n):
        """A scroll up of the region by n: its text moves; sixel pixels move everywhere (xterm)."""
        self.move_lines(self.top, self.bottom, n, pixels=False)
        self.move_lines(0, self.rows - 1, n, text=False)

    def move_lines(self, top, bottom, n, text=True, pixels=True):
        """Lines top...bottom move up by n (down when n < 0); lines coming in are blank."""
        if n == 0 or top > bottom:
            return
        grids = ([(self.text, " ")] if text else []) + ([(self.pixels, None)] if pixels else [])
        for grid, blank in grids:
            block = grid[top:bottom + 1]
            size = len(block)
            if n > 0:
                block = block[min(n, size):] + [[blank] * self.columns for _ in range(min(n, size))]
            else:
                m = min(-n, size)
                block = [[blank] * self.columns for _ in range(m)] + block[:size - m]
            grid[top:bottom + 1] = [list(line) for line in block]
        if not text:
            return
        kept = []
        for image in self.images:
            if top <= image[1] <= bottom:
                image[1] -= n
                if image[1] < top or image[1] > bottom:
                    continue
            kept.append(image)
        self.images = kept

    def erase(self, y, x0, x1, pixels=True):
        for x in range(max(0, x0), min(self.columns, x1)):
            self.text[y][x] = " "
            if pixels:
                self.pixels[y][x] = None

    # Bytes

    def feed(self, data):
        data = self.pending + data
        self.pending = b""
        i, n = 0, len(data)
        while i < n:
            b = data[i]
            if b == 0x1B:
                end = self.escape(data, i)
                if end is None:
                    self.pending = data[i:]
                    return
                i = end
            elif b < 0x20 or b == 0x7F:
                self.control(b)
                i += 1
            else:
                length = 1 if b < 0x80 else 2 if b < 0xE0 else 3 if b < 0xF0 else 4
                if i + length > n:
                    self.pending = data[i:]
                    return
                self.put(data[i:i + length].decode("utf-8", "replace"))
                i += length

    def control(self, b):
        if b == 0x0D:
            self.x, self.wrap_pending = 0, False
        elif b == 0x0A:
            self.line_feed()
        elif b == 0x08:
            self.x, self.wrap_pending = max(0, self.x - 1), False
        elif b == 0x09:
            self.x = min(self.columns - 1, (self.x // 8 + 1) * 8)

    def line_feed(self):
        self.wrap_pending = False
        if self.y == self.bottom:
            self.scroll_up(1)
        elif self.y < self.rows - 1:
            self.y += 1

    def put(self, character):
        width = 2 if unicodedata.east_asian_width(character[0]) in ("W", "F") else 1
        if unicodedata.combining(character[0]) or character == "\u200d" or "\ufe00" <= character <= "\ufe0f":
            return
        if self.wrap_pending:
            self.x = 0
            self.line_feed()
        for k in range(width):
            x = self.x + k
            if x < self.columns:
                self.write_cell(self.y, x, character if k == 0 else "")
        if self.x + width >= self.columns:
            self.x, self.wrap_pending = self.columns - 1, True
        else:
            self.x += width

    def write_cell(self, y, x, character):
        self.text[y][x] = character
        self.pixels[y][x] = None
        if character.strip():
            for number, iy, ix, rows, columns in self.images:
                if iy <= y < iy + rows and ix <= x < ix + columns:
                    self.hidden.append((number, y, x, character))

    def escape(self, data, i):
        """Handles the escape at data[i]; returns where the next byte is, or None if incomplete."""
        if i + 1 >= len(data):
            return None
        kind = data[i + 1]
        if kind == ord("["):
            m = re.compile(rb"\[([?>=!]?)([0-9;:]*)([ -/]*)([@-~])").match(data, i + 1)
            if not m:
                return None if len(data) - i < 64 else i + 2
            self.csi(m.group(1), [int(p) if p.isdigit() else None for p in m.group(2).replace(b":", b";").split(b";")] if m.group(2) else [],
                     m.group(4).decode())
            return m.end()
        if kind in (ord("P"), ord("_"), ord("]")):
            terminator = data.find(b"\x1b\\", i + 2)
            bell = data.find(b"\x07", i + 2) if kind == ord("]") else -1
            if bell >= 0 and (terminator < 0 or bell < terminator):
                return bell + 1
            if terminator < 0:
                return None
            body = data[i + 2:terminator]
            if kind == ord("P"):
                self.sixel(body)
            elif kind == ord("_"):
                self.kitty(body)
            return terminator + 2
        if kind in (ord("("), ord(")"), ord("*"), ord("+"), ord("#"), ord("%")):
            return i + 3 if i + 2 < len(data) else None
        if kind == ord("M"):
            if self.y == self.top:
                self.move_lines(self.top, self.bottom, -1)
            elif self.y > 0:
                self.y -= 1
        elif kind == ord("D"):
            self.line_feed()
        elif kind == ord("E"):
            self.x = 0
            self.line_feed()
        elif kind == ord("7"):
            self.saved = (self.y, self.x)
        elif kind == ord("8"):
            self.y, self.x = self.saved
        elif kind == ord("c"):
            self.__init__(self.columns, self.rows, self.cell_width, self.cell_height)
        return i + 2

    def csi(self, private, params, final):
        def p(k, default=1):
            return params[k] if k < len(params) and params[k] is not None and params[k] != 0 else default
        if private in ("?", ">", "=") and final not in ("J", "K"):
            if private == "?" and final in ("h", "l") and 1049 in params:
                self.text = [[" "] * self.columns for _ in range(self.rows)]
                self.pixels = [[None] * self.columns for _ in range(self.rows)]
            return
        self.wrap_pending = False
        if final in ("H", "f"):
            self.y, self.x = min(self.rows, p(0)) - 1, min(self.columns, p(1)) - 1
        elif final == "d":
            self.y = min(self.rows, p(0)) - 1
        elif final in ("G", "`"):
            self.x = min(self.columns, p(0)) - 1
        elif final == "A":
            self.y = max(0, self.y - p(0))
        elif final == "B":
            self.y = min(self.rows - 1, self.y + p(0))
        elif final == "C":
            self.x = min(self.columns - 1, self.x + p(0))
        elif final == "D":
            self.x = max(0, self.x - p(0))
        elif final == "K":
            mode = p(0, 0)
            self.erase(self.y, self.x if mode == 0 else 0, self.x + 1 if mode == 1 else self.columns, pixels=False)
        elif final == "J":
            mode = p(0, 0)
            rows = range(self.y + 1, self.rows) if mode == 0 else range(0, self.y) if mode == 1 else range(self.rows)
            if mode in (0, 1):
                self.erase(self.y, self.x if mode == 0 else 0, self.x + 1 if mode == 1 else self.columns)
            for y in rows:
                self.erase(y, 0, self.columns)
        elif final == "X":
            self.erase(self.y, self.x, self.x + p(0), pixels=False)
        elif final in ("M", "L"):
            if self.top <= self.y <= self.bottom:
                self.move_lines(self.y, self.bottom, p(0) if final == "M" else -p(0))
        elif final == "S":
            self.scroll_up(p(0))
        elif final == "T":
            self.move_lines(self.top, self.bottom, -p(0))
        elif final == "r":
            self.top, self.bottom = p(0) - 1, min(self.rows, p(1, self.rows)) - 1
            self.y = self.x = 0
        elif final in ("P", "@"):
            # Characters shifted within the line: the cells from the cursor on are rewritten.
            shift = p(0)
            line, pixels = self.text[self.y], self.pixels[self.y]
            if final == "P":
                line[self.x:] = line[self.x + shift:] + [" "] * min(shift, self.columns - self.x)
            else:
                line[self.x:] = ([" "] * shift + line[self.x:])[:self.columns - self.x]
            for x in range(self.x, self.columns):
                pixels[x] = None

    # Pictures

    def covered(self, width, height):
        return -(-height // self.cell_height), -(-width // self.cell_width)

    def sixel(self, body):
        m = re.match(rb"[0-9;]*q\"(\d+);(\d+);(\d+);(\d+)", body)
        if not m:
            return
        rows, columns = self.covered(int(m.group(3)), int(m.group(4)))
        self.sizes.append((int(m.group(3)), int(m.group(4))))
        self.pictures += 1
        number = self.pictures
        for y in range(self.y, min(self.rows, self.y + rows)):
            for x in range(self.x, min(self.columns, self.x + columns)):
                self.pixels[y][x] = number
        self.last = (number, self.y, self.x, rows, columns)

    def kitty(self, body):
        if not body.startswith(b"G"):
            return
        head, _, payload = body[1:].partition(b";")
        control = dict(kv.split(b"=", 1) for kv in head.split(b",") if b"=" in kv)
        if self.transfer is not None:
            # A later chunk of the picture being sent: its payload, until one says no more follow.
            self.transfer[2].append(payload)
            if control.get(b"m", b"0") == b"0":
                self.received(*self.transfer)
                self.transfer = None
            return
        action = control.get(b"a", b"t")
        if action in (b"t", b"T") and control.get(b"f") == b"24":
            expected = (int(control.get(b"s", 0)) * int(control.get(b"v", 0)) * 3, control.get(b"o"), [payload])
            if control.get(b"m", b"0") == b"1":
                self.transfer = expected
            else:
                self.received(*expected)
        if action == b"d":
            if control.get(b"d", b"a") in (b"a", b"A"):
                self.images = []
        elif action == b"T" and b"s" in control and b"v" in control:
            # Stretched over c x r cells when it says so, else 1:1.
            rows, columns = self.covered(int(control[b"s"]), int(control[b"v"]))
            rows, columns = int(control.get(b"r", rows)), int(control.get(b"c", columns))
            self.sizes.append((int(control[b"s"]), int(control[b"v"])))
            self.pictures += 1
            self.images.append([self.pictures, self.y, self.x, rows, columns])
            self.last = (self.pictures, self.y, self.x, rows, columns)

    def received(self, expected, compression, payloads):
        """A whole picture's data: it must decode (base64, then zlib where `o=z`) to its size."""
        try:
            data = base64.b64decode(b"".join(payloads), validate=True)
            if compression == b"z":
                data = zlib.decompress(data)
            elif compression is not None:
                raise ValueError(f"unknown compression {compression!r}")
            if len(data) != expected:
                raise ValueError(f"{len(data)} bytes of RGB, {expected} expected")
        except (ValueError, zlib.error) as error:
            self.broken.append(f"picture {self.pictures + 1}: {error}")
        self.compressed += compression == b"z"

    # Verdict

    def problems(self):
        found = []
        last = self.last[0] if self.last else None
        stray = sorted({(y, x, n) for y in range(self.rows) for x in range(self.columns)
                        for n in [self.pixels[y][x]] if n is not None and n != last})
        if stray:
            rows = sorted({y for y, _, _ in stray})
            found.append(f"{len(stray)} cells still show earlier pictures {sorted({n for _, _, n in stray})} on rows {rows[0]}-{rows[-1]}")
        if self.last and any(self.pixels[y][x] == last for y in range(self.rows) for x in range(self.columns)):
            number, top, left, rows, columns = self.last
            holes = [(y, x) for y in range(top, min(self.rows, top + rows)) for x in range(left, min(self.columns, left + columns))
                     if self.pixels[y][x] != number]
            if holes:
                found.append(f"the last picture ({columns}x{rows} cells at {left},{top}) lost {len(holes)} cells, first at {holes[0]}")
        if len(self.images) > 1 or (self.images and self.images[0][0] != last):
            found.append(f"kitty images on screen: {[image[0] for image in self.images]}, last drawn {last}")
        live = {image[0] for image in self.images}
        hidden = [h for h in self.hidden if h[0] in live]
        if hidden:
            found.append(f"{len(hidden)} characters written under a kitty image, first {hidden[0]}")
        found += self.broken
        return found

    def clear_hidden(self):
        self.hidden = []
