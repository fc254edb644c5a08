"""`hil hmi BAG | --live [--domain-id N] [--namespace NS]`: the operator's web HMI (docs/hmi.md).

``hil hmi --live`` attaches to a graph running on the same DDS domain (``hil run``, a launch
file, a lab's ros2_control), in a process of its own; ``hil hmi BAG`` replays a recorded run
in the same view. Either prints ``hmi: http://HOST:PORT`` first and serves until Ctrl-C.
"""
from __future__ import annotations

import os
import pathlib
import sys
import threading


def add_parser(sub) -> None:
    p = sub.add_parser('hmi', help="the operator's web HMI: live on a running graph, or replay a bag")
    p.add_argument('bag', nargs='?', help='bag directory written by hil run --record (replay)')
    p.add_argument('--live', action='store_true', help='attach to the graph running on this DDS domain')
    p.add_argument('--domain-id', type=int, help='ROS_DOMAIN_ID of the graph (default: the environment\'s)')
    p.add_argument('--namespace', default='', metavar='NS',
                   help='namespace of the graph (hil run --namespace NS; default: the root)')
    p.add_argument('--network', action='store_true', help='DDS discovery beyond this machine (default: localhost)')
    p.add_argument('--host', default='127.0.0.1', help='address the page is served on (default 127.0.0.1; '
                   'any other needs --token)')
    p.add_argument('--port', type=int, default=8080, help='TCP port of the page (0: any free one)')
    p.add_argument('--token', default='', help='control token the page asks for before start/stop/reset/estop')
    p.add_argument('--urdf', default='', help="robot description to draw (default: the graph's or the bag's "
                   '/robot_description)')
    p.set_defaults(func=run)


def run(args) -> int:
    if bool(args.bag) == bool(args.live):
        print('hil hmi: give a bag directory or --live (not both)', file=sys.stderr)
        return 2
    if args.live:
        return _live(args)
    return _replay(args)


def _live(args) -> int:
    if args.domain_id is not None:
        if not 0 <= args.domain_id <= 232:
            print(f'hil hmi: --domain-id {args.domain_id} is outside 0..232', file=sys.stderr)
            return 2
        os.environ['ROS_DOMAIN_ID'] = str(args.domain_id)
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'SUBNET' if args.network else 'LOCALHOST'
    from rclpy.parameter import Parameter

    from hil_nodes.framework.param_table import ParameterError
    from hil_nodes.hmi import node
    overrides = [Parameter('host', value=args.host), Parameter('port', value=args.port),
                 Parameter('control_token', value=args.token), Parameter('urdf', value=args.urdf)]
    from hil_nodes.bringup.names import graph_namespace
    from hil_nodes.bringup.system import BringupError
    try:
        ns = graph_namespace(args.namespace)
    except BringupError as exc:
        print(f'hil hmi: {exc}', file=sys.stderr)
        return 2
    argv = ['hil_hmi'] + (['--ros-args', '-r', f'__ns:={ns}'] if ns else [])   # its topics and services there
    try:
        return node.main(argv, parameter_overrides=overrides)
    except (ParameterError, OSError) as exc:
        print(f'hil hmi: {exc}', file=sys.stderr)
        return 2


def _replay(args) -> int:
    from hil_nodes.hmi.params import is_loopback
    from hil_nodes.hmi.replay import Replay
    from hil_nodes.hmi.timeline import load_timeline
    from hil_nodes.recorder.bag_recovery import recover_bag
    path = pathlib.Path(args.bag)
    if not path.is_dir():
        print(f'hil hmi: {path} is not a bag directory', file=sys.stderr)
        return 2
    if not is_loopback(args.host):
        print(f'hil hmi: replay served on {args.host}: it has no controls, anyone who reaches the port can watch',
              file=sys.stderr)
    try:
        recover_bag(path)           # a bag left by a killed run: readable up to its last checkpoint
        urdf = pathlib.Path(args.urdf).read_text() if args.urdf else ''
        replay = Replay(load_timeline(path), host=args.host, port=args.port, urdf_text=urdf).start()
    except (OSError, ValueError) as exc:
        print(f'hil hmi: {exc}', file=sys.stderr)
        return 2
    print(f'hmi: {replay.url}', flush=True)
    print(f'replay: {path} ({replay.timeline.duration:.2f} s)', flush=True)
    try:
        threading.Event().wait()
    finally:
        replay.stop()
    return 0
