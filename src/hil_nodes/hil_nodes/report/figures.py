"""The report's figures (matplotlib, Agg): one function per PNG, each returns its file name."""
from __future__ import annotations

import pathlib

import matplotlib
import numpy as np

from hil_nodes.report import designed
from hil_nodes.topics import ROOT as T   # bags are read with topics named as at the root

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

AXES = ['x (surge)', 'y (sway)', 'z (heave)', 'roll', 'pitch', 'yaw']
MODE_COLOURS = {'IDLE': '#dddddd', 'HOMING': '#9ecae1', 'SYNCHRONIZING': '#c6dbef', 'RUNNING': '#a1d99b',
                'SAFETY_RECOVERY': '#fdae6b', 'RETURNING_HOME': '#fdd0a2', 'FAULT': '#fb6a4a'}


def _save(fig, out: pathlib.Path, name: str) -> str:
    fig.tight_layout()
    fig.savefig(out / name, dpi=110)
    plt.close(fig)
    return name


def _mode_bands(ax, modes, t_end):
    for i, (t0, mode) in enumerate(modes):
        t1 = modes[i + 1][0] if i + 1 < len(modes) else t_end
        if t1 > t0:
            ax.axvspan(t0, t1, color=MODE_COLOURS.get(mode, '#eeeeee'), alpha=0.35, lw=0)


def force(run, out) -> str | None:
    raw = run.get(T.FT_WRENCH_RAW, T.MOCK_FT_WRENCH)
    filt = run.get(T.FT_WRENCH)
    if raw is None and filt is None:
        return None
    fig, axes = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    for ax, sl, unit in ((axes[0], slice(0, 3), 'N'), (axes[1], slice(3, 6), 'N m')):
        for i in range(sl.start, sl.stop):
            if raw is not None:
                ax.plot(raw.t, raw.values[:, i], lw=0.6, alpha=0.6, label=f'{"FT"[i // 3]}{"xyz"[i % 3]} raw')
            if filt is not None:
                ax.plot(filt.t, filt.values[:, i], lw=1.0, label=f'{"FT"[i // 3]}{"xyz"[i % 3]} filtered')
        ax.set_ylabel(unit)
        ax.legend(ncol=3, fontsize=7, loc='upper right')
        ax.grid(alpha=0.3)
    axes[0].set_title('Force input (F/T sensor: raw and Butterworth-filtered)')
    axes[1].set_xlabel('time (s)')
    return _save(fig, out, 'force.png')


def motion(run, tr, out) -> str | None:
    tcp = run.get(T.KINEMATICS_TCP_POSE)
    if tr is None and tcp is None:
        return None
    fig, ax = plt.subplots(figsize=(10, 4))
    _mode_bands(ax, run.modes, float(tcp.t[-1]) if tcp is not None else float(tr.times[-1]))
    if tr is not None:
        ax.plot(tr.times, tr.ideal * 1e3, lw=1.2, label='ideal (model driven by the raw force)')
        ax.plot(tr.times, tr.achieved * 1e3, lw=1.0, label='achieved (forward kinematics of the joints)')
        ax.set_ylabel(f'{AXES[tr.axis]} (mm or mrad)')
    else:
        ax.plot(tcp.t, (tcp.values[:, 0] - tcp.values[0, 0]) * 1e3, label='achieved TCP x')
        ax.set_ylabel('x (mm)')
    ax.set_xlabel('time (s)')
    ax.set_title('Ideal vs achieved TCP motion (background: HIL mode)')
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, out, 'motion.png')


def frf(tr, out) -> str:
    fig, (ag, ap) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for resp, label in ((tr.force_to_ideal, 'ideal'), (tr.force_to_achieved, 'achieved')):
        sel = (resp.freqs > 0) & (resp.freqs <= 25)
        ag.plot(resp.freqs[sel], resp.gain[sel], label=label)
        ap.plot(resp.freqs[sel], resp.phase_deg[sel], label=label)
    ag.set_ylabel('|X K / F| (-)')
    ap.set_ylabel('phase (deg)')
    ap.set_xlabel('frequency (Hz)')
    ag.set_title(f'Frequency response force -> motion, normalised by stiffness ({tr.starts.size} segments averaged)')
    for a in (ag, ap):
        a.grid(alpha=0.3)
        a.legend(fontsize=8)
    return _save(fig, out, 'frf.png')


def transparency(tr, out) -> str:
    frf_ = tr.result.frf
    sel = (frf_.freqs > 0) & (frf_.freqs <= 25)
    fig, (ag, ap, ac) = plt.subplots(3, 1, figsize=(9, 8), sharex=True,
                                      gridspec_kw={'height_ratios': [2, 2, 1]})
    ag.plot(frf_.freqs[sel], frf_.gain_db[sel], color='k')
    ag.axhspan(-1, 1, color='g', alpha=0.1, label='+-1 dB')
    ag.set_ylabel('gain achieved/ideal (dB)')
    ap.plot(frf_.freqs[sel], frf_.phase_deg[sel], color='k', label='measured')
    for band, fit in sorted(tr.result.fits.items()):
        figs = tr.pair.band(band)
        valid = figs is not None and figs.delay.valid
        text = (f'delay {fit.delay_s * 1e3:.2f} ms, RMSE {fit.rmse_deg:.3f} deg' if valid
                else f'not measurable: {figs.delay.reason if figs is not None else "-"}')
        ap.plot(fit.freqs, fit.fitted_deg, lw=2, alpha=0.7, label=f'linear fit 0-{band:g} Hz: {text}')
        ag.axvline(band, color='grey', ls=':')
    ap.set_ylabel('phase (deg)')
    ac.plot(frf_.freqs[sel], frf_.coherence[sel], color='tab:purple')
    ac.set_ylabel('coherence' if tr.starts.size >= 2 else 'coherence\n(1 segment:\nnot measurable)')
    ac.set_ylim(0, 1.05)
    ac.set_xlabel('frequency (Hz)')
    ag.set_title('Transparency: achieved / ideal (unity gain + linear phase = the model shifted by a constant delay)')
    for a in (ag, ap, ac):
        a.grid(alpha=0.3)
    ag.legend(fontsize=8)
    ap.legend(fontsize=8)
    return _save(fig, out, 'transparency.png')


def shifted(tr, out) -> str:
    fig, ax = plt.subplots(figsize=(10, 4))
    k = tr.shift_samples
    ax.plot(tr.times, tr.ideal * 1e3, lw=1.2, label='ideal')
    if 0 < k < tr.times.size:
        ax.plot(tr.times[:-k], tr.achieved[k:] * 1e3, lw=1.0, ls='--',
                label=f'achieved shifted back by {k} samples ({tr.delay_s * 1e3:.1f} ms)')
    ax.set_xlabel('time (s)')
    ax.set_ylabel(f'{AXES[tr.axis]} (mm or mrad)')
    ax.set_title(f'Delay-shifted comparison: RMSE {tr.shifted_rmse * 1e3:.4f} '
                 f'(unshifted {tr.unshifted_rmse * 1e3:.4f}) mm')
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, out, 'shifted.png')


def timebase(run, out) -> str | None:
    td, dist = run.diag_series('timebase', 'distance')
    tf, factor = run.diag_series('timebase', 'factor')
    if not td.size and not tf.size:
        return None
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(10, 4.5), sharex=True)
    a1.step(td, dist, where='post')
    a1.axhline(designed.wr_distance(run.manifest.get('parameters')), color='g', ls=':',
               label='designed W-R distance')
    a1.set_ylabel('W - R distance')
    a1.legend(fontsize=8)
    a2.plot(tf, factor)
    a2.axhline(1, color='g', ls=':')
    a2.set_ylabel('time-base factor')
    a2.set_xlabel('time (s)')
    a1.set_title('Reference buffer and time-base control')
    for a in (a1, a2):
        a.grid(alpha=0.3)
    return _save(fig, out, 'timebase.png')


def timeline(run, out) -> str:
    t_end = max([t for t, _ in run.modes] + [e[0] for e in run.events] +
                [float(s.t[-1]) for s in run.series.values() if len(s)] + [1.0])
    fig, ax = plt.subplots(figsize=(10, 2.8))
    _mode_bands(ax, run.modes, t_end)
    for t0, mode in run.modes:
        ax.text(t0, 1.02, mode, rotation=30, fontsize=7, va='bottom')
    sources = sorted({e[1] for e in run.events}) or ['-']
    for t, src, name, message in run.events:
        y = (sources.index(src) + 1) / (len(sources) + 1)
        ax.plot([t], [y], 'v', color='red' if name == 'fault' else 'k')
        ax.annotate(name, (t, y), fontsize=7, xytext=(3, 3), textcoords='offset points')
    ax.set_yticks([(i + 1) / (len(sources) + 1) for i in range(len(sources))], sources)
    ax.set_ylim(0, 1.3)
    ax.set_xlim(0, t_end)
    ax.set_xlabel('time (s)')
    ax.set_title('Supervisor modes (bands) and events (markers)', pad=28)
    return _save(fig, out, 'timeline.png')


def joints(run, out) -> str | None:
    js = run.get(T.JOINT_STATES)
    if js is None:
        return None
    n = js.values.shape[1] // 2
    fig, (ap, av) = plt.subplots(2, 1, figsize=(10, 5), sharex=True)
    for i in range(n):
        label = js.names[i] if i < len(js.names) else f'joint {i + 1}'
        ap.plot(js.t, js.values[:, i], lw=0.8, label=label)
        av.plot(js.t, js.values[:, n + i], lw=0.8)
    ap.set_ylabel('position')
    av.set_ylabel('velocity')
    av.set_xlabel('time (s)')
    ap.legend(ncol=6, fontsize=7)
    ap.set_title('Measured joint states')
    for a in (ap, av):
        a.grid(alpha=0.3)
    return _save(fig, out, 'joints.png')


def stages(chain, out) -> str:
    """Stage-by-stage transparency: the motion of every stage around the first impulse, then
    per transition the delay and the gain, measured against designed."""
    from hil_core.transparency.design import LABELS
    from hil_core.transparency.validity import GAIN_TOLERANCE_DB, VERDICT_BAND_HZ
    fig, (asig, adel, again) = plt.subplots(3, 1, figsize=(10, 10), gridspec_kw={'height_ratios': [3, 2, 2]})
    s0 = int(chain.starts[0]) if chain.starts.size else 0
    span = slice(s0, min(chain.grid.size, s0 + int(round(1.2 * chain.fs))))
    t0, t1 = chain.grid[span][0], chain.grid[span][-1]
    for s in chain.stages:
        if s.kind == 'force':     # its ideal motion, where the force is complete
            asig.plot(chain.grid[span], np.where(s.motion_ok, s.motion, np.nan)[span] * 1e3, lw=1.0,
                      label=LABELS[s.key] + ' (ideal motion)')
        else:                     # its own samples: a gappy stream shows as what it is
            sel = (s.times >= t0) & (s.times <= t1)
            asig.plot(s.times[sel], s.raw[sel] * 1e3, lw=1.0, marker='.' if not s.complete else None,
                      ms=3, label=LABELS[s.key] + ('' if s.complete else ' (incomplete)'))
    asig.set_ylabel(f'{AXES[chain.axis]} (mm or mrad)')
    asig.set_xlabel('time (s)')
    asig.set_title('Each stage of the chain on one DOF, first segment (force stages: the model driven by them)')
    asig.legend(fontsize=7, ncol=2)
    names = [f'{LABELS[t.src]}\n-> {LABELS[t.dst]}' for t in chain.transitions]
    x = np.arange(len(names))
    measured = [(t.result.widest.delay.value * 1e3 if t.result.widest and t.result.widest.delay.valid else np.nan)
                for t in chain.transitions]
    designed = [t.designed_delay_s * 1e3 for t in chain.transitions]
    adel.bar(x - 0.2, designed, 0.4, color='#bbbbbb', label='designed')
    adel.bar(x + 0.2, np.nan_to_num(measured), 0.4, color='tab:blue', label='measured (phase fit 0-11 Hz)')
    for i, m in enumerate(measured):
        if not np.isfinite(m):
            adel.text(i + 0.2, 0, 'not\nmeasurable', ha='center', va='bottom', fontsize=7, color='red')
    s, e = chain.delay_sum()
    adel.set_title('Delay per stage' + (f': sum {s * 1e3:.3f} ms, end to end {e * 1e3:.3f} ms'
                                         if s is not None and e is not None else ''))
    adel.set_ylabel('delay (ms)')
    adel.set_xticks(x, names, fontsize=7)
    adel.legend(fontsize=8)
    gains, amps = [], []
    for t in chain.transitions:
        band = t.result.band(VERDICT_BAND_HZ) or t.result.widest
        gains.append(band.gain_db.value if band is not None and band.gain_db.valid else np.nan)
        amps.append(20 * np.log10(t.amplitude.value) if t.amplitude.valid and t.amplitude.value > 0 else np.nan)
    again.axhspan(-GAIN_TOLERANCE_DB, GAIN_TOLERANCE_DB, color='g', alpha=0.1,
                  label=f'+-{GAIN_TOLERANCE_DB:g} dB design')
    again.bar(x, np.nan_to_num(gains), 0.5, color='tab:blue', label=f'mean gain 0-{VERDICT_BAND_HZ:g} Hz')
    again.plot(x, amps, 'o', color='tab:orange', label='amplitude ratio (time domain, gap-tolerant)')
    for i, g in enumerate(gains):
        if not np.isfinite(g):
            again.text(i, 0, 'not\nmeasurable', ha='center', va='bottom', fontsize=7, color='red')
    again.set_ylabel('gain (dB)')
    again.set_xticks(x, names, fontsize=7)
    again.legend(fontsize=8)
    for a in (asig, adel, again):
        a.grid(alpha=0.3)
    return _save(fig, out, 'stages.png')
