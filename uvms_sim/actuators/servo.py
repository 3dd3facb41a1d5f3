"""Smart joint servos as their firmware runs them: the Reach Alpha 5's joints (Blueprint Lab).

Each joint of a Reach Alpha 5 is an actuator with its own controller: it takes a position, a
velocity or a motor current (Reach System Communication Protocol: modes standby, disable,
position, velocity, current) and closes its loops itself. What is emulated here, per joint:

- **position**: a setpoint outside the joint's limits is ignored (the firmware's rule); the
  position loop asks the velocity loop for ``kp (q_ref - q) + v_ff`` (a velocity feed-forward
  ``v_ff`` from a trajectory, zero for a plain position command);
- **velocity**: the demand is clamped to the joint's velocity limit (a demand above it "sets the
  velocity to maximum"); a velocity that would drive the joint past a position limit is
  stopped there; a PI loop on the velocity error gives a torque, turned into the current by
  Blueprint Lab's torque-to-current map (the firmware compensating the gear train's dead band:
  without it a joint with no load hunts through the dead band);
- **current**: the motor current (mA), clamped to the current limit (as the firmware does);
- **effort**: a torque (N m, or N on the jaws) turned into the current the firmware would need,
  by Blueprint Lab's map ``current = kt torque + I_s sign(torque)`` (the Alpha has no torque mode:
  this is what a ROS driver's effort interface sends);
- **standby** and **disable**: no current (the joint is free; disabled joints ignore commands).

The gear train turns current into joint torque by Blueprint Lab's measured relation (Blueprint
Lab 2019, eq. 17 and Figure 8; the constants of their Newton-Euler example):
``torque = (I - I_s sign(I)) / kt`` above the static friction current ``I_s = 43 mA`` and zero
below it, with ``kt = 90.6 mA/(N m)`` on the high-torque joints (axes E, D, C) and 50 on the
wrist and the jaws (axes B, A). The current limit of each joint is the current that gives the
description's effort limit through that relation (Blueprint Lab does not publish the factory
limits). The loop gains are not published either: the velocity loop is a PI at a 10 Hz
bandwidth (integral corner at a tenth of it) on each joint's inertia at the start
configuration (CRBA diagonal, added mass included), the position loop a proportional gain of
10 1/s. The current loop is taken as instantaneous (the current is what the velocity loop
asks, clamped). Not modelled: the motor's electrical dynamics and back-EMF, friction beyond the
static dead band, backlash, the joint encoders' resolution, temperature.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from ..dynamics.flat import (
    NSI,
    NSV,
    SERVO_CODE,
    SI_IQ,
    SI_IV,
    SI_MODE,
    SV_CAP,
    SV_CURRENT,
    SV_EFFORT,
    SV_FF,
    SV_INTEGRAL,
    SV_IS,
    SV_KI,
    SV_KP,
    SV_KT,
    SV_KV,
    SV_LOWER,
    SV_Q,
    SV_TARGET,
    SV_UPPER,
    SV_V,
    SV_VMAX,
)
from ..dynamics.rnea import rnea
from ..log import Throttle
from ..model.model import Model
from ..spatial import Array

SERVO_MODES = tuple(SERVO_CODE)  # standby, disable, position, velocity, current, effort


@dataclass(frozen=True)
class ServoSpec:
    """A joint's gear train and drive: ``kt`` (mA per N m, or per N on a linear joint), the
    static friction current ``static_current`` (mA) and the ``current_limit`` (mA)."""

    kt: float
    static_current: float
    current_limit: float

    def torque(self, current: float) -> float:
        """Joint torque (N m or N) of a motor current (mA): zero inside the dead band."""
        excess = abs(current) - self.static_current
        return math.copysign(excess / self.kt, current) if excess > 0.0 else 0.0

    def current(self, torque: float) -> float:
        """The current (mA) that gives ``torque``: Blueprint Lab's torque-to-current map."""
        if torque == 0.0:
            return 0.0
        return self.kt * torque + math.copysign(self.static_current, torque)


# Blueprint Lab (2019) eq. 17 / Figure 8 and their Newton-Euler example: kt per axis (E, D, C:
# the high-torque joints; B, A: 50), 43 mA static friction current on every axis
ALPHA5_KT = {"e": 90.6, "d": 90.6, "c": 90.6, "b": 50.0, "a": 50.0}
ALPHA5_STATIC_CURRENT = 43.0
ALPHA5_AXIS = re.compile(r"(?:^|_)axis_([a-e])$")


def alpha5_specs(model: Model) -> dict[str, ServoSpec] | None:
    """The Alpha 5 firmware's servo of every driven 1-DOF joint named ``[prefix_]axis_a..e``,
    or None when some driven 1-DOF joint is not one (a system that is not a Reach Alpha 5).
    Mimic joints (the jaws' fingers, which the push rod ``axis_a`` moves) have no servo."""
    out: dict[str, ServoSpec] = {}
    for i, j in enumerate(model.joints):
        if j.type not in ("revolute", "continuous", "prismatic") or j.mimic is not None:
            continue
        name = model.bodies[i].joint_name
        m = ALPHA5_AXIS.search(name)
        if m is None:
            return None
        kt = ALPHA5_KT[m.group(1)]
        effort = j.effort_limit if math.isfinite(j.effort_limit) else 9.0
        out[name] = ServoSpec(kt, ALPHA5_STATIC_CURRENT, kt * effort + ALPHA5_STATIC_CURRENT)
    return out or None


def _driven_inertia(model: Model, M: Array, i: int) -> float:
    """The inertia a joint's drive moves: ``gᵀ M g`` with ``g`` the joint's velocity and those of
    its mimic joints (the fingers a push rod carries through their linkage)."""
    g = np.zeros(model.nv)
    g[model.idx_v[i]] = 1.0
    name = model.bodies[i].joint_name
    for k, j in enumerate(model.joints):
        if j.mimic is not None and j.mimic[0] == name:
            g[model.idx_v[k]] += j.mimic[1]
    return float(g @ M @ g)


class JointServos:
    """The firmware servos of a model's 1-DOF joints, by joint name (the interface of
    ``actuators.joints.JointMotors``: ``names``, ``iq``, ``iv``, ``effort``, ``command``,
    ``apply``), plus ``current`` (mA) and the modes above."""

    def __init__(
        self,
        model: Model,
        specs: dict[str, ServoSpec],
        q: Array | None = None,
        position_gain: float = 10.0,
        velocity_bandwidth_hz: float = 10.0,
    ) -> None:
        from ..model.crba import crba

        self.model = model
        self.index = [  # the driven 1-DOF joints (a mimic joint follows its leader: no servo)
            i
            for i, j in enumerate(model.joints)
            if j.type in ("revolute", "continuous", "prismatic") and j.mimic is None
        ]
        self.names = [model.bodies[i].joint_name for i in self.index]
        missing = [n for n in self.names if n not in specs]
        if missing:
            raise KeyError(f"no servo given for joints {missing}")
        self.specs = [specs[n] for n in self.names]
        n = len(self.names)
        # the setpoints and state live in the rows of two tables (``dynamics.flat``'s SV_ and SI_
        # columns) that the compiled steps read and write (``Simulator.advance``); the arrays
        # below are views of their columns
        self.SF = np.zeros((n, NSV))
        self.SI = np.zeros((n, NSI), dtype=np.int64)
        self.iv = self.SI[:, SI_IV]
        self.iq = self.SI[:, SI_IQ]
        self.iv[:] = [model.idx_v[i] for i in self.index]
        self.iq[:] = [model.idx_q[i] for i in self.index]
        joints = [model.joints[i] for i in self.index]
        column = {name: self.SF[:, c] for name, c in (
            ("lower", SV_LOWER), ("upper", SV_UPPER), ("velocity_limit", SV_VMAX), ("current_cap", SV_CAP),
            ("kv", SV_KV), ("ki", SV_KI), ("target", SV_TARGET), ("velocity_ff", SV_FF),
            ("integral", SV_INTEGRAL), ("last_q", SV_Q), ("last_v", SV_V), ("current", SV_CURRENT),
            ("effort", SV_EFFORT))}  # fmt: skip
        self.lower, self.upper = column["lower"], column["upper"]
        self.lower[:] = [j.lower for j in joints]
        self.upper[:] = [j.upper for j in joints]
        self.velocity_limit = column["velocity_limit"]
        self.velocity_limit[:] = [j.velocity_limit for j in joints]
        self.effort_limit = np.array([j.effort_limit for j in joints], dtype=float)
        self.current_cap = column["current_cap"]  # mA, at most the limit
        self.current_cap[:] = [s.current_limit for s in self.specs]
        self.SF[:, SV_KT] = [s.kt for s in self.specs]
        self.SF[:, SV_IS] = [s.static_current for s in self.specs]
        q0 = model.neutral() if q is None else np.asarray(q, dtype=float)
        M = crba(model, model.create_data(), q0)
        w = 2.0 * np.pi * velocity_bandwidth_hz
        inertia = np.array([_driven_inertia(model, M, i) for i in self.index])
        self.kv, self.ki = column["kv"], column["ki"]
        self.kv[:] = inertia * w  # N m per rad/s: the velocity loop's proportional gain
        self.ki[:] = self.kv * w / 10.0  # N m per rad: its integral gain
        self.kp = position_gain
        self.SF[:, SV_KP] = position_gain
        self.SI[:, SI_MODE] = SERVO_CODE["position"]
        self.target = column["target"]
        self.target[:] = q0[self.iq]  # hold where the arm starts
        self.velocity_ff = column["velocity_ff"]
        self.integral = column["integral"]
        self.last_q = column["last_q"]  # the joints at the last update (the state interfaces)
        self.last_q[:] = q0[self.iq]
        self.last_v = column["last_v"]
        self.current = column["current"]  # mA, last output
        self.effort = column["effort"]  # N m / N, last output
        self.throttle = Throttle()

    @property
    def mode(self) -> list[str]:
        """Every joint's mode (``SERVO_MODES``), in ``names`` order."""
        return [SERVO_MODES[c] for c in self.SI[:, SI_MODE]]

    def _k(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no servo joint named {name!r}; joints are {self.names}") from None

    def hold(self, q: Array) -> None:
        """Every joint to position mode at its position in ``q`` (a controller's activation)."""
        self.SI[:, SI_MODE] = SERVO_CODE["position"]
        self.target[:] = np.asarray(q, dtype=float)[self.iq]
        self.velocity_ff[:] = 0.0

    def grip_limit(self, name: str, effort: float) -> None:
        """Cap a joint's current at the one that gives ``effort`` (a gripper's max effort), never
        above its current limit."""
        k = self._k(name)
        spec = self.specs[k]
        self.current_cap[k] = min(spec.current_limit, spec.current(abs(float(effort))))

    def preload(self, torques: Array) -> None:
        """Set the velocity loops' integrators to ``torques`` (``names`` order):
        the servos hold a pose as if they had been carrying that static load (a node starting
        with the arm in the water, not a power-on sag)."""
        self.integral[:] = np.asarray(torques, dtype=float)

    def command(
        self, mode: str, targets: dict[str, float], velocities: dict[str, float] | None = None
    ) -> list[str]:
        """Set joints to ``mode`` with the given setpoints (rad or m, rad/s or m/s, mA, N m or N);
        ``velocities``: the feed-forward of position setpoints. Non-finite values raise
        ValueError before anything changes. Returns the joints whose command the firmware
        ignored (a position outside the limits; any command to a disabled joint)."""
        if mode not in SERVO_MODES:
            raise ValueError(f"servo mode must be one of {SERVO_MODES}, got {mode!r}")
        ks = [(self._k(name), float(value)) for name, value in targets.items()]
        ff = {self._k(n): float(v) for n, v in (velocities or {}).items()}
        bad = [self.names[k] for k, v in ks if not math.isfinite(v)]
        bad += [self.names[k] for k, v in ff.items() if not math.isfinite(v)]
        if bad:
            raise ValueError(f"non-finite joint setpoints for {sorted(set(bad))}")
        ignored = []
        modes = self.SI[:, SI_MODE]
        for k, v in ks:
            was = SERVO_MODES[modes[k]]
            if was == "disable" and mode != "standby":
                ignored.append(self.names[k])
                continue
            if mode == "position" and not self.lower[k] <= v <= self.upper[k]:
                ignored.append(self.names[k])
                continue
            if was != mode and not {was, mode} <= {"position", "velocity"}:
                self.integral[k] = 0.0  # the velocity loop starts again (it goes on between its two modes)
            modes[k] = SERVO_CODE[mode]
            self.target[k] = v
            self.velocity_ff[k] = ff.get(k, 0.0)
        return ignored

    def command_positions(self, ks: Array, positions: Array, velocities: Array) -> list[str]:
        """``command("position", ...)`` of the joints at indices ``ks`` (``names`` order) with
        these setpoints and feed-forwards (a trajectory controller's update): the same rules,
        set at once when every joint is in position mode already and every setpoint finite and
        within its limits (the common case), else through ``command``."""
        p, v = np.asarray(positions, dtype=float), np.asarray(velocities, dtype=float)
        if (
            bool((self.SI[ks, SI_MODE] == SERVO_CODE["position"]).all())
            and bool(np.isfinite(v).all())
            and bool(((self.lower[ks] <= p) & (p <= self.upper[ks])).all())  # False for NaN
        ):
            self.target[ks] = p
            self.velocity_ff[ks] = v
            return []
        names = [self.names[k] for k in ks]
        return self.command(
            "position", dict(zip(names, p.tolist(), strict=True)), dict(zip(names, v.tolist(), strict=True))
        )

    def update(self, q: Array, v: Array, dt: float) -> Array:
        """Joint torques for this step (``names`` order), the firmware's loops at the physics
        rate (zero-order hold). The reference of ``dynamics.compiled.servos._servo_torques``,
        which ``Simulator.advance`` runs inside the compiled steps (the same operations)."""
        self.last_q[:] = q[self.iq]
        self.last_v[:] = v[self.iv]
        pos, vel = self.last_q.tolist(), self.last_v.tolist()
        cap = self.current_cap.tolist()
        out = []
        for k, mode in enumerate(self.mode):
            spec = self.specs[k]
            if mode in ("standby", "disable"):
                current = 0.0
            elif mode == "current":
                current = self.target[k]
            elif mode == "effort":
                current = spec.current(self.target[k])
            else:
                vmax = self.velocity_limit[k]
                if mode == "position":
                    ref = self.velocity_ff[k] + self.kp * (self.target[k] - pos[k])
                else:
                    ref = self.target[k]
                ref = min(max(ref, -vmax), vmax)
                if (ref > 0.0 and pos[k] >= self.upper[k]) or (ref < 0.0 and pos[k] <= self.lower[k]):
                    ref = 0.0  # the firmware's position limits
                err = ref - vel[k]
                torque = self.kv[k] * err + self.integral[k]
                current = spec.current(torque)  # the dead band compensated (Blueprint Lab's map)
                if abs(current) < cap[k]:  # anti-windup: integrate only while unsaturated
                    self.integral[k] += self.ki[k] * err * dt
            current = min(max(current, -cap[k]), cap[k])
            self.current[k] = current
            out.append(spec.torque(current))
        self.effort[:] = out
        return self.effort.copy()

    def apply(self, tau: Array, q: Array, v: Array, dt: float) -> Array:
        """``tau`` with the servos' torques written into their joints' entries."""
        tau = np.array(tau, dtype=float)
        tau[self.iv] = self.update(q, v, dt)
        return tau


def hold_loaded(servos: JointServos, model: Model, env, q: Array) -> None:
    """The servos hold ``q`` carrying its static load (RNEA at rest in ``env``: what the joints
    bear there), as the node starts and resets them."""
    zero = np.zeros(model.nv)
    servos.hold(q)
    servos.preload(rnea(model, model.create_data(), q, zero, zero, env)[servos.iv])
