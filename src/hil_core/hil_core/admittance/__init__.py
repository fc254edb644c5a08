"""Admittance models (seed 000 sections 3, 5.1).

* ``lti_model.LtiAdmittanceModel``: 6-DOF M, D, K model, exact ZOH discretisation.
* ``floater.CumminsFloater``: floating platform in Cummins form (added mass, hydrostatics,
  linear + quadratic damping, state-space radiation from YAML).
* ``pose_offset``: offset <-> pose/twist/acceleration (rotation-vector orientation offset).
* ``ideal_response.ideal_response``: the model's response to a recorded wrench history.
(The FRF tools that judge a run, ``hil_core.transparency.frf``, live with the transparency analysis.)
"""
from hil_core.admittance.floater import CumminsFloater
from hil_core.admittance.ideal_response import IdealResponse, ideal_response
from hil_core.admittance.lti_model import (LtiAdmittanceModel, Radiation, matrices_from_frequency,
                                           matrices_from_mass, zoh)

__all__ = ['CumminsFloater', 'IdealResponse', 'LtiAdmittanceModel', 'Radiation', 'ideal_response',
           'matrices_from_frequency', 'matrices_from_mass', 'zoh']
