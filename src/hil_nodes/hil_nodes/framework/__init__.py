"""The node framework: the lifecycle base class, Param tables and their sources, the cycle status, the lifecycle driver."""
