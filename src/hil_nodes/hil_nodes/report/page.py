"""One HTML page for a run: summary table, key numbers, the figures with one line each saying
what to look for. No external CSS/JS: the page and its PNGs are all a person needs."""
from __future__ import annotations

import html

CAPTIONS = {
    'force.png': 'What pushed the robot: raw and filtered force/torque from the F/T sensor chain.',
    'motion.png': 'How the robot moved compared with the simulated system it emulates.',
    'frf.png': 'Frequency response force -> motion of the ideal model and of the robot (seed 000 figs 12, 15).',
    'transparency.png': 'Achieved / ideal: a flat 0 dB gain and a straight phase line mean the model is '
                        'reproduced with a constant delay (figs 13, 16, 18-19).',
    'shifted.png': 'The achieved motion shifted back by the fitted delay lies on the ideal one (figs 20-21).',
    'timebase.png': 'Reference buffer: W-R distance (default 2) and the time-base factor that keeps it there.',
    'timeline.png': 'Supervisor modes and the events that changed them (planner take-overs, faults).',
    'joints.png': 'Measured joint positions and velocities.',
}


def _table(rows) -> str:
    cells = ''.join(f'<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>' for k, v in rows)
    return f'<table>{cells}</table>'


def render(title: str, verdict: str, summary: dict, numbers: dict, events: list, figures: list[str],
           notes: list[str]) -> str:
    figs = ''.join(f'<figure><img src="{html.escape(f)}" alt="{html.escape(f)}">'
                   f'<figcaption>{html.escape(CAPTIONS.get(f, f))}</figcaption></figure>' for f in figures)
    ev = ''.join(f'<tr><td>{t:.4f}</td><td>{html.escape(src)}</td><td>{html.escape(name)}</td>'
                 f'<td>{html.escape(msg)}</td></tr>' for t, src, name, msg in events[:200])
    note_html = ''.join(f'<li>{html.escape(n)}</li>' for n in notes)
    fmt = {k: (f'{v:.4g}' if isinstance(v, float) else v) for k, v in numbers.items()}
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; }}
th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: left; font-size: 0.9em; }}
th {{ background: #f3f3f3; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; border: 1px solid #ddd; }}
figcaption {{ color: #555; font-size: 0.9em; }}
.verdict {{ font-size: 1.2em; padding: 0.5em; background: #eef6ee; border-left: 4px solid #4a4; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="verdict">{html.escape(verdict)}</p>
<h2>Run</h2>{_table(summary.items())}
<h2>Key numbers</h2>{_table(fmt.items()) if fmt else '<p>No transparency analysis for this run.</p>'}
<ul>{note_html}</ul>
<h2>Figures</h2>{figs}
<h2>Events</h2><table><tr><th>t (s)</th><th>source</th><th>event</th><th>message</th></tr>{ev}</table>
</body></html>
"""
