from setuptools import find_packages, setup

package_name = 'hil_core'

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
    description='Pure-Python HIL algorithms (no rclpy).',
    license='Apache-2.0',
)
