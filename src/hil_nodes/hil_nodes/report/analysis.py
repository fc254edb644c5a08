"""What `hil report` measures on a loaded run: end-to-end transparency with validity, the stage
table, the message accounting and the verdict (the numbers behind the page and report.json).

All the computing is in ``hil_core`` (``transparency`` with its ``run_analysis``, and
``accounting``); this module picks the series out of the bag, the analysis window (RUNNING up to
the first RETURNING_HOME / SAFETY_RECOVERY / FAULT) and the designed figures from the run's
parameters (``hil_run.yaml``, read by ``hil_nodes.report.designed``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hil_core import accounting
from hil_core.transparency.run_analysis import NotMeasurable, RunTransparency, analyse_run
from hil_core.transparency.design import LABELS, ChainDesign
from hil_core.transparency.stages import ChainResult, analyse_chain
from hil_core.transparency.validity import VERDICT_BAND_HZ
from hil_core.transparency.verdict import Verdict, decide
# bags are read with their topics named as at the root (hil_nodes.recorder.bag)
from hil_nodes.topics import ROOT as topics
from hil_nodes.report import designed
from hil_nodes.report.chain import STAGE_TOPICS, stage_inputs
from hil_nodes.report.rates import expected_rates

END_MODES = ('RETURNING_HOME', 'SAFETY_RECOVERY', 'FAULT')


@dataclass
class Analysis:
    window: tuple[float, float] | None
    design: ChainDesign
    transparency: RunTransparency | None
    not_measurable: str
    chain: ChainResult | None
    accounting: list[dict]
    verdict: Verdict
    notes: list[str] = field(default_factory=list)


def admittance_model(manifest: dict):
    """The model the run's admittance node used: node defaults + the run's effective parameters."""
    return designed.admittance_model(manifest.get('parameters'))


def window(run, last_t: float) -> tuple[float, float] | None:
    """RUNNING up to the first end mode; None when the run never reached RUNNING (a FAULT in
    HOMING, say): there is no window to analyse (and on a wall-clock bag a default start of 0 would
    make a grid from 1970 on)."""
    start = next((t for t, m in run.modes if m == 'RUNNING'), None)
    if start is None:
        return None
    end = next((t for t, m in run.modes if t > start and m in END_MODES), last_t)
    return start, end


def run_accounting(run) -> list[dict]:
    """Per-topic accounting of the whole run: the run's own table (``hil_run.yaml``,
    written by `hil run`) if present, else built from the recorder's ``accounting.yaml`` or,
    for older bags, from the bag itself (recorded counts, largest gaps in the bag's clock)."""
    given = run.manifest.get('accounting')
    if isinstance(given, list) and given:
        return given
    rates = expected_rates(run.manifest.get('parameters'))
    rec = (run.accounting or {}).get('topics') or {}
    counts = {}
    for topic, times in run.record_times.items():
        r = rec.get(topic) or {}
        counts[topic] = accounting.TopicCount(
            received=int(r.get('received', times.size)), written=int(r.get('written', times.size)),
            largest_gap_s=r.get('largest_gap_s', accounting.largest_gap(times)), latched=bool(r.get('latched', False)))
    summary = run.manifest.get('summary') or {}
    try:
        duration = float(summary.get('sim_time_s'))
    except (TypeError, ValueError):
        spans = [(t[0], t[-1]) for k, t in run.record_times.items() if k in rates and t.size]
        duration = max(b for _, b in spans) - min(a for a, _ in spans) if spans else 0.0
    return [r.as_dict() for r in accounting.account(counts, duration, rates)]


def _row(d: dict) -> accounting.AccountRow:
    fields = accounting.AccountRow.__dataclass_fields__
    values = {k: d.get(k) for k in fields}
    values['flags'] = tuple(d.get('flags') or ())
    for k in ('skipped', 'lost', 'missing'):
        values[k] = int(values[k] or 0)
    values['recorded'] = int(values['recorded'] or 0)
    return accounting.AccountRow(**values)


def _end_to_end(run, model, start, end, axis, rates):
    force = run.get(*STAGE_TOPICS['raw_force'])
    tcp = run.get(topics.KINEMATICS_TCP_POSE)
    missing = [what for what, x in (('admittance parameters in hil_run.yaml', model),
                                    (f'{STAGE_TOPICS["raw_force"][0]} (or {STAGE_TOPICS["raw_force"][1]})', force),
                                    (topics.KINEMATICS_TCP_POSE, tcp)) if x is None]
    if missing:
        return None, 'the run has no ' + ', no '.join(missing)
    force_topic = next(t for t in STAGE_TOPICS['raw_force'] if run.get(t) is force)
    fsel = (force.t >= start) & (force.t <= end)
    psel = (tcp.t >= start) & (tcp.t <= end)
    periods = {k: (1.0 / rates[k] if k in rates else None) for k in (force_topic, topics.KINEMATICS_TCP_POSE)}
    try:
        return analyse_run(model, force.t[fsel], force.values[fsel], tcp.t[psel], tcp.values[psel], axis=axis,
                           force_period=periods[force_topic],
                           pose_period=periods[topics.KINEMATICS_TCP_POSE]), ''
    except NotMeasurable as exc:
        return None, str(exc)
    except ValueError as exc:
        return None, str(exc)


def analyse(run, axis: int = 0) -> Analysis:
    params = run.manifest.get('parameters') or {}
    design, notes = designed.chain_design(params)
    rates = expected_rates(params)
    model = admittance_model(run.manifest)
    acc = run_accounting(run)
    tcp = run.get(topics.KINEMATICS_TCP_POSE)
    last = max([float(s.t[-1]) for s in run.series.values() if len(s)] + [0.0])
    span = window(run, float(tcp.t[-1]) if tcp is not None else last)
    if span is None:
        reason = 'the run never reached RUNNING: no analysis window'
        notes.append(f'transparency not measurable: {reason}')
        verdict = decide(None, design, reason, _incomplete(None, acc), None)
        return Analysis((0.0, 0.0), design, None, reason, None, acc, verdict, notes)
    start, end = span
    tr, reason = _end_to_end(run, model, start, end, axis, rates)
    if reason:
        notes.append(f'transparency not measurable: {reason}')
    else:
        notes.append(f'analysis window: RUNNING from {start:.3f} s to {end:.3f} s')
    chain = None
    if model is not None:
        inputs, missing = stage_inputs(run, start, end)
        notes += missing
        if inputs and inputs[0].kind == 'force':
            try:
                chain = analyse_chain(model, inputs, design, start, end, axis=axis)
            except ValueError as exc:
                notes.append(f'stages not measured: {exc}')
    verdict = decide(tr.pair if tr is not None else None, design, reason, _incomplete(chain, acc),
                     chain.findings if chain is not None else None)
    return Analysis((start, end), design, tr, reason, chain, acc, verdict, notes)


def _incomplete(chain: ChainResult | None, acc: list[dict]) -> list[str]:
    """One text per chain stream that misses samples: in the analysis window (gaps, count),
    and anywhere in the run (its accounting flags: a stream that skipped, lost or missed
    messages makes the run not a clean one, whatever the window shows)."""
    chain_topics = [t for names in STAGE_TOPICS.values() for t in names]
    window = {}
    if chain is not None:
        for s in chain.stages:
            if not s.complete:
                c = s.completeness()
                window[s.topic] = (f'{LABELS[s.key]} {s.topic}: {c["count"]} of {c["expected"]} samples in the '
                                   f'window, {c["gaps"]} gap(s) up to {c["largest_gap_ms"]:.1f} ms')
    run = {}
    for line, r in zip(accounting.summary_lines([_row(r) for r in acc]), acc):
        if r.get('topic') in chain_topics and r.get('flags'):
            run[r['topic']] = line
    out = []
    for topic in chain_topics:
        if topic in window and topic in run:
            out.append(f'{window[topic]}; run accounting: {run[topic].split(": ", 1)[1]}')
        elif topic in window:
            out.append(window[topic])
        elif topic in run:
            out.append(f'run accounting {run[topic]}')
    return out


def stage_rows(chain: ChainResult) -> list[dict]:
    """The stage table: one row per transition, then the cumulative ones."""
    rows = []
    for kind, items in (('stage', chain.transitions), ('cumulative', chain.cumulative)):
        for t in items:
            wide, band = t.result.widest, t.result.band(VERDICT_BAND_HZ)
            rows.append({'kind': kind, 'from': LABELS[t.src], 'to': LABELS[t.dst], 'what': t.what,
                         'designed_delay_ms': t.designed_delay_s * 1e3,
                         'delay_ms': wide.delay.value * 1e3 if wide and wide.delay.valid else None,
                         'delay': _text(wide.delay, 1e3, 'ms', '.3f') if wide else f'not measurable: {t.result.reason}',
                         'gain_db_7hz': band.gain_db.value if band and band.gain_db.valid else None,
                         'gain': band.gain_db.text('+.2f') if band else f'not measurable: {t.result.reason}',
                         'amplitude_ratio': t.amplitude.value if t.amplitude.valid else None,
                         'amplitude': t.amplitude.text('.3f'), 'segments': t.result.n_segments,
                         'correlation_peak': t.result.correlation_peak, 'holds': t.holds, 'why': t.why})
    return rows


def _text(fig, k: float, unit: str, fmt: str) -> str:
    if not fig.valid:
        return fig.text()
    return f'{fig.value * k:{fmt}} {unit}'


def to_json(a: Analysis) -> dict:
    out = {'verdict': a.verdict.as_dict(), 'design': a.design.as_dict(), 'window_s': a.window,
           'accounting': a.accounting, 'not_measurable': a.not_measurable}
    if a.transparency is not None:
        out['validity'] = a.transparency.pair.as_dict()
    if a.chain is not None:
        out['stages'] = {'rows': stage_rows(a.chain), 'findings': a.chain.findings,
                         'completeness': [s.completeness() for s in a.chain.stages],
                         'segments': int(a.chain.starts.size), 'impulsive': bool(a.chain.impulsive)}
    return out
