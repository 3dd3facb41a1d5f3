"""``Simulator``: a model, its state and environment, advanced by ``step(dt, ...)``.

The one entry point the ROS node, the SITL/HIL bridges and the replay tools drive. Pure
numpy: no ROS import. Inputs are validated: a wrong length or a non-finite value raises
``ValueError`` and leaves the state unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .actuators.bank import ThrusterBank
from .actuators.joints import JointMotors
from .actuators.thruster import thruster_model
from .dynamics import aba, step
from .dynamics.kinematics import check_finite
from .hydro.environment import Environment
from .model.model import Model
from .model.system import System
from .spatial import Array


@dataclass
class State:
    """Configuration, velocity and time of a system."""

    q: Array
    v: Array
    t: float = 0.0


@dataclass
class Simulator:
    """Fixed-step simulation of one model."""

    model: Model
    env: Environment = field(default_factory=Environment)
    method: str = "rk4"

    thrusters: ThrusterBank | None = None
    joint_motors: JointMotors | None = None

    def __post_init__(self) -> None:
        self.data = self.model.create_data()
        self.state = State(self.model.neutral(), np.zeros(self.model.nv))
        self.tau = np.zeros(self.model.nv)
        self.f_ext = np.zeros((self.model.nbodies, 6))

    @classmethod
    def from_system(cls, system: System, method: str = "rk4") -> Simulator:
        """A simulator of a loaded description, at its initial configuration."""
        kinds = [thruster_model(v.thruster_model) for v in system.vehicles for _ in v.thrusters]
        bank = ThrusterBank(system.model, system.thrusters, kinds) if system.thrusters else None
        sim = cls(system.model, system.environment, method, bank)
        sim.reset(system.initial_q)
        return sim

    def reset(self, q: Array | None = None, v: Array | None = None) -> None:
        """Back to ``q`` (default: neutral) and ``v`` (default: rest) at t = 0."""
        q = self.model.neutral() if q is None else check_finite("q", q, self.model.nq)
        v = np.zeros(self.model.nv) if v is None else check_finite("v", v, self.model.nv)
        self.state = State(np.array(q, dtype=float), np.array(v, dtype=float), 0.0)

    def set_generalized_forces(self, tau: Array) -> None:
        self.tau = check_finite("tau", tau, self.model.nv).copy()

    def set_body_wrench(self, body: int | str, wrench: Array) -> None:
        """External wrench ``[force; moment]`` on a body, body axes (FRD), about its origin."""
        i = self.model.body_index(body) if isinstance(body, str) else body
        self.f_ext[i] = check_finite("wrench", wrench, 6)

    def set_thruster_pwm(self, pwm: Array) -> int:
        """PWM (us) for every thruster, in ``thrusters.names`` order; see ``ThrusterBank.set_pwm``
        (non-finite or wrong length: ValueError, nothing changed; returns the number clamped)."""
        if self.thrusters is None:
            raise ValueError("this system has no thrusters")
        return self.thrusters.set_pwm(pwm)

    def _external(self, data) -> Array:
        return self.f_ext + self.thrusters.wrenches(data)

    def step(self, dt: float) -> State:
        """Advance by dt seconds with the inputs held constant (thrust follows the advance speed
        within the step; the thrusters' spin-up lag is advanced first)."""
        if not dt > 0.0:
            raise ValueError(f"dt must be > 0, got {dt}")
        s = self.state
        if self.joint_motors is not None:
            self.tau = self.joint_motors.apply(self.tau, s.q, s.v, dt)
        f_ext = self.f_ext
        if self.thrusters is not None:
            self.thrusters.advance(dt)
            f_ext = self._external
        q, v = step(self.model, self.data, s.q, s.v, self.tau, dt, self.env, f_ext, self.method, s.t)
        self.state = State(q, v, s.t + dt)
        return self.state

    def acceleration(self) -> Array:
        """q̈ at the current state and inputs (also fills data.a with body accelerations)."""
        s = self.state
        f_ext = self.f_ext if self.thrusters is None else self._external
        return aba(self.model, self.data, s.q, s.v, self.tau, self.env, f_ext, s.t)
