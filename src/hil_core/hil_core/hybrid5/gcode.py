"""A small G-code subset for the hybrid robot's test paths (seed 003: the "AGH" letters).

Accepted words: G0/G1 (rapid / feed line), G2/G3 (CW / CCW arc by centre offsets I, J, K,
optional helical motion along the plane normal), G17/G18/G19 (arc plane XY / ZX / YZ),
G20/G21 (inch / mm), G90/G91 (absolute / incremental), F (feed per minute), X Y Z (mm or
inch), A C (table tilt / rotation in degrees, linear along the move), N (line number,
ignored), M0/M2/M30 (end), M3/M5 (spindle, ignored). Comments: ``( ... )`` and ``;``.
Anything else, a missing feed on a G1-G3, an arc whose end is not on its circle or
whose centre is missing raises ``GcodeError`` naming the line number.

Output: a list of ``Segment`` in SI units (m, rad), in the program's coordinates.
Plane convention (RS274/NGC): G17 (X, Y, normal Z), G18 (Z, X, normal Y), G19 (Y, Z, normal
X); G2 turns clockwise and G3 counter-clockwise seen from the positive normal.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

PLANES = {17: (0, 1, 2), 18: (2, 0, 1), 19: (1, 2, 0)}   # (first, second, normal) axis
AXES = {'X': 0, 'Y': 1, 'Z': 2}
WORD = re.compile(r'([A-Z])\s*([-+]?(?:\d+\.?\d*|\.\d+))')
ARC_TOL = 2e-6          # end point must be on the arc's circle within 2 um


class GcodeError(ValueError):
    def __init__(self, line_no: int, text: str, why: str):
        super().__init__(f'line {line_no}: {why}: {text.strip()!r}')
        self.line_no = line_no


@dataclass(frozen=True)
class Segment:
    """One move. kind 'line' or 'arc'; start/end (3,) m; ang0/ang1 (2,) rad (A, C);
    feed m/s (path speed); for arcs: centre (3,), radius, plane axes, start angle, sweep."""
    kind: str
    start: np.ndarray
    end: np.ndarray
    ang0: np.ndarray
    ang1: np.ndarray
    feed: float
    rapid: bool
    line_no: int
    center: np.ndarray | None = None
    radius: float = 0.0
    axes: tuple = (0, 1, 2)
    theta0: float = 0.0
    sweep: float = 0.0


def _strip(text: str) -> str:
    text = re.sub(r'\([^)]*\)', ' ', text)
    return text.split(';', 1)[0].strip().upper()


def parse(program: str, rapid_feed: float = 5.0) -> list[Segment]:
    """Parse ``program``; ``rapid_feed`` in m/min is the speed of G0 moves."""
    pos, ang = np.zeros(3), np.zeros(2)
    unit, absolute, plane, motion, feed = 1e-3, True, 17, None, None
    segments: list[Segment] = []
    for no, raw in enumerate(program.splitlines(), start=1):
        text = _strip(raw)
        if not text:
            continue
        if '(' in text or ')' in text:
            raise GcodeError(no, raw, 'unbalanced comment')
        words = WORD.findall(text)
        if re.sub(r'\s', '', text) != ''.join(k + v for k, v in words).replace(' ', ''):
            raise GcodeError(no, raw, 'cannot read the line (words are a letter and a number)')
        target, tang, centre_off, has_move, end = pos.copy(), ang.copy(), {}, False, False
        seen = set()
        for letter, value in words:
            num = float(value)
            if not math.isfinite(num):
                raise GcodeError(no, raw, f'{letter} is not finite')
            if letter in seen and letter != 'G':
                raise GcodeError(no, raw, f'word {letter} given twice')
            seen.add(letter)
            if letter == 'G':
                code = int(num) if num == int(num) else None
                if code in (0, 1, 2, 3):
                    motion = code
                elif code in PLANES:
                    plane = code
                elif code in (20, 21):
                    unit = 25.4e-3 if code == 20 else 1e-3
                elif code in (90, 91):
                    absolute = code == 90
                else:
                    raise GcodeError(no, raw, f'unsupported G{value}')
            elif letter in AXES:
                has_move = True
                k = AXES[letter]
                target[k] = num * unit if absolute else target[k] + num * unit
            elif letter in 'AC':
                has_move = True
                k = 0 if letter == 'A' else 1
                tang[k] = math.radians(num) if absolute else tang[k] + math.radians(num)
            elif letter in 'IJK':
                centre_off['IJK'.index(letter)] = num * unit
            elif letter == 'F':
                if num <= 0:
                    raise GcodeError(no, raw, 'feed must be > 0')
                feed = num * unit / 60.0
            elif letter == 'M':
                if num in (0, 2, 30):
                    end = True
                elif num not in (3, 5):
                    raise GcodeError(no, raw, f'unsupported M{value}')
            elif letter == 'N':
                pass
            elif letter == 'R':
                raise GcodeError(no, raw, 'R-format arcs are not supported, use I/J/K')
            else:
                raise GcodeError(no, raw, f'unsupported word {letter}')
        if has_move or centre_off:
            if motion is None:
                raise GcodeError(no, raw, 'move without a motion mode (G0-G3)')
            if motion != 0 and feed is None:
                raise GcodeError(no, raw, 'feed move before any F word')
            speed = rapid_feed / 60.0 if motion == 0 else feed
            if motion in (0, 1):
                if centre_off:
                    raise GcodeError(no, raw, 'I/J/K only on G2/G3')
                if np.allclose(target, pos, atol=1e-12) and np.allclose(tang, ang, atol=1e-12):
                    continue
                segments.append(Segment('line', pos.copy(), target.copy(), ang.copy(), tang.copy(),
                                        speed, motion == 0, no))
            else:
                segments.append(_arc(no, raw, pos, target, ang, tang, centre_off, plane, motion, speed))
            pos, ang = target, tang
        if end:
            break
    return segments


def _arc(no, raw, pos, target, ang, tang, off, plane, motion, speed) -> Segment:
    a, b, n = PLANES[plane]
    if any(k == n for k in off) or not off:
        raise GcodeError(no, raw, f'arc in G{plane} needs centre offsets in its plane '
                         f'({"IJK"[a]}{"IJK"[b]})')
    centre = pos.copy()
    centre[a] += off.get(a, 0.0)
    centre[b] += off.get(b, 0.0)
    r0 = math.hypot(pos[a] - centre[a], pos[b] - centre[b])
    r1 = math.hypot(target[a] - centre[a], target[b] - centre[b])
    if r0 < 1e-9:
        raise GcodeError(no, raw, 'arc radius is zero')
    if abs(r1 - r0) > ARC_TOL:
        raise GcodeError(no, raw, f'end point is not on the arc (radius {r0 * 1e3:.4f} vs {r1 * 1e3:.4f} mm)')
    th0 = math.atan2(pos[b] - centre[b], pos[a] - centre[a])
    th1 = math.atan2(target[b] - centre[b], target[a] - centre[a])
    sweep = th1 - th0
    if motion == 3:                           # CCW: positive sweep in (0, 2 pi]
        sweep = sweep % (2 * math.pi) or 2 * math.pi
    else:                                     # CW: negative sweep in [-2 pi, 0)
        sweep = -((-sweep) % (2 * math.pi) or 2 * math.pi)
    return Segment('arc', pos.copy(), target.copy(), ang.copy(), tang.copy(), speed, False, no,
                   center=centre, radius=r0, axes=(a, b, n), theta0=th0, sweep=sweep)


def parse_file(path, rapid_feed: float = 5.0) -> list[Segment]:
    with open(path) as f:
        return parse(f.read(), rapid_feed)


def parse_jog(text: str, rapid_feed: float = 5.0) -> tuple[np.ndarray, np.ndarray, float]:
    """An operator's jog, one straight move written as a G-code line relative to where the
    robot holds (mm and deg unless G20; G1 unless G0 is given, so a feed is needed): e.g.
    ``X2 Y-1 F600``, ``G0 Z-5``, ``A5 C-10 F300``. Returns (displacement (3,) m, table angles
    (2,) rad, feed m/s), by the program parser; ValueError saying why otherwise."""
    if '\n' in text.strip() or not text.strip():
        raise ValueError('a jog is one G-code line, e.g. X2 Y-1 F600')
    try:
        segs = parse('G21 G91 G1\n' + text, rapid_feed)      # the operator's text is line 2
    except GcodeError as exc:
        raise ValueError(f'jog: {str(exc).split(": ", 1)[1]}') from None
    if len(segs) != 1 or segs[0].kind != 'line':
        raise ValueError(f'jog {text.strip()!r}: one straight move (G0/G1) that moves, got '
                         f'{len(segs)} move(s){" with an arc" if any(s.kind != "line" for s in segs) else ""}')
    seg = segs[0]
    return seg.end - seg.start, seg.ang1 - seg.ang0, seg.feed
