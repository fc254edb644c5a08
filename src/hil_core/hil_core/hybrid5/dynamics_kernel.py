"""Compiled (numba) step of the hybrid robot's plant (``dynamics.Plant``), float64.

Why: in real time the mock drives run 25 plant steps in every 2.5 ms frame, each commanded by
the hybrid controller's law (``hil_nodes.runtime.servo_link``). ``Plant.accelerations`` -- the coupled
rigid-body equations unrolled on Python floats -- took 25 us a step on an idle machine, more in
the running graph: with the law and the checks a frame cost 2.8 ms, longer than itself. The
same equations compiled take about a microsecond.

``Plant.accelerations`` (Python floats) stays the oracle: test/unit/test_hybrid5_compiled_plant.py
compares both over random states and efforts, and whole trajectories step by step.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import kinematics as kin
from .params import G0


def plant_constants(params) -> np.ndarray:
    """The plant's numbers in the kernel's order (see ``accelerations``)."""
    pl = params.plant
    return np.array([params.R, pl.m_p, pl.m_s, pl.J_r, pl.q_g, pl.fc_leg, pl.v_stribeck, pl.b_leg,
                     pl.fc_table[0], pl.fc_table[1], pl.b_table[0], pl.b_table[1], pl.m4r4, pl.J44, pl.J55],
                    dtype=np.float64)


@njit(cache=True)
def accelerations(c, p, v, theta, omega, F, tau, out):
    """``Plant.accelerations`` (see there) into out[:3] (platform) and out[3:5] (table)."""
    R, m_p, m_s, J_r, q_g = c[0], c[1], c[2], c[3], c[4]
    fc_leg, v_str, b_leg = c[5], c[6], c[7]
    x, y, z = p[0], p[1], p[2]
    vx, vy, vz = v[0], v[1], v[2]
    vv = vx * vx + vy * vy + vz * vz
    cc, h = kin.SQRT3_2 * R, R / 2
    M = np.zeros((3, 3))
    M[0, 0] = m_p
    M[1, 1] = m_p
    M[2, 2] = m_p
    Q = np.zeros(3)
    Q[2] = -G0 * (m_p + 3 * m_s)
    u = np.empty(3)
    w = np.empty(3)
    for i in range(3):
        if i == 0:
            dx, dy = x, y - R
        elif i == 1:
            dx, dy = x - cc, y + h
        else:
            dx, dy = x + cc, y + h
        l = math.sqrt(dx * dx + dy * dy + z * z)
        u[0], u[1], u[2] = dx / l, dy / l, z / l
        s = u[0] * vx + u[1] * vy + u[2] * vz
        fi = F[i] - (fc_leg * math.tanh(s / v_str) + b_leg * s)
        b = J_r / (l * l)
        w[0], w[1], w[2] = (vx - s * u[0]) / l, (vy - s * u[1]) / l, (vz - s * u[2]) / l
        wv = (vv - s * s) / l
        k1 = m_s - b
        k2 = -2 * J_r * s / (l * l * l)
        g1 = m_s * s - b * s
        g2 = -J_r * (vv - s * s) / (l * l * l)
        gz = G0 * q_g * (1 / l)
        for r in range(3):
            for col in range(3):
                M[r, col] += (m_s - b) * u[r] * u[col]
            M[r, r] += b
            bias = k1 * (w[r] * s + u[r] * wv) + k2 * l * w[r] - (g1 * w[r] + g2 * u[r])
            Q[r] += fi * u[r] - bias + G0 * q_g * z * u[r] / (l * l)
        Q[2] -= gz
    a11, a12, a13 = M[0, 0], M[0, 1], M[0, 2]
    a21, a22, a23 = M[1, 0], M[1, 1], M[1, 2]
    a31, a32, a33 = M[2, 0], M[2, 1], M[2, 2]
    c11, c12, c13 = a22 * a33 - a23 * a32, a23 * a31 - a21 * a33, a21 * a32 - a22 * a31
    det = a11 * c11 + a12 * c12 + a13 * c13
    out[0] = (Q[0] * c11 + Q[1] * (a13 * a32 - a12 * a33) + Q[2] * (a12 * a23 - a13 * a22)) / det
    out[1] = (Q[0] * c12 + Q[1] * (a11 * a33 - a13 * a31) + Q[2] * (a13 * a21 - a11 * a23)) / det
    out[2] = (Q[0] * c13 + Q[1] * (a12 * a31 - a11 * a32) + Q[2] * (a11 * a22 - a12 * a21)) / det
    t4 = tau[0] - (c[8] * math.tanh(omega[0] / 1e-3) + c[10] * omega[0])
    t5 = tau[1] - (c[9] * math.tanh(omega[1] / 1e-3) + c[11] * omega[1])
    out[3] = (t4 - c[12] * G0 * math.sin(theta[0])) / c[13]
    out[4] = t5 / c[14]


@njit(cache=True)
def step(c, p, v, theta, omega, F, tau, dt, n):
    """``Plant.step``: n semi-implicit Euler steps of dt, the state arrays changed in place."""
    acc = np.empty(5)
    for _ in range(n):
        accelerations(c, p, v, theta, omega, F, tau, acc)
        for r in range(3):
            v[r] += acc[r] * dt
            p[r] += v[r] * dt
        for r in range(2):
            omega[r] += acc[3 + r] * dt
            theta[r] += omega[r] * dt
