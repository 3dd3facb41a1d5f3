"""Launch the simulator node for one BlueROV2: ros2 launch uvms_sim bluerov2.launch.py."""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from uvms_sim.ros.launch import rviz  # rviz:=true opens RViz with uvms_sim.rviz


def generate_launch_description() -> LaunchDescription:
    default_params = os.path.join(get_package_share_directory("uvms_sim"), "config", "bluerov2_node.yaml")
    return LaunchDescription(
        [
            *rviz(get_package_share_directory("uvms_sim")),
            DeclareLaunchArgument("params_file", default_value=default_params),
            DeclareLaunchArgument("namespace", default_value=""),
            Node(
                package="uvms_sim",
                executable="simulator",
                name="simulator",
                namespace=LaunchConfiguration("namespace"),
                parameters=[LaunchConfiguration("params_file")],
                output="screen",
            ),
        ]
    )
