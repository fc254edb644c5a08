"""config/rviz/*.rviz: valid YAML whose topics all exist in hil_nodes.topics (no typos)."""
import pathlib

import pytest
import yaml

from hil_nodes import topics

ROOT = pathlib.Path(__file__).resolve().parents[2]
NAMES = set(vars(topics.ROOT).values())    # rviz runs at the root: the names there


@pytest.mark.parametrize('name, frame', [('hexafloat.rviz', 'hexapod_base'), ('space_iiwa.rviz', 'world')])
def test_rviz_config(name, frame):
    cfg = yaml.safe_load((ROOT / 'config' / 'rviz' / name).read_text())
    manager = cfg['Visualization Manager']
    assert manager['Global Options']['Fixed Frame'] == frame
    displays = manager['Displays']
    used = [d['Topic']['Value'] for d in displays if 'Topic' in d]
    used += [d['Description Topic']['Value'] for d in displays if 'Description Topic' in d]
    assert topics.ROOT.KINEMATICS_TCP_POSE in used and topics.ROOT.ROBOT_DESCRIPTION in used   # rviz at the root
    assert set(used) <= NAMES, set(used) - NAMES
    assert any(d['Class'] == 'rviz_default_plugins/RobotModel' for d in displays)
