from setuptools import find_packages, setup

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
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ],
    install_requires=['setuptools'],
    extras_require={'test': ['pytest']},   # colcon test: the pytest step (colcon.meta)
    zip_safe=True,
    maintainer='hil_suite maintainers',
    maintainer_email='hil-suite@example.org',
    description='Mock hardware for CI.',
    license='Apache-2.0',
    entry_points={'console_scripts': [f'{n} = hil_sim.{n}.node:main' for n in NODES]},
)
