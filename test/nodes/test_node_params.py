"""Wrong parameter types in params files, as a lab would write them, on node processes started
like `hil run --isolated` starts them (`--ros-args --params-file ...`): the process does not
crash while building the node, configure is refused with one line naming the node, the
parameter, the expected type and the value (and the file), in either file order; an unknown
name is a warning; good values in both files configure with the later one."""
import yaml
from diagnostic_msgs.msg import DiagnosticArray

from hil_core.supervision.status_names import status_node
from hil_nodes import topics
from supervisor_fixtures import DUMMY_PATH


def _write(tmp_path, name, values, node='/**'):
    path = tmp_path / name
    path.write_text(yaml.safe_dump({node: {'ros__parameters': values}}))
    return str(path)


def _refusals(diags, node):
    return [st.message for msg in diags for st in msg.status
            if status_node(st.name) == node and st.message.startswith('configuration refused')]


def _wait_for_status_writers(ros, diags_before: int, count: int) -> None:
    """The refusal is published once, at configure, on a volatile topic: the processes'
    /diagnostics writers must be known before it is sent (CI lost one to discovery)."""
    ros.wait_for_publishers(topics.DIAGNOSTICS, diags_before + count, 30.0)


def _files(*paths):
    args = []
    for p in paths:
        args += ['--params-file', p]
    return args


def test_int_for_a_double_in_either_file_order_is_refused_at_configure(ros, tmp_path):
    """mock_hexapod's bandwidth is a double: 50 (an int) in one file and 40.0 in another, in
    both orders (two processes); each survives and names the file with the int."""
    bad = _write(tmp_path, 'bad.yaml', {'bandwidth': 50})
    good = _write(tmp_path, 'good.yaml', {'bandwidth': 40.0})
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    before = ros.node.count_publishers(topics.DIAGNOSTICS)
    procs = {'first': ros.spawn('hil_sim.mock_hardware.node', ['-r', '__node:=first', *_files(bad, good)]),
             'second': ros.spawn('hil_sim.mock_hardware.node', ['-r', '__node:=second', *_files(good, bad)])}
    _wait_for_status_writers(ros, before, 2)
    for name in procs:
        assert not ros.change_state(name, 'configure', timeout=60.0)
    for name, proc in procs.items():
        ros.spin_until(lambda: _refusals(diags, name), 10.0, f'refusal of {name}')
        assert _refusals(diags, name)[-1] == (f"configuration refused: node {name}: parameter 'bandwidth' expects "
                                              f'a double, got integer 50 (in {bad})')
        assert proc.proc.poll() is None, proc.output()
        assert proc.stop() == 0, proc.output()          # a clean exit, no traceback
        assert 'Traceback' not in proc.output()


def test_strings_for_a_bool_refused_unknown_names_warned_good_files_configure(ros, tmp_path):
    typo = _write(tmp_path, 'typo.yaml', {'refuse_configure': 'no', 'raise_on_activte': True})
    ok1 = _write(tmp_path, 'ok1.yaml', {'refuse_configure': True})
    ok2 = _write(tmp_path, 'ok2.yaml', {'refuse_configure': False, 'heartbeat_period': 0.2})
    diags = ros.collect(DiagnosticArray, topics.DIAGNOSTICS, 100)
    before = ros.node.count_publishers(topics.DIAGNOSTICS)
    bad = ros.spawn(str(DUMMY_PATH), ['-r', '__node:=typo', *_files(ok2, typo)])
    fine = ros.spawn(str(DUMMY_PATH), ['-r', '__node:=fine', *_files(ok1, ok2)])
    _wait_for_status_writers(ros, before, 2)
    assert not ros.change_state('typo', 'configure', timeout=60.0)
    assert ros.change_state('fine', 'configure', timeout=60.0)      # the later file's false applies
    ros.spin_until(lambda: _refusals(diags, 'typo'), 10.0, 'refusal of typo')
    assert _refusals(diags, 'typo')[-1] == ("configuration refused: node typo: parameter 'refuse_configure' "
                                            f"expects a bool, got string 'no' (in {typo})")
    assert bad.stop() == 0 and fine.stop() == 0
    assert "node typo: unknown parameter 'raise_on_activte' ignored" in bad.output()
    assert 'unknown parameter' not in fine.output()
