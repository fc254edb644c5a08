"""Figures of docs/kinematics.md (python docs/figures/make_kinematics_figures.py).

kinematics_geometry.png: top and side views of the reconstructed scaled Hexaslide at home and at
a corner of the nominal box; kinematics_index.png: kinetostatic index ||J^-T|| over surge/sway
at home height for three orientations (both robots' layouts are identical up to scale).
"""
import pathlib

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from hil_core import hexaslide as hx  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent


def draw(ax, g, pose, axes, style):
    q = hx.inverse_kinematics(g, pose).q[0]
    sliders, joints = hx.chain_points(g, pose, q)
    a, b = axes
    for i in range(6):
        ax.plot([sliders[i, a], joints[i, a]], [sliders[i, b], joints[i, b]], style, lw=1.5)
        ax.annotate(str(i + 1), sliders[i, [a, b]], fontsize=8, xytext=(3, 3), textcoords='offset points')
    ring = np.r_[np.arange(6), 0]
    order = np.argsort(np.arctan2(joints[:, 1] - pose[1], joints[:, 0] - pose[0]))
    ring = np.r_[order, order[0]]
    ax.plot(joints[ring, a], joints[ring, b], style, lw=2.5)
    ax.plot(sliders[:, a], sliders[:, b], 's', color=style[0], ms=5)


def geometry_figure():
    g = hx.load_geometry('hexaslide_scaled')
    home = hx.home_pose(g)
    corner = hx.poses_from_offsets(g, g.workspace_half_range * [1, 1, 1, 1, 1, 1])[0]
    fig, (top, side) = plt.subplots(1, 2, figsize=(11, 5))
    for i in range(6):
        u, c = g.guide_directions[i], g.guide_origins[i]
        ends = np.array([c + (g.q_home[i] + g.stroke_min[i]) * u, c + (g.q_home[i] + g.stroke_max[i]) * u])
        top.plot(ends[:, 0], ends[:, 1], color='0.6', lw=6, solid_capstyle='butt')
    draw(top, g, home, (0, 1), 'b-')
    draw(top, g, corner, (0, 1), 'r--')
    draw(side, g, home, (0, 2), 'b-')
    draw(side, g, corner, (0, 2), 'r--')
    top.set(title='top view (grey: guide strokes)', xlabel='x [m]', ylabel='y [m]', aspect='equal')
    side.set(title='side view (x-z)', xlabel='x [m]', ylabel='z [m]', aspect='equal')
    side.axhline(0, color='0.6', lw=4)
    top.plot([], [], 'b-', label='home')
    top.plot([], [], 'r--', label='box corner (+50, +25, +25 mm, +5, +8, +3 deg)')
    top.legend(loc='lower left', fontsize=8)
    fig.suptitle('Hexaslide 1:3 (seed 001 tables 1-2, reconstructed layout)')
    fig.tight_layout()
    fig.savefig(HERE / 'kinematics_geometry.png', dpi=110)


def index_figure():
    g = hx.load_geometry('hexaslide_scaled')
    hr = g.workspace_half_range
    xs, ys = np.linspace(-1.5 * hr[0], 1.5 * hr[0], 61), np.linspace(-1.5 * hr[1] * 2, 1.5 * hr[1] * 2, 61)
    X, Y = np.meshgrid(xs, ys)
    fig, axs = plt.subplots(1, 3, figsize=(14, 4.2), sharey=True)
    for ax, (title, rpy) in zip(axs, [('level', [0, 0, 0]), ('roll +5, pitch +8 deg', [hr[3], hr[4], 0]),
                                      ('roll -5, pitch +8, yaw +3 deg', [-hr[3], hr[4], hr[5]])]):
        off = np.zeros((X.size, 6))
        off[:, 0], off[:, 1], off[:, 3:] = X.ravel(), Y.ravel(), rpy
        poses = hx.poses_from_offsets(g, off)
        k = hx.kinetostatic_index(g, poses)
        k[~hx.inverse_kinematics(g, poses).ok] = np.nan
        im = ax.contourf(X * 1e3, Y * 1e3, k.reshape(X.shape), levels=20, cmap='viridis')
        ax.add_patch(plt.Rectangle((-hr[0] * 1e3, -hr[1] * 1e3), 2 * hr[0] * 1e3, 2 * hr[1] * 1e3,
                                   fill=False, ec='w', lw=1.5))
        ax.set(title=title, xlabel='surge [mm]')
        fig.colorbar(im, ax=ax)
    axs[0].set_ylabel('sway [mm]')
    fig.suptitle('kinetostatic index ||J^-T|| at home height (white: nominal box; blank: IK check fails)')
    fig.tight_layout()
    fig.savefig(HERE / 'kinematics_index.png', dpi=100)


if __name__ == '__main__':
    geometry_figure()
    index_figure()
