"""Frame conversions between the physics and ROS (REP-103/REP-105), used at the ROS boundary
and by replay.

Physics runs in world NED with body FRD; ROS ``odom`` is ENU and ``base_link`` FLU. This is
the one place those conversions live.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from transforms3d.quaternions import mat2quat, qconjugate, qmult

from .spatial import Array

# ENU <- NED: swap x/y, flip z.   FRD <- FLU: flip y and z (its own inverse).
NED_TO_ENU = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
FLU_TO_FRD = np.diag([1.0, -1.0, -1.0])
# the same rotations as quaternions: conversions are quaternion products (exact, no eigh)
Q_NED_TO_ENU = mat2quat(NED_TO_ENU)
Q_FLU_TO_FRD = mat2quat(FLU_TO_FRD)


def canonical(q: Array) -> Array:
    """``q`` or ``-q``, whichever has w >= 0 (the sign mat2quat returns)."""
    return q if q[0] >= 0 else -q


def position_ned_to_enu(p: Array) -> Array:
    return NED_TO_ENU @ p


def _product_matrix(left: Array, right: Array) -> Array:
    """The 4 x 4 matrix M with ``M q = left ⊗ q ⊗ right`` for every ``q`` (the product is
    linear in q): its columns are the products of the unit quaternions."""
    return np.column_stack([qmult(left, qmult(e, right)) for e in np.eye(4)])


TO_ENU_FLU = _product_matrix(Q_NED_TO_ENU, Q_FLU_TO_FRD)
_TO_NED_FRD = _product_matrix(qconjugate(Q_NED_TO_ENU), Q_FLU_TO_FRD)


@njit(cache=True, nogil=True)
def attitude(to_enu_flu, a, b, c, d):
    """``(w, x, y, z)`` of ``quat_ned_frd_to_enu_flu`` of the quaternion ``(a, b, c, d)``:
    ``to_enu_flu`` (``TO_ENU_FLU``) times it normalised, with the sign that makes w >= 0
    (compiled: the node converts several at every publish, ``ros.message_kernels``)."""
    n = math.sqrt(a * a + b * b + c * c + d * d)
    a, b, c, d = a / n, b / n, c / n, d / n
    M = to_enu_flu
    w = M[0, 0] * a + M[0, 1] * b + M[0, 2] * c + M[0, 3] * d
    x = M[1, 0] * a + M[1, 1] * b + M[1, 2] * c + M[1, 3] * d
    y = M[2, 0] * a + M[2, 1] * b + M[2, 2] * c + M[2, 3] * d
    z = M[3, 0] * a + M[3, 1] * b + M[3, 2] * c + M[3, 3] * d
    if w < 0.0:
        return -w, -x, -y, -z
    return w, x, y, z


def quat_ned_frd_to_enu_flu(q_wxyz: Array) -> Array:
    """Attitude of base_link (FLU) in odom (ENU) from FRD-in-NED, both ``[w x y z]``: the
    rotation ``NED_TO_ENU · R · FLU_TO_FRD`` as the product ``q_ENU ⊗ q ⊗ q_FRD`` (one
    constant matrix times q, ``_product_matrix``; ``attitude``)."""
    q = np.asarray(q_wxyz, dtype=float)
    return np.array(attitude(TO_ENU_FLU, q[0], q[1], q[2], q[3]))


def position_enu_to_ned(p: Array) -> Array:
    return NED_TO_ENU.T @ p


def quat_enu_flu_to_ned_frd(q_wxyz: Array) -> Array:
    """The inverse of ``quat_ned_frd_to_enu_flu``: FRD-in-NED from base_link (FLU) in ENU."""
    q = np.asarray(q_wxyz, dtype=float)
    return canonical(_TO_NED_FRD @ (q / np.sqrt(q @ q)))


def body_frd_flu(x: Array) -> Array:
    """A body-axes vector (velocity, rate, force, moment) from FRD to FLU or back (the map is
    its own inverse)."""
    return FLU_TO_FRD @ x
