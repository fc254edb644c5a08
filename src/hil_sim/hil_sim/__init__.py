"""hil_sim: mock hardware for CI (hexapod drives, iiwa, F/T sensor, Net F/T UDP device)."""
