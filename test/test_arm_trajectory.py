"""joint_trajectory_controller's rules (uvms_sim.ros.trajectory): the spline interpolation
against scipy's Hermite polynomials (an independent algorithm), the order and wording of the
validation, and the tolerance rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from scipy.interpolate import BPoly
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from uvms_sim.ros.trajectory import (
    JointLimits,
    Point,
    Tolerances,
    Trajectory,
    interpolate,
    seconds,
    tolerances,
    validate,
)

JOINTS = ["a", "b"]
LIMITS = JointLimits({"a": 0.0, "b": 0.0}, {"a": 6.0, "b": 3.0}, {"a": 0.5, "b": 0.5})


def point(t, q, v=(), a=()) -> JointTrajectoryPoint:
    return JointTrajectoryPoint(
        positions=list(q),
        velocities=list(v),
        accelerations=list(a),
        time_from_start=Duration(sec=int(t), nanosec=int((t % 1) * 1e9)),
    )


def trajectory(*points, names=JOINTS) -> JointTrajectory:
    return JointTrajectory(joint_names=list(names), points=list(points))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_interpolation_is_the_hermite_polynomial_of_the_given_derivatives(order: int) -> None:
    """Linear (positions), cubic (+ velocities), quintic (+ accelerations): position, velocity
    and acceleration equal scipy's BPoly.from_derivatives to 1e-9 across the segment."""
    rng = np.random.default_rng(order)
    p0, p1, v0, v1, a0, a1 = rng.normal(size=(6, 2))
    a = Point(1.0, p0, v0 if order > 1 else np.zeros(0), a0 if order > 2 else np.zeros(0))
    b = Point(2.5, p1, v1 if order > 1 else np.zeros(0), a1 if order > 2 else np.zeros(0))
    for j in range(2):
        left = [p0[j], v0[j], a0[j]][:order]
        right = [p1[j], v1[j], a1[j]][:order]
        poly = BPoly.from_derivatives([1.0, 2.5], [left, right])
        for t in np.linspace(1.0, 2.49, 13):
            p, v, acc = interpolate(a, b, t)
            assert p[j] == pytest.approx(poly(t), abs=1e-9)
            assert v[j] == pytest.approx(poly(t, 1), abs=1e-9)
            if order > 1:
                assert acc[j] == pytest.approx(poly(t, 2), abs=1e-9)


def test_sampling_starts_from_the_state_at_arrival_and_holds_the_end() -> None:
    msg = trajectory(point(1.0, [1.0, 1.0]), point(2.0, [2.0, 1.5]))
    traj = Trajectory(msg, JOINTS, start=10.0, before=np.array([0.0, 1.0]))
    p, _, _, index, end = traj.sample(10.5)
    assert np.allclose(p, [0.5, 1.0]) and index == 0 and not end
    p, v, _, index, end = traj.sample(11.5)
    assert np.allclose(p, [1.5, 1.25]) and np.allclose(v, [1.0, 0.5]) and index == 1
    p, v, _, _, end = traj.sample(13.0)
    assert np.allclose(p, [2.0, 1.5]) and np.allclose(v, 0.0) and end


def test_sampling_a_long_trajectory_finds_the_segment_of_every_instant() -> None:
    """A trajectory of 400 points (as MoveIt plans them), two of them at the same time: the
    sample at every instant (each point's time, just before and after it, between points, before
    the first and past the last) is the interpolation on the segment [t_i, t_i+1) that holds it,
    found here by scanning every segment in order, and carries that segment's index."""
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.01, 0.2, 400))
    times[200] = times[199]  # a segment of no length: never the one that holds an instant
    points = [point(t, rng.uniform(0.5, 2.5, 2), rng.normal(size=2)) for t in times]
    traj = Trajectory(trajectory(*points), JOINTS, start=3.0, before=np.array([1.0, 1.0]))
    at = [3.0 + seconds(p.time_from_start) for p in points]
    instants = [2.9, 3.001, *at, *(t - 1e-7 for t in at), *(t + 1e-7 for t in at)]
    instants += list(rng.uniform(3.0, at[-1] + 1.0, 500))
    for now in instants:
        p, v, acc, index, past_end = traj.sample(now)
        if now < at[0] or now >= at[-1]:
            assert index == (0 if now < at[0] else len(at) - 1) and past_end == (now >= at[-1])
            continue
        i = next(k for k in range(len(at) - 1) if at[k] <= now < at[k + 1])
        a, b = traj.points[i], traj.points[i + 1]
        expected = interpolate(
            Point(at[i], a.positions, a.velocities), Point(at[i + 1], b.positions, b.velocities), now
        )
        assert index == i + 1 and not past_end
        for x, y in zip((p, v, acc), expected, strict=True):
            assert np.array_equal(x, y)


def test_partial_goals_hold_the_missing_joints_and_names_are_reordered() -> None:
    msg = trajectory(point(1.0, [2.0]), names=["b"])
    assert (
        validate(msg, JOINTS, 0.0, LIMITS)
        == "Joints on incoming trajectory don't match the controller joints."
    )
    assert validate(msg, JOINTS, 0.0, LIMITS, allow_partial=True) is None
    traj = Trajectory(msg, JOINTS, 0.0, np.array([4.0, 1.0]))
    assert np.allclose(traj.sample(5.0)[0], [4.0, 2.0])
    swapped = Trajectory(trajectory(point(1.0, [2.0, 5.0]), names=["b", "a"]), JOINTS, 0.0, np.zeros(2))
    assert np.allclose(swapped.sample(5.0)[0], [5.0, 2.0])


@pytest.mark.parametrize(
    ("msg", "reason"),
    [
        (trajectory(point(1, [1, 1]), names=[]), "Joints on incoming trajectory don't match"),
        (trajectory(), "Empty trajectory received."),
        (trajectory(point(1, [1, 1]), names=["a", "x"]), "Incoming joint x doesn't match the controller's"),
        (trajectory(point(1, [1, 1], [0.1, 0])), "Velocity of last trajectory point of joint a is not"),
        (trajectory(point(1, [1, 1]), point(1, [1, 1])), "Time between points 0 and 1 is not strictly"),
        (trajectory(point(1, [1])), "Mismatch between joint_names size (2) and positions (1) at point #0."),
        (trajectory(point(1, [1, math.inf])), "Point #0 has a non-finite position for joint b"),
        (trajectory(point(1, [1, 3.5])), "Point #0: position 3.5 of joint b is outside its limits [0, 3]"),
        (trajectory(point(1, [1, 1], [0.6, 0]), point(2, [1, 1])), "Point #0: velocity 0.6 of joint a"),
    ],
)  # fmt: skip
def test_validation_names_what_is_wrong(msg, reason: str) -> None:
    assert validate(msg, JOINTS, 0.0, LIMITS).startswith(reason)


def test_a_stamped_trajectory_that_ended_is_refused() -> None:
    msg = trajectory(point(1, [1, 1]))
    msg.header.stamp.sec = 5
    assert validate(msg, JOINTS, 7.0, LIMITS).startswith(
        "Received trajectory with non-zero start time (5.000000)"
    )
    assert validate(msg, JOINTS, 5.5, LIMITS) is None


def test_tolerances_resolve_as_the_controller_does() -> None:
    default = Tolerances.defaults(2, trajectory=0.1, goal=0.05)
    goal = FollowJointTrajectory.Goal()
    goal.path_tolerance = [JointTolerance(name="b", position=0.2, velocity=-1.0)]
    goal.goal_tolerance = [JointTolerance(name="a", position=0.0, velocity=0.3)]
    tol, error = tolerances(default, goal, JOINTS)
    assert error is None
    assert tol.state[1, 0] == 0.2 and tol.state[0, 0] == 0.1  # given; the default kept
    assert tol.state[1, 1] == 0.0  # -1 erases
    assert tol.goal[0, 0] == 0.05 and tol.goal[0, 1] == 0.3
    goal.goal_tolerance = [JointTolerance(name="a", position=-2.0)]
    tol, error = tolerances(default, goal, JOINTS)
    assert tol is default and "has a invalid position tolerance" in error
    goal.goal_tolerance = [JointTolerance(name="z", position=0.1)]
    assert "'z' specified in goal.goal_tolerance does not exist" in tolerances(default, goal, JOINTS)[1]
