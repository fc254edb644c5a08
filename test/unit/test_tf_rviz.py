"""config/rviz: the TF display is on, and every frame it names is one our TF tree has, rooted at
the fixed frame (the frames come from the URDFs and hil_nodes.msgs.tf_publisher's documented tree)."""
import pathlib

import pytest
import yaml

from hil_core.maths import tf_frames as tf

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tree(urdf, extra):
    """parent of every frame: URDF joints (floating included) + frames our nodes add."""
    parent = {j.child: j.parent for j in tf.urdf_joints((ROOT / 'urdf' / urdf).read_text())}
    parent.update(extra)
    return parent


TREES = {
    'hexafloat.rviz': _tree('hexafloat_scaled.urdf', {'ft_sensor': 'tcp',
                                                      **{f'leg_{i}': 'hexapod_base' for i in range(1, 7)}}),
    'space_iiwa.rviz': _tree('iiwa14.urdf', {'satellite': 'world', 'iiwa_link_0': 'satellite'}),
}


@pytest.mark.parametrize('name', sorted(TREES))
def test_tf_display_frames_are_in_the_tree_under_the_fixed_frame(name):
    manager = yaml.safe_load((ROOT / 'config' / 'rviz' / name).read_text())['Visualization Manager']
    fixed = manager['Global Options']['Fixed Frame']
    tf_display = next(d for d in manager['Displays'] if d['Class'] == 'rviz_default_plugins/TF')
    assert tf_display['Enabled']
    frames = [k for k in tf_display['Frames'] if k != 'All Enabled']
    parent = TREES[name]
    assert fixed in frames
    for f in frames:
        while f != fixed:
            assert f in parent, f'{f} is not connected to {fixed}'
            f = parent[f]
    assert next(d for d in manager['Displays'] if d['Class'] == 'rviz_default_plugins/RobotModel')['Enabled']
