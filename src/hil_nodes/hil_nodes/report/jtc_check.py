"""Would a stock joint_trajectory_controller have taken every trajectory of a recorded run?

Each /hexapod_controller/joint_trajectory message of the bag goes through
``hil_core.drives.joint_trajectory.jtc_validate`` with the settings of ``config/controllers.yaml``'s
``hexapod_controller``, at its arrival time in the bag's clock (the controller's "now" when it
would have received it). The report prints how many were refused and why: the lab would have
dropped exactly those.
"""
from __future__ import annotations

import collections
import pathlib

import yaml

from hil_core.data_paths import data_root
from hil_core.drives.joint_trajectory import JtcSettings, jtc_validate
from hil_nodes import topics
from hil_nodes.msgs.convert import trajectory_from_msg
from hil_nodes.recorder.bag import bag_namespace

CONTROLLER = 'hexapod_controller'


def controller_settings(controllers_file: pathlib.Path | None = None) -> JtcSettings:
    path = controllers_file or data_root() / 'config' / 'controllers.yaml'
    return JtcSettings.from_parameters(yaml.safe_load(pathlib.Path(path).read_text())[CONTROLLER]['ros__parameters'])


def check_bag(bag: str | pathlib.Path, settings: JtcSettings | None = None) -> dict:
    """{'checked': n, 'refused': k, 'reasons': {reason: count}, 'first_refusal': text}."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(getattr(Stores, 'ROS2_KILTED', Stores.LATEST))
    settings = settings or controller_settings()
    checked, reasons, first = 0, collections.Counter(), ''
    ns, wanted = bag_namespace(bag), topics.at_root(topics.HEXAPOD_JOINT_TRAJECTORY)
    with Reader(bag) as reader:
        cons = [c for c in reader.connections if topics.strip_namespace(c.topic, ns) == wanted]
        for con, arrival_ns, raw in reader.messages(connections=cons):
            verdict = jtc_validate(trajectory_from_msg(store.deserialize_cdr(raw, con.msgtype)), settings,
                                   int(arrival_ns))
            checked += 1
            if not verdict:
                reasons[verdict.reason] += 1
                first = first or f'{arrival_ns * 1e-9:.4f} s: {verdict.detail}'
    return {'checked': checked, 'refused': sum(reasons.values()), 'reasons': dict(reasons), 'first_refusal': first}
