import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))

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
    'hmi',
    'joy_wrench',
    'view_throttle',
]

setup(
    data_files=[('share/ament_index/resource_index/packages', ['resource/' + package_name]),
                ('share/' + package_name, ['package.xml'])]
    # relative paths: colcon refuses absolute data_files
    + [('share/' + package_name + '/launch',
        sorted(os.path.join('launch', f) for f in os.listdir(os.path.join(HERE, 'launch')) if f.endswith('.launch.py')))],
    entry_points={
        'console_scripts': [f'{n} = hil_nodes.{n}.node:main' for n in NODES]
        + ['container = hil_nodes.runtime.container:main', 'hil = hil_nodes.cli.main:main'],
    },
)
