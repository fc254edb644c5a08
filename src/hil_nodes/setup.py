from setuptools import find_packages, setup

package_name = 'hil_nodes'

# One console script per node module: `ros2 run hil_nodes <node>` on lab machines,
# `python -m hil_nodes.<node>` here. Keep in sync with hil_nodes/*.py (test_layout checks it).
NODES = [
    'admittance',
    'recorder',
    'container',
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
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='hil_suite maintainers',
    maintainer_email='hil-suite@example.org',
    description='rclpy lifecycle nodes of hil_suite and the hil command.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [f'{n} = hil_nodes.{n}:main' for n in NODES]
        + ['hil = hil_nodes.cli.main:main'],
    },
)
