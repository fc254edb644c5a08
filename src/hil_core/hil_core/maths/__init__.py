"""Shared maths: rotations, TF frames, the numba cache helper."""
