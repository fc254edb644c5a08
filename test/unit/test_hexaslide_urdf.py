"""urdf/hexafloat_{scaled,full}.urdf: generated from the geometry, prismatic sliders with 0 at home."""
import importlib.util
import pathlib
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from hil_core import hexaslide as hx

ROOT = pathlib.Path(__file__).resolve().parents[2]
FILES = {'hexaslide_scaled': 'hexafloat_scaled.urdf', 'hexaslide_full': 'hexafloat_full.urdf'}


def _generator():
    spec = importlib.util.spec_from_file_location('make_hexafloat_urdf', ROOT / 'urdf' / 'make_hexafloat_urdf.py')
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize('name', hx.ROBOTS)
def test_urdf_is_up_to_date_and_matches_the_geometry(name):
    text = (ROOT / 'urdf' / FILES[name]).read_text()
    assert text == _generator().urdf(name), 'run python urdf/make_hexafloat_urdf.py'
    g = hx.load_geometry(name)
    robot = ET.fromstring(text)
    joints = {j.get('name'): j for j in robot.findall('joint')}
    assert sorted(joints) == sorted([*g.joint_names, 'platform'])
    for i, jname in enumerate(g.joint_names):
        j = joints[jname]
        assert j.get('type') == 'prismatic' and j.find('parent').get('link') == 'hexapod_base'
        axis = np.array(j.find('axis').get('xyz').split(), dtype=float)
        origin = np.array(j.find('origin').get('xyz').split(), dtype=float)
        np.testing.assert_allclose(axis, g.guide_directions[i], atol=1e-9)
        # position 0 = home: the joint origin is the slider's home position on its guide
        np.testing.assert_allclose(origin, g.guide_origins[i] + g.q_home[i] * g.guide_directions[i], atol=1e-9)
        limit = j.find('limit')
        assert float(limit.get('lower')) == pytest.approx(g.stroke_min[i])
        assert float(limit.get('upper')) == pytest.approx(g.stroke_max[i])
    assert joints['platform'].get('type') == 'floating' and joints['platform'].find('child').get('link') == 'tcp'
    assert robot.find("link[@name='tcp']/visual") is not None


def test_pinocchio_loads_the_urdf():
    pin = pytest.importorskip('pinocchio')
    model = pin.buildModelFromUrdf(str(ROOT / 'urdf' / 'hexafloat_scaled.urdf'))
    assert {f'slider_{i}' for i in range(1, 7)} <= set(model.names)
