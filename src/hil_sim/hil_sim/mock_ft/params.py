"""The mock F/T sensor's parameters: its Param table (the only place they are declared; the
generated page docs/parameters/mock_ft.md and the config files are checked against it) and the
one function from the validated values to the load profile it streams."""
from __future__ import annotations

from hil_core.ft.load_profiles import LoadProfile, check_dropout, load_scenario_file
from hil_nodes.framework.param_table import Param

PROFILES = ('none', 'constant', 'impulses', 'steps', 'chirp', 'pushes')

PARAMS = (
    Param('sample_rate', float, 1600.0, 'samples per second of sim time (servo rate, seed 000)',
          range=(1.0, 10000.0)),
    Param('frame_id', str, 'ft_sensor', 'frame_id of the published wrenches'),
    Param('scenario_file', str, '', 'YAML load scenario (seed, components, sensor_dropout); overrides profile'),
    Param('profile', str, 'impulses', 'main load component', choices=PROFILES),
    Param('axis', int, 0, 'wrench axis of the main component (0..5 = fx..tz)', range=(0, 5)),
    Param('amplitude', float, 20.0, 'amplitude of the main component (N or N m)', range=(-1e4, 1e4)),
    Param('start', float, 1.0, 'first impulse/step/chirp time (s)', range=(0.0, 1e6)),
    Param('period', float, 2.0, 'time between impulses/steps (s)', range=(1e-3, 1e6)),
    Param('count', int, 4, 'number of impulses/steps', range=(0, 1_000_000)),
    Param('width', float, 0.02, 'impulse duration (s, half-sine)', range=(1e-4, 10.0)),
    Param('chirp_f0', float, 0.1, 'chirp start frequency (Hz)', range=(0.0, 1000.0)),
    Param('chirp_f1', float, 10.0, 'chirp end frequency (Hz)', range=(0.0, 1000.0)),
    Param('chirp_duration', float, 10.0, 'chirp duration (s)', range=(1e-3, 1e6)),
    Param('push_rate', float, 1.0, 'random pushes per second (joystick-like)', range=(1e-3, 100.0)),
    Param('push_torque', float, 1.0, 'peak torque of random pushes (N m)', range=(0.0, 1e3)),
    Param('horizon', float, 600.0, 'time span over which random pushes are drawn (s)', range=(1.0, 1e6)),
    Param('offset', 'float[]', [0.0] * 6, 'constant wrench added to everything', length=6),
    Param('noise_std', float, 0.05, 'white sensor noise std (N; torques get a tenth)', range=(0.0, 1e3)),
    Param('mains_amplitude', float, 0.2, 'drive mains noise amplitude (N), seed 000', range=(0.0, 1e3)),
    Param('mains_hz', float, 50.0, 'mains frequency (Hz)', range=(1.0, 1000.0)),
    Param('mains_harmonics', int, 3, 'number of mains harmonics (amplitude 1/h)', range=(0, 50)),
    Param('seed', int, 0, 'seed of noise and random pushes (same seed, same samples)'),
    Param('sensor_dropout', 'float[]', [0.0, 0.0], 'no samples in [a, b] s of sim time', check=check_dropout),
    Param('timer_period', float, 0.0025, 'real time: publishing period (s)', range=(1e-4, 1.0)),
)


def _components(p) -> list[dict]:
    """The load components of the profile parameters (hil_core.ft.load_profiles' format)."""
    main = {'type': p.profile, 'axis': p.axis, 'amplitude': p.amplitude, 'start': p.start,
            'period': p.period, 'count': p.count, 'width': p.width}
    if p.profile == 'chirp':
        main.update(f0=p.chirp_f0, f1=p.chirp_f1, duration=p.chirp_duration)
    elif p.profile == 'pushes':
        main = {'type': 'pushes', 'rate': p.push_rate, 'force': abs(p.amplitude), 'torque': p.push_torque,
                'horizon': p.horizon, 'start': p.start}
    elif p.profile == 'constant':
        w = [0.0] * 6
        w[p.axis] = p.amplitude
        main = {'type': 'constant', 'wrench': w}
    comps = [] if p.profile == 'none' else [main]
    comps.append({'type': 'constant', 'wrench': list(p.offset)})
    if p.noise_std > 0:
        s = p.noise_std
        comps.append({'type': 'noise', 'std': [s, s, s, s / 10, s / 10, s / 10], 'rate': p.sample_rate})
    if p.mains_amplitude > 0 and p.mains_harmonics > 0:
        comps.append({'type': 'mains', 'axes': [0, 1, 2], 'amplitude': p.mains_amplitude,
                      'frequency': p.mains_hz, 'harmonics': p.mains_harmonics})
    return comps


def load_profile(p) -> tuple[LoadProfile, tuple[float, float]]:
    """(profile, dropout [a, b] s) for the validated values ``p``: the ``scenario_file`` if one is
    given (its dropout replaces ``sensor_dropout`` when it has one), else the profile parameters."""
    dropout = tuple(p.sensor_dropout)
    if p.scenario_file:
        profile, scenario_dropout = load_scenario_file(p.scenario_file, p.seed)
        if scenario_dropout[1] > scenario_dropout[0]:
            dropout = scenario_dropout
        return profile, dropout
    return LoadProfile(_components(p), seed=p.seed), dropout
