"""Parts of a plan (hil_nodes.bringup.parts, docs/lab.md "Two or three hosts"): every node of a
system in exactly one part of each split, each part a subset of the one plan, `hil plan --part`
showing it, and the refusals that keep a part from running what another host runs."""
import dataclasses
import datetime
import pathlib

import pytest
import yaml
from hil_plan import hil_plan

from hil_nodes.bringup.plan import bringup_plan, final_parameters
from hil_nodes.bringup.system import BringupError, Scenario, load_system

ROOT = pathlib.Path(__file__).resolve().parents[2]
SYSTEMS = sorted(p.stem for p in (ROOT / 'config' / 'systems').glob('*.yaml'))
STAMP = datetime.datetime(2026, 1, 2, 3, 4, 5)   # the bag's name: the same in every plan of one test


def _raw_parts(system):
    """The system file's parts as written (read here, not through the loader)."""
    return yaml.safe_load((ROOT / 'config' / 'systems' / f'{system}.yaml').read_text())['parts']


@pytest.mark.parametrize('system', SYSTEMS)
def test_every_node_is_in_exactly_one_part_of_every_split(system):
    raw = yaml.safe_load((ROOT / 'config' / 'systems' / f'{system}.yaml').read_text())
    names = [n['name'] for n in raw['nodes']]
    for split, parts in raw['parts'].items():
        members = [m for nodes in parts.values() for m in nodes]
        assert sorted(members) == sorted(names), (system, split)
        assert {'hardware', 'chain'} <= set(parts), (system, split)
        assert 'supervisor' in parts['chain']
        sim_only = [n['name'] for n in raw['nodes'] if n.get('sim_only')]
        assert set(sim_only) <= set(parts['hardware']), (system, split)   # the drives with their watchdog


@pytest.mark.parametrize('system', SYSTEMS)
def test_the_parts_of_a_plan_partition_its_processes_with_the_same_values(system):
    """A part is a subset of the whole plan: the parts together start every process once, each
    with the values the whole plan gives it; what a run adds (recorder, HMI) goes with the
    supervisor."""
    for split in _raw_parts(system):
        whole = bringup_plan(system, split=split, record='/tmp/hil_parts_test', hmi=True, duration=1.0, stamp=STAMP)
        by_name = {s.name: s for s in whole.processes}
        seen = []
        for part in whole.parts:
            plan = bringup_plan(system, split=split, part=part,
                                **({'record': '/tmp/hil_parts_test', 'hmi': True, 'duration': 1.0, 'stamp': STAMP}
                                   if 'supervisor' in whole.parts[part] else {}))
            names = [s.name for s in plan.processes]
            assert names == list(whole.parts[part]), (system, split, part)
            # the other parts' processes of the same run (no recorder or HMI asked of this part)
            same_run = {s.name for s in bringup_plan(system, split=split).processes} if plan.others and \
                'supervisor' not in names else set(by_name)
            assert sorted(s.name for s in plan.others) == sorted(same_run - set(names))
            for spec in plan.processes:       # (but the supervisor's node_parts: started as a part only)
                if spec.kind == 'hil':
                    mine = {k: v for k, v in final_parameters(spec).items() if k != 'node_parts'}
                    assert mine == final_parameters(by_name[spec.name]), (system, part, spec.name)
            seen += names
        assert sorted(seen) == sorted(by_name), (system, split)
        home = next(p for p, n in whole.parts.items() if 'supervisor' in n)
        assert {'recorder', 'hmi'} <= set(whole.parts[home])


def test_the_supervisor_names_the_other_parts_nodes_and_manages_them_all():
    plan = bringup_plan('hexafloat', split='three_hosts', part='chain', nodes_timeout=4.5)
    sup = next(s for s in plan.processes if s.name == 'supervisor').parameters
    assert sorted(sup['node_parts']) == ['admittance:model', 'mock_hexapod:hardware']
    assert sup['nodes_timeout'] == 4.5
    assert sup['managed_nodes'] == ['mock_hexapod', 'ft_sensor', 'admittance', 'kinematics', 'planner', 'timebase']
    assert [s.name for s in plan.processes] == ['ft_sensor', 'kinematics', 'planner', 'timebase', 'supervisor']
    assert plan.clock_owner == 'mock_hexapod'          # on the drives' host: the chain follows its /clock
    assert sup['clock_owner'] == 'mock_hexapod'        # deactivated first in lockstep (lifecycle_plan)
    hardware = bringup_plan('hexafloat', mode='hardware')   # ros2_control's drives: no clock owner
    assert 'clock_owner' not in next(s for s in hardware.processes if s.name == 'supervisor').parameters
    whole = bringup_plan('hexafloat', split='three_hosts')   # one host starts every node: nothing to wait for
    assert 'node_parts' not in next(s for s in whole.processes if s.name == 'supervisor').parameters


def test_hil_plan_part_lists_that_part_only_and_every_part():
    code, out, err = hil_plan('hexafloat', '--part', 'hardware', 'peers:=10.1.2.3,lab-pc-2')
    assert code == 0, err
    doc = yaml.safe_load(out)
    assert (doc['split'], doc['part']) == ('two_hosts', 'hardware')
    assert doc['parts'] == {'hardware': ['mock_hexapod'],
                            'chain': ['ft_sensor', 'admittance', 'kinematics', 'planner', 'timebase', 'supervisor']}
    assert [p['name'] for p in doc['processes']] == ['mock_hexapod'] and doc['container'] == ['mock_hexapod']
    assert doc['processes'][0]['environment'] == {'ROS_STATIC_PEERS': '10.1.2.3;lab-pc-2'}
    code, out, err = hil_plan('hexafloat', 'split:=three_hosts', 'part:=model')
    assert code == 0, err
    doc = yaml.safe_load(out)
    assert [p['name'] for p in doc['processes']] == ['admittance'] and set(doc['parts']) == {'hardware', 'chain', 'model'}
    code, out, _ = hil_plan('hexafloat')                   # no part: every process, the parts shown
    assert code == 0 and yaml.safe_load(out)['part'] is None and len(yaml.safe_load(out)['processes']) == 7


def test_hardware_mode_puts_the_lab_side_on_the_drives_host():
    plan = bringup_plan('hexafloat', mode='hardware', part='hardware')
    assert [s.kind for s in plan.processes] == ['lab'] * 4      # robot_state_publisher, ros2_control_node, spawners
    chain = bringup_plan('hexafloat', mode='hardware', part='chain')
    assert not [s for s in chain.processes if s.kind == 'lab']


@pytest.mark.parametrize('kwargs, words', [
    ({'part': 'robot'}, "unknown part 'robot' of hexafloat (split two_hosts: parts hardware, chain)"),
    ({'split': 'four_hosts'}, "unknown split 'four_hosts' of hexafloat (splits: two_hosts, three_hosts)"),
    ({'part': 'hardware', 'record': '/tmp/x'}, 'record: given to the part that holds the supervisor (chain), '
                                               'not to hardware'),
    ({'part': 'hardware', 'duration': 3.0}, 'duration: given to the part that holds the supervisor (chain)'),
    ({'part': 'hardware', 'hmi': True}, 'hmi: given to the part that holds the supervisor (chain)'),
    ({'peers': 'a b'}, "peers 'a b'"),
])
def test_refusals_say_why(kwargs, words):
    with pytest.raises(BringupError, match=None) as exc:
        bringup_plan('hexafloat', **kwargs)
    assert words in str(exc.value)


def test_a_scenario_may_not_set_values_of_another_parts_nodes():
    desc = load_system('hexafloat')
    scenario = Scenario(name='drives', description='', parameters={'mock_hexapod': {'command_timeout': 0.3}},
                        nodes=(), remap={}, duration=1.0)
    with pytest.raises(BringupError) as exc:
        bringup_plan(desc, scenario, part='chain')
    assert "scenario drives sets values of ['mock_hexapod'], outside the part chain" in str(exc.value)
    ok = dataclasses.replace(scenario, parameters={'planner': {'a_max': 1.0}})
    assert bringup_plan(desc, ok, part='chain').processes
    assert bringup_plan(desc, scenario).processes          # the whole graph on one host: any scenario
    with pytest.raises(BringupError, match="scenario slow_node sets values of"):   # a shipped one
        bringup_plan('hexafloat_scripted', 'slow_node', part='chain')
    assert bringup_plan('hexafloat_scripted', 'slow_node').processes


@pytest.mark.parametrize('parts, words', [
    ({'s': {'a': ['mock_hexapod', 'ft_sensor'], 'b': ['ft_sensor']}}, "node 'ft_sensor' is in two parts (a and b)"),
    ({'s': {'a': ['mock_hexapod'], 'b': ['supervisor']}}, 'in no part (every node is in exactly one)'),
    ({'s': {'a': ['mock_hexapod', 'ghost'], 'b': ['supervisor', 'ft_sensor']}}, "no node 'ghost' in the system"),
    ({'s': {'a': ['mock_hexapod', 'ft_sensor', 'supervisor']}}, 'two or more part names'),
])
def test_a_bad_parts_block_is_refused_naming_the_entry(tmp_path, parts, words):
    raw = yaml.safe_load((ROOT / 'config' / 'systems' / 'hexafloat.yaml').read_text())
    raw['nodes'] = [n for n in raw['nodes'] if n['name'] in ('mock_hexapod', 'ft_sensor', 'supervisor')]
    for n in raw['nodes']:
        n['params'] = [str(ROOT / p) for p in n.get('params', [])]
    raw.pop('hardware')
    raw['parts'] = parts
    path = tmp_path / 'small.yaml'
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(BringupError) as exc:
        load_system(str(path), root=ROOT)
    assert words in str(exc.value)
