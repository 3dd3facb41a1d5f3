"""Two independent BlueROV2 simulators in one ROS graph, in namespaces rov1 and rov2, with TF
frames prefixed the same way: ros2 launch uvms_sim multi_vehicle.launch.py."""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch_ros.actions import Node


def generate_launch_description() -> LaunchDescription:
    params = os.path.join(get_package_share_directory("uvms_sim"), "config", "multi_vehicle_node.yaml")
    nodes = [
        Node(
            package="uvms_sim",
            executable="simulator",
            name="simulator",
            namespace=ns,
            parameters=[params, {"frame_prefix": f"{ns}/"}],
            output="screen",
        )
        for ns in ("rov1", "rov2")
    ]
    return LaunchDescription(nodes)
