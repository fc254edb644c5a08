"""Figures of the workspace limits: XZ and YZ sections like seed 001 figs 7 and 10."""
from __future__ import annotations

import numpy as np


def _section(result, phi_value, expansion=1.0):
    """Discrete radii and fitted curves in the plane phi = phi_value (theta sweeps the full circle)."""
    sel = np.isclose(result.phi, phi_value)
    theta = result.theta[sel]
    order = np.argsort(theta)
    return sel, theta[order], order


def plot_sections(result, path: str) -> str:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    theta_fine = np.radians(np.linspace(-90, 270, 361))
    half = None
    try:
        from hil_core.hexaslide import load_geometry
        half = load_geometry(result.robot).workspace_half_range[:3]
    except (ValueError, OSError):
        pass
    for ax, phi_value, label in ((axes[0], 0.0, 'XZ section (phi = 0)'),
                                 (axes[1], np.pi / 2, 'YZ section (phi = 90 deg)')):
        sel, theta, order = _section(result, phi_value)
        horiz = np.cos(theta)           # local x (phi = 0) or local y (phi = 90 deg)
        vert = np.sin(theta)
        for radii, style, name in ((result.r_zero, 'g.', 'zero-orientation WS'),
                                   (result.r_soft, 'k.', 'total-orientation WS'),
                                   (result.r_hard, 'm.', 'total-orientation WS, hard kinetostatic bound')):
            r = radii[sel][order]
            ax.plot(1e3 * r * horiz, 1e3 * r * vert, style, ms=4, label=name)
        phi_arr = np.full_like(theta_fine, phi_value)
        from hil_core.planner.ellipsoid import direction
        u = direction(phi_arr, theta_fine)
        r_e = result.ellipsoid.radius(u)
        ax.plot(1e3 * r_e * np.cos(theta_fine), 1e3 * r_e * np.sin(theta_fine), 'r-', label='soft limit (fit)')
        ax.plot(1e3 * result.expansion * r_e * np.cos(theta_fine), 1e3 * result.expansion * r_e * np.sin(theta_fine),
                'b--', label=f'hard limit (x{result.expansion:.2f})')
        if half is not None:
            hx = half[0] if phi_value == 0.0 else half[1]
            hz = half[2]
            ax.plot(1e3 * np.array([-hx, hx, hx, -hx, -hx]), 1e3 * np.array([-hz, -hz, hz, hz, -hz]), 'c-',
                    label='nominal workspace (table 3)')
        ax.set_title(label)
        ax.set_xlabel('x [mm]' if phi_value == 0.0 else 'y [mm]')
        ax.set_ylabel('z [mm] (about home)')
        ax.set_aspect('equal')
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7, loc='lower left')
    fig.suptitle(f'{result.robot}: workspace limits (seed 001 figs 7, 10)')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
