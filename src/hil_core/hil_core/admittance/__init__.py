"""Admittance models (seed 000 sections 3, 5.1) and the transparency tools (section 5.2).

* ``lti_model.LtiAdmittanceModel``: 6-DOF M, D, K model, exact ZOH discretisation.
* ``floater.CumminsFloater``: floating platform in Cummins form (added mass, hydrostatics,
  linear + quadratic damping, state-space radiation from YAML).
* ``pose_offset``: offset <-> pose/twist/acceleration (rotation-vector orientation offset).
* ``ideal_response.ideal_response``: the model's response to a recorded wrench history.
* ``frf``: averaged-segment H1 FRF, coherence, linear phase fit (delay + RMSE), modal id.
"""
from hil_core.admittance.floater import CumminsFloater
from hil_core.admittance.frf import (FrequencyResponse, PhaseFit, Transparency, find_impulses,
                                     fit_linear_phase, frf_h1, identify_modal, segment_starts,
                                     transparency)
from hil_core.admittance.ideal_response import IdealResponse, ideal_response
from hil_core.admittance.lti_model import (LtiAdmittanceModel, Radiation, matrices_from_frequency,
                                           matrices_from_mass, zoh)

__all__ = ['CumminsFloater', 'FrequencyResponse', 'IdealResponse', 'LtiAdmittanceModel', 'PhaseFit',
           'Radiation', 'Transparency', 'find_impulses', 'fit_linear_phase', 'frf_h1', 'ideal_response',
           'identify_modal', 'matrices_from_frequency', 'matrices_from_mass', 'segment_starts',
           'transparency', 'zoh']
