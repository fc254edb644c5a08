"""The HMI's plain-Python parts (no ROS graph, no browser): transform tree, URDF model, strip
charts, panel digest, workspace surfaces, timeline bar. Expected values from closed forms."""
import math

import numpy as np
import pytest

from hil_core.data_paths import urdf_file
from hil_nodes.hmi.extras import robot_extras
from hil_nodes.hmi.panel_model import PanelModel, is_duplicate_planner_event, level_int
from hil_nodes.hmi.params import check_values, is_loopback
from hil_nodes.hmi.robot_model import load_model
from hil_nodes.hmi.strip import StripChart
from hil_nodes.hmi.tf_tree import TfTree, xyzw_to_wxyz
from hil_nodes.hmi.timeline_svg import timeline_svg


def _rz(angle):
    return np.array([0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2)])


def test_tf_tree_composes_a_chain_like_the_closed_form():
    tree = TfTree()
    tree.set('world', 'a', (1.0, 0.0, 0.0), _rz(math.pi / 2))     # a: at x=1, turned 90 deg about z
    tree.set('a', 'b', (0.5, 0.0, 0.2), _rz(0.0))                  # b: 0.5 along a's x
    xyz, quat = tree.pose('b', 'world')
    np.testing.assert_allclose(xyz, [1.0, 0.5, 0.2], atol=1e-12)   # a's x is world's y
    np.testing.assert_allclose(np.abs(quat), np.abs(_rz(math.pi / 2)), atol=1e-12)
    assert tree.root_of('b') == 'world'
    assert tree.pose('b', 'elsewhere') is None
    assert xyzw_to_wxyz((1, 2, 3, 4)) == (4.0, 1.0, 2.0, 3.0)


def test_hexapod_model_places_each_slider_along_its_guide():
    model = load_model(urdf_file('hexafloat_scaled.urdf').read_text())
    assert model.root == 'hexapod_base' and len(model.joint_names) == 6
    q = {f'slider_{i}': 0.01 * i for i in range(1, 7)}
    tf = TfTree()
    tf.set('hexapod_base', 'tcp', (0.0, 0.0, 0.2), _rz(0.0))       # the floating joint: from /tf only
    fixed, poses = model.link_poses(q, tf)
    assert fixed == 'hexapod_base'
    np.testing.assert_allclose(poses['tcp'][0], [0.0, 0.0, 0.2])
    for j in model.joints:
        if j.type == 'prismatic':   # origin + q * axis (the axis rotated by the origin's rpy, here none)
            np.testing.assert_allclose(poses[j.child][0], j.xyz + q[j.name] * j.axis / np.linalg.norm(j.axis),
                                       atol=1e-12)


def test_strip_chart_keeps_its_span_and_restarts_when_time_goes_back():
    s = StripChart(span=1.0)
    for k in range(30):
        s.append(0.125 * k, k)                 # exact binary times: 3.625 s last, 2.625 s the oldest kept
    t, v = s.arrays()
    np.testing.assert_array_equal(v, np.arange(21, 30))
    s.append(0.0, float('nan'))
    assert len(s) == 1 and math.isnan(s.arrays()[1][0])


def test_panel_model_digests_supervisor_timebase_cycle_and_events():
    m = PanelModel(span=10.0)
    m.on_mode(0.0, 'IDLE')
    m.on_status(0.5, 'supervisor: run', {'mode': 'RUNNING', 'run_time': '3.25', 'fault_reason': '',
                                         'realtime_held': 'True', 'health_level': 'OK', 'health': ''})
    m.on_status(0.5, 'timebase: buffer', {'factor': '1.0125', 'distance': '2', 'fractional_distance': '2.5'})
    m.on_status(0.6, 'timebase: buffer', {'factor': '0.9875', 'distance': '2', 'fractional_distance': '1.5'})
    m.on_status(0.6, 'planner: cycle', {'late': '3'})
    m.on_status(0.6, 'admittance: cycle', {'late': '4'})
    m.on_event(0.7, 'planner', 'safety_takeover', 'soft limit crossed', level_int(b'\x01'))
    m.on_event(0.8, 'planner', 'back_inside', 'inside', 0)
    assert m.mode == 'RUNNING' and [x[1] for x in m.modes] == ['IDLE', 'RUNNING']
    assert m.late_cycles == 7 and m.realtime_held is True and m.run_time == 3.25
    t, v = m.factor.arrays()
    np.testing.assert_allclose(v, [1.0125, 0.9875])
    np.testing.assert_allclose(m.distance.arrays()[1], [2.5, 1.5])
    assert m.last_safety_event.name == 'safety_takeover' and m.last_event.name == 'back_inside'
    assert '**Real time held:** yes' in m.summary_lines()      # a supervisor without health_judged
    m.on_status(0.9, 'supervisor: run', {'realtime_held': 'True', 'health_judged': 'False'})
    assert '**Real time held:** not judged yet' in m.summary_lines()
    m.on_status(1.0, 'supervisor: run', {'realtime_held': 'True', 'health_judged': 'True'})
    assert '**Real time held:** yes' in m.summary_lines()
    text = '\n'.join(m.summary_lines())
    assert 'RUNNING' in text and '0.9875' in text and 'safety_takeover' in text
    assert is_duplicate_planner_event('homed') and not is_duplicate_planner_event('returning_home')


def test_workspace_surfaces_lie_on_the_soft_and_hard_limit():
    extras = robot_extras('hexaslide_scaled', 'hexapod_base')
    ws = extras.workspace
    assert extras.leg_length > 0 and ws is not None
    centre = np.asarray(ws.soft.centre, float)
    for s in extras.surfaces:
        expected = 1.0 if s.name == 'soft_limit' else ws.hard_expansion
        levels = [ws.soft.level_point(v - centre) for v in s.vertices[::7]]
        np.testing.assert_allclose(levels, expected, rtol=1e-6)
        assert s.faces.max() < len(s.vertices)
    assert robot_extras('iiwa14', 'iiwa_link_0').leg_length is None


def test_timeline_bar_has_a_segment_per_mode_and_a_tick_per_event():
    svg = timeline_svg([(0.0, 'IDLE'), (1.0, 'RUNNING')], [(1.5, 'planner', 'fault', 'x<y', 2)], 4.0, 2.0)
    assert svg.count('<rect') == 2 and svg.count('stroke="#e53935"') == 1 and 'x&lt;y' in svg


def test_controls_beyond_localhost_need_a_token():
    from types import SimpleNamespace
    assert is_loopback('127.0.0.1') and is_loopback('localhost') and not is_loopback('0.0.0.0')
    assert check_values(SimpleNamespace(host='0.0.0.0', control_token=''))
    assert not check_values(SimpleNamespace(host='0.0.0.0', control_token='s3cret'))
