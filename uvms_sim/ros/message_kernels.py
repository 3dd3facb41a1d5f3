"""The numbers of the node's state messages compiled (numba, without the GIL): odometry, IMU
and every transform of /tf, each message's numbers in one call, in the order its serialized
bytes take them (``serialized.Serialized``).

At the rates the node publishes when it runs many times faster than real time, the /tf of the
Heavy with a Reach Alpha 5 cost about 50 small numpy operations a publish, and odometry and
IMU a dozen each, each operation a few microseconds with the caches cold from the physics.
The arithmetic is ``frames``' (its compiled ``attitude``, which
``frames.quat_ned_frd_to_enu_flu`` also calls, with ``frames.TO_ENU_FLU``; ``frames.NED_TO_ENU``
and ``frames.FLU_TO_FRD``, given as arguments); ``messages.odometry_values`` and
``imu_values`` call the kernels below, so that each law is written here once.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import numba
import numpy as np

from .. import frames
from ..dynamics.compiled import fresh_cache_dir
from ..frames import attitude

# Numba keys a cached function on its own file only: these kernels call ``frames.attitude``,
# so their cache sits in a directory named after a hash of both files (``compiled.cache_dir``)
_CACHE = fresh_cache_dir([Path(__file__), Path(frames.__file__)], "message-kernels")


def njit(**options):
    """numba's ``njit(cache=True, nogil=True)`` with its cache in ``_CACHE``."""

    def compile_(function):
        previous = numba.config.CACHE_DIR
        numba.config.CACHE_DIR = str(_CACHE)
        try:
            return numba.njit(cache=True, nogil=True, **options)(function)
        finally:
            numba.config.CACHE_DIR = previous

    return compile_


@njit(inline="always")
def _turn(R, x, y, z, out, o):
    """out[o : o + 3] = R (x, y, z) for a 3 x 3 R."""
    for i in range(3):
        out[o + i] = R[i, 0] * x + R[i, 1] * y + R[i, 2] * z


@njit()
def odometry_numbers(q, v, to_enu_flu, ned_to_enu, flu_to_frd, out):
    """``messages.ODOMETRY_FIELDS``' 13 numbers of a free root's pose q (NED position, FRD-in-NED
    quaternion) and body velocity v (FRD, linear first): position in ENU, attitude of FLU in
    ENU (``x y z w``), linear and angular velocity in FLU."""
    _turn(ned_to_enu, q[0], q[1], q[2], out, 0)
    w, x, y, z = attitude(to_enu_flu, q[3], q[4], q[5], q[6])
    out[3], out[4], out[5], out[6] = x, y, z, w
    _turn(flu_to_frd, v[0], v[1], v[2], out, 7)
    _turn(flu_to_frd, v[3], v[4], v[5], out, 10)


@njit()
def imu_numbers(quat, omega, force, to_enu_flu, flu_to_frd, out):
    """``messages.IMU_FIELDS``' 10 numbers: the attitude of FLU in ENU (``x y z w``) of the
    FRD-in-NED quaternion ``quat``, the rate ``omega`` and specific force ``force`` (FRD) in FLU."""
    w, x, y, z = attitude(to_enu_flu, quat[0], quat[1], quat[2], quat[3])
    out[0], out[1], out[2], out[3] = x, y, z, w
    _turn(flu_to_frd, omega[0], omega[1], omega[2], out, 4)
    _turn(flu_to_frd, force[0], force[1], force[2], out, 7)


@njit()
def revolute_rows(tree, axes, angles, out):
    """Row k of ``out``: tree quaternion k (``[w x y z]``) times the rotation of ``angles[k]``
    about the unit axis k, the Hamilton product ``(w₁, v₁)(c, s a) = (w₁ c - s v₁·a,
    w₁ s a + c v₁ + s v₁ × a)`` with ``c, s`` the cosine and sine of half the angle."""
    for k in range(angles.shape[0]):
        half = 0.5 * angles[k]
        c, s = math.cos(half), math.sin(half)
        w1, x1, y1, z1 = tree[k, 0], tree[k, 1], tree[k, 2], tree[k, 3]
        x2, y2, z2 = axes[k, 0] * s, axes[k, 1] * s, axes[k, 2] * s
        out[k, 0] = w1 * c - (x1 * x2 + y1 * y2 + z1 * z2)
        out[k, 1] = w1 * x2 + c * x1 + (y1 * z2 - z1 * y2)
        out[k, 2] = w1 * y2 + c * y1 + (z1 * x2 - x1 * z2)
        out[k, 3] = w1 * z2 + c * z1 + (x1 * y2 - y1 * x2)


@njit()
def pose_rows(p, quat, values):
    """``values`` (n x 7 numbers, flat): each pose as geometry_msgs orders a Transform's
    numbers, ``x y z`` then ``x y z w`` of its quaternion (``[w x y z]`` rows of ``quat``) with
    ``w >= 0``."""
    for k in range(p.shape[0]):
        o = 7 * k
        sign = -1.0 if quat[k, 0] < 0.0 else 1.0
        for a in range(3):
            values[o + a] = p[k, a]
            values[o + 3 + a] = sign * quat[k, 1 + a]
        values[o + 6] = sign * quat[k, 0]


@njit()
def tf_numbers(
    q, p_world, r, to_enu_flu, ned_to_enu, free, vehicles, objects, moving, revolute, p, quat, values
):
    """The /tf rows (``node.SimulatorNode._tf_buffers``'s layout) into ``p`` (origins) and
    ``quat`` (``[w x y z]``), then all of them into ``values`` (``pose_rows``); the rows of
    none of the tables below (``node.TfLayout``'s ``general`` and ``other``, and a prismatic
    joint's constant rotation) are the caller's, already in ``quat``. Index
    tables (int64), a row of the message first in each:

    - ``free`` (n x 2): then a free root's first index s in q; the attitude of its quaternion
      ``q[s+3 : s+7]`` is the row's (``frames.quat_ned_frd_to_enu_flu``: ``to_enu_flu`` times
      it normalised);
    - ``vehicles`` (n x 2): then a body, whose world origin (``p_world``) in ENU is the row's;
    - ``objects`` (n x 2): then a free root's first index s in q; its position ``q[s : s+3]``
      in ENU is the row's;
    - ``moving`` (n x 2): then a body, whose joint origin in its parent (``r``) is the row's;
    - ``revolute``: ``(rows, iq, axes, tree, angles, turned)``: the rows of the revolute
      joints, their angles' indices in q, their axes and tree quaternions, and two scratch
      arrays (``revolute_rows``)."""
    for k in range(free.shape[0]):
        row, s = free[k, 0], free[k, 1]
        w, x, y, z = attitude(to_enu_flu, q[s + 3], q[s + 4], q[s + 5], q[s + 6])
        quat[row, 0], quat[row, 1], quat[row, 2], quat[row, 3] = w, x, y, z
    for k in range(vehicles.shape[0]):
        body = vehicles[k, 1]
        _turn(ned_to_enu, p_world[body, 0], p_world[body, 1], p_world[body, 2], p[vehicles[k, 0]], 0)
    for k in range(objects.shape[0]):
        s = objects[k, 1]
        _turn(ned_to_enu, q[s], q[s + 1], q[s + 2], p[objects[k, 0]], 0)
    for k in range(moving.shape[0]):
        for i in range(3):
            p[moving[k, 0], i] = r[moving[k, 1], i]
    rows, iq, axes, tree, angles, turned = revolute
    for k in range(rows.shape[0]):
        angles[k] = q[iq[k]]
    revolute_rows(tree, axes, angles, turned)
    for k in range(rows.shape[0]):
        for i in range(4):
            quat[rows[k], i] = turned[k, i]
    pose_rows(p, quat, values)


def warm_up() -> None:
    """Compile (or load from the cache) every kernel here and ``frames.attitude``: ``python -m
    uvms_sim.ros.message_kernels`` (``make setup`` and ``uvms-sim kernels`` run it), and the
    node's physics thread as it starts, so that no thread loads them later (a load makes and
    drops LLVM objects; in the main thread, a Ctrl-C then would land in their finalisers)."""
    index = lambda *rows: np.array(rows, dtype=np.int64)  # noqa: E731
    revolute = (index(1), index(0), np.eye(3)[:1], np.eye(4)[:1], np.zeros(1), np.zeros((1, 4)))
    tables = (index([0, 0]), index([0, 0]), index().reshape(0, 2), index([1, 0]), revolute)
    q7, p = np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), np.zeros((2, 3))
    tf_numbers(q7, p, p, np.eye(4), np.eye(3), *tables, np.zeros((2, 3)), np.zeros((2, 4)), np.zeros(14))
    odometry_numbers(q7, np.zeros(6), np.eye(4), np.eye(3), np.eye(3), np.zeros(13))
    imu_numbers(q7[3:], np.zeros(3), np.zeros(3), np.eye(4), np.eye(3), np.zeros(10))
    frames.quat_ned_frd_to_enu_flu(q7[3:])


if __name__ == "__main__":
    started = time.perf_counter()
    warm_up()
    print(f"uvms_sim message kernels ready in {time.perf_counter() - started:.1f} s")
