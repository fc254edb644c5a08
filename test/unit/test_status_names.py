"""Status names "<node>: <task>" (diagnostic_updater's convention) and the node they key to."""
from hil_core.supervision.status_names import is_cycle_status, status_name, status_node, status_task


def test_name_and_node_round_trip():
    assert status_name('/ft_sensor', 'signal chain') == 'ft_sensor: signal chain'
    for node, task in [('timebase', 'buffer'), ('mock_hexapod', 'drives'), ('planner', 'workspace'),
                       ('supervisor', 'run'), ('x', 'a: b')]:
        name = status_name(node, task)
        assert (status_node(name), status_task(name)) == (node, task)


def test_names_without_a_task_are_the_node_itself():
    # a foreign publisher or a bag recorded before the convention ('/ft_sensor')
    assert status_node('/ft_sensor') == 'ft_sensor' and status_task('/ft_sensor') == ''
    assert status_node('controller_manager') == 'controller_manager'


def test_cycle_status():
    assert is_cycle_status('timebase: cycle') and not is_cycle_status('timebase: buffer')
    assert not is_cycle_status('cycle') and not is_cycle_status('x: cycles')
