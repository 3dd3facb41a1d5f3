"""Manipulator joint motors: torque commands with limits, or position / velocity setpoints
through a PID, as León-González et al. 2024 drives its arms (section 6.5, Table 5).

Each 1-DOF joint is in one mode: ``effort`` (the commanded torque/force, clipped to the
joint's effort limit), ``position`` (PID on the angle error, derivative on the measured
velocity so a setpoint step gives no kick) or ``velocity`` (PI on the velocity error). The
output is always clipped to the effort limit, and the integrator stops growing while clipped
(anti-windup). The controller runs once per physics step (zero-order hold).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..log import Throttle
from ..model.model import Model
from ..spatial import Array

MODES = ("effort", "position", "velocity")


@dataclass(frozen=True)
class PID:
    kp: float
    ki: float = 0.0
    kd: float = 0.0


# León-González et al. 2024 Table 5: PID gains of joints q1, q2, q3 of each 3-DOF arm, as
# printed. On the arm of León-González et al.'s (2024) own Tables 2-3 the q1 and q2 triples
# fail the Routh-Hurwitz condition of a PID on an inertia I (kp kd > I ki): they are kept as
# data, and ``tuned_gains`` is the default.
LEON_GONZALEZ_ARM_GAINS = (PID(5e-3, 1e-1, 3e-3), PID(8e-1, 0.5e-1, 0.4e-3), PID(5e-1, 1e-1, 5e-1))


def tuned_gains(model: Model, q: Array, bandwidth_hz: float = 2.0, damping: float = 1.0) -> dict[str, PID]:
    """PID gains per 1-DOF joint from the joint-space inertia at q (CRBA diagonal, added mass
    included): ``kp = I ω²``, ``kd = 2 ζ I ω``, ``ki = kp ω / 10`` with ``ω = 2π bandwidth``, so
    each joint alone is a critically damped second-order loop plus a slow integrator."""
    from ..model.crba import crba

    M = crba(model, model.create_data(), q)
    w = 2.0 * np.pi * bandwidth_hz
    out = {}
    for i, j in enumerate(model.joints):
        if j.type in ("revolute", "continuous", "prismatic") and j.mimic is None:
            inertia = M[model.idx_v[i], model.idx_v[i]]
            kp = inertia * w * w
            out[model.bodies[i].joint_name] = PID(kp, kp * w / 10.0, 2.0 * damping * inertia * w)
    return out


class JointMotors:
    """Motors on the model's driven 1-DOF joints (revolute, continuous, prismatic; not the mimic
    joints, which follow their leader), by joint name."""

    def __init__(self, model: Model, gains: dict[str, PID] | None = None, q: Array | None = None):
        """``gains`` per joint name; joints not given get ``tuned_gains`` at q (default neutral)."""
        self.model = model
        self.index = [
            i
            for i, j in enumerate(model.joints)
            if j.type in ("revolute", "continuous", "prismatic") and j.mimic is None
        ]
        self.names = [model.bodies[i].joint_name for i in self.index]
        self.iv = np.array([model.idx_v[i] for i in self.index], dtype=int)
        self.iq = np.array([model.idx_q[i] for i in self.index], dtype=int)
        self.limit = np.array([model.joints[i].effort_limit for i in self.index])
        self.velocity_limit = np.array([model.joints[i].velocity_limit for i in self.index])
        gains = gains or {}
        unknown = set(gains) - set(self.names)
        if unknown:
            raise KeyError(f"no 1-DOF joints named {sorted(unknown)}; joints are {self.names}")
        tuned = (
            tuned_gains(model, model.neutral() if q is None else q) if set(gains) != set(self.names) else {}
        )
        self.gains = [gains.get(n) or tuned[n] for n in self.names]
        n = len(self.names)
        self.mode = ["effort"] * n
        self.target = np.zeros(n)
        self.integral = np.zeros(n)
        self.effort = np.zeros(n)  # last output
        self.throttle = Throttle()

    def _k(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no 1-DOF joint named {name!r}; joints are {self.names}") from None

    def command(self, mode: str, targets: dict[str, float]) -> None:
        """Set joints to ``mode`` with the given targets (N m / N, rad / m, rad/s / m/s).
        Non-finite targets raise ValueError before anything changes."""
        if mode not in MODES:
            raise ValueError(f"joint mode must be one of {MODES}, got {mode!r}")
        ks = [(self._k(name), float(value)) for name, value in targets.items()]
        bad = [self.names[k] for k, v in ks if not np.isfinite(v)]
        if bad:
            self.throttle.warn("finite", f"joint command rejected: non-finite targets for {bad}")
            raise ValueError(f"non-finite joint targets for {bad}")
        over = [self.names[k] for k, v in ks if mode == "effort" and abs(v) > self.limit[k]]
        if over:
            self.throttle.warn("limit", f"joint efforts above the effort limit are clipped: {over}")
        for k, v in ks:
            if self.mode[k] != mode:
                self.integral[k] = 0.0
            self.mode[k] = mode
            self.target[k] = v

    def update(self, q: Array, v: Array, dt: float) -> Array:
        """Joint efforts for this step (length = number of motors, in ``names`` order). (Plain
        floats in the loop: numpy's per-scalar calls cost more than the arithmetic.)"""
        speed = v[self.iv]
        pos, vel = q[self.iq].tolist(), speed.tolist()
        limit, target, integral = self.limit.tolist(), self.target.tolist(), self.integral.tolist()
        efforts = []
        for k, (mode, g) in enumerate(zip(self.mode, self.gains, strict=True)):
            if mode == "effort":
                raw = target[k]
            elif mode == "position":
                err = target[k] - pos[k]
                raw = g.kp * err + integral[k] - g.kd * vel[k]
                if abs(raw) < limit[k]:
                    integral[k] += g.ki * err * dt
            else:
                err = target[k] - vel[k]
                raw = g.kp * err + integral[k]
                if abs(raw) < limit[k]:
                    integral[k] += g.ki * err * dt
            efforts.append(min(max(raw, -limit[k]), limit[k]))  # NaN stays NaN, as np.clip
        self.integral[:] = integral
        out = np.array(efforts)
        # at its velocity limit a motor gives no more effort in the direction it turns
        faster = (np.abs(speed) >= self.velocity_limit) & (out * speed > 0.0)
        out[faster] = 0.0
        self.effort = out
        return out

    def apply(self, tau: Array, q: Array, v: Array, dt: float) -> Array:
        """``tau`` with the motors' efforts written into their joints' entries."""
        tau = np.array(tau, dtype=float)
        tau[self.iv] = self.update(q, v, dt)
        return tau
