"""What the launch files share: RViz with uvms_sim's configuration on ``rviz:=true``.

Imported by ``launch/*.launch.py`` under ``ros2 launch``, where the launch libraries exist (they
have no wheel: nothing else in the package imports this module)."""

from __future__ import annotations

import os


def rviz(share: str) -> list:
    """The ``rviz`` launch argument (default false) and an ``rviz2`` node with
    ``<share>/config/rviz/uvms_sim.rviz`` that starts when it is true."""
    from launch.actions import DeclareLaunchArgument
    from launch.conditions import IfCondition
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    return [
        DeclareLaunchArgument("rviz", default_value="false"),
        Node(
            package="rviz2",
            executable="rviz2",
            arguments=["-d", os.path.join(share, "config", "rviz", "uvms_sim.rviz")],
            condition=IfCondition(LaunchConfiguration("rviz")),
        ),
    ]
