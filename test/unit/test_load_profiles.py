"""Load profiles of the mock F/T sensor and the replay loader."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hil_core.ft import replay
from hil_core.ft.load_profiles import GridSampler, LoadProfile, hashed_normal, sample_stamps_between

ALL = [{'type': 'constant', 'wrench': [0, 0, -5, 0, 0, 0]},
       {'type': 'impulses', 'axis': 0, 'amplitude': 50.0, 'start': 0.5, 'period': 1.0, 'count': 4, 'width': 0.02},
       {'type': 'steps', 'axis': 2, 'amplitude': 10.0, 'start': 0.2, 'period': 0.5},
       {'type': 'chirp', 'axis': 1, 'amplitude': 2.0, 'f0': 0.5, 'f1': 7.0, 'start': 0.0, 'duration': 4.0},
       {'type': 'pushes', 'rate': 2.0, 'force': 20.0, 'torque': 1.0, 'horizon': 5.0},
       {'type': 'noise', 'std': 0.2},
       {'type': 'mains', 'axis': 2, 'amplitude': 0.5, 'frequency': 50.0, 'harmonics': 3}]


def test_deterministic_from_seed_and_independent_of_batching():
    t = np.arange(8000) / 1600.0
    a = LoadProfile(ALL, seed=7).sample(t)
    b = LoadProfile(ALL, seed=7)
    pieces = np.vstack([b.sample(t[i:i + 4]) for i in range(0, 8000, 4)])
    assert a.shape == (8000, 6) and np.array_equal(a, pieces)
    assert not np.array_equal(a, LoadProfile(ALL, seed=8).sample(t))


def test_grid_sampler_gives_the_profiles_own_values():
    """The simulated sensor's block sampler: every frame's samples (4 per frame, across block
    boundaries, from a start that is not a block's, and after a jump back) are the profile's own
    values at the same nanosecond times, bit for bit."""
    period = 625_000
    profile = LoadProfile(ALL, seed=3)
    sampler = GridSampler(profile, period, block=400)
    frames = [np.arange(k, k + 4) for k in range(1, 2001, 4)] + [np.arange(-3, 1), np.arange(396, 404)]
    for index in frames:
        assert np.array_equal(sampler.sample(index), profile.sample(index * period * 1e-9)), index
    assert sampler.sample(np.array([], dtype=np.int64)).shape == (0, 6)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 500), st.integers(0, 9), st.booleans()), min_size=1, max_size=40))
def test_grid_sampler_prefetch_changes_no_value(frames):
    """``prefetch`` (the next block computed ahead, off the frame's path) gives the same values as
    sampling without it, for any sequence of frames (jumps back and forward included)."""
    period = 625_000
    profile = LoadProfile(ALL, seed=11)
    plain, ahead = GridSampler(profile, period, block=8), GridSampler(profile, period, block=8)
    for start, n, prefetch in frames:
        index = np.arange(start, start + n)
        got = ahead.sample(index)
        assert np.array_equal(got, plain.sample(index))
        assert np.array_equal(got, profile.sample(index * period * 1e-9))
        if prefetch:
            ahead.prefetch()
            assert not ahead.prefetch_due() or ahead._first is None


def test_grid_sampler_takes_the_prefetched_block_instead_of_computing_it():
    period = 625_000
    profile = LoadProfile(ALL, seed=3)
    sampler = GridSampler(profile, period, block=40)
    sampler.sample(np.arange(0, 4))
    assert sampler.prefetch_due()
    sampler.prefetch()
    assert not sampler.prefetch_due()
    calls = []
    real = profile.sample
    profile.sample = lambda t: calls.append(t.size) or real(t)
    for k in range(4, 80, 4):                  # into the next block and to its end: no computation
        sampler.sample(np.arange(k, k + 4))
    assert calls == []
    sampler.sample(np.arange(80, 84))          # the block after it was not prefetched: computed now
    assert calls == [40]


def test_components_against_closed_forms():
    t = np.arange(16000) / 1600.0
    imp = LoadProfile([ALL[1]]).sample(t)[:, 0]
    assert imp.max() == pytest.approx(50.0, rel=1e-3) and np.count_nonzero(imp > 1.0) > 4 * 25
    assert np.all(imp[t < 0.5] == 0)
    steps = LoadProfile([ALL[2]]).sample(np.array([0.1, 0.3, 0.8, 1.3, 1.8]))[:, 2]
    assert steps.tolist() == [0.0, 10.0, 0.0, -10.0, 0.0]
    mains = LoadProfile([{'type': 'mains', 'axis': 3, 'amplitude': 1.0, 'harmonics': 1}]).sample(t)[:, 3]
    spectrum = np.abs(np.fft.rfft(mains))
    assert np.fft.rfftfreq(t.size, 1 / 1600.0)[np.argmax(spectrum)] == pytest.approx(50.0)
    noise = LoadProfile([{'type': 'noise', 'std': [1, 2, 3, 0.1, 0.2, 0.3]}], seed=1).sample(t)
    assert np.allclose(noise.std(axis=0), [1, 2, 3, 0.1, 0.2, 0.3], rtol=0.05)
    assert abs(np.corrcoef(noise[:-1, 0], noise[1:, 0])[0, 1]) < 0.05   # white
    pushes = LoadProfile([ALL[4]], seed=3).sample(t)
    assert np.all(np.linalg.norm(pushes[:, :3], axis=1) <= 20.0 * 2 + 1e-9)
    assert np.count_nonzero(np.linalg.norm(pushes[:, :3], axis=1) > 1.0) > 100


def test_hashed_normal_is_standard():
    z = hashed_normal(5, np.arange(200000), 1)[:, 0]
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01


def test_bad_components_rejected():
    with pytest.raises(ValueError, match='unknown type'):
        LoadProfile([{'type': 'sawtooth'}])
    with pytest.raises(ValueError, match='axis'):
        LoadProfile([{'type': 'steps', 'axis': 6}])


def test_sample_stamps_between_ticks():
    assert sample_stamps_between(0, 2_500_000, 625_000).tolist() == [625_000, 1_250_000, 1_875_000, 2_500_000]
    assert sample_stamps_between(2_500_000, 2_500_000, 625_000).size == 0
    assert sample_stamps_between(None, 5_000_000, 625_000).tolist() == [5_000_000]
    ticks = np.arange(0, 1000) * 2_500_000
    allt = np.concatenate([sample_stamps_between(a, b, 625_000) for a, b in zip(ticks[:-1], ticks[1:])])
    assert np.array_equal(allt, np.arange(1, 3997) * 625_000)


def test_replay_csv_and_bad_files(tmp_path):
    good = tmp_path / 'load.csv'
    t = np.linspace(10.0, 11.0, 11)
    w = np.column_stack([t * k for k in range(1, 7)])
    np.savetxt(good, np.column_stack([t, w]), delimiter=',', header='t,Fx,Fy,Fz,Tx,Ty,Tz', comments='')
    tt, ww = replay.load_csv(good)
    assert tt[0] == 0.0 and np.allclose(ww, w)
    prof = replay.ReplayProfile(tt, ww)
    assert np.allclose(prof.sample([0.05])[0], (10.05) * np.arange(1, 7))   # linear interpolation
    assert prof.finished(1.01) and not prof.finished(0.5)
    bad = tmp_path / 'bad.csv'
    np.savetxt(bad, np.zeros((3, 5)), delimiter=',')
    with pytest.raises(ValueError, match='7 columns'):
        replay.load_csv(bad)
    nan = tmp_path / 'nan.csv'
    np.savetxt(nan, np.column_stack([t, w * np.nan]), delimiter=',')
    with pytest.raises(ValueError, match='NaN'):
        replay.load_csv(nan)
    back = tmp_path / 'back.csv'
    np.savetxt(back, np.column_stack([t[::-1], w]), delimiter=',')
    with pytest.raises(ValueError, match='increasing'):
        replay.load_csv(back)
