"""`hil workspace --robot hexaslide_scaled|hexaslide_full [--out FILE]`: offline total-orientation
workspace (seed 001 section 3.1), modified-ellipsoid soft limit and expanded hard limit written to
config/workspace_<robot>.yaml, plus a figure of the XZ/YZ sections next to it."""
from __future__ import annotations

import pathlib
import sys

import yaml

from hil_nodes.bringup.system import repo_root


def add_parser(sub) -> None:
    p = sub.add_parser('workspace', help='compute the workspace soft/hard limits of a Hexaslide (seed 001)')
    p.add_argument('--robot', required=True, choices=('hexaslide_scaled', 'hexaslide_full'))
    p.add_argument('--out', help='output YAML (default: config/workspace_<robot>.yaml)')
    p.add_argument('--figure', help='figure path (default: next to --out, .png)')
    p.add_argument('--step-deg', type=float, default=5.0, help='azimuth and elevation step (deg)')
    p.add_argument('--orientations', type=int, default=3,
                   help='samples of each of roll, pitch, yaw within the table-3 ranges')
    p.add_argument('--r-max', type=float, default=None, help='search radius (m), default 3x the largest range')
    p.add_argument('--kinetostatic-soft', type=float, default=2.5,
                   help='bound on ||J^-T|| of the soft limit, relative to its value at home')
    p.add_argument('--kinetostatic-hard', type=float, default=3.5,
                   help='less restrictive bound of the hard limit, relative to its value at home')
    p.add_argument('--min-expansion', type=float, default=1.25,
                   help='least soft-to-hard expansion the fit leaves room for')
    p.set_defaults(func=run)


def run(args) -> int:
    from hil_core.planner.workspace import WorkspaceSettings, compute_workspace
    from hil_core.planner.workspace_plot import plot_sections

    if args.step_deg <= 0 or args.orientations < 1:
        print('hil workspace: --step-deg must be > 0 and --orientations >= 1', file=sys.stderr)
        return 2
    if not 1.0 <= args.kinetostatic_soft < args.kinetostatic_hard:
        print('hil workspace: need 1 <= --kinetostatic-soft < --kinetostatic-hard', file=sys.stderr)
        return 2
    out = pathlib.Path(args.out) if args.out else repo_root() / 'config' / f'workspace_{args.robot}.yaml'
    settings = WorkspaceSettings(phi_step_deg=args.step_deg, theta_step_deg=args.step_deg,
                                 orientations_per_axis=args.orientations, r_max=args.r_max,
                                 kinetostatic_soft=args.kinetostatic_soft,
                                 kinetostatic_hard=args.kinetostatic_hard, min_expansion=args.min_expansion)
    try:
        result = compute_workspace(args.robot, settings, progress=lambda m: print(m, flush=True))
    except ValueError as exc:
        print(f'hil workspace: {exc}', file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    header = (f'# Workspace limits of {args.robot} (seed 001 section 3.1), written by `hil workspace`.\n'
              '# Soft limit: modified ellipsoid h(P) <= 1 about `centre` (hil_core.planner.ellipsoid);\n'
              '# hard limit: h(P) <= hard_expansion. Regenerate rather than edit by hand.\n')
    out.write_text(header + yaml.safe_dump(result.as_dict(), sort_keys=False))
    figure = pathlib.Path(args.figure) if args.figure else out.with_suffix('.png')
    plot_sections(result, str(figure))
    print(f'wrote {out} and {figure} in {result.seconds:.1f} s')
    return 0
