"""Render a terminal screen (``tmux capture-pane -p -e`` output) to a PNG, for docs screenshots.

Understands the SGR escapes tmux emits: reset, bold, reverse, 16/256/24-bit
foreground and background colours. Everything else is drawn as text.
"""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
FONT_BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
DEFAULT_FG = (220, 220, 220)
DEFAULT_BG = (30, 30, 30)

_BASE16 = [
    (0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16),
    (36, 114, 200), (188, 63, 188), (17, 168, 205), (229, 229, 229),
    (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67),
    (59, 142, 234), (214, 112, 214), (41, 184, 219), (255, 255, 255),
]  # fmt: skip


def _xterm256(n: int) -> tuple[int, int, int]:
    if n < 16:
        return _BASE16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return steps[n // 36], steps[(n // 6) % 6], steps[n % 6]
    level = 8 + (n - 232) * 10
    return level, level, level


_SGR = re.compile(r"\x1b\[([0-9;:]*)m")
_OTHER_ESC = re.compile(r"\x1b\[[0-9;?]*[A-Za-ln-z]")


def _apply_sgr(params: str, state: dict) -> None:
    codes = [int(c) if c else 0 for c in re.split("[;:]", params)] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            state.update(fg=None, bg=None, bold=False, reverse=False)
        elif c == 1:
            state["bold"] = True
        elif c == 22:
            state["bold"] = False
        elif c == 7:
            state["reverse"] = True
        elif c == 27:
            state["reverse"] = False
        elif 30 <= c <= 37:
            state["fg"] = _BASE16[c - 30]
        elif 90 <= c <= 97:
            state["fg"] = _BASE16[c - 90 + 8]
        elif 40 <= c <= 47:
            state["bg"] = _BASE16[c - 40]
        elif 100 <= c <= 107:
            state["bg"] = _BASE16[c - 100 + 8]
        elif c == 39:
            state["fg"] = None
        elif c == 49:
            state["bg"] = None
        elif c in (38, 48) and i + 1 < len(codes):
            key = "fg" if c == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                state[key] = _xterm256(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                state[key] = (codes[i + 2], codes[i + 3], codes[i + 4])
                i += 4
        i += 1


def render(screen: str, out: Path, font_size: int = 15) -> Path:
    """Draw the captured screen into ``out`` (PNG)."""
    font = ImageFont.truetype(FONT, font_size)
    bold = ImageFont.truetype(FONT_BOLD, font_size)
    cw = int(font.getlength("M"))
    ch = int(font_size * 1.35)
    rows: list[list[tuple[str, dict]]] = []
    for line in screen.rstrip("\n").split("\n"):
        state = {"fg": None, "bg": None, "bold": False, "reverse": False}
        cells: list[tuple[str, dict]] = []
        pos = 0
        line = _OTHER_ESC.sub("", line)
        for m in _SGR.finditer(line):
            cells += [(c, dict(state)) for c in line[pos : m.start()]]
            _apply_sgr(m.group(1), state)
            pos = m.end()
        cells += [(c, dict(state)) for c in line[pos:]]
        rows.append(cells)
    width = max((len(r) for r in rows), default=80)
    img = Image.new("RGB", (max(1, width) * cw + 16, len(rows) * ch + 16), DEFAULT_BG)
    draw = ImageDraw.Draw(img)
    for y, row in enumerate(rows):
        for x, (char, st) in enumerate(row):
            fg = st["fg"] or DEFAULT_FG
            bg = st["bg"]
            if st["reverse"]:
                fg, bg = (bg or DEFAULT_BG), fg
            px, py = 8 + x * cw, 8 + y * ch
            if bg is not None:
                draw.rectangle([px, py, px + cw, py + ch], fill=bg)
            if char.strip():
                draw.text((px, py), char, font=bold if st["bold"] else font, fill=fg)
    out.parent.mkdir(parents=True, exist_ok=True)
    img.save(out)
    return out
