"""ROS 2 bags in and out (sqlite3 and mcap, with the rosbags library; no ROS install needed).

What a replay needs from a bag: the thruster commands (``/mavros/rc/out``, mavros_msgs/RCOut:
servo n = motor n; or the node's ``thrusters/pwm``, std_msgs/UInt16MultiArray in servo order)
and, to compare or identify, the measured odometry (nav_msgs/Odometry, ENU/FLU). Messages of
other types are counted, not silently dropped; out-of-order stamps and gaps are reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_types_from_msg, get_typestore

INTERFACES = Path(__file__).resolve().parents[2] / "interfaces"
COMMAND_TYPES = ("mavros_msgs/msg/RCOut", "std_msgs/msg/UInt16MultiArray")
ODOMETRY_TYPE = "nav_msgs/msg/Odometry"


class BagError(ValueError):
    """A bag that cannot be used: the path and what is wrong."""


def typestore():
    """Kilted's message types plus the mavros_msgs definitions kept in ``interfaces/``."""
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
    store = typestore()
    try:
        reader = AnyReader([path], default_typestore=store)
        reader.open()
    except Exception as exc:  # rosbags raises its own errors for damaged metadata or storage
        raise BagError(f"{path}: cannot open the bag: {exc}") from None
    try:
        conns = reader.connections
        if command_topic is None:
            command_topic = next((c.topic for c in conns if c.msgtype in COMMAND_TYPES), None)
        if odometry_topic is None:
            odometry_topic = next((c.topic for c in conns if c.msgtype == ODOMETRY_TYPE), None)
        if command_topic is None:
            raise BagError(f"{path}: no thruster command topic ({', '.join(COMMAND_TYPES)})")
        if joint_topic is not None:
            joint_topic = next(
                (
                    c.topic
                    for c in conns
                    if c.msgtype == "sensor_msgs/msg/JointState" and c.topic.endswith(joint_topic)
                ),
                None,
            )
        joints = Series()
        commands, odometry = Series(), Series()
        ignored: dict[str, int] = {}
        out_of_order = 0
        start = reader.start_time
        last_t = {}
        try:
            messages = list(reader.messages())
        except Exception as exc:
            raise BagError(f"{path}: cannot read the messages: {exc}") from None
        for conn, stamp, raw in messages:
            t = (stamp - start) * 1e-9
            if conn.topic not in (command_topic, odometry_topic, joint_topic):
                ignored[conn.topic] = ignored.get(conn.topic, 0) + 1
                continue
            if t < last_t.get(conn.topic, -np.inf):
                out_of_order += 1
            last_t[conn.topic] = t
            msg = reader.deserialize(raw, conn.msgtype)
            if conn.topic == joint_topic:
                if len(msg.effort) == len(msg.name):
                    joints.t.append(t)
                    joints.values.append(dict(zip(msg.name, (float(e) for e in msg.effort), strict=True)))
                else:
                    ignored[conn.topic] = ignored.get(conn.topic, 0) + 1
                continue
            if conn.topic == command_topic:
                values = msg.channels if conn.msgtype == "mavros_msgs/msg/RCOut" else msg.data
                commands.t.append(t)
                commands.values.append(np.asarray(values, dtype=float))
            else:
                p, o = msg.pose.pose.position, msg.pose.pose.orientation
                tw = msg.twist.twist
                odometry.t.append(t)
                odometry.values.append(
                    [p.x, p.y, p.z, o.w, o.x, o.y, o.z, tw.linear.x, tw.linear.y, tw.linear.z,
                     tw.angular.x, tw.angular.y, tw.angular.z]
                )  # fmt: skip
    finally:
        reader.close()
    if not commands.t:
        raise BagError(f"{path}: topic {command_topic} has no messages")
    order = np.argsort(commands.t, kind="stable")
    commands = Series([commands.t[k] for k in order], [commands.values[k] for k in order])
    gaps = np.diff(commands.t) if len(commands.t) > 1 else np.zeros(1)
    return BagContents(
        commands,
        odometry,
        command_topic,
        odometry_topic,
        ignored,
        out_of_order,
        float(gaps.max()),
        start,
        joints,
        joint_topic,
    )


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


def odometry_message(store, stamp_ns: int, row, frame_id: str = "odom", child: str = "base_link"):
    """A nav_msgs/Odometry (rosbags class) from an odometry row (see ``BagContents``)."""
    T = store.types
    r = [float(x) for x in row]
    header = T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9),
        frame_id=frame_id,
    )
    point = T["geometry_msgs/msg/Point"](x=r[0], y=r[1], z=r[2])
    quat = T["geometry_msgs/msg/Quaternion"](w=r[3], x=r[4], y=r[5], z=r[6])
    vec = T["geometry_msgs/msg/Vector3"]
    twist = T["geometry_msgs/msg/Twist"](
        linear=vec(x=r[7], y=r[8], z=r[9]), angular=vec(x=r[10], y=r[11], z=r[12])
    )
    cov = np.zeros(36)
    return T["nav_msgs/msg/Odometry"](
        header=header,
        child_frame_id=child,
        pose=T["geometry_msgs/msg/PoseWithCovariance"](
            pose=T["geometry_msgs/msg/Pose"](position=point, orientation=quat), covariance=cov
        ),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=cov),
    )


def rcout_message(store, stamp_ns: int, pwm):
    """A mavros_msgs/RCOut (rosbags class): servo PWM, channel n first."""
    T = store.types
    header = T["std_msgs/msg/Header"](
        stamp=T["builtin_interfaces/msg/Time"](sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id=""
    )
    return T["mavros_msgs/msg/RCOut"](header=header, channels=np.asarray(pwm, dtype=np.uint16))
