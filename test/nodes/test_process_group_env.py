"""`hil run` gives each process its own requests (hil_nodes.cli.processes): with --rt and one
process per node, every node process asks for the priority of its role (hil_nodes.runtime.rt_setup), so
one process's environment must not leak into another's, and the run's common environment
reaches all of them."""
import sys

from hil_nodes.cli.processes import ProcessGroup

PRINT = 'import os; print(os.environ.get("HIL_RT_PRIORITY", "-"), os.environ.get("COMMON", "-"))'


def test_each_process_gets_its_own_extra_environment(tmp_path):
    group = ProcessGroup(tmp_path / 'logs', {'COMMON': 'yes', 'HIL_RT_PRIORITY': 'common'})
    procs = [group.start('drives', [sys.executable, '-c', PRINT], {'HIL_RT_PRIORITY': '80'}),
             group.start('planner', [sys.executable, '-c', PRINT], {'HIL_RT_PRIORITY': '77'}),
             group.start('recorder', [sys.executable, '-c', PRINT])]
    for proc in procs:
        assert proc.wait(timeout=30) == 0
    group.stop()
    logs = {name: (tmp_path / 'logs' / f'{name}.log').read_text().split() for name in ('drives', 'planner', 'recorder')}
    assert logs == {'drives': ['80', 'yes'], 'planner': ['77', 'yes'], 'recorder': ['common', 'yes']}
