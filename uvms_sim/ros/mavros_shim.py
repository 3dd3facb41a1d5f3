"""MAVROS-compatible ArduSub interface of one simulated vehicle.

A user's code that drives a real BlueROV2 through MAVROS talks to these topics and services
with the same names, message types, frames and QoS that MAVROS (ROS 2) uses for ArduSub; the
autopilot behind them is ``uvms_sim.actuators.ardusub.ArduSubEmulator``, which then owns the
vehicle's thrusters (as the Pixhawk owns the ESCs).

Under ``<namespace>`` (default ``mavros``, relative to the node's namespace):

- ``rc/override`` (mavros_msgs/OverrideRCIn, in): channel 1-9 PWM; 65535 = CHAN_NOCHANGE
  and 0 = CHAN_RELEASE both leave the channel where it was (released, a channel of a vehicle
  without an RC receiver keeps its last value, as on a BlueROV2; channel 9 also ignores 65534,
  MAVLink's release beyond channel 8). Channel 8 is the camera tilt *rate* (ArduSub's mount in
  RC targeting at ``MNT1_RC_RATE`` 30 deg/s: 1900 tilts up, 1100 down, 1500 holds) and channel
  9 the lights (passed to SERVO9): ``uvms_sim.actuators.ardusub``. The camera of the vehicle
  (``ros.camera_topics``) follows SERVO10 and SERVO9 as it follows ArduSub SITL's, the mount's
  limits set to the vehicle's first camera's ``max_tilt`` as BlueOS sets them up. With no pilot input
  (rc/override or manual_control) for ``FS_PILOT_TIMEOUT`` (3 s) ArduSub's pilot input
  failsafe acts once, with its default ``FS_PILOT_INPUT`` = disarm: sticks to neutral and
  disarmed ("Lost manual control").
- ``manual_control/send`` (mavros_msgs/ManualControl, in): x, y, r in -1000..1000 and z in
  0..1000 (500 neutral) turned into RC channels as ArduSub's ``transform_manual_control_to_rc_
  override`` does, with the default joystick gain ``JS_GAIN_DEFAULT`` = 0.5: forward and
  lateral and yaw ``1500 + 0.4·gain·x``, throttle ``1500 - 400·gain + 0.8·gain·z``, camera
  pan and tilt 1500 (the mount holds). Buttons are not interpreted.
- ``state`` (mavros_msgs/State, transient local): connected, armed, mode (``MANUAL``,
  ``STABILIZE``, ``ALT_HOLD``), system_status (3 standby, 4 active).
- ``rc/out`` (RCOut): the servo PWM the autopilot applies, channel n = SERVOn.
- ``rc/in`` (RCIn): the RC channels in effect (with override), rssi 255.
- ``imu/data`` (sensor_msgs/Imu, SensorDataQoS, frame base_link, ENU/FLU as MAVROS converts).
- ``local_position/pose`` (PoseStamped) and ``local_position/odom`` (Odometry, twist in the
  child frame), SensorDataQoS: the true pose in the node's world frame (a real ArduSub needs
  a position source), stamped with the node parameters ``local_position_frame_id`` (default:
  the world frame, ``map``) and ``local_position_child_frame_id`` (default: the vehicle's
  base_link, prefix included), frames that exist in the published TF tree.
- ``global_position/rel_alt`` (std_msgs/Float64, SensorDataQoS): metres above the start
  (negative below it).
- services ``cmd/arming`` (mavros_msgs/CommandBool) and ``set_mode`` (mavros_msgs/SetMode).
  Arming is refused (success false, result 4 = MAV_RESULT_FAILED) while the throttle stick is
  outside 1470-1530 us (trim +- RC3_DZ), as ArduSub with its default RC_OPTIONS refuses to arm
  with throttle applied (``ArduSubEmulator.arming_refusal``). A mode
  other than MANUAL, STABILIZE and ALT_HOLD is refused with ``mode_sent`` false (ArduSub's
  GUIDED/AUTO/POSHOLD and their setpoint topics are not emulated; neither is the battery).
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import PoseStamped
from mavros_msgs.msg import ManualControl, OverrideRCIn, RCIn, RCOut, State
from mavros_msgs.srv import CommandBool, SetMode
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import Imu
from std_msgs.msg import Float64

from ..actuators.ardusub import FRAMES, MOUNT_LIMITS, RC_INPUTS, ArduSubEmulator, VehicleState, infer_frame
from ..spatial import Array
from . import messages
from .messages import wanted
from .serialized import Serialized

FS_PILOT_TIMEOUT = 3.0  # s, ArduSub's FS_PILOT_TIMEOUT default
JS_GAIN_DEFAULT = 0.5


class MavrosShim:
    """The MAVROS/ArduSub face of one ``VehicleIO`` of a ``SimulatorNode``."""

    def __init__(self, node, io, frame: str, namespace: str = "mavros") -> None:
        if frame not in FRAMES:
            allowed = ", ".join(["auto (from the motor numbers)", "none (raw PWM)", *sorted(FRAMES)])
            raise ValueError(f"ardusub_frame {frame!r} is not one of: {allowed}")
        self.node, self.io = node, io
        bank = node.sim.thrusters
        self.autopilot = ArduSubEmulator(
            frame,
            directions=bank.motor_directions(io.thrusters),
            mount_limits=mount_limits(node.system, node.sim.model, io.frames.root),
        )
        motor_of = {bank.motors[k]: k for k in io.thrusters}
        missing = [m for m in FRAMES[frame] if m not in motor_of]
        if missing:
            raise ValueError(f"frame {frame!r} needs motors {missing}, which the description does not number")
        self.motor_index = motor_of
        self.servo_count = max(FRAMES[frame])
        ns = f"{io.ns}{namespace}/"
        state_qos = QoSProfile(depth=10, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.state_pub = node.create_publisher(State, ns + "state", state_qos)
        self.rc_out_pub = node.create_publisher(RCOut, ns + "rc/out", 10)
        self.rc_in_pub = node.create_publisher(RCIn, ns + "rc/in", 10)
        self.imu_pub = node.create_publisher(Imu, ns + "imu/data", qos_profile_sensor_data)
        self.pose_pub = node.create_publisher(
            PoseStamped, ns + "local_position/pose", qos_profile_sensor_data
        )
        self.odom_pub = node.create_publisher(Odometry, ns + "local_position/odom", qos_profile_sensor_data)
        self.alt_pub = node.create_publisher(Float64, ns + "global_position/rel_alt", qos_profile_sensor_data)
        node.create_subscription(OverrideRCIn, ns + "rc/override", self.on_override, 10)
        node.create_subscription(ManualControl, ns + "manual_control/send", self.on_manual_control, 10)
        node.create_service(CommandBool, ns + "cmd/arming", self.on_arming)
        node.create_service(SetMode, ns + "set_mode", self.on_set_mode)
        self.last_override = -np.inf  # simulated time: the autopilot lives in the simulation
        self.outputs = {m: 1500.0 for m in FRAMES[frame]}
        param = node.get_parameter
        self.local_frame = param("local_position_frame_id").value or node.world_frame or node.frame_id
        self.local_child = param("local_position_child_frame_id").value or io.frames.flu
        pose = PoseStamped()
        pose.header.frame_id = self.local_frame
        self.pose_wire = Serialized(pose, [f"pose.{f}" for f in messages.POSE_FIELDS], ("header.stamp",))
        self.start_depth: float | None = None
        self.state_dirty = False  # mavros/state to publish at the next publish period
        self.publish_state()

    # -- inputs -----------------------------------------------------------------------------
    def on_override(self, msg: OverrideRCIn) -> None:
        channels = np.asarray(msg.channels, dtype=float)[:RC_INPUTS]
        with self.node.lock:
            try:
                self.autopilot.set_rc(channels)  # 0 releases, 65535 keeps, out of range clamps + warns
            except ValueError as exc:
                self.node.warn("override", f"rc/override rejected: {exc}")
                return
            self.last_override = self.node.sim.state.t

    def on_manual_control(self, msg: ManualControl) -> None:
        values = np.array([msg.x, msg.y, msg.z, msg.r], dtype=float)
        if not np.all(np.isfinite(values)):
            self.node.warn("manual", "manual_control/send with NaN rejected")
            return
        x, y, z, r = values
        g = JS_GAIN_DEFAULT
        rpy, thr = 0.4 * g, 0.8 * g
        ch = [
            1500.0,
            1500.0,
            z * thr + 1500.0 - 500.0 * thr,
            r * rpy + 1500.0,
            x * rpy + 1500.0,
            y * rpy + 1500.0,
            1500.0,  # camera pan and tilt: transform_manual_control_to_rc_override neutralises them
            1500.0,
        ]
        with self.node.lock:
            self.autopilot.set_rc(np.clip(ch, 1100.0, 1900.0))
            self.last_override = self.node.sim.state.t

    def on_arming(self, request: CommandBool.Request, response: CommandBool.Response) -> CommandBool.Response:
        with self.node.lock:
            throttle = self.autopilot.rc[2]
            refusal = self.autopilot.arming_refusal() if request.value else None
            if refusal is not None:
                response.success, response.result = False, 4
                self.node.get_logger().warning(f"Arming refused: {refusal} ({throttle:.0f} us)")
            else:
                self.autopilot.arm(bool(request.value))
                response.success, response.result = True, 0
        self.publish_state()
        return response

    def on_set_mode(self, request: SetMode.Request, response: SetMode.Response) -> SetMode.Response:
        with self.node.lock:
            response.mode_sent = bool(request.custom_mode) and self.autopilot.set_mode(request.custom_mode)
        if not response.mode_sent:
            self.node.get_logger().warning(
                f"set_mode {request.custom_mode!r} refused: MANUAL, STABILIZE, ALT_HOLD"
            )
        self.publish_state()
        return response

    # -- the autopilot cycle (physics thread, node lock held) ----------------------------------
    def update(self, dt: float) -> None:
        if self.node.sim.state.t - self.last_override > FS_PILOT_TIMEOUT and self.last_override > -np.inf:
            self.autopilot.lose_pilot_input()
            self.last_override = -np.inf
            self.node.get_logger().warning(
                f"Lost manual control: no rc/override or manual_control for {FS_PILOT_TIMEOUT} s; "
                "sticks neutral and disarmed (ArduSub's FS_PILOT_INPUT)"
            )
            self.state_dirty = True
        sim = self.node.sim
        root = self.io.frames.root
        s = sim.model.q_slice(root)
        state = None
        if self.autopilot.needs_state:  # disarmed or MANUAL: the sticks alone
            state = VehicleState.from_free_joint(sim.state.q[s], sim.state.v[sim.model.v_slice(root)])
        self.outputs = self.autopilot.update(state, dt)
        pwm = sim.thrusters.pwm
        if any(pwm[self.motor_index[m]] != value for m, value in self.outputs.items()):
            pwm = pwm.copy()  # unchanged outputs: nothing to redo
            for motor, value in self.outputs.items():
                pwm[self.motor_index[motor]] = value
            sim.thrusters.set_pwm(pwm)

    def servo_outputs(self) -> tuple[int, ...]:
        """The autopilot's servo PWMs, SERVO1 first (thrusters, lights, camera mount); with the
        node's lock held (the physics thread's state)."""
        return self.autopilot.servo_outputs(self.outputs)

    # -- outputs ----------------------------------------------------------------------------
    def publish_state(self) -> None:
        msg = State()
        msg.header.stamp = self.node.stamp()
        msg.connected = True
        msg.armed = self.autopilot.armed
        msg.guided = False
        msg.manual_input = True
        msg.mode = self.autopilot.mode
        msg.system_status = 4 if self.autopilot.armed else 3
        self.state_pub.publish(msg)

    def listened(self) -> bool:
        """Whether ``publish`` has anything to do with the estimate: a telemetry topic with a
        reader, or the start depth not yet taken (``publish_status`` does the rest)."""
        if self.start_depth is None:
            return True
        return any(
            wanted(pub)
            for pub in (
                self.rc_out_pub,
                self.rc_in_pub,
                self.imu_pub,
                self.pose_pub,
                self.odom_pub,
                self.alt_pub,
            )
        )

    def publish_status(self) -> None:
        """mavros/state when it changed (every publish period, with or without telemetry)."""
        if self.state_dirty:
            self.state_dirty = False
            self.publish_state()

    def publish(self, stamp, pose: Array, odom: Odometry | None, imu: Imu | None) -> None:
        """The telemetry topics; a message is built only for a topic with subscribers.
        ``pose``: the vehicle's pose in ``odom`` (``messages.POSE_FIELDS``'s order); ``odom``
        and ``imu``: the messages for local_position/odom and imu/data, or None where those
        have no reader (``VehicleIO.publish`` asks ``wanted`` as this does)."""
        z = float(pose[2])
        if self.start_depth is None:
            self.start_depth = z
        if wanted(self.rc_out_pub):
            out = RCOut()
            out.header.stamp = stamp
            out.channels = [int(self.outputs.get(k, 0)) for k in range(1, self.servo_count + 1)]
            self.rc_out_pub.publish(out)
        if wanted(self.rc_in_pub):
            rc = RCIn()
            rc.header.stamp = stamp
            rc.rssi = 255
            rc.channels = [int(c) for c in self.autopilot.rc]
            self.rc_in_pub.publish(rc)
        if imu is not None and wanted(self.imu_pub):
            self.imu_pub.publish(imu)
        want_pose, want_odom = wanted(self.pose_pub), odom is not None and wanted(self.odom_pub)
        if want_pose or want_odom:
            in_world = self.node.world_pose(pose)
        if want_pose:  # as bytes: only the numbers and the stamp change (``serialized``)
            self.pose_pub.publish(self.pose_wire.fill(in_world, stamp.sec, stamp.nanosec))
        if want_odom:
            assert odom is not None
            local = Odometry()
            local.header.stamp = stamp
            local.header.frame_id = self.local_frame
            local.child_frame_id = self.local_child
            messages.vector_msg(local.pose.pose.position, in_world[:3])
            o = local.pose.pose.orientation
            o.x, o.y, o.z, o.w = map(float, in_world[3:])
            local.pose.covariance = odom.pose.covariance
            local.twist = odom.twist
            self.odom_pub.publish(local)
        if wanted(self.alt_pub):
            self.alt_pub.publish(Float64(data=float(z - self.start_depth)))
        self.publish_status()


def drives(model, vehicle, root: int) -> bool:
    """Whether the vehicle (``system.vehicles``'s) is in the tree of the free body ``root``."""
    top = model.body_index(vehicle.root)
    while model.parents[top] >= 0:
        top = model.parents[top]
    return top == root


def mount_limits(system, model, root: int) -> tuple[float, float]:
    """``MNT1_PITCH_MIN``, ``MNT1_PITCH_MAX`` (rad) as set up for the first camera of the
    vehicle whose tree is rooted at ``root``: its ``-max_tilt``, ``max_tilt``; without one, those
    of the default camera."""
    for v in system.vehicles:
        if drives(model, v, root):
            for spec in v.sensors:
                if spec.type == "camera":
                    return -spec.value("max_tilt"), spec.value("max_tilt")
    return MOUNT_LIMITS


__all__ = ["MavrosShim", "infer_frame", "messages", "wanted"]
