import os

from setuptools import find_packages, setup


def data_tree(source: str, destination: str, skip=('.py', '.pyc')) -> list[tuple[str, list[str]]]:
    """data_files entries installing the directory ``source`` (relative to this file, a symlink
    into the repository's data tree) under ``destination``, sub-directories included. Paths stay
    relative: colcon refuses absolute data_files and symlinks them one by one with
    --symlink-install."""
    here = os.path.dirname(os.path.abspath(__file__))
    entries = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(here, source)):
        dirnames[:] = sorted(d for d in dirnames if d != '__pycache__')
        rel = os.path.relpath(dirpath, here)
        files = [os.path.join(rel, f) for f in sorted(filenames) if not f.endswith(skip)]
        if files:
            entries.append((os.path.normpath(os.path.join(destination, os.path.relpath(dirpath, os.path.join(here, source)))),
                            files))
    return entries


package_name = 'hil_nodes'
# launch/ (linked into this package) is installed to share/hil_nodes/launch:
# `ros2 launch hil_nodes hil.launch.py`.

# One console script per node module: `ros2 run hil_nodes <node>` on lab machines,
# `python -m hil_nodes.<node>.node` here. Keep in sync with hil_nodes/<node>/node.py (test_layout checks it).
NODES = [
    'admittance',
    'recorder',
    'supervisor',
    'kinematics',
    'ft_sensor',
    'timebase',
    'space_plant',
    'planner',
    'hybrid_controller',
]

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ]
    + data_tree('launch', 'share/' + package_name + '/launch', skip=('.pyc',)),
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},   # colcon test: the pytest step (colcon.meta)
    zip_safe=True,
    maintainer='hil_suite maintainers',
    maintainer_email='hil-suite@example.org',
    description='rclpy lifecycle nodes of hil_suite and the hil command.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [f'{n} = hil_nodes.{n}.node:main' for n in NODES]
        + ['container = hil_nodes.runtime.container:main', 'hil = hil_nodes.cli.main:main'],
    },
)
