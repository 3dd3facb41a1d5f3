"""Simulator state -> ROS messages (REP-103/REP-105), with the TF names of ``model.naming``.
``odom`` is ENU; ``odom_ned`` is published as a static child of it.
"""

from __future__ import annotations

import numpy as np
from geometry_msgs.msg import TransformStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from transforms3d.quaternions import axangle2quat, mat2quat, qmult

from .. import frames
from ..model.naming import VehicleFrames, tf_names
from ..spatial import Array

__all__ = ["VehicleFrames", "tf_names"]  # named here for the node


def wanted(publisher) -> bool:
    """Whether a topic has subscribers (a recorder counts): messages nobody reads are not
    built, which matters when the simulator runs many times faster than real time."""
    return publisher.get_subscription_count() > 0


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


def odometry(stamp, frame_id: str, child: str, q: Array, v: Array, msg: Odometry | None = None) -> Odometry:
    """Odometry of a free joint ``q = [p NED; quat]``, ``v = [u v w p q r]`` (FRD) in ENU/FLU.
    Given ``msg`` (one this function returned: frames and covariances already set), only its
    stamp and state are written; setting the covariances is most of the cost of a new one."""
    if msg is None:
        msg = Odometry()
        msg.header.frame_id = frame_id
        msg.child_frame_id = child
        cov = (np.eye(6) * GROUND_TRUTH_VARIANCE).reshape(-1).tolist()
        msg.pose.covariance = cov
        msg.twist.covariance = cov
    msg.header.stamp = stamp
    vector_msg(msg.pose.pose.position, frames.position_ned_to_enu(q[:3]))
    quat_msg(msg.pose.pose.orientation, frames.quat_ned_frd_to_enu_flu(q[3:7]))
    vector_msg(msg.twist.twist.linear, frames.body_frd_flu(v[:3]))
    vector_msg(msg.twist.twist.angular, frames.body_frd_flu(v[3:6]))
    return msg


def imu(
    stamp, frame: str, q_quat: Array, omega_frd: Array, specific_force_frd: Array, msg: Imu | None = None
) -> Imu:
    """IMU message of the true attitude, rate and specific force (FRD) in FLU; ``msg`` reused as
    in ``odometry``."""
    if msg is None:
        msg = Imu()
        msg.header.frame_id = frame
        cov = (np.eye(3) * GROUND_TRUTH_VARIANCE).reshape(-1).tolist()
        msg.orientation_covariance = cov
        msg.angular_velocity_covariance = cov
        msg.linear_acceleration_covariance = cov
    msg.header.stamp = stamp
    quat_msg(msg.orientation, frames.quat_ned_frd_to_enu_flu(q_quat))
    vector_msg(msg.angular_velocity, frames.body_frd_flu(omega_frd))
    vector_msg(msg.linear_acceleration, frames.body_frd_flu(specific_force_frd))
    return msg


def joint_state(stamp, names: list[str], position: Array, velocity: Array, effort: Array) -> JointState:
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(x) for x in position]
    msg.velocity = [float(x) for x in velocity]
    msg.effort = [float(x) for x in effort]
    return msg
