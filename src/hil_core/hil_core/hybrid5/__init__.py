"""5-axis hybrid robot of seed 003: 3-leg translational parallel manipulator + tilt-rotary table.

Modules: ``params`` (YAML), ``kinematics`` (eq. 1-20 with derivatives), ``dynamics``
(controller model eq. 21-27 and the simulated plant), ``control`` (CTM eq. 28/36 with the
nonlinear integrator eq. 29-35), ``gcode`` + ``trajectory`` (G-code path at the control rate),
``tracking`` (one control cycle and the closed-loop simulation).
"""
