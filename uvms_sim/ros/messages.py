"""Simulator state -> ROS messages (REP-103/REP-105), with the TF names of ``model.naming``.
``odom`` is ENU; ``odom_ned`` is published as a static child of it.
"""

from __future__ import annotations

import time
import weakref

import numpy as np
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from transforms3d.quaternions import axangle2quat, mat2quat, qmult

from .. import frames
from ..model.naming import VehicleFrames, tf_names
from ..spatial import Array
from . import message_kernels

__all__ = ["VehicleFrames", "tf_names"]  # named here for the node


WANTED_FOR = 0.05  # s of wall clock a publisher's count of readers is taken as it was
_readers: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # publisher -> (until, wanted)


def wanted(publisher) -> bool:
    """Whether a topic has subscribers (a recorder counts): messages nobody reads are not
    built, which matters when the simulator runs many times faster than real time. The count
    is asked of the middleware at most every ``WANTED_FOR`` wall seconds per publisher (3-5 us
    a question, asked for every topic at every publish): a new reader gets its first message
    within that."""
    now = time.monotonic()
    seen = _readers.get(publisher)
    if seen is None or now >= seen[0]:
        seen = _readers[publisher] = (now + WANTED_FOR, publisher.get_subscription_count() > 0)
    return seen[1]


GROUND_TRUTH_VARIANCE = 1e-12  # the simulator knows its state; tiny, not zero ("unknown")


def quat_msg(target, q_wxyz: Array) -> None:
    target.w, target.x, target.y, target.z = map(float, q_wxyz)


def vector_msg(target, v: Array) -> None:
    target.x, target.y, target.z = map(float, v)


def transform(
    stamp,
    parent: str,
    child: str,
    R: Array | None,
    p: Array,
    quat: Array | None = None,
    msg: TransformStamped | None = None,
) -> TransformStamped:
    """``child`` pose in ``parent``: rotation parent_R_child (or its quaternion ``quat``,
    ``[w x y z]``) and origin in parent axes; into ``msg`` when given (reused)."""
    t = TransformStamped() if msg is None else msg
    t.header.stamp = stamp
    t.header.frame_id = parent
    t.child_frame_id = child
    vector_msg(t.transform.translation, p)
    q = mat2quat(R) if quat is None else np.asarray(quat, dtype=float)
    quat_msg(t.transform.rotation, q if q[0] >= 0 else -q)
    return t


def tree_quaternions(model) -> list[Array]:
    """Per body, the quaternion of its joint frame in its parent (``E_Tᵀ``), computed once."""
    return [mat2quat(np.asarray(model.tree[i][0]).T) for i in range(model.nbodies)]


def joint_quaternion(model, i: int, q: Array, tree_quat: Array) -> Array:
    """Quaternion of body i's rotation in its parent (``E_iᵀ = E_Tᵀ E_Jᵀ``) for configuration
    q: the tree quaternion times the joint's (``axangle2quat`` for a revolute joint, the ball's
    own quaternion, identity otherwise)."""
    joint = model.joints[i]
    if joint.type in ("revolute", "continuous"):
        return qmult(tree_quat, axangle2quat(joint.axis, q[model.idx_q[i]], is_normalized=True))
    if joint.type == "spherical":
        s = model.idx_q[i]
        return qmult(tree_quat, q[s : s + 4] / np.linalg.norm(q[s : s + 4]))
    if joint.type == "free":
        s = model.idx_q[i]
        return qmult(tree_quat, q[s + 3 : s + 7] / np.linalg.norm(q[s + 3 : s + 7]))
    return tree_quat


def pose_numbers(pose) -> Array:
    """A geometry_msgs Pose's numbers in ``POSE_FIELDS``'s order."""
    p, o = pose.position, pose.orientation
    return np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])


POSE_FIELDS = (*(f"position.{a}" for a in "xyz"), *(f"orientation.{a}" for a in "xyzw"))
ODOMETRY_FIELDS = (
    *(f"pose.pose.{f}" for f in POSE_FIELDS),
    *(f"twist.twist.linear.{a}" for a in "xyz"),
    *(f"twist.twist.angular.{a}" for a in "xyz"),
)
IMU_FIELDS = (
    *(f"orientation.{a}" for a in "xyzw"),
    *(f"angular_velocity.{a}" for a in "xyz"),
    *(f"linear_acceleration.{a}" for a in "xyz"),
)


def odometry_values(q: Array, v: Array, out: Array | None = None) -> Array:
    """The numbers of ``odometry`` in the order of ``ODOMETRY_FIELDS``: position ENU,
    orientation ENU/FLU, linear and angular velocity FLU (``message_kernels.odometry_numbers``;
    into ``out`` when given)."""
    out = np.empty(13) if out is None else out
    q, v = np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(v, dtype=float)
    message_kernels.odometry_numbers(q, v, frames.TO_ENU_FLU, frames.NED_TO_ENU, frames.FLU_TO_FRD, out)
    return out


def imu_values(q_quat: Array, omega_frd: Array, specific_force_frd: Array, out: Array | None = None) -> Array:
    """The numbers of ``imu`` in the order of ``IMU_FIELDS``: orientation ENU/FLU, rate and
    specific force FLU (``message_kernels.imu_numbers``; into ``out`` when given)."""
    out = np.empty(10) if out is None else out
    quat, omega, force = (
        np.ascontiguousarray(x, dtype=float) for x in (q_quat, omega_frd, specific_force_frd)
    )
    message_kernels.imu_numbers(quat, omega, force, frames.TO_ENU_FLU, frames.FLU_TO_FRD, out)
    return out


def odometry(
    stamp,
    frame_id: str,
    child: str,
    q: Array,
    v: Array,
    msg: Odometry | None = None,
    values: Array | None = None,
) -> Odometry:
    """Odometry of a free joint ``q = [p NED; quat]``, ``v = [u v w p q r]`` (FRD) in ENU/FLU
    (``odometry_values``, or ``values`` when the caller has them already). Given ``msg`` (one
    this function returned: frames and covariances already set), only its stamp and state are
    written; setting the covariances is most of the cost of a new one."""
    if msg is None:
        msg = Odometry()
        msg.header.frame_id = frame_id
        msg.child_frame_id = child
        cov = (np.eye(6) * GROUND_TRUTH_VARIANCE).reshape(-1).tolist()
        msg.pose.covariance = cov
        msg.twist.covariance = cov
    msg.header.stamp = stamp
    x = (odometry_values(q, v) if values is None else values).tolist()
    pose, twist = msg.pose.pose, msg.twist.twist
    p, o, lin, ang = pose.position, pose.orientation, twist.linear, twist.angular
    p.x, p.y, p.z, o.x, o.y, o.z, o.w, lin.x, lin.y, lin.z, ang.x, ang.y, ang.z = x
    return msg


def imu(
    stamp,
    frame: str,
    q_quat: Array,
    omega_frd: Array,
    specific_force_frd: Array,
    msg: Imu | None = None,
    values: Array | None = None,
) -> Imu:
    """IMU message of the true attitude, rate and specific force (FRD) in FLU
    (``imu_values``, or ``values``); ``msg`` reused as in ``odometry``."""
    if msg is None:
        msg = Imu()
        msg.header.frame_id = frame
        cov = (np.eye(3) * GROUND_TRUTH_VARIANCE).reshape(-1).tolist()
        msg.orientation_covariance = cov
        msg.angular_velocity_covariance = cov
        msg.linear_acceleration_covariance = cov
    msg.header.stamp = stamp
    x = (imu_values(q_quat, omega_frd, specific_force_frd) if values is None else values).tolist()
    o, w, a = msg.orientation, msg.angular_velocity, msg.linear_acceleration
    o.x, o.y, o.z, o.w, w.x, w.y, w.z, a.x, a.y, a.z = x
    return msg


def joint_state(stamp, names: list[str], position: Array, velocity: Array, effort: Array) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(x) for x in position]
    msg.velocity = [float(x) for x in velocity]
    msg.effort = [float(x) for x in effort]
    return msg
