"""Two independent BlueROV2 simulators in one ROS graph, in namespaces rov1 and rov2, with TF
frames prefixed the same way and both odom frames placed in the shared ``map`` frame, 3 m
apart: ros2 launch uvms_sim multi_vehicle.launch.py."""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch_ros.actions import Node

from uvms_sim.ros.launch import rviz  # rviz:=true opens RViz with uvms_sim.rviz


def generate_launch_description() -> LaunchDescription:
    params = os.path.join(get_package_share_directory("uvms_sim"), "config", "multi_vehicle_node.yaml")
    nodes = [
        Node(
            package="uvms_sim",
            executable="simulator",
            name="simulator",
            namespace=ns,
            parameters=[params, {"frame_prefix": f"{ns}/", "world_offset": [x, 0.0, 0.0]}],
            output="screen",
        )
        for ns, x in (("rov1", 0.0), ("rov2", 3.0))
    ]
    return LaunchDescription([*nodes, *rviz(get_package_share_directory("uvms_sim"))])
