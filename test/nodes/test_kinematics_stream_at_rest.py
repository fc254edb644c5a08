"""The kinematics node's FK stream (hil_nodes.kinematics.robots._Hexaslide.fk) does not depend on how
many samples it got while the robot stood still: the warm-started Newton iteration moves by an
ulp or so at each solve of the same displacements, so a lockstep run and its isolated twin
(whose kinematics node was activated after a different number of samples at rest) could differ
by ~1e-14 m in the joint states (a possible source of a difference CI saw once)."""
from types import SimpleNamespace

import numpy as np
import pytest

from hil_core import hexaslide as hx
from hil_nodes.kinematics.robots import _Hexaslide

PARAMS = SimpleNamespace(robot='hexaslide_scaled', geometry_file='', fk_method='newton', fk_tolerance=1e-9,
                         fk_max_iterations=50, fk_predict=True)


def _motion(k):
    return 1e-4 * np.sin(0.1 * k) * np.arange(1, 7)


def _stream(fk, n_at_rest):
    """``fk(q) -> (pose, reason)`` from a fresh warm start: n samples at rest, then a motion."""
    at_rest = [fk(np.zeros(6))[0] for _ in range(n_at_rest)]
    return at_rest, [fk(_motion(k))[0] for k in range(50)]


def test_the_solver_alone_drifts_with_the_samples_at_rest():
    """Why the node needs the rule: the compiled solver's answers depend on the count."""
    geom = hx.load_geometry('hexaslide_scaled')
    runs = []
    for n in (3, 4, 5, 6):
        solver = hx.ForwardKinematics(geom, predict=True)
        runs.append(_stream(lambda q: (solver.solve(q).pose,), n)[1])
    assert any(not np.array_equal(a, b) for run in runs[1:] for a, b in zip(run, runs[0]))


@pytest.mark.parametrize('n_at_rest', [1, 2, 4, 7])
def test_the_stream_after_any_number_of_samples_at_rest_is_bit_identical(n_at_rest):
    reference = _stream(_Hexaslide(PARAMS).fk, 3)
    at_rest, moving = _stream(_Hexaslide(PARAMS).fk, n_at_rest)
    assert all(np.array_equal(p, reference[0][0]) for p in at_rest)
    assert all(np.array_equal(a, b) for a, b in zip(moving, reference[1]))


def test_a_sample_equal_to_the_last_gives_the_last_answer_and_a_new_one_is_solved():
    fk = _Hexaslide(PARAMS).fk
    first = fk(_motion(3))
    assert fk(_motion(3)) is first
    moved = fk(_motion(4))
    assert moved is not first and not np.array_equal(moved[0], first[0])
