"""joint_trajectory_controller's trajectory rules, as ros2_controllers (Kilted) implements them.

- ``validate``: the checks of ``JointTrajectoryController::validate_trajectory_msg``, in its
  order and with its error messages (partial goals, empty names or points, unknown joints, a
  non-zero final velocity, a trajectory that ends in the past, times not strictly increasing,
  field sizes, effort fields), then this simulator's own checks that the real controller leaves
  to the hardware: non-finite values, positions outside the joints' limits and velocities above
  them (the Alpha 5's firmware would ignore such a position setpoint; here the goal is refused
  with one line naming the joint).
- ``Trajectory``: the message sorted to the controller's joint order with missing joints held
  (``fill_partial_goal``, ``sort_to_local_joint_order``) and sampled as ``Trajectory::sample``
  and ``interpolate_between_points`` do (the "splines" method): from the state when the
  trajectory arrived to the first point, then point to point; linear between points with
  positions only, cubic with velocities, quintic with velocities and accelerations; the last
  point held after the end.
- ``tolerances``: the defaults and a goal's path and goal tolerances (``get_segment_tolerances``
  and ``resolve_tolerance_source``: 0 keeps the default, -1 erases it, another negative value
  is illegal and the defaults stay) and ``within`` (``check_state_tolerance_per_joint``).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)  # the controller compares with float epsilon


def seconds(duration) -> float:
    """A builtin_interfaces Duration or Time in seconds."""
    return float(duration.sec) + 1e-9 * float(duration.nanosec)


@dataclass(frozen=True)
class JointLimits:
    """What the simulator checks beyond the controller: per joint, position and velocity limits."""

    lower: dict[str, float]
    upper: dict[str, float]
    velocity: dict[str, float]


def validate(
    msg, joints: list[str], now: float, limits: JointLimits, allow_partial: bool = False
) -> str | None:
    """None for a trajectory the controller takes, else its one-line reason (JTC's wording)."""
    names = list(msg.joint_names)
    if not allow_partial and len(names) != len(joints):
        return "Joints on incoming trajectory don't match the controller joints."
    if not names:
        return "Empty joint names on incoming trajectory."
    if not msg.points:
        return "Empty trajectory received."
    for name in names:
        if name not in joints:
            return f"Incoming joint {name} doesn't match the controller's joints."
    if len(set(names)) != len(names):
        return f"Incoming trajectory names a joint twice: {names}"
    last = msg.points[-1]
    for name, v in zip(names, last.velocities, strict=False):
        if abs(v) > EPS32 or not math.isfinite(v):
            return f"Velocity of last trajectory point of joint {name} is not zero: {v:.15f}"
    start = seconds(msg.header.stamp)
    if start != 0.0:
        end = start + seconds(last.time_from_start)
        if end < now:
            return f"Received trajectory with non-zero start time ({start:f}) that ends in the past ({end:f})"
    previous = 0.0
    n = len(names)
    for i, p in enumerate(msg.points):
        t = seconds(p.time_from_start)
        if i > 0 and t <= previous:
            return (
                f"Time between points {i - 1} and {i} is not strictly increasing, it is {previous:f} and "
                f"{t:f} respectively"
            )
        previous = t
        for label, values, allow_empty in (
            ("positions", p.positions, False),
            ("velocities", p.velocities, True),
            ("accelerations", p.accelerations, True),
        ):
            if not (allow_empty and len(values) == 0) and len(values) != n:
                return f"Mismatch between joint_names size ({n}) and {label} ({len(values)}) at point #{i}."
        if len(p.effort):
            return (
                "Trajectories with effort fields are only supported for controllers using the 'effort' "
                "command interface."
            )
        # the simulator's own checks (the real controller passes these to the hardware)
        for label, values in (
            ("position", p.positions),
            ("velocity", p.velocities),
            ("acceleration", p.accelerations),
        ):
            for name, x in zip(names, values, strict=False):  # an empty field is allowed
                if not math.isfinite(x):
                    return f"Point #{i} has a non-finite {label} for joint {name}: {x}"
        if not math.isfinite(t) or t < 0.0:
            return f"Point #{i} has an invalid time_from_start: {t}"
        for name, x in zip(names, p.positions, strict=True):
            if not limits.lower[name] <= x <= limits.upper[name]:
                return (
                    f"Point #{i}: position {x:g} of joint {name} is outside its limits "
                    f"[{limits.lower[name]:g}, {limits.upper[name]:g}]"
                )
        for name, x in zip(names, p.velocities, strict=False):
            if abs(x) > limits.velocity[name]:
                return (
                    f"Point #{i}: velocity {x:g} of joint {name} is above its limit {limits.velocity[name]:g}"
                )
    return None


@dataclass
class Point:
    """A trajectory point in the controller's joint order (empty arrays: not given)."""

    t: float
    positions: np.ndarray
    velocities: np.ndarray = field(default_factory=lambda: np.zeros(0))
    accelerations: np.ndarray = field(default_factory=lambda: np.zeros(0))


def interpolate(a: Point, b: Point, t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``interpolate_between_points``: position, velocity, acceleration at ``t`` between a and b
    (linear, cubic or quintic by the derivatives both give; clamped to the segment, where the
    derivatives are dropped as the controller does)."""
    T = b.t - a.t
    s = t - a.t
    has_v = a.velocities.size > 0 and b.velocities.size > 0
    has_a = a.accelerations.size > 0 and b.accelerations.size > 0
    if s < 0.0:
        s, has_v, has_a = 0.0, False, False
    if s > T:
        s, has_v, has_a = T, False, False
    p0, p1 = a.positions, b.positions
    zero = np.zeros_like(p0)
    if not has_v and not has_a:
        c1 = (p1 - p0) / T if T != 0.0 else zero
        return p0 + c1 * s, c1.copy(), zero
    v0, v1 = a.velocities, b.velocities
    if has_v and not has_a:
        c2 = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * T - v1 * T) / T**2 if T != 0.0 else zero
        c3 = (2.0 * p0 - 2.0 * p1 + v0 * T + v1 * T) / T**3 if T != 0.0 else zero
        return (
            p0 + v0 * s + c2 * s**2 + c3 * s**3,
            v0 + 2.0 * c2 * s + 3.0 * c3 * s**2,
            2.0 * c2 + 6.0 * c3 * s,
        )
    a0, a1 = a.accelerations, b.accelerations
    if not has_v:  # accelerations without velocities: as the controller, from rest
        v0 = v1 = zero
    if T == 0.0:
        return p0.copy(), v0.copy(), a0.copy()
    c3 = (-20 * p0 + 20 * p1 - 3 * a0 * T**2 + a1 * T**2 - 12 * v0 * T - 8 * v1 * T) / (2 * T**3)
    c4 = (30 * p0 - 30 * p1 + 3 * a0 * T**2 - 2 * a1 * T**2 + 16 * v0 * T + 14 * v1 * T) / (2 * T**4)
    c5 = (-12 * p0 + 12 * p1 - a0 * T**2 + a1 * T**2 - 6 * v0 * T - 6 * v1 * T) / (2 * T**5)
    return (
        p0 + v0 * s + 0.5 * a0 * s**2 + c3 * s**3 + c4 * s**4 + c5 * s**5,
        v0 + a0 * s + 3 * c3 * s**2 + 4 * c4 * s**3 + 5 * c5 * s**4,
        a0 + 6 * c3 * s + 12 * c4 * s**2 + 20 * c5 * s**3,
    )


class Trajectory:
    """A validated JointTrajectory in the controller's joint order, started at ``start`` (s of
    the node's clock; the message's stamp when non-zero), from ``before`` (the positions when it
    arrived)."""

    def __init__(self, msg, joints: list[str], start: float, before: np.ndarray) -> None:
        names = list(msg.joint_names)
        order = [names.index(j) if j in names else -1 for j in joints]
        held = np.asarray(before, dtype=float)

        def field_(values, fill: np.ndarray | float) -> np.ndarray:
            if len(values) == 0:
                return np.zeros(0)
            x = np.asarray(values, dtype=float)
            return np.array(
                [
                    x[k] if k >= 0 else (fill[i] if isinstance(fill, np.ndarray) else fill)
                    for i, k in enumerate(order)
                ]
            )

        self.points = [
            Point(
                seconds(p.time_from_start),
                field_(p.positions, held),
                field_(p.velocities, 0.0),
                field_(p.accelerations, 0.0),
            )
            for p in msg.points
        ]
        stamp = seconds(msg.header.stamp)
        self.start = stamp if stamp != 0.0 else start
        self.received = start
        self.before = Point(0.0, held.copy())
        self.end = self.start + self.points[-1].t
        # the points at their times on the node's clock, for ``sample``'s search (a trajectory
        # from MoveIt has hundreds of points; the controller samples it at every update)
        self.timed = [
            Point(self.start + p.t, p.positions, p.velocities, p.accelerations) for p in self.points
        ]
        self.times = [p.t for p in self.timed]

    def sample(self, now: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
        """Reference position, velocity, acceleration at ``now``; the index of the point being
        executed; and whether ``now`` is past the last point."""
        first = self.points[0]
        if now < self.start + first.t:
            a = Point(self.received, self.before.positions)
            b = Point(self.start + first.t, first.positions, first.velocities, first.accelerations)
            if a.t >= b.t:  # a start stamped before the arrival: from the arrival
                a = Point(b.t - 1e-9, self.before.positions)
            p, v, acc = interpolate(a, b, now)
            return p, v, acc, 0, False
        i = bisect_right(self.times, now) - 1  # the segment [t_i, t_i+1) that holds now
        if i < len(self.points) - 1:
            p, v, acc = interpolate(self.timed[i], self.timed[i + 1], now)
            return p, v, acc, i + 1, False
        last = self.points[-1]
        n = last.positions.size
        v = last.velocities if last.velocities.size else np.zeros(n)
        acc = last.accelerations if last.accelerations.size else np.zeros(n)
        return last.positions.copy(), v.copy(), acc.copy(), len(self.points) - 1, True


@dataclass
class Tolerances:
    """Per joint: path (``state``) and goal position / velocity / acceleration tolerances
    (0: none), and the goal time tolerance (s; 0: none)."""

    state: np.ndarray  # n x 3
    goal: np.ndarray  # n x 3
    goal_time: float = 0.0

    @classmethod
    def defaults(
        cls,
        n: int,
        trajectory: float = 0.0,
        goal: float = 0.0,
        stopped_velocity: float = 0.01,
        goal_time: float = 0.0,
    ) -> Tolerances:
        """JTC's parameters: constraints.<joint>.trajectory / goal, stopped_velocity_tolerance,
        goal_time (all 0 but stopped_velocity_tolerance, 0.01, by default)."""
        state = np.zeros((n, 3))
        state[:, 0] = trajectory
        g = np.zeros((n, 3))
        g[:, 0] = goal
        g[:, 1] = stopped_velocity
        return cls(state, g, goal_time)


def resolve(default: float, value: float) -> float:
    """``resolve_tolerance_source``: > 0 given, -1 erased (0), 0 the default; else ValueError."""
    if value > 0.0:
        return value
    if abs(value + 1.0) < EPS32:
        return 0.0
    if value < 0.0 or not math.isfinite(value):
        raise ValueError("Illegal tolerance value.")
    return default


def tolerances(default: Tolerances, goal, joints: list[str]) -> tuple[Tolerances, str | None]:
    """The goal's tolerances over the defaults, and the error the controller logs when it keeps
    the defaults instead (an unknown joint or an illegal value)."""
    out = Tolerances(default.state.copy(), default.goal.copy(), default.goal_time)
    try:
        out.goal_time = resolve(default.goal_time, seconds(goal.goal_time_tolerance))
    except ValueError:
        return (
            default,
            f"Specified illegal goal_time_tolerance: {seconds(goal.goal_time_tolerance):f}. "
            "Using default tolerances",
        )
    for kind, items, base, dest in (
        ("path_tolerance", goal.path_tolerance, default.state, out.state),
        ("goal_tolerance", goal.goal_tolerance, default.goal, out.goal),
    ):
        for tol in items:
            if tol.name not in joints:
                return (
                    default,
                    f"joint '{tol.name}' specified in goal.{kind} does not exist. Using default tolerances.",
                )
            i = joints.index(tol.name)
            for k, (label, value) in enumerate(
                (("position", tol.position), ("velocity", tol.velocity), ("acceleration", tol.acceleration))
            ):
                try:
                    dest[i, k] = resolve(base[i, k], value)
                except ValueError:
                    return default, (
                        f"joint '{tol.name}' specified in goal.{kind} has a invalid {label} tolerance. "
                        "Using default tolerances."
                    )
    return out, None


def within_all(errors: np.ndarray, tolerances: np.ndarray) -> bool:
    """``within`` for every joint at once (rows of ``errors`` and ``tolerances``)."""
    return not bool(np.any((tolerances > 0.0) & (np.abs(errors) > tolerances)))


def within(error: np.ndarray, tolerance: np.ndarray) -> bool:
    """``check_state_tolerance_per_joint`` for one joint: error and tolerance as
    (position, velocity, acceleration); a tolerance of 0 does not check."""
    return not any(t > 0.0 and abs(e) > t for e, t in zip(error, tolerance, strict=True))
