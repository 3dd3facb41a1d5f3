"""ROS 2 bags in and out (sqlite3 and mcap, with the rosbags library; no ROS install needed).

What a replay needs from a bag: the thruster commands (``/mavros/rc/out``, mavros_msgs/RCOut:
servo n = motor n; or the node's ``thrusters/pwm``, std_msgs/UInt16MultiArray in servo order)
and, to compare or identify, the measured motion: nav_msgs/Odometry (ENU/FLU), or, when the
bag has no odometry, a geometry_msgs/PoseStamped topic (``/mavros/local_position/pose``, a
motion-capture pose) whose velocities are then differentiated (``velocities_from_poses``).
Messages of other types are counted, not silently dropped; out-of-order stamps and gaps are
reported.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

from ..log import logger

INTERFACES = Path(__file__).resolve().parents[1] / "interfaces"
COMMAND_TYPES = ("mavros_msgs/msg/RCOut", "std_msgs/msg/UInt16MultiArray")
OVERRIDE_TYPE = "mavros_msgs/msg/OverrideRCIn"
STATE_TYPE = "mavros_msgs/msg/State"
ODOMETRY_TYPE = "nav_msgs/msg/Odometry"
POSE_TYPE = "geometry_msgs/msg/PoseStamped"
JOINT_TYPE = "sensor_msgs/msg/JointState"


MAX_SPAN_NS = 86_400 * 10**9  # a message stamped more than a day from the bag's median is dropped
MAX_MOTION = 1.0e6  # m, m/s, rad/s: odometry beyond this is a corrupt message


class BagError(ValueError):
    """A bag that cannot be used: the path and what is wrong."""


def time_slice(bag: BagContents, t0: float, t1: float) -> BagContents:
    """The part of a recording with ``t0 <= t < t1`` (the last command before ``t0`` kept, as
    it still holds), for fitting on one part and validating on another."""

    def cut(series: Series, hold: bool = False) -> Series:
        t = np.asarray(series.t)
        keep = (t >= t0) & (t < t1)
        if hold and np.any(t < t0):
            keep[np.flatnonzero(t < t0)[-1]] = True
        return Series(
            [series.t[k] for k in np.flatnonzero(keep)], [series.values[k] for k in np.flatnonzero(keep)]
        )

    return replace(
        bag,
        commands=cut(bag.commands, hold=True),
        odometry=cut(bag.odometry),
        joints=cut(bag.joints, hold=True),
        overrides=cut(bag.overrides, hold=True),
        autopilot_states=cut(bag.autopilot_states, hold=True),
        imu=cut(bag.imu),
        battery=cut(bag.battery),
    )


def typestore():
    """Kilted's message types plus the mavros_msgs definitions kept in ``uvms_sim/interfaces/``."""
    store = get_typestore(Stores.ROS2_KILTED)
    types = {}
    for path in sorted((INTERFACES / "mavros_msgs" / "msg").glob("*.msg")):
        types.update(get_types_from_msg(path.read_text(), f"mavros_msgs/msg/{path.stem}"))
    store.register(types)
    return store


@dataclass
class Series:
    """Time-stamped samples of one topic (t in seconds from the bag's start)."""

    t: list[float] = field(default_factory=list)
    values: list = field(default_factory=list)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(t, values)``; rows of different lengths (a servo log that grew from 8 to 16
        channels) are padded with 0, an output that is not set up."""
        lengths = {len(v) for v in self.values if hasattr(v, "__len__")}
        if len(lengths) > 1:
            width = max(lengths)
            rows = np.zeros((len(self.values), width))
            for k, v in enumerate(self.values):
                rows[k, : len(v)] = v
            return np.asarray(self.t), rows
        return np.asarray(self.t), np.asarray(self.values, dtype=float)


@dataclass
class BagContents:
    commands: Series  # PWM by servo channel (index 0 = servo 1)
    odometry: Series  # [x y z (ENU), qw qx qy qz (ENU/FLU), vx vy vz wx wy wz (FLU)]
    command_topic: str | None
    odometry_topic: str | None
    ignored: dict[str, int]  # topic -> messages not used
    out_of_order: int
    largest_gap: float  # s between consecutive commands
    start_ns: int
    joints: Series = field(default_factory=Series)  # (names, efforts) of joint_commands
    joint_topic: str | None = None
    motion_source: str = "odometry"  # or "pose": velocities differentiated from PoseStamped
    command_source: str = "pwm"  # or "rc_override": the pilot's sticks, through the emulated ArduSub
    overrides: Series = field(default_factory=Series)  # OverrideRCIn channels (when no PWM topic)
    autopilot_states: Series = field(default_factory=Series)  # (armed, mode) from mavros State
    state_topic: str | None = None
    # from an autopilot's own log (``ardupilot_log``); a bag leaves them empty
    imu: Series = field(default_factory=Series)  # gyro (rad/s) and accelerometer (m/s^2), FRD
    battery: Series = field(default_factory=Series)  # supply voltage, V
    parameters: dict[str, float] = field(default_factory=dict)
    reversed_motors: frozenset[int] | None = None  # MOT_n_DIRECTION = -1; None: not recorded
    frame: str | None = None  # the autopilot's frame (FRAME_CONFIG)
    horizontal: bool = True  # the horizontal velocity is measured (not only an estimate's guess)
    format: str = "rosbag"
    notes: list[str] = field(default_factory=list)  # what the reader noticed, for the report


def read_bag(
    path: str | Path,
    command_topic: str | None = None,
    odometry_topic: str | None = None,
    joint_topic: str | None = "joint_commands",
) -> BagContents:
    """Read commands, odometry and joint commands (sensor_msgs/JointState efforts, by name).
    Without topic names, the first topic of a command type and of Odometry are used; the joint
    topic is the JointState topic whose name ends with ``joint_topic``."""
    path = Path(path)
    if not path.exists():
        raise BagError(f"{path}: no such bag")
    try:
        reader = AnyReader([path], default_typestore=typestore())
        reader.open()
    except Exception as exc:  # rosbags raises its own errors for damaged metadata or storage
        raise BagError(f"{path}: cannot open the bag: {exc}") from None
    try:
        topics, motion_type, source = _topics(
            path, reader.connections, command_topic, odometry_topic, joint_topic
        )
        command_topic, odometry_topic, joint_topic, state_topic = topics
        # unused topics (camera frames) are counted from the bag's index and never read; the
        # used ones are decoded one message at a time: memory is what the used topics hold
        ignored: dict[str, int] = {}
        for c in reader.connections:
            if c.topic not in topics:
                ignored[c.topic] = ignored.get(c.topic, 0) + int(c.msgcount)
        decoded: list[tuple[int, str | None, object]] = []  # (stamp, topic, values)
        rejected: Counter = Counter()
        try:
            used = [c for c in reader.connections if c.topic in topics]
            for conn, stamp, raw in reader.messages(connections=used):
                try:
                    msg: Any = reader.deserialize(raw, conn.msgtype)  # a message of conn.msgtype
                except Exception:  # rosbags raises several kinds on a corrupt payload
                    rejected["undecodable"] += 1
                    continue
                decoded.append(
                    (stamp, conn.topic, _values(msg, conn, joint_topic, state_topic, command_topic))
                )
        except Exception as exc:
            raise BagError(f"{path}: cannot read the messages: {exc}") from None
        start = reader.start_time
    finally:
        reader.close()
    joints, commands, odometry, states = Series(), Series(), Series(), Series()
    out_of_order = 0
    stamps = np.array([stamp for stamp, _, _ in decoded], dtype=np.int64)
    median = 0
    if len(stamps):  # time runs from the first plausible stamp: one message stamped near the
        median = int(np.median(stamps))  # epoch (an unset clock) must not stretch the bag by decades
        start = int(stamps[np.abs(stamps - median) <= MAX_SPAN_NS].min())
    last_t: dict[str | None, float] = {}
    targets = {joint_topic: joints, state_topic: states, command_topic: commands}
    for stamp, topic, values in decoded:
        if abs(stamp - median) > MAX_SPAN_NS:
            rejected["stamped more than a day away from the rest"] += 1
            continue
        t = (stamp - start) * 1e-9
        out_of_order += t < last_t.get(topic, -np.inf)
        last_t[topic] = t
        if values is None:
            ignored[str(topic)] = ignored.get(str(topic), 0) + 1
        elif isinstance(values, str):
            rejected[values] += 1
        else:
            series = targets.get(topic, odometry)
            series.t.append(t)
            series.values.append(values)
    for why, n in rejected.items():
        logger.warning(f"{path}: {n} message(s) dropped: {why}")
    if not commands.t:
        raise BagError(f"{path}: topic {command_topic} has no messages")
    order = np.argsort(commands.t, kind="stable")
    commands = Series([commands.t[k] for k in order], [commands.values[k] for k in order])
    motion_source = "odometry"
    if motion_type == POSE_TYPE and odometry.t:
        order = np.argsort(odometry.t, kind="stable")
        t_pose = np.asarray(odometry.t)[order]
        rows = np.asarray(odometry.values)[order]
        if len(t_pose) < 2 or np.any(np.diff(t_pose) <= 0.0):
            raise BagError(f"{path}: {odometry_topic} needs at least two poses with distinct stamps")
        rows[:, 7:] = velocities_from_poses(t_pose, rows[:, :7])
        odometry = Series(list(t_pose), list(rows))
        motion_source = "pose"
    gaps = np.diff(commands.t) if len(commands.t) > 1 else np.zeros(1)
    overrides = Series()
    if source == "rc_override":  # the sticks go through the emulated autopilot, not to the motors
        commands, overrides = Series(), commands
    return BagContents(
        commands, odometry, command_topic, odometry_topic, ignored, out_of_order, float(gaps.max()), start,
        joints, joint_topic, motion_source, source, overrides, states, state_topic,
    )  # fmt: skip


def _topics(path: Path, conns, command: str | None, motion: str | None, joint: str | None) -> tuple:
    """What ``read_bag`` reads: the topics (command, motion, joint, state), the motion's type
    and the command source (``pwm`` or ``rc_override``, the pilot's sticks, which bring the
    mavros_msgs/State topic along)."""
    types: dict[str, str] = {}
    for c in conns:
        types.setdefault(c.topic, c.msgtype)

    def first(*msgtypes: str) -> str | None:
        return next((c.topic for c in conns if c.msgtype in msgtypes), None)

    if motion is None:
        motion = first(ODOMETRY_TYPE) or first(POSE_TYPE)
    motion_type = types.get(motion) if motion is not None else None
    if motion is not None and motion_type not in (ODOMETRY_TYPE, POSE_TYPE):
        raise BagError(f"{path}: topic {motion} is {motion_type}, expected {ODOMETRY_TYPE} or {POSE_TYPE}")
    expected = [*COMMAND_TYPES, OVERRIDE_TYPE]
    if command is None:
        command = first(*COMMAND_TYPES) or first(OVERRIDE_TYPE)
        if command is None:
            raise BagError(
                f"{path}: no thruster command topic ({', '.join(COMMAND_TYPES)}) and no RC override "
                f"({OVERRIDE_TYPE})"
            )
    elif command not in types:
        raise BagError(f"{path}: no topic {command} (topics: {sorted(types)})")
    elif types[command] not in expected:
        raise BagError(f"{path}: topic {command} is {types[command]}, expected one of {expected}")
    source = "rc_override" if types[command] == OVERRIDE_TYPE else "pwm"
    state = first(STATE_TYPE) if source == "rc_override" else None
    if joint is not None:
        joint = next((t for t, m in types.items() if m == JOINT_TYPE and t.endswith(joint)), None)
    return (command, motion, joint, state), motion_type, source


def _values(msg: Any, conn, joint_topic, state_topic, command_topic):
    """What ``read_bag`` keeps of one message: joint efforts by name, (armed, mode), the
    command channels or an odometry row; None for a message that is counted as not used, a
    string saying why for one that is rejected."""
    if conn.topic == joint_topic:
        efforts = np.asarray(msg.effort, dtype=float)
        if len(efforts) == len(msg.name) and np.all(np.isfinite(efforts)):
            return dict(zip(msg.name, (float(e) for e in efforts), strict=True))
        return None
    if conn.topic == state_topic:
        return (bool(msg.armed), str(msg.mode))
    if conn.topic == command_topic:
        values = msg.data if conn.msgtype == "std_msgs/msg/UInt16MultiArray" else msg.channels
        return np.asarray(values, dtype=float)
    if conn.msgtype == POSE_TYPE:
        p, o = msg.pose.position, msg.pose.orientation
        row = [p.x, p.y, p.z, o.w, o.x, o.y, o.z] + [0.0] * 6
    else:
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        tw = msg.twist.twist
        row = [p.x, p.y, p.z, o.w, o.x, o.y, o.z, tw.linear.x, tw.linear.y, tw.linear.z,
               tw.angular.x, tw.angular.y, tw.angular.z]  # fmt: skip
    arr = np.asarray(row, dtype=float)
    if not (np.all(np.abs(arr) <= MAX_MOTION) and np.linalg.norm(arr[3:7]) > 0.5):
        return "motion with NaN, a value beyond 1e6 or no unit quaternion"
    arr[3:7] /= np.linalg.norm(arr[3:7])
    return arr


def velocities_from_poses(t: np.ndarray, poses: np.ndarray, span: float = 0.25) -> np.ndarray:
    """Body velocities ``[v (FLU), ω (FLU)]`` of ENU poses ``[x y z qw qx qy qz]`` sampled at t:
    the poses are resampled to a uniform grid at the median interval, differentiated with a
    cubic Savitzky-Golay filter over ``span`` seconds (smoothing the measurement noise), and
    ``v = Rᵀ ṗ``, ``ω = 2 vec(q* ⊗ q̇)`` are interpolated back to the stamps."""
    from scipy.signal import savgol_filter
    from transforms3d.quaternions import qconjugate, qmult, quat2mat

    quats = np.array(poses[:, 3:7], dtype=float)
    for k in range(1, len(quats)):  # q and -q are the same attitude: make the sequence continuous
        if np.dot(quats[k], quats[k - 1]) < 0.0:
            quats[k] = -quats[k]
    dt = float(np.median(np.diff(t)))
    grid = np.arange(t[0], t[-1] + 0.5 * dt, dt)
    x = np.column_stack([np.interp(grid, t, c) for c in np.column_stack([poses[:, :3], quats]).T])
    x[:, 3:] /= np.linalg.norm(x[:, 3:], axis=1, keepdims=True)
    n = len(grid)
    window = min(max(5, 2 * round(0.5 * span / dt) + 1), n if n % 2 else n - 1)
    if window < 5:
        xdot = np.gradient(x, dt, axis=0)
    else:
        xdot = savgol_filter(x, window, 3, deriv=1, delta=dt, axis=0)
        x = savgol_filter(x, window, 3, axis=0)
        x[:, 3:] /= np.linalg.norm(x[:, 3:], axis=1, keepdims=True)
    out = np.zeros((n, 6))
    for k in range(n):
        out[k, :3] = quat2mat(x[k, 3:]).T @ xdot[k, :3]
        out[k, 3:] = 2.0 * qmult(qconjugate(x[k, 3:]), xdot[k, 3:])[1:]
    return np.column_stack([np.interp(t, grid, c) for c in out.T])


def write_bag(
    path: str | Path, topics: dict[str, tuple[str, list[tuple[int, object]]]], storage: str = "sqlite3"
) -> None:
    """Write ``{topic: (msgtype, [(stamp_ns, message), ...])}`` to a new bag."""
    store = typestore()
    plugin = {"sqlite3": StoragePlugin.SQLITE3, "mcap": StoragePlugin.MCAP}[storage]
    with Writer(Path(path), version=9, storage_plugin=plugin) as writer:
        for topic, (msgtype, items) in topics.items():
            conn = writer.add_connection(topic, msgtype, typestore=store)
            for stamp, msg in items:
                writer.write(conn, stamp, store.serialize_cdr(msg, msgtype))


def _header(store, stamp_ns: int, frame_id: str):
    T = store.types
    return T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9),
        frame_id=frame_id,
    )


def _pose(store, r):
    T = store.types
    point = T["geometry_msgs/msg/Point"](x=r[0], y=r[1], z=r[2])
    quat = T["geometry_msgs/msg/Quaternion"](w=r[3], x=r[4], y=r[5], z=r[6])
    return T["geometry_msgs/msg/Pose"](position=point, orientation=quat)


def pose_message(store, stamp_ns: int, row, frame_id: str = "map"):
    """A geometry_msgs/PoseStamped (rosbags class) from the pose part of an odometry row."""
    r = [float(x) for x in row[:7]]
    return store.types[POSE_TYPE](header=_header(store, stamp_ns, frame_id), pose=_pose(store, r))


def odometry_message(store, stamp_ns: int, row, frame_id: str = "odom", child: str = "base_link"):
    """A nav_msgs/Odometry (rosbags class) from an odometry row (see ``BagContents``)."""
    T = store.types
    r = [float(x) for x in row]
    header = _header(store, stamp_ns, frame_id)
    vec = T["geometry_msgs/msg/Vector3"]
    twist = T["geometry_msgs/msg/Twist"](
        linear=vec(x=r[7], y=r[8], z=r[9]), angular=vec(x=r[10], y=r[11], z=r[12])
    )
    cov = np.zeros(36)
    return T["nav_msgs/msg/Odometry"](
        header=header,
        child_frame_id=child,
        pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=_pose(store, r), covariance=cov),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=cov),
    )


def override_message(store, stamp_ns: int, channels):
    """A mavros_msgs/OverrideRCIn (rosbags class): 18 channels, channel 1 first (0 releases a
    channel, 65535 leaves it)."""
    ch = np.full(18, 65535, dtype=np.uint16)
    ch[: len(channels)] = np.asarray(channels, dtype=np.uint16)
    return store.types[OVERRIDE_TYPE](channels=ch)


def state_message(store, stamp_ns: int, armed: bool, mode: str):
    """A mavros_msgs/State (rosbags class) as MAVROS publishes it for ArduSub."""
    return store.types[STATE_TYPE](
        header=_header(store, stamp_ns, ""), connected=True, armed=armed, guided=False,
        manual_input=True, mode=mode, system_status=4 if armed else 3,
    )  # fmt: skip


def rcout_message(store, stamp_ns: int, pwm):
    """A mavros_msgs/RCOut (rosbags class): servo PWM, channel n first."""
    header = _header(store, stamp_ns, "")
    return store.types["mavros_msgs/msg/RCOut"](header=header, channels=np.asarray(pwm, dtype=np.uint16))
