"""Messages published from their serialized form (``uvms_sim.ros.serialized``): the bytes with
numbers written in place read back as the message rclpy would have serialized, for every
message the node publishes this way, and they cross a real DDS topic as such."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rclpy.serialization import deserialize_message
from ros_helpers import ros_context, spin_until
from rosgraph_msgs.msg import Clock
from tf2_msgs.msg import TFMessage

from uvms_sim.ros import message_kernels, messages
from uvms_sim.ros.serialized import Serialized, _uint_sentinel, get_field, set_field

FIELDS = [f"translation.{a}" for a in "xyz"] + [f"rotation.{a}" for a in "xyzw"]


def tf_message(names: list[tuple[str, str]]) -> tuple[TFMessage, list[str], list[str]]:
    msg = TFMessage(transforms=[TransformStamped() for _ in names])
    for t, (parent, child) in zip(msg.transforms, names, strict=True):
        t.header.frame_id, t.child_frame_id = parent, child
    floats = [f"transforms[{k}].transform.{f}" for k in range(len(names)) for f in FIELDS]
    return msg, floats, [f"transforms[{k}].header.stamp" for k in range(len(names))]


def expected(msg, floats, stamps, values, sec, nanosec):
    for path, value in zip(floats, values, strict=True):
        set_field(msg, path, float(value))
    for path in stamps:
        stamp = get_field(msg, path)
        stamp.sec, stamp.nanosec = sec, nanosec
    return msg


# frame names of every length mod 8: each shifts the alignment of what follows
NAMES = [
    ("odom", "base_link"),
    ("base_link", "a"),
    ("a", "ab"),
    ("arm_link_1", "arm_link_2x"),
    ("x" * 13, "y" * 7),
]


# and as many as the node carries with the most objects (entities.MAX_OBJECTS) and an arm
MANY = [("odom", f"flood_{k}/base_link") for k in range(110)]


# frame names holding the numbers the stamps are looked for by, at every alignment (a hostile
# entity name did: the fuzz suite found it)
_WORDS = [struct.pack("<I", _uint_sentinel(k, 0)) for k in range(240)]
_ASCII = [b for b in _WORDS if all(32 <= c < 127 for c in b)]
HOSTILE = [("odom", "x" * (k % 4) + 3 * _ASCII[k % len(_ASCII)].decode()) for k in range(120)]


@pytest.mark.parametrize(
    "names",
    [NAMES[:0], NAMES[:1], NAMES[:2], NAMES, MANY, HOSTILE],
    ids=["0", "1", "2", "5", "110", "hostile"],
)
def test_tf_bytes_read_back_as_the_message_for_any_frame_names(names):
    rng = np.random.default_rng(len(names))
    msg, floats, stamps = tf_message(names)
    wire = Serialized(msg, floats, stamps)
    for _ in range(20):
        values = rng.normal(scale=1e3, size=len(floats))
        sec, nanosec = int(rng.integers(0, 2**31 - 1)), int(rng.integers(0, 10**9))
        got = deserialize_message(wire.fill(values, sec, nanosec), TFMessage)
        want = expected(tf_message(names)[0], floats, stamps, values, sec, nanosec)
        assert got == want
        assert [t.child_frame_id for t in got.transforms] == [c for _, c in names]


def test_odometry_imu_and_clock_bytes_read_back_as_the_node_builds_them():
    rng = np.random.default_rng(1)
    quat = rng.normal(size=4)
    q = np.array([1.0, -2.0, 3.0, *(quat / np.linalg.norm(quat))])
    v, f = rng.normal(size=6), rng.normal(size=3)
    stamp = Time(sec=12, nanosec=345_678_901)
    rest = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    odom = Serialized(
        messages.odometry(Time(), "odom", "base_link", rest, np.zeros(6)),
        messages.ODOMETRY_FIELDS,
        ["header.stamp"],
    )
    got = deserialize_message(odom.fill(messages.odometry_values(q, v), 12, 345_678_901), odom.msg_type)
    assert got == messages.odometry(stamp, "odom", "base_link", q, v)
    imu = Serialized(
        messages.imu(Time(), "base_link", rest[3:], np.zeros(3), np.zeros(3)),
        messages.IMU_FIELDS,
        ["header.stamp"],
    )
    got = deserialize_message(imu.fill(messages.imu_values(q[3:], v[3:], f), 12, 345_678_901), imu.msg_type)
    assert got == messages.imu(stamp, "base_link", q[3:], v[3:], f)
    clock = Serialized(Clock(), (), ("clock",))
    assert deserialize_message(clock.fill((), 7, 999_999_999), Clock) == Clock(
        clock=Time(sec=7, nanosec=999_999_999)
    )


def test_odometry_and_imu_numbers_are_the_rotation_matrices_products():
    """The compiled numbers of odometry and IMU (``message_kernels``, through ``frames.attitude``)
    against rotation matrices (transforms3d): the position turned NED -> ENU, the attitude of
    ``NED_TO_ENU · R(q) · FLU_TO_FRD`` with w >= 0, for quaternions of any norm and sign, and the
    velocities, rate and specific force turned FRD -> FLU. 1e-14: mat2quat's eigenvector is
    exact to a few roundings."""
    from transforms3d.quaternions import mat2quat, quat2mat

    from uvms_sim import frames

    rng = np.random.default_rng(11)
    for _ in range(200):
        q = np.concatenate((rng.normal(size=3) * 10.0, rng.normal(size=4) * rng.uniform(0.1, 3.0)))
        v, f = rng.normal(size=6), rng.normal(size=3)
        R = frames.NED_TO_ENU @ quat2mat(q[3:7] / np.linalg.norm(q[3:7])) @ frames.FLU_TO_FRD
        w = mat2quat(R)
        w = w if w[0] >= 0.0 else -w
        xyzw = [*w[1:], w[0]]
        odom = messages.odometry_values(q, v)
        np.testing.assert_allclose(odom[:3], frames.NED_TO_ENU @ q[:3], rtol=0.0, atol=1e-14)
        np.testing.assert_allclose(odom[3:7], xyzw, rtol=0.0, atol=1e-14)
        np.testing.assert_allclose(
            odom[7:], [*(frames.FLU_TO_FRD @ v[:3]), *(frames.FLU_TO_FRD @ v[3:])], atol=0.0
        )
        imu = messages.imu_values(q[3:7], v[3:], f)
        np.testing.assert_array_equal(imu[:4], odom[3:7])
        np.testing.assert_allclose(
            imu[4:], [*(frames.FLU_TO_FRD @ v[3:]), *(frames.FLU_TO_FRD @ f)], atol=0.0
        )
        np.testing.assert_array_equal(
            frames.quat_ned_frd_to_enu_flu(q[3:7]), [odom[6], *odom[3:6]]
        )  # one law


def test_pose_rows_keep_w_non_negative_as_transform_does():
    p = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    quat = np.array([[-0.5, 0.5, -0.5, 0.5], [0.0, 0.0, 0.6, 0.8]])
    rows = np.empty(14)
    message_kernels.pose_rows(p, quat, rows)
    rows = rows.reshape(2, 7)
    for row, pk, qk in zip(rows, p, quat, strict=True):
        t = messages.transform(Time(), "a", "b", None, pk, qk).transform
        r = t.rotation
        assert row.tolist() == [t.translation.x, t.translation.y, t.translation.z, r.x, r.y, r.z, r.w]


def test_revolute_rows_are_each_joints_quaternion():
    """The /tf rows of an arm's revolute joints, computed at once, are ``joint_quaternion``'s
    for each joint (the Heavy with the Reach Alpha 5, angles over several turns of both signs;
    1e-15: a few roundings of products of unit numbers)."""
    from uvms_sim.model import load
    from uvms_sim.model.configs import resolve

    model = load(resolve("bluerov2_heavy_alpha5")).model
    tree = messages.tree_quaternions(model)
    joints = [i for i, j in enumerate(model.joints) if j.type in ("revolute", "continuous")]
    assert len(joints) >= 5
    rng = np.random.default_rng(3)
    for _ in range(20):
        iq = np.array([model.idx_q[i] for i in joints])
        q = np.array(model.neutral(), dtype=float)
        q[iq] = rng.uniform(-20.0, 20.0, len(joints))
        got = np.empty((len(joints), 4))
        message_kernels.revolute_rows(
            np.array([tree[i] for i in joints]), np.array([model.joints[i].axis for i in joints]), q[iq], got
        )
        want = np.array([messages.joint_quaternion(model, i, q, tree[i]) for i in joints])
        np.testing.assert_allclose(got, want, rtol=0.0, atol=1e-15)


def test_serialized_bytes_cross_a_dds_topic_as_the_message():
    """A real publisher and subscription (two nodes, the middleware between them): what the
    reader gets from the published bytes is the message."""
    names = NAMES[:3]
    msg, floats, stamps = tf_message(names)
    wire = Serialized(msg, floats, stamps)
    values = np.arange(len(floats), dtype=float) * 0.25
    with ros_context() as (ctx, executor):
        talker = rclpy.create_node("serialized_talker", context=ctx)
        listener = rclpy.create_node("serialized_listener", context=ctx)
        executor.add_node(listener)
        got: list[TFMessage] = []
        listener.create_subscription(TFMessage, "serialized_tf", got.append, 10)
        pub = talker.create_publisher(TFMessage, "serialized_tf", 10)
        assert spin_until(executor, lambda: bool(got), every=lambda: pub.publish(wire.fill(values, 3, 4)))
    assert got[0] == expected(tf_message(names)[0], floats, stamps, values, 3, 4)
