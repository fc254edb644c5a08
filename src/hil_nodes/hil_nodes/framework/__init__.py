"""The node framework: the lifecycle base class, Param tables and their sources, the cycle monitors and status, the problem throttle, mode-aware joint-state input, the lifecycle driver."""
