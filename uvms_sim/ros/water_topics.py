"""The working water on ROS: each tether's state and reel, and the waves' elevation.

Topics (relative, published at the publish rate when someone listens; ``uvms-sim record``
records them):

- ``tether/<name>/path`` (nav_msgs/Path in the world frame, ENU): the tether's nodes from the
  reel to the vehicle;
- ``tether/<name>/tension`` (std_msgs/Float64MultiArray, N): the tension of every segment from
  the reel's to the vehicle's;
- ``tether/<name>/length`` (std_msgs/Float64, m): the unstretched length paid out;
- ``waves/elevation`` (std_msgs/Float64MultiArray, m, up): the surface's height above its mean
  over each vehicle's root, in the description's vehicle order.

Parameters (the reel, at run time): ``tethers.<name>.length`` (m, default the description's
``length``) is the length the reel pays out or hauls in to, at ``tethers.<name>.speed`` (m/s,
default its ``reel.speed``); ``ros2 param set /simulator tethers.tether.length 60.0``. A target
outside the reel's range is clamped to it (the parameter keeps what was asked; the topic says
what the reel does); a speed above the reel's is its own; a value that is not a number >= 0 is
refused with the reason. These are ROS parameters rather than a service of a new type: the
parameter services (rcl_interfaces/srv/SetParameters, which ``ros2 param set`` and every
client library call) carry a number, are refused with a reason by the node, and can be set in a
launch file or params file, and no interface package has to be built for them in a ROS install.
"""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Path
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from std_msgs.msg import Float64, Float64MultiArray, MultiArrayDimension

from ..frames import NED_TO_ENU
from ..simulator import Simulator

PREFIX = "tethers."
FIELDS = ("length", "speed")


def tether_parameter(name: str) -> tuple[str, str] | None:
    """(tether, field) of a parameter named ``tethers.<tether>.<field>``, else None."""
    if not name.startswith(PREFIX):
        return None
    tether, _, fieldname = name[len(PREFIX) :].rpartition(".")
    return (tether, fieldname) if tether and fieldname in FIELDS else None


def check_reel(fieldname: str, value) -> float:
    """The number a reel parameter holds, or ValueError saying what was expected."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        unit = "m" if fieldname == "length" else "m/s"
        raise ValueError(f"tether {fieldname}: expected a number >= 0 {unit}, got {value!r}")
    return float(value)


class WaterTopics:
    """Publishers of the tethers and the waves of one simulator node, and its reel parameters."""

    def __init__(self, node: Node, sim: Simulator, frame_id: str, prefix_roots: list[int]) -> None:
        self.node, self.sim, self.frame_id = node, sim, frame_id
        self.roots = prefix_roots
        self.tethers = {t.spec.name: t for t in sim.tethers}
        self.pubs = {
            name: (
                node.create_publisher(Path, f"tether/{name}/path", 10),
                node.create_publisher(Float64MultiArray, f"tether/{name}/tension", 10),
                node.create_publisher(Float64, f"tether/{name}/length", 10),
            )
            for name in self.tethers
        }
        env = sim.env
        self.waves = None
        if env.waves is not None and env.surface is not None and len(env.waves):
            self.waves = node.create_publisher(Float64MultiArray, "waves/elevation", 10)
        self.path = Path()
        self.path.header.frame_id = frame_id

    def declare(self, given: dict) -> None:
        """Declare ``tethers.<name>.length`` and ``.speed`` for each tether, starting the reel
        towards the values ``given`` at start (a params file, a launch file); a given one for a
        tether the description does not have is named in a warning and ignored."""
        for key in sorted(given):
            parsed = tether_parameter(key)
            if parsed is None or parsed[0] not in self.tethers:
                self.node.get_logger().warning(
                    f"unknown parameter {key!r} ignored: tethers are {sorted(self.tethers)}"
                )
        for name, tether in self.tethers.items():
            for fieldname, default in (("length", tether.spec.length), ("speed", tether.spec.reel_speed)):
                key = f"{PREFIX}{name}.{fieldname}"
                value = given.get(key, default)
                try:
                    value = check_reel(fieldname, value)
                except ValueError as exc:
                    self.node.get_logger().warning(f"{key}: {exc}; using {default:g}")
                    value = float(default)
                if self.node.has_parameter(key):
                    self.node.undeclare_parameter(key)
                self.node.declare_parameter(key, float(value), ParameterDescriptor(dynamic_typing=True))
            self.command(name, self.node.get_parameter(f"{PREFIX}{name}.length").value,
                         self.node.get_parameter(f"{PREFIX}{name}.speed").value)  # fmt: skip

    def command(self, name: str, length: float, speed: float) -> None:
        with self.node.loop.lock:  # type: ignore[attr-defined]
            self.tethers[name].command(float(length), float(speed))

    def check_parameter(self, name: str, value) -> str | None:
        """Why a reel parameter set at run time is refused, or None."""
        parsed = tether_parameter(name)
        if parsed is None or parsed[0] not in self.tethers:
            return f"{name}: no such tether; tethers are {sorted(self.tethers)}"
        try:
            check_reel(parsed[1], value)
        except ValueError as exc:
            return str(exc)
        return None

    def on_parameter(self, name: str, value) -> str | None:
        """Apply a reel parameter set at run time; the reason it is refused, or None."""
        reason = self.check_parameter(name, value)
        if reason is not None:
            return reason
        tether, fieldname = tether_parameter(name)  # type: ignore[misc]
        number = check_reel(fieldname, value)
        reel = self.tethers[tether]
        length, speed = (number, reel.speed) if fieldname == "length" else (reel.target, number)
        self.command(tether, length, speed)
        return None

    def publish(self, stamp) -> None:
        for name, (path_pub, tension_pub, length_pub) in self.pubs.items():
            tether = self.tethers[name]
            if path_pub.get_subscription_count():
                nodes = tether.line.nodes() @ NED_TO_ENU.T
                self.path.header.stamp = stamp
                poses = []
                for p in nodes:
                    pose = PoseStamped()
                    pose.header = self.path.header
                    pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = (float(c) for c in p)
                    pose.pose.orientation.w = 1.0
                    poses.append(pose)
                self.path.poses = poses
                path_pub.publish(self.path)
            if tension_pub.get_subscription_count():
                msg = Float64MultiArray()
                n = tether.spec.segments + 1
                msg.layout.dim = [MultiArrayDimension(label="segments_from_reel", size=n, stride=n)]
                msg.data = [float(x) for x in tether.line.tensions()]
                tension_pub.publish(msg)
            if length_pub.get_subscription_count():
                length_pub.publish(Float64(data=float(tether.length)))
        if self.waves is not None and self.waves.get_subscription_count():
            env, t = self.sim.env, self.sim.state.t
            p = self.sim.data.p_world  # the state's forward pass (the node's publish_state made it)
            heights = [float(env.elevation(p[root][0], p[root][1], t)) for root in self.roots]
            msg = Float64MultiArray()
            msg.layout.dim = [MultiArrayDimension(label="vehicles", size=len(heights), stride=len(heights))]
            msg.data = heights
            self.waves.publish(msg)

    def view(self, frame, centre_enu: np.ndarray) -> None:
        """Fill a view frame's tethers and wave surface (``viz.water``)."""
        from ..viz.water import tether_paths, wave_surface

        frame.tethers = tether_paths(self.sim.tethers)
        frame.surface = wave_surface(self.sim.env, self.sim.state.t, centre_enu)
