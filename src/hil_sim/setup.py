from setuptools import setup

package_name = 'hil_sim'

# Mock hardware nodes: `ros2 run hil_sim <node>` / `python -m hil_sim.<node>.node`.
NODES = [
    'mock_hardware',        # hexapod drives, iiwa, hybrid5: one node, the robot from its URDF
    'reference_source',
    'mock_ft',
    'netft_device',
    'reference_faults',
]

setup(
    data_files=[('share/ament_index/resource_index/packages', ['resource/' + package_name]),
                ('share/' + package_name, ['package.xml'])],
    entry_points={'console_scripts': [f'{n} = hil_sim.{n}.node:main' for n in NODES]},
)
