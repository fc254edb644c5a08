"""Compiled load profiles (LoadProfile, ft.load_profiles_kernel) against the numpy oracle
(LoadProfileNumpy): any list of components, any seed, any times (before the start included).
The arithmetic is the same element by element; the pushes' sum (numpy's matrix product may
group it differently) and the noise's log and cos (numpy's against the C library's) may differ
in the last bits, so values agree to 1e-12 of their scale."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.ft.load_profiles import GridSampler, LoadProfile
from hil_core.ft.load_profiles_numpy import LoadProfileNumpy

RTOL = 1e-12

_pos = st.floats(0.05, 5.0)
_amp = st.floats(-100.0, 100.0)
_axis = st.integers(0, 5)
COMPONENT = st.one_of(
    st.builds(lambda w: {'type': 'constant', 'wrench': w}, st.lists(_amp, min_size=6, max_size=6)),
    st.builds(lambda a, amp, s, p, n, w: {'type': 'impulses', 'axis': a, 'amplitude': amp, 'start': s, 'period': p,
                                          'count': n, 'width': w},
              _axis, _amp, st.floats(-1.0, 3.0), _pos, st.integers(0, 6), st.floats(0.001, 0.2)),
    st.builds(lambda a, amp, s, p, n: {'type': 'steps', 'axis': a, 'amplitude': amp, 'start': s, 'period': p,
                                       'count': n},
              _axis, _amp, st.floats(-1.0, 3.0), _pos, st.integers(0, 9)),
    st.builds(lambda a, amp, f0, f1, s, d: {'type': 'chirp', 'axis': a, 'amplitude': amp, 'f0': f0, 'f1': f1,
                                            'start': s, 'duration': d},
              _axis, _amp, st.floats(0.0, 5.0), st.floats(0.0, 20.0), st.floats(-1.0, 2.0), _pos),
    st.builds(lambda r, f, tq, h: {'type': 'pushes', 'rate': r, 'force': f, 'torque': tq, 'horizon': h},
              st.floats(0.1, 5.0), st.floats(0.0, 50.0), st.floats(0.0, 3.0), st.floats(0.5, 6.0)),
    st.builds(lambda std, r: {'type': 'noise', 'std': std, 'rate': r},
              st.one_of(st.floats(0.0, 2.0), st.lists(st.floats(0.0, 2.0), min_size=6, max_size=6)),
              st.sampled_from([400.0, 1600.0, 7000.0])),
    st.builds(lambda axes, amp, f, h: {'type': 'mains', 'axes': axes, 'amplitude': amp, 'frequency': f,
                                       'harmonics': h},
              st.lists(_axis, min_size=1, max_size=8), _amp, st.floats(1.0, 120.0), st.integers(1, 5)),
    st.builds(lambda a, amp: {'type': 'mains', 'axis': a, 'amplitude': amp}, _axis, _amp),
    st.just({'type': 'mains'}),
)


def assert_same(got, want):
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=0.0, atol=RTOL * scale)


@settings(max_examples=150, deadline=None)
@given(st.lists(COMPONENT, min_size=0, max_size=7), st.integers(0, 2 ** 40),
       st.floats(-2.0, 20.0), st.integers(1, 300))
def test_compiled_sampling_matches_the_numpy_oracle(components, seed, t0, n):
    t = t0 + np.arange(n) / 1600.0
    got = LoadProfile(components, seed=seed).sample(t)
    want = LoadProfileNumpy(components, seed=seed).sample(t)
    assert got.shape == want.shape == (n, 6)
    assert_same(got, want)


def test_the_seed_000_history_on_the_frame_grid_matches_the_oracle():
    """The Hexafloat scenarios' load (four impulses, sensor noise, 50 Hz hum with harmonics) at
    the sensor's 1.6 kHz over 30 s, as the simulated source samples it: a block of 40 at a time."""
    from hil_core.ft.load_profiles import load_scenario_file
    from hil_core.data_paths import data_root
    profile, _ = load_scenario_file(data_root() / 'config' / 'ft_loads' / 'impulses_seed000.yaml')
    oracle = LoadProfileNumpy(profile.components, seed=profile.seed)
    sampler = GridSampler(profile, 625_000, block=40)
    index = np.arange(0, 48_000)
    got = np.vstack([sampler.sample(index[i:i + 4]) for i in range(0, index.size, 4)])
    assert_same(got, oracle.sample(index * 625_000 * 1e-9))
    assert np.abs(got[:, 0]).max() == pytest.approx(40.0, abs=1.0)      # the impulses are there


def test_a_mains_axis_outside_the_six_is_refused():
    with pytest.raises(ValueError, match='axes'):
        LoadProfile([{'type': 'mains', 'axes': [0, 6]}])
    with pytest.raises(ValueError, match='axes'):
        LoadProfile([{'type': 'mains', 'axes': [-1]}])
