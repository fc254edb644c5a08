"""`hil report BAG [--out DIR]`: figures and one HTML page that explain a recorded run.

Reads the bag with rosbags (repairing one left by a killed run), recomputes the ideal motion
with the model the run used (parameters from the run manifest `hil_run.yaml` next to the bag),
runs the seed-000 transparency analysis, and writes DIR/report.html, its PNGs and
DIR/report.json (the numbers, for scripts and tests).
"""
from __future__ import annotations

import json
import pathlib
import sys
from types import SimpleNamespace

from hil_nodes.report import figures
from hil_nodes.report.bagdata import load_run
from hil_nodes.report.page import render


def add_parser(sub) -> None:
    p = sub.add_parser('report', help='write figures and an HTML report of a recorded run')
    p.add_argument('bag', help='bag directory written by hil run --record')
    p.add_argument('--out', help='output directory (default: <bag>/report)')
    p.add_argument('--axis', type=int, default=0, help='DOF analysed: 0..5 = x, y, z, roll, pitch, yaw (default 0, surge)')
    p.set_defaults(func=run)


def admittance_model(manifest: dict):
    """The model the run's admittance node used: node defaults + the run's effective parameters."""
    values = (manifest.get('parameters') or {}).get('admittance')
    if values is None:
        return None
    from hil_nodes.admittance import AdmittanceNode
    merged = {p.name: p.default for p in AdmittanceNode.PARAMS}
    merged.update(values.get('ros__parameters', values))
    return AdmittanceNode._build_model(SimpleNamespace(**merged))


def analyse(run, axis: int):
    """(RunTransparency or None, notes) for a loaded run."""
    from hil_core.admittance.run_analysis import analyse_run
    notes = []
    model = admittance_model(run.manifest)
    force = run.get('/ft_sensor/wrench_raw', '/mock_ft/wrench')
    tcp = run.get('/kinematics/tcp_pose')
    if model is None or force is None or tcp is None:
        notes.append('transparency not computed: the run needs an admittance model, a raw force topic '
                     'and /kinematics/tcp_pose')
        return None, notes
    start = next((t for t, m in run.modes if m == 'RUNNING'), 0.0)
    end = next((t for t, m in run.modes if t > start and m in ('RETURNING_HOME', 'SAFETY_RECOVERY', 'FAULT')),
               float(tcp.t[-1]))
    fsel = (force.t >= start) & (force.t <= end)
    psel = (tcp.t >= start) & (tcp.t <= end)
    try:
        tr = analyse_run(model, force.t[fsel], force.values[fsel], tcp.t[psel], tcp.values[psel], axis=axis)
    except ValueError as exc:
        notes.append(f'transparency not computed: {exc}')
        return None, notes
    notes.append(f'analysis window: RUNNING from {start:.3f} s to {end:.3f} s')
    return tr, notes


def run(args) -> int:
    bag = pathlib.Path(args.bag)
    out = pathlib.Path(args.out) if args.out else bag / 'report'
    try:
        data = load_run(bag)
    except (FileNotFoundError, ValueError) as exc:
        print(f'hil report: {exc}', file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    tr, notes = analyse(data, args.axis)
    if data.repaired:
        notes.insert(0, 'the bag had been left open by a killed run: repaired up to its last checkpoint')
    made = [figures.force(data, out), figures.motion(data, tr, out)]
    if tr is not None:
        made += [figures.frf(tr, out), figures.transparency(tr, out), figures.shifted(tr, out)]
    made += [figures.timebase(data, out), figures.timeline(data, out), figures.joints(data, out)]
    made = [m for m in made if m]
    numbers = tr.numbers() if tr is not None else {}
    summary = dict((data.manifest.get('summary') or {}))
    summary.setdefault('bag', str(bag))
    summary['messages'] = sum(data.counts.values())
    faults = [e for e in data.events if e[2] == 'fault']
    if tr is not None:
        verdict = (f'Transparency on {figures.AXES[tr.axis]}: fitted constant delay {numbers["delay_ms"]:.2f} ms, '
                   f'gain within {numbers.get("gain_dev_db_11hz", float("nan")):.2f} dB up to 11 Hz, '
                   f'{len(faults)} fault event(s).')
    else:
        verdict = f'Run of {summary.get("system", "?")}: {summary.get("outcome", "?")}, {len(faults)} fault event(s).'
    title = f'hil_suite report: {summary.get("system", bag.name)} {summary.get("scenario", "")}'.strip()
    (out / 'report.html').write_text(render(title, verdict, summary, numbers, data.events, made, notes))
    (out / 'report.json').write_text(json.dumps({'numbers': numbers, 'figures': made, 'notes': notes,
                                                 'summary': summary}, indent=2, default=str))
    print(f'report: {out / "report.html"}')
    for key, value in numbers.items():
        print(f'{key}: {value:.6g}' if isinstance(value, float) else f'{key}: {value}')
    return 0
