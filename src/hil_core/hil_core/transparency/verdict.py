"""The verdict of a transparency report: one sentence a lab engineer can sign off on.

* "transparent: 15.6 ms constant delay as designed, gain within 0.1 dB to 7 Hz" when the end-to-end
  figures are valid, the delay is the designed one within ``DELAY_TOLERANCE_S``, the gain within
  ``GAIN_TOLERANCE_DB`` of unity to ``VERDICT_BAND_HZ`` and the phase linear (RMSE below
  ``MAX_PHASE_RMSE_DEG``), and no stream of the chain misses samples;
* "NOT transparent: <reasons>" when a stream of the chain misses samples (skipped cycles or
  lost messages: the run did not deliver its input), when the achieved motion does not follow
  the ideal one (correlation or residual below the validity thresholds), or when a valid figure
  departs from the design; the stage where the loss began and the first stage off its design
  are named;
* "not measurable: <reason>" when the record cannot support a figure at all (no complete
  segment, or noise: coherence below its threshold) and nothing says the run went wrong.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from hil_core.transparency.design import ChainDesign
from hil_core.transparency.pairs import PairResult
from hil_core.transparency.validity import (DELAY_TOLERANCE_S, GAIN_TOLERANCE_DB, MAX_PHASE_RMSE_DEG,
                                            MIN_COHERENCE, VERDICT_BAND_HZ)

TRANSPARENT, NOT_TRANSPARENT, NOT_MEASURABLE = 'transparent', 'NOT transparent', 'not measurable'


@dataclass(frozen=True)
class Verdict:
    status: str
    text: str
    reasons: tuple[str, ...] = ()
    where: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {'status': self.status, 'text': self.text, 'reasons': list(self.reasons), 'where': dict(self.where)}


def _tracking_problems(pair: PairResult) -> list[str]:
    """Validity problems that say the output does not follow the input (not mere noise)."""
    wide = pair.widest
    if wide is None:
        return []
    return [p for p in wide.validity.problems if not p.startswith('coherence')]


def decide(end_to_end: PairResult | None, design: ChainDesign, not_measurable_reason: str = '',
           incomplete: list[str] | None = None, findings: dict | None = None) -> Verdict:
    """The verdict from the end-to-end figures (None: ``not_measurable_reason``), the design,
    the chain streams that miss samples (one text each) and the stage findings."""
    findings = findings or {}
    incomplete = list(incomplete or [])
    where = {k: findings[k] for k in ('first_incomplete', 'first_not_following', 'attenuating', 'first_failing')
             if findings.get(k)}
    location = []
    if findings.get('first_incomplete'):
        location.append(f'loss begins at {findings["first_incomplete"]}')
    if findings.get('first_not_following'):
        location.append(f'first stage that does not follow: {findings["first_not_following"]}')
    if findings.get('attenuating'):
        location.append(f'attenuating stage: {findings["attenuating"]}')
    elif findings.get('first_failing'):
        location.append(f'first stage off its design: {findings["first_failing"]}')
    reasons = []
    if incomplete:
        reasons.append('messages missing: ' + '; '.join(incomplete))
    if end_to_end is None or end_to_end.widest is None:
        why = not_measurable_reason or (end_to_end.reason if end_to_end is not None else 'no analysis')
        if reasons:
            return _make(NOT_TRANSPARENT, reasons + [f'figures not measurable: {why}'] + location, where)
        return _make(NOT_MEASURABLE, [why] + location, where)
    wide = end_to_end.widest
    band = end_to_end.band(VERDICT_BAND_HZ) or wide
    tracking = _tracking_problems(end_to_end)
    if tracking:
        reasons.append('the achieved motion does not follow the ideal one (' + '; '.join(tracking) + ')')
        return _make(NOT_TRANSPARENT, reasons + location, where)
    if not wide.validity.ok or not band.validity.ok:
        why = (wide.validity.reason() or band.validity.reason())
        if reasons:
            return _make(NOT_TRANSPARENT, reasons + [f'figures not measurable: {why}'] + location, where)
        return _make(NOT_MEASURABLE, [f'{why} (noise: coherence must reach {MIN_COHERENCE:g})'] + location, where)
    delay, designed = wide.delay.value, design.total_delay_s
    if abs(delay - designed) > DELAY_TOLERANCE_S:
        reasons.append(f'constant delay {delay * 1e3:.1f} ms, designed {designed * 1e3:.1f} ms '
                       f'(filter {design.filter_delay_s * 1e3:.1f} + buffer {design.buffer_delay_s * 1e3:.1f})')
    if band.gain_dev_db.value > GAIN_TOLERANCE_DB:
        reasons.append(f'gain off by up to {band.gain_dev_db.value:.1f} dB to {band.f_max:g} Hz '
                       f'(mean {band.gain_db.value:+.1f} dB; design: unity within {GAIN_TOLERANCE_DB:g} dB)')
    if wide.phase_rmse_deg.value > MAX_PHASE_RMSE_DEG:
        reasons.append(f'phase not linear: RMSE {wide.phase_rmse_deg.value:.1f} deg > {MAX_PHASE_RMSE_DEG:g} deg '
                       f'to {wide.f_max:g} Hz')
    if reasons:
        return _make(NOT_TRANSPARENT, reasons + location, where)
    text = (f'{TRANSPARENT}: {delay * 1e3:.1f} ms constant delay as designed, '
            f'gain within {band.gain_dev_db.value:.1f} dB to {band.f_max:g} Hz')
    return Verdict(TRANSPARENT, text, (), where)


def _make(status: str, reasons: list[str], where: dict) -> Verdict:
    return Verdict(status, f'{status}: ' + '; '.join(reasons), tuple(reasons), where)
