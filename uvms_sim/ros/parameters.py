"""The simulator node's parameters (documented in ``uvms_sim.ros.node``): their defaults, the
ranges of the numeric ones, and the check that types a given value or names what was expected."""

from __future__ import annotations

import math
import re

from ..actuators.camera_mount import check_tilt_pwm
from ..viz.video import check_host

PARAMETERS = {
    "description": "bluerov2",
    "physics_rate": 500.0,
    "integrator": "rk4",
    "publish_rate": 50.0,
    "clock_rate": 200.0,
    "real_time_factor": 1.0,
    "frame_id": "odom",
    "frame_prefix": "",
    "command_timeout": 0.5,
    "publish_joint_wrenches": False,
    "ardusub_frame": "auto",
    "mavros_namespace": "mavros",
    "autopilot_rate": 200.0,
    "sitl_port": 0,
    "sitl_bind": "127.0.0.1",
    "battery_voltage": 0.0,
    "world_frame": "map",
    "world_offset": [0.0, 0.0, 0.0],
    "local_position_frame_id": "",
    "local_position_child_frame_id": "",
    "marker_rate": 10.0,
    "sensor_noise": True,
    "sensor_seed": 0,
    "web_view_port": 0,
    "web_view_rate": 30.0,
    "web_view_bind": "127.0.0.1",
    "web_view_camera": "world",
    "controller_rate": 100.0,
    "arm_controllers": ["joint_state_broadcaster", "joint_trajectory_controller", "gripper_controller"],
    "ping1d_port": 0,
    "ping360_port": 0,
    "ping_bind": "127.0.0.1",
    "video_port": 0,
    "video_host": "127.0.0.1",
    "video_camera": "",
    "video_sdp": "",
    "mount_tilt_servo": 10,
    "lights_servo": 9,
    "mount_tilt_pwm": [1100.0, 1900.0],
}


# Numeric parameters: (lowest, highest) accepted. Integers are accepted for floats (ROS users
# write ``physics_rate:=1000``); anything else, or a value out of range, stops the node with a
# one-line error naming the parameter.
RANGES = {
    "physics_rate": (1.0, 20000.0),
    "publish_rate": (0.1, 1000.0),
    "clock_rate": (0.1, 10000.0),
    "autopilot_rate": (1.0, 2000.0),
    "controller_rate": (1.0, 2000.0),
    "real_time_factor": (0.0, 1000.0),
    "command_timeout": (0.0, 3600.0),
    "battery_voltage": (0.0, 20.0),
    "sitl_port": (0, 65535),
    "marker_rate": (0.0, 1000.0),
    "sensor_seed": (0, 2**31 - 1),
    "web_view_port": (0, 65534),
    "web_view_rate": (0.1, 1000.0),
    "ping1d_port": (0, 65535),
    "ping360_port": (0, 65535),
    "video_port": (0, 65535),
    "mount_tilt_servo": (0, 32),
    "lights_servo": (0, 32),
}
MAX_POSITION = 1.0e5  # m: a set_pose farther from the origin than this is refused
# Names: a ROS namespace (relative: letters, digits and underscores in parts separated by "/",
# each starting with a letter), and TF frame ids (tf2 takes any text, but a frame with spaces
# or a leading "/" cannot be looked up by name from the command line or RViz; "" only where it
# means "none").
NAMESPACE = re.compile(r"[A-Za-z][A-Za-z0-9_]*(/[A-Za-z][A-Za-z0-9_]*)*")
FRAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*")
NAMES = {"mavros_namespace": NAMESPACE, "frame_id": FRAME, "frame_prefix": FRAME, "world_frame": FRAME,
         "local_position_frame_id": FRAME, "local_position_child_frame_id": FRAME}  # fmt: skip
# Texts that name one of a few choices (``Simulator``'s integrators).
CHOICES = {"integrator": ("rk4", "semi_implicit_euler")}
MAY_BE_EMPTY = {"frame_prefix", "world_frame", "local_position_frame_id", "local_position_child_frame_id"}


def check_parameter(name: str, value):
    """``value`` of parameter ``name`` as its type, or ValueError saying what was expected."""
    default = PARAMETERS[name]
    if name == "video_host":
        if not isinstance(value, str):
            raise ValueError(f"parameter {name}: expected a text, got {value!r}")
        return check_host(value)
    if name == "mount_tilt_pwm":
        return list(check_tilt_pwm(value))
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise ValueError(f"parameter {name}: expected true or false, got {value!r}")
        return value
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ValueError(f"parameter {name}: expected a text, got {value!r}")
        if name in CHOICES and value not in CHOICES[name]:
            raise ValueError(f"parameter {name}: expected one of {', '.join(CHOICES[name])}, got {value!r}")
        pattern = NAMES.get(name)
        named = value + "odom" if name == "frame_prefix" else value  # a prefix may end in "/"
        if (
            pattern is not None
            and not (value == "" and name in MAY_BE_EMPTY)
            and not pattern.fullmatch(named)
        ):
            what = (
                "a ROS namespace (letters, digits and _ in parts separated by /, each starting with a letter)"
                if pattern is NAMESPACE
                else "a TF frame id (letters, digits, _ . - and /, no spaces, not starting with /)"
            )
            empty = ' or "" (none)' if name in MAY_BE_EMPTY else ""
            raise ValueError(f"parameter {name}: expected {what}{empty}, got {value!r}")
        return value
    if isinstance(default, list) and default and isinstance(default[0], str):
        names = list(value) if isinstance(value, list | tuple) else None
        if names is None or not all(isinstance(x, str) for x in names):
            raise ValueError(f"parameter {name}: expected a list of names, got {value!r}")
        return names
    if isinstance(default, list):
        values = list(value) if isinstance(value, list | tuple) else None
        if (
            values is None
            or len(values) != len(default)
            or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in values)
            or not all(math.isfinite(x) and abs(x) <= MAX_POSITION for x in values)
        ):
            raise ValueError(
                f"parameter {name}: expected {len(default)} finite numbers (m, m, rad), got {value!r}"
            )
        return [float(x) for x in values]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"parameter {name}: expected a number, got {value!r}")
    if isinstance(default, int) and value != int(value):
        raise ValueError(f"parameter {name}: expected an integer, got {value!r}")
    lo, hi = RANGES[name]
    if name == "battery_voltage" and value != 0 and not 10.0 <= value <= 20.0:
        raise ValueError(f"parameter {name}: expected 0 (the description's) or 10-20 V, got {value!r}")
    if not lo <= value <= hi:
        raise ValueError(f"parameter {name}: expected {lo:g} to {hi:g}, got {value!r}")
    return float(value) if isinstance(default, float) else int(value)


def check_frames(values: dict) -> None:
    """ValueError for frame parameters that name the same frame twice (TF would have a loop)."""
    odom = values["frame_prefix"] + values["frame_id"]
    if values["world_frame"] == odom:
        raise ValueError(
            f"parameters world_frame and frame_id: both name {odom!r} (the world frame is the parent of "
            "frame_id in TF; set world_frame:='' for none)"
        )
