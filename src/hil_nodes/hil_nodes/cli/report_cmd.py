"""`hil report BAG [--out DIR]`: figures and one HTML page that explain a recorded run.

Reads the bag with rosbags (repairing one left by a killed run), recomputes the ideal motion
with the model the run used (parameters from the run manifest `hil_run.yaml` next to the bag),
runs the seed-000 transparency analysis end to end and stage by stage, accounts for the
messages, and writes DIR/report.html, its PNGs and DIR/report.json (the numbers, for scripts
and tests). A figure that the data cannot support is "not measurable" with its reason; the
verdict compares the valid figures with the designed ones (docs/report.md).
"""
from __future__ import annotations

import json
import pathlib
import sys

# bags are read with their topics named as at the root (hil_nodes.recorder.bag)
from hil_nodes.topics import ROOT as topics

# The analysis (scipy, matplotlib: about 2 s of imports) is imported by `run`, not here: `hil`
# builds every sub-command's parser, so each `hil run` and `hil plan` would pay for it.


def add_parser(sub) -> None:
    p = sub.add_parser('report', help='write figures and an HTML report of a recorded run')
    p.add_argument('bag', help='bag directory written by hil run --record')
    p.add_argument('--out', help='output directory (default: <bag>/report)')
    p.add_argument('--axis', type=int, default=0, help='DOF analysed: 0..5 = x, y, z, roll, pitch, yaw (default 0, surge)')
    p.set_defaults(func=run)


def _print_number(key, value, reasons: dict) -> str:
    if value is None:
        return f'{key}: not measurable: {reasons.get(key, "see report")}'
    return f'{key}: {value:.6g}' if isinstance(value, float) else f'{key}: {value}'


def run(args) -> int:
    from hil_nodes.report import figures
    from hil_nodes.report.analysis import analyse, stage_rows, to_json
    from hil_nodes.report.bagdata import load_run
    from hil_nodes.report.jtc_check import check_bag
    from hil_nodes.report.page import render
    bag = pathlib.Path(args.bag)
    out = pathlib.Path(args.out) if args.out else bag / 'report'
    try:
        data = load_run(bag)
    except (FileNotFoundError, ValueError) as exc:
        print(f'hil report: {exc}', file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    a = analyse(data, args.axis)
    tr = a.transparency
    notes = list(a.notes)
    if data.repaired:
        notes.insert(0, 'the bag had been left open by a killed run: repaired up to its last checkpoint')
    jtc = check_bag(bag) if data.counts.get(topics.HEXAPOD_JOINT_TRAJECTORY) else None
    if jtc is not None:
        notes.append(f"stock joint_trajectory_controller (config/controllers.yaml): {jtc['refused']} of "
                     f"{jtc['checked']} trajectories would be refused"
                     + (f" ({', '.join(f'{k}: {v}' for k, v in jtc['reasons'].items())}; first at "
                        f"{jtc['first_refusal']})" if jtc['refused'] else ''))
    made = [figures.force(data, out), figures.motion(data, tr, out)]
    if tr is not None:
        made += [figures.frf(tr, out), figures.transparency(tr, out), figures.shifted(tr, out)]
    if a.chain is not None:
        made.append(figures.stages(a.chain, out))
    made += [figures.timebase(data, out), figures.timeline(data, out), figures.joints(data, out)]
    made = [m for m in made if m]
    numbers = tr.numbers() if tr is not None else {}
    summary = dict((data.manifest.get('summary') or {}))
    summary.setdefault('bag', str(bag))
    summary['messages'] = sum(data.counts.values())
    faults = [e for e in data.events if e[2] == 'fault']
    verdict = a.verdict.text + (f' ({len(faults)} fault event(s))' if faults else '')
    title = f'hil_suite report: {summary.get("system", bag.name)} {summary.get("scenario", "")}'.strip()
    page = render(title, verdict, a.verdict.status, summary, numbers, data.events, made, notes,
                  validity=tr.pair if tr is not None else None,
                  stages=stage_rows(a.chain) if a.chain is not None else [],
                  findings=a.chain.findings if a.chain is not None else {}, accounting=a.accounting,
                  design=a.design.as_dict())
    (out / 'report.html').write_text(page)
    body = {'numbers': numbers, 'figures': made, 'notes': notes, 'summary': summary, **to_json(a)}
    if jtc is not None:
        body['jtc_acceptance'] = jtc
    (out / 'report.json').write_text(json.dumps(body, indent=2, default=str))
    print(f'report: {out / "report.html"}')
    print(f'verdict: {verdict}')
    reasons = {}
    if tr is not None:
        for band, figs in tr.pair.bands.items():
            key = f'{band:g}hz'
            for name, fig in (('delay_ms', figs.delay), ('gain_dev_db', figs.gain_dev_db),
                              ('phase_rmse_deg', figs.phase_rmse_deg), ('coherence_min', figs.coherence_min)):
                reasons[f'{name}_{key}'] = fig.reason
        reasons['delay_ms'] = tr.pair.widest.delay.reason if tr.pair.widest else ''
    for key, value in numbers.items():
        print(_print_number(key, value, reasons))
    return 0
