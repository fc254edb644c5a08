"""rviz2 with a hil_suite view: `ros2 launch hil_nodes rviz.launch.py [rviz_config:=FILE]`.

Included by hil.launch.py with rviz:=true (rviz_config = config/rviz/<system>.rviz of the data
tree). Standalone, the default is the Hexafloat view installed in share/hil_core/config/rviz.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    default = PathJoinSubstitution([FindPackageShare('hil_core'), 'config', 'rviz', 'hexafloat.rviz'])
    return LaunchDescription([
        DeclareLaunchArgument('rviz_config', default_value=default, description='rviz2 display config file'),
        Node(package='rviz2', executable='rviz2', name='rviz2', output='screen',
             arguments=['-d', LaunchConfiguration('rviz_config')]),
    ])
