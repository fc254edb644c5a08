"""Free-floating space manipulator (seed 002): satellite + KUKA iiwa 14 in zero gravity.

* ``model``: the pinocchio free-flyer model, momentum map (eq. 6-7), Dynamic Jacobian (eq. 8);
* ``control``: the Dynamic-Jacobian control law (eq. 10-11, P and PI/PID), damped
  pseudo-inverse, smooth joint velocity / acceleration / position limiting;
* ``plant``: one HIL loop iteration (the six steps of seed 002 section 4.1, eq. 12), compiled
  (``plant_kernel`` with ``model_kernel``); ``plant_numpy`` is its pinocchio + numpy oracle;
* ``reference``: offline forward-dynamics simulation driven by recorded joint motion and the
  comparison of satellite and end-effector histories (seed 002 figs 10-13).
"""
