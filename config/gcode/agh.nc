(AGH test path of seed 003 fig. 8: the letters A, G, H in three different planes)
(mm, absolute; program zero = work_origin of config/hybrid5.yaml; feed 2 m/min as the seed)
N10 G21 G90 G17
N20 G0 X-70 Y-20 Z5 A0 C0
N30 G1 Z0 F2000
(letter A in the XY plane, z = 0)
N40 G1 X-60 Y20
N50 G1 X-50 Y-20
N60 G0 Z5
N70 G0 X-65 Y0
N80 G1 Z0
N90 G1 X-55
N100 G0 Z5
(tilt-rotary table: tilt 15 deg and turn 90 deg, then back: both table axes reverse)
N110 G1 A15 C90
N120 G1 A0 C0
(letter G in the ZX plane, y = 0: a 254 deg clockwise arc, then the bar)
N130 G0 X12 Y5 Z16
N140 G1 Y0
N150 G18 G2 X12 Z-16 I-12 K-16
N160 G1 Z0
N170 G1 X3
N180 G0 Y5
(letter H in the YZ plane, x = 60; the bar ends in a small G19 arc)
N190 G0 X65 Y-15 Z-20
N200 G1 X60
N210 G1 Z20
N220 G0 X65
N230 G0 Y15 Z-20
N240 G1 X60
N250 G1 Z20
N260 G0 X65
N270 G0 Y-15 Z0
N280 G1 X60
N290 G1 Y10
N300 G19 G3 Y15 Z5 J0 K5
N310 G0 X65
N320 G17 G0 X0 Y0 Z5 A0 C0
N330 M30
