"""Transparency evidence of a HIL run: pure functions used by ``hil report``.

* ``validity``: thresholds and the ``Figure`` / ``Validity`` records (when a figure means nothing);
* ``series``: stamped series on a uniform grid, gaps (missing samples) and usable samples;
* ``pairs``: figures of one input -> output pair (FRF, phase fit, gain, correlation, residual);
* ``design``: the designed delays and gain of the Hexafloat chain from a run's parameters;
* ``stages``: stage-by-stage and cumulative figures of the chain;
* ``verdict``: the sentence a lab engineer signs off on.
"""
