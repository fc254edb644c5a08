"""The replay's timeline bar: the run's modes as coloured segments, its events as ticks (red
for a safety event), the slider time as a cursor; an SVG string for viser's HTML widget."""
from __future__ import annotations

from html import escape

MODE_COLOURS = {'IDLE': '#9e9e9e', 'HOMING': '#42a5f5', 'SYNCHRONIZING': '#26c6da', 'RUNNING': '#66bb6a',
                'SAFETY_RECOVERY': '#ffa726', 'RETURNING_HOME': '#ab47bc', 'FAULT': '#e53935'}
WIDTH, HEIGHT = 300, 46


def timeline_svg(modes: list[tuple[float, str]], events: list[tuple], duration: float, t: float) -> str:
    """``modes``: (t, mode); ``events``: (t, source, name, message, level); times from 0 to
    ``duration`` s; ``t`` the cursor."""
    span = duration if duration > 0 else 1.0

    def x(v: float) -> float:
        return round(WIDTH * min(max(v / span, 0.0), 1.0), 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="100%" viewBox="0 0 {WIDTH} {HEIGHT}" '
             f'id="hil-timeline">']
    for i, (t0, mode) in enumerate(modes):
        t1 = modes[i + 1][0] if i + 1 < len(modes) else span
        colour = MODE_COLOURS.get(mode, '#607d8b')
        parts.append(f'<rect x="{x(t0)}" y="4" width="{max(x(t1) - x(t0), 0.5)}" height="18" fill="{colour}">'
                     f'<title>{escape(mode)} from {t0:.2f} s</title></rect>')
    for te, source, name, message, level in events:
        colour = '#e53935' if level >= 1 or name in ('safety_takeover', 'fault') else '#37474f'
        parts.append(f'<line x1="{x(te)}" x2="{x(te)}" y1="24" y2="36" stroke="{colour}" stroke-width="2">'
                     f'<title>{te:.2f} s {escape(name)} ({escape(source)}): {escape(message)}</title></line>')
    parts.append(f'<line x1="{x(t)}" x2="{x(t)}" y1="0" y2="{HEIGHT - 8}" stroke="#000" stroke-width="1.5"/>')
    parts.append(f'<text x="0" y="{HEIGHT - 1}" font-size="8">0 s</text>'
                 f'<text x="{WIDTH}" y="{HEIGHT - 1}" font-size="8" text-anchor="end">{span:.1f} s</text>')
    parts.append('</svg>')
    return ''.join(parts)
