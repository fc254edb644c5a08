"""The report keys /diagnostics statuses by the node of their name ("<node>: <task>"), never by
hardware_id (which names the hardware); events keep their reporting node in hardware_id."""
import numpy as np

from hil_nodes.recorder.bag import CheckpointWriter, typestore
from hil_nodes.report.bagdata import load_run

DIAG = 'diagnostic_msgs/msg/DiagnosticArray'


def _array(store, t_ns, name, hardware_id, message, **values):
    T = store.types
    stamp = T['builtin_interfaces/msg/Time'](sec=t_ns // 10**9, nanosec=t_ns % 10**9)
    st = T['diagnostic_msgs/msg/DiagnosticStatus'](
        level=0, name=name, message=message, hardware_id=hardware_id,
        values=[T['diagnostic_msgs/msg/KeyValue'](key=k, value=str(v)) for k, v in values.items()])
    return store.serialize_cdr(T[DIAG](header=T['std_msgs/msg/Header'](stamp=stamp, frame_id=''), status=[st]), DIAG)


def test_statuses_keyed_by_the_node_of_their_name(tmp_path):
    store = typestore()
    w = CheckpointWriter(tmp_path / 'bag')
    w.add_topic('/diagnostics', DIAG)
    w.add_topic('/hil/events', DIAG)
    rows = [(1, 'timebase: buffer', 'none', 'following', {'distance': 2, 'factor': 1.0}),
            (2, 'timebase: cycle', 'none', 'ok', {'cycles': 400}),
            (3, 'ft_sensor: signal chain', 'ATI Net F/T 192.168.1.1', 'ok', {'rate_hz': 1600}),
            (4, '/timebase', 'timebase', 'following', {'distance': 3, 'factor': 1.5})]   # a pre-convention bag
    for k, name, hw, message, values in rows:
        w.write('/diagnostics', k * 10**9, _array(store, k * 10**9, name, hw, message, **values))
    w.write('/hil/events', 5 * 10**9, _array(store, 5 * 10**9, 'home_reached', 'planner', 'at home'))
    w.close()
    run = load_run(tmp_path / 'bag')
    assert sorted(run.diagnostics) == ['ft_sensor', 'timebase']      # no 'ATI Net F/T ...', no 'none'
    t, distance = run.diag_series('timebase', 'distance')
    assert np.array_equal(t, [1.0, 4.0]) and np.array_equal(distance, [2.0, 3.0])
    assert [(who, name) for _, who, name, _ in run.events] == [('planner', 'home_reached')]
