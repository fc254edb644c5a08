"""`hil hmi BAG`: a short recorded Hexafloat run (a push out of the workspace) replayed in the HMI's view. At
a slider time the model's links stand where the bag's joint states and /tf put them, computed
here from the bag and the URDF text directly (not through the HMI's model)."""
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import next_domain_id
from hil_nodes.recorder.bag import read_messages


@pytest.fixture(scope='module')
def bag(tmp_path_factory):
    out = tmp_path_factory.mktemp('hmi_bag')
    # seed 001's push out of the workspace: a 400 N step at 5 s, the planner's recovery after it
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat', '--scenario', 'workspace_exit',
           '--duration', '7', '--record', str(out), '--domain-id', str(next_domain_id()), '--quiet']
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (path,) = [p for p in out.iterdir() if p.is_dir()]
    return path


def _wait(predicate, timeout=20.0, what='condition'):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f'timed out waiting for {what}')


def test_replay_moves_the_model_to_the_recorded_joints_at_the_slider_time(bag):
    from hil_nodes.hmi.replay import Replay
    from hil_nodes.hmi.timeline import load_timeline
    timeline = load_timeline(bag)
    assert timeline.t0 == 0.0          # lockstep: simulated time starts at 0
    states = [(m.header.stamp.sec + m.header.stamp.nanosec * 1e-9, list(m.name), np.array(m.position))
              for _, _, m in read_messages(bag, ['/joint_states'])]
    tcp = [(tr.header.stamp.sec + tr.header.stamp.nanosec * 1e-9, tr.transform)
           for _, _, m in read_messages(bag, ['/tf']) for tr in m.transforms if tr.child_frame_id == 'tcp']
    (_, _, desc), = list(read_messages(bag, ['/robot_description']))[:1]
    joints = {j.get('name'): j for j in ET.fromstring(desc.data).findall('joint')}

    replay = Replay(timeline, port=0).start()
    try:
        recorded_modes = [(ns * 1e-9, m.data) for _, ns, m in read_messages(bag, ['/hil/mode'])]
        for t in (5.5, 5.2137):          # after the push, forward then back
            replay.slider.value = t
            _wait(lambda: replay.shown == t, what=f'the replay to show t = {t}')
            stamp, names, q = [s for s in states if s[0] <= t][-1]
            assert abs(stamp - t) < 0.0025 + 1e-9          # a 400 Hz stream: the sample of that frame
            assert np.max(np.abs(q)) > 1e-4, 'the robot does not move at this time: a test that cannot fail'
            for name, qi in zip(names, q):
                j = joints[name]
                origin = np.array([float(v) for v in j.find('origin').get('xyz').split()])
                assert j.find('origin').get('rpy') in (None, '0 0 0')
                axis = np.array([float(v) for v in j.find('axis').get('xyz').split()])
                expected = origin + qi * axis / np.linalg.norm(axis)
                got = np.asarray(replay.scene.links[j.find('child').get('link')].position)
                np.testing.assert_allclose(got, expected, atol=1e-6, err_msg=f'{name} at t = {t}')
            _, tr = [x for x in tcp if x[0] <= t][-1]
            got = np.asarray(replay.scene.links['tcp'].position)
            np.testing.assert_allclose(got, [tr.translation.x, tr.translation.y, tr.translation.z], atol=1e-6)
            # the panel at that time: the mode the bag had then
            mode = [m for tm, m in recorded_modes if tm <= t][-1]
            assert f'**Mode:** {mode}  ' in replay.panel.state.content
    finally:
        replay.stop()
