"""Parameter types in every source (hil_nodes.framework.param_sources, hil_nodes.framework.base): scalars typed
exactly as rcl types them (rcl itself is the oracle), a wrong type in any params file and in
any order refuses configure with one line naming node, parameter, expected type and value;
a correct later value for a parameter is applied; unknown names are reported. rclpy nodes in
this process, no DDS traffic (configure is called directly)."""
import math

import pytest
import rclpy
import yaml
from rclpy.context import Context
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.node import Node
from rclpy.parameter import Parameter

from hil_nodes.framework.base import HilLifecycleNode, Param
from hil_nodes.framework.param_sources import file_values, ros_arg_sources, type_problem, unknown_parameters


class Typed(HilLifecycleNode):
    PARAMS = (Param('gain', float, 1.0, 'a double', range=(0.0, 10.0)),
              Param('count', int, 2, 'an integer', range=(0, 100)),
              Param('label', str, 'x', 'a string'),
              Param('weights', 'float[]', [1.0, 2.0], 'doubles'))

    def __init__(self, node_name='typed', **kwargs):
        super().__init__(node_name, **kwargs)


@pytest.fixture
def context():
    ctx = Context()
    rclpy.init(context=ctx, args=[])
    yield ctx
    rclpy.try_shutdown(context=ctx)


def write(tmp_path, name, body):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body) if isinstance(body, dict) else body)
    return str(path)


SCALARS = '''typed:
  ros__parameters:
    i1: 3
    i2: -2
    i3: +5
    i4: 0x10
    i5: 010
    d1: 3.0
    d2: 1e3
    d3: 5.
    d4: .5
    d5: -.inf
    d6: .nan
    b1: yes
    b2: On
    b3: False
    s1: "3"
    s2: '4.5'
    s3: 1_000
    s4: abc
    a1: [1, 2]
    a2: [1.0, 2.5]
    a3: [a, b]
    a4: [true, false]
    nested:
      inner: 7
'''


def test_scalars_are_typed_as_rcl_types_them(context, tmp_path):
    path = write(tmp_path, 'scalars.yaml', SCALARS)
    node = Node('typed', context=context, cli_args=['--ros-args', '--params-file', path])
    try:
        rcl = {name: p.value for name, p in node._parameter_overrides.items()}
    finally:
        node.destroy_node()
    ours = dict(file_values(path, '/typed'))
    assert set(ours) == set(rcl) and 'nested.inner' in ours
    for name, value in ours.items():
        expected = rcl[name]
        if not isinstance(expected, (bool, int, float, str)):
            expected = list(expected)
        assert type(value) is type(expected), (name, value, expected)
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(expected)
        else:
            assert value == expected, name


def test_sources_follow_the_command_line_and_match_node_sections(tmp_path):
    a = write(tmp_path, 'a.yaml', {'/**': {'ros__parameters': {'gain': 1}},
                                   'other': {'ros__parameters': {'gain': 'no'}},
                                   '/typed': {'ros__parameters': {'count': 3}}})
    b = write(tmp_path, 'b.yaml', {'typed': {'ros__parameters': {'gain': 2.0}}})
    argv = ['prog', '--params-file', 'ignored', '--ros-args', '--params-file', a, '-p', 'label:=7',
            '--params-file', b, '--', '-p', 'x:=1']
    assert ros_arg_sources(argv, '/typed') == [(a, 'gain', 1), (a, 'count', 3), ('-p label:=7', 'label', 7),
                                               (b, 'gain', 2.0)]


@pytest.mark.parametrize('expected, value, text', [
    (float, 3, "expects a double, got integer 3"),
    (int, 6.0, "expects an integer, got double 6.0"),
    (str, 4, "expects a string, got integer 4"),
    (bool, 'yes', "expects a bool, got string 'yes'"),
    ('float[]', [1, 2], "expects a double array, got integer array [1, 2]"),
    ('float[]', [1, 2.0], "expects a double array, got mixed array [1, 2.0]"),
    (float, 2.5, None), ('float[]', [], None), (bool, True, None), (int, 7, None),
])
def test_type_problem_wording(expected, value, text):
    assert type_problem(expected, value) == text


def configure(node) -> tuple[TransitionCallbackReturn, list[str]]:
    messages = []
    node.status = lambda level, message, **values: messages.append(message)
    return node.trigger_configure(), messages


BAD = {'typed': {'ros__parameters': {'gain': 3}}}          # an int where a double is declared
GOOD = {'typed': {'ros__parameters': {'gain': 2.5}}}


@pytest.mark.parametrize('order', ['bad_then_good', 'good_then_bad'])
def test_an_int_for_a_double_in_any_file_and_order_refuses_configure(context, tmp_path, order):
    bad, good = write(tmp_path, 'bad.yaml', BAD), write(tmp_path, 'good.yaml', GOOD)
    files = [bad, good] if order == 'bad_then_good' else [good, bad]
    node = Typed(context=context, cli_args=['--ros-args', '--params-file', files[0], '--params-file', files[1]])
    try:
        result, messages = configure(node)       # built without a traceback; refused here
        assert result == TransitionCallbackReturn.FAILURE
        assert messages == [f"configuration refused: node typed: parameter 'gain' expects a double, "
                            f"got integer 3 (in {bad})"]
    finally:
        node.destroy_node()


def test_a_double_or_string_in_a_later_file_is_not_silently_dropped(context, tmp_path):
    """rcl drops a later value whose type differs from an earlier one's: the node sees it."""
    first = write(tmp_path, 'first.yaml', {'typed': {'ros__parameters': {'count': 3, 'label': 'a'}}})
    later = write(tmp_path, 'later.yaml', {'typed': {'ros__parameters': {'count': 4.5, 'label': 9}}})
    node = Typed(context=context, cli_args=['--ros-args', '--params-file', first, '--params-file', later])
    try:
        result, messages = configure(node)
        assert result == TransitionCallbackReturn.FAILURE
        assert messages[0] == (f"configuration refused: node typed: parameter 'count' expects an integer, got "
                               f"double 4.5 (in {later}); node typed: parameter 'label' expects a string, "
                               f"got integer 9 (in {later})")
    finally:
        node.destroy_node()


def test_good_values_in_both_files_the_later_one_wins_and_unknown_names_are_listed(context, tmp_path):
    first = write(tmp_path, 'first.yaml', {'typed': {'ros__parameters': {'gain': 1.5, 'bogus': 1}}})
    later = write(tmp_path, 'later.yaml', GOOD)
    node = Typed(context=context, cli_args=['--ros-args', '--params-file', first, '--params-file', later])
    try:
        result, messages = configure(node)
        assert result == TransitionCallbackReturn.SUCCESS and node.p.gain == 2.5
        assert unknown_parameters(node) == ['bogus']
    finally:
        node.destroy_node()


def test_overrides_given_in_code_are_checked_and_a_new_value_clears_the_refusal(context):
    node = Typed(context=context, parameter_overrides=[Parameter('weights', value=[1, 2])])
    try:
        result, messages = configure(node)
        assert result == TransitionCallbackReturn.FAILURE
        assert messages == ["configuration refused: node typed: parameter 'weights' expects a double array, "
                            'got integer array [1, 2]']
        assert list(node.get_parameter('weights').value) == [1.0, 2.0]   # declared with its default
        node.set_parameters([Parameter('weights', value=[3.0, 4.0])])
        result, _ = configure(node)
        assert result == TransitionCallbackReturn.SUCCESS and node.p.weights == [3.0, 4.0]
    finally:
        node.destroy_node()
