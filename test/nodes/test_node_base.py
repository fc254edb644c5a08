"""The lifecycle node base: parameter validation names the parameter, online changes follow the
lifecycle state, empty array defaults keep their type, heartbeats flow, statuses are named
"<node>: <task>" with the hardware as hardware_id."""
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from std_msgs.msg import Header

from hil_core.supervision.status_names import status_node
from hil_nodes.framework.base import REQUIRED, HilLifecycleNode, Param
from rig import start


class Demo(HilLifecycleNode):
    PARAMS = (Param('gain', float, 1.0, 'a gain', range=(0.0, 10.0)),
              Param('rate', float, 2.0, 'a dynamic rate', range=(0.1, 5.0), dynamic=True),
              Param('ip', str, REQUIRED, 'sensor address'),
              Param('names', 'str[]', [], 'optional names'))

    def __init__(self, node_name='demo', **kwargs):
        super().__init__(node_name, **kwargs)


def _messages(diags):
    return [s.message for d in diags for s in d.status]


def test_parameters_validated_by_name_and_online_changes_follow_the_state(ros):
    node = start(ros, Demo, gain=11.0)
    diags = ros.collect(DiagnosticArray, '/diagnostics')
    beats = ros.collect(Header, '/hil/heartbeat')
    assert not ros.change_state('demo', 'configure')
    ros.spin_until(lambda: any("'gain'" in m for m in _messages(diags)), 10, 'gain named')
    node.set_parameters([Parameter('gain', value=1.5)])
    assert not ros.change_state('demo', 'configure')
    ros.spin_until(lambda: any("'ip' is required" in m for m in _messages(diags)), 10, 'ip named')
    node.set_parameters([Parameter('ip', value='10.0.0.2')])
    assert ros.change_state('demo', 'configure') and node.p.gain == 1.5 and node.p.names == []
    assert node.set_parameters([Parameter('names', value=['a'])])[0].successful and node.p.names == ['a']
    assert ros.change_state('demo', 'activate')
    refused = node.set_parameters([Parameter('gain', value=2.0)])[0]
    assert not refused.successful and 'inactive' in refused.reason and node.p.gain == 1.5
    assert node.set_parameters([Parameter('rate', value=3.0)])[0].successful and node.p.rate == 3.0
    out_of_range = node.set_parameters([Parameter('rate', value=9.0)])[0]
    # refused by rcl itself: the range is the parameter's native one (ros2 param describe shows it)
    assert not out_of_range.successful and 'rate' in out_of_range.reason and node.p.rate == 3.0
    (rate,) = node.describe_parameters(['rate'])
    assert (rate.floating_point_range[0].from_value, rate.floating_point_range[0].to_value) == (0.1, 5.0)
    ros.spin_until(lambda: len([b for b in beats if b.frame_id == '/demo']) >= 3, 10, 'heartbeats')


class Probe(HilLifecycleNode):
    STATUS_TASK = 'probe'
    PARAMS = (Param('ip', str, '10.0.0.9', 'board address'),)

    def __init__(self, node_name='probe_node', **kwargs):
        super().__init__(node_name, **kwargs)

    def hardware_id(self):
        return f"demo board {self._declared_or_default('ip')}"


def test_statuses_are_named_node_task_with_the_hardware_as_hardware_id(ros):
    """diagnostic_updater's convention: name "<node>: <task>" (STATUS_TASK, task= per call, the
    base's "<node>: cycle"), hardware_id what the status is about; the node is the name's head."""
    node = start(ros, Probe, ip='10.0.0.2')
    diags = ros.collect(DiagnosticArray, '/diagnostics')
    assert ros.change_state('probe_node', 'configure')
    node.status(1, 'self test running', task='self test', step=3)
    node.count_published('/probe/out')              # gives the node a cycle status

    def seen():
        return {(s.name, s.hardware_id, s.message) for d in diags for s in d.status}
    ros.spin_until(lambda: any(name == 'probe_node: cycle' for name, _, _ in seen()), 10, 'cycle status')
    got = seen()
    assert ('probe_node: probe', 'demo board 10.0.0.2', 'configured') in got
    assert ('probe_node: self test', 'demo board 10.0.0.2', 'self test running') in got
    assert {hw for name, hw, _ in got if name == 'probe_node: cycle'} == {'demo board 10.0.0.2'}
    assert {status_node(name) for name, _, _ in got} == {'probe_node'}


def test_a_software_node_says_none_as_its_hardware(ros):
    start(ros, Demo, ip='10.0.0.2')
    diags = ros.collect(DiagnosticArray, '/diagnostics')
    assert ros.change_state('demo', 'configure')
    ros.spin_until(lambda: any(s.message == 'configured' for d in diags for s in d.status), 10, 'configured')
    assert [(s.name, s.hardware_id) for d in diags for s in d.status if s.message == 'configured'] == \
        [('demo: status', 'none')]


def test_now_ns_is_the_node_clock_simulated_or_not(ros):
    """``now_ns`` reads the system clock directly when no simulated time is active (what rcl's
    ROS_TIME clock reads then) and the simulated time when it is."""
    from rclpy.time import Time
    node = start(ros, Demo, 'clock_demo', ip='10.0.0.2')
    before = node.get_clock().now().nanoseconds
    now = node.now_ns()
    after = node.get_clock().now().nanoseconds
    assert before <= now <= after
    clock = node.get_clock()
    clock._set_ros_time_is_active(True)
    clock.set_ros_time_override(Time(seconds=12.5))
    assert node.now_ns() == 12_500_000_000 == clock.now().nanoseconds
