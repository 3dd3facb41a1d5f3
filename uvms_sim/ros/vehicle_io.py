"""The topics of one free vehicle of the simulator node: its command subscriptions (thruster
PWM, body wrench, teleport), their timeouts, and its odometry, IMU, pressure, depth and thrust
publishers, with the emulated ArduSub's MAVROS topics when one flies it."""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import FluidPressure, Imu
from std_msgs.msg import Float64, Float64MultiArray, UInt16MultiArray

from .. import frames
from ..sensors import absolute_pressure, specific_force
from ..sensors.estimator import Estimator
from . import messages
from .mavros_shim import MavrosShim, infer_frame
from .messages import wanted
from .parameters import MAX_POSITION
from .serialized import Serialized


class VehicleIO:
    """Topics of one free vehicle of ``node`` (a ``SimulatorNode``)."""

    def __init__(self, node, vf: messages.VehicleFrames, ns: str) -> None:
        sim = node.sim
        self.frames = vf
        self.ns = ns
        # reused every publish (messages.odometry): frames and covariances written once
        self.odom_msg: Odometry | None = None
        self.imu_msg: Imu | None = None
        # /odom and /imu as serialized once (only the state and stamp change)
        # (their numbers are Serialized's to set: zeros here, so that the main thread loads no
        # compiled kernel, ``SimulatorNode.run_physics``)
        rest, still = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), np.zeros(6)
        odom = messages.odometry(Time(), node.frame_id, vf.flu, rest, still, values=np.zeros(13))
        self.odom_wire = Serialized(odom, messages.ODOMETRY_FIELDS, ("header.stamp",))
        imu = messages.imu(Time(), vf.flu, rest[3:], still[:3], still[3:], values=np.zeros(10))
        self.imu_wire = Serialized(imu, messages.IMU_FIELDS, ("header.stamp",))
        self.odom_values, self.imu_values = np.zeros(13), np.zeros(10)  # their numbers, every publish
        bank = sim.thrusters
        # this vehicle's thrusters, then those of vehicles bolted into its tree (fixed joints)
        model = sim.model
        order: dict[str, int] = {}
        for rank, v in enumerate(node.system.vehicles):
            top = model.body_index(v.root)
            while model.parents[top] >= 0:
                top = model.parents[top]
            if top == vf.root:
                order.update({t.name: rank for t in v.thrusters})
        self.bank = bank  # the simulator's thrusters (None: this system has none)
        names = [] if bank is None else bank.names
        motors = [] if bank is None else bank.motors
        idx = [k for k, n in enumerate(names) if n in order]
        # servo order: by vehicle, then motor number; thrusters without one after them
        self.thrusters = sorted(idx, key=lambda k: (order[names[k]], motors[k] is None, motors[k] or 0, k))
        self.odom = node.create_publisher(Odometry, ns + "odom", 10)
        self.imu = node.create_publisher(Imu, ns + "imu", 10)
        self.pressure = node.create_publisher(FluidPressure, ns + "pressure", 10)
        self.depth = node.create_publisher(Float64, ns + "depth", 10)
        if self.thrusters:
            self.thrust = node.create_publisher(Float64MultiArray, ns + "thrusters/thrust", 10)
            self.current = node.create_publisher(Float64MultiArray, ns + "thrusters/current", 10)
            node.create_subscription(UInt16MultiArray, ns + "thrusters/pwm", self.on_pwm, 10)
        node.create_subscription(WrenchStamped, ns + "cmd_wrench", self.on_wrench, 10)
        node.create_subscription(PoseStamped, ns + "set_pose", self.on_set_pose, 10)
        self.node = node
        self.pwm_deadline = node.loop.deadline(self.pwm_expired)
        self.wrench_deadline = node.loop.deadline(self.wrench_expired)
        self.shim: MavrosShim | None = None
        self.estimator: Estimator | None = None
        frame = node.get_parameter("ardusub_frame").value
        if node.sitl is not None:
            frame = "none"  # the real ArduSub in SITL drives the thrusters
        if frame == "auto":
            frame = infer_frame([motors[k] for k in self.thrusters]) if self.thrusters else None
        if frame and frame != "none":
            self.shim = MavrosShim(node, self, frame, node.get_parameter("mavros_namespace").value)

    def estimated(self, stamp, q, v) -> tuple[Odometry, Imu]:
        """Odometry and IMU messages of the estimate (``sensors.estimator``), with covariances
        that say how well it knows: orientation and rates to about 1 degree and 0.01 rad/s, depth
        to 5 cm, horizontal position to 0.5 m with a DVL (unknown without one)."""
        est = self.estimator
        assert est is not None
        est.update_truth(q, v)
        qe, ve = est.state()
        node = self.node
        odom = messages.odometry(stamp, node.frame_id, self.frames.flu, qe, ve)
        horizontal = 0.25 if "dvl" in est.has else 1e6
        odom.pose.covariance = (
            np.diag([horizontal, horizontal, 0.0025, 3e-4, 3e-4, 3e-4]).reshape(-1).tolist()
        )
        odom.twist.covariance = np.diag([0.01, 0.01, 0.01, 1e-4, 1e-4, 1e-4]).reshape(-1).tolist()
        accel = est.accel if est.accel is not None else np.array([0.0, 0.0, -node.sim.env.gravity])
        imu = messages.imu(stamp, self.frames.flu, qe[3:7], ve[3:6], accel)
        imu.orientation_covariance = np.diag([3e-4] * 3).reshape(-1).tolist()
        return odom, imu

    def on_pwm(self, msg: UInt16MultiArray) -> None:
        node = self.node
        if self.shim is not None:
            node.warn(
                f"{self.ns}pwm-shim",
                f"{self.ns}thrusters/pwm ignored: the emulated ArduSub drives the thrusters",
            )
            return
        values = np.asarray(msg.data, dtype=float)
        if len(values) < len(self.thrusters):  # longer is fine: servo outputs past the thrusters
            node.warn(
                f"{self.ns}pwm",
                f"{self.ns}thrusters/pwm needs {len(self.thrusters)} values, got {len(values)}",
            )
            return
        values = values[: len(self.thrusters)]
        if self.bank is None:
            return
        with node.lock:
            pwm = self.bank.pwm.copy()
            pwm[self.thrusters] = values
            node.sim.set_thruster_pwm(pwm)  # clamps out-of-range values, with a throttled warning
            self.pwm_deadline.touch(node.sim.state.t)

    def on_wrench(self, msg: WrenchStamped) -> None:
        f, m = msg.wrench.force, msg.wrench.torque
        w = np.array([f.x, f.y, f.z, m.x, m.y, m.z])
        if not np.all(np.isfinite(w)):
            self.node.warn(f"{self.ns}wrench", f"{self.ns}cmd_wrench with NaN/inf rejected")
            return
        with self.node.lock:
            self.node.sim.set_body_wrench(
                self.frames.root, np.concatenate((frames.body_frd_flu(w[:3]), frames.body_frd_flu(w[3:])))
            )
            self.wrench_deadline.touch(self.node.sim.state.t)

    def on_set_pose(self, msg: PoseStamped) -> None:
        p, o = msg.pose.position, msg.pose.orientation
        pos = np.array([p.x, p.y, p.z])
        quat = np.array([o.w, o.x, o.y, o.z])
        scale = np.max(np.abs(quat)) if np.all(np.isfinite(quat)) else 0.0
        if not (np.all(np.isfinite(pos)) and scale > 0.0 and np.all(np.abs(pos) <= MAX_POSITION)):
            self.node.warn(
                f"{self.ns}pose",
                f"{self.ns}set_pose rejected: NaN, a zero quaternion or a position beyond {MAX_POSITION:g} m",
            )
            return
        quat = quat / scale  # any finite non-zero quaternion, however large, is a rotation
        node = self.node
        with node.lock:
            s = node.sim.model.q_slice(self.frames.root)
            q = node.sim.state.q.copy()
            q[s.start : s.start + 3] = frames.position_enu_to_ned(pos)
            q[s.start + 3 : s.start + 7] = frames.quat_enu_flu_to_ned_frd(quat)
            t = node.sim.state.t
            node.sim.reset(q)
            node.sim.state.t = t  # a teleport: time runs on
            if self.estimator is not None:  # the autopilot is aligned again where the vehicle now is
                self.estimator.started = False

    def pwm_expired(self) -> None:
        """No thrusters/pwm for command_timeout: thrusters to neutral (loop lock held)."""
        if self.bank is not None and self.thrusters:
            pwm = self.bank.pwm.copy()
            pwm[self.thrusters] = 1500.0
            self.node.sim.set_thruster_pwm(pwm)
            self.node.get_logger().warning(
                f"no {self.ns}thrusters/pwm for {self.node.loop.timeout} s: thrusters to neutral"
            )

    def wrench_expired(self) -> None:
        """No cmd_wrench for command_timeout: the wrench to zero (loop lock held)."""
        self.node.sim.set_body_wrench(self.frames.root, np.zeros(6))
        self.node.get_logger().warning(
            f"no {self.ns}cmd_wrench for {self.node.loop.timeout} s: wrench to zero"
        )

    def publish(self, stamp, acc) -> None:
        """Odometry, IMU, pressure, depth and thrust (and the MAVROS topics); a message is built
        only for a topic with subscribers (``mavros_shim.wanted``)."""
        node = self.node
        sim, data = node.sim, node.sim.data
        root = self.frames.root
        s = sim.model.q_slice(root)
        q, v = sim.state.q[s], data.v[root]
        shim = self.shim
        listened = shim is not None and shim.listened()
        truth = listened and self.estimator is None  # the shim reports the truth
        # message objects for the shim only where it publishes them (its pose goes as bytes)
        shim_odom = truth and shim is not None and wanted(shim.odom_pub)
        shim_imu = truth and shim is not None and wanted(shim.imu_pub)
        odom = imu = None
        want_odom, want_imu = wanted(self.odom), wanted(self.imu)
        sec, nanosec = stamp.sec, stamp.nanosec
        x = None
        if truth or want_odom:  # the numbers once, for the bytes and the shim's messages
            x = messages.odometry_values(q, v, self.odom_values)
            if want_odom:
                self.odom.publish(self.odom_wire.fill(x, sec, nanosec))
            if shim_odom:
                odom = messages.odometry(stamp, node.frame_id, self.frames.flu, q, v, self.odom_msg, x)
                self.odom_msg = odom
        if shim_imu or want_imu:
            f = specific_force(data, acc, root, sim.env.gravity)
            xi = messages.imu_values(q[3:7], v[3:], f, self.imu_values)
            if want_imu:
                self.imu.publish(self.imu_wire.fill(xi, sec, nanosec))
            if shim_imu:
                imu = self.imu_msg = messages.imu(stamp, self.frames.flu, q[3:7], v[3:], f, self.imu_msg, xi)
        if shim is not None and listened:
            if self.estimator is not None:  # what its sensors tell the autopilot, not the truth
                odom, imu = self.estimated(stamp, q, v)
                x = messages.pose_numbers(odom.pose.pose)
            assert x is not None
            shim.publish(stamp, x[:7], odom, imu)
        elif shim is not None:
            shim.publish_status()
        depth = float(data.p_world[root][2])
        if wanted(self.pressure):
            pressure = FluidPressure()
            pressure.header.stamp = stamp
            pressure.header.frame_id = self.frames.flu
            pressure.fluid_pressure = absolute_pressure(depth, sim.env.density, sim.env.gravity)
            self.pressure.publish(pressure)
        if wanted(self.depth):
            self.depth.publish(Float64(data=depth))
        if self.bank is None or not self.thrusters:
            return
        if wanted(self.thrust):
            self.thrust.publish(Float64MultiArray(data=[float(x) for x in self.bank.thrust[self.thrusters]]))
        if wanted(self.current):
            amps = self.bank.currents()[self.thrusters]
            self.current.publish(Float64MultiArray(data=[float(x) for x in amps]))
