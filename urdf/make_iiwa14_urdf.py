"""Generate urdf/iiwa14.urdf and urdf/satellite_iiwa14.urdf (run: python urdf/make_iiwa14_urdf.py).

Kinematics: the DH table of seed 002 (table 1, classic DH, T_i = Rz(theta_i) Tz(d_i) Rx(alpha_i),
a_i = 0): alpha = 90, -90, -90, 90, 90, -90, 0 deg; d = 0.36, 0, 0.42, 0, 0.40, 0, 0.126 m;
theta_7 offset 180 deg. Link frame ``iiwa_link_i`` is DH frame i-1 turned by theta_i, so joint
i+1 sits at xyz (0, 0, d_i), rpy (alpha_i, 0, 0) in it and the flange ``iiwa_link_ee`` at
(0, 0, d_7) turned by the 180 deg offset.

Limits (KUKA LBR iiwa 14 R820 data sheet): position +-170/120/170/120/170/120/175 deg, velocity 85/85/100/75/130/135/135
deg/s, torque 320/320/176/176/110/40/40 N m. Masses: KUKA CAD values as published (base 7.05,
links 5.29 ... 0.27 kg).

Centres of mass and inertias: a documented geometric approximation, not an identification.
Every link is a uniform solid cylinder (radius r) on the segment of the arm it carries: the
shoulder-elbow length d3 is split half to link 2 (along the joint-3 axis, +y of link 2) and half
to link 3 (upper half of its own z), likewise d5 between links 4 (-y) and 5, and d7 between
links 6 (+y) and 7; link 1 spans the column above the base (0.15 .. 0.36 m), the base 0 .. 0.15 m.

``<ros2_control>`` (urdf/ros2_control_xml.py): the interfaces of lbr_fri_ros2_stack's iiwa
(lbr_system_interface.xacro): position (the joint limits) and effort (+- the torque limit)
commands, position (initial = the space-iiwa start pose, config/mock_iiwa.yaml
initial_positions), velocity and effort (measured torque) states; the plugin is ``--plugin``
(default mock_components/GenericSystem). Hardware mode replaces the block with the one
lbr_ros2_control::SystemInterface requires (hil_core.iiwa.lbr.hardware_urdf, docs/lab.md).
"""
import math
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import ros2_control_xml as rc  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
INITIAL = [-0.458149, 1.151219, 0.012566, 1.179319, -1.102175, -0.04468, 2.457249]   # rad
ALPHA = np.radians([90, -90, -90, 90, 90, -90, 0])
D = [0.36, 0.0, 0.42, 0.0, 0.40, 0.0, 0.126]
LIMIT_DEG = [170, 120, 170, 120, 170, 120, 175]
VEL_DEG = [85, 85, 100, 75, 130, 135, 135]
TORQUE = [320, 320, 176, 176, 110, 40, 40]
MASS = [7.05, 5.29, 5.69, 3.46, 4.12, 1.56, 2.46, 0.27]  # base, links 1..7
# (start, end) points of each link's cylinder in its own frame, radius
SEGMENTS = [((0, 0, 0.0), (0, 0, 0.15), 0.10),
            ((0, 0, 0.15), (0, 0, 0.36), 0.07),
            ((0, 0, 0.0), (0, 0.21, 0.0), 0.07),
            ((0, 0, 0.21), (0, 0, 0.42), 0.07),
            ((0, 0, 0.0), (0, -0.20, 0.0), 0.065),
            ((0, 0, 0.20), (0, 0, 0.40), 0.06),
            ((0, 0, 0.0), (0, 0.063, 0.0), 0.06),
            ((0, 0, 0.063), (0, 0, 0.126), 0.04)]


def cylinder_inertia(m, p0, p1, r):
    """CoM and inertia (about the CoM, link axes) of a solid cylinder from p0 to p1."""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    axis = (p1 - p0) / np.linalg.norm(p1 - p0)
    length = np.linalg.norm(p1 - p0)
    i_axial = 0.5 * m * r * r
    i_trans = m * (3 * r * r + length * length) / 12.0
    inertia = i_trans * np.eye(3) + (i_axial - i_trans) * np.outer(axis, axis)
    return 0.5 * (p0 + p1), inertia


def inertial_xml(m, com, inertia):
    i = inertia
    return (f'    <inertial>\n      <origin xyz="{com[0]:.6g} {com[1]:.6g} {com[2]:.6g}" rpy="0 0 0"/>\n'
            f'      <mass value="{m}"/>\n'
            f'      <inertia ixx="{i[0, 0]:.6g}" ixy="{i[0, 1]:.6g}" ixz="{i[0, 2]:.6g}" '
            f'iyy="{i[1, 1]:.6g}" iyz="{i[1, 2]:.6g}" izz="{i[2, 2]:.6g}"/>\n    </inertial>\n')


def link_xml(name, k):
    m = MASS[k]
    p0, p1, r = SEGMENTS[k]
    com, inertia = cylinder_inertia(m, p0, p1, r)
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    length = float(np.linalg.norm(p1 - p0))
    # visual cylinder: URDF cylinders lie along z; turn z onto the segment direction
    rpy = '0 0 0' if abs(p1[1] - p0[1]) < 1e-12 else f'{-math.copysign(math.pi / 2, p1[1] - p0[1]):.9g} 0 0'
    return (f'  <link name="{name}">\n' + inertial_xml(m, com, inertia)
            + f'    <visual>\n      <origin xyz="{com[0]:.6g} {com[1]:.6g} {com[2]:.6g}" rpy="{rpy}"/>\n'
            f'      <geometry><cylinder radius="{r}" length="{length:.6g}"/></geometry>\n'
            f'      <material name="iiwa_orange"><color rgba="1.0 0.42 0.04 1.0"/></material>\n'
            f'    </visual>\n  </link>\n')


def arm_xml():
    out = [link_xml('iiwa_link_0', 0)]
    parent_xyz, parent_rpy = '0 0 0', '0 0 0'
    for i in range(7):
        lo = math.radians(LIMIT_DEG[i])
        out.append(f'  <joint name="iiwa_joint_{i + 1}" type="revolute">\n'
                   f'    <parent link="iiwa_link_{i}"/>\n    <child link="iiwa_link_{i + 1}"/>\n'
                   f'    <origin xyz="{parent_xyz}" rpy="{parent_rpy}"/>\n    <axis xyz="0 0 1"/>\n'
                   f'    <limit lower="{-lo:.12g}" upper="{lo:.12g}" effort="{TORQUE[i]}" '
                   f'velocity="{math.radians(VEL_DEG[i]):.12g}"/>\n'
                   f'    <dynamics damping="0.0" friction="0.0"/>\n  </joint>\n')
        out.append(link_xml(f'iiwa_link_{i + 1}', i + 1))
        parent_xyz, parent_rpy = f'0 0 {D[i]}', f'{ALPHA[i]:.17g} 0 0'
    out.append('  <joint name="iiwa_joint_ee" type="fixed">\n    <parent link="iiwa_link_7"/>\n'
               f'    <child link="iiwa_link_ee"/>\n    <origin xyz="0 0 {D[6]}" rpy="0 0 {math.pi:.17g}"/>\n'
               '  </joint>\n  <link name="iiwa_link_ee"/>\n')
    return ''.join(out)


HEADER = '<?xml version="1.0"?>\n<!-- generated by urdf/make_iiwa14_urdf.py: edit that file, not this one -->\n'


def control_xml(system: str, plugin: str = rc.MOCK_PLUGIN, params: dict | None = None) -> str:
    # lbr_fri_ros2_stack's interfaces (lbr_description/ros2_control/lbr_system_interface.xacro,
    # rolling 218d723): position and effort commands (joint limits, +- max torque), position,
    # velocity and effort states; the hardware block of mode:=hardware is hil_core.iiwa.lbr's
    joints = [rc.JointSpec(f'iiwa_joint_{i + 1}',
                           command={'position': (-math.radians(LIMIT_DEG[i]), math.radians(LIMIT_DEG[i])),
                                    'effort': (-TORQUE[i], TORQUE[i])},
                           state={'position': INITIAL[i], 'velocity': None, 'effort': None})
              for i in range(7)]
    return rc.block(system, joints, plugin, params)


def urdf_texts(plugin: str = rc.MOCK_PLUGIN, params: dict | None = None) -> dict:
    """{file name: URDF text} of both robots with the given hardware plugin."""
    arm = HEADER + '<robot name="iiwa14">\n' + arm_xml() + control_xml('iiwa14', plugin, params) + '</robot>\n'
    # Satellite of seed 002: 100 kg, principal inertias 2.83 / 6.08 / 7.42 kg m^2 (products zero),
    # CoM at the link origin; drawn as a 1 m cube. The arm base sits on the +x face; the
    # mounting point r_q and orientation are parameters of hil_core.space (this is the default).
    sat = ('  <link name="satellite">\n    <inertial>\n      <origin xyz="0 0 0" rpy="0 0 0"/>\n'
           '      <mass value="100.0"/>\n      <inertia ixx="2.83" ixy="0" ixz="0" iyy="6.08" iyz="0" izz="7.42"/>\n'
           '    </inertial>\n    <visual>\n      <geometry><box size="1.0 1.0 1.0"/></geometry>\n'
           '      <material name="satellite_gold"><color rgba="0.83 0.69 0.22 1.0"/></material>\n'
           '    </visual>\n  </link>\n'
           '  <joint name="satellite_mount" type="fixed">\n    <parent link="satellite"/>\n'
           '    <child link="iiwa_link_0"/>\n    <origin xyz="0.5 0 0" rpy="0 1.5707963267948966 0"/>\n  </joint>\n')
    space = (HEADER + '<robot name="satellite_iiwa14">\n' + sat + arm_xml()
             + control_xml('satellite_iiwa14', plugin, params) + '</robot>\n')
    return {'iiwa14.urdf': arm, 'satellite_iiwa14.urdf': space}


def main():
    args = rc.cli(__doc__.splitlines()[0])
    out = pathlib.Path(args.out_dir) if args.out_dir else HERE
    for fname, text in urdf_texts(args.plugin, args.params).items():
        (out / fname).write_text(text)
        print('wrote', out / fname)


if __name__ == '__main__':
    main()
