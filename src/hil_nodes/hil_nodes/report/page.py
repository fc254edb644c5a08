"""One HTML page for a run: verdict, the figures with their validity, the stage table, the message
accounting, the figures with one line each saying what to look for. No external CSS/JS: the page
and its PNGs are all a person needs."""
from __future__ import annotations

import html

CAPTIONS = {
    'force.png': 'What pushed the robot: raw and filtered force/torque from the F/T sensor chain.',
    'motion.png': 'How the robot moved compared with the simulated system it emulates.',
    'frf.png': 'Frequency response force -> motion of the ideal model and of the robot (seed 000 figs 12, 15).',
    'transparency.png': 'Achieved / ideal: a flat 0 dB gain and a straight phase line mean the model is '
                        'reproduced with a constant delay (figs 13, 16, 18-19). Coherence is a measurement only '
                        'with two or more segments.',
    'shifted.png': 'The achieved motion shifted back by the fitted delay lies on the ideal one (figs 20-21).',
    'stages.png': 'Where the delay is added and the gain lost: every stage of the chain on one DOF, and per '
                  'stage the measured delay and gain against the designed ones.',
    'timebase.png': 'Reference buffer: W-R distance (designed {wr_distance}: the default distance, less the frames '
                    'the reader clock runs ahead in real time) and the time-base factor that keeps it there.',
    'timeline.png': 'Supervisor modes and the events that changed them (planner take-overs, faults).',
    'joints.png': 'Measured joint positions and velocities.',
}
STATUS_COLOURS = {'transparent': ('#eef6ee', '#4a4'), 'NOT transparent': ('#fbeaea', '#c33'),
                  'not measurable': ('#fdf6e3', '#c90')}


def _caption(figure: str, design: dict) -> str:
    """A figure's caption, with the run's designed values where it names them."""
    return CAPTIONS.get(figure, figure).format(wr_distance=design.get('wr_distance', '?'))


def _e(v) -> str:
    return html.escape(str(v))


def _table(rows) -> str:
    cells = ''.join(f'<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>' for k, v in rows)
    return f'<table>{cells}</table>'


def _grid(header: list[str], rows: list[list], classes: list[str] | None = None) -> str:
    head = ''.join(f'<th>{_e(h)}</th>' for h in header)
    classes = classes or [''] * len(rows)
    body = ''.join(f'<tr class="{classes[i]}">' + ''.join(f'<td>{_e(c)}</td>' for c in r) + '</tr>'
                   for i, r in enumerate(rows))
    return f'<table><tr>{head}</tr>{body}</table>'


def _fmt(v, fmt='.4g') -> str:
    if v is None:
        return '-'
    return f'{v:{fmt}}' if isinstance(v, float) else str(v)


def _validity_section(pair, design: dict) -> str:
    if pair is None:
        return '<p>No end-to-end figure: see the notes.</p>'
    rows = []
    for band, f in sorted(pair.bands.items()):
        rows.append([f'0-{band:g} Hz', f.delay.text('.3g') if not f.delay.valid else f'{f.delay.value * 1e3:.3f} ms',
                     f.gain_dev_db.text('.3f'), f.gain_db.text('+.3f'), f.phase_rmse_deg.text('.3f'),
                     f.coherence_min.text('.3f'), 'valid' if f.validity.ok else f.validity.reason()])
    evidence = (f'segments {pair.n_segments}, correlation peak {_fmt(pair.correlation_peak, ".4f")}, '
                f'residual after shifting {_fmt(pair.relative_residual, ".4f")} of the signal')
    designed = (f'designed: constant delay {design["total_delay_ms"]:.2f} ms '
                f'(F/T filter {design["filter_delay_ms"]:.2f} '
                f'+ time-base buffer {design["buffer_delay_ms"]:.2f}), unity gain')
    return (_grid(['band', 'constant delay', 'gain deviation', 'mean gain', 'phase RMSE', 'coherence min', 'validity'],
                  rows) + f'<p>{_e(evidence)}<br>{_e(designed)}</p>')


def _stage_section(stages: list[dict], findings: dict) -> str:
    if not stages:
        return '<p>No stage analysis for this run.</p>'
    rows, classes = [], []
    for r in stages:
        holds = {True: 'yes', False: 'NO', None: '?'}[r['holds']]
        rows.append([r['kind'], f'{r["from"]} -> {r["to"]}', r['what'], f'{r["designed_delay_ms"]:.3f} ms',
                     r['delay'], r['gain'], r['amplitude'], r['segments'], holds, r['why']])
        classes.append({'NO': 'bad', '?': 'unknown'}.get(holds, ''))
    lines = [f'{k.replace("_", " ")}: {v}' for k, v in findings.items()
             if k in ('first_incomplete', 'first_not_following', 'attenuating', 'first_failing')]
    if findings.get('delay_sum_ms') is not None and findings.get('end_to_end_delay_ms') is not None:
        lines.append(f'stage delays add up to {findings["delay_sum_ms"]:.3f} ms, end to end '
                     f'{findings["end_to_end_delay_ms"]:.3f} ms')
    return (_grid(['', 'from -> to', 'designed contribution', 'designed delay', 'delay (0-11 Hz)',
                   'mean gain (0-7 Hz)', 'amplitude ratio', 'segments', 'holds', 'why'], rows, classes)
            + ''.join(f'<p>{_e(x)}</p>' for x in lines))


def _accounting_section(rows: list[dict]) -> str:
    if not rows:
        return '<p>No accounting.</p>'
    out, classes = [], []
    for r in rows:
        gap = r.get('largest_gap_s')
        out.append([r.get('topic'), _fmt(r.get('rate_hz'), '.6g'), _fmt(r.get('expected')), _fmt(r.get('published')),
                    _fmt(r.get('recorded')), '-' if gap is None else f'{gap * 1e3:.1f} ms',
                    ', '.join(r.get('flags') or []) or 'ok'])
        classes.append('bad' if r.get('flags') else '')
    return _grid(['topic', 'rate (Hz)', 'expected', 'published', 'recorded', 'largest gap', 'flags'], out, classes)


def render(title: str, verdict: str, status: str, summary: dict, numbers: dict, events: list, figures: list[str],
           notes: list[str], validity=None, stages: list[dict] | None = None, findings: dict | None = None,
           accounting: list[dict] | None = None, design: dict | None = None) -> str:
    figs = ''.join(f'<figure><img src="{_e(f)}" alt="{_e(f)}">'
                   f'<figcaption>{_e(_caption(f, design or {}))}</figcaption></figure>' for f in figures)
    ev = ''.join(f'<tr><td>{t:.4f}</td><td>{_e(src)}</td><td>{_e(name)}</td>'
                 f'<td>{_e(msg)}</td></tr>' for t, src, name, msg in events[:200])
    note_html = ''.join(f'<li>{_e(n)}</li>' for n in notes)
    fmt = {k: ('not measurable' if v is None else f'{v:.4g}' if isinstance(v, float) else v)
           for k, v in numbers.items()}
    bg, border = STATUS_COLOURS.get(status, ('#eeeeee', '#888'))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; }}
th, td {{ border: 1px solid #ccc; padding: 3px 8px; text-align: left; font-size: 0.9em; }}
th {{ background: #f3f3f3; }}
tr.bad td {{ background: #fbeaea; }} tr.unknown td {{ background: #fdf6e3; }}
figure {{ margin: 1.5em 0; }} img {{ max-width: 100%; border: 1px solid #ddd; }}
figcaption {{ color: #555; font-size: 0.9em; }}
.verdict {{ font-size: 1.2em; padding: 0.5em; background: {bg}; border-left: 4px solid {border}; }}
</style></head><body>
<h1>{_e(title)}</h1>
<p class="verdict">{_e(verdict)}</p>
<h2>Run</h2>{_table(summary.items())}
<h2>End-to-end figures and their validity</h2>{_validity_section(validity, design or {})}
<h2>Stage by stage</h2>{_stage_section(stages or [], findings or {})}
<h2>Message accounting</h2>{_accounting_section(accounting or [])}
<h2>Key numbers</h2>{_table(fmt.items()) if fmt else '<p>No transparency analysis for this run.</p>'}
<ul>{note_html}</ul>
<h2>Figures</h2>{figs}
<h2>Events</h2><table><tr><th>t (s)</th><th>source</th><th>event</th><th>message</th></tr>{ev}</table>
</body></html>
"""
