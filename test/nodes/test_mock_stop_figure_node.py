"""The drives' own figures in their status (hil_sim.mock_hardware): ``stop_peak_d2p``, the peak
second difference of the slider positions over the frames they ran on their own, against the same
figure computed here from the /joint_states they published; and the setpoints' ages, which mean
nothing in lockstep (sim-time stamps) and say so. The rig is test_mock_watchdog_node's: the test
plays the controller at 0.1 m/s, then stops."""
import numpy as np
import pytest

from hil_nodes.msgs.convert import stamp_to_ns
from test_mock_watchdog_node import A_MAX_PLANNER, T_NS, rig

from hil_core.supervision.link_latency import Ages, summary_line


def _status(diags):
    """The mock's last 'drives' status values."""
    for d in reversed(diags):
        for st in d.status:
            if st.name.split(': ')[0].strip('/') == 'mock_hexapod' and st.message.startswith('watchdog: braked'):
                return {kv.key: kv.value for kv in st.values}
    return None


def test_the_stop_figure_is_the_second_difference_of_what_the_drives_published(ros):
    ctl, events, diags = rig(ros)
    ros.spin_until(lambda: ctl.sent >= 60, 30.0, 'the controller running')
    ctl.on = False                                                 # the producer dies mid-motion
    ros.spin_until(lambda: any(st.name == 'fault' for e in events for st in e.status), 20.0, 'fault event')
    trip_ns = stamp_to_ns(next(e for e in events if e.status[0].name == 'fault').header.stamp)
    ros.spin_until(lambda: len(ctl.js) and stamp_to_ns(ctl.js[-1].header.stamp) > trip_ns + 60 * T_NS, 20.0,
                   'frames after the trip')
    ros.spin_until(lambda: _status(diags) is not None and float(_status(diags)['stop_peak_d2p']) > 0, 10.0,
                   'a braked status with its figure')
    values = _status(diags)
    stamps = np.array([stamp_to_ns(m.header.stamp) for m in ctl.js])
    positions = np.array([m.position for m in ctl.js])
    assert np.all(np.diff(stamps) == T_NS)                          # every frame, in lockstep
    d2p = np.abs(np.diff(positions, 2, axis=0)) / (T_NS * 1e-9) ** 2   # centred on stamps[1:-1]
    own = stamps[1:-1] >= trip_ns
    expected = float(d2p[own].max())
    assert float(values['stop_peak_d2p']) == pytest.approx(expected, rel=1e-6)
    assert 1.0 < expected <= A_MAX_PLANNER                          # it braked, within the planner's bound
    # stamped setpoints, but sim-time stamps: counted as such, and the summary says not measured
    assert values['setpoint_age_clock'] == 'sim'
    assert Ages.from_status(values).clock == 'sim'
    assert summary_line(values, parts=True).startswith('not measured (sim time')
