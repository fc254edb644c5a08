"""5-axis hybrid robot of seed 003: 3-leg translational parallel manipulator + tilt-rotary table.

Modules: ``params`` (YAML), ``kinematics`` (eq. 1-20 with derivatives), ``dynamics``
(controller model eq. 21-27 and the simulated plant), ``control`` (CTM eq. 28/36 with the
nonlinear integrator eq. 29-35), ``gcode`` + ``trajectory`` (G-code path at the control rate),
``tracking`` (one control cycle and the closed-loop simulation).
"""

# Joint names shared by the mock drives, the controller and the kinematics node: leg lengths
# l_1..l_3 (m, absolute, eq. 3) then table tilt theta_4 and rotary theta_5 (rad, eq. 17).
JOINT_NAMES = ('hybrid5_leg_1', 'hybrid5_leg_2', 'hybrid5_leg_3', 'hybrid5_table_tilt', 'hybrid5_table_rotary')
