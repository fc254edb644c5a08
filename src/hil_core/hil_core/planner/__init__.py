"""High-level motion planner of the Hexafloat (seed 000 section 4.1, seed 001 section 3):
synchronization coefficient, workspace soft/hard limits with compliant recovery, acceleration
saturation control, and the offline total-orientation workspace tool (``workspace``)."""
