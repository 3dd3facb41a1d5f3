"""``simulator`` node: runs a ``Simulator`` and talks REP-103/REP-105 ROS.

This is the node's first form: one vehicle from a description, a body-wrench input, and
odometry + TF out. Parameters (``--ros-args -p name:=value`` or ``--params-file``):

- ``model`` (string, ``bluerov2``): a description file (.yaml, .urdf, .xacro) or the name of a
  shipped config (``config/NAME.yaml``); the vehicle starts at the description's initial pose
- ``physics_rate`` (Hz, 500), ``publish_rate`` (Hz, 50)
- ``real_time_factor`` (1.0; 0 runs as fast as possible)
- ``frame_id`` (``odom``), ``child_frame_id`` (``base_link``)
- ``command_timeout`` (s, 0.5): an older wrench command is dropped (failsafe), with a warning

Topics: ``cmd_wrench`` (geometry_msgs/WrenchStamped, base_link FLU, in), ``odom``
(nav_msgs/Odometry, ENU/FLU, out), ``/tf`` (tf2_msgs/TFMessage, out).
"""

from __future__ import annotations

import math
import sys
import threading
import time

import numpy as np
import rclpy
from geometry_msgs.msg import TransformStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from tf2_msgs.msg import TFMessage

from ..model import load
from ..model.configs import resolve
from ..simulator import Simulator
from . import frames


class SimulatorNode(Node):
    """ROS face of a ``Simulator`` (see module doc)."""

    def __init__(self, **kwargs) -> None:
        super().__init__("simulator", **kwargs)
        self.declare_parameter("model", "bluerov2")
        self.declare_parameter("physics_rate", 500.0)
        self.declare_parameter("publish_rate", 50.0)
        self.declare_parameter("real_time_factor", 1.0)
        self.declare_parameter("frame_id", "odom")
        self.declare_parameter("child_frame_id", "base_link")
        self.declare_parameter("command_timeout", 0.5)
        self.system = load(resolve(self.get_parameter("model").value))
        self.sim = Simulator.from_system(self.system)
        self.dt = 1.0 / float(self.get_parameter("physics_rate").value)
        self.publish_period = 1.0 / float(self.get_parameter("publish_rate").value)
        self.rtf = float(self.get_parameter("real_time_factor").value)
        self.frame_id = self.get_parameter("frame_id").value
        self.child_frame_id = self.get_parameter("child_frame_id").value
        self.timeout = float(self.get_parameter("command_timeout").value)
        self.odom_pub = self.create_publisher(Odometry, "odom", 10)
        self.tf_pub = self.create_publisher(TFMessage, "/tf", 10)
        self.create_subscription(WrenchStamped, "cmd_wrench", self.on_wrench, 10)
        self.last_command = -math.inf
        self.timed_out = True
        self.wall_start = time.monotonic()
        self.steps_per_publish = max(1, round(self.publish_period / self.dt))
        # Physics runs in its own thread so that subscriptions are served however fast it
        # steps (a zero-period timer would starve them); ROS callbacks only set inputs.
        self.lock = threading.Lock()
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run_physics, name="uvms_sim_physics", daemon=True)
        self.thread.start()

    def destroy_node(self) -> None:
        if not hasattr(self, "thread"):  # the constructor failed before the physics started
            super().destroy_node()
            return
        self.stop_event.set()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout=5.0)
        super().destroy_node()

    def run_physics(self) -> None:
        """Step at physics_rate, publish every steps_per_publish steps, paced by real_time_factor."""
        wall0 = time.monotonic()
        sim0 = self.sim.state.t
        self.wall_start = wall0
        while not self.stop_event.is_set() and self.context.ok():
            try:
                self.tick()
            except Exception as exc:  # a dead physics thread must say why
                self.get_logger().fatal(f"physics stopped: {type(exc).__name__}: {exc}")
                raise
            if self.rtf > 0:
                delay = wall0 + (self.sim.state.t - sim0) / self.rtf - time.monotonic()
                if delay > 0:
                    self.stop_event.wait(delay)
            else:
                time.sleep(0)  # let the executor thread take the GIL

    def on_wrench(self, msg: WrenchStamped) -> None:
        w = np.array([msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z,
                      msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z])  # fmt: skip
        if not np.all(np.isfinite(w)):
            self.get_logger().warning("cmd_wrench with NaN/inf rejected", throttle_duration_sec=1.0)
            return
        frd = np.concatenate((frames.body_frd_flu(w[:3]), frames.body_frd_flu(w[3:])))
        with self.lock:
            self.sim.set_body_wrench(0, frd)
            self.last_command = self.sim.state.t
            self.timed_out = False

    def tick(self) -> None:
        with self.lock:
            for _ in range(self.steps_per_publish):
                if not self.timed_out and self.sim.state.t - self.last_command > self.timeout:
                    self.sim.set_body_wrench(0, np.zeros(6))
                    self.timed_out = True
                    self.get_logger().warning(f"no cmd_wrench for {self.timeout} s: wrench set to zero")
                self.sim.step(self.dt)
        try:
            self.publish_state()
        except Exception:  # the context is shutting down under us
            if self.context.ok():
                raise

    def real_time_factor(self) -> float:
        return self.sim.state.t / max(1e-9, time.monotonic() - self.wall_start)

    def publish_state(self) -> None:
        s = self.sim.state
        stamp = self.get_clock().now().to_msg()
        p = frames.position_ned_to_enu(s.q[:3])
        quat = frames.quat_ned_frd_to_enu_flu(s.q[3:7])
        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = self.frame_id
        odom.child_frame_id = self.child_frame_id
        odom.pose.pose.position.x, odom.pose.pose.position.y, odom.pose.pose.position.z = map(float, p)
        o = odom.pose.pose.orientation
        o.w, o.x, o.y, o.z = map(float, quat)
        lin = frames.body_frd_flu(s.v[:3])
        ang = frames.body_frd_flu(s.v[3:6])
        t = odom.twist.twist
        t.linear.x, t.linear.y, t.linear.z = map(float, lin)
        t.angular.x, t.angular.y, t.angular.z = map(float, ang)
        self.odom_pub.publish(odom)
        tf = TransformStamped()
        tf.header = odom.header
        tf.child_frame_id = self.child_frame_id
        tf.transform.translation.x, tf.transform.translation.y, tf.transform.translation.z = map(float, p)
        tf.transform.rotation = odom.pose.pose.orientation
        self.tf_pub.publish(TFMessage(transforms=[tf]))


def main(args: list[str] | None = None) -> None:
    rclpy.init(args=args if args is not None else sys.argv)
    node = SimulatorNode()
    try:
        rclpy.spin(node)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


if __name__ == "__main__":
    main()
