"""Supervision: HIL modes, liveness, the lifecycle plan, real-time health, status names, lockstep, rates and cycle health."""
