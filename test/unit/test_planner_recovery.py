"""Compliant recovery (seed 001 3.4) and a reproduction of seed 001 fig. 11."""
import pathlib

import numpy as np

from hil_core.supervision.modes import HilMode
from hil_core.planner.config import PlannerConfig, Workspace
from hil_core.planner.dof import pose_to_dof
from hil_core.planner.recovery import CompliantRecovery, plan_blend_home
from hil_core.planner.trajectory_planner import TrajectoryPlanner

ROOT = pathlib.Path(__file__).resolve().parents[2]
WS = Workspace.load(str(ROOT / 'config' / 'workspace_hexaslide_scaled.yaml'))
HOME = np.asarray(WS.home_pose, dtype=float)
DT = 0.0025
A_MAX = np.array([6.0, 6.0, 6.0, 20.0, 20.0, 20.0])


def test_field_acceleration_is_the_seed_spring_damper():
    rec = CompliantRecovery(WS.soft, WS.hard_expansion, DT, A_MAX, k_n=400, c_n=40, c_t=10, inset=0.03)
    p = np.array([0.05, 0.02, 0.01])
    p *= 1.05 / WS.soft.level(p)                               # 5 % outside the soft limit
    v = np.array([0.03, -0.02, 0.01])
    n = WS.soft.normal(p)
    u = p / np.linalg.norm(p)
    dr = np.dot(p - 0.97 * WS.soft.radius(u) * u, n)
    vn = np.dot(v, n)
    expected = -(40 * vn + 400 * dr) * n - 10 * (v - vn * n)
    np.testing.assert_allclose(rec.field_acceleration(p, v), expected, rtol=1e-12)
    # zero exit velocity: only the spring acts, along the inward normal, no division by zero
    a0 = rec.field_acceleration(p, np.zeros(3))
    assert np.all(np.isfinite(a0)) and np.dot(a0, n) < 0
    np.testing.assert_allclose(np.cross(a0, n), 0, atol=1e-12)


def test_zero_exit_velocity_and_exits_on_the_axes_recover():
    axes = np.vstack([np.eye(3), -np.eye(3)])
    for u in axes:
        for speed in (0.0, 0.1):
            rec = CompliantRecovery(WS.soft, WS.hard_expansion, DT, A_MAX)
            p0 = HOME[:3] + 1.01 * WS.soft.radius(u) * u
            x0 = np.r_[p0, 0.0, 0.0, 0.0]
            rec.start(x0, np.r_[speed * u, 0.0, 0.0, 0.0])
            xs = [x0]
            for _ in range(4000):
                x, back = rec.step()
                xs.append(x)
                if back:
                    break
            assert back, f'no return for exit along {u} at {speed} m/s'
            xs = np.array(xs)
            levels = WS.soft.level(xs[:, :3] - HOME[:3])
            assert levels.max() < WS.hard_expansion
            # stays on the axis: the tangent damper has nothing to act on, the normal is the axis
            off = xs[:, :3] - HOME[:3] - np.outer((xs[:, :3] - HOME[:3]) @ u, u)
            assert np.abs(off).max() < 1e-12


def test_blend_home_is_velocity_continuous_and_ends_at_rest():
    x_prev = np.r_[HOME[:3] + [0.03, 0.01, 0.0], 0.02, 0.0, 0.0]
    x0 = x_prev + np.r_[-0.1, 0.05, 0.02, 0.0, 0.0, 0.0] * DT
    y = plan_blend_home(x_prev, x0, pose_to_dof(HOME), DT, A_MAX, None, 'quintic', 0.5)
    seq = np.vstack([x_prev, x0, y, y[-1]])
    acc = np.diff(seq, 2, axis=0) / DT ** 2
    assert np.all(np.abs(acc) <= A_MAX)
    assert np.array_equal(y[-1], pose_to_dof(HOME))
    # the first step continues the re-entry velocity (ramp slope zero at the start)
    np.testing.assert_allclose((y[0] - x0) / DT, (x0 - x_prev) / DT, atol=A_MAX.max() * DT)


def test_seed_001_fig_11_sinusoid_in_the_local_xy_plane(artifacts_dir):
    """Sinusoidal reference in the local XY plane (local z = 0, global z = home height): it exits the
    soft limit, the planner deflects it between the soft and the hard surface, brings it back inside
    with a continuous velocity and returns home (seed 001 section 4, fig. 11)."""
    planner = TrajectoryPlanner(PlannerConfig(WS, homing_min_duration=0.01, sync_duration=0.25))
    planner.step(None, None, HilMode.IDLE, measured=HOME)
    n = 2400
    t = np.arange(n) * DT
    ax = WS.soft.semi_axes
    refs = np.tile(HOME, (n, 1))
    refs[:, 0] += 1.3 * ax[0] * np.sin(2 * np.pi * 0.25 * t)
    refs[:, 1] += 0.6 * ax[2] * np.sin(2 * np.pi * 0.5 * t)
    outs, phases, events = [], [], []
    for k in range(n):
        r = planner.step(refs[k], k + 1, HilMode.HOMING)
        outs.append(r.pose)
        phases.append(r.phase)
        events += [(k, e) for e in r.events]
    x = pose_to_dof(np.array(outs))
    names = [e.name for _, e in events]
    assert names[:3] == ['homed', 'synchronized', 'safety_takeover'] and names[-2:] == ['back_inside', 'home_reached']
    k_exit = next(k for k, e in events if e.name == 'safety_takeover')
    k_back = next(k for k, e in events if e.name == 'back_inside')
    k_home = next(k for k, e in events if e.name == 'home_reached')
    local = x[:, :3] - HOME[:3]
    levels = WS.soft.level(local)
    assert 1.0 < levels[k_exit:k_back].max() < WS.hard_expansion          # between the surfaces
    assert np.all(levels[:k_exit] <= 1.0)
    assert np.all(levels[k_back:] <= 1.0)
    assert np.all(np.abs(np.diff(x, 2, axis=0)) / DT ** 2 <= planner.a_max + 1e-9)
    assert np.array_equal(x[-1], pose_to_dof(HOME)) and np.all(planner.v == 0)
    assert np.abs(local[:, 2]).max() < 0.02            # deflected in 3-D, stays near the plane
    _plot_fig11(artifacts_dir, t, refs, x, levels, k_exit, k_back, k_home)


def _plot_fig11(artifacts_dir, t, refs, x, levels, k_exit, k_back, k_home):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(1, 3, figsize=(15, 4.6))
    phi = np.radians(np.linspace(-180, 180, 721))
    u = np.stack([np.cos(phi), np.sin(phi), np.zeros_like(phi)], axis=1)
    r_e = WS.soft.radius(u)
    ref_l, loc = 1e3 * (refs[:, :3] - HOME[:3]), 1e3 * (x[:, :3] - HOME[:3])
    axs[0].plot(1e3 * r_e * u[:, 0], 1e3 * r_e * u[:, 1], 'r:', label='soft limit (z = 0 section)')
    axs[0].plot(1e3 * WS.hard_expansion * r_e * u[:, 0], 1e3 * WS.hard_expansion * r_e * u[:, 1], 'b--',
                label='hard limit')
    axs[0].plot(ref_l[:, 0], ref_l[:, 1], color='0.6', label='sinusoidal reference')
    axs[0].plot(loc[:k_exit, 0], loc[:k_exit, 1], 'k-', label='planner output (model)')
    axs[0].plot(loc[k_exit:k_back, 0], loc[k_exit:k_back, 1], 'r-', lw=2, label='compliant recovery')
    axs[0].plot(loc[k_back:, 0], loc[k_back:, 1], 'g-', label='return home')
    axs[0].set_xlabel('x [mm]')
    axs[0].set_ylabel('y [mm]')
    axs[0].set_aspect('equal')
    axs[0].legend(fontsize=7)
    axs[0].set_title('seed 001 fig. 11: local XY plane')
    r = np.linalg.norm(x[:, :3] - HOME[:3], axis=1)
    axs[1].plot(t, 1e3 * r, 'k', label='|P|')
    r_soft = np.where(r > 1e-6, r / np.maximum(levels, 1e-12), np.nan)
    axs[1].plot(t, 1e3 * r_soft, 'r', label='r_e soft along P')
    axs[1].plot(t, 1e3 * WS.hard_expansion * r_soft, 'b', label='r_e hard along P')
    for k in (k_exit, k_back, k_home):
        axs[1].axvline(t[k], color='k', ls=':')
    axs[1].set_xlabel('t [s]')
    axs[1].set_ylabel('[mm]')
    axs[1].legend(fontsize=7)
    axs[1].set_title('radius vs soft/hard radius (fig. 13)')
    for i, c in enumerate('xyz'):
        axs[2].plot(t, loc[:, i], label=c)
    axs[2].set_xlabel('t [s]')
    axs[2].set_ylabel('TCP about home [mm]')
    axs[2].legend(fontsize=7)
    axs[2].set_title('velocity-continuous TCP position (fig. 14)')
    fig.tight_layout()
    fig.savefig(pathlib.Path(artifacts_dir) / 'planner_seed001_fig11.png', dpi=100)
    plt.close(fig)


def test_look_ahead_reports_an_exit_before_it_is_commanded():
    planner = TrajectoryPlanner(PlannerConfig(WS, homing_min_duration=0.01, sync_duration=0.01))
    planner.step(None, None, HilMode.IDLE, measured=HOME)
    refs = [np.r_[HOME[:3] + [min(0.1 * k * DT, 0.1), 0, 0], HOME[3:]] for k in range(600)]
    first_prediction = first_takeover = None
    for k in range(len(refs) - 8):
        r = planner.step(refs[k], k + 1, HilMode.HOMING, future=np.array(refs[k + 1:k + 9]))
        for e in r.events:
            if e.name == 'exit_predicted' and first_prediction is None:
                first_prediction = k
                assert e.values['frames_ahead'] == 8
            if e.name == 'safety_takeover':
                first_takeover = k
        if first_takeover is not None:
            break
    assert first_prediction is not None and first_takeover is not None
    assert first_takeover - first_prediction >= 7          # known ~8 frames (20 ms) in advance
    # NaN rows in the buffer are skipped, not a crash
    planner.step(refs[0], 10_000, HilMode.HOMING, future=np.full((3, 7), np.nan))


def test_measured_pose_beyond_the_hard_limit_faults_with_a_controlled_stop():
    planner = TrajectoryPlanner(PlannerConfig(WS, homing_min_duration=0.01, sync_duration=0.01))
    planner.step(None, None, HilMode.IDLE, measured=HOME)
    outs = []
    for k in range(100):                                     # moving at the velocity limit along y
        ref = np.r_[HOME[:3] + [0, min(0.1 * k * DT, 0.03), 0], HOME[3:]]
        outs.append(planner.step(ref, k + 1, HilMode.HOMING).pose)
    assert planner.phase is HilMode.RUNNING and planner.v[1] > 0.05
    u = np.array([0.0, 0.0, 1.0])
    beyond = np.r_[HOME[:3] + 1.01 * WS.hard_expansion * WS.soft.radius(u) * u, HOME[3:]]
    res = planner.step(ref, 1000, HilMode.RUNNING, measured=beyond)
    assert [e.name for e in res.events] == ['fault'] and res.phase is HilMode.FAULT
    assert 'hard limit' in res.events[0].message
    outs.append(res.pose)
    for k in range(100):
        outs.append(planner.step(ref, 1001 + k, HilMode.FAULT).pose)
    x = pose_to_dof(np.array(outs))
    assert np.all(np.abs(np.diff(x, 2, axis=0)) / DT ** 2 <= planner.a_max + 1e-9)
    assert np.all(planner.v == 0) and np.array_equal(outs[-1], outs[-2])
    # a fault is not cleared by more frames; only the supervisor's IDLE (reset) ends it
    assert planner.step(ref, 2000, HilMode.FAULT).phase is HilMode.FAULT
    assert planner.step(ref, 2001, HilMode.IDLE).phase is HilMode.IDLE


def test_reference_orientation_is_held_inside_the_workspace_orientation_range():
    from hil_core.maths.rotations import quat_to_rpy, rpy_to_quat
    assert WS.orientation_range is not None
    planner = TrajectoryPlanner(PlannerConfig(WS, homing_min_duration=0.01, sync_duration=0.01))
    planner.step(None, None, HilMode.IDLE, measured=HOME)
    outs, names = [], []
    for k in range(600):
        roll = min(0.5 * k * DT, 0.5)                        # 29 deg, far beyond the 5 deg of table 3
        res = planner.step(np.r_[HOME[:3], rpy_to_quat([roll, 0.0, 0.0])], k + 1, HilMode.HOMING)
        outs.append(res.pose)
        names += [e.name for e in res.events]
    assert names.count('orientation_clamped') == 1
    rpy = quat_to_rpy(np.array(outs)[:, 3:])
    # the clamp acts on the reference; the acceleration limiter reaches it with a small transient
    # overshoot (its PID loop), then settles on the range edge
    assert np.abs(rpy[:, 0]).max() <= 1.15 * WS.orientation_range[0]
    assert abs(rpy[-1, 0] - WS.orientation_range[0]) < 1e-6
    x = pose_to_dof(np.array(outs))
    assert np.all(np.abs(np.diff(x, 2, axis=0)) / DT ** 2 <= planner.a_max + 1e-9)
