"""The KUKA LBR iiwa 14 R820: kinematics (pinocchio) and the simulated joints of the mock."""
