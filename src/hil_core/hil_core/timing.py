"""Default rates and periods of the Hexafloat control architecture (seed 000, section 5).

High-level algorithms run at 0.4 kHz (move time 2.5 ms), the segmentation move time is
1.25 ms and the servo interrupt 1.6 kHz (0.625 ms). Every node takes these as parameters;
these constants are only the defaults.
"""
HIGH_LEVEL_PERIOD = 0.0025      # s, one move / one lockstep frame
SEGMENTATION_PERIOD = 0.00125   # s
SERVO_PERIOD = 0.000625         # s, 1.6 kHz
SERVO_POINTS_PER_MOVE = round(HIGH_LEVEL_PERIOD / SERVO_PERIOD)  # 4
